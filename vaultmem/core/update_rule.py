"""Does a new memory update an old one? The detector's text rule, pure.

A save is proposed as an update of an existing memory when the two are close in meaning
(cosine at or above `update_cosine`, decided by the caller with the model), in the same scope
(a shared tag, or both in the folder saves go to when either has no tags) and the new text
changes a value: a number, version, date or time the old one states is gone and another stands
in its place, or the new text says the fact changed ("moved to", "now", "changed to", "no
longer", "instead of", ...) and names something the old one does not.

When the new text names the value it replaces ("at +5 instead of +4", "now 6543, was 5433",
"from 2 to 3"), the reason names that replacement ("a value changed: 4 → 5"), not whatever other
number the two texts differ in.

The cues are in the languages the product supports (English, Russian, German, French, Spanish,
Chinese, Japanese, Korean): "Теперь … вместо …", "jetzt … statt …", "désormais … au lieu de …",
"ahora … en lugar de …", "现在…而不是…", "今は…ではなく…", "이제 … 대신 …".

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
# the same cues in the other supported languages (word-bounded; CJK below, unbounded)
_CUES_OTHER = (
    # Russian
    r"теперь", r"сейчас", r"вместо", r"больше не", r"уже не", r"перенесл[аиоы]?", r"переехал[аио]?",
    r"изменил[аиос]?[ья]? на", r"заменил[аио]? на", r"раньше был[аио]?",
    # German
    r"jetzt", r"nun", r"inzwischen", r"mittlerweile", r"statt", r"anstatt", r"anstelle von",
    r"nicht mehr", r"geändert (?:auf|zu|in)", r"umgezogen (?:nach|zu|auf)", r"früher",
    # French
    r"maintenant", r"désormais", r"dorénavant", r"au lieu de", r"ne \S+ plus", r"plus de",
    r"a changé", r"changé (?:en|pour|à)", r"déménagé (?:à|vers)", r"remplacé par", r"avant",
    # Spanish
    r"ahora", r"en lugar de", r"en vez de", r"ya no", r"cambió a", r"cambiado a",
    r"se mudó a", r"reemplazado por", r"sustituido por", r"antes",
)
_CUE = re.compile(r"(?<!\w)(?:" + "|".join(_CUES + _CUES_OTHER) + r")(?!\w)", re.I)
_CJK_CUE = re.compile(
    r"现在|如今|改为|改成|换成|不再|而不是|代替|取代|已经不|"  # Chinese
    r"今は|現在は|に変更|へ変更|ではなく|じゃなく|代わりに|もう|"  # Japanese
    r"이제|지금은|대신|더 이상|(?:으로|로) 변경|(?:으로|로) 바뀌")  # Korean
# the value a new text says it replaces: "instead of +4", "(was 5433)", "from 2 to 3"
_REPLACED = re.compile(
    r"(?i)(?:instead of|rather than|in place of|no longer|not any ?more|(?<!\w)was|used to be"
    r"|from|вместо|а не|больше не|раньше был[аио]?|statt|anstatt|anstelle von|nicht mehr|früher"
    r"|au lieu de|plutôt que|avant|en lugar de|en vez de|ya no|antes|而不是|代替|ではなく|대신)"
    r"[^\d\n.;!?]{0,24}?(?P<v>\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+(?:[.,]\d+)*)")
_WORD = re.compile(r"[^\W\d_][\w.+-]*")
# the value a new text says it now has: "moved to port 5001", "now 6543", "jetzt 8080"
_STATED_NEW = re.compile(
    r"(?i)(?:moved to|changed to|switched to|(?:upgraded|migrated|updated|bumped|raised|lowered"
    r"|increased|decreased|set) to|(?<!\w)now|теперь|изменил[аиос]?[ья]? на|jetzt|nun|maintenant"
    r"|désormais|ahora|现在|改为|改成|今は|이제)[^\d\n.;!?]{0,24}?"
    r"(?P<v>\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+(?:[.,]\d+)*)")
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
    """The first phrase saying a fact changed ("moved to", "no longer", "вместо", "statt",
    "改为", ...), lower case."""
    found = [m for m in (_CUE.search(text), _CJK_CUE.search(text)) if m is not None]
    if not found:
        return None
    return min(found, key=lambda m: m.start()).group(0).lower()


def replaced_values(text: str) -> frozenset[str]:
    """The values `text` says it replaces: "instead of +4", "was 5433", "from 2 (to 3)"."""
    return values(" ".join(m.group("v") for m in _REPLACED.finditer(text)))


def value_change(old: str, new: str) -> str | None:
    """Why `new` reads as an update of `old` (given that the two are close in meaning), or
    None when it restates it."""
    before, after = values(old), values(new)
    replaced = replaced_values(new) & before
    if replaced:  # the new text names what it replaces: that is the change
        stated = sorted(after - replaced - before) or sorted(after - replaced)
        if stated:
            return f"a value changed: {', '.join(sorted(replaced))} → {', '.join(stated)}"
    gone, came = sorted(before - after), sorted(after - before)
    stated_new = sorted(set(came) & values(" ".join(m.group("v")
                                                    for m in _STATED_NEW.finditer(new))))
    came = stated_new or came  # "moved to port 5001 after the DSM 7 upgrade": 5001, not 7
    if gone and came:
        return f"a value changed: {', '.join(gone)} → {', '.join(came)}"
    said = cue(new)
    if said is not None and said != cue(old):
        fresh = sorted(filter(None, (_news(word, old)
                                     for word in _content_words(new) - _content_words(old))))
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


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _news(word: str, old: str) -> str:
    """What a new word adds: "" for a cue; of a CJK run (written without spaces), the
    characters the old text lacks once the cues are taken out ("现在改为周三" → "三")."""
    if _CUE.fullmatch(word) or _CJK_CUE.fullmatch(word):
        return ""
    if not _CJK.search(word):
        return word
    return "".join(ch for ch in _CJK_CUE.sub("", word) if ch not in old and _CJK.match(ch))


def _content_words(text: str) -> set[str]:
    return {w.lower().rstrip(".") for w in _WORD.findall(text)
            if w.lower() not in _STOP and len(w) > 2}
