"""MergeContent over FlowFile batches: bins packed and merged without a FlowFile object each.

A task's input that arrived as :class:`~flowcore.flowfile_batch.FlowFileBatch` values (10,000
FlowFiles that differ only by position) is binned by count: a batch's FlowFiles all have one
size, so :meth:`~flowcore.binning.BinManager.offer_cut` places a run of them exactly where
offering them one by one would. The triggers are replayed as the engine makes them (1,000
FlowFiles per intake, the bin-count check between intakes, migrate after each trigger, one more
trigger with the input exhausted, then end of input), so the bins, their reasons and their
order are the one-by-one path's. A ready bin is merged from its cuts' byte ranges, with one JOIN
for the bundle; the engine moves the originals as batches.

Only Bin-Packing into one group (no Correlation Attribute Name, no Bin Termination Check) with
Binary Concatenation is done this way; anything else declines and takes the usual path.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import processors._merge_formats as formats
from flowcore.binning import BatchBinning, Bin, BinManager, EvictionReason
from flowcore.flowfile import ContentClaim, CountedUuids, FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from processors._merge_bundles import common_attributes

if TYPE_CHECKING:
    from flowcore.flowfile import Content
    from flowcore.process_context import ProcessContext
    from flowcore.session.process_session import ProcessSession
    from processors.merge_content import MergeContent

__all__ = ["bin_batches", "merge_bundle", "representatives"]


def _merges_batches(processor: MergeContent, context: ProcessContext) -> bool:
    """Whether this configuration's bins can be packed and merged from batches."""
    if not processor.single_group(context):  # also excludes Defragment
        return False
    if context.get_property(processor.BIN_TERMINATION_CHECK).value:
        return False
    return context.get_property(processor.MERGE_FORMAT).value == formats.FORMAT_CONCAT


def bin_batches(
    processor: MergeContent,
    context: ProcessContext,
    batches: Sequence[FlowFileBatch],
    *,
    end_of_input: bool,
    intake_size: int,
) -> BatchBinning | None:
    """The bins MergeContent's triggers make from *batches*, or None when it cannot say."""
    if not _merges_batches(processor, context):
        return None
    limits = processor._limits(context)
    if any(b.count and b.sizes.min() != b.sizes.max() for b in batches):
        return None  # packed by count only while every FlowFile of a batch has one size
    if any(b.count and b.sizes[0] > limits.max_bytes for b in batches):
        return None  # an oversize FlowFile is merged alone: the one-by-one path does that
    manager = BinManager(limits, age_from_queue_date=context.resumed_bins)
    max_bins = context.get_property(processor.MAX_BIN_COUNT).as_integer() or 5
    intake = deque((i, 0, b.count) for i, b in enumerate(batches) if b.count)
    ready: list[Bin] = []

    def trigger() -> int:
        """One on_trigger_sessions; returns how many FlowFiles it binned.

        It takes *intake_size* FlowFiles at a time while the bin count allows, then migrates.
        """
        binned = 0
        skipped = manager.bin_count > max_bins
        while not skipped and intake and manager.bin_count <= max_bins:
            wanted, now = intake_size, context.now()
            while wanted and intake:
                index, start, stop = intake.popleft()
                end = min(stop, start + wanted)
                if end < stop:
                    intake.appendleft((index, end, stop))
                batch = batches[index]
                created = min(now, batch.queue_date or now) if manager.age_from_queue_date else now
                manager.offer_cut(None, (index, start, end), int(batch.sizes[0]), created)
                wanted -= end - start
                binned += end - start
        ready.extend(
            processor._take_ready(
                manager, context, relaxed=binned == 0, max_bins=max_bins, could_not_bin=skipped
            )
        )
        return binned

    while intake and trigger():  # the engine triggers while the input shrinks
        pass
    trigger()  # and once more when it is done (NiFi's @TriggerWhenEmpty)
    if end_of_input:
        for bin_ in manager.purge():
            bin_.reason = EvictionReason.END_OF_INPUT
            ready.append(bin_)
    return BatchBinning(tuple(ready), tuple(manager.bins()), tuple(intake))


def representatives(batches: Sequence[FlowFileBatch]) -> list[FlowFile]:
    """FlowFiles standing for all of *batches* in attribute comparisons.

    A batch's FlowFiles differ only in the attributes holding their own uuid, so its first and
    last FlowFile show every attribute that is not common to all; one FlowFile stands alone.
    """
    chosen = []
    for batch in batches:
        chosen.append(batch.flowfile(0))
        if batch.count > 1:
            chosen.append(batch.flowfile(batch.count - 1))
    return chosen


def _contents(batches: Sequence[FlowFileBatch], each: bool) -> list[Content | None]:
    """The contents to concatenate: one range per cut whose contents lie back to back."""
    contents: list[Content | None] = []
    for batch in batches:
        if not each and batch.back_to_back():
            claim = None
            if batch.resource_claim is not None and batch.bytes:
                claim = ContentClaim(batch.resource_claim, int(batch.offsets[0]), batch.bytes)
            contents.append(claim)
        else:
            contents.extend(batch.content(i) for i in range(batch.count))
    return contents


def uuid_runs(batch: FlowFileBatch) -> list[tuple[str, int, int]]:
    """*batch*'s uuids as ``(prefix, first number, count)`` runs of consecutive numbers."""
    numbers = batch.uuid_numbers
    if not len(numbers):
        return []
    breaks = np.flatnonzero(numbers[1:] != numbers[:-1] + 1) + 1
    edges = [0, *breaks.tolist(), len(numbers)]
    return [
        (batch.uuid_key, int(numbers[start]), stop - start)
        for start, stop in itertools.pairwise(edges)
    ]


def merge_bundle(
    processor: MergeContent,
    context: ProcessContext,
    session: ProcessSession,
    batches: Sequence[FlowFileBatch],
    bin_: Bin,
) -> FlowFile:
    """The merged FlowFile of a bin of batch cuts, created and written in *session*.

    Raises:
        ProcessException: a delimiter file cannot be read (the bin is then merged one by one,
            which routes its FlowFiles to failure).
    """
    shown = representatives(batches)
    first = shown[0]
    merger = formats.MERGERS[formats.FORMAT_CONCAT]
    options = processor._options(context)
    header = merger._delimiter(options.header, first, options)  # type: ignore[attr-defined]
    footer = merger._delimiter(options.footer, first, options)  # type: ignore[attr-defined]
    demarcator = merger._delimiter(options.demarcator, first, options)  # type: ignore[attr-defined]
    oldest = min(
        (b.flowfile(int(np.argmin(b.lineage_start_indices))) for b in batches if b.count),
        key=lambda f: (f.lineage_start_date, f.lineage_start_index),
    )
    parents = CountedUuids(run for b in batches for run in uuid_runs(b))
    bundle = session.create_joined(parents, common_attributes(shown), oldest)
    contents = _contents(batches, each=demarcator is not None)
    bundle = session.merge_contents(
        contents, bundle, header, footer, demarcator, zero_copy=options.zero_copy
    )
    attributes = processor._bundle_attributes(
        context, shown, len(parents), merger=merger, merge_format=formats.FORMAT_CONCAT, bin_=bin_
    )
    return session.put_all_attributes(bundle, attributes)
