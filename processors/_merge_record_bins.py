"""MergeRecord's bins: NiFi's RecordBin and RecordBinManager rules over flowcore's bins.

A :class:`RecordBin` is a :class:`flowcore.processor.binning.Bin` (so the engine hands it around as
it hands MergeContent's) that counts *records* as well as FlowFiles, with NiFi's rules, which
differ from MergeContent's:

- limits are soft: a bin takes every FlowFile offered until it is complete, so it may pass
  Maximum Number of Records / Maximum Bin Size by the last FlowFile's records and bytes;
- a bin is *full enough* once it holds a FlowFile and reaches Minimum Number of Records and
  Minimum Bin Size, *full* when full enough and at a maximum; a full bin completes at once;
- Defragment: the first integer ``fragment.count`` fixes how many FlowFiles make the whole
  (no ``fragment.index`` check, as NiFi's MergeRecord); a bin with a missing, non-integer or
  conflicting count, or evicted before it is whole, fails.

Bytes are what the bin's Record Writer has written, as NiFi counts them: with a byte limit set,
each FlowFile's records are written through the bin's writer to a counter as it joins (the
bytes themselves are dropped); the merged content is written when the bin completes, streamed,
never held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from flowcore.flowfile import FlowFile
from flowcore.processor.binning import FRAGMENT_COUNT, UNLIMITED, Bin, BinLimits, EvictionReason

__all__ = [
    "COMPLETION_REASONS",
    "RecordBin",
    "RecordBinManager",
    "RecordLimits",
    "fragment_problem",
]

#: NiFi's completion reasons (the JOIN's details and ``merge.completion.reason``).
COMPLETION_REASONS = {
    EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED: "Bin is full",
    EvictionReason.MAX_BYTES_THRESHOLD_REACHED: "Bin is full",
    EvictionReason.BIN_TERMINATION_SIGNAL: "Bin is full",
    EvictionReason.MIN_THRESHOLDS_REACHED: "Bin is full enough",
    EvictionReason.TIMEOUT: "Bin has reached Max Bin Age",
    EvictionReason.BIN_MANAGER_FULL: "Maximum number of bins has been exceeded",
    EvictionReason.END_OF_INPUT: "Input has ended",
    EvictionReason.UNSET: "Bin is full",
}


@attrs.frozen
class RecordLimits:
    """A record bin's thresholds (NiFi's RecordBinThresholds)."""

    min_records: int = 1
    max_records: int = 1000
    min_bytes: int = 0
    max_bytes: int = UNLIMITED
    defragment: bool = False


def fragment_problem(flowfiles: list[FlowFile]) -> str | None:
    """Why a Defragment bin cannot merge (NiFi's ``validateFragmentCount``), or None."""
    expected: int | None = None
    for flowfile in flowfiles:
        value = flowfile.attributes.get(FRAGMENT_COUNT)
        if value is None:
            continue
        try:
            count = int(value)
        except ValueError:
            return f"the '{FRAGMENT_COUNT}' attribute had a value of '{value}' for {flowfile}"
        if expected is not None and count != expected:
            return (
                f"the '{FRAGMENT_COUNT}' attribute had a value of '{value}' for {flowfile} but "
                f"another FlowFile in the bin had a value of {expected}"
            )
        expected = count
    if expected is None:
        return f"the '{FRAGMENT_COUNT}' attribute was not present on any of the FlowFiles"
    if expected != len(flowfiles):
        return (
            f"the '{FRAGMENT_COUNT}' attribute had a value of '{expected}' but only "
            f"{len(flowfiles)} of {expected} FlowFiles were encountered before this bin was "
            "evicted"
        )
    return None


class RecordBin(Bin):
    """FlowFiles of one group and schema, with their record count (NiFi's RecordBin)."""

    def __init__(self, group: str | None, limits: RecordLimits, created_ms: int) -> None:
        super().__init__(group, BinLimits(), created_ms)
        self.record_limits = limits
        self.records = 0
        self.failed = False  # a FlowFile's records could not be read: the whole bin fails
        #: The Record Writer this bin's records are written through to count their bytes
        #: (when a byte limit is set), as NiFi's bin counts what its writer wrote.
        self.measure: Any = None

    def offer_records(self, flowfile: FlowFile, records: int, size: int | None = None) -> bool:
        """Take *flowfile* and its *records* unless the bin is complete; complete it if full.

        *size* is the bytes it adds (the writer's, when measured; else its content's).
        """
        if self.completed:
            return False
        self.flowfiles.append(flowfile)
        self.entries += 1
        self.size += flowfile.size if size is None else size
        self.records += records
        if self.is_full():
            self.reason = (
                EvictionReason.MAX_BYTES_THRESHOLD_REACHED
                if self.size >= self.record_limits.max_bytes
                else EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED
            )
            self.completed = True
        return True

    def _expected_fragments(self) -> int | None:
        for flowfile in self.flowfiles:
            value = flowfile.attributes.get(FRAGMENT_COUNT)
            if value is not None:
                try:
                    return int(value)
                except ValueError:
                    return None
        return None

    def is_full_enough(self) -> bool:
        """NiFi's ``isFullEnough``: minimums reached (Defragment: every fragment here)."""
        if not self.flowfiles:
            return False
        limits = self.record_limits
        if limits.defragment:
            return self.entries == self._expected_fragments()
        return self.records >= limits.min_records and self.size >= limits.min_bytes

    def is_full(self) -> bool:
        """NiFi's ``isFull``: full enough and at a maximum (Defragment: every fragment)."""
        if not self.is_full_enough():
            return False
        limits = self.record_limits
        if limits.defragment:
            return True
        return self.records >= limits.max_records or self.size >= limits.max_bytes


class RecordBinManager:
    """Bins by group with NiFi's RecordBinManager rules (first bin that takes it, else new).

    Args:
        limits: thresholds of new bins.
        max_bins: Maximum Number of Bins; a new bin past it completes the oldest.
        age_from_queue_date: a new bin is as old as its first FlowFile's queue date (see
            :class:`flowcore.processor.binning.BinManager`).
    """

    def __init__(
        self, limits: RecordLimits, max_bins: int, *, age_from_queue_date: bool = False
    ) -> None:
        self.limits = limits
        self.max_bins = max_bins
        self.age_from_queue_date = age_from_queue_date
        self._groups: dict[str | None, list[RecordBin]] = {}

    @property
    def bin_count(self) -> int:
        """How many bins are open."""
        return sum(len(bins) for bins in self._groups.values())

    def bins(self) -> list[RecordBin]:
        """Every open bin, oldest first."""
        return sorted((b for bins in self._groups.values() for b in bins), key=lambda b: b.id)

    def target(self, group: str | None) -> RecordBin | None:
        """The bin a FlowFile of *group* would join now (None: a new one)."""
        return next((b for b in self._groups.get(group, []) if not b.completed), None)

    def bin_for(self, group: str | None, flowfile: FlowFile, now_ms: int) -> RecordBin:
        """The bin a FlowFile of *group* joins now: the group's open one, else a new one.

        A new bin is not held until :meth:`add` puts the FlowFile in it.
        """
        found = self.target(group)
        if found is not None:
            return found
        created = now_ms
        if self.age_from_queue_date:
            created = min(now_ms, flowfile.queue_date or now_ms)
        return RecordBin(group, self.limits, created)

    def add(
        self,
        group: str | None,
        flowfile: FlowFile,
        records: int,
        now_ms: int,
        *,
        size: int | None = None,
        into: RecordBin | None = None,
    ) -> tuple[RecordBin, list[RecordBin]]:
        """Bin *flowfile* (into *into*, from :meth:`bin_for`); the bin and those it completed.

        Held bins are never complete (a bin leaves as it completes), so the group's first bin
        takes it, as NiFi's first bin that accepts; a new bin past Maximum Number of Bins
        completes the oldest.
        """
        target = into if into is not None else self.bin_for(group, flowfile, now_ms)
        held = self._groups.get(group, [])
        target.offer_records(flowfile, records, size)
        if target in held:
            if target.completed:
                self._remove(target)
                return target, [target]
            return target, []
        if target.completed:
            return target, [target]
        self._groups.setdefault(group, []).append(target)
        completed: list[RecordBin] = []
        if self.bin_count > self.max_bins:
            oldest = self.bins()[0]
            oldest.reason = EvictionReason.BIN_MANAGER_FULL
            oldest.completed = True
            self._remove(oldest)
            completed.append(oldest)
        return target, completed

    def fail(self, bin_: RecordBin) -> None:
        """Take *bin_* out to fail it (a FlowFile's records could not be read)."""
        bin_.failed = True
        bin_.completed = True
        self._remove(bin_)

    def take_expired(self, now_ms: int, max_age_ms: int | None) -> list[RecordBin]:
        """NiFi's ``completeExpiredBins``: the bins older than Max Bin Age."""
        if max_age_ms is None:
            return []
        return self._take(lambda b: now_ms - b.created_ms > max_age_ms, EvictionReason.TIMEOUT)

    def take_full(self, *, relaxed: bool) -> list[RecordBin]:
        """NiFi's ``completeFullBins`` (or ``completeFullEnoughBins`` when *relaxed*)."""
        if relaxed:
            return self._take(RecordBin.is_full_enough, EvictionReason.MIN_THRESHOLDS_REACHED)
        return self._take(RecordBin.is_full, EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED)

    def _take(self, test: Callable[[RecordBin], bool], reason: EvictionReason) -> list[RecordBin]:
        ready = [b for b in self.bins() if test(b)]
        for bin_ in ready:
            bin_.reason = reason
            bin_.completed = True
            self._remove(bin_)
        return ready

    def purge(self) -> Iterator[RecordBin]:
        """Remove and yield every bin (the processor stops, or the input ended)."""
        bins = self.bins()
        self._groups.clear()
        yield from bins

    def _remove(self, bin_: RecordBin) -> None:
        bins = self._groups.get(bin_.group, [])
        if bin_ in bins:
            bins.remove(bin_)
        if not bins:
            self._groups.pop(bin_.group, None)
