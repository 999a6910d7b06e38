"""What ranking needs from the catalog for one query: candidates' names, thread neighbours
(the short notes, memories aside, of a candidate's folder of mostly short notes,
core/relevance.py) and how words compare
in each note's language (index/analysis.py's `word_keys`), and the function words of the
query's language (core/function_words.py: they count as no evidence of a match).

Kept apart from the pure ranking (core/ranking.py, core/relevance.py), which receives it as
plain values. A note's names, word keys and thread neighbours change only when a note of the
vault does: a `QueryContexts` keeps them between searches (a search's ~400 candidates asked the
catalog for ~30 folder listings and looked each note up in its thread, every search; each
note's names and language are then one look-up in one table, not several passes over the
candidates). When notes change it forgets only what they decide (the catalog's
`changed_since`): a changed note's names and word keys, and the neighbours of every note in a
changed note's folder (a thread is the notes of one folder). During an index, where every write
moved the catalog's generation, each search rebuilt all of it over its candidates: a third of
a slow search's time beside a first index (docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from vaultmem.core.function_words import for_query
from vaultmem.core.ranking import DEFAULT_RANKING, NoteSignals, QueryContext, RankingParams
from vaultmem.core.relevance import neighbours_at, thread_key, thread_of
from vaultmem.core.words import WordKeys
from vaultmem.index.analysis import STEMMERS, word_keys
from vaultmem.index.catalog import Catalog

_NEIGHBOURS_KEPT = 200_000  # notes whose neighbours are kept, over every thread rule asked for

#: The values of RankingParams that decide a note's thread neighbours.
_ThreadRule = tuple[bool, int, float, int]
_Neighbours = Sequence[tuple[str, int]]
_Key = tuple[str, str, str]
_Thread = tuple[list[str], dict[str, int]]
#: A catalogued note's names and the word keys of its language (None: English's).
_Note = tuple[tuple[str, ...], WordKeys | None]


class QueryContexts:
    """The QueryContexts of one catalog's searches, with each note's names, word keys and
    thread neighbours kept until a note changes."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._generation = -1
        # path -> its names and word keys (None: not catalogued; no keys: English's)
        self._notes: dict[str, _Note | None] = {}
        # rule -> path -> its neighbours (None: the note is in no thread)
        self._neighbours: dict[_ThreadRule, dict[str, _Neighbours | None]] = {}
        # folder -> the paths of its notes whose neighbours are kept (under any rule)
        self._by_folder: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        # folder -> (rule, thread key) -> the thread's notes in order, and each one's place
        self._threads: dict[str, dict[tuple[_ThreadRule, _Key], _Thread]] = {}

    def __call__(self, query: str, signals: Mapping[str, NoteSignals],
                 params: RankingParams = DEFAULT_RANKING) -> QueryContext:
        """The QueryContext of `signals`' notes (one search at a time: a search that forgets
        what a write changed must not pull a note from under another's look-up)."""
        with self._lock:
            return self._context(query, signals, params)

    def _context(self, query: str, signals: Mapping[str, NoteSignals],
                 params: RankingParams) -> QueryContext:
        self._follow_catalog()
        notes = self._notes
        if any(path not in notes for path in signals):
            self._learn_notes([path for path in signals if path not in notes])
        names: dict[str, tuple[str, ...]] = {}
        keys: dict[str, WordKeys] = {}
        for path in signals:
            known = notes[path]
            if known is not None:
                names[path] = known[0]
                if known[1] is not None:
                    keys[path] = known[1]
        neighbours = self._neighbours_of(signals, params) if params.thread_share > 0 else {}
        return QueryContext(query=query, names=names, neighbours=neighbours, keys=keys,
                            function_words=for_query(query))

    def _follow_catalog(self) -> None:
        """Forget what the notes changed since decide (everything if the catalog cannot tell
        which changed, or if what is kept grew too large)."""
        generation, changed = self._catalog.changed_since(self._generation)
        if changed is None or len(self._notes) + sum(
                map(len, self._neighbours.values())) > _NEIGHBOURS_KEPT:
            self._notes.clear()
            self._neighbours.clear()
            self._by_folder.clear()
            self._threads.clear()
        elif changed:
            self._forget(changed)
        self._generation = generation

    def _forget(self, changed: frozenset[str]) -> None:
        """Forget the changed notes' names and keys and their folders' neighbours."""
        for path in changed:
            self._notes.pop(path, None)
        folders = {_folder(path) for path in changed}
        for folder in folders:
            self._threads.pop(folder, None)
            paths = self._by_folder.pop(folder, None)
            if not paths:
                continue
            for known in self._neighbours.values():
                for path in paths:
                    known.pop(path, None)

    def _learn_notes(self, paths: list[str]) -> None:
        """Each path's names and word keys into the kept notes (None: not catalogued)."""
        names, languages = self._catalog.note_names_and_languages_for(paths)
        for path in paths:
            own = names.get(path)
            if own is None:
                self._notes[path] = None
                continue
            language = languages.get(path, "")
            self._notes[path] = (own, word_keys(frozenset({language}))
                                 if language in STEMMERS else None)

    def _neighbours_of(self, paths: Mapping[str, object], params: RankingParams
                       ) -> dict[str, _Neighbours]:
        rule = (params.thread_any_name, params.thread_max_chunks, params.thread_short_share,
                params.thread_width)
        known = self._neighbours.setdefault(rule, {})
        missing = [path for path in paths if path not in known]
        if missing:
            self._learn(missing, rule, known, params)
        found: dict[str, _Neighbours] = {}
        for path in paths:
            around = known[path]
            if around is not None:
                found[path] = around
        return found

    def _learn(self, paths: list[str], rule: _ThreadRule,
               known: dict[str, _Neighbours | None], params: RankingParams) -> None:
        """Each path's neighbours into `known`, from its thread (each thread listed once)."""
        for path in paths:
            key = thread_key(path, any_name=params.thread_any_name)
            if key is None:
                known[path] = None
                continue
            thread, places = self._thread(key, rule, params)
            here = places.get(path)
            known[path] = ([] if here is None
                           else neighbours_at(thread, here, params.thread_width))
            self._by_folder.setdefault(key[0], set()).add(path)

    def _thread(self, key: _Key, rule: _ThreadRule, params: RankingParams) -> _Thread:
        """The notes of `key`'s thread in order (none: its folder reads as no thread), kept
        until a note of its folder changes. A note's neighbours are looked up in it when asked
        for: a folder of a thousand short notes, listed again after each write of an index,
        cost a search the neighbours of all of them."""
        threads = self._threads.setdefault(key[0], {})
        found = threads.get((rule, key))
        if found is None:
            thread = thread_notes(self._catalog, key, params)
            found = threads[(rule, key)] = (thread, {p: i for i, p in enumerate(thread)})
        return found


