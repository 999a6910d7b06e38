"""How much of a vault is not English: the default embedding model understands English only,
so a vault largely in other languages is better served by a multilingual model.

A text is judged by its letters and its most common words, no dictionary or model: mostly
non-Latin letters (Cyrillic, Greek, CJK, Arabic, ...) is not English; Latin text is English
when English function words outnumber those of the other common Latin-script languages.
Texts with too few letters or words to tell (a link list, a code block) are not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_LETTERS = 40
CJK_WEIGHT = 3  # letters a Chinese, Japanese or Korean character counts for
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
MIN_WORDS = 8
#: The share of judged texts not in English above which `status` suggests another model.
NOTICE_SHARE = 0.2

_ENGLISH = frozenset((
    "the", "and", "of", "to", "is", "in", "it", "that", "for", "you", "was", "with", "on", "as",
    "are", "be", "this", "have", "not", "but", "at", "by", "from", "or", "an", "they", "which",
    "we", "can", "if", "will", "there", "what", "all", "would", "when", "your", "has", "how",
    "i", "my", "a", "so", "do", "about", "into", "than", "then", "them", "these", "their",
))
# French, German, Spanish, Portuguese, Italian, Dutch function words that English lacks.
_OTHER_LATIN = frozenset((
    "le", "la", "les", "des", "du", "une", "est", "et", "dans", "pour", "avec", "qui", "que",
    "pas", "sur", "sont", "der", "die", "das", "und", "ist", "nicht", "mit", "ein", "eine",
    "den", "dem", "zu", "auf", "sich", "auch", "el", "los", "las", "por", "con", "para", "una",
    "es", "del", "se", "lo", "como", "pero", "os", "um", "uma", "não", "com", "il", "di", "che",
    "non", "per", "sono", "della", "het", "een", "niet", "van", "zijn", "ook", "wat", "dat",
))


# Embedding models trained on English text only (the default among them): matched in the
# model's recorded name.
_ENGLISH_ONLY_MODELS = ("all-minilm-l6", "all-minilm-l12", "all-mpnet-base", "bge-small-en",
                        "bge-base-en", "gte-small", "e5-small-v2", "e5-base-v2")


def english_only(model_name: str) -> bool:
    """Whether the named embedding model is known to understand English only."""
    name = model_name.casefold()
    return any(known in name for known in _ENGLISH_ONLY_MODELS)


@dataclass(frozen=True)
class LanguageShare:
    judged: int  # texts with enough letters and words to tell
    not_english: int
    other_script: int = 0  # of those, texts mostly in letters other than Latin

    @property
    def share(self) -> float:
        return self.not_english / self.judged if self.judged else 0.0

    @property
    def notable(self) -> bool:
        """Whether a sizeable share of the judged texts is not English."""
        return self.judged > 0 and self.share >= NOTICE_SHARE


# What is not prose: code blocks, inline code, links' targets and bare addresses (a page of
# commands in Chinese has more Latin letters in its commands than Han ones in its words).
_NOT_PROSE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`|\]\([^)\s]*\)|<?https?://\S+|\{\{.*?\}\}",
                        re.DOTALL)


ENGLISH, LATIN, OTHER_SCRIPT = "english", "latin", "other script"


def judge(text: str) -> str | None:
    """ENGLISH, LATIN (another language in Latin letters), OTHER_SCRIPT (mostly Cyrillic, CJK,
    Greek, Arabic, ... letters), or None when the text is too short to tell. Its prose is
    judged: code, addresses and link targets aside."""
    text = _NOT_PROSE.sub(" ", text)
    letters = [ch for ch in text if ch.isalpha()]
    dense = sum(1 for ch in letters if _CJK.match(ch))  # a CJK character says as much as a word
    if len(letters) + (CJK_WEIGHT - 1) * dense < MIN_LETTERS:
        return None
    latin = sum(1 for ch in letters if ch < "\u0250")
    if latin < len(letters) / 2:
        return OTHER_SCRIPT
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(words) < MIN_WORDS:
        return None
    english = sum(1 for w in words if w in _ENGLISH)
    other = sum(1 for w in words if w in _OTHER_LATIN)
    if english == other == 0:
        return None  # names, code, lists: nothing to tell by
    return ENGLISH if english >= other else LATIN


def is_english(text: str) -> bool | None:
    """True, False, or None when the text is too short to tell."""
    verdict = judge(text)
    return None if verdict is None else verdict == ENGLISH


def language_share(texts: Iterable[str]) -> LanguageShare:
    verdicts = [v for v in map(judge, texts) if v is not None]
    return LanguageShare(len(verdicts), sum(1 for v in verdicts if v != ENGLISH),
                         sum(1 for v in verdicts if v == OTHER_SCRIPT))


# ---- the model `embedding_model = "auto"` chooses -------------------------------------------

#: `auto` picks the multilingual model from these shares of the sampled notes: notes mostly in
#: letters the English model does not read (Cyrillic, CJK, ...), or notes not in English at
#: all (the English model reads German or French words passably). Measured on vaults of
#: English pages with a share in another language (docs/benchmarks.md, "Choosing the model").
OTHER_SCRIPT_SHARE = 0.3
MULTILINGUAL_SHARE = 0.5
#: Fewer judged notes than this say too little: the choice is made again on the next start.
MIN_JUDGED = 20
ENGLISH_MODEL = "english"
MULTILINGUAL_MODEL = "multilingual"


@dataclass(frozen=True)
class ModelChoice:
    model: str  # ENGLISH_MODEL or MULTILINGUAL_MODEL
    reason: str
    settled: bool  # judged on enough notes to keep


def choose_model(share: LanguageShare) -> ModelChoice:
    """The bundled model for a vault whose sampled notes are `share`."""
    if share.judged == 0:
        return ModelChoice(ENGLISH_MODEL, "no note long enough to tell its language yet", False)
    settled = share.judged >= MIN_JUDGED
    scripts = share.other_script / share.judged
    seen = (f"{share.not_english} of {share.judged} notes sampled are not in English "
            f"({share.share:.0%}; {scripts:.0%} in other letters than Latin)")
    if scripts >= OTHER_SCRIPT_SHARE or share.share >= MULTILINGUAL_SHARE:
        return ModelChoice(MULTILINGUAL_MODEL, seen, settled)
    return ModelChoice(ENGLISH_MODEL, f"{seen}: below {OTHER_SCRIPT_SHARE:.0%} in other "
                       f"letters and {MULTILINGUAL_SHARE:.0%} in all", settled)
