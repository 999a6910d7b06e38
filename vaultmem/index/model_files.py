"""What a local sentence-transformers model directory declares, read without torch.

The ONNX runtime needs the same facts sentence-transformers reads when it loads a model: the
longest input (`sentence_bert_config.json`), the pooling (`1_Pooling/config.json`), whether it
normalises (`modules.json`), the tokenizer (`tokenizer.json`) and the prompts
(`config_sentence_transformers.json`, e.g. e5's `query: ` / `passage: `). Also the content hash
that names the model's ONNX file in the cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Files that are not part of what the model computes (a changed README keeps its ONNX file).
_NOT_MODEL = (".md", ".txt.bak")
_POOLINGS = ("mean", "cls")


@dataclass(frozen=True)
class ModelFiles:
    """The facts of one model directory that embedding with it needs."""

    path: Path
    max_tokens: int
    pooling: str  # "mean", "cls", or something else: no ONNX form
    normalize: bool
    has_tokenizer: bool
    query_prompt: str
    passage_prompt: str

    @property
    def onnx_problem(self) -> str | None:
        """Why this model cannot run on the ONNX runtime, or None if it can."""
        if not self.has_tokenizer:
            return "it has no tokenizer.json"
        if self.pooling not in _POOLINGS:
            return f"its pooling ({self.pooling}) is not mean or cls"
        return None


def read_model_files(path: Path) -> ModelFiles:
    modules = _json(path / "modules.json", [])
    types = [str(m.get("type", "")) for m in modules if isinstance(m, dict)]
    pooling_dir = next((str(m.get("path", "")) for m in modules if isinstance(m, dict)
                        and str(m.get("type", "")).endswith("Pooling")), "1_Pooling")
    bert_config = _json(path / "sentence_bert_config.json", {})
    model_config = _json(path / "config.json", {})
    max_tokens = int(bert_config.get("max_seq_length")
                     or model_config.get("max_position_embeddings") or 512)
    prompts = _json(path / "config_sentence_transformers.json", {}).get("prompts") or {}
    return ModelFiles(
        path=path, max_tokens=max_tokens, pooling=_pooling(path / pooling_dir / "config.json"),
        normalize=any(t.endswith("Normalize") for t in types),
        has_tokenizer=(path / "tokenizer.json").is_file(),
        query_prompt=str(prompts.get("query", "")),
        passage_prompt=str(prompts.get("passage", prompts.get("document", ""))),
    )


def _pooling(config_path: Path) -> str:
    config = _json(config_path, {})
    if not config:
        return "mean"  # sentence-transformers' default for a plain transformer directory
    modes = [key.removeprefix("pooling_mode_").removesuffix("_token").removesuffix("_tokens")
             for key, value in config.items() if key.startswith("pooling_mode_") and value]
    if isinstance(config.get("pooling_mode"), str):
        modes = [str(config["pooling_mode"])]
    return modes[0] if len(modes) == 1 else "+".join(modes) or "none"


def _json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def model_file_list(path: Path) -> list[Path]:
    """The files whose bytes define the model (sorted; no docs, no caches of our own)."""
    return sorted(
        p for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".") and not p.name.endswith(_NOT_MODEL)
        and "onnx" not in p.relative_to(path).parts[:-1]
    )


def file_stamp(file: Path) -> list[int]:
    """Size, inode, mtime and ctime of a file. Any write changes its ctime, which no tool can
    set back, so an equal stamp means the bytes last hashed are still there."""
    info = file.stat()
    return [info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns]


def stamp(path: Path) -> list[list[Any]]:
    """Name and `file_stamp` of every model file: a cheap check that the hash is still true."""
    return [[file.relative_to(path).as_posix(), *file_stamp(file)]
            for file in model_file_list(path)]


def hash_file(digest: Any, file: Path) -> None:
    """Feed a file's bytes to `digest` (a hashlib object), a megabyte at a time."""
    with file.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)


def content_hash(path: Path) -> str:
    """SHA-256 over every model file's name and bytes (reads the weights: ~0.1 s for 90 MB)."""
    digest = hashlib.sha256()
    for file in model_file_list(path):
        digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
        hash_file(digest, file)
        digest.update(b"\0")
    return digest.hexdigest()
