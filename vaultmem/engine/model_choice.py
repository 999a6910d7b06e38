"""Which bundled model `embedding_model = "auto"` serves a vault with, and how much of a vault
is not English (also `status`'s languages).

The notes are sampled, not all read: up to LANGUAGE_SAMPLE notes spread evenly over the vault's
paths, the first LANGUAGE_CHARS characters of each body; `core.language` judges them and picks
the model. The first index records the choice beside the index (index/identity.py), so every
later start, and every process using that index, serves the same model without sampling again;
deleting the index (or `vaultmem reindex --choose-model`) chooses again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.language import LanguageShare, ModelChoice, choose_model, language_share
from vaultmem.errors import NoteError, NotFound
from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.notes import read_raw_note
from vaultmem.vault.scan import scan_vault


@dataclass(frozen=True)
class ModelInUse:
    """The embedding model a vault is served with: the setting, what it resolved to, why."""

    setting: str
    model: str
    reason: str


LANGUAGE_SAMPLE = 300  # notes read to tell how much of the vault is not English
LANGUAGE_CHARS = 4000  # of each


def sample_languages(root: Path, paths: Sequence[str]) -> LanguageShare:
    """How much of a sample of `paths` (sorted, evenly spread) is not English."""
    ordered = sorted(paths)
    texts = []
    for path in ordered[:: max(1, len(ordered) // LANGUAGE_SAMPLE)][:LANGUAGE_SAMPLE]:
        try:
            # the body only: parsing the Markdown would cost ~0.7 ms per KB, for nothing
            texts.append(read_raw_note(root, path).body()[:LANGUAGE_CHARS])
        except (NoteError, NotFound, OSError):
            continue  # gone or unreadable since it was listed: judged next time
    return language_share(texts)


def choose_for_vault(root: Path, rules: IgnoreRules) -> tuple[ModelChoice, LanguageShare]:
    """Scan the vault (stat only), sample its notes and choose the model."""
    try:
        paths = list(scan_vault(root, rules).files)
    except NotFound:
        paths = []
    share = sample_languages(root, paths)
    return choose_model(share), share
