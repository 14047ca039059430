"""MergeContent's bins as both of its paths decide and merge them: one FlowFile or batch at a time.

:class:`HeldBins` is the part every processor holding bins in sessions shares (MergeContent,
MergeRecord, JoinEnrichment): the ready-bin loop, the ``end_of_input`` purge and
``on_stopped``; each processor keeps only its binning and its merge (``merge_bin``).

Functions of the processor's context, read at each use as the processor reads its properties:
whether it defragments, its bin limits and age, which bins are ready (NiFi's ``migrateBins``),
and the bundle written from a bin's contents with its attributes (NiFi's ``processBin``, less
the routing). The processor (``merge_content``) and its batch forms (``_merge_batches``,
``_merge_entries``) call them alike, so the batch forms never need the processor class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import processors._merge_bundles as bundles
import processors._merge_formats as formats
import processors._merge_properties as props
from flowcore.processor.binning import (
    FRAGMENT_COUNT,
    FRAGMENT_INDEX,
    UNLIMITED,
    BinLimits,
    EvictionReason,
)
from flowcore.processor.kinds import BinningProcessor
from processors._merge_bundles import FRAGMENT_ID, SEGMENT_ORIGINAL_FILENAME

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.processor.binning import Bin, BinManager
    from flowcore.processor.context import ProcessContext
    from flowcore.properties import PropertyDescriptor
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "DEFRAGMENT_DROPPED",
    "MERGE_BIN_AGE",
    "MERGE_COUNT",
    "MERGE_REASON",
    "HeldBins",
    "bin_limits",
    "bundle_attributes",
    "defragments",
    "max_bin_age_ms",
    "merge_format",
    "merge_options",
    "merged",
    "take_ready",
]

MERGE_COUNT = "merge.count"
MERGE_BIN_AGE = "merge.bin.age"
MERGE_REASON = "merge.reason"
# A reassembled file is whole: current NiFi strips the fragment attributes from it (and from
# FlowFiles packaged inside it).
DEFRAGMENT_DROPPED = frozenset(
    {FRAGMENT_ID, FRAGMENT_INDEX, FRAGMENT_COUNT, SEGMENT_ORIGINAL_FILENAME}
)


class HeldBins(BinningProcessor):
    """A binning processor whose open bins each hold their FlowFiles in a session of its own.

    The subclass bins FlowFiles into ``_manager`` (a :class:`~flowcore.processor.binning.BinManager`
    or one like it: ``purge`` and ``bin_count``), opens a session per bin in ``_sessions`` (by bin
    id) and appends ready bins to ``_ready``; this class processes the ready bins (handed to
    the engine's ``bin_sink``, or merged here by ``merge_bin`` and committed), merges the
    open ones at the end of the input and rolls them all back when stopped. Bins never
    travel with the processor (pickled to executors: none).
    """

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._reset()

    def _reset(self) -> None:
        self._manager: Any = None
        self._ready: list[Bin] = []
        self._sessions: dict[int, ProcessSession] = {}

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state.update(_manager=None, _ready=[], _sessions={})  # bins never travel
        state.pop("_connections", None)  # DuckConnections.of(self): each copy opens its own
        return state

    def _merged_here(self, bin_: Bin) -> bool:
        """Whether *bin_* is merged in this task even when the engine takes bins (``bin_sink``).

        False by default; MergeRecord keeps a bin that already failed.
        """
        del bin_
        return False

    def _process_ready(self, context: ProcessContext) -> None:
        """Hand each ready bin to the engine, or merge it and commit its session."""
        while self._ready:
            bin_ = self._ready.pop(0)
            session = self._sessions.pop(bin_.id)
            if context.bin_sink is not None and not self._merged_here(bin_):
                context.bin_sink(bin_, session)  # the engine merges it in another task
                continue
            try:
                self.merge_bin(context, session, bin_)
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def end_of_input(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """Process every open bin (``END_OF_INPUT``): no FlowFile can join it any more."""
        del session_factory  # each bin already has its session
        if self._manager is None:
            return
        for bin_ in self._manager.purge():
            bin_.reason = EvictionReason.END_OF_INPUT
            self._ready.append(bin_)
        self._process_ready(context)

    def on_stopped(self, context: ProcessContext) -> None:
        """Roll every held bin back: its FlowFiles return to the queue (NiFi's resetState)."""
        del context
        held = list(self._ready)
        if self._manager is not None:
            held.extend(self._manager.purge())
        for bin_ in held:
            session = self._sessions.pop(bin_.id, None)
            if session is not None:
                session.rollback()
        connections = self.__dict__.get("_connections")  # JoinEnrichment's SQL, per thread
        if connections is not None:
            connections.close()
        self._reset()


def defragments(context: ProcessContext) -> bool:
    """Whether the Merge Strategy is Defragment (else Bin-Packing)."""
    return context.get_property(props.MERGE_STRATEGY).value == props.MERGE_STRATEGY_DEFRAGMENT.value


def bin_limits(context: ProcessContext) -> BinLimits:
    """The entries and bytes a bin holds before it is full (Defragment's have none)."""
    if defragments(context):
        return BinLimits(0, UNLIMITED, UNLIMITED, UNLIMITED)
    max_size = context.get_property(props.MAX_SIZE).as_data_size("B")
    return BinLimits(
        min_bytes=int(context.get_property(props.MIN_SIZE).as_data_size("B") or 0),
        max_bytes=int(max_size) if max_size is not None else UNLIMITED,
        min_entries=context.get_property(props.MIN_ENTRIES).as_integer() or 1,
        max_entries=context.get_property(props.MAX_ENTRIES).as_integer() or 1000,
    )


def max_bin_age_ms(context: ProcessContext) -> int | None:
    """Max Bin Age in milliseconds (None when not set)."""
    age = context.get_property(props.MAX_BIN_AGE).as_time_period("ms")
    return int(age) if age is not None else None


def take_ready(
    manager: BinManager,
    context: ProcessContext,
    *,
    relaxed: bool,
    max_bins: int,
    could_not_bin: bool,
) -> list[Bin]:
    """NiFi's migrate: the ready bins, or the oldest when the manager is over its count."""
    ready = manager.remove_ready_bins(
        relaxed=relaxed, now_ms=context.now(), max_age_ms=max_bin_age_ms(context)
    )
    count = manager.bin_count
    if not ready and (count > max_bins or (count == max_bins and could_not_bin)):
        oldest = manager.remove_oldest_bin()
        if oldest is not None:
            ready.append(oldest)
    return ready


def merge_format(context: ProcessContext) -> str:
    """The Merge Format's value."""
    return context.get_property(props.MERGE_FORMAT).value or formats.FORMAT_CONCAT


def merged(
    context: ProcessContext,
    session: ProcessSession,
    bundle: FlowFile,
    contents: Sequence[FlowFile],
    bin_: Bin,
    *,
    read: formats.ContentReader | None = None,
    shown: Sequence[FlowFile] | None = None,
) -> tuple[FlowFile, list[FlowFile]]:
    """Write *contents* into *bundle* in the Merge Format and give it its attributes.

    Both paths merge here: the one-by-one path with the FlowFiles its session holds, a
    batch merge with the bin's FlowFiles made from its cuts, their bytes from *read*, and
    FlowFiles standing for them all in attribute comparisons (*shown*, see
    :func:`processors._merge_batches.representatives`).

    Returns:
        The bundle, and the FlowFiles the format left out (they go to failure).

    Raises:
        ProcessException: the contents cannot be merged (the bin goes to failure).
    """
    chosen = merge_format(context)
    merger = formats.MERGERS[chosen]
    defragment = defragments(context)
    options = merge_options(context, drop=DEFRAGMENT_DROPPED if defragment else frozenset())
    bundle, unmerged = merger.merge(session, bundle, contents, options, read=read)
    attributes = bundle_attributes(
        context,
        contents if shown is None else shown,
        len(contents),
        merger=merger,
        merge_format=chosen,
        bin_=bin_,
        named=contents,
    )
    bundle = session.put_all_attributes(bundle, attributes)
    if defragment:
        bundle = session.remove_all_attributes(bundle, DEFRAGMENT_DROPPED)
    return bundle, unmerged


def merge_options(
    context: ProcessContext, drop: frozenset[str] = frozenset()
) -> formats.MergeOptions:
    """The options the mergers take, from the properties in effect (dependencies met)."""
    active = context.processor.active_values()

    def value(descriptor: PropertyDescriptor) -> str | None:
        return active.get(descriptor.name)

    return formats.MergeOptions(
        delimiter_strategy=value(props.DELIMITER_STRATEGY) or props.DELIMITER_STRATEGY_NONE,
        header=value(props.HEADER),
        footer=value(props.FOOTER),
        demarcator=value(props.DEMARCATOR),
        keep_path=(value(props.KEEP_PATH) or "false").lower() == "true",
        compression_level=int(value(props.COMPRESSION_LEVEL) or "1"),
        tar_modified_time=value(props.TAR_MODIFIED_TIME),
        metadata_strategy=value(props.METADATA_STRATEGY) or formats.METADATA_DO_NOT_MERGE,
        zero_copy=(value(props.ZERO_COPY) or "false").lower() == "true",
        now_ms=context.now(),
        drop_attributes=drop,
    )


def bundle_attributes(
    context: ProcessContext,
    contents: Sequence[FlowFile],
    count: int,
    *,
    merger: formats.Merger,
    merge_format: str,
    bin_: Bin,
    named: Sequence[FlowFile] | None = None,
) -> dict[str, str]:
    """The bundle's attributes from *contents* (or FlowFiles standing for all *count*).

    The default name digests the uuids of *named*: every FlowFile of the bin (*contents*
    when None).
    """
    strategy = context.get_property(props.ATTRIBUTE_STRATEGY).value
    if strategy == props.ATTRIBUTE_STRATEGY_ALL_UNIQUE.value:
        attributes = bundles.all_unique_attributes(contents)
    else:
        attributes = bundles.common_attributes(contents)
    attributes.pop("uuid", None)
    attributes["mime.type"] = merger.bundle_mime_type(contents)
    if merge_format != formats.FORMAT_AVRO:
        attributes["filename"] = bundles.bundle_filename(named or contents, merger.suffix)
    attributes[MERGE_COUNT] = str(count)
    attributes[MERGE_BIN_AGE] = str(max(0, context.now() - bin_.created_ms))
    attributes[MERGE_REASON] = bin_.reason.value if bin_.reason else "UNSET"
    return attributes
