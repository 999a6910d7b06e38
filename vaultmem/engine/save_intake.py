"""A save's intake, before anything is written (engine/lifecycle.py `save`): its content and
fields through the gate (core/intake.py), the live memory it repeats word for word
(`exact_duplicate`) or nearly (`closest_memory`), and the title it gets when given none."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.core.intake import check_content, find_secret, numbers_agree, secret_reason
from vaultmem.core.memory import MEMORY_TYPES
from vaultmem.engine.parts import EngineParams, IndexOpener
from vaultmem.errors import InvalidInput, Refused
from vaultmem.index.base import Embedder, Vector
from vaultmem.store.memory_notes import MemoryNote, content_of, normalise_text

# Near duplicates: how many of the closest note vectors are re-checked on their own text, and
# how far below the threshold a note vector may be and still be re-checked (a note vector
# also carries the note's title, so it reads a little lower than the text alone).
NEAR_SHORTLIST = 5
NEAR_SHORTLIST_MARGIN = 0.25


@dataclass(frozen=True)
class Closest:
    """A live memory near a save: the cosine with its remembered text, and the similarity
    (the higher of that and the cosine with its title)."""

    memory: MemoryNote
    text_cosine: float
    similarity: float


def check_save(
    content: str, *, title: str | None, tags: Sequence[str], source: str | None,
    type: str | None, strength: float, params: EngineParams,
) -> None:
    """Refused (the gate: too short or long, a secret) or InvalidInput (a field out of
    range): nothing of the save is written anywhere."""
    reason = check_content(content, min_chars=params.min_content_chars,
                           max_chars=params.max_content_chars)
    if reason is not None:
        raise Refused(reason)
    for what, text in (("title", title), ("source", source), ("tag", " ".join(tags))):
        kind = find_secret(text) if text else None
        if kind is not None:
            raise Refused(secret_reason(what, kind))
    if type is not None and type not in MEMORY_TYPES:
        kinds = ", ".join(MEMORY_TYPES)
        raise InvalidInput(f"unknown memory type {type!r}: use one of {kinds}")
    if not 0.0 <= strength <= 2.0:
        raise InvalidInput("strength must be between 0 and 2")


def closest_memory(content: str, query: Vector, live: Sequence[MemoryNote], *,
                   index: IndexOpener, embedder: Embedder, params: EngineParams
                   ) -> Closest | None:
    """The live memory closest to `content` (same numbers). The index's note vectors
    (title and heading included) pick a shortlist; the shortlist's remembered texts and
    titles are then embedded and compared like for like."""
    lowest = min(params.near_duplicate_cosine, params.similar_memory_cosine)
    by_path = {m.path: m for m in live}
    if not by_path:
        return None
    ranked = sorted(((float(vector @ query), path)
                     for path, vector in index().note_vectors(by_path).items()),
                    reverse=True)
    shortlist = [by_path[path] for cosine, path in ranked[:NEAR_SHORTLIST]
                 if cosine >= lowest - NEAR_SHORTLIST_MARGIN
                 and numbers_agree(content, content_of(by_path[path]))]
    if not shortlist:
        return None
    texts = [content_of(m) for m in shortlist] + [m.note.title for m in shortlist]
    cosines = embedder.embed(texts) @ query
    count = len(shortlist)
    found = [Closest(m, float(cosines[i]), max(float(cosines[i]), float(cosines[count + i])))
             for i, m in enumerate(shortlist)]
    return max(found, key=lambda c: (c.text_cosine >= params.near_duplicate_cosine,
                                     c.similarity, c.text_cosine))


def exact_duplicate(content: str, live: Sequence[MemoryNote]) -> MemoryNote | None:
    """The live memory whose remembered text, or whose title, is `content` (normalised)."""
    wanted = normalise_text(content)
    same_text = (m for m in live if normalise_text(content_of(m)) == wanted)
    same_title = (m for m in live if normalise_text(m.note.title) == wanted)
    return next(same_text, None) or next(same_title, None)


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
TITLE_MAX = 200  # past this a first sentence is cut at a word, with an ellipsis


def title_from(content: str) -> str:
    """A memory's title: the first sentence of its first line, whole (a title cut mid-sentence
    reads as a different fact); only a sentence longer than TITLE_MAX is shortened."""
    first = " ".join(content.strip().splitlines()[0].lstrip("#").split())
    sentence = _SENTENCE_END.split(first, maxsplit=1)[0].rstrip()
    if len(sentence) <= TITLE_MAX:
        return sentence[:-1] if sentence.endswith(".") and not sentence.endswith("..") \
            else sentence
    return sentence[:TITLE_MAX].rsplit(" ", 1)[0].rstrip(",;:") + "…"
