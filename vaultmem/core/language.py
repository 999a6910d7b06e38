"""How much of a vault is not English: the English embedding model understands English only,
so a vault largely in other languages is better served by the multilingual one.

Each text is judged by core/language_id.py (script first, then function words; code and
links aside); texts it cannot tell (a link list, a code block) are not counted. A language
written in letters other than Latin (Cyrillic, CJK, Greek, Arabic, ...) is counted apart:
the English model reads nothing of it, where it reads German or French words passably.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vaultmem.core.language_id import LATIN as LATIN_LANGUAGES
from vaultmem.core.language_id import UNKNOWN, note_language

#: The share of judged texts not in English above which `status` suggests another model.
NOTICE_SHARE = 0.2


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


ENGLISH, LATIN, OTHER_SCRIPT = "english", "latin", "other script"


def judge(text: str) -> str | None:
    """ENGLISH, LATIN (another language in Latin letters), OTHER_SCRIPT (Cyrillic, CJK,
    Greek, Arabic, ...), or None when the text does not tell (language_id.note_language)."""
    language = note_language(text)
    if language == UNKNOWN:
        return None
    if language == "en":
        return ENGLISH
    return LATIN if language in LATIN_LANGUAGES else OTHER_SCRIPT


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
