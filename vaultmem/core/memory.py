"""Short-term-memory state as stored in a note's frontmatter (`stm_*` keys), as plain values."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

STM_KEYS: tuple[str, ...] = (
    "stm_id",
    "stm_created",
    "stm_last_used",
    "stm_use_count",
    "stm_spaced_uses",
    "stm_strength",
    "stm_status",
    "stm_type",
    "stm_pinned",
    "stm_source",
    "stm_promoted_at",
    "stm_merged_into",
    "stm_review_count",
    "stm_cross_domain_count",
    "stm_uses_by",
    "stm_superseded_by",
    "stm_supersedes",
    "stm_possible_update_of",
)

ACTIVE = "active"
PROMOTED = "promoted"
ARCHIVED = "archived"
STATUSES: tuple[str, ...] = (ACTIVE, PROMOTED, ARCHIVED)

MEMORY_TYPES: tuple[str, ...] = ("decision", "pattern", "convention", "issue", "preference", "fact")

STRENGTH_MIN = 0.0
# Clocks of synced devices disagree a little; dates further ahead than this are not trusted.
FUTURE_TOLERANCE = timedelta(days=1)
STRENGTH_MAX = 2.0

# a device id: what `stm_uses_by` may name (letters, digits, `-`, `_`, `.`)
_DEVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


@dataclass(frozen=True)
class MemoryState:
    id: str
    created: datetime
    last_used: datetime
    use_count: int = 1
    strength: float = 1.0
    status: str = ACTIVE
    type: str | None = None
    pinned: bool = False
    source: str | None = None
    promoted_at: datetime | None = None
    merged_into: str | None = None
    review_count: int = 0
    cross_domain_count: int = 0
    tags: tuple[str, ...] = ()
    # uses per device (`core.device_sync`): (device id, uses), sorted; the rest of use_count
    # is shared
    uses_by: tuple[tuple[str, int], ...] = ()
    # a newer memory replaces this one (its id) / the memory this one replaces (its id)
    superseded_by: str | None = None
    supersedes: str | None = None
    # a detected update not confirmed yet: the id of the memory this one may replace
    possible_update_of: str | None = None
    # the uses that count toward promotion (SPEC §3.5: spaced in time); None: all of them
    spaced_uses: int | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("memory id must be a non-empty string")
        for name in ("created", "last_used", "promoted_at"):
            value = getattr(self, name)
            if value is not None and value.utcoffset() is None:
                raise ValueError(f"{name} must be a timezone-aware datetime, got {value!r}")
        if self.id in (self.superseded_by, self.supersedes, self.possible_update_of):
            raise ValueError("a memory cannot supersede itself")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        for name in ("use_count", "review_count", "cross_domain_count", "spaced_uses"):
            if (getattr(self, name) or 0) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


def counted_uses(state: MemoryState) -> int:
    """The uses that count toward promotion: spaced in time (`core.reinforce.touch`); a memory
    without `stm_spaced_uses` (all its uses spaced, or written before the rule) counts all."""
    if state.spaced_uses is None:
        return state.use_count
    return min(state.spaced_uses, state.use_count)


def with_counted_uses(state: MemoryState, counted: int) -> MemoryState:
    """`state` with `counted` uses toward promotion (kept only when fewer than its uses)."""
    return replace(state, spaced_uses=counted if counted < state.use_count else None)


def is_memory(fields: Mapping[str, object]) -> bool:
    """True when the frontmatter carries a non-empty `stm_id`."""
    value = fields.get("stm_id")
    return value is not None and str(value).strip() != ""


def future_problem(state: MemoryState, now: datetime) -> str | None:
    """Why a memory's dates cannot be trusted (they lie ahead of `now`), or None."""
    for key, value in (("stm_created", state.created), ("stm_last_used", state.last_used)):
        if value - now > FUTURE_TOLERANCE:
            return f"{key} {format_datetime(value)} is in the future"
    return None


def new_state(
    memory_id: str,
    now: datetime,
    *,
    strength: float = 1.0,
    type: str | None = None,
    pinned: bool = False,
    source: str | None = None,
    tags: Sequence[str] = (),
) -> MemoryState:
    """A freshly saved memory: its creation counts as its first use."""
    return MemoryState(
        id=memory_id,
        created=now,
        last_used=now,
        use_count=1,
        strength=_clamp_strength(strength),
        type=type,
        pinned=pinned,
        source=source,
        tags=tuple(tags),
    )


def state_from_fields(fields: Mapping[str, object], tags: Sequence[str] = ()) -> MemoryState:
    """Build a `MemoryState` from parsed frontmatter; raise ValueError naming any bad key."""
    memory_id = _optional_str(fields, "stm_id")
    if memory_id is None:
        raise ValueError("stm_id is missing or empty")
    created = _optional_datetime(fields, "stm_created")
    if created is None:
        raise ValueError("stm_created is missing or empty")
    last_used = _optional_datetime(fields, "stm_last_used") or created
    status = _optional_str(fields, "stm_status") or ACTIVE
    if status not in STATUSES:
        raise ValueError(f"stm_status must be one of {', '.join(STATUSES)}, got {status!r}")
    return MemoryState(
        id=memory_id,
        created=created,
        last_used=last_used,
        use_count=_count(fields, "stm_use_count", default=1),
        strength=_strength(fields),
        status=status,
        type=_memory_type(fields),
        pinned=_flag(fields, "stm_pinned"),
        source=_optional_str(fields, "stm_source"),
        promoted_at=_optional_datetime(fields, "stm_promoted_at"),
        merged_into=_optional_str(fields, "stm_merged_into"),
        review_count=_count(fields, "stm_review_count", default=0),
        cross_domain_count=_count(fields, "stm_cross_domain_count", default=0),
        tags=tuple(str(tag) for tag in tags),
        uses_by=parse_uses_by(_optional_str(fields, "stm_uses_by")),
        superseded_by=_optional_str(fields, "stm_superseded_by") or None,
        supersedes=_optional_str(fields, "stm_supersedes") or None,
        possible_update_of=_optional_str(fields, "stm_possible_update_of") or None,
        spaced_uses=(_count(fields, "stm_spaced_uses", default=0)
                     if _present(fields, "stm_spaced_uses") is not None else None),
    )


