"""The same-run baselines of scripts/eval and the retrieval metrics.

Every baseline ranks whole notes of the searched scope (a folder, or the vault):

* `bm25`: textbook Okapi BM25 (k1 1.2, b 0.75) over the note's title and text, lower-cased
  `\\w+` tokens (a run of Chinese, Japanese or Korean characters as its two-character words,
  the usual way to index text without spaces), no stemming or stop words;
* `dense-note`: cosine of the query to one embedding of the whole note (title + text, cut by the
  model at its input limit);
* `dense-chunk`: the best cosine among the note's indexed chunks (vaultmem's own vectors);
* `fusion`: 0.5 · min-max(bm25) + 0.5 · min-max(dense-note) over the scope, the naive hybrid.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)
_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+")

Ranking = list[str]
Scores = dict[str, float]


def tokens(text: str) -> list[str]:
    words = _TOKEN.findall(text.lower())
    if text.isascii():
        return words
    out: list[str] = []
    for word in words:
        for piece in re.split(f"({_CJK_RUN.pattern})", word):
            if not piece:
                continue
            if len(piece) > 1 and _CJK_RUN.fullmatch(piece):
                out.extend(piece[i: i + 2] for i in range(len(piece) - 1))
            else:
                out.append(piece)
    return out


class BM25:
    def __init__(self, docs: Mapping[str, str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.paths = list(docs)
        self.tf = [Counter(tokens(docs[p])) for p in self.paths]
        self.lengths = [sum(tf.values()) for tf in self.tf]
        self.df: Counter[str] = Counter()
        for tf in self.tf:
            self.df.update(tf.keys())
        self.n = len(self.paths)

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query: str, scope: Sequence[str] | None = None) -> Scores:
        wanted = set(scope) if scope is not None else None
        terms = tokens(query)
        avg = sum(self.lengths) / max(self.n, 1)
        out: Scores = {}
        for row, path in enumerate(self.paths):
            if wanted is not None and path not in wanted:
                continue
            tf, length = self.tf[row], self.lengths[row]
            total = 0.0
            for term in terms:
                f = tf.get(term, 0)
                if f:
                    norm = f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / avg))
                    total += self.idf(term) * norm
            out[path] = total
        return out


def dense_scores(query_vector: np.ndarray, note_vectors: Mapping[str, np.ndarray],
                 scope: Sequence[str] | None = None) -> Scores:
    paths = list(scope) if scope is not None else list(note_vectors)
    paths = [p for p in paths if p in note_vectors]
    if not paths:
        return {}
    matrix = np.stack([note_vectors[p] for p in paths])
    sims = matrix @ query_vector
    return {p: float(s) for p, s in zip(paths, sims, strict=True)}


def minmax(scores: Scores) -> Scores:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {p: (s - low) / span if span > 0 else 0.0 for p, s in scores.items()}


def fusion(first: Scores, second: Scores, weight: float = 0.5) -> Scores:
    a, b = minmax(first), minmax(second)
    return {p: weight * a.get(p, 0.0) + (1 - weight) * b.get(p, 0.0) for p in set(a) | set(b)}


def top(scores: Scores, k: int) -> Ranking:
    return [p for p, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]]


# ---- metrics ------------------------------------------------------------------------------


def recall_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    wanted = [p for p, g in relevant.items() if g > 0]
    if not wanted:
        return 0.0
    found = set(ranking[:k])
    return sum(1 for p in wanted if p in found) / len(wanted)


def ndcg_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    def gain(grade: int) -> float:
        return float(2**grade - 1)

    dcg = sum(gain(relevant.get(p, 0)) / math.log2(i + 2) for i, p in enumerate(ranking[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def reciprocal_rank(ranking: Sequence[str], relevant: Mapping[str, int]) -> float:
    for i, p in enumerate(ranking):
        if relevant.get(p, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


METRICS: dict[str, Callable[[Sequence[str], Mapping[str, int]], float]] = {
    "R@1": lambda r, rel: recall_at(r, rel, 1),
    "R@3": lambda r, rel: recall_at(r, rel, 3),
    "R@5": lambda r, rel: recall_at(r, rel, 5),
    "R@10": lambda r, rel: recall_at(r, rel, 10),
    "nDCG@5": lambda r, rel: ndcg_at(r, rel, 5),
    "MRR": lambda r, rel: reciprocal_rank(r[:10], rel),
}
