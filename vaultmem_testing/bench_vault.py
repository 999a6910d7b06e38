"""Vaults for the benchmarks (bench/engine.py, bench_daemon.py, bench_idle.py): copies of the
real corpus and generated notes made of real chunks. synthetic.py uses its folders and tags.

A generated note has optional YAML frontmatter (tags, created, aliases), sometimes an intro line
with wikilinks and #tags, then 1-9 `##` sections whose text is a real corpus chunk (mean 5
sections, so ~5 chunks a note). A few notes are vaultmem memories (stm_* frontmatter) in
`memories/`, so that search exercises the memory path too.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

FOLDERS = (
    "Inbox", "Daily", "Projects", "Projects/Homelab", "Projects/Website", "Areas/Health",
    "Areas/Finance", "Reading/Books", "Reading/Papers", "Knowledge/Physics",
    "Knowledge/Computing", "Knowledge/Philosophy", "Knowledge/Languages", "Archive/2024",
    "Archive/2025",
)
TAGS = (
    "project", "project/web", "idea", "reading", "physics", "linux", "philosophy", "language",
    "health", "finance", "todo", "reference", "draft", "religion", "ai",
)
MEMORY_TYPES = ("decision", "fact", "pattern", "preference", "issue", "convention")
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(\s|$)", re.M)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.M)
_WORD = re.compile(r"[A-Za-z]{4,12}")


# ---- the real corpus ------------------------------------------------------------------------


def note_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.is_file())


def copy_notes(source: Path, target: Path, limit: int | None, seed: int = 7) -> list[str]:
    """Copy all notes (limit None) or a fixed random sample of `limit` notes, keeping folders."""
    files = note_files(source)
    if limit is not None and limit < len(files):
        order = np.random.default_rng(seed).permutation(len(files))[:limit]
        files = sorted(files[i] for i in order)
    for rel in files:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, dest)
    return files


@dataclass(frozen=True)
class PoolChunk:
    heading: str
    text: str


def usable_chunk(heading: str, text: str) -> PoolChunk | None:
    """A corpus chunk that comes back unchanged when written as one `##` section, or None."""
    text = text.strip()
    if not 200 <= len(text) <= 900 or "\r" in text:
        return None
    if _HEADING_LINE.search(text) or _FENCE.search(text) or text.startswith("---"):
        return None
    heading = heading.split(" > ")[-1].split("; ")[0][:60].strip()
    return PoolChunk(heading, text)


# ---- generated notes ------------------------------------------------------------------------


@dataclass
class SyntheticNote:
    path: str
    title: str
    frontmatter: str
    intro: str
    sections: list[int] = field(default_factory=list)  # indexes into the pool
    headings: list[str] = field(default_factory=list)


class VaultGenerator:
    def __init__(self, pool: Sequence[PoolChunk], seed: int) -> None:
        self.pool = pool
        self.rng = np.random.default_rng(seed)
        counts: dict[str, int] = {}
        for chunk in pool:
            for word in _WORD.findall(chunk.text):
                counts[word.lower()] = counts.get(word.lower(), 0) + 1
        self.words = sorted(w for w, n in counts.items() if 2 <= n <= 200)
        self.titles: set[str] = set()
        self.title_list: list[str] = []  # in creation order, for wikilinks

    def notes(self, chunks: int, memories: int, now: datetime) -> list[SyntheticNote]:
        """Regular notes until ~`chunks` sections, plus `memories` memory notes."""
        out: list[SyntheticNote] = [self._memory(i, now) for i in range(memories)]
        total = sum(len(n.sections) for n in out)
        while total < chunks:
            note = self._regular(min(int(self.rng.integers(1, 10)), chunks - total))
            total += len(note.sections)
            out.append(note)
        return out

    def write(self, root: Path, notes: Sequence[SyntheticNote]) -> None:
        for note in notes:
            self.write_note(root, note)

    def write_note(self, root: Path, note: SyntheticNote) -> None:
        full = root / note.path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(self.render(note), encoding="utf-8")

    def edit(self, root: Path, note: SyntheticNote) -> None:
        """Replace the text of one section with another corpus chunk and save the note."""
        slot = int(self.rng.integers(len(note.sections)))
        old = note.sections[slot]
        while note.sections[slot] == old and len(self.pool) > 1:
            note.sections[slot] = int(self.rng.integers(len(self.pool)))
        self.write_note(root, note)

    def render(self, note: SyntheticNote) -> str:
        parts = [note.frontmatter] if note.frontmatter else []
        if note.intro:
            parts.append(note.intro + "\n")
        for heading, index in zip(note.headings, note.sections, strict=True):
            parts.append(f"## {heading}\n\n{self.pool[index].text}\n")
        return "\n".join(parts)

    # ---- pieces -----------------------------------------------------------------------

    def _title(self) -> str:
        while True:
            count = int(self.rng.integers(2, 5))
            words = [self.words[int(i)] for i in self.rng.integers(len(self.words), size=count)]
            title = " ".join(words).capitalize()
            if title not in self.titles:
                self.titles.add(title)
                self.title_list.append(title)
                return title

    def _tags(self) -> list[str]:
        count = int(self.rng.integers(0, 4))
        return sorted({TAGS[int(i)] for i in self.rng.integers(len(TAGS), size=count)})

    def _sections(self, count: int) -> tuple[list[int], list[str]]:
        sections = [int(i) for i in self.rng.integers(len(self.pool), size=count)]
        headings = [self.pool[i].heading or self._title() for i in sections]
        return sections, headings

    def _regular(self, sections: int) -> SyntheticNote:
        title = self._title()
        folder = FOLDERS[int(self.rng.integers(len(FOLDERS)))]
        frontmatter = ""
        if self.rng.random() < 0.6:
            lines = ["---"]
            tags = self._tags()
            if tags:
                lines += ["tags:", *(f"  - {tag}" for tag in tags)]
            day = datetime(2024, 1, 1) + timedelta(days=int(self.rng.integers(0, 1000)))
            lines.append(f"created: {day:%Y-%m-%d}")
            if self.rng.random() < 0.2:
                lines += ["aliases:", f"  - {self._title()}"]
            frontmatter = "\n".join([*lines, "---"]) + "\n"
        intro = ""
        if self.title_list and self.rng.random() < 0.5:
            known = self.title_list
            links = [known[int(i)] for i in self.rng.integers(len(known), size=2)]
            tags = " ".join(f"#{tag}" for tag in self._tags())
            intro = f"See [[{links[0]}]] and [[{links[1]}]]. {tags}".rstrip()
        picked, headings = self._sections(sections)
        return SyntheticNote(f"{folder}/{title}.md", title, frontmatter, intro, picked, headings)

    def _memory(self, number: int, now: datetime) -> SyntheticNote:
        title = self._title()
        created = now - timedelta(hours=float(self.rng.uniform(1, 24 * 40)))
        used = created + (now - created) * float(self.rng.uniform(0, 1))
        stamp = "%Y-%m-%dT%H:%M:%S+00:00"
        tags = self._tags() or ["memory"]
        frontmatter = "\n".join([
            "---",
            "tags:", *(f"  - {tag}" for tag in tags),
            f"stm_id: bench-{number:05d}-{int(self.rng.integers(1 << 30)):08x}",
            f"stm_created: {created.strftime(stamp)}",
            f"stm_last_used: {used.strftime(stamp)}",
            f"stm_use_count: {int(self.rng.integers(1, 8))}",
            f"stm_strength: {float(self.rng.uniform(0.5, 1.5)):.2f}",
            "stm_status: active",
            f"stm_type: {MEMORY_TYPES[int(self.rng.integers(len(MEMORY_TYPES)))]}",
            "---",
        ]) + "\n"
        picked, headings = self._sections(1)
        return SyntheticNote(
            f"memories/{created:%Y-%m-%d} {title}.md", title, frontmatter, "", picked, headings
        )
