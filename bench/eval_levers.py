"""Ranking levers measured on the retrieval sets of scripts/eval, without changing the product.

For each query it runs the search path's retrieval (`vector_search` 400, `text_search` 150, the
folder filter) and `rank_notes` as `Search.search` does, then the same with one lever applied
(a second retrieval round, sub-queries, query wording, link-graph PageRank, a ranking constant,
short property values as names),
and prints R@10 (LoCoMo) or nDCG@5 (the vault set) for dev and held-out apart. The unchanged
ranking ("base") reproduces scripts/eval's figures. Embeddings come from scripts/eval's cache.

    .venv/bin/python -m bench.eval_levers dated|plain|folders|vault [lever,lever,...]
"""
from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

import vaultmem.core.ranking as R
from bench.eval import NOW
from bench.eval_baselines import METRICS
from bench.eval_sets import build_locomo, load_vok, read_notes
from bench.eval_support import CachedEmbedder, mean
from bench.support import make_app
from vaultmem.config import Settings
from vaultmem.core.words import STOP_WORDS, content_words
from vaultmem.engine.filters import SearchFilters
from vaultmem.engine.search_context import query_context
from vaultmem.errors import NoteError
from vaultmem.index.embedders import make_embedder
from vaultmem.settings_params import embedder_options
from vaultmem.vault.notes import parse_note


class Bits:
    def __init__(self, app, emb):
        self.app, self.emb = app, emb
        self.index = app.index()
        self.catalog = app.catalog
        self._allowed = {}
        self._memo = {}

    def allowed(self, folder):
        if folder not in self._allowed:
            f = SearchFilters(folder=folder) if folder else SearchFilters()
            self._allowed[folder] = (self.app.search.filters.allowed(
                f, NOW, self.app.store.iter_memories) if f.narrows else None)
        return self._allowed[folder]

    def retrieve(self, text, folder, vector=None):
        allowed = self.allowed(folder)
        qv = self.emb.embed_query(text) if vector is None else vector
        vh = self.index.vector_search(qv, 400, paths=allowed)
        th = self.index.text_search(text, 150, paths=allowed)
        return vh, th

    def rank(self, text, folder, vector=None, text_for_words=None):
        key = (text, folder, text_for_words)
        if vector is None and key in self._memo and not getattr(self, "nomemo", False):
            return self._memo[key]
        out = self._rank(text, folder, vector, text_for_words)
        if vector is None:
            self._memo[key] = out
        return out

    def _rank(self, text, folder, vector=None, text_for_words=None):
        vh, th = self.retrieve(text_for_words or text, folder, vector)
        if vector is not None:
            vh = self.index.vector_search(vector, 400, paths=self.allowed(folder))
        sig = R.note_signals(vh, th)
        ctx = query_context(self.catalog, text, sig)
        ms = R.rank_notes(sig, ctx, limit=50)
        return ms, sig


def order(rel):
    return [p for p, _ in sorted(rel.items(), key=lambda kv: (-round(kv[1], 6), kv[0]))]


def rel_of(ms):
    return {m.path: m.relevance for m in ms}


def merge(a, b, w):
    top_a = max(a.values(), default=1.0) or 1.0
    top_b = max(b.values(), default=1.0) or 1.0
    return {p: a.get(p, 0.0) / top_a + w * b.get(p, 0.0) / top_b for p in set(a) | set(b)}


_CAP = re.compile(r"\b[A-Z][a-zA-Z]+\b")


def lever_base(bits, q):
    ms, _ = bits.rank(q.text, q.folder)
    return order(rel_of(ms))


def lever_prf_words(w, k=3, n=5):
    def run(bits, q):
        ms, sig = bits.rank(q.text, q.folder)
        qs = set(content_words(q.text))
        counts = Counter()
        for m in ms[:k]:
            counts.update(set(content_words(sig[m.path].best.text)) - qs)
        terms = ([t for t, c in counts.most_common(n) if c >= 2]
                 or [t for t, _ in counts.most_common(2)])
        if not terms:
            return order(rel_of(ms))
        ms2, _ = bits.rank(q.text, q.folder, text_for_words=q.text + " " + " ".join(terms))
        return order(merge(rel_of(ms), rel_of(ms2), w))
    return run


