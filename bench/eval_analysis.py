"""Full text that knows the language: BM25 alone over the multilingual documentation vault,
each language's notes analysed as before (English analysis, CJK bigrams) and as their own
language analyses them (index/analysis.py), in one run; and the note language judge.

    python -m bench.eval_analysis [--langs ru,zh] [--segmenters] [--judged FILE]

* `desc`: a page's first description line asks for that page (a known item: the line is on
  the page).
* `held-out`: the first example's description is taken off its page before indexing and asks
  for it: the page says the same in other forms of the same words (`Создать архив` asked,
  `сжатый архив ... архива` indexed), which is what stemming is for.
* `--judged FILE`: a judged query set over the same vault (JSON: queries with a text per
  language, relevant paths and a split); only its `dev` split is run.
* `--segmenters`: Chinese and Japanese cut by each segmenter against bigrams, Korean with its
  particles cut; each library's load time and memory in a fresh process.

The ranking is the notes' best chunk score from `LanceIndex.text_search`: BM25 only, no model
(vectors are FakeEmbedder's), so it measures the analysis alone.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.eval_baselines import ndcg_at
from bench.support import machine_lines
from vaultmem.config import Settings
from vaultmem.core.chunking import note_chunks
from vaultmem.core.language_id import note_language
from vaultmem.index import analysis
from vaultmem.index.base import ChunkRecord, NoteRecord, chunk_id_for
from vaultmem.index.embedders import FakeEmbedder
from vaultmem.index.lance import LanceIndex
from vaultmem.settings_params import index_options

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "tldr-multilingual"
LANGS = ("en", "ru", "zh", "de", "fr", "es", "ja", "ko")
EMBEDDER = FakeEmbedder(16)
POOL = 150
#: The segmentations compared per language (`analysis.SEGMENTERS` values).
SEGMENTATIONS = {
    "zh": ("bigram", "jieba", "jieba+bigram"),
    "ja": ("bigram", "fugashi", "fugashi+bigram", "janome", "sudachi"),
    "ko": ("bigram", "bigram+strip", "strip"),
}
_EXAMPLE = re.compile(r"^- (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Query:
    text: str
    relevant: frozenset[str]
    grades: Mapping[str, int] | None = None  # graded judgments (nDCG), else 1 each


def pages(lang: str) -> dict[str, str]:
    root = CORPUS / lang
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))}


def description(text: str) -> str:
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("> ")), "")


def held_out(docs: Mapping[str, str]) -> tuple[dict[str, str], list[Query]]:
    """The pages less their first example's description, and those descriptions as queries."""
    kept, queries = {}, []
    for path, text in docs.items():
        found = _EXAMPLE.search(text)
        if found is None:
            kept[path] = text
            continue
        kept[path] = text[: found.start()] + text[found.end():]
        queries.append(Query(found.group(1).rstrip(":： "), frozenset({path})))
    return kept, queries


# ---- one index, BM25 only ---------------------------------------------------------------------


def _records(docs: Mapping[str, str], judge: bool) -> list[tuple[NoteRecord, list[ChunkRecord]]]:
    out = []
    for path, text in docs.items():
        title = path.rsplit("/", 1)[-1].removesuffix(".md")
        chunks = note_chunks(text, title, max_chars=1000, min_chars=200)
        vectors = EMBEDDER.embed([c.text for c in chunks])
        records = [ChunkRecord(chunk_id_for(path, c.index), path, c.index, c.heading, c.text,
                               vectors[i]) for i, c in enumerate(chunks)]
        note = NoteRecord(path=path, file_hash="", body_hash="", title=title, tags=(),
                          aliases=(), links=(), note_id="", status="indexed", reason="",
                          mtime_ns=0, size=len(text), chunk_count=len(records),
                          language=note_language(text) if judge else "")
        out.append((note, records))
    return out


@dataclass(frozen=True)
class Built:
    index: LanceIndex
    languages: frozenset[str]
    seconds: float  # writing the rows (the analysis included) and the full-text indexes


