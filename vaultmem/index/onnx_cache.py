"""The ONNX files of local models, made here, kept by the model's content hash, never downloaded.

Layout under the cache folder (by default `<user data dir>/models`):

    sources.json                  model dir -> its files' stamps and its content hash
    <content hash>/model.onnx     the exported transformer (fp32)
    <content hash>/manifest.json  the ONNX file's SHA-256 and size, written after the export
    <content hash>/verified.json  the ONNX file's stat when its bytes last matched the manifest

A model directory is hashed once; later starts compare its files' stamps (size, inode, mtime,
ctime: `model_files.file_stamp`) and reuse the hash. The ONNX file is checked against its
manifest on every load, the same way: its bytes are hashed again whenever its stamp is not the
one recorded at the last full check. Any write changes a file's ctime, which no tool can set
back, so a changed file is always read; an unchanged one is not hashed at every start (~90 ms
of CPU for 90 MB).
Missing, corrupt or unfinished, the file is exported again, in a child process so that the
caller never imports torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from vaultmem.errors import IndexUnusableError
from vaultmem.index.model_files import content_hash, file_stamp, hash_file, stamp

ONNX_NAME = "model.onnx"
MANIFEST = "manifest.json"
VERIFIED = "verified.json"
SOURCES = "sources.json"
_LOCK = threading.Lock()


def model_key(cache: Path, model_dir: Path) -> str:
    """The model's content hash, recomputed only when its files' stamp changed."""
    sources_path = cache / SOURCES
    try:
        sources = json.loads(sources_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sources = {}
    entry = sources.get(str(model_dir)) if isinstance(sources, dict) else None
    current = stamp(model_dir)
    if isinstance(entry, dict) and entry.get("stamp") == current and entry.get("hash"):
        return str(entry["hash"])
    key = content_hash(model_dir)
    sources = sources if isinstance(sources, dict) else {}
    sources[str(model_dir)] = {"stamp": current, "hash": key}
    _write_atomic(sources_path, json.dumps(sources, indent=1).encode("utf-8"))
    return key


def onnx_file(cache: Path, model_dir: Path) -> Path:
    """The verified ONNX file of `model_dir`, exported first if missing or corrupt."""
    with _LOCK:
        folder = cache / model_key(cache, model_dir)[:32]
        if not is_verified(folder):
            export_into(folder, model_dir)
            if not is_verified(folder):
                raise IndexUnusableError(f"the ONNX export of {model_dir} failed its check")
        return folder / ONNX_NAME


def is_verified(folder: Path) -> bool:
    """Whether the ONNX file matches the manifest written when it was exported (see above)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or not manifest.get("sha256"):
            return False
        seen = {"stamp": file_stamp(folder / ONNX_NAME), "sha256": manifest["sha256"]}
        if seen["stamp"][0] != manifest.get("size"):
            return False
        if _recorded_stamp(folder) == seen:
            return True
        if _sha256_of(folder / ONNX_NAME) != manifest["sha256"]:
            return False
    except (OSError, ValueError):
        return False
    with contextlib.suppress(OSError):  # without the record, the next load hashes again
        _write_atomic(folder / VERIFIED, json.dumps(seen).encode("utf-8"))
    return True


def _recorded_stamp(folder: Path) -> object:
    try:
        return json.loads((folder / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    hash_file(digest, path)
    return digest.hexdigest()


def export_into(folder: Path, model_dir: Path) -> None:
    """Export in a child process to a temporary file, then publish file and manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)  # no manifest: not a usable export
    (folder / VERIFIED).unlink(missing_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=folder, prefix=".export-", suffix=".onnx")
    os.close(handle)
    temp = Path(temp_name)
    try:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "vaultmem.index.onnx_export", str(model_dir), str(temp)],
            capture_output=True, text=True, env=env, check=False,
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise IndexUnusableError(f"cannot export {model_dir} to ONNX: {tail}")
        digest, size = _sha256_of(temp), temp.stat().st_size
        os.replace(temp, folder / ONNX_NAME)
        manifest = {"sha256": digest, "size": size, "source": str(model_dir)}
        _write_atomic(folder / MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
    finally:
        temp.unlink(missing_ok=True)


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
