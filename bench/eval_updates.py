"""The update detector's precision and recall on the judged pairs, and search's preference.

Run with `HF_HUB_OFFLINE=1 .venv/bin/python -m bench.eval_updates [--verbose]` (offline, the
real model). Each judged pair of tests/data/updates/pairs.json goes through the path users hit, in a
fresh temporary vault: `save` the old text, then `save` the new one (Api.call, as the socket
does), and read `possible_update_of` from the answer. Pairs labelled `update` should be
proposed; `paraphrase` (the same fact said again) and `unrelated` (another fact sharing a
number) should not. Precision and recall are printed at the default threshold (update_cosine)
and, beside it, at other thresholds from the same cosines (a baseline: "any value differs",
without the cosine).

Then, for every `update` pair saved with `supersedes` (explicitly, so the check does not
depend on the detector's recall), a search for the old fact must list the successor above the
superseded memory and mark the latter with `superseded_by`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.support import machine_lines, make_app
from vaultmem.config import Settings
from vaultmem.core.update_rule import value_change
from vaultmem.index.base import Embedder
from vaultmem.index.embedders import make_embedder

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "updates" / "pairs.json"
NOW = datetime(2026, 10, 20, 10, 0, tzinfo=UTC)


def run_pair(pair: dict[str, str], embedder: Embedder, root: Path, *, link: bool
             ) -> dict[str, Any]:
    vault = root / "vault"
    (vault / "memories").mkdir(parents=True)
    app = make_app(vault, root / "data", embedder)
    try:
        app.sync.reindex()
        old = app.api(clock=lambda: NOW).call("save", {"content": pair["old"]})["memory"]
        body: dict[str, Any] = {"content": pair["new"]}
        if link:
            body["supersedes"] = old["id"]
        later = app.api(clock=lambda: NOW + timedelta(days=1))
        saved = later.call("save", body)
        result: dict[str, Any] = {"saved": saved, "old": old}
        if link:
            for _ in range(3):  # the stale fact kept being used: without the rule it ranks first
                later.call("touch", {"id": old["id"]})
            hits = later.call("search", {"query": pair["old"]})["results"]
            ids = [hit["id"] for hit in hits]
            new_id = saved["memory"]["id"]
            result["successor_first"] = (new_id in ids and old["id"] in ids
                                         and ids.index(new_id) < ids.index(old["id"]))
            result["marked"] = any(hit["id"] == old["id"] and hit["superseded_by"]
                                   and hit["superseded_by"]["id"] == new_id for hit in hits)
        return result
    finally:
        app.close()


def pair_cosine(pair: dict[str, str], embedder: Embedder) -> float:
    return float(embedder.embed([pair["old"]])[0] @ embedder.embed_query(pair["new"]))


def scores(predicted: list[bool], truth: list[bool]) -> tuple[float, float, int, int, int]:
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    fp = sum(p and not t for p, t in zip(predicted, truth, strict=True))
    fn = sum(t and not p for p, t in zip(predicted, truth, strict=True))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, tp, fp, fn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="default", help="embedding model (default: bundled)")
    parser.add_argument("--verbose", action="store_true", help="every pair's outcome")
    args = parser.parse_args()
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))
    embedder = make_embedder(args.model)
    threshold = Settings().update_cosine
    truth = [pair["kind"] == "update" for pair in pairs]
    proposed, cosines, search_ok, marked = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="vaultmem-updates-") as tmp:
        for n, pair in enumerate(pairs):
            got = run_pair(pair, embedder, Path(tmp) / f"p{n}", link=False)
            update = got["saved"]["possible_update_of"]
            proposed.append(update is not None and update["id"] == got["old"]["id"])
            cosines.append(pair_cosine(pair, embedder))
            if args.verbose:
                mark = "+" if proposed[-1] == truth[n] else "x"
                why = update["reason"] if update else "-"
                print(f"{mark} {pair['kind']:10} cos {cosines[-1]:.3f}  {why}  | {pair['new']}")
            if pair["kind"] == "update":
                linked = run_pair(pair, embedder, Path(tmp) / f"l{n}", link=True)
                search_ok.append(linked["successor_first"])
                marked.append(linked["marked"])
    print("\n".join(machine_lines()))
    kinds = {kind: sum(p["kind"] == kind for p in pairs) for kind in ("update", "paraphrase",
                                                                       "unrelated")}
    print(f"judged pairs: {len(pairs)} ({', '.join(f'{v} {k}' for k, v in kinds.items())})")
    p, r, tp, fp, fn = scores(proposed, truth)
    print(f"detector through save, update_cosine {threshold:g} (default): precision {p:.3f} "
          f"recall {r:.3f} (tp {tp}, fp {fp}, fn {fn})")
    print("same cosines, other thresholds (the text rule applied to the pair alone):")
    print("  threshold  precision  recall")
    rule = [value_change(pair["old"], pair["new"]) is not None for pair in pairs]
    for cut in (0.0, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        predicted = [ok and cos >= cut for ok, cos in zip(rule, cosines, strict=True)]
        p, r, *_ = scores(predicted, truth)
        label = "  (no cosine: any value differs)" if cut == 0.0 else ""
        print(f"  {cut:9.2f}  {p:9.3f}  {r:6.3f}{label}")
    print(f"search for the old fact, successor listed above the superseded memory: "
          f"{sum(search_ok)}/{len(search_ok)}; superseded one marked: "
          f"{sum(marked)}/{len(marked)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
