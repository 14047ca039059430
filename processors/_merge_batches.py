"""MergeContent over FlowFile batches: bins packed and merged without a FlowFile object each.

A task's input that arrived as :class:`~flowcore.flowfile_batch.FlowFileBatch` values is binned
as arrays: FlowFiles are taken in queue order across the batches (:class:`_Intake`), grouped by
the Correlation Attribute Name's column when there is one, and bins open, fill and close in
exactly the order MergeContent's triggers open them (each intake of up to 1,000 FlowFiles is
offered group after group, in the order the groups first appear in it). When every FlowFile
fits the same way (no byte limit, or one size within it) runs of FlowFiles are placed at once
(:func:`_offer`); otherwise, with sizes that differ under Maximum Group Size, an oversize
FlowFile (a bin of its own, ready at once) or a Bin Termination Check (a column of its values),
each FlowFile is offered in turn on numbers alone (:func:`_offer_each`). Hypothesis tests compare
the bins with :meth:`~flowcore.processor.binning.BinManager.offer`. Defragment makes a bin of each
``fragment.identifier``'s FlowFiles in ``fragment.index`` order (:func:`_defragment`).

A ready bin is a list of batch pieces. In Binary Concatenation it is merged from their byte
ranges (a split file's lines picked out of one read) with one JOIN naming its parents as uuid
runs (:func:`merge_bundle`); the other formats make the bin's FlowFiles and run the one-by-one
merger over them (``processors/_merge_entries.py``). The engine moves the originals as batches.

What declines and takes the per-FlowFile path, which reports what goes wrong: a Correlation
Attribute Name with Expression Language, a termination check calling ``nextInt()`` (its values
follow the order of evaluation), and Defragment values that would end in failure.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import processors._merge_bins as bins
import processors._merge_formats as formats
import processors._merge_properties as props
from flowcore.expression import compile_expression, contains_expression
from flowcore.expression._columns import evaluate_boolean_column
from flowcore.flowfile import ContentClaim, CountedUuids, FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import IntColumn
from flowcore.processor.binning import (
    FRAGMENT_COUNT,
    FRAGMENT_INDEX,
    UNLIMITED,
    BatchBinning,
    Bin,
    BinLimits,
    BinManager,
    EvictionReason,
    InsertionStrategy,
)
from flowcore.session._content import RangeGather
from processors._merge_bundles import FRAGMENT_ID, SEGMENT_ORIGINAL_FILENAME, common_attributes

if TYPE_CHECKING:
    from flowcore.flowfile import Content
    from flowcore.processor.context import ProcessContext
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "batch_contents",
    "bin_batches",
    "bundle_number",
    "in_fragment_order",
    "merge_bundle",
    "representatives",
    "uuid_runs",
]


def _bins_batches(context: ProcessContext) -> bool:
    """Whether this configuration's bins can be packed from batches."""
    check = context.get_property(props.BIN_TERMINATION_CHECK).value
    if check and "nextInt" in check:
        # nextInt() counts its calls: the one-by-one path calls it group after group, and
        # never for an oversize FlowFile. (Text naming it elsewhere declines too: harmless.)
        return False
    correlation = context.get_property(props.CORRELATION_ATTRIBUTE_NAME).value
    return not (correlation and contains_expression(correlation))  # a name per FlowFile