@contextmanager
def built(docs: Mapping[str, str], judge: bool) -> Iterator[Built]:
    notes = _records(docs, judge)
    with tempfile.TemporaryDirectory(prefix="vaultmem-analysis-") as tmp:
        start = time.perf_counter()
        index = LanceIndex(Path(tmp) / "index", EMBEDDER.name, index_options(Settings()))
        index.apply(upserts=notes)
        index.ensure_fts_index()
        seconds = time.perf_counter() - start
        try:
            yield Built(index, frozenset(n.language for n, _ in notes), seconds)
        finally:
            index.close()


def ranking(index: Built, query: str) -> list[str]:
    best: dict[str, float] = {}
    for hit in index.index.text_search(query, POOL, languages=index.languages):
        best[hit.path] = max(best.get(hit.path, 0.0), hit.score)
    return sorted(best, key=lambda p: (-best[p], p))


def scores(index: Built, queries: Sequence[Query]) -> dict[str, float]:
    rr, at1, at5, ndcg = [], [], [], []
    for query in queries:
        ranked = ranking(index, query.text)
        ranks = [i for i, p in enumerate(ranked) if p in query.relevant]
        first = ranks[0] + 1 if ranks else 0
        rr.append(1 / first if first else 0.0)
        at1.append(float(first == 1))
        at5.append(float(0 < first <= 5))
        ndcg.append(ndcg_at(ranked, query.grades or dict.fromkeys(query.relevant, 1), 5))
    return {"nDCG@5": statistics.fmean(ndcg), "MRR": statistics.fmean(rr),
            "R@1": statistics.fmean(at1), "R@5": statistics.fmean(at5)}


def _load_jieba() -> Callable[[str], Iterable[str]]:
    import rjieba

    return rjieba.cut  # type: ignore[no-any-return]


def _load_fugashi() -> Callable[[str], Iterable[str]]:
    import fugashi

    tagger = fugashi.Tagger()
    return lambda text: [word.surface for word in tagger(text)]


def _load_janome() -> Callable[[str], Iterable[str]]:
    from janome.tokenizer import Tokenizer

    tokenizer = Tokenizer(wakati=True)
    return lambda text: list(tokenizer.tokenize(text))


def _load_sudachi() -> Callable[[str], Iterable[str]]:
    from sudachipy import Dictionary, SplitMode

    tokenizer = Dictionary().create()
    return lambda text: [m.surface() for m in tokenizer.tokenize(text, SplitMode.A)]


#: The segmenters measured (not installed with vaultmem: `pip install rjieba fugashi
#: unidic-lite janome sudachipy sudachidict-core` first).
MEASURED_SEGMENTERS = {"jieba": _load_jieba, "fugashi": _load_fugashi,
                       "janome": _load_janome, "sudachi": _load_sudachi}


@contextmanager
def segmentation(lang: str, method: str) -> Iterator[None]:
    analysis.SEGMENTER_LOADERS.update(MEASURED_SEGMENTERS)
    before = analysis.SEGMENTERS.get(lang)
    analysis.SEGMENTERS[lang] = method
    try:
        yield
    finally:
        if before is None:
            analysis.SEGMENTERS.pop(lang, None)
        else:
            analysis.SEGMENTERS[lang] = before


# ---- the comparisons --------------------------------------------------------------------------


QuerySet = tuple[dict[str, str], list[Query]]


def query_sets(lang: str, judged: dict[str, list[Query]]) -> dict[str, QuerySet]:
    docs = pages(lang)
    sets = {"desc": (docs, [Query(description(t), frozenset({p})) for p, t in docs.items()
                            if description(t)]),
            "held-out": held_out(docs)}
    if lang in judged:
        sets["judged dev"] = (docs, judged[lang])
    return sets


