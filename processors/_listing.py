"""NiFi's listing by tracked timestamps (AbstractListProcessor), as pure functions over state.

A lister remembers three things, in NiFi's state keys: ``listing.timestamp``, the newest
modification time seen by the last listing; ``processed.timestamp``, the newest one emitted; and
``id.0``, ``id.1`` ... the identifiers emitted at that time. An entity is new when its time is at
least both timestamps and it is not among those identifiers. The newest entities are held back
for one listing when they may still be joined by others of the same time (younger than the
listing lag of the file system's timestamp precision), so none is missed.

flowcore commits this state in the write-ahead log transaction that commits the listed
FlowFiles. A listing too large for one micro-batch is handed out in parts; each part's state
(:func:`state_after`) is the state NiFi would have after a listing that ended with it, so a
crash between parts neither repeats nor skips an entity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

import attrs

__all__ = [
    "LAG_MS",
    "PRECISIONS",
    "Decision",
    "Entry",
    "ListingState",
    "lag_of",
    "state_after",
    "track_timestamps",
]

#: Target System Timestamp Precision values and the unit each stands for (ms; None: detect).
PRECISIONS: Mapping[str, int | None] = {
    "auto-detect": None,
    "millis": 1,
    "seconds": 1_000,
    "minutes": 60_000,
}
#: NiFi's LISTING_LAG_MILLIS: how long after a listing its newest entries count as complete.
LAG_MS: Mapping[int, int] = {1: 100, 1_000: 1_000, 60_000: 60_000}

LISTED_KEY = "listing.timestamp"
PROCESSED_KEY = "processed.timestamp"
ID_PREFIX = "id."

T = TypeVar("T")
"""What a listing entry carries besides its identifier and time (a file's path and stat)."""


@attrs.frozen
class Entry(Generic[T]):
    """One listed entity: its identifier (a file's absolute path), time (ms) and what it is."""

    identifier: str
    timestamp: int
    item: T = attrs.field(eq=False)


@attrs.frozen
class ListingState:
    """NiFi's timestamp-tracking state, parsed."""

    listed: int | None = None
    processed: int = 0
    identifiers: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, str]) -> ListingState:
        """The state in *values* (empty or absent keys: none)."""
        listed = values.get(LISTED_KEY)
        ids = sorted(
            (k for k in values if k.startswith(ID_PREFIX) and values[k]),
            key=lambda k: int(k[len(ID_PREFIX) :]) if k[len(ID_PREFIX) :].isdigit() else -1,
        )
        return cls(
            int(listed) if listed else None,
            int(values.get(PROCESSED_KEY) or 0),
            tuple(values[k] for k in ids),
        )

    def values(self) -> dict[str, str]:
        """The state as NiFi stores it."""
        out = {LISTED_KEY: str(self.listed or 0), PROCESSED_KEY: str(self.processed)}
        out.update({f"{ID_PREFIX}{i}": v for i, v in enumerate(self.identifiers)})
        return out


@attrs.frozen
class Decision(Generic[T]):
    """What one listing emits, and the state after it.

    Attributes:
        entries: the new entities, oldest first (by time, then as listed).
        state: the state after emitting them all; None when it does not change.
        retry_after_ms: when nothing is emitted but entities are held back (too new to be
            sure no other of their time will come), how long until they are not.
        ran: whether the listing got past NiFi's early yields (the lister's last run time
            moves on only then).
    """

    entries: tuple[Entry[T], ...] = ()
    state: ListingState | None = None
    retry_after_ms: int = 0
    ran: bool = False


def lag_of(precision: str, timestamps: Sequence[int]) -> tuple[int, int]:
    """The timestamp unit (ms) and listing lag (ms) for *precision* and the times listed.

    Auto Detect takes milliseconds if any time has some, else seconds if any has some, else
    minutes: NiFi's rule.
    """
    unit = PRECISIONS.get(precision)
    if unit is None:
        if any(t % 1000 for t in timestamps):
            unit = 1
        elif any(t % 60_000 for t in timestamps):
            unit = 1_000
        else:
            unit = 60_000
    return unit, LAG_MS[unit]


def track_timestamps(
    entries: Sequence[Entry[T]],
    state: ListingState,
    *,
    now_ms: int,
    last_run_ms: int,
    precision: str,
) -> Decision[T]:
    """NiFi's ``listByTrackingTimestamps``: which of *entries* are new, and the state after.

    Args:
        entries: everything the listing found (filters applied).
        state: the committed (or last handed-out) state.
        now_ms: the current time.
        last_run_ms: when a listing last got past the early yields (0: never in this run).
        precision: the Target System Timestamp Precision value.
    """
    minimum = state.listed
    new = [
        e
        for e in entries
        if minimum is None or (e.timestamp >= minimum and e.timestamp >= state.processed)
    ]
    if not new:
        return Decision()
    unit, lag = lag_of(precision, [e.timestamp for e in entries])
    new.sort(key=lambda e: e.timestamp)  # stable: entries of one time stay as listed
    latest = new[-1].timestamp
    if latest == state.listed:
        # No newer entity since the last listing: list the held-back ones once the lag passed.
        waited = now_ms - last_run_ms
        if waited < lag:
            return Decision(retry_after_ms=lag - waited)
        known = set(state.identifiers)
        newest = [e for e in new if e.timestamp == latest]
        if latest == state.processed and all(e.identifier in known for e in newest):
            return Decision()
        held = False
    else:
        reliable = (now_ms - lag) // unit * unit  # truncated to the file system's precision
        held = reliable < latest
        if held:  # the newest may still be joined by others of their time: next listing
            new = [e for e in new if e.timestamp != latest]
    emitted = _unlisted(new, state)
    processed, identifiers = state.processed, state.identifiers
    if emitted:
        last = new[-1].timestamp
        kept = identifiers if last == processed else ()
        identifiers = _joined(kept, (e.identifier for e in new if e.timestamp == last))
        processed = last
    changed = latest != state.listed or bool(emitted)
    after = ListingState(latest, processed, identifiers) if changed else None
    retry = lag if held and not emitted else 0
    return Decision(tuple(emitted), after, retry, ran=True)


def state_after(emitted: Sequence[Entry[T]], before: ListingState) -> ListingState:
    """The state once the first *emitted* entries of a listing (not all) are handed out.

    It is that of a listing that ended with the last of them: its time is both the listed and
    the processed timestamp, and the identifiers are those emitted at that time (with those
    remembered for it before).
    """
    last = emitted[-1].timestamp
    kept = before.identifiers if last == before.processed else ()
    ids = _joined(kept, (e.identifier for e in emitted if e.timestamp == last))
    return ListingState(last, last, ids)


def _unlisted(new: Sequence[Entry[T]], state: ListingState) -> list[Entry[T]]:
    """*new* without those already emitted at the processed timestamp."""
    known = set(state.identifiers)
    return [e for e in new if not (e.timestamp == state.processed and e.identifier in known)]


def _joined(first: Sequence[str], more: object) -> tuple[str, ...]:
    """*first* then *more*, each identifier once, in order."""
    return tuple(dict.fromkeys([*first, *more]))  # type: ignore[misc]
