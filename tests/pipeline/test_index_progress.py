"""IndexProgress's snapshot (`status`'s view of the index writer): runs nest, counts add up
over every running run, and the note embedded in slices is the innermost run's."""

from __future__ import annotations

from vaultmem.pipeline.progress import CHANGES, IDLE, SCAN, IndexProgress, IndexWork, SlicedNote


def test_no_run_is_idle() -> None:
    assert IndexProgress().snapshot() == IDLE


def test_nested_runs_add_up_and_the_innermost_sliced_note_is_current() -> None:
    progress = IndexProgress()
    outer = progress.begin(SCAN)
    progress.planned(outer, 10)
    progress.written(outer, 4)
    progress.slicing(outer, "big.md", chunks_total=300)
    progress.sliced(outer, 40)
    inner = progress.begin(CHANGES)  # let in between the big note's slices
    progress.planned(inner, 2)
    progress.written(inner, 1)
    assert progress.snapshot() == IndexWork(True, SCAN, 5, 12, SlicedNote("big.md", 40, 300))
    progress.slicing(inner, "other.md", chunks_total=90)
    assert progress.snapshot().current == SlicedNote("other.md", 0, 90)
    progress.end(inner)
    assert progress.snapshot() == IndexWork(True, SCAN, 4, 10, SlicedNote("big.md", 40, 300))
    progress.end(outer)
    assert progress.snapshot() == IDLE


def test_a_snapshot_does_not_change_with_the_runs() -> None:
    progress = IndexProgress()
    run = progress.begin(CHANGES)
    progress.planned(run, 3)
    taken = progress.snapshot()
    progress.written(run, 3)
    assert taken.done == 0 and progress.snapshot().done == 3