class _Intake:
    """The input in queue order, across batches, with each FlowFile's bin group."""

    def __init__(self, batches: Sequence[FlowFileBatch], correlation: str | None) -> None:
        counts = [b.count for b in batches]
        self.batch_of = np.repeat(np.arange(len(batches)), counts)
        self.row_of = np.concatenate([np.arange(c) for c in counts]) if counts else np.zeros(0)
        dates = np.repeat(np.array([b.queue_date for b in batches], dtype=np.int64), counts)
        indices = np.concatenate([b.queue_date_indices for b in batches]) if counts else dates
        order = np.lexsort((indices, dates))  # queue order, as the per-FlowFile path takes it
        self.order = order  # position in queue order -> position in the batches, one after another
        self.batch_of, self.row_of = self.batch_of[order], self.row_of[order]
        self.sizes = np.concatenate([b.sizes for b in batches])[order] if counts else dates
        table: dict[str | None, int] = {}
        codes = []
        for batch in batches:
            column = batch.column(correlation) if correlation else None
            if column is None:
                codes.append(np.full(batch.count, table.setdefault(None, len(table))))
                continue
            local, values = column.encoded()
            remap = np.array([table.setdefault(v, len(table)) for v in values], dtype=np.int64)
            codes.append(remap[local])
        self.groups = np.concatenate(codes)[order] if codes else np.zeros(0, dtype=np.int64)
        self.group_names = list(table)
        self.dates = dates[order]
        self.taken = 0

    def __len__(self) -> int:
        return len(self.batch_of)

    def pieces(self, positions: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The FlowFiles at *positions* (in order) as ``(batch, rows)`` runs of one batch."""
        owners = self.batch_of[positions]
        breaks = np.flatnonzero(owners[1:] != owners[:-1]) + 1
        edges = [0, *breaks.tolist(), len(positions)]
        return [(int(owners[a]), self.row_of[positions[a:b]]) for a, b in itertools.pairwise(edges)]

    def left(self) -> tuple[tuple[int, np.ndarray], ...]:
        """The FlowFiles never offered, by batch."""
        rest = np.arange(self.taken, len(self))
        owners = self.batch_of[rest]
        return tuple((int(b), np.sort(self.row_of[rest[owners == b]])) for b in np.unique(owners))


def _offer(manager: BinManager, intake: _Intake, stop: int, size: int, now: int) -> None:
    """Offer FlowFiles ``intake.taken .. stop-1``, each *size* bytes, as one trigger's intake.

    As :meth:`~processors.merge_content.MergeContent._bin_flowfiles` offers them: group after
    group in the order the groups first appear, each group's FlowFiles in queue order. Within a
    group each FlowFile goes to the first bin with room, every full bin before it counting one
    more refused offer; so runs of FlowFiles fill a bin at once.
    """
    start = intake.taken
    chunk = intake.groups[start:stop]
    codes, first = np.unique(chunk, return_index=True)
    limits = manager.limits
    capacity = limits.max_entries if not size else min(limits.max_entries, limits.max_bytes // size)
    for code in codes[np.argsort(first)]:
        group = intake.group_names[int(code)]
        positions = np.flatnonzero(chunk == code) + start
        placed = 0
        refusing: list[Bin] = []
        for bin_ in manager.open_bins(group):
            room = min(bin_.room(size), len(positions) - placed)
            if room:
                for refused in refusing:
                    refused.successive_failed_offerings += room
                mine = positions[placed : placed + room]
                bin_.take(intake.pieces(mine), room, int(intake.sizes[mine].sum()))
                placed += room
            if placed == len(positions):
                break
            refusing.append(bin_)
        while placed < len(positions):
            mine = positions[placed : placed + capacity]
            bin_ = manager.new_bin(group, _created(manager, intake, int(mine[0]), now))
            for refused in refusing:
                refused.successive_failed_offerings += len(mine)
            bin_.take(intake.pieces(mine), len(mine), int(intake.sizes[mine].sum()))
            refusing.append(bin_)
            placed += len(mine)
    intake.taken = stop


def _created(manager: BinManager, intake: _Intake, position: int, now: int) -> int:
    """When a bin opened by the FlowFile at *position* was created (as BinManager.offer says)."""
    if manager.age_from_queue_date:
        return min(now, int(intake.dates[position]) or now)
    return now


def _offer_each(
    manager: BinManager,
    intake: _Intake,
    stop: int,
    now: int,
    *,
    ending: np.ndarray | None,
    strategy: InsertionStrategy,
    alone: list[Bin],
) -> None:
    """Offer FlowFiles ``intake.taken .. stop-1`` one at a time, as BinManager.offer does.

    For what runs cannot settle: sizes that differ under a byte limit (a later, smaller
    FlowFile may fit a bin that refused a larger one), FlowFiles larger than the limit (each
    in a bin of its own, appended to *alone*: ready at once, before the trigger's other bins)
    and a Bin Termination Check (*ending*: its value for each FlowFile). The bins are the
    manager's, their counts, sizes and refused offers kept as
    :class:`~flowcore.processor.binning.Bin` keeps them; each bin's new FlowFiles become pieces once
    the intake is placed.
    """
    start = intake.taken
    chunk = intake.groups[start:stop]
    codes, first = np.unique(chunk, return_index=True)
    sizes = intake.sizes
    max_bytes = manager.limits.max_bytes
    placed: dict[int, tuple[Bin, list[int]]] = {}  # bin id -> the bin, its new positions
    for code in codes[np.argsort(first)]:
        group = intake.group_names[int(code)]
        for position in (np.flatnonzero(chunk == code) + start).tolist():
            size = int(sizes[position])
            created = _created(manager, intake, position, now)
            if size > max_bytes:
                bin_ = Bin(group, BinLimits(0, UNLIMITED, 0, UNLIMITED), created)
                bin_.reason = EvictionReason.UNSET
                alone.append(bin_)
                _put(bin_, size)
            elif ending is not None and ending[position]:
                bin_ = _offer_ending(manager, group, size, created, strategy)
            else:
                bin_ = _offer_one(manager, group, size, created)
            placed.setdefault(bin_.id, (bin_, []))[1].append(position)
    for bin_, positions in placed.values():
        bin_.pieces.extend(intake.pieces(np.array(positions, dtype=np.int64)))
    intake.taken = stop


def _put(bin_: Bin, size: int) -> None:
    """One more FlowFile of *size* bytes in *bin_* (its piece is added with the intake's)."""
    bin_.entries += 1
    bin_.size += size


def _accepts(bin_: Bin, size: int) -> bool:
    """:meth:`~flowcore.processor.binning.Bin.offer` of a FlowFile of *size* bytes, on numbers.

    Counts the refusal or, on acceptance, adds it and resets the count of refusals.
    """
    limits = bin_.limits
    if bin_.completed or bin_.size + size > limits.max_bytes or bin_.entries >= limits.max_entries:
        bin_.successive_failed_offerings += 1
        return False
    _put(bin_, size)
    bin_.successive_failed_offerings = 0
    return True


def _offer_one(manager: BinManager, group: str | None, size: int, created: int) -> Bin:
    """BinManager's plain offer: the first of the group's bins that accepts, else a new one."""
    for bin_ in manager.open_bins(group):
        if _accepts(bin_, size):
            return bin_
    bin_ = manager.new_bin(group, created)
    _accepts(bin_, size)  # a new bin takes any FlowFile within the limit (max entries >= 1)
    return bin_


def _offer_ending(
    manager: BinManager, group: str | None, size: int, created: int, strategy: InsertionStrategy
) -> Bin:
    """BinManager's offer of a FlowFile that satisfies the Bin Termination Check."""
    bins = manager.open_bins(group)
    if strategy is InsertionStrategy.LAST_IN_BIN:
        bin_ = next((b for b in bins if _accepts(b, size)), None)
        if bin_ is None:
            bin_ = manager.new_bin(group, created)
            _put(bin_, size)
        bin_.complete()
        return bin_
    still_open = next((b for b in bins if not b.completed), None)
    if still_open is not None:
        still_open.complete()
    bin_ = manager.new_bin(group, created)
    _put(bin_, size)
    if strategy is InsertionStrategy.ISOLATED:
        bin_.complete()
    return bin_


def _endings(
    context: ProcessContext,
    batches: Sequence[FlowFileBatch],
    intake: _Intake,
) -> tuple[np.ndarray | None, InsertionStrategy]:
    """The Bin Termination Check's value for each FlowFile in queue order (None: no check).

    Evaluated over columns, each value as ``evaluate_boolean`` gives it for the FlowFile.

    Raises:
        ExpressionEvaluationError: the check fails for some FlowFile (the batch form then
            declines, and the one-by-one path meets the failure).
    """
    text = context.get_property(props.BIN_TERMINATION_CHECK).value
    if bins.defragments(context) or not text:
        return None, InsertionStrategy.LAST_IN_BIN
    strategy = InsertionStrategy(context.get_property(props.FLOWFILE_INSERTION_STRATEGY).value)
    expression = compile_expression(text)
    values = [evaluate_boolean_column(expression, b, clock=context.now) for b in batches]
    if not values:
        return np.zeros(0, dtype=bool), strategy
    return np.concatenate(values)[intake.order], strategy


def _common_size(intake: _Intake, limits: BinLimits) -> int | None:
    """The size every FlowFile counts as in runs (:func:`_offer`); None when they cannot.

    Without a byte limit sizes never refuse a FlowFile, so all count as 1 byte; with one, they
    must all be one size within it.
    """
    if limits.max_bytes >= UNLIMITED or not len(intake):
        return 1
    size = int(intake.sizes[0])
    if size > limits.max_bytes or np.any(intake.sizes != size):
        return None
    return size


def bin_batches(
    context: ProcessContext,
    batches: Sequence[FlowFileBatch],
    *,
    end_of_input: bool,
    intake_size: int,
) -> BatchBinning | None:
    """The bins MergeContent's triggers make from *batches*, or None when it cannot say."""
    if not _bins_batches(context):
        return None
    if bins.defragments(context):
        return _defragment(context, batches, end_of_input=end_of_input, intake_size=intake_size)
    limits = bins.bin_limits(context)
    intake = _Intake(batches, context.get_property(props.CORRELATION_ATTRIBUTE_NAME).value)
    ending, strategy = _endings(context, batches, intake)
    size = _common_size(intake, limits) if ending is None else None
    manager = BinManager(limits, age_from_queue_date=context.resumed_bins)
    max_bins = context.get_property(props.MAX_BIN_COUNT).as_integer() or 5
    ready: list[Bin] = []

    def trigger() -> int:
        """One on_trigger_sessions; returns how many FlowFiles it binned.

        It takes *intake_size* FlowFiles at a time while the bin count allows, then migrates.
        """
        binned = 0
        skipped = manager.bin_count > max_bins
        while not skipped and intake.taken < len(intake) and manager.bin_count <= max_bins:
            stop = min(len(intake), intake.taken + intake_size)
            binned += stop - intake.taken
            if size is None:
                _offer_each(
                    manager,
                    intake,
                    stop,
                    context.now(),
                    ending=ending,
                    strategy=strategy,
                    alone=ready,
                )
            else:
                _offer(manager, intake, stop, size, context.now())
        ready.extend(
            bins.take_ready(
                manager, context, relaxed=binned == 0, max_bins=max_bins, could_not_bin=skipped
            )
        )
        return binned

    while intake.taken < len(intake) and trigger():  # triggered while the input shrinks
        pass
    trigger()  # and once more when it is done (NiFi's @TriggerWhenEmpty)
    if end_of_input:
        for bin_ in manager.purge():
            bin_.reason = EvictionReason.END_OF_INPUT
            ready.append(bin_)
    return BatchBinning(tuple(ready), tuple(manager.bins()), intake.left())


def _numbers(batches: Sequence[FlowFileBatch], name: str) -> np.ndarray | None:
    """Attribute *name* of every FlowFile as whole numbers; None if one is missing or not one."""
    parts = []
    for batch in batches:
        column = batch.column(name)
        if isinstance(column, IntColumn):
            parts.append(column.numbers)
            continue
        if column is None:
            return None
        codes, values = column.encoded()
        if any(v is None or not v.isdigit() for v in values):
            return None
        parts.append(np.array([int(v) for v in values], dtype=np.int64)[codes])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _defragment(
    context: ProcessContext,
    batches: Sequence[FlowFileBatch],
    *,
    end_of_input: bool,
    intake_size: int,
) -> BatchBinning | None:
    """Defragment's bins from batches, in ``fragment.index`` order.

    Each ``fragment.identifier``'s FlowFiles make a bin, ready once all ``fragment.count``
    fragments are there.

    Only the plain case is taken: whole-number counts and indices, one count per group, no
    index twice, no bin evicted for want of room (more groups
    than Maximum Number of Bins are fine when their bins complete in turn, as one file's
    fragments queued together do: :func:`_evicts` replays the triggers), none past Max Bin Age,
    and not at the end of the input with a group incomplete. Everything else (what ends in
    failure) declines and takes the per-FlowFile path, which reports it.
    """
    intake = _Intake(batches, FRAGMENT_ID)
    counts, indices = _numbers(batches, FRAGMENT_COUNT), _numbers(batches, FRAGMENT_INDEX)
    if counts is None or indices is None:
        return None
    counts, indices = counts[intake.order], indices[intake.order]
    max_bins = context.get_property(props.MAX_BIN_COUNT).as_integer() or 5
    codes, first = np.unique(intake.groups, return_index=True)
    wanted_of = dict(zip(codes.tolist(), counts[first].tolist(), strict=True))
    if len(codes) > max_bins and _evicts(intake.groups, wanted_of, max_bins, intake_size):
        return None
    max_age = bins.max_bin_age_ms(context)
    now = context.now()
    ready, waiting = [], []
    for code in codes[np.argsort(first)]:
        positions = np.flatnonzero(intake.groups == code)
        wanted = int(counts[positions[0]])
        mine = indices[positions]
        if np.any(counts[positions] != wanted) or len(np.unique(mine)) != len(mine):
            return None
        created = min(now, int(intake.dates[positions[0]]) or now)
        if max_age is not None and now - created > max_age:
            return None  # timed out: failure, per FlowFile
        complete = len(mine) == wanted and mine.min() == 1 and mine.max() == wanted
        if not complete and (len(mine) >= wanted or end_of_input):
            return None
        limits = BinLimits(wanted, UNLIMITED, wanted, UNLIMITED)
        bin_ = Bin(intake.group_names[int(code)], limits, created, FRAGMENT_COUNT)
        bin_.pieces.extend(intake.pieces(positions))
        bin_.entries, bin_.size = len(positions), int(intake.sizes[positions].sum())
        if complete:
            bin_.reason = EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED
            ready.append(bin_)
        else:
            waiting.append(bin_)
    intake.taken = len(intake)
    return BatchBinning(tuple(ready), tuple(waiting), ())


def in_fragment_order(batches: Sequence[FlowFileBatch]) -> list[FlowFileBatch]:
    """A Defragment bin's cuts in ``fragment.index`` order, as the bundle takes them.

    The bin holds its fragments in queue order, and its originals leave in that order; the
    bundle's contents and its JOIN's parents follow the index, as the one-by-one path sorts
    them. Fragments queued in index order keep their cuts; others are cut again into runs.
    """
    indices = _numbers(batches, FRAGMENT_INDEX)
    if indices is None or not len(indices) or np.all(np.diff(indices) >= 0):
        return list(batches)
    order = np.argsort(indices, kind="stable")
    which = np.repeat(np.arange(len(batches)), [b.count for b in batches])[order]
    rows = np.concatenate([np.arange(b.count) for b in batches])[order]
    breaks = np.flatnonzero((which[1:] != which[:-1]) | (rows[1:] != rows[:-1] + 1)) + 1
    starts, stops = [0, *breaks.tolist()], [*breaks.tolist(), len(order)]
    return [
        batches[int(which[start])].take(rows[start:stop])
        for start, stop in zip(starts, stops, strict=True)
    ]


def _evicts(groups: np.ndarray, wanted_of: dict[int, int], max_bins: int, intake_size: int) -> bool:
    """Whether Defragment's triggers would evict a bin for want of room (it then fails).

    Replays MergeContent's triggers over the group codes in queue order: intakes of
    *intake_size* while at most *max_bins* bins are open (a completed bin still counts until
    the trigger ends), then the completed bins leave; with none completed and more bins than
    room, the oldest would be evicted, incomplete.
    """
    missing: dict[int, int] = {}  # open bins: group code -> fragments still to come
    taken, total = 0, len(groups)
    while taken < total:
        skipped = len(missing) > max_bins
        if not skipped:
            while len(missing) <= max_bins and taken < total:
                chunk = groups[taken : taken + intake_size]
                codes, counts = np.unique(chunk, return_counts=True)
                for code, count in zip(codes.tolist(), counts.tolist(), strict=True):
                    missing[code] = missing.get(code, wanted_of[code]) - count
                taken += len(chunk)
        done = [code for code, left in missing.items() if left <= 0]
        for code in done:
            del missing[code]
        if not done and (len(missing) > max_bins or (len(missing) == max_bins and skipped)):
            return True
    return False


def representatives(batches: Sequence[FlowFileBatch]) -> list[FlowFile]:
    """FlowFiles standing for all of *batches* in attribute comparisons.

    Kept-common and kept-unique attributes of a bundle depend only on which values each
    attribute takes: absent, one value, or two or more. A batch's first and last FlowFile show
    the attributes holding their own uuid; for each column, the first FlowFile without it and
    the first two with distinct values show the rest. One FlowFile stands alone.
    """
    chosen = []
    for batch in batches:
        rows = {0, batch.count - 1} if batch.count else set()
        for column in batch.columns.values():
            if isinstance(column, IntColumn):  # never absent: the first two distinct values
                numbers = column.numbers
                other = np.flatnonzero(numbers != numbers[0])
                rows.update([0, *other[:1].tolist()] if len(numbers) else [])
                continue
            codes, values = column.encoded()
            distinct, first = np.unique(codes, return_index=True)
            present = [
                int(r) for c, r in zip(distinct, first, strict=True) if values[c] is not None
            ]
            absent = [int(r) for c, r in zip(distinct, first, strict=True) if values[c] is None]
            rows.update(present[:2] + absent[:1])
        chosen.extend(batch.flowfile(r) for r in sorted(rows))
    return chosen


def batch_contents(
    batches: Sequence[FlowFileBatch], demarcator: bytes | None
) -> list[Content | RangeGather | None]:
    """The contents to concatenate, as few parts as the cuts allow.

    One range per cut whose contents lie back to back, else the cut's ranges gathered in one
    pass where they increase (a split file's lines), else a range per FlowFile.
    """
    each = demarcator is not None
    contents: list[Content | RangeGather | None] = []
    for batch in batches:
        if not each and batch.back_to_back():
            claim = None
            if batch.resource_claim is not None and batch.bytes:
                claim = ContentClaim(batch.resource_claim, int(batch.offsets[0]), batch.bytes)
            contents.append(claim)
        elif batch.resource_claim is not None and batch.count and _increasing(batch):
            gather = RangeGather(
                batch.resource_claim, batch.offsets, batch.sizes, demarcator or b""
            )
            contents.append(gather)
        else:
            contents.extend(batch.content(i) for i in range(batch.count))
    return contents


def _increasing(batch: FlowFileBatch) -> bool:
    """Whether the contents follow each other in the claim, apart or touching."""
    offsets, sizes = batch.offsets, batch.sizes
    return bool(np.all(offsets[1:] >= offsets[:-1] + sizes[:-1]))


def uuid_runs(batch: FlowFileBatch) -> list[tuple[str, int, int, int]]:
    """*batch*'s uuids as ``(prefix, first number, count, step)`` runs.

    A run holds numbers moving by equal steps: a bin of one group out of eight takes every
    eighth split, one run.
    """
    numbers = batch.uuid_numbers
    if len(numbers) < 3:
        return [(batch.uuid_key, int(n), 1, 1) for n in numbers.tolist()]
    steps = np.diff(numbers)
    if not steps.all():  # a uuid twice (never made so): runs of one
        return [(batch.uuid_key, int(n), 1, 1) for n in numbers.tolist()]
    # each stretch of equal steps, less its last number (the next stretch's first)
    starts = [0, *(np.flatnonzero(steps[1:] != steps[:-1]) + 1).tolist()]
    stops = [*starts[1:], len(steps)]
    firsts, strides = numbers[starts].tolist(), steps[starts].tolist()
    key = batch.uuid_key
    runs = [
        (key, first, stop - start, stride)
        for first, start, stop, stride in zip(firsts, starts, stops, strides, strict=True)
    ]
    runs.append((key, int(numbers[-1]), 1, 1))
    return runs


def merge_bundle(
    context: ProcessContext,
    session: ProcessSession,
    batches: Sequence[FlowFileBatch],
    bin_: Bin,
    *,
    drop: frozenset[str] = frozenset(),
) -> FlowFile:
    """The merged FlowFile of a bin of batch cuts, created and written in *session*.

    *drop* names attributes the bundle must not keep (Defragment's ``fragment.*``).

    Raises:
        ProcessException: a delimiter file cannot be read (the bin is then merged one by one,
            which routes its FlowFiles to failure).
    """
    shown = representatives(batches)
    first = shown[0]
    merger = formats.MERGERS[formats.FORMAT_CONCAT]
    options = bins.merge_options(context, drop=drop)
    header = merger._delimiter(options.header, first, options)  # type: ignore[attr-defined]
    footer = merger._delimiter(options.footer, first, options)  # type: ignore[attr-defined]
    demarcator = merger._delimiter(options.demarcator, first, options)  # type: ignore[attr-defined]
    oldest = min(
        (b.flowfile(int(np.argmin(b.lineage_start_indices))) for b in batches if b.count),
        key=lambda f: (f.lineage_start_date, f.lineage_start_index),
    )
    parents = CountedUuids(run for b in batches for run in uuid_runs(b))
    bundle = session.create_joined(parents, common_attributes(shown), oldest)
    contents = batch_contents(batches, demarcator)
    bundle = session.merge_contents(
        contents, bundle, header, footer, demarcator, zero_copy=options.zero_copy
    )
    attributes = bins.bundle_attributes(
        context, shown, len(parents), merger=merger, merge_format=formats.FORMAT_CONCAT, bin_=bin_
    )
    if len(shown) > 1 and not first.attributes.get(SEGMENT_ORIGINAL_FILENAME):
        attributes["filename"] = bundle_number(batches)  # of every FlowFile, not those shown
    return session.put_all_attributes(bundle, attributes)


def bundle_number(batches: Sequence[FlowFileBatch]) -> str:
    """The default name of a bundle of the FlowFiles of *batches*, as the one-by-one path's.

    :func:`processors._merge_bundles.bundle_filename` digests every bundled FlowFile's uuid,
    one after another; here the uuids come from the batches' numbers, a byte string per batch.
    """
    digest = hashlib.blake2b(digest_size=8)
    for batch in batches:
        digest.update(batch.uuid_bytes())
    return str(int.from_bytes(digest.digest(), "big") >> 1)
