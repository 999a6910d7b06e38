"""The ONNX files of local models, made here, kept by the model's content hash, never downloaded.

Layout under the cache folder (by default `<user data dir>/models`):

    sources.json                     model dir -> its files' stamps and its content hash
    <content hash>-r2/model.onnx     the exported transformer's graph (fp32; graph revision 2)
    <content hash>-r2/model.weights  its weights, memory-mapped by ONNX Runtime (onnx_export.py)
    <content hash>-r2/manifest.json  both files' SHA-256 and size, written after the export
    <content hash>-r2/verified.json  both files' stat when their bytes last matched the manifest

A folder without the `-rN` suffix holds revision 1 (the graph as torch exported it): a
verified one is revised into the new folder without torch, its weights hard-linked (no second
copy on disk). It stays, so an earlier vaultmem beside this one keeps finding its files.

A model directory is hashed once; later starts compare its files' stamps (size, inode, mtime,
ctime: `model_files.file_stamp`) and reuse the hash. The ONNX files are checked against their
manifest on every load, the same way: a file's bytes are hashed again whenever its stamp is not
the one recorded at the last full check. Any write changes a file's ctime, which no tool can set
back, so a changed file is always read; an unchanged one is not hashed at every start (~90 ms
of CPU for 90 MB).
Missing, corrupt, unfinished or of an older layout (format 1: one file, weights inside), the
files are exported again, in a child process so that the caller never imports torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vaultmem.errors import IndexUnusableError
from vaultmem.index.model_files import content_hash, file_stamp, hash_file, stamp
from vaultmem.index.onnx_export import GRAPH_NAME, GRAPH_REVISION, WEIGHTS_NAME

FILES = (GRAPH_NAME, WEIGHTS_NAME)
FORMAT = 2
MANIFEST = "manifest.json"
VERIFIED = "verified.json"
SOURCES = "sources.json"
_LOCK = threading.Lock()


def model_key(cache: Path, model_dir: Path) -> str:
    """The content hash of a model directory (or of a model's one file), recomputed only when
    its files' stamp changed."""
    sources_path = cache / SOURCES
    try:
        sources = json.loads(sources_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sources = {}
    entry = sources.get(str(model_dir)) if isinstance(sources, dict) else None
    single = model_dir.is_file()  # a model in one file (multilingual.py), or a directory
    current = [[model_dir.name, *file_stamp(model_dir)]] if single else stamp(model_dir)
    if isinstance(entry, dict) and entry.get("stamp") == current and entry.get("hash"):
        return str(entry["hash"])
    key = _sha256_of(model_dir) if single else content_hash(model_dir)
    sources = sources if isinstance(sources, dict) else {}
    sources[str(model_dir)] = {"stamp": current, "hash": key}
    _write_atomic(sources_path, json.dumps(sources, indent=1).encode("utf-8"))
    return key


def onnx_file(cache: Path, model_dir: Path) -> Path:
    """The verified ONNX graph of `model_dir` (its weights beside it), exported first if
    missing or corrupt."""
    current, earlier = graph_folders(cache, model_dir)
    made = verified_folder(current, FILES,
                           lambda temp: _export_or_revise(model_dir, earlier, temp),
                           str(model_dir))
    return made / GRAPH_NAME


def graph_folders(cache: Path, model_dir: Path) -> tuple[Path, Path]:
    """The folders of `model_dir`'s graph in the cache: this revision's, and revision 1's."""
    key = model_key(cache, model_dir)[:32]
    return cache / f"{key}-r{GRAPH_REVISION}", cache / key


def _export_or_revise(model_dir: Path, earlier: Path, temp: Path) -> None:
    """The graph from an earlier revision's verified files if there are some (no torch,
    ~1 s), else exported from the model."""
    if is_verified(earlier):
        try:
            _in_child(["--revise", str(earlier), str(temp)], str(earlier))
            return
        except IndexUnusableError:
            for name in FILES:
                (temp / name).unlink(missing_ok=True)
    _export(model_dir, temp)


def verified_folder(folder: Path, files: Sequence[str], make: Callable[[Path], None],
                    source: str) -> Path:
    """`folder`, its `files` checked against their manifest, made first (by `make`, into a
    temporary folder beside them, then published) if missing or corrupt."""
    with _LOCK:
        if not is_verified(folder, files):
            publish(folder, files, make, source)
            if not is_verified(folder, files):
                raise IndexUnusableError(f"the model files made from {source} failed their check")
        return folder


def is_verified(folder: Path, files: Sequence[str] = FILES) -> bool:
    """Whether the files match the manifest written when they were made (see above)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        expected = _manifest_files(manifest, files)
        if expected is None:
            return False
        seen = {name: {"stamp": file_stamp(folder / name), "sha256": expected[name]["sha256"]}
                for name in files}
        if any(seen[name]["stamp"][0] != expected[name]["size"] for name in files):
            return False
        recorded = _recorded_stamps(folder)
        for name in files:
            if recorded.get(name) != seen[name] and \
                    _sha256_of(folder / name) != expected[name]["sha256"]:
                return False
    except (OSError, ValueError):
        return False
    with contextlib.suppress(OSError):  # without the record, the next load hashes again
        _write_atomic(folder / VERIFIED, json.dumps(seen).encode("utf-8"))
    return True


def _manifest_files(manifest: object, names: Sequence[str]) -> dict[str, dict[str, Any]] | None:
    """Each file's size and SHA-256, if the manifest is of this layout and whole."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    files = manifest.get("files")
    if not isinstance(files, dict):
        return None
    for name in names:
        entry = files.get(name)
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and isinstance(entry.get("size"), int)):
            return None
    return files


def _recorded_stamps(folder: Path) -> dict[str, Any]:
    try:
        recorded = json.loads((folder / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    hash_file(digest, path)
    return digest.hexdigest()


def export_into(folder: Path, model_dir: Path) -> None:
    """Export `model_dir` to ONNX in a child process and publish the files (see `publish`)."""
    publish(folder, FILES, lambda temp: _export(model_dir, temp), str(model_dir))


def publish(folder: Path, names: Sequence[str], make: Callable[[Path], None],
            source: str) -> None:
    """Make the files in a temporary folder, then publish them and, last, their manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)  # no manifest: not a usable export
    (folder / VERIFIED).unlink(missing_ok=True)
    temp = Path(tempfile.mkdtemp(dir=folder, prefix=".export-"))
    try:
        make(temp)
        files = {name: {"sha256": _sha256_of(temp / name), "size": (temp / name).stat().st_size}
                 for name in names}
        for name in names:
            os.replace(temp / name, folder / name)
        manifest = {"format": FORMAT, "files": files, "source": source}
        _write_atomic(folder / MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _export(model_dir: Path, out_dir: Path) -> None:
    """The torch export, in a child process: the caller never imports torch."""
    _in_child([str(model_dir), str(out_dir)], str(model_dir))


def _in_child(args: list[str], source: str) -> None:
    """`python -m vaultmem.index.onnx_export ARGS` in a child process."""
    run_module("vaultmem.index.onnx_export", args, f"cannot export {source} to ONNX")


def run_module(module: str, args: list[str], failure: str) -> None:
    """`python -m MODULE ARGS` in a child process (offline), its memory and imports never
    the caller's; IndexUnusableError(`failure`: its last error line) if it fails."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", module, *args],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise IndexUnusableError(f"{failure}: {tail}")


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