def state_to_fields(state: MemoryState) -> dict[str, str | int | float | bool]:
    """The `stm_*` keys for a state, in `STM_KEYS` order, omitting unset optional keys."""
    values: dict[str, str | int | float | bool | None] = {
        "stm_id": state.id,
        "stm_created": format_datetime(state.created),
        "stm_last_used": format_datetime(state.last_used),
        "stm_use_count": state.use_count,
        "stm_spaced_uses": (state.spaced_uses if state.spaced_uses is not None
                            and state.spaced_uses < state.use_count else None),
        "stm_strength": round(state.strength, 4),
        "stm_status": state.status,
        "stm_type": state.type,
        "stm_pinned": True if state.pinned else None,
        "stm_source": state.source,
        "stm_promoted_at": format_datetime(state.promoted_at) if state.promoted_at else None,
        "stm_merged_into": state.merged_into,
        "stm_review_count": state.review_count or None,
        "stm_cross_domain_count": state.cross_domain_count or None,
        "stm_uses_by": format_uses_by(state.uses_by) or None,
        "stm_superseded_by": state.superseded_by,
        "stm_supersedes": state.supersedes,
        "stm_possible_update_of": state.possible_update_of,
    }
    return {key: value for key in STM_KEYS if (value := values[key]) is not None}


def parse_uses_by(text: str | None) -> tuple[tuple[str, int], ...]:
    """`stm_uses_by: laptop-3f2a=4 desk-91c0=2` → (("desk-91c0", 2), ("laptop-3f2a", 4))."""
    if not text:
        return ()
    counts: dict[str, int] = {}
    for item in text.split():
        device, sep, number = item.rpartition("=")
        if not sep or not _DEVICE.fullmatch(device) or not number.isdigit():
            raise ValueError(f"stm_uses_by must be `device=count` pairs, got {item!r}")
        counts[device] = max(counts.get(device, 0), int(number))
    return tuple(sorted(counts.items()))


def format_uses_by(uses_by: Sequence[tuple[str, int]]) -> str:
    return " ".join(f"{device}={count}" for device, count in sorted(uses_by) if count > 0)


def format_datetime(value: datetime) -> str:
    """ISO 8601 with offset, seconds precision: `2026-11-20T12:00:00+00:00`."""
    return value.isoformat(timespec="seconds")


def parse_datetime(value: object, key: str) -> datetime:
    """A timezone-aware datetime from a datetime, a date or an ISO string (naive means UTC)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{key} is not an ISO 8601 date-time: {value!r}") from None
    else:
        raise ValueError(f"{key} must be a date-time, got {type(value).__name__} {value!r}")
    if parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _present(fields: Mapping[str, object], key: str) -> object | None:
    value = fields.get(key)
    if isinstance(value, str) and value.strip() == "":
        return None
    return value


def _memory_type(fields: Mapping[str, object]) -> str | None:
    """`stm_type`, in lower case: types are the same whatever case a note writes them in."""
    value = _optional_str(fields, "stm_type")
    return value.casefold() if value else None


def _optional_str(fields: Mapping[str, object], key: str) -> str | None:
    value = _present(fields, key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{key} must be text, got {type(value).__name__} {value!r}")
    return str(value).strip()


def _optional_datetime(fields: Mapping[str, object], key: str) -> datetime | None:
    value = _present(fields, key)
    return None if value is None else parse_datetime(value, key)


def _count(fields: Mapping[str, object], key: str, *, default: int) -> int:
    value = _present(fields, key)
    if value is None:
        return default
    count: int | None = None
    if isinstance(value, bool):
        count = None
    elif isinstance(value, int):
        count = value
    elif isinstance(value, float) and value.is_integer():
        count = int(value)
    elif isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        count = int(value.strip())
    if count is None or count < 0:
        raise ValueError(f"{key} must be a non-negative integer, got {value!r}")
    return count


def _strength(fields: Mapping[str, object]) -> float:
    value = _present(fields, "stm_strength")
    if value is None:
        return 1.0
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or math.isnan(number):
        raise ValueError(f"stm_strength must be a number, got {value!r}")
    return _clamp_strength(number)


def _flag(fields: Mapping[str, object], key: str) -> bool:
    value = _present(fields, key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
        return value.strip().lower() in _TRUE_WORDS
    raise ValueError(f"{key} must be true or false, got {value!r}")


def _clamp_strength(value: float) -> float:
    return min(max(value, STRENGTH_MIN), STRENGTH_MAX)
