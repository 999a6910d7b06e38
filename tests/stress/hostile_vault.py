"""Build a vault full of hostile content, each case with the outcome the daemon must report.

Every case is a group of files written by one builder, plus what `GET /v1/status?files=true`
must say about each of them: indexed (maybe with a caveat), skipped or failed with a reason, or
absent from the index (folders named like notes, content outside the vault). Memory-like cases
also name the answer a touch must get. Sizes come from the stress level (short or long form).
`snapshot` records every file's type, mtime and content, to prove that nothing was rewritten.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.stress._level import LEVEL

INDEXED = "indexed"  # indexed; `reason` (if given) must appear in its warning
SKIPPED = "skipped"  # listed as skipped with `reason`
FAILED = "failed"  # listed as failed with `reason`
ABSENT = "absent"  # not in the index at all (e.g. a folder named x.md, content outside)

Snapshot = dict[bytes, tuple[int, int, int, bytes]]
MIB = 1024 * 1024
MAX_NOTE_BYTES = 20_000_000  # the daemon's default `max_note_bytes`
AS_ROOT = os.geteuid() == 0


@dataclass(frozen=True)
class Case:
    name: str
    paths: tuple[str, ...]
    expect: str
    reason: str = ""
    # memory-like notes: what a touch of `touch_ref` must answer (HTTP status)
    touch_ref: str | None = None
    touch_status: int | None = None
    watched: bool = False  # added while the daemon runs
    # the watcher follows notes only; a symlinked folder is reported by the next full scan
    folder_link: bool = False


@dataclass
class HostileVault:
    root: Path
    outside: Path  # a folder next to the vault that symlinks point into
    marker: Path  # must never exist: a YAML tag that executed code would create it
    cases: list[Case] = field(default_factory=list)
    normal_memory_id: str = ""

    def add(self, case: Case) -> None:
        self.cases.append(case)


def _write(root: Path, rel: str, data: bytes) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rel


def memory_text(memory_id: str, stm: str, body: str = "A memory body.\n") -> bytes:
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    head = f"stm_id: {memory_id}\nstm_created: {now}\nstm_last_used: {now}\n"
    return f"---\n{head}{stm}tags: [hostile]\n---\n{body}".encode()


# the cases ------------------------------------------------------------------------------------


def encodings(v: HostileVault, prefix: str = "enc") -> Iterator[Case]:
    yield Case("invalid UTF-8 in the body", (
        _write(v.root, f"{prefix}/latin1 body.md", b"# Caf\xe9\n\nna\xefve \xff\xfe text\n"),),
        INDEXED, "invalid UTF-8")
    yield Case("invalid UTF-8 in the frontmatter", (
        _write(v.root, f"{prefix}/latin1 frontmatter.md",
               b"---\ntitle: Caf\xe9\ntags: [a\xff]\n---\nbody\n"),), INDEXED, "invalid UTF-8")
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    yield Case("binary file named .md (PNG bytes)", (
        _write(v.root, f"{prefix}/image.md", png),), FAILED, "binary")
    yield Case("NUL bytes in a note", (
        _write(v.root, f"{prefix}/nul.md", b"# Title\n\nbefore\x00after\n"),), FAILED, "binary")
    yield Case("empty file", (_write(v.root, f"{prefix}/empty.md", b""),), INDEXED)
    yield Case("a file of only ---", (_write(v.root, f"{prefix}/fence.md", b"---"),), INDEXED)
    yield Case("a file of only ---\\n---", (
        _write(v.root, f"{prefix}/fences.md", b"---\n---\n"),), INDEXED)
    crlf = b"---\r\ntitle: Crlf\r\ntags: [x]\r\n---\r\n# H\r\nbody\r\n"
    yield Case("CRLF line endings", (_write(v.root, f"{prefix}/crlf.md", crlf),), INDEXED)
    yield Case("mixed line endings and lone CR", (_write(
        v.root, f"{prefix}/mixed.md", b"---\ntitle: Mixed\r\n---\r\nline\rline\nline\r\n"),),
        INDEXED)
    yield Case("BOM before the frontmatter", (_write(
        v.root, f"{prefix}/bom.md", b"\xef\xbb\xbf---\ntitle: Bom\n---\nbody\n"),), INDEXED)
    yield Case("a 1 MiB line without a newline", (
        _write(v.root, f"{prefix}/one line.md", b"word " * (MIB // 5)),), INDEXED)


def frontmatter(v: HostileVault, prefix: str = "yaml") -> Iterator[Case]:
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    yield Case("YAML bomb (billion laughs)", (
        _write(v.root, f"{prefix}/laughs.md", f"---\n{laughs}---\nbody\n".encode()),),
        INDEXED, "frontmatter does not parse")
    yield Case("recursive YAML alias", (_write(
        v.root, f"{prefix}/recursive.md", b"---\na: &a [*a]\n---\nbody\n"),),
        INDEXED, "frontmatter does not parse")
    yield Case("YAML nested 10,000 deep", (_write(
        v.root, f"{prefix}/deep.md", ("---\nk: " + "[" * 10_000 + "]" * 10_000 + "\n---\nb\n")
        .encode()),), INDEXED, "frontmatter does not parse")
    evil = f"!!python/object/apply:os.system [\"touch {v.marker}\"]"
    yield Case("YAML python tag (!!python/object)", (_write(
        v.root, f"{prefix}/python.md", f"---\nx: {evil}\n---\nbody\n".encode()),),
        INDEXED, "frontmatter does not parse")
    yield Case("duplicate frontmatter keys", (_write(
        v.root, f"{prefix}/dup.md", b"---\ntitle: a\ntitle: b\n---\nbody\n"),),
        INDEXED, "duplicate key")
    yield Case("frontmatter without a closing fence", (_write(
        v.root, f"{prefix}/unclosed.md", b"---\ntitle: never closed\n\nbody text\n"),), INDEXED)
    yield Case("frontmatter that is a list", (_write(
        v.root, f"{prefix}/list.md", b"---\n- a\n- b\n---\nbody\n"),), INDEXED, "not a mapping")
    yield Case("frontmatter that is a scalar", (_write(
        v.root, f"{prefix}/scalar.md", b"---\njust text\n---\nbody\n"),), INDEXED, "not a mapping")
    yield Case("invalid YAML syntax", (_write(
        v.root, f"{prefix}/syntax.md", b"---\na: [unclosed\nb: {\n---\nbody\n"),),
        INDEXED, "frontmatter does not parse")


def bad_memories(v: HostileVault, prefix: str = "mem") -> Iterator[Case]:
    """Memory-like notes that must be reported and never written."""
    specs: list[tuple[str, str, str, int, str]] = [
        ("duplicate stm_* keys", "dup", "stm_use_count: 2\nstm_use_count: 3\n", 422,
         "duplicate key"),
        ("stm_use_count is a word", "word", "stm_use_count: many\n", 400, "stm_use_count"),
        ("stm_strength is a word", "strength", "stm_strength: strong\n", 400, "stm_strength"),
        ("negative stm_use_count", "negative", "stm_use_count: -4\n", 400, "stm_use_count"),
        ("stm_status unknown", "status", "stm_status: zombie\n", 400, "stm_status"),
        ("stm_promoted_at is not a date", "date", "stm_review_count: 1\nstm_promoted_at: soon\n",
         400, "stm_promoted_at"),
    ]
    for name, slug, stm, status, reason in specs:
        rel = _write(v.root, f"{prefix}/{slug}.md", memory_text(str(uuid.uuid4()), stm))
        yield Case(f"memory: {name}", (rel,), INDEXED, reason, rel, status)
    future = (datetime.now(UTC) + timedelta(days=3650)).replace(microsecond=0).isoformat()
    memory_id = str(uuid.uuid4())
    text = (f"---\nstm_id: {memory_id}\nstm_created: {future}\nstm_last_used: {future}\n"
            "stm_use_count: 9\ntags: [hostile]\n---\nFrom the future.\n")
    rel = _write(v.root, f"{prefix}/future.md", text.encode())
    yield Case("memory: dates ten years in the future", (rel,), INDEXED, "future", rel, 400)
    text_bytes = memory_text(str(uuid.uuid4()), "stm_use_count: 2\n", "A cafe note.\n")
    rel = _write(v.root, f"{prefix}/latin1.md", text_bytes.replace(b"cafe", b"caf\xe9"))
    yield Case("memory: invalid UTF-8 in the body", (rel,), INDEXED, "invalid UTF-8", rel, 422)


def names(v: HostileVault, prefix: str = "names") -> Iterator[Case]:
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    yield Case("NFC and NFD twins (café.md)", (
        _write(v.root, f"{prefix}/{nfc}.md", b"# cafe composed\n"),
        _write(v.root, f"{prefix}/{nfd}.md", b"# cafe decomposed\n")), INDEXED)
    yield Case("emoji and RTL names", (
        _write(v.root, f"{prefix}/🧠 memory 🚀.md", b"# emoji\n"),
        _write(v.root, f"{prefix}/مرحبا עולם \u202e.md", b"# rtl\n")), INDEXED)
    long_name = "é" * 125 + ".md"  # 253 bytes: the longest name most file systems allow
    yield Case("very long name (253 bytes)", (
        _write(v.root, f"{prefix}/{long_name}", b"# long\n"),), INDEXED)
    yield Case("name with spaces # ^ [ ] |", (
        _write(v.root, f"{prefix}/a b #c ^d [e] |f.md", b"# odd\n"),), INDEXED)
    yield Case("name with a newline and a tab", (
        _write(v.root, f"{prefix}/new\nline\ttab.md", b"# newline\n"),), INDEXED)
    raw = os.fsencode(v.root / prefix) + b"/bad-\xff\xfe.md"
    with open(raw, "wb") as handle:
        handle.write(b"# undecodable name\n")
    yield Case("file name that is not UTF-8", (f"{prefix}/bad-\\xff\\xfe.md",), SKIPPED,
               "not valid UTF-8")


def special_files(v: HostileVault, prefix: str = "special") -> Iterator[Case]:
    folder = v.root / prefix
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "fifo.md")
    yield Case("FIFO named .md", (f"{prefix}/fifo.md",), SKIPPED, "not a regular file")
    _write(v.root, f"{prefix}/folder.md/inner.md", b"# inside a folder named folder.md\n")
    yield Case("folder named folder.md", (f"{prefix}/folder.md",), ABSENT)
    yield Case("note inside folder.md", (f"{prefix}/folder.md/inner.md",), INDEXED)
    rel = _write(v.root, f"{prefix}/chmod000.md", b"# locked\n")
    os.chmod(v.root / rel, 0)
    # root reads anything: then the note is indexed, and reported read-only (never written)
    yield Case("chmod 000 note", (rel,), INDEXED if AS_ROOT else SKIPPED,
               "read-only" if AS_ROOT else "unreadable")
    (folder / "locked").mkdir()
    _write(v.root, f"{prefix}/locked/hidden.md", b"# hidden\n")
    os.chmod(folder / "locked", 0)
    yield Case("chmod 000 folder", (f"{prefix}/locked/hidden.md",),
               INDEXED if AS_ROOT else ABSENT)
    os.symlink("/dev/zero", folder / "zero.md")
    yield Case("symlink to /dev/zero", (f"{prefix}/zero.md",), SKIPPED, "outside")


def symlinks(v: HostileVault, prefix: str = "links") -> Iterator[Case]:
    folder = v.root / prefix
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    _write(v.root, f"{prefix}/sub/real.md", b"# real\n")
    os.symlink("..", folder / "sub" / "up")
    yield Case("symlink loop (folder -> its parent)", (f"{prefix}/sub/up",), SKIPPED, "loop",
               folder_link=True)
    os.symlink("self.md", folder / "self.md")
    yield Case("symlink to itself", (f"{prefix}/self.md",), SKIPPED, "loop")
    os.symlink("nowhere.md", folder / "dangling.md")
    yield Case("dangling symlink", (f"{prefix}/dangling.md",), SKIPPED, "unreadable")
    outside = v.outside / prefix
    _write(outside, "secret.md", b"# outside secret\n\nzanzibarquux outside\n")
    _write(outside, "dir/inner.md", b"# outside inner\n\nzanzibarquux inner\n")
    os.symlink(outside / "secret.md", folder / "outside file.md")
    yield Case("symlink to a file outside", (f"{prefix}/outside file.md",), SKIPPED, "outside")
    os.symlink(outside / "dir", folder / "outside dir")
    yield Case("symlink to a folder outside", (f"{prefix}/outside dir",), SKIPPED, "outside",
               folder_link=True)
    yield Case("content behind the outside folder link", (f"{prefix}/outside dir/inner.md",),
               ABSENT)


def sizes(v: HostileVault) -> Iterator[Case]:
    para = ("Large notes are chunked and embedded in batches; the daemon must stay "
            "responsive and bounded in memory while it works through them.\n\n")
    big = LEVEL.pick(3, 15) * MIB
    _write_repeated(v.root / "size/big.md", b"# Big note\n\n", para.encode(), big)
    yield Case(f"a {big // MIB} MiB note", ("size/big.md",), INDEXED)
    huge = LEVEL.pick(MAX_NOTE_BYTES + 1, 50 * MIB)
    _write_repeated(v.root / "size/huge.md", b"# Huge note\n\n", para.encode(), huge)
    yield Case(f"a {huge:,} byte note (over max_note_bytes)", ("size/huge.md",),
               SKIPPED, "too large")
    count = LEVEL.pick(1200, 10_000)
    crowd = v.root / "crowd"
    crowd.mkdir()
    for i in range(count):
        (crowd / f"note {i:05d}.md").write_bytes(f"# Crowd {i}\n\ncrowd member {i}\n".encode())
    yield Case(f"{count} notes in one folder",
               tuple(f"crowd/note {i:05d}.md" for i in range(count)), INDEXED)
    # the long form goes as deep as absolute paths allow (PATH_MAX is 4096 bytes)
    depth = LEVEL.pick(200, (4000 - len(os.fsencode(v.root))) // 2)
    folder = v.root
    for _ in range(depth):  # level by level: pathlib's mkdir(parents=True) recurses
        folder = folder / "d"
        folder.mkdir()
    (folder / "bottom.md").write_bytes(b"# bottom of the well\n\nwellbottomword\n")
    yield Case(f"folders nested {depth} deep", ("d/" * depth + "bottom.md",), INDEXED)


def dismantle_deep_folders(root: Path) -> None:
    """Remove the `d/d/d/…` chain bottom-up (shutil.rmtree recurses once per level)."""
    chain = [root / "d"]
    while (chain[-1] / "d").is_dir():
        chain.append(chain[-1] / "d")
    for folder in reversed(chain):
        for child in folder.iterdir():
            if child.name != "d":
                child.unlink()
        folder.rmdir()


def _write_repeated(path: Path, head: bytes, unit: bytes, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    block = unit * max(1, MIB // len(unit))
    with open(path, "wb") as handle:
        handle.write(head)
        written = len(head)
        while written < size:
            piece = block[: size - written]
            handle.write(piece)
            written += len(piece)


def normal(v: HostileVault) -> None:
    """A few ordinary notes and one ordinary memory, to prove the daemon keeps serving."""
    _write(v.root, "normal/plain.md", b"# Plain\n\nThe heron fishes in the shallow marsh.\n")
    v.normal_memory_id = str(uuid.uuid4())
    _write(v.root, "normal/memory.md", memory_text(
        v.normal_memory_id, "stm_use_count: 1\nstm_strength: 0.3\n",
        "Kestrels hover over the meadow.\n"))


Builder = Callable[[HostileVault], Iterator[Case]]
START_UP: tuple[Builder, ...] = (encodings, frontmatter, bad_memories, names, special_files,
                                 symlinks, sizes)


def build(root: Path) -> HostileVault:
    """The vault (start-up set) at `root`, with the outside folder and the marker beside it."""
    root.mkdir(parents=True)
    vault = HostileVault(root, root.parent / "outside", root.parent / "executed-marker")
    vault.outside.mkdir()
    normal(vault)
    for builder in START_UP:
        for case in builder(vault):
            vault.add(case)
    return vault


def add_while_running(vault: HostileVault) -> list[Case]:
    """A subset written while the daemon watches, in a fresh folder (the watcher path)."""
    added: list[Case] = []
    for builder, prefix in ((encodings, "live/enc"), (frontmatter, "live/yaml"),
                            (names, "live/names"), (bad_memories, "live/mem"),
                            (special_files, "live/special"), (symlinks, "live/links")):
        for case in builder(vault, prefix):
            live = dataclasses.replace(case, watched=True)
            vault.add(live)
            added.append(live)
    return added


def snapshot(*roots: Path) -> Snapshot:
    """Type, mtime, size and content hash (link target for symlinks) of every non-folder."""
    found: Snapshot = {}
    pending = [os.fsencode(root) for root in roots]
    while pending:  # not os.walk: it recurses once per level, and the vault is deep
        try:
            listing = os.scandir(pending.pop())
        except PermissionError:
            continue  # the chmod 000 folder, when not running as root
        with listing as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
                found[entry.path] = (stat.S_IFMT(info.st_mode), info.st_mtime_ns, info.st_size,
                                     _content(entry.path, info.st_mode))
    return found


def _content(full: bytes, mode: int) -> bytes:
    if stat.S_ISLNK(mode):
        return os.readlink(full)
    if not stat.S_ISREG(mode):
        return b""  # a FIFO: opening it could block
    try:
        with open(full, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").digest()
    except PermissionError:
        return b"unreadable"
