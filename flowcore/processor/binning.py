"""The binning engine behind MergeContent: NiFi's BinManager and Bin rules, exactly.

FlowFiles are offered to bins of their group. A bin accepts while it stays under its maximum
bytes and entries (and, when defragmenting, while the ``fragment.index`` is new to it); it is
*full* or *full enough* by NiFi's thresholds; it times out after Max Bin Age; and the oldest bin
is evicted when the manager holds its maximum number of bins. Bins hold FlowFile records, never
content. The engine is independent of sessions so the test harness (one session per bin) and the
Spark runner (bins over shuffled records) share it.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from flowcore.flowfile import FlowFile

__all__ = [
    "FRAGMENT_COUNT",
    "FRAGMENT_INDEX",
    "BatchBinning",
    "Bin",
    "BinLimits",
    "BinManager",
    "EvictionReason",
    "InsertionStrategy",
    "Offer",
]

FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
UNLIMITED = 2**63 - 1
_SUCCESSIVE_FAILURES_BEFORE_FULL = 5  # NiFi's Bin.isFull: more than 5 rejected offers in a row


class EvictionReason(enum.Enum):
    """Why a bin was merged; written as ``merge.reason``."""

    MAX_BYTES_THRESHOLD_REACHED = "MAX_BYTES_THRESHOLD_REACHED"
    MAX_ENTRIES_THRESHOLD_REACHED = "MAX_ENTRIES_THRESHOLD_REACHED"
    MIN_THRESHOLDS_REACHED = "MIN_THRESHOLDS_REACHED"
    TIMEOUT = "TIMEOUT"
    BIN_MANAGER_FULL = "BIN_MANAGER_FULL"
    BIN_TERMINATION_SIGNAL = "BIN_TERMINATION_SIGNAL"
    END_OF_INPUT = "END_OF_INPUT"  # flowcore: a batch run's input ended with the bin open
    UNSET = "UNSET"


class InsertionStrategy(enum.Enum):
    """Where a FlowFile that satisfies the Bin Termination Check goes."""

    LAST_IN_BIN = "Last in Bin"
    FIRST_IN_NEW_BIN = "First in New Bin"
    ISOLATED = "Isolated"


@attrs.frozen
class BinLimits:
    """A bin's thresholds: bytes and entries, minimum and maximum."""

    min_bytes: int = 0
    max_bytes: int = UNLIMITED
    min_entries: int = 1
    max_entries: int = UNLIMITED


_bin_ids = itertools.count(1)


