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

    @property
    def share(self) -> float:
        return self.not_english / self.judged if self.judged else 0.0

    @property
    def notable(self) -> bool:
        """Whether a sizeable share of the judged texts is not English."""
        return self.judged > 0 and self.share >= NOTICE_SHARE


def is_english(text: str) -> bool | None:
    """True, False, or None when the text is too short to tell."""
    letters = [ch for ch in text if ch.isalpha()]
    if len(letters) < MIN_LETTERS:
        return None
    latin = sum(1 for ch in letters if ch < "\u0250")
    if latin < len(letters) / 2:
        return False
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(words) < MIN_WORDS:
        return None
    english = sum(1 for w in words if w in _ENGLISH)
    other = sum(1 for w in words if w in _OTHER_LATIN)
    if english == other == 0:
        return None  # names, code, lists: nothing to tell by
    return english >= other


def language_share(texts: Iterable[str]) -> LanguageShare:
    judged = not_english = 0
    for text in texts:
        verdict = is_english(text)
        if verdict is None:
            continue
        judged += 1
        not_english += not verdict
    return LanguageShare(judged, not_english)


# ---- the model `embedding_model = "auto"` chooses -------------------------------------------

#: From this share of judged notes not in English, `auto` picks the multilingual model: below
#: it, the English model's better speed (and its tuning) serves the vault (docs/benchmarks.md,
#: "Choosing the model").
MULTILINGUAL_SHARE = 0.2
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
    seen = f"{share.not_english} of {share.judged} notes sampled are not in English"
    if share.judged == 0:
        return ModelChoice(ENGLISH_MODEL, "no note long enough to tell its language yet", False)
    settled = share.judged >= MIN_JUDGED
    if share.share >= MULTILINGUAL_SHARE:
        return ModelChoice(MULTILINGUAL_MODEL, f"{seen} ({share.share:.0%})", settled)
    return ModelChoice(ENGLISH_MODEL, f"{seen} ({share.share:.0%}, below "
                       f"{MULTILINGUAL_SHARE:.0%})", settled)
