"""Full-text search over the chunks table: LanceDB's BM25 indexes on chunk text and title
(the query's words) and on the chunks' analysed terms (the query's terms in the vault's
languages, index/analysis.py), the hits' chunks from the in-memory matrix.

LanceDB returns each hit's row id and score; the matrix knows the rows' ids (loaded with the
vectors, set again after each optimise), so a search reads no column of its hits. A hit on a
row written since then is looked up by its id once (its chunk id and path), and the matrix
learns it.

That query goes to LanceDB's asynchronous table, the one its synchronous table wraps, in one
call to LanceDB's event loop thread: the synchronous query builder made five such calls (the
table's schema twice, the query, its batches), each a thread hand-over, which cost ~2 ms of a
3 ms query alone and more beside the model's threads.

Rows written since the last optimise are not in the indexes: LanceDB searches them by a scan,
which tokenises and stems their text at every query (~0.1 ms a chunk on a busy 2-core machine:
a second per search in the middle of a first index's words pass). When many are waiting
(`indexed_text`, LanceIndex decides), their `text` is left to the next optimise: the query runs
on the indexes alone (`fast_search`) beside a scan of those rows' names and terms only, which
is cheap, and each row keeps the better of its two scores. An indexed row scores at least as
high in the first (its names and terms are in both), so the indexed rows' scores and order are
those of the plain query, and a row just written is found by its names, never lost.

The indexes are made here too (`make_indexes`, when the table is made), and the title index
made again over every row once many rows wait for it (`make_title_index`): a search then scans
no waiting row's title, which cost each search 50-300 ms through a first index's words pass.

Not locked: LanceIndex calls the searches holding its searches' lock, and the index making
holding its writers' lock (searches go on, reading the version published before it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from vaultmem.core.ranking import ChunkHit
from vaultmem.index import analysis
from vaultmem.index import tables as tb
from vaultmem.index.lazy_client import deferred_models, lazy_packages, marked_overrides
from vaultmem.index.vectors import BROAD_FILTER, VectorMatrix

with lazy_packages(), deferred_models(), marked_overrides():
    from lancedb.background_loop import LOOP
    from lancedb.index import FTS
    from lancedb.query import BooleanQuery, FullTextOperator, MatchQuery, MultiMatchQuery, Occur

TITLE_BOOST = 0.5
BROAD_TEXT_HITS = 50  # allowed full-text hits a broad filter's walk is sized for


@dataclass(frozen=True)
class Terms:
    """One query for the full-text indexes: its plain words (tables.fts_terms) for `text` and
    `title`, its analysed terms (analysis.query_terms) for `terms`; a chunk's score is the sum
    of both matches' BM25."""

    words: str
    analysed: str = ""


def search(chunks: Any, matrix: VectorMatrix | None, terms: Terms, k: int,
           paths: Collection[str] | None, *, indexed_text: bool = False) -> list[ChunkHit]:
    """The k best chunks for `terms`, of the notes in `paths` if given. `indexed_text`: the
    text of rows not yet in the index is not scanned (see the module docstring)."""
    notes = matrix.note_count if matrix is not None else 0
    if paths is not None and len(paths) * BROAD_FILTER >= notes > 0:
        return _broad(chunks, matrix, terms, k, paths, notes, indexed_text=indexed_text)
    where = tb.in_list("path", paths) if paths is not None else None
    return hits(chunks, matrix, terms, k, where, indexed_text=indexed_text)


def hits(chunks: Any, matrix: VectorMatrix | None, terms: Terms, k: int,
         where: str | None, *, indexed_text: bool = False) -> list[ChunkHit]:
    """One full-text query's hits with their texts, read with as little as the matrix allows."""
    if matrix is None:
        return _read(chunks, terms, k, where)
    if indexed_text:
        search = _indexed_text_row_ids(chunks._table, terms, k, where)
    else:
        search = _scored_row_ids(chunks._table, _full_text_query(terms), k, where)
    rows = LOOP.run(search)  # type: ignore[no-untyped-call]
    row_ids, scores = rows.column("_rowid").to_pylist(), rows.column("_score").to_pylist()
    unknown = matrix.unknown_row_ids(row_ids)
    if unknown:  # rows written since the last optimise: the matrix learns their ids
        taken = chunks.take_row_ids(unknown).select(["chunk_id", "path"]).with_row_id()
        learnt = taken.to_arrow()
        matrix.learn_row_ids(learnt.column("_rowid").to_pylist(),
                             learnt.column("chunk_id").to_pylist(),
                             learnt.column("path").to_pylist())
    found = matrix.hits_by_row_id(row_ids, scores)
    if found is not None:
        return found
    # an optimise committed between the query and the look-up (new row ids): read the rows,
    # with the same query (a scan of every unindexed row's text took seconds a search)
    return _read_rows(chunks, terms, k, where) if indexed_text else _read(chunks, terms, k, where)


_READ = ("chunk_id", "path", "text")


def _read_rows(chunks: Any, terms: Terms, k: int, where: str | None) -> list[ChunkHit]:
    """`_indexed_text_row_ids`' hits with their columns read from the table."""
    rows = LOOP.run(_indexed_text_row_ids(chunks._table, terms, k, where, _READ))  # type: ignore[no-untyped-call]
    return [ChunkHit(chunk_id, path, text, float(score)) for chunk_id, path, text, score in zip(
        *(rows.column(name).to_pylist() for name in (*_READ, "_score")), strict=True)]


async def _scored_row_ids(table: Any, query: Any, k: int, where: str | None,
                          *, indexed_only: bool = False, columns: tuple[str, ...] = ()) -> Any:
    """`table`: the LanceDB 0.40 synchronous table's asynchronous one (its `_table`).
    `indexed_only`: the rows in the full-text indexes only (no scan of the others);
    `columns`: read beside each row's score and id."""
    search = table.query().nearest_to_text(query).select(["_score", *columns]).with_row_id(
        ).limit(k)
    if indexed_only:
        search = search.fast_search()
    if where is not None:
        search = search.where(where)  # a full-text query's filter applies before the search
    return await search.to_arrow()