def lever_entities(w, k=3):
    def run(bits, q):
        ms, sig = bits.rank(q.text, q.folder)
        qwords = {x.lower() for x in re.findall(r"\w+", q.text)}
        ents = []
        for m in ms[:k]:
            for e in _CAP.findall(sig[m.path].best.text):
                if e.lower() not in qwords and e.lower() not in STOP_WORDS and e not in ents:
                    ents.append(e)
        if not ents:
            return order(rel_of(ms))
        text2 = q.text + " " + " ".join(ents[:4])
        ms2, _ = bits.rank(text2, q.folder)
        return order(merge(rel_of(ms), rel_of(ms2), w))
    return run


def lever_rocchio(alpha, w, k=3):
    def run(bits, q):
        ms, _ = bits.rank(q.text, q.folder)
        tops = [m.path for m in ms[:k]]
        vecs = bits.index.note_vectors(tops)
        if not vecs:
            return order(rel_of(ms))
        qv = bits.emb.embed_query(q.text)
        v = qv + alpha * np.mean([vecs[p] for p in tops if p in vecs], axis=0)
        v = (v / np.linalg.norm(v)).astype(np.float32)
        ms2, _ = bits.rank(q.text, q.folder, vector=v)
        return order(merge(rel_of(ms), rel_of(ms2), w)) if w is not None else order(rel_of(ms2))
    return run


_SPLIT = re.compile(r",\s*|\s+and\s+|\s+or\s+|\s+as well as\s+", re.I)


def lever_subqueries(w):
    def run(bits, q):
        ms, _ = bits.rank(q.text, q.folder)
        parts = [p for p in _SPLIT.split(q.text.rstrip("?")) if len(content_words(p)) >= 1]
        rel = rel_of(ms)
        if len(parts) < 2:
            return order(rel)
        # the subject words (names) of the query go with every part
        names = [e for e in _CAP.findall(q.text)[1:]]
        combined = {p: v for p, v in rel.items()}
        top = max(rel.values(), default=1.0) or 1.0
        combined = {p: v / top for p, v in rel.items()}
        for part in parts:
            text = part if all(n in part for n in names) else part + " " + " ".join(names)
            r2 = rel_of(bits.rank(text, q.folder)[0])
            t2 = max(r2.values(), default=1.0) or 1.0
            for p, v in r2.items():
                combined[p] = combined.get(p, 0.0) + w * v / t2
        return order(combined)
    return run


_LEAD = re.compile(
    r"^\s*(how (do|can|should|would) (i|we|you|one|people)|how to|what is the (best )?way to|"
    r"what('s| is) (a|the) way to|is there a way to|what (software|tool|tools) do i need to|"
    r"why do|why does|why can)\s+", re.I)


def lever_normalise(w):
    def run(bits, q):
        ms, _ = bits.rank(q.text, q.folder)
        stripped = _LEAD.sub("", q.text)
        if stripped == q.text:
            return order(rel_of(ms))
        if w is None:
            return order(rel_of(bits.rank(stripped, q.folder)[0]))
        ms2, _ = bits.rank(stripped, q.folder)
        return order(merge(rel_of(ms), rel_of(ms2), w))
    return run


def lever_const(name, value):
    def run(bits, q):
        old = getattr(R, name)
        setattr(R, name, value)
        bits.nomemo = True
        try:
            return order(rel_of(bits._rank(q.text, q.folder)[0]))
        finally:
            setattr(R, name, old)
            bits.nomemo = False
    return run


def property_values(vault):
    """Each note's short textual property values, as the indexer reads them."""
    out = {}
    for file in vault.rglob("*.md"):
        rel = file.relative_to(vault).as_posix()
        try:
            out[rel] = parse_note(rel, file.read_bytes()).properties
        except NoteError:
            continue
    return out


def lever_props(props):
    """Short property values added to each candidate's names. The index has held them among a
    note's other names since they were kept (docs/benchmarks.md, ranking change 4), so on the
    current code this lever changes nothing; it measured that change beside the code before."""
    def run(bits, q):
        vh, th = bits.retrieve(q.text, q.folder)
        sig = R.note_signals(vh, th)
        ctx = query_context(bits.catalog, q.text, sig)
        names = {p: (*ctx.names.get(p, ()), *props.get(p, ())) for p in sig}
        ctx = replace(ctx, names=names)
        return order(rel_of(R.rank_notes(sig, ctx, limit=50)))
    return run


def links_graph(notes):
    stems = {}
    for p in notes:
        stems.setdefault(Path(p).stem.lower(), p)
    out = {}
    for p, t in notes.items():
        targets = set()
        for m in re.findall(r"\[\[([^\]|#]+)", t):
            tp = stems.get(Path(m.strip()).name.lower())
            if tp and tp != p:
                targets.add(tp)
        out[p] = targets
    both = {p: set(v) for p, v in out.items()}
    for p, v in out.items():
        for t in v:
            both.setdefault(t, set()).add(p)
    return both


