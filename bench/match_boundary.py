"""Where a "real match" begins: the judged tldr questions' best relevance at the match threshold.

`matched` (and `--matched-only`) was relevance >= MATCH_THRESHOLD (0.5): a question with no answer
in the vault that scored exactly 0.5 passed. This measures, per language and over all eight
(the default configuration: the model `auto` picks), how many no-answer and answerable questions
have their best result at exactly the threshold, and the two boundaries' honesty:
inclusive (>= 0.5) and exclusive (> 0.5).

    .venv/bin/python -m bench.match_boundary [--language en ...]
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.eval_sets import NO_ANSWER, TLDR_LANGUAGES, load_tldr
from bench.eval_support import CachedEmbedder
from bench.eval_tldr import _vaultmem, auto_choice
from bench.support import machine_lines, make_app
from vaultmem.config import Settings
from vaultmem.core.ranking import MATCH_THRESHOLD
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
AT = 1e-9  # "exactly at the threshold"


def best_relevances(language: str, embedders: dict[str, CachedEmbedder],
                    work: Path) -> list[tuple[bool, float]]:
    """(has an answer, best relevance) per question of one language, default configuration."""
    data = load_tldr(language)
    model = auto_choice(data.vault)
    app = make_app(data.vault, work / f"tldr-{language}", embedders[model])
    try:
        app.sync.reindex()
        app.index().optimize()
        answers = _vaultmem(app, data.queries, NOW)
    finally:
        app.close()
        embedders[model].save()
    return [(q.group != NO_ANSWER, answers.best_relevance.get(q.id, 0.0)) for q in data.queries]


def summary(rows: list[tuple[bool, float]], threshold: float = MATCH_THRESHOLD) -> str:
    empty = [r for answerable, r in rows if not answerable]
    answerable = [r for has, r in rows if has]
    at_empty = sum(1 for r in empty if abs(r - threshold) <= AT)
    at_answer = sum(1 for r in answerable if abs(r - threshold) <= AT)

    def share(values: list[float], test: object) -> str:
        hits = sum(1 for r in values if test(r))  # type: ignore[operator]
        return f"{100 * hits / max(len(values), 1):5.1f} %"

    inclusive = (share(empty, lambda r: r < threshold - AT),
                 share(answerable, lambda r: r >= threshold - AT))
    exclusive = (share(empty, lambda r: r <= threshold + AT),
                 share(answerable, lambda r: r > threshold + AT))
    return (f"no-answer {len(empty):3d}, answerable {len(answerable):3d}; exactly at "
            f"{threshold}: {at_empty} no-answer, {at_answer} answerable | >= : no-answer "
            f"refused {inclusive[0]}, answerable matched {inclusive[1]} | > : no-answer refused "
            f"{exclusive[0]}, answerable matched {exclusive[1]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", action="append", choices=TLDR_LANGUAGES)
    parser.add_argument("--cache", type=Path, default=Path("bench-out/eval-cache"))
    args = parser.parse_args(argv)
    embedders = {}
    for model in ("english", "multilingual"):
        real = make_embedder(model, embedder_options(Settings()))
        embedders[model] = CachedEmbedder(real, args.cache / getattr(real, "runtime", "other"))
    for line in machine_lines():
        print(line)
    everything: list[tuple[bool, float]] = []
    with tempfile.TemporaryDirectory() as work:
        for language in args.language or TLDR_LANGUAGES:
            rows = best_relevances(language, embedders, Path(work))
            everything += rows
            print(f"{language}: {summary(rows)}", flush=True)
    print(f"all: {summary(everything)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
