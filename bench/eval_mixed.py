"""Where `embedding_model = auto` should switch to the multilingual model: vaults that are
mostly English with a share of notes in another language, searched with each bundled model.

Each vault is the 376 tldr pages, a share of them (a fixed random choice of paths) in the other
language and the rest in English; every answerable question is asked in the language of the
page that answers it (as its writer would), judged by path. The figure per share and model is
nDCG@5 over all questions, and apart over the questions in each language.

    python -m bench.eval_mixed [--language ru] [--shares 0.05,0.1,0.2,0.35,0.5]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from bench.eval_baselines import METRICS
from bench.eval_sets import NO_ANSWER, TLDR_CORPUS, load_tldr
from bench.eval_support import CachedEmbedder, mean, table
from bench.eval_tldr import auto_choice
from bench.support import make_app
from vaultmem.config import Settings
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options

K = 10
SEED = 1


def mixed_vault(folder: Path, other: str, share: float) -> set[str]:
    """Write the mixed vault; returns the paths written in `other`."""
    english = TLDR_CORPUS / "en"
    paths = sorted(p.relative_to(english).as_posix() for p in english.rglob("*.md")
                   if not p.name.startswith("."))
    chosen = set(random.Random(SEED).sample(paths, round(share * len(paths))))
    for path in paths:
        source = TLDR_CORPUS / (other if path in chosen else "en") / path
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    return chosen


def run(other: str, shares: list[float], embedders: dict[str, CachedEmbedder]) -> None:
    english_set, other_set = load_tldr("en"), load_tldr(other)
    texts = {lang: {q.id: q.text for q in s.queries}
             for lang, s in (("en", english_set), (other, other_set))}
    questions = [q for q in english_set.queries if q.group != NO_ANSWER]
    rows = []
    for share in shares:
        with tempfile.TemporaryDirectory(prefix="vaultmem-mixed-") as tmp:
            vault = Path(tmp) / "vault"
            chosen = mixed_vault(vault, other, share)
            picked = auto_choice(vault)
            for model, embedder in embedders.items():
                app = make_app(vault, Path(tmp) / f"data-{model}", embedder)
                try:
                    app.sync.reindex()
                    app.index().optimize()
                    scores: dict[str, list[float]] = {"en": [], other: []}
                    for q in questions:
                        best = next(p for p, g in q.relevant.items() if g == 2)
                        language = other if best in chosen else "en"
                        found = app.search.search(texts[language][q.id], _now(), top_k=K,
                                                  include_review=False)
                        ranking = [h.path for h in found.hits]
                        scores[language].append(METRICS["nDCG@5"](ranking, q.relevant))
                finally:
                    app.close()
                    embedder.save()
                mark = " (auto)" if model == picked else ""
                rows.append((f"{share:.0%} {other}, {model}{mark}", {
                    "all": mean(scores["en"] + scores[other]),
                    "questions in en": mean(scores["en"]),
                    f"questions in {other}": mean(scores[other]),
                    f"{other} questions": float(len(scores[other])),
                }))
    for line in table(rows, ["all", "questions in en", f"questions in {other}"], scale=1.0,
                      digits=3):
        print("  " + line)


def _now() -> object:
    from bench.eval import NOW

    return NOW


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--language", default="ru")
    parser.add_argument("--shares", default="0.05,0.1,0.2,0.35,0.5")
    parser.add_argument("--cache", type=Path, default=Path("bench-out/eval-cache"))
    args = parser.parse_args()
    options = embedder_options(Settings())
    embedders = {}
    for model in ("english", "multilingual"):
        real = make_embedder(model, options)
        embedders[model] = CachedEmbedder(real, args.cache / getattr(real, "runtime", "other"))
    print(f"mixed vaults: English tldr pages with a share in {args.language}; nDCG@5")
    run(args.language, [float(s) for s in args.shares.split(",")], embedders)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
