"""Human-readable renderings of the shared JSON shapes (the CLI's default output)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

_console = Console(highlight=False, soft_wrap=True)


def _echo(text: str = "") -> None:
    _console.print(text, markup=False)


@contextmanager
def progress_bar(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled:
        yield None
        return
    columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("index", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def show_sync(d: dict[str, Any]) -> None:
    if d.get("rebuilt_reason"):
        _echo(f"index rebuilt: {d['rebuilt_reason']}")
    _echo(
        f"added {d['added']}, changed {d['changed']}, metadata-only {d['meta_changed']}, "
        f"moved {d['moved']}, deleted {d['deleted']}; skipped {d['skipped']}, "
        f"failed {d['failed']}; {d['chunks_embedded']} chunks embedded in {d['seconds']:.1f} s"
    )
    for path, reason in d.get("failures", []):
        _echo(f"  failed: {path}: {reason}")


def placement(results: list[dict[str, Any]], index: int) -> str:
    """Why a result stands where it does when `final` (the ranking key) does not say: a review
    item blended in after the primary results, a superseded memory just below its successor."""
    hit = results[index]
    if hit["review"]:
        return "  [review: placed after the primary results]"
    successor = hit.get("superseded_by")
    above = results[index - 1] if index > 0 else None
    if not successor or above is None or above["final"] >= hit["final"]:
        return ""
    # its successor is listed above it (other memories it replaced may stand between them)
    place = next((n for n in range(index) if results[n]["id"] == successor["id"]), None)
    return "" if place is None else f"  [placed below its successor, {place + 1}.]"


def index_state_line(indexing: dict[str, Any] | None) -> str | None:
    """What a search answer says of the index while it is incomplete (an older daemon sends
    only `done` / `total` while it builds); None once it is complete."""
    if not indexing or indexing.get("state") == "ready":
        return None
    if indexing.get("state") == "starting":
        return "index: the daemon is starting, the vault not counted yet — results may be partial"
    done, total = indexing.get("done", 0), indexing.get("total", 0)
    words = ("every note searchable by its words, by meaning partly"
             if indexing.get("by_words") == "complete" else "results are partial")
    return f"index building: {done:,} of {total:,} notes — {words}"


def show_search(d: dict[str, Any]) -> None:
    results = d["results"]
    state = index_state_line(d.get("indexing"))
    if state:
        _echo(state)
    if not results:
        _echo(f"nothing relevant for {d['query']!r}")
        return
    if not any(hit.get("matched") for hit in results):
        _echo(f"no real match for {d['query']!r}; the closest notes, all weak:")
    for n, hit in enumerate(results, 1):
        kind = "memory" if hit["id"] else "note"
        score = "" if hit["score"] is None else f"  memory score {hit['score']:.3f}"
        weak = "" if hit.get("matched") else "  (weak)"
        _echo(f"{n}. {hit['title']}  ({kind}: {hit['path']})")
        _echo(f"   relevance {hit['relevance']:.3f}{weak}{score}  "
              f"final {hit['final']:.3f}{placement(results, n - 1)}")
        if hit["snippet"]:
            _echo(f"   {hit['snippet']}")
        successor = hit.get("superseded_by")
        if successor:
            where = successor["path"] or "a note no longer in the vault"
            _echo(f"   superseded by {successor['title'] or successor['id']} ({where})")


def show_memory(d: dict[str, Any]) -> None:
    _echo(f"{d['title']}  ({d['path']})")
    _echo(f"  id {d['id']}  status {d['status']}" + ("  pinned" if d["pinned"] else ""))
    _echo(f"  type {d['type'] or '-'}  tags {', '.join(d['tags']) or '-'}")
    _echo(f"  used {d['use_count']}×, last {d['last_used']}, created {d['created']}")
    _echo(f"  strength {d['strength']:.2f}  score {d['score']:.4f}  "
          f"review priority {d['review_priority']:.2f}")
    if d.get("superseded_by"):
        _echo(f"  superseded by {d['superseded_by']}")
    if d.get("supersedes"):
        _echo(f"  supersedes {d['supersedes']}")
    _echo(f"  decision: {d['decision']} — {d['reason']}")


def show_saved(d: dict[str, Any]) -> None:
    memory = d["memory"]
    if d["created"]:
        _echo(f"saved {memory['path']} (id {memory['id']})")
    elif d.get("similar"):
        similar = d["similar"]
        _echo(f"not saved: near-duplicate of \"{similar['title']}\" ({similar['path']}, id "
              f"{similar['id']}, similarity {similar['similarity']:.2f}); `vaultmem edit` "
              "it, or save again with --force to keep both")
    else:
        _echo(f"not saved: {d['reinforced']['reason']}; reinforced {memory['path']} "
              f"(now used {memory['use_count']}×)")
    if d.get("superseded"):
        _echo(f"  supersedes {d['superseded']['path']} (id {d['superseded']['id']}): "
              "it is kept, marked stale, and fades")
    update = d.get("possible_update_of")
    if update:
        _echo(f"  possible update of {update['path']} (id {update['id']}): {update['reason']}")
        if not update.get("applied"):
            _echo(f"  to confirm: vaultmem supersede {update['id']} --by {memory['id']}")


def show_observed(d: dict[str, Any]) -> None:
    for item in d["observed"]:
        cross = " (cross-domain use: strengthened)" if item.get("cross_domain") else ""
        _echo(f"observed {item['path']}: used {item['use_count']}×{cross}")


def show_review(d: dict[str, Any]) -> None:
    for update in d.get("updates", []):
        _echo(f"possible update: {update['by']['path']} may replace {update['path']} "
              f"({update['reason']})")
        _echo(f"  to confirm: vaultmem supersede {update['id']} --by {update['by']['id']}; "
              f"to dismiss: vaultmem unsupersede {update['by']['id']}")
    if not d["items"]:
        _echo("nothing to review: no memory is in the danger zone")
        return
    _echo(f"{d['total']} memories worth revisiting:")
    for item in d["items"]:
        _echo(f"  {item['review_priority']:.2f}  {item['title']}  ({item['path']}, "
              f"score {item['score']:.3f})")


def show_left_alone(d: dict[str, Any]) -> None:
    for item in d.get("left_alone", ()):
        _echo(f"left alone {item['path']}: {item['reason']}")


def show_gc(d: dict[str, Any]) -> None:
    show_left_alone(d)
    if not d["archive"]:
        _echo("nothing to forget")
        return
    verb = "would archive" if d["dry_run"] else "archived"
    for item in d["archive"]:
        _echo(f"{verb} {item['path']}: {item['reason']}")
    if d["dry_run"]:
        _echo("(dry run: add --apply to archive them)")


def show_promote(d: dict[str, Any]) -> None:
    show_left_alone(d)
    if not d["promote"]:
        _echo("nothing to promote")
        return
    if d["dry_run"]:
        for item in d["promote"]:
            _echo(f"would promote {item['path']}: {item['reason']}")
        return
    for item in d["promoted"]:
        _echo(f"promoted {item['from']} → {item['to']} ({len(item['links'])} related links)")


def show_related(d: dict[str, Any]) -> None:
    _echo(f"notes related to {d['path']}:")
    for item in d["related"]:
        _echo(f"  {item['similarity']:.3f}  {item['title']}  ({item['path']})")


def model_line(model: dict[str, Any] | None, embedder: str) -> str:
    """Which embedding model serves the vault, and why (`status`, `vaultmem run`)."""
    if not model:  # an older daemon's status
        return f"embedding model: {embedder}"
    if model.get("setting") == "auto":
        return (f"embedding model: {embedder}, chosen for this vault ({model.get('model')}): "
                f"{model.get('reason')}")
    return f"embedding model: {embedder} (embedding_model = {model.get('setting')!r})"


def show_status(d: dict[str, Any]) -> None:
    cov = d["coverage"]
    mem = d["memories"]
    _echo(f"vault {d['vault']}  ({d['notes']} files known)")
    _echo(model_line(d.get("model"), d["embedder"]))
    _echo(f"index: {cov['indexed']} notes indexed ({cov['chunks']} chunks), "
          f"{len(cov['skipped'])} skipped, {len(cov['failed'])} failed")
    if d.get("unindexed_changes"):
        _echo(f"index is behind the vault: {d['unindexed_changes']} notes changed since the "
              "last index (a search or `vaultmem reindex` brings it up to date)")
    by_status = ", ".join(f"{k} {v}" for k, v in sorted(mem["by_status"].items())) or "none"
    _echo(f"memories: {mem['total']} ({by_status})")
    languages = d.get("languages") or {}
    if languages.get("advice"):
        _echo(f"languages: {languages['advice']}")
    dec = mem["decisions"]
    _echo(f"decisions now: keep {dec['keep']}, forget {dec['forget']}, promote {dec['promote']}")
    for label in ("skipped", "failed", "warnings"):
        for item in cov[label]:
            _echo(f"  {label}: {item['path']}: {item['reason']}")
    for problem in cov["problems"]:
        _echo(f"  problem: {problem}")
    for item in cov.get("files", []):
        memory = item.get("memory")
        state = "" if not memory else (f"  memory {memory['status']}, score "
                                       f"{memory['score']:.3f}")
        click.echo(f"  {item['status']:8} {item['chunks']:4}  {item['path']}{state}")
    _show_daemon(d.get("daemon"))
    _show_sync(d.get("sync"))


def _show_daemon(daemon: dict[str, Any] | None) -> None:
    if not daemon:
        return
    work = daemon.get("indexing") or {}  # an older daemon reports fewer of these
    queued = work.get("queued", daemon.get("queue_depth", 0))
    if work.get("running") and work.get("total"):
        doing = f"indexing {work['done']:,} of {work['total']:,} notes"
    elif work.get("running"):
        doing = "indexing"
    else:
        doing = "index up to date" if not queued else "index idle"
    current = work.get("current")
    if current:
        doing += (f"; embedding {current['path']}: {current['chunks_done']:,} of "
                  f"{current['chunks_total']:,} chunks")
    doing += f"; {queued:,} changed note{'' if queued == 1 else 's'} queued" if queued else ""
    _echo(f"daemon: pid {daemon.get('pid')}, {doing}")
    if work.get("error"):
        _echo(f"  indexing failed: {work['error']}")


def _show_sync(sync: dict[str, Any] | None) -> None:
    if not sync:
        return
    for group in sync["duplicates"]:
        _echo(f"duplicate memory id {group['id']}: {len(group['copies'])} copies of "
              f"{group['canonical']} (uses and touches go to it)")
        for copy in group["copies"]:
            kind = f"{copy['kind']} conflict copy" if copy["kind"] else "copy"
            _echo(f"  {kind}: {copy['path']}")
    if sync["duplicates"]:
        _echo("merge them with: vaultmem reconcile --apply")
    for path in sync["git_conflicts"]:
        _echo(f"  git conflict markers in the frontmatter of {path}: resolve them in git")


def show_reconcile(d: dict[str, Any]) -> None:
    if not d["duplicates"] and not d["git_conflicts"]:
        _echo("no duplicate memories: nothing to reconcile")
        return
    for group in d["duplicates"]:
        _echo(f"{group['id']}: {group['canonical']} (use count after merging: "
              f"{group['use_count']})")
        for copy in group["copies"]:
            differs = ", text differs: kept and linked" if copy["text_differs"] else ""
            _echo(f"  copy {copy['path']} ({copy['kind'] or 'same id'}{differs})")
    for item in d["merged"]:
        for move in item["archived"]:
            _echo(f"  archived {move['from']} → {move['to']}")
    for path in d["git_conflicts"]:
        _echo(f"git conflict markers in the frontmatter of {path}: resolve them in git")
    if d["dry_run"] and d["duplicates"]:
        _echo("dry run: nothing changed (use --apply to merge)")


def show_clusters(d: dict[str, Any]) -> None:
    if not d["clusters"]:
        _echo("no clusters: no two memories are that similar")
        return
    for cluster in d["clusters"]:
        _echo(f"{cluster['id']}  cohesion {cluster['cohesion']:.3f}  {cluster['action']}")
        for member in cluster["members"]:
            _echo(f"  - {member['title']}  ({member['path']})")
    _echo("merge one with: vaultmem consolidate --merge CLUSTER-ID")


def show_merge(d: dict[str, Any]) -> None:
    merged = d["merged_into"]
    _echo(f"merged {len(d['archived'])} memories into {merged['path']} (id {merged['id']})")
    for item in d["archived"]:
        _echo(f"  archived {item['from']} → {item['to']}")