def lever_ppr(graph, beta, alpha=0.5, iters=3, seeds=10):
    def run(bits, q):
        ms, _ = bits.rank(q.text, q.folder)
        rel = rel_of(ms)
        seed = dict(sorted(rel.items(), key=lambda kv: -kv[1])[:seeds])
        total = sum(seed.values()) or 1.0
        s = {p: v / total for p, v in seed.items()}
        x = dict(s)
        for _ in range(iters):
            nx = {p: (1 - alpha) * v for p, v in s.items()}
            for p, v in x.items():
                nb = graph.get(p, ())
                for t in nb:
                    nx[t] = nx.get(t, 0.0) + alpha * v / len(nb)
            x = nx
        top = max(rel.values(), default=1.0) or 1.0
        xm = max(x.values(), default=1.0) or 1.0
        # only candidates are re-ordered (the search path ranks what retrieval found)
        return order({p: v / top + beta * x.get(p, 0.0) / xm for p, v in rel.items()})
    return run


def score(bits, queries, lever):
    rows = []
    for q in queries:
        ranking = lever(bits, q)[:10]
        rows.append((q, {m: METRICS[m](ranking, q.relevant) for m in ("R@10", "nDCG@5")}))
    return rows


def summary(rows, metric, groups=("multi-hop",)):
    out = {}
    for split in ("dev", "held-out"):
        sel = [(q, s) for q, s in rows if q.split == split]
        out[split] = mean(s[metric] for _, s in sel)
        for g in groups:
            out[f"{split} {g}"] = mean(s[metric] for q, s in sel if q.group == g)
    return out


def main():
    which = sys.argv[1]
    levers_arg = sys.argv[2] if len(sys.argv) > 2 else "all"
    settings = replace(Settings(), embedding_runtime="onnx")
    real = make_embedder("default", embedder_options(settings))
    emb = CachedEmbedder(real, Path("bench-out/eval-cache") / real.runtime)
    with tempfile.TemporaryDirectory(prefix="levers-") as tmp:
        work = Path(tmp)
        if which == "vault":
            data = load_vok()
            graph = links_graph(read_notes(data.vault))
            metric, groups = "nDCG@5", ("conceptual", "multi")
        else:
            data = build_locomo(work / "v", layout=which)
            graph = {}
            metric, groups = "R@10", ("multi-hop", "open-domain")
        app = make_app(data.vault, work / "d", emb)
        try:
            app.sync.reindex()
            bits = Bits(app, emb)
            levers = {
                "base": lever_base,
                "prf-words 0.3": lever_prf_words(0.3),
                "prf-words 0.6": lever_prf_words(0.6),
                "entities 0.3": lever_entities(0.3),
                "entities 0.6": lever_entities(0.6),
                "rocchio a0.5 w0.5": lever_rocchio(0.5, 0.5),
                "rocchio a1 w0.3": lever_rocchio(1.0, 0.3),
                "subqueries 0.3": lever_subqueries(0.3),
                "subqueries 0.6": lever_subqueries(0.6),
                "normalise replace": lever_normalise(None),
                "normalise 0.5": lever_normalise(0.5),
                "NAME_BOOST 0.5": lever_const("NAME_BOOST", 0.5),
                "NAME_BOOST 0.15": lever_const("NAME_BOOST", 0.15),
                "NAME_BOOST 0": lever_const("NAME_BOOST", 0.0),
                "THREAD_SHARE 0": lever_const("THREAD_SHARE", 0.0),
            }
            props = property_values(data.vault)
            levers["props names"] = lever_props(props)
            if graph:
                levers["ppr 0.1"] = lever_ppr(graph, 0.1)
                levers["ppr 0.3"] = lever_ppr(graph, 0.3)
            if levers_arg != "all":
                wanted = levers_arg.split(",")
                levers = {k: v for k, v in levers.items()
                          if k == "base" or k.split()[0] in wanted}
            for name, lever in levers.items():
                s = summary(score(bits, data.queries, lever), metric, groups)
                scale = 100 if metric == "R@10" else 1
                cells = "  ".join(f"{k} {v * scale:.3f}" for k, v in s.items())
                print(f"{which:8s} {name:20s} {cells}", flush=True)
        finally:
            app.close()
            emb.save()


if __name__ == "__main__":
    main()
