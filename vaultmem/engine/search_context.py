"""What ranking needs from the catalog for one query: candidates' names and thread neighbours
(the numbered notes of a candidate's folder, core/relevance.py).

Kept apart from the pure ranking (core/ranking.py, core/relevance.py), which receives it as
plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vaultmem.core.ranking import LINK_SHARE, THREAD_WIDTH, NoteSignals, QueryContext
from vaultmem.core.relevance import thread_key, thread_neighbours, thread_of
from vaultmem.index.base import names_of
from vaultmem.index.catalog import Catalog


def query_context(
    catalog: Catalog, query: str, signals: Mapping[str, NoteSignals]
) -> QueryContext:
    """The QueryContext of `signals`' notes."""
    names = {
        path: names_of(path, title, aliases)
        for path, (title, aliases) in catalog.names_for(signals).items()
    }
    threads: dict[tuple[str, str, str], list[str]] = {}
    neighbours = {}
    for path in signals:
        key = thread_key(path)
        if key is None:
            continue
        if key not in threads:
            threads[key] = thread_of(catalog.paths_in_folder(key[0], key[1]), key)
        neighbours[path] = thread_neighbours(threads[key], path, THREAD_WIDTH)
    links = candidate_links(catalog, signals) if LINK_SHARE > 0 else {}
    return QueryContext(query=query, names=names, neighbours=neighbours, links=links)


def candidate_links(catalog: Catalog, paths: Iterable[str]) -> dict[str, list[str]]:
    """Links among the candidates, both ways: a link `[[Name]]` or `[[folder/Name]]` resolves
    to the candidate with that file name (or path)."""
    paths = list(paths)
    by_name: dict[str, str] = {}
    for path in sorted(paths):
        stem = path[: -3] if path.endswith(".md") else path
        by_name.setdefault(stem.casefold(), path)
        by_name.setdefault(stem.rpartition("/")[2].casefold(), path)
    out: dict[str, set[str]] = {}
    for path, targets in catalog.links_for(paths).items():
        for target in targets:
            key = target[: -3] if target.casefold().endswith(".md") else target
            other = by_name.get(key.casefold())
            if other is not None and other != path:
                out.setdefault(path, set()).add(other)
                out.setdefault(other, set()).add(path)
    return {path: sorted(others) for path, others in out.items()}