def compare(lang: str, variants: Sequence[tuple[str, bool, str | None]],
            judged: dict[str, list[Query]]) -> list[str]:
    """Rows of the table: (name, judged languages, segmentation) per variant and set."""
    rows = []
    for set_name, (docs, queries) in query_sets(lang, judged).items():
        for name, judge, method in variants:
            chosen = segmentation(lang, method) if method else _nothing()
            with chosen, built(docs, judge) as index:
                result = scores(index, queries)
            cells = " | ".join(f"{result[m]:.3f}" for m in ("nDCG@5", "MRR", "R@1", "R@5"))
            rows.append(f"| {lang} | {set_name} ({len(queries)}) | {name} | {cells} | "
                        f"{index.seconds:.2f} |")
    return rows


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def language_table(langs: Sequence[str]) -> list[str]:
    rows = ["| language | pages right | lines right | lines unknown | ms per page |",
            "|---|---|---|---|---|"]
    for lang in langs:
        docs = list(pages(lang).values())
        start = time.perf_counter()
        judged = Counter(note_language(t) for t in docs)
        per_page = (time.perf_counter() - start) / len(docs) * 1000
        lines = Counter(note_language(description(t)) for t in docs)
        rows.append(f"| {lang} | {judged[lang] / len(docs):.3f} | {lines[lang] / len(docs):.3f} "
                    f"| {lines[''] / len(docs):.3f} | {per_page:.2f} |")
    return rows


_ZH, _JA = "'将压缩的存档文件提取到当前目录中'", "'圧縮されたファイルを展開する'"
_LOADERS = {
    "PyStemmer (russian)": "import Stemmer; Stemmer.Stemmer('russian').stemWords(['заметках'])",
    "rjieba": f"import rjieba; rjieba.cut({_ZH})",
    "jieba": f"import jieba; jieba.setLogLevel(60); jieba.lcut({_ZH})",
    "fugashi + unidic-lite": f"import fugashi; [w.surface for w in fugashi.Tagger()({_JA})]",
    "janome": ("from janome.tokenizer import Tokenizer; "
               f"list(Tokenizer(wakati=True).tokenize({_JA}))"),
    "sudachipy + core": f"from sudachipy import Dictionary; Dictionary().create().tokenize({_JA})",
    "py3langid": "import py3langid; py3langid.classify('Утилита архивирования')",
}
# VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec
_PROBE = """
import time
start = time.perf_counter()
{code}
seconds = time.perf_counter() - start
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(seconds, int(peak.split()[1]) / 1024)
"""


def load_table() -> list[str]:
    """Each library's import + first call and the process's peak RSS, in a fresh process
    (a bare interpreter's peak is the first row)."""
    rows = ["| library | load + first call | peak RSS of the process |", "|---|---|---|"]
    for name, code in {"(python alone)": "pass", **_LOADERS}.items():
        done = subprocess.run([sys.executable, "-c", _PROBE.format(code=code)],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            rows.append(f"| {name} | not installed | |")
            continue
        seconds, rss = map(float, done.stdout.split()[-2:])
        rows.append(f"| {name} | {seconds * 1000:.0f} ms | {rss:.0f} MB |")
    return rows


def judged_queries(path: Path) -> dict[str, list[Query]]:
    """The `dev` queries of a judged set, per language (held-out queries are never run)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[Query]] = {}
    for item in data["queries"]:
        if item.get("split", "dev") != "dev" or not item.get("relevant"):
            continue
        grades = {path: int(grade) for path, grade in dict(item["relevant"]).items()}
        for lang, text in item["text"].items():
            out.setdefault(lang, []).append(Query(text, frozenset(grades), grades))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--segmenters", action="store_true")
    parser.add_argument("--judged", type=Path)
    args = parser.parse_args(argv)
    langs = [lang for lang in args.langs.split(",") if lang]
    judged = judged_queries(args.judged) if args.judged else {}
    print("\n".join(machine_lines()))
    print("\n### The note language judge (core/language_id.py)\n")
    print("\n".join(language_table(langs)))
    print("\n### BM25 alone, as before and analysed in the note's language\n")
    print("| vault | queries | analysis | nDCG@5 | MRR | R@1 | R@5 | index s |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in langs:
        variants = [("before (English analysis, CJK bigrams)", False, "bigram"),
                    ("language's own (default)", True, None)]
        if args.segmenters and lang in SEGMENTATIONS:
            variants += [(f"language's own, {m}", True, m) for m in SEGMENTATIONS[lang]]
        print("\n".join(compare(lang, variants, judged)), flush=True)
    if args.segmenters:
        print("\n### Loading each library (a fresh process each)\n")
        print("\n".join(load_table()))


if __name__ == "__main__":
    main()