async def _indexed_text_row_ids(table: Any, terms: Terms, k: int, where: str | None,
                                columns: tuple[str, ...] = ()) -> Any:
    """The k best rows by the whole query on the indexes, or by their names and terms alone
    (every row): each row with the better of its two scores (see the module docstring)."""
    indexed, names = await asyncio.gather(
        _scored_row_ids(table, _full_text_query(terms), k, where, indexed_only=True,
                        columns=columns),
        _scored_row_ids(table, _names_query(terms), k, where, columns=columns))
    return best_scores(indexed, names, k, columns)


def best_scores(first: pa.Table, second: pa.Table, k: int,
                columns: tuple[str, ...] = ()) -> pa.Table:
    """The k best rows of two scored result tables (`_rowid`, `_score` and `columns`), each
    row once with its higher score; best first, ties in the order the rows came."""
    best: dict[int, tuple[float, pa.Table, int]] = {}
    for rows in (first, second):
        for n, (row_id, score) in enumerate(zip(rows.column("_rowid").to_pylist(),
                                                rows.column("_score").to_pylist(), strict=True)):
            if row_id not in best or score > best[row_id][0]:
                best[row_id] = (score, rows, n)
    ranked = sorted(best.items(), key=lambda item: -item[1][0])[:k]
    out = {"_rowid": pa.array([r for r, _ in ranked], pa.uint64()),
           "_score": pa.array([s for _, (s, _, _) in ranked], pa.float32())}
    for name in columns:
        out[name] = pa.array([rows.column(name)[n].as_py() for _, (_, rows, n) in ranked],
                             pa.string())
    return pa.table(out)


def _full_text_query(terms: Terms) -> Any:
    return _with_terms(MultiMatchQuery(terms.words, list(tb.FTS_COLUMNS),
                                       boosts=[1.0, TITLE_BOOST], operator=FullTextOperator.OR),
                       terms)


def _names_query(terms: Terms) -> Any:
    """The part of `_full_text_query` that reads no `text`: the names, and the terms."""
    return _with_terms(MultiMatchQuery(terms.words, ["title"], boosts=[TITLE_BOOST],
                                       operator=FullTextOperator.OR), terms)


def _with_terms(words: Any, terms: Terms) -> Any:
    """`words`, or else the query's analysed terms in the terms column."""
    if not terms.analysed:
        return words
    analysed = MatchQuery(terms.analysed, tb.TERMS_COLUMN, boost=1.0, fuzziness=0,
                          max_expansions=50, prefix_length=0, document_granularity=None,
                          operator=FullTextOperator.OR)
    return BooleanQuery([(Occur.SHOULD, words), (Occur.SHOULD, analysed)])


def _query(chunks: Any, terms: Terms) -> Any:
    return chunks.search(_full_text_query(terms), query_type="fts")


def _read(chunks: Any, terms: Terms, k: int, where: str | None) -> list[ChunkHit]:
    """The hits read from the table, texts included (no matrix, or one out of step)."""
    query = _query(chunks, terms).select(["chunk_id", "path", "text", "_score"]).limit(k)
    if where is not None:
        query = query.where(where, prefilter=True)
    return [
        ChunkHit(row["chunk_id"], row["path"], row["text"], float(row["_score"]))
        for row in query.to_arrow().to_pylist()
    ]


def _broad(chunks: Any, matrix: VectorMatrix | None, terms: Terms, k: int,
           paths: Collection[str], notes: int, *, indexed_text: bool = False
           ) -> list[ChunkHit]:
    """A filter that keeps many notes: a list of thousands of paths makes the prefilter cost
    several times the search, so fetch more unfiltered hits and keep the allowed ones; only
    if too few are allowed among them, fall back to the prefilter."""
    allowed = paths if isinstance(paths, (set, frozenset)) else set(paths)
    # The walk is sized for BROAD_TEXT_HITS allowed hits: beyond the first few dozen, words
    # add candidates whose BM25 is a small share of the best, not worth a deeper walk.
    wanted = min(k, BROAD_TEXT_HITS)
    depth = max(2 * wanted, int(1.5 * wanted * notes / max(len(allowed), 1)))
    found = hits(chunks, matrix, terms, depth, None, indexed_text=indexed_text)
    kept = [hit for hit in found if hit.path in allowed][:k]
    if len(kept) >= wanted or len(found) < depth:  # enough, or every match was seen
        return kept
    return hits(chunks, matrix, terms, k, tb.in_list("path", allowed), indexed_text=indexed_text)


def make_indexes(chunks: Any) -> bool:
    """Create the full-text indexes the chunks table lacks; whether the text's was made."""
    indexed = {column for config in chunks.list_indices() if config.index_type == "FTS"
               for column in config.columns}
    for column in tb.FTS_COLUMNS:
        if column not in indexed:
            chunks.create_index(column, config=FTS(), replace=True)
    if tb.TERMS_COLUMN not in indexed:  # analysed already: split on spaces, no more
        chunks.create_index(tb.TERMS_COLUMN, replace=True, config=FTS(
            base_tokenizer="whitespace", lower_case=False, stem=False, remove_stop_words=False,
            ascii_folding=False, max_token_length=analysis.MAX_TERM_CHARS * 2))
    return tb.FTS_COLUMNS[0] not in indexed


def make_title_index(chunks: Any) -> None:
    """The title index made again over every row (an optimise brings it up to date too)."""
    chunks.create_index("title", config=FTS(), replace=True)
