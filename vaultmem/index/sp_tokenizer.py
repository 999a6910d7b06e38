"""XLM-RoBERTa's SentencePiece tokenizer for the multilingual model, run by the `sentencepiece`
library from a model file written here from the packed vocabulary (e5_file.py).

Why not `tokenizers`, which serves the English model: its unigram model keeps a 250,000-piece
vocabulary in a trie that took ~280 MB of the daemon's memory; SentencePiece's double-array
takes ~55 MB and encodes a chunk in ~0.05 ms. Both give the same pieces (checked on tldr pages
in six languages while choosing).

The text is normalised first as the package's tokenizer does: its per-character map (NFKC,
control characters dropped, unusual spaces made plain) is NFKC plus a few dozen characters,
kept in `normalisation.json` beside the model; SentencePiece then collapses runs of spaces,
adds the leading `▁` and finds the best segmentation by the pieces' unigram scores.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.index.e5_file import E5File

SP_MODEL = "tokenizer.model"
NORMALISATION = "normalisation.json"
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3  # SentencePiece's piece types
_UNIGRAM = 1


def write_tokenizer(model: E5File, folder: Path) -> list[str]:
    """Write the SentencePiece model and the normalisation table; returns their file names."""
    (folder / SP_MODEL).write_bytes(_model_proto(model))
    extra = {str(point): text for point, text in sorted(model.normalisation.items())
             if unicodedata.normalize("NFKC", chr(point)) != text}
    (folder / NORMALISATION).write_text(json.dumps(extra, ensure_ascii=True), encoding="utf-8")
    return [SP_MODEL, NORMALISATION]


@dataclass(frozen=True)
class Encoded:
    ids: list[int]
    attention_mask: list[int]
    type_ids: list[int]


class SentencePieceTokenizer:
    """`encode_batch` as the ONNX runtime uses it: `<s> pieces </s>`, truncated to
    `max_tokens`, padded to the longest text of the batch."""

    def __init__(self, folder: Path, max_tokens: int, *, bos: int = 0, eos: int = 2,
                 pad: int = 1) -> None:
        import sentencepiece

        self._sp: Any = sentencepiece.SentencePieceProcessor(model_file=str(folder / SP_MODEL))
        table = json.loads((folder / NORMALISATION).read_text(encoding="utf-8"))
        self._table = {int(point): text for point, text in table.items()}
        self._room = max(1, max_tokens - 2)
        self._bos, self._eos, self._pad = bos, eos, pad

    def normalise(self, text: str) -> str:
        return unicodedata.normalize("NFKC", text.translate(self._table))

    def encode_batch(self, texts: Sequence[str]) -> list[Encoded]:
        pieces = self._sp.encode([self.normalise(text) for text in texts])
        rows = [[self._bos, *row[: self._room], self._eos] for row in pieces]
        width = max((len(row) for row in rows), default=0)
        return [Encoded(row + [self._pad] * (width - len(row)),
                        [1] * len(row) + [0] * (width - len(row)), [0] * width)
                for row in rows]


def _model_proto(model: E5File) -> bytes:
    """A SentencePiece ModelProto (its protobuf wire format, written by hand): the pieces with
    their scores and types, a unigram trainer spec naming the special ids, and an identity
    normaliser that adds the leading `▁` and collapses spaces."""
    out = bytearray()
    specials = {model.bos, model.eos, model.pad}
    for index, (piece, score) in enumerate(zip(model.pieces, model.scores, strict=True)):
        kind = _UNKNOWN if index == model.unk else _CONTROL if index in specials else _NORMAL
        out += _field(1, _field(1, piece.encode("utf-8")) + _float(2, float(score))
                      + _number(3, kind))
    out += _field(2, _number(3, _UNIGRAM) + _number(4, len(model.pieces)) + _number(40, model.unk)
                  + _number(41, model.bos) + _number(42, model.eos) + _number(43, model.pad))
    out += _field(3, _field(1, b"identity") + _number(3, 1) + _number(4, 1) + _number(5, 1))
    return bytes(out)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _number(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _float(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)
