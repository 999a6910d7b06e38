"""Index sync plans and lifecycle sweep plans."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.core._params import decay, lifecycle_policy
from vaultmem.core.memory import PROMOTED
from vaultmem.core.planning import Fingerprint, SyncPlan, plan_sweep, plan_sync

from ._support import NOW, memory


def fp(body: str, file: str | None = None) -> Fingerprint:
    return Fingerprint(body, file or f"{body}-file")


def apply(
    plan: SyncPlan, index: dict[str, Fingerprint], disk: dict[str, Fingerprint]
) -> dict[str, Fingerprint]:
    result = dict(index)
    for old, new in plan.moves:
        result[new] = result.pop(old)
    for path in plan.deletes:
        del result[path]
    for path in plan.adds + plan.changes + plan.meta_changes:
        result[path] = disk[path]
    return result


def test_empty_plan() -> None:
    same = {"a.md": fp("x")}
    plan = plan_sync(same, dict(same))
    assert plan.is_empty
    assert plan == SyncPlan((), (), (), (), ())


def test_each_kind_of_change() -> None:
    index = {
        "keep.md": fp("k"),
        "body.md": fp("b"),
        "meta.md": fp("m"),
        "gone.md": fp("g"),
        "old.md": fp("mv"),
        "old2.md": fp("mv2"),
    }
    disk = {
        "keep.md": fp("k"),
        "body.md": fp("b2"),
        "meta.md": fp("m", "m-new"),
        "new.md": fp("n"),
        "moved.md": fp("mv"),
        "moved2.md": fp("mv2", "edited"),
    }
    plan = plan_sync(disk, index)
    assert plan.adds == ("new.md",)
    assert plan.changes == ("body.md",)
    assert plan.meta_changes == ("meta.md", "moved2.md")
    assert plan.moves == (("old.md", "moved.md"), ("old2.md", "moved2.md"))
    assert plan.deletes == ("gone.md",)
    assert not plan.is_empty


def test_duplicate_bodies_pair_each_old_once_preferring_identical_files() -> None:
    index = {"a.md": fp("same", "f1"), "b.md": fp("same", "f2")}
    disk = {"x.md": fp("same", "f2"), "y.md": fp("same", "f3"), "z.md": fp("same", "f1")}
    plan = plan_sync(disk, index)
    assert plan.moves == (("a.md", "z.md"), ("b.md", "x.md"))
    assert plan.adds == ("y.md",)
    assert plan.meta_changes == ()


PATHS = st.sampled_from([f"{name}.md" for name in "abcdefgh"])
FINGERPRINTS = st.builds(Fingerprint, st.sampled_from("xyz"), st.sampled_from("12"))
VAULTS = st.dictionaries(PATHS, FINGERPRINTS, max_size=8)


@given(disk=VAULTS, index=VAULTS)
def test_applying_the_plan_yields_the_disk(
    disk: dict[str, Fingerprint], index: dict[str, Fingerprint]
) -> None:
    plan = plan_sync(disk, index)
    assert apply(plan, index, disk) == disk
    olds = [old for old, _ in plan.moves]
    assert len(olds) == len(set(olds))
    for paths in (plan.adds, plan.changes, plan.meta_changes, plan.deletes):
        assert list(paths) == sorted(paths)
    assert list(plan.moves) == sorted(plan.moves)
    assert plan.is_empty == (disk == index)


def test_sweep_plan_buckets_and_cap() -> None:
    memories = [
        ("m/promote.md", memory("p", use_count=3, idle_hours=1, age_hours=500)),
        ("m/forget.md", memory("f", idle_hours=60 * 24)),
        ("m/low.md", memory("l", idle_hours=9 * 24)),
        ("m/mid.md", memory("m", idle_hours=4 * 24)),
        ("m/high.md", memory("h", idle_hours=2)),
        ("STM/done.md", memory("d", status=PROMOTED)),
    ]
    plan = plan_sweep(memories, NOW, decay(), lifecycle_policy(max_active_memories=2))
    assert [i.id for i in plan.promote] == ["p"]
    assert [i.id for i in plan.archive] == ["f", "l"]
    assert [i.id for i in plan.keep] == ["h", "m"]
    forget, capped = plan.archive
    assert forget.decision.action == capped.decision.action == "forget"
    assert "forget threshold" in forget.decision.reason
    assert "cap" in capped.decision.reason
    assert capped.decision.score > 0.05


def test_sweep_without_cap_pressure() -> None:
    memories = [("a.md", memory("a")), ("b.md", memory("b", idle_hours=2))]
    plan = plan_sweep(memories, NOW, decay(), lifecycle_policy())
    assert (plan.promote, plan.archive) == ((), ())
    assert [i.path for i in plan.keep] == ["a.md", "b.md"]
