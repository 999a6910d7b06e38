"""The retrieval sets of scripts/eval: LoCoMo conversations written as a vault, the judged query
set over the vaultofknowledge vault, and the judged multilingual set over the tldr pages (one vault
per language, the same questions asked in each).

LoCoMo (`shared/corpora/locomo-dev`) is written the ways people store such a history, one
folder per conversation (the search filter), in several layouts that differ in the cues a
ranking could lean on (`LAYOUT_NOTES`): one note per dialog turn with the date and order in the
file name, without them (the date only in a frontmatter property, unpadded numbers), in a
folder per session, and one note per session with a line per turn. A shared photo's caption is
appended to its turn as `[shares a photo: …]`, since that is what an assistant saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
LOCOMO_FILE = CORPORA / "locomo-dev" / "locomo-dev.json"
VOK_VAULT = CORPORA / "vaultofknowledge" / "vault"
VOK_QUERIES = REPO / "tests" / "data" / "retrieval" / "vaultofknowledge.json"
TLDR_CORPUS = CORPORA / "tldr-multilingual"
TLDR_QUERIES = REPO / "tests" / "data" / "retrieval" / "tldr-multilingual.json"

#: The languages of the tldr set: `TLDR_CORPUS / language` is one vault, the same page at the
#: same path in each, and every query is written in each.
TLDR_LANGUAGES = ("en", "ru", "zh", "de", "fr", "es", "ja", "ko")
#: The tldr query kind whose questions have no answer in the corpus (their `relevant` is empty).
NO_ANSWER = "no-answer"

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
    layout: str = ""
    notes: dict[str, str] = field(default_factory=dict)  # path -> full text (baselines)


# ---- LoCoMo ---------------------------------------------------------------------------------


def session_time(raw: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime."""
    return datetime.strptime(" ".join(raw.split()), _DATE_FORMAT)


#: Turn-note layouts: each gives a ranking different cues (see `turn_note`).
TURN_LAYOUTS = ("dated", "plain", "folders")
#: The one-note-per-session layout (recall is counted in sessions, not turns).
SESSION_LAYOUT = "sessions"
LAYOUTS = (*TURN_LAYOUTS, SESSION_LAYOUT)
LAYOUT_NOTES = {
    "dated": "`YYYY-MM-DD sNN tNNN Speaker.md`, the date also in the text (name order is "
             "turn order)",
    "plain": "`Session 3 – turn 12.md`: no date, unpadded numbers, no speaker in the name; "
             "the date only in the `date` property",
    "folders": "`Session 3/Turn 12.md`: a folder per session, unpadded numbers, the date only "
               "in the `date` property",
    "sessions": "`Session 3 – 8 May 2023.md`: one note per session, a `time — speaker: text` "
                "line per turn",
}


def turn_text(turn: dict[str, object]) -> str:
    text = str(turn["text"]).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {str(caption).strip()}]"
    return text


def turn_note(layout: str, when: datetime, session: int,
              turn: dict[str, object]) -> tuple[str, str, str]:
    """(path in the conversation folder, body, note text with frontmatter) of one dialog turn
    in a turn-note layout."""
    text = turn_text(turn)
    number = int(str(turn["dia_id"]).split(":")[1])
    speaker = str(turn["speaker"])
    if layout == "dated":
        body = f"{when.day} {when:%B %Y} — {speaker}: {text}"
        name = f"{when:%Y-%m-%d} s{session:02d} t{number:03d} {speaker}.md"
    elif layout == "plain":
        body = f"{speaker}: {text}"
        name = f"Session {session} – turn {number}.md"
    elif layout == "folders":
        body = f"{speaker}: {text}"
        name = f"Session {session}/Turn {number}.md"
    else:
        raise ValueError(f"not a turn-note layout: {layout}")
    front = (
        "---\n"
        f"date: {when:%Y-%m-%dT%H:%M}\n"
        f"speaker: {speaker}\n"
        f"session: {session}\n"
        "---\n"
    )
    return name, body, front + body + "\n"


def session_note(when: datetime, session: int,
                 turns: Sequence[dict[str, object]]) -> tuple[str, str]:
    """(file name, note text) of a whole session in one note: a line per turn."""
    # LoCoMo gives one time per session; the turns are spaced a minute apart.
    lines = [
        f"{when + timedelta(minutes=i):%H:%M} — {turn['speaker']}: {turn_text(turn)}"
        for i, turn in enumerate(turns)
    ]
    name = f"Session {session} – {when.day} {when:%B %Y}.md"
    front = f"---\ndate: {when:%Y-%m-%dT%H:%M}\nsession: {session}\n---\n"
    return name, front + "\n\n".join(lines) + "\n"


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


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def build_locomo(vault: Path, *, layout: str = "dated",
                 conversations: Sequence[str] | None = None) -> RetrievalSet:
    """Write the LoCoMo notes under `vault` in `layout` and return the set (categories 1-4)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; one of {', '.join(LAYOUTS)}")
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
            if layout == SESSION_LAYOUT:
                name, text = session_note(when, session, turns)
                _write(folder, name, text)
                path = f"{conv_id}/{name}"
                notes[path] = f"{Path(name).stem}\n{text.split('---', 2)[2]}"
                by_dia.update((str(turn["dia_id"]), path) for turn in turns)
                continue
            for turn in turns:
                name, body, text = turn_note(layout, when, session, turn)
                _write(folder, name, text)
                path = f"{conv_id}/{name}"
                by_dia[str(turn["dia_id"])] = path
                # title, blank line, text: the very text the index embeds for a one-chunk
                # note, so the whole-note baseline shares its cached vector
                notes[path] = f"{Path(name).stem}\n\n{body}"
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
    unit = "sessions" if layout == SESSION_LAYOUT else "turns"
    return RetrievalSet(
        name="locomo", vault=vault, queries=queries, missing_evidence=missing, notes=notes,
        layout=layout,
        metric_note=f"recall of the evidence {unit} among the top k notes, averaged over "
                    f"questions; layout {layout}: {LAYOUT_NOTES[layout]}",
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


# ---- the multilingual tldr set --------------------------------------------------------------


def load_tldr(language: str, vault: Path | None = None) -> RetrievalSet:
    """The judged questions over the tldr pages of one language (searched in place, read-only).

    Each query's text is the one written in `language`; its judgments are by path, the same in
    every language. The questions with no answer in the corpus (group `NO_ANSWER`) are included
    with an empty `relevant`, for the caller to measure "nothing relevant" on them and to leave
    them out of the ranking metrics.
    """
    if language not in TLDR_LANGUAGES:
        raise ValueError(f"unknown language {language!r}; one of {', '.join(TLDR_LANGUAGES)}")
    vault = vault or TLDR_CORPUS / language
    raw = json.loads(TLDR_QUERIES.read_text(encoding="utf-8"))
    queries = [
        Query(
            id=str(item["id"]), text=str(item["text"][language]), group=str(item["kind"]),
            split="held-out" if item.get("split") == "test" else "dev",
            relevant={str(p): int(g) for p, g in item["relevant"].items()},
        )
        for item in raw["queries"]
    ]
    return RetrievalSet(
        name=f"tldr-{language}", vault=vault, queries=queries,
        metric_note="graded judgments by path (2 relevant, 1 partly), the same in every language; "
                    f"{NO_ANSWER} queries have none",
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
