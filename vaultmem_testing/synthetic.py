"""A seeded synthetic vault whose notes look like a real Obsidian vault's, without embeddings.

The shape of the notes reproduces the vaultofknowledge corpus (2,720 notes, measured once; the
tables below are its percentiles): words per note (median 47, mean 234, 10 % nearly empty, 1 %
above 3,200), `#` headings per note (66 % none, 90th percentile 4), `[[wikilinks]]` per note
(64 % none, 90th percentile 3; 17 % of links carry an `|alias`) and folder depth (11 % of notes
at the root, median 1, 90th percentile 5). The corpus has almost no frontmatter or inline tags,
so those rates are chosen rather than measured: frontmatter on ~35 % of notes (tags, aliases,
created dates), inline `#tags` on ~15 %, `#heading` links on 3 % of links. Memory notes
(`stm_*` frontmatter in `memories/`, 5 % by default) have ages from an hour to a year, so a
sweep sees keep, forget and promote candidates.

Text is sentences sampled from the corpus at `../shared/corpora` when it is there, otherwise
sentences made of a built-in word list; either way the output depends only on the seed (and,
for the memories' dates, on today's date).
"""

from __future__ import annotations

import bisect
import functools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmem.core.memory import MEMORY_TYPES
from vaultmem_testing.bench_vault import FOLDERS, TAGS

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "vaultofknowledge" / "vault"

# The corpus percentiles as (percentile, exclusive upper bound) points: a draw interpolates
# between two points and rounds down, so e.g. LINKS gives 0 links below the 64th percentile.
WORDS = ((0, 0), (9.9, 1), (10, 2), (25, 16), (50, 48), (75, 159), (90, 502), (95, 940),
         (99, 3214), (100, 6000))
HEADINGS = ((0, 0), (65.5, 1), (75, 2), (90, 5), (95, 8), (99, 20), (100, 41))
LINKS = ((0, 0), (64, 1), (75, 2), (90, 4), (95, 5), (99, 10), (100, 31))
DEPTH = ((0, 0), (11, 1), (50, 2), (75, 5), (90, 6), (100, 8))
ALIAS_LINKS = 0.17
HEADING_LINKS = 0.03
FRONTMATTER = 0.35
INLINE_TAGS = 0.15
NOTES_PER_FOLDER = 13