def query_context(
    catalog: Catalog, query: str, signals: Mapping[str, NoteSignals],
    params: RankingParams = DEFAULT_RANKING,
) -> QueryContext:
    """The QueryContext of `signals`' notes, nothing kept (a search keeps a QueryContexts)."""
    return QueryContexts(catalog)(query, signals, params)


def _folder(path: str) -> str:
    """The folder of a note's path ("" for the vault's top), as `thread_key` names it."""
    return path.rpartition("/")[0]


def thread_notes(catalog: Catalog, key: _Key, params: RankingParams) -> list[str]:
    """The short notes of `key`'s thread in order, or none when its folder reads as no thread
    (`params`' thread rule)."""
    short = catalog.paths_in_folder(key[0], key[1], max_chunks=params.thread_max_chunks,
                                    memories=False)
    return (thread_of(short, key, any_name=params.thread_any_name)
            if _mostly_short(catalog, key, short, params) else [])


def _mostly_short(catalog: Catalog, key: _Key, short: list[str],
                  params: RankingParams) -> bool:
    """Whether the folder of `key` reads as a thread: `params.thread_short_share` of its notes
    (those of its date, for a dated key) are short, like the turns or entries of one log, and
    no memories: each memory is saved to stand on its own, and a folder of them is no log."""
    if params.thread_short_share <= 0:
        return True
    every = catalog.paths_in_folder(key[0], key[1])
    return bool(every) and len(short) >= params.thread_short_share * len(every)
