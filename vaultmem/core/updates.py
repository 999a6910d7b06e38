"""Does a new memory update an old one? The detector's text rule, pure.

A save is proposed as an update of an existing memory when the two are close in meaning
(cosine at or above `update_cosine`, decided by the caller with the model), in the same scope
(a shared tag, or both in the folder saves go to when either has no tags) and the new text
changes a value: a number, version, date or time the old one states is gone and another stands
in its place, or the new text says the fact changed ("moved to", "now", "changed to", "no
longer", "instead of", ...) and names something the old one does not.

Measured on a judged set of pairs (`tests/data/updates/`) by `bench/eval_updates.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .intake import tag_key

# a value: an ISO date, a time, a version or a number (1,000 and v2.4 read as 1000 and 2.4)
_VALUE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+(?:[.,]\d+)*")
_CUES = (
    r"moved to", r"moved from", r"now", r"changed to", r"changed from", r"no longer",
    r"instead of", r"switched to", r"switched from", r"replaced (?:by|with)",
    r"(?:upgraded|migrated|renamed|updated|bumped|raised|lowered|increased|decreased) to",
    r"not any ?more", r"anymore", r"from now on", r"these days", r"since then",
    r"is now", r"was changed", r"has changed", r"used to",
)
_CUE = re.compile(r"\b(?:" + "|".join(_CUES) + r")\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")
# words that carry no fact: a new one of these does not make a new value
_STOP_WORDS = """
a an the is are was were be been being am to of in on at by for from with as and or but not no
it its this that these those there here we our us you your they their them he she his her i my
me now moved move changed change switched switch instead longer any anymore more used use uses
using since then than after before when while into onto over under up down out off so too very
has have had do does did will would should can could may might must just also still only again
upgraded upgrade migrated migrate renamed rename replaced replace updated update bumped raised
lowered increased decreased days these from all every each which what who whom where why how
"""
_STOP = frozenset(_STOP_WORDS.split())


def values(text: str) -> frozenset[str]:
    """The numbers, versions, dates and times a text states (thousands separators dropped)."""
    found = set()
    for match in _VALUE.finditer(text):
        value = match.group(0)
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+", value):
            value = value.replace(",", "")
        found.add(value.rstrip(".,"))
    return frozenset(found)


def cue(text: str) -> str | None:
    """The first phrase saying a fact changed ("moved to", "no longer", ...), lower case."""
    match = _CUE.search(text)
    return match.group(0).lower() if match else None


def value_change(old: str, new: str) -> str | None:
    """Why `new` reads as an update of `old` (given that the two are close in meaning), or
    None when it restates it."""
    before, after = values(old), values(new)
    gone, came = sorted(before - after), sorted(after - before)
    if gone and came:
        return f"a value changed: {', '.join(gone)} → {', '.join(came)}"
    said = cue(new)
    if said is not None and said != cue(old):
        fresh = sorted(_content_words(new) - _content_words(old))
        if fresh or came:
            what = ", ".join((came + fresh)[:3])
            return f"it says {said!r} and names what is new: {what}"
    return None


def same_scope(old_tags: Iterable[str], new_tags: Iterable[str], old_folder: str,
               save_folder: str) -> bool:
    """A shared tag; or, when either side has no tags, the old memory sits in the folder saves
    go to (where the new one is)."""
    old_keys, new_keys = {tag_key(t) for t in old_tags}, {tag_key(t) for t in new_tags}
    if old_keys and new_keys:
        return bool(old_keys & new_keys)
    return old_folder.strip("/") == save_folder.strip("/")


def best_update(candidates: Sequence[tuple[str, str, float]], new: str,
                threshold: float) -> tuple[str, str, float] | None:
    """Of (id, text, cosine) candidates in scope, the closest one `new` updates, with the
    reason: (id, reason, cosine); None when none reaches `threshold` or changes a value."""
    found = []
    for memory_id, text, cosine in candidates:
        if cosine < threshold:
            continue
        reason = value_change(text, new)
        if reason is not None:
            found.append((cosine, memory_id, reason))
    if not found:
        return None
    cosine, memory_id, reason = max(found)
    return memory_id, reason, cosine


def _content_words(text: str) -> set[str]:
    return {w.lower().rstrip(".") for w in _WORD.findall(text)
            if w.lower() not in _STOP and len(w) > 2}