class Bin:
    """FlowFile records of one group, with NiFi's offer and readiness rules.

    Args:
        group: the bin's group id (``None`` is a group too).
        limits: the thresholds.
        created_ms: creation time in epoch ms (the harness clock in tests), for Max Bin Age.
        fragment_count_attribute: when defragmenting, ``fragment.count``: each offer needs a new
            ``fragment.index``, and the first integer count fixes min = max entries.
    """

    def __init__(
        self,
        group: str | None,
        limits: BinLimits,
        created_ms: int,
        fragment_count_attribute: str | None = None,
    ) -> None:
        self.id = next(_bin_ids)
        self.group = group
        self.limits = limits
        self.created_ms = created_ms
        self.fragment_count_attribute = fragment_count_attribute
        self.flowfiles: list[FlowFile] = []
        self.pieces: list[tuple[int, Any]] = []  # FlowFiles of batches: (batch, rows)
        self.entries = 0
        self.size = 0
        self.successive_failed_offerings = 0
        self.completed = False
        self.reason: EvictionReason | None = None
        self._indexes: set[str] = set()

    def __len__(self) -> int:
        return self.entries

    def __repr__(self) -> str:
        return f"Bin(id={self.id}, group={self.group!r}, entries={len(self)}, bytes={self.size})"

    def offer(self, flowfile: FlowFile) -> bool:
        """Add *flowfile* if it fits; count a rejection otherwise."""
        limits = self.limits
        if (
            self.completed
            or self.size + flowfile.size > limits.max_bytes
            or self.entries >= limits.max_entries
        ):
            self.successive_failed_offerings += 1
            return False
        if self.fragment_count_attribute is not None:
            # As NiFi's Bin: every integer fragment.count seen resets the exact entry count, and
            # it does so before the index check (a refused duplicate still sets it).
            count = _integer(flowfile.attributes.get(self.fragment_count_attribute))
            if count is not None:
                self.limits = attrs.evolve(limits, min_entries=count, max_entries=count)
            index = flowfile.attributes.get(FRAGMENT_INDEX)
            if not index or index in self._indexes:
                self.successive_failed_offerings += 1
                return False
            self._indexes.add(index)
        self.successive_failed_offerings = 0
        self.add(flowfile)
        return True

    def add(self, flowfile: FlowFile) -> None:
        """Add without checks (an oversize or unbinnable FlowFile in a bin of its own)."""
        self.flowfiles.append(flowfile)
        self.entries += 1
        self.size += flowfile.size

    def room(self, size: int) -> int:
        """How many more FlowFiles of *size* bytes each this bin would accept, in a row."""
        limits = self.limits
        if self.completed or self.fragment_count_attribute is not None:
            return 0
        room = max(0, limits.max_entries - self.entries)
        if size:
            room = min(room, max(0, (limits.max_bytes - self.size) // size))
        elif self.size > limits.max_bytes:
            room = 0
        return room

    def take(self, pieces: list[tuple[int, Any]], count: int, size: int) -> None:
        """Add *count* FlowFiles of batches, *size* bytes in all, as pieces ``(batch, rows)``.

        The caller has checked :meth:`room`; as with :meth:`offer`, the acceptance resets the
        count of successive refused offers.
        """
        self.pieces.extend(pieces)
        self.entries += count
        self.size += size
        self.successive_failed_offerings = 0

    def complete(self) -> None:
        """Mark the bin forcefully completed (Bin Termination Check)."""
        self.completed = True

    def _min_reached(self) -> bool:
        return self.size >= self.limits.min_bytes and self.entries >= self.limits.min_entries

    def is_full(self) -> bool:
        """NiFi's strict readiness."""
        return (
            (
                self._min_reached()
                and self.successive_failed_offerings > _SUCCESSIVE_FAILURES_BEFORE_FULL
            )
            or self.size >= self.limits.max_bytes
            or self.entries >= self.limits.max_entries
            or self.completed
        )

    def is_full_enough(self) -> bool:
        """NiFi's relaxed readiness: full, or the minimums reached."""
        return self.is_full() or self._min_reached()

    def is_older_than(self, now_ms: int, max_age_ms: int | None) -> bool:
        """Whether the bin has lived longer than *max_age_ms* (never when None)."""
        return max_age_ms is not None and now_ms - self.created_ms > max_age_ms

    def readiness_reason(self) -> EvictionReason:
        """The first matching reason among termination, max bytes, max entries, minimums."""
        if self.completed:
            return EvictionReason.BIN_TERMINATION_SIGNAL
        if self.size >= self.limits.max_bytes:
            return EvictionReason.MAX_BYTES_THRESHOLD_REACHED
        if self.entries >= self.limits.max_entries:
            return EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED
        if self._min_reached():
            return EvictionReason.MIN_THRESHOLDS_REACHED
        return EvictionReason.UNSET


def _integer(value: str | None) -> int | None:
    if value is None or not value.strip().lstrip("+-").isdigit():
        return None
    return int(value)


@attrs.frozen
class Offer:
    """Where one offered FlowFile went.

    Attributes:
        flowfile: the FlowFile.
        bin: the bin holding it now; a bin of its own when *alone*.
        alone: the FlowFile could not be binned (oversize or refused) and is merged by itself.
    """

    flowfile: FlowFile
    bin: Bin
    alone: bool = False


@attrs.frozen
class BatchBinning:
    """Bins packed from FlowFile batches (their ``pieces`` are ``(batch, rows)``).

    Attributes:
        ready: bins to merge now, in the order they became ready, each with its reason.
        open: bins still filling; their FlowFiles stay queued.
        untaken: ``(batch, rows)`` never offered (the processor stopped taking input); they
            stay queued.
    """

    ready: tuple[Bin, ...]
    open: tuple[Bin, ...]
    untaken: tuple[tuple[int, Any], ...]


class BinManager:
    """Groups of bins with NiFi's offer, migrate and eviction rules.

    Args:
        limits: thresholds for new bins.
        fragment_count_attribute: set when defragmenting (see :class:`Bin`).
        age_from_queue_date: a new bin is as old as its first FlowFile's queue date (when
            earlier than now). The engine rebuilds bins from queued FlowFiles every
            micro-batch; this keeps Max Bin Age counting from when the bin really began.
    """

    def __init__(
        self,
        limits: BinLimits,
        fragment_count_attribute: str | None = None,
        *,
        age_from_queue_date: bool = False,
    ) -> None:
        self.limits = limits
        self.fragment_count_attribute = fragment_count_attribute
        self.age_from_queue_date = age_from_queue_date
        self._groups: dict[str | None, list[Bin]] = {}

    @property
    def bin_count(self) -> int:
        """How many bins are held."""
        return sum(len(bins) for bins in self._groups.values())

    def bins(self) -> list[Bin]:
        """Every held bin, oldest first."""
        return sorted((b for bins in self._groups.values() for b in bins), key=lambda b: b.id)

    def _new_bin(self, group: str | None, now_ms: int) -> Bin:
        bin_ = Bin(group, self.limits, now_ms, self.fragment_count_attribute)
        self._groups.setdefault(group, []).append(bin_)
        return bin_

    def _alone(self, flowfile: FlowFile, group: str | None, now_ms: int) -> Offer:
        bin_ = Bin(group, BinLimits(0, UNLIMITED, 0, UNLIMITED), now_ms)
        bin_.add(flowfile)
        bin_.reason = EvictionReason.UNSET
        return Offer(flowfile, bin_, alone=True)

    def offer(
        self,
        group: str | None,
        flowfiles: Iterable[FlowFile],
        now_ms: int,
        terminates: Callable[[FlowFile], bool] | None = None,
        strategy: InsertionStrategy = InsertionStrategy.LAST_IN_BIN,
    ) -> list[Offer]:
        """Offer *flowfiles* of one group, in order (reference §2.4 "Offering")."""
        results = []
        offered_at = now_ms
        for flowfile in flowfiles:
            if self.age_from_queue_date:
                now_ms = min(offered_at, flowfile.queue_date or offered_at)
            if flowfile.size > self.limits.max_bytes:
                results.append(self._alone(flowfile, group, now_ms))
                continue
            if terminates is not None and terminates(flowfile):
                results.append(self._offer_terminating(group, flowfile, now_ms, strategy))
                continue
            results.append(self._offer_plain(group, flowfile, now_ms))
        return results

    def open_bins(self, group: str | None) -> list[Bin]:
        """The bins of *group*, in the order FlowFiles are offered to them."""
        return self._groups.get(group, [])

    def new_bin(self, group: str | None, now_ms: int) -> Bin:
        """Open a new bin for *group*, created at *now_ms*."""
        return self._new_bin(group, now_ms)

    def _offer_plain(self, group: str | None, flowfile: FlowFile, now_ms: int) -> Offer:
        for bin_ in self._groups.get(group, []):
            if bin_.offer(flowfile):
                return Offer(flowfile, bin_)
        bin_ = self._new_bin(group, now_ms)
        if bin_.offer(flowfile):
            return Offer(flowfile, bin_)
        self._discard(bin_)
        return self._alone(flowfile, group, now_ms)

    def _offer_terminating(
        self, group: str | None, flowfile: FlowFile, now_ms: int, strategy: InsertionStrategy
    ) -> Offer:
        existing = self._groups.get(group, [])
        if strategy is InsertionStrategy.LAST_IN_BIN:
            for bin_ in existing:
                if bin_.offer(flowfile):
                    bin_.complete()
                    return Offer(flowfile, bin_)
            bin_ = self._new_bin(group, now_ms)
            bin_.add(flowfile)
            bin_.complete()
            return Offer(flowfile, bin_)
        open_bin = next((b for b in existing if not b.completed), None)
        if open_bin is not None:
            open_bin.complete()
        bin_ = self._new_bin(group, now_ms)
        bin_.add(flowfile)
        if strategy is InsertionStrategy.ISOLATED:
            bin_.complete()
        return Offer(flowfile, bin_)

    def _discard(self, bin_: Bin) -> None:
        bins = self._groups.get(bin_.group, [])
        if bin_ in bins:
            bins.remove(bin_)
        if not bins:
            self._groups.pop(bin_.group, None)

    def remove_ready_bins(self, *, relaxed: bool, now_ms: int, max_age_ms: int | None) -> list[Bin]:
        """Take out every ready bin, setting its reason (reference §2.4 "Migrate")."""
        ready = []
        for bin_ in self.bins():
            if (relaxed and bin_.is_full_enough()) or (not relaxed and bin_.is_full()):
                bin_.reason = bin_.readiness_reason()
            elif bin_.is_older_than(now_ms, max_age_ms):
                bin_.reason = EvictionReason.TIMEOUT
            else:
                continue
            self._discard(bin_)
            ready.append(bin_)
        return ready

    def remove_oldest_bin(self) -> Bin | None:
        """Evict the oldest bin (``BIN_MANAGER_FULL``), or None when there is none."""
        bins = self.bins()
        if not bins:
            return None
        oldest = bins[0]
        self._discard(oldest)
        oldest.reason = EvictionReason.BIN_MANAGER_FULL
        return oldest

    def purge(self) -> Sequence[Bin]:
        """Remove and return every bin (the processor is stopping)."""
        bins = self.bins()
        self._groups.clear()
        return bins
