"""The retrieval sets of scripts/eval: LoCoMo conversations written as a vault, and the judged
query set over the vaultofknowledge vault.

LoCoMo (`shared/corpora/locomo-dev`) is stored the way a user's assistant would store such a
history: one note per dialog turn, `date — speaker: text` (a shared photo's caption appended as
`[shares a photo: …]`, since that is what the assistant saw), the session's date and time in
the frontmatter, one folder per conversation; the folder is the search filter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
LOCOMO_FILE = CORPORA / "locomo-dev" / "locomo-dev.json"
VOK_VAULT = CORPORA / "vaultofknowledge" / "vault"
VOK_QUERIES = REPO / "tests" / "data" / "retrieval" / "vaultofknowledge.json"

#: The conversation kept back from all tuning: its figures are reported apart.
LOCOMO_HELD_OUT = "conv-41"
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Query:
    """One judged query: `relevant` maps a note path to its grade (2 relevant, 1 partly)."""

    id: str
    text: str
    group: str  # LoCoMo category name, or the vault set's query kind
    split: str  # "dev" or "held-out"
    relevant: dict[str, int]
    folder: str | None = None  # the search filter, if any


@dataclass
class RetrievalSet:
    name: str
    vault: Path
    queries: list[Query]
    metric_note: str
    missing_evidence: int = 0
    notes: dict[str, str] = field(default_factory=dict)  # path -> full text (baselines)


# ---- LoCoMo ---------------------------------------------------------------------------------


def session_time(raw: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime."""
    return datetime.strptime(" ".join(raw.split()), _DATE_FORMAT)


def turn_note(when: datetime, session: int, turn: dict[str, object]) -> tuple[str, str, str]:
    """(file name, body line, note text with frontmatter) of one dialog turn."""
    text = str(turn["text"]).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {str(caption).strip()}]"
    day = f"{when.day} {when:%B %Y}"
    body = f"{day} — {turn['speaker']}: {text}"
    dia = str(turn["dia_id"])
    number = int(dia.split(":")[1])
    name = f"{when:%Y-%m-%d} s{session:02d} t{number:03d} {turn['speaker']}.md"
    front = (
        "---\n"
        f"date: {when:%Y-%m-%dT%H:%M}\n"
        f"speaker: {turn['speaker']}\n"
        f"session: {session}\n"
        "---\n"
    )
    return name, body, front + body + "\n"


def _sessions(conversation: dict[str, object]) -> Iterator[tuple[int, datetime, list[dict]]]:
    numbers = sorted(
        int(key.split("_")[1]) for key in conversation
        if re.fullmatch(r"session_\d+", key)
    )
    for number in numbers:
        turns = conversation[f"session_{number}"]
        when = session_time(str(conversation[f"session_{number}_date_time"]))
        assert isinstance(turns, list)
        yield number, when, turns


def build_locomo(vault: Path, *, conversations: Sequence[str] | None = None) -> RetrievalSet:
    """Write the LoCoMo notes under `vault` and return the set (categories 1-4)."""
    data = json.loads(LOCOMO_FILE.read_text(encoding="utf-8"))
    queries: list[Query] = []
    notes: dict[str, str] = {}
    missing = 0
    for sample in data:
        conv_id = str(sample["sample_id"])
        if conversations and conv_id not in conversations:
            continue
        folder = vault / conv_id
        folder.mkdir(parents=True, exist_ok=True)
        by_dia: dict[str, str] = {}
        for session, when, turns in _sessions(sample["conversation"]):
            for turn in turns:
                name, body, text = turn_note(when, session, turn)
                (folder / name).write_text(text, encoding="utf-8")
                path = f"{conv_id}/{name}"
                by_dia[str(turn["dia_id"])] = path
                notes[path] = f"{Path(name).stem}\n{body}"
        split = "held-out" if conv_id == LOCOMO_HELD_OUT else "dev"
        for number, qa in enumerate(sample["qa"]):
            category = int(qa["category"])
            if category not in LOCOMO_CATEGORIES:
                continue
            ids = [e.strip() for raw in qa.get("evidence", []) for e in str(raw).split(";")]
            relevant = {by_dia[e]: 2 for e in ids if e in by_dia}
            missing += sum(1 for e in ids if e and e not in by_dia)
            if not relevant:
                continue
            queries.append(Query(
                id=f"{conv_id}-q{number:03d}", text=str(qa["question"]),
                group=LOCOMO_CATEGORIES[category], split=split, relevant=relevant,
                folder=conv_id,
            ))
    return RetrievalSet(
        name="locomo", vault=vault, queries=queries, missing_evidence=missing, notes=notes,
        metric_note="recall of the evidence turns among the top k notes, averaged over questions",
    )


# ---- the vaultofknowledge set -------------------------------------------------------------


def load_vok(vault: Path | None = None) -> RetrievalSet:
    """The judged queries over the vaultofknowledge vault (searched in place, read-only)."""
    vault = vault or VOK_VAULT
    raw = json.loads(VOK_QUERIES.read_text(encoding="utf-8"))
    items = raw["queries"] if isinstance(raw, dict) else raw
    queries = [
        Query(
            id=str(item["id"]), text=str(item["query"]), group=str(item["kind"]),
            split="held-out" if item.get("split") == "test" else "dev",
            relevant={str(p): int(g) for p, g in item["relevant"].items()},
        )
        for item in items
    ]
    return RetrievalSet(
        name="vaultofknowledge", vault=vault, queries=queries,
        metric_note="graded judgments (2 relevant, 1 partly); nDCG gain 2^grade - 1",
    )


def read_notes(vault: Path) -> dict[str, str]:
    """Every note's text (title line + file text) keyed by its vault path, for the baselines."""
    notes = {}
    for file in sorted(vault.rglob("*.md")):
        rel = file.relative_to(vault).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        text = file.read_bytes().decode("utf-8", errors="replace")
        notes[rel] = f"{file.stem}\n{text}"
    return notes