FALLBACK_WORDS = (
    "memory", "note", "vault", "index", "search", "link", "river", "window", "garden", "system",
    "theory", "signal", "light", "music", "paper", "idea", "project", "reading", "language",
    "history", "energy", "model", "field", "chapter", "market", "health", "budget", "recipe",
    "journey", "planet", "engine", "server", "network", "kernel", "script", "function",
    "philosophy", "physics", "computing", "travel", "family", "weather", "winter", "summer",
    "morning", "evening", "quiet", "bright", "simple", "careful", "useful", "strange", "ancient",
    "modern", "local", "remote", "write", "read", "build", "test", "measure", "compare", "follow",
    "explain", "remember", "forget", "review", "improve",
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_UNSAFE = re.compile(r"\[\[|\]\]|[#|`<>{}$\\*_~=]|^\s*[-+>\d]|https?:")
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


TOP_FOLDERS: tuple[str, ...] = tuple(f.split("/")[0] for f in FOLDERS)


def draw(rng: random.Random, table: Sequence[tuple[float, float]]) -> int:
    """One value from a (percentile, exclusive upper bound) table."""
    u = rng.uniform(0, 100)
    points = [p for p, _ in table]
    i = max(1, min(len(table) - 1, bisect.bisect_right(points, u)))
    (p0, v0), (p1, v1) = table[i - 1], table[i]
    return int(v0 + (v1 - v0) * (u - p0) / (p1 - p0) if p1 > p0 else v1)


@functools.lru_cache(maxsize=4)
def corpus_sentences(root: Path = CORPUS, limit: int = 40_000, seed: int = 0) -> tuple[str, ...]:
    """Plain prose sentences from the corpus (no markup), a seeded sample; () without it."""
    if not root.is_dir():
        return ()
    found: list[str] = []
    for path in sorted(root.rglob("*.md")):
        text = _FRONTMATTER.sub("", path.read_text(encoding="utf-8", errors="replace"))
        for line in text.splitlines():
            for sentence in _SENTENCE_END.split(line.strip()):
                if 30 <= len(sentence) <= 300 and not _UNSAFE.search(sentence):
                    found.append(sentence)
    rng = random.Random(seed)
    return tuple(rng.sample(found, min(limit, len(found))))


@dataclass
class SyntheticVault:
    root: Path
    notes: list[str] = field(default_factory=list)  # vault-relative paths, regular notes
    memories: list[str] = field(default_factory=list)  # vault-relative paths of memory notes
    memory_ids: list[str] = field(default_factory=list)


class NoteWriter:
    """Makes note texts, titles and folders from one seeded random stream."""

    def __init__(self, seed: int = 0, sentences: Sequence[str] | None = None) -> None:
        self.rng = random.Random(seed)
        self.sentences = list(sentences if sentences is not None else corpus_sentences(seed=seed))
        vocab = {w.lower() for s in self.sentences for w in re.findall(r"[A-Za-z]{4,12}", s)}
        self.words = sorted(vocab) if len(vocab) >= 200 else list(FALLBACK_WORDS)
        self.titles: list[str] = []
        self._taken: set[str] = set()

    # pieces -------------------------------------------------------------------------------

    def title(self) -> str:
        while True:
            words = self.rng.sample(self.words, self.rng.randint(2, 4))
            title = " ".join(words).capitalize()
            if title.lower() not in self._taken:
                self._taken.add(title.lower())
                self.titles.append(title)
                return title

    def sentence(self) -> str:
        if self.sentences:
            return self.rng.choice(self.sentences)
        words = self.rng.choices(self.words, k=self.rng.randint(6, 18))
        return " ".join(words).capitalize() + "."

    def paragraph(self, words: int) -> str:
        """Whole sentences cut to exactly `words` words."""
        out: list[str] = []
        while len(out) < words:
            out += self.sentence().split()
        return " ".join(out[:words])

    def link(self) -> str:
        target = self.rng.choice(self.titles) if self.titles else "Home"
        roll = self.rng.random()
        if roll < HEADING_LINKS:
            return f"[[{target}#{self.rng.choice(self.words).capitalize()}]]"
        if roll < HEADING_LINKS + ALIAS_LINKS:
            return f"[[{target}|{' '.join(self.rng.sample(self.words, 2))}]]"
        return f"[[{target}]]"

    def tags(self, most: int = 3) -> list[str]:
        return sorted(set(self.rng.sample(TAGS, self.rng.randint(1, most))))

    def folders(self, count: int) -> list[list[str]]:
        """About `count` folder paths, by depth (index 0 holds "", the vault root)."""
        by_depth: list[list[str]] = [[""]] + [[] for _ in range(DEPTH[-1][1])]
        for _ in range(count):
            depth = self.rng.randint(1, len(by_depth) - 1)
            parts = [self.rng.choice(TOP_FOLDERS)]
            parts += [self.rng.choice(self.words).capitalize() for _ in range(depth - 1)]
            by_depth[depth].append("/".join(parts))
        return by_depth

    def folder(self, by_depth: Sequence[Sequence[str]]) -> str:
        """A folder at a depth drawn from the corpus's note depths."""
        depth = min(draw(self.rng, DEPTH), len(by_depth) - 1)
        while not by_depth[depth]:
            depth -= 1
        return self.rng.choice(by_depth[depth])

    # notes --------------------------------------------------------------------------------

    def frontmatter(self) -> str:
        lines = ["---"]
        if self.rng.random() < 0.8:
            lines += ["tags:", *(f"  - {t}" for t in self.tags())]
        if self.rng.random() < 0.25:
            lines += ["aliases:", f"  - {' '.join(self.rng.sample(self.words, 2))}"]
        if self.rng.random() < 0.6:
            day = datetime(2023, 1, 1) + timedelta(days=self.rng.randrange(1200))
            lines.append(f"created: {day:%Y-%m-%d}")
        return "\n".join([*lines, "---"]) + "\n" if len(lines) > 1 else ""

    def body(self) -> str:
        """Paragraphs split by the drawn number of headings, with the drawn links spread in."""
        words, headings = draw(self.rng, WORDS), draw(self.rng, HEADINGS)
        headings = min(headings, words // 4)
        sections = [self.paragraph(words // (headings + 1)) if words else ""]
        for _ in range(headings):
            level = "#" * self.rng.choice((1, 2, 2, 2, 3))
            heading = " ".join(self.rng.sample(self.words, 2)).capitalize()
            sections.append(f"{level} {heading}\n\n{self.paragraph(words // (headings + 1))}")
        for _ in range(draw(self.rng, LINKS)):
            slot = self.rng.randrange(len(sections))
            sections[slot] = f"{sections[slot]} See {self.link()}.".lstrip()
        if self.rng.random() < INLINE_TAGS:
            sections[-1] += " " + " ".join(f"#{t}" for t in self.tags(2))
        return "\n\n".join(s for s in sections if s) + "\n"

    def note(self) -> str:
        front = self.frontmatter() if self.rng.random() < FRONTMATTER else ""
        return front + self.body()

    def memory(self, now: datetime) -> tuple[str, str, str]:
        """(file name, text, stm_id) of a memory note created an hour to a year ago."""
        age_h = 10 ** self.rng.uniform(0, 3.94)  # 1 h … ~1 year, log-uniform
        created = now - timedelta(hours=age_h)
        used = created + (now - created) * self.rng.random()
        memory_id = f"syn-{self.rng.getrandbits(64):016x}"
        title = self.title()
        lines = ["---", "tags:", *(f"  - {t}" for t in self.tags()),
                 f"stm_id: {memory_id}",
                 f"stm_created: {created:%Y-%m-%dT%H:%M:%S+00:00}",
                 f"stm_last_used: {used:%Y-%m-%dT%H:%M:%S+00:00}",
                 f"stm_use_count: {self.rng.randint(1, 9)}",
                 f"stm_strength: {self.rng.uniform(0.2, 1.6):.2f}",
                 "stm_status: active",
                 f"stm_type: {self.rng.choice(MEMORY_TYPES)}"]
        if self.rng.random() < 0.05:
            lines.append("stm_pinned: true")
        text = "\n".join([*lines, "---", f"# {title}", "",
                          self.paragraph(self.rng.randint(15, 80))]) + "\n"
        return f"{created:%Y-%m-%d} {title}.md", text, memory_id


def generate_vault(root: Path, notes: int, *, seed: int = 0, memory_fraction: float = 0.05,
                   writer: NoteWriter | None = None) -> SyntheticVault:
    """Write `notes` notes (of which ~memory_fraction are memories) under `root`."""
    writer = writer or NoteWriter(seed)
    memories = round(notes * memory_fraction)
    regular = notes - memories
    known = len(writer.titles)
    for _ in range(regular):  # titles first, so that links may point forwards too
        writer.title()
    titles = writer.titles[known:]
    folders = writer.folders(max(3, regular // NOTES_PER_FOLDER))
    vault = SyntheticVault(root)
    for title in titles:
        folder = writer.folder(folders)
        rel = f"{folder}/{title}.md" if folder else f"{title}.md"
        _write(root / rel, writer.note())
        vault.notes.append(rel)
    now = datetime.now(UTC)
    for _ in range(memories):
        name, text, memory_id = writer.memory(now)
        _write(root / "memories" / name, text)
        vault.memories.append(f"memories/{name}")
        vault.memory_ids.append(memory_id)
    return vault


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
