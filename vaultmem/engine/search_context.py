"""What ranking needs from the catalog for one query: candidates' names, thread neighbours
(the short notes, memories aside, of a candidate's folder of mostly short notes,
core/relevance.py) and how words compare
in each note's language (index/analysis.py's `word_keys`), and the function words of the
query's language (core/function_words.py: they count as no evidence of a match).

Kept apart from the pure ranking (core/ranking.py, core/relevance.py), which receives it as
plain values.
"""

from __future__ import annotations

from collections.abc import Mapping

from vaultmem.core.function_words import for_query
from vaultmem.core.ranking import DEFAULT_RANKING, NoteSignals, QueryContext, RankingParams
from vaultmem.core.relevance import thread_key, thread_neighbours, thread_of
from vaultmem.index.analysis import STEMMERS, word_keys
from vaultmem.index.catalog import Catalog


def query_context(
    catalog: Catalog, query: str, signals: Mapping[str, NoteSignals],
    params: RankingParams = DEFAULT_RANKING,
) -> QueryContext:
    """The QueryContext of `signals`' notes."""
    names = catalog.note_names_for(signals)
    threads: dict[tuple[str, str, str], list[str]] = {}
    neighbours = {}
    for path in signals if params.thread_share > 0 else ():
        key = thread_key(path, any_name=params.thread_any_name)
        if key is None:
            continue
        if key not in threads:
            short = catalog.paths_in_folder(key[0], key[1], max_chunks=params.thread_max_chunks,
                                            memories=False)
            threads[key] = (thread_of(short, key, any_name=params.thread_any_name)
                            if _mostly_short(catalog, key, short, params) else [])
        neighbours[path] = thread_neighbours(threads[key], path, params.thread_width)
    keys = {path: word_keys(frozenset({language}))
            for path, language in catalog.note_languages_for(signals).items()
            if language in STEMMERS}
    return QueryContext(query=query, names=names, neighbours=neighbours, keys=keys,
                        function_words=for_query(query))


def _mostly_short(catalog: Catalog, key: tuple[str, str, str], short: list[str],
                  params: RankingParams) -> bool:
    """Whether the folder of `key` reads as a thread: `params.thread_short_share` of its notes
    (those of its date, for a dated key) are short, like the turns or entries of one log, and
    no memories: each memory is saved to stand on its own, and a folder of them is no log."""
    if params.thread_short_share <= 0:
        return True
    every = catalog.paths_in_folder(key[0], key[1])
    return bool(every) and len(short) >= params.thread_short_share * len(every)
