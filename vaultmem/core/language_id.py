"""Which language a note is written in, so its words can be analysed in that language (the
full-text index's `terms` column, index/analysis.py).

No model: the script decides first (kana: Japanese, hangul: Korean, Han alone: Chinese,
Cyrillic, Greek, Arabic), then, for Latin text, the language whose common function words
the text uses most, with its own letters (ß, ñ, ã, å, ø, ...) as a tie-breaker. Code, links
and inline code are left out first: a page of commands in Russian is Russian. A text with
nothing to tell by (a list of names, code) is "" (unknown), which the index treats as
English, today's analysis.

Measured on 376 documentation pages in each of eight languages (bench/eval_analysis.py):
every page right but 9 of 3,008 (unknown); a page's one-line description right in 93-100 %
of them, the rest unknown but 2 (docs/benchmarks.md). A bundled statistical
identifier (py3langid) was as accurate on pages but took ~2.4 s and ~105 MB to load.
"""

from __future__ import annotations

import re
from collections import Counter

UNKNOWN = ""
#: Languages a note may be judged to be in (ISO 639-1).
LATIN = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "no", "fi", "pl")
CJK = ("zh", "ja", "ko")

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`|\{\{.*?\}\}|<?https?://\S+|\[\[.*?\]\]",
                   re.DOTALL)
_WORD = re.compile(r"[^\W\d_]+")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: CJK letters tell more per character than alphabetic ones (a Chinese word is ~2 of them).
_CJK_WEIGHT = 3
#: A Latin-script language is named on this many of its function words (each counted once:
#: `com`, `os` or `non` repeated in an English note is one word), or, in a short line, on one
#: more than any other language has.
_MIN_HITS = 3
_SHORT = 8

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "the and of to is in it that for you was with on as are be this have not but at by "
        "from or an they which we can if will there what all would when your has how into "
        "than then them these their its"),
    "de": _words(
        "der die das und ist nicht mit ein eine einen einem einer den dem des zu auf sich "
        "auch im für von wird werden oder wie aus bei nach kann sind als zum zur über alle "
        "sie wenn nur noch durch diese dieser"),
    "fr": _words(
        "le la les des du une est et dans pour avec qui que pas sur sont un au aux ce cette "
        "ces il elle ou par plus être peut tous tout leur leurs vers comme sans"),
    "es": _words(
        "el los las del una por con para es se lo como pero y en un que su sus este esta "
        "estos más ser puede todos todo sin sobre entre desde"),
    "pt": _words(
        "uma não da dos das na nos nas em para por que se ao é ou seu sua este esta isso mais "
        "ser pode todos todo sem sobre entre"),
    "it": _words(
        "il di che per sono della del dei delle una un lo gli le è e con su da alla questo "
        "questa più essere può tutti tutto senza"),
    "nl": _words(
        "het een niet van zijn ook wat dat op met voor dit deze die er aan bij naar om of "
        "uit worden wordt kan alle zonder"),
    "sv": _words(
        "och att det som en ett är av för med till på den inte har från eller om kan alla "
        "utan vid sig dessa denna"),
    "da": _words(
        "og at det som en et er af for med til på den ikke har fra eller om kan alle uden "
        "ved sig disse denne"),
    "no": _words(
        "og at det som en et er av for med til på den ikke har fra eller om kan alle uten "
        "ved seg disse denne"),
    "fi": _words(
        "ja on ei että se tai kun mutta myös joka jos niin kuin tämä nämä ovat olla voi "
        "kaikki ilman"),
    "pl": _words(
        "i w nie na się z do że jest to jak po od o za czy ale przez dla są może wszystkie "
        "bez oraz lub ten ta te"),
}
# Letters only some of the Latin-script languages use: a weak hint, for ties.
_LETTERS = {
    "de": "äöüß", "fr": "àâçèéêëîïôùûœ", "es": "ñ¿¡áéíóú", "pt": "ãõçáâêéíóú",
    "it": "àèéìòù", "sv": "åäö", "da": "æøå", "no": "æøå", "fi": "äö", "pl": "ąćęłńóśźż",
}
_UKRAINIAN = frozenset("іїєґ")


def note_language(text: str) -> str:
    """The language of `text` (ISO 639-1: "en", "ru", "zh", ...), or UNKNOWN."""
    plain = _CODE.sub(" ", text)
    scripts = _scripts(plain)
    if not scripts:
        return UNKNOWN
    script = scripts.most_common(1)[0][0]
    if script == "cjk":
        if scripts["kana"]:
            return "ja"
        return "ko" if scripts["hangul"] else "zh"
    if script == "cyrillic":
        ukrainian = sum(1 for ch in plain.casefold() if ch in _UKRAINIAN)
        return "uk" if ukrainian >= 3 else "ru"
    if script != "latin":
        return script if script in ("el", "ar") else UNKNOWN
    return _latin_language(plain)


#: Each non-ASCII character's script once looked up ("" for a character that is no letter): a
#: note repeats the same few hundred characters, and the lookup is most of the judge's time on
#: a Chinese or Russian note.
_LETTER_SCRIPTS: dict[str, str] = {}
_LETTER_SCRIPTS_KEPT = 65536


def _scripts(text: str) -> Counter[str]:
    """Letter counts per script; "cjk" is the weighted total of kana, hangul and Han, which are
    also counted on their own. ASCII letters are counted at once (Latin); only the other
    characters are looked at one by one (a Python loop over every character of an English
    note was most of the judge's time)."""
    ascii_only = text.encode("ascii", "ignore")
    latin = len(ascii_only) - len(ascii_only.translate(None, _ASCII_LETTERS))
    first = _ASCII_LETTER.search(text) if latin else None
    first_latin = first.start() if first is not None else len(text)
    counts: Counter[str] = Counter()
    known = _LETTER_SCRIPTS
    for found in _NOT_ASCII.finditer(text):
        ch = found.group()
        script = known.get(ch)
        if script is None:
            if len(known) > _LETTER_SCRIPTS_KEPT:
                known.clear()
            script = known[ch] = script_of(ord(ch)) if ch.isalpha() else ""
        if not script:
            continue
        if found.start() > first_latin and "latin" not in counts:
            counts["latin"] = 0  # scripts in the order they first appear: ties go to the first
        counts[script] += 1
    if latin:
        counts["latin"] += latin
    cjk = counts["kana"] + counts["hangul"] + counts["han"]
    if cjk:
        counts["cjk"] = cjk * _CJK_WEIGHT
        for part in ("kana", "hangul", "han"):  # kept for the verdict, never the majority
            counts[part] = min(counts[part], 1) if counts[part] else 0
    return counts


def script_of(code: int) -> str:
    """The script of a letter's code point ("other" for scripts the judge does not tell)."""
    if code < 0x250:
        return "latin"
    if 0x400 <= code < 0x530:
        return "cyrillic"
    if 0x370 <= code < 0x400:
        return "el"
    if 0x600 <= code < 0x700:
        return "ar"
    if 0x3040 <= code < 0x3100 or 0xFF66 <= code < 0xFFA0:
        return "kana"
    if 0xAC00 <= code < 0xD7B0 or 0x1100 <= code < 0x1200 or 0x3130 <= code < 0x3190:
        return "hangul"
    if 0x3400 <= code < 0xA000 or 0xF900 <= code < 0xFB00 or 0x20000 <= code < 0x2FA20:
        return "han"
    return "other"


def _latin_language(text: str) -> str:
    words = {w.casefold() for w in _WORD.findall(text)}
    hits = Counter({lang: len(words & vocabulary) for lang, vocabulary in _FUNCTION_WORDS.items()})
    letters = Counter(_NOT_ASCII.findall(text.casefold()))
    ranked = sorted(
        hits, key=lambda lang: (-hits[lang], -sum(letters[c] for c in _LETTERS.get(lang, ""))))
    best, second = ranked[0], ranked[1]
    if hits[best] > hits[second] and (hits[best] >= _MIN_HITS or len(words) < _SHORT):
        return best
    return UNKNOWN
