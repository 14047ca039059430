"""MergeRecord: merge record FlowFiles of like schema into one, by bin packing or defragmenting."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import processors._merge_properties as merge_props
from flowcore.errors import RecordError
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, constant_column
from flowcore.processor.binning import UNLIMITED, Bin, EvictionReason
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.records.avro_schema import schema_text
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    services,
)
from flowcore.records.schema import RecordSchema
from flowcore.session.process_session import ProcessSession
from flowcore.session.streams import WriteStream
from flowcore.validators import (
    ValidationResult,
)
from processors._merge_bins import HeldBins
from processors._merge_bundles import FRAGMENT_ID, all_unique_attributes, common_attributes
from processors._merge_record_bins import (
    COMPLETION_REASONS,
    RecordBin,
    RecordBinManager,
    RecordLimits,
    fragment_problem,
)
from processors.record_services.schema_access import RecordReaderService, RecordWriterService

__all__ = ["MergeRecord"]

# NiFi's MergeRecord descriptors, declared beside MergeContent's (processors/_merge_properties.py)
MERGE_STRATEGY_BIN_PACK = merge_props.MERGE_STRATEGY_BIN_PACK
MERGE_STRATEGY_DEFRAGMENT = merge_props.RECORD_MERGE_STRATEGY_DEFRAGMENT
MERGE_STRATEGY = merge_props.RECORD_MERGE_STRATEGY
CORRELATION_ATTRIBUTE_NAME = merge_props.RECORD_CORRELATION_ATTRIBUTE_NAME
MIN_SIZE = merge_props.RECORD_MIN_SIZE
MAX_SIZE = merge_props.RECORD_MAX_SIZE
MIN_RECORDS = merge_props.RECORD_MIN_RECORDS
MAX_RECORDS = merge_props.RECORD_MAX_RECORDS
MAX_BIN_COUNT = merge_props.RECORD_MAX_BIN_COUNT
MAX_BIN_AGE = merge_props.RECORD_MAX_BIN_AGE

MERGE_COUNT = "merge.count"
MERGE_BIN_AGE = "merge.bin.age"
MERGE_UUID = "merge.uuid"
MERGE_COMPLETION_REASON = "merge.completion.reason"
RECORD_COUNT = "record.count"
INTAKE = 250  # FlowFiles pulled per session, as NiFi's MergeRecord

REL_MERGED = Relationship("merged", "The FlowFile containing the merged records")
REL_ORIGINAL = Relationship("original", "The FlowFiles that were used to create the bundle")
REL_FAILURE = Relationship(
    "failure",
    "If the bundle cannot be created, all FlowFiles that would have been used to created the "
    "bundle will be transferred to failure",
)


class MergeRecord(HeldBins):
    """Merges record FlowFiles into one FlowFile holding all their records (NiFi's MergeRecord).

    FlowFiles are binned by their schema (as the Record Reader gives it) and, when set, the
    Correlation Attribute's value; Defragment bins by ``fragment.identifier`` until
    ``fragment.count`` FlowFiles are in. A bin counts its records from each FlowFile's
    ``record.count`` attribute, or by reading its records once when absent; with Minimum or
    Maximum Bin Size set, its bytes are those the bin's Record Writer writes (each FlowFile's
    records written through it to a counter as the FlowFile joins, as NiFi's bin counts its
    writer's output). Limits are NiFi's soft ones (a bin takes a whole FlowFile). A complete
    bin's records are read again and written with the Record Writer, batch by batch, into the
    merged FlowFile (memory bounded by a batch); it gets ``record.count``, ``mime.type``, the
    writer's attributes, ``merge.count``, ``merge.bin.age`` and ``merge.completion.reason``,
    each original ``merge.uuid``, and a JOIN event records it. If any record cannot be read or
    written, every FlowFile of the bin goes to ``failure`` (none of its records half merged).
    """

    MERGE_STRATEGY = MERGE_STRATEGY
    CORRELATION_ATTRIBUTE_NAME = CORRELATION_ATTRIBUTE_NAME
    ATTRIBUTE_STRATEGY = merge_props.ATTRIBUTE_STRATEGY
    MIN_RECORDS = MIN_RECORDS
    MAX_RECORDS = MAX_RECORDS
    MIN_SIZE = MIN_SIZE
    MAX_SIZE = MAX_SIZE
    MAX_BIN_AGE = MAX_BIN_AGE
    MAX_BIN_COUNT = MAX_BIN_COUNT

    property_descriptors: ClassVar = (
        RECORD_READER,
        RECORD_WRITER,
        MERGE_STRATEGY,
        CORRELATION_ATTRIBUTE_NAME,
        merge_props.ATTRIBUTE_STRATEGY,
        MIN_RECORDS,
        MAX_RECORDS,
        MIN_SIZE,
        MAX_SIZE,
        MAX_BIN_AGE,
        MAX_BIN_COUNT,
    )
    relationships: ClassVar = (REL_ORIGINAL, REL_FAILURE, REL_MERGED)
    tags: ClassVar = ("merge", "record", "content", "correlation", "stream", "event")
    reads_attributes: ClassVar[Mapping[str, str]] = {
        FRAGMENT_ID: "Defragment: all FlowFiles with the same value are bundled together",
        "fragment.count": "Defragment: how many FlowFiles make the bundle",
        RECORD_COUNT: "How many records the FlowFile holds (else they are counted)",
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        RECORD_COUNT: "The number of records written to the merged FlowFile",
        "mime.type": "The MIME Type indicated by the Record Writer",
        MERGE_COUNT: "The number of FlowFiles that were merged into this bundle",
        MERGE_BIN_AGE: "The age of the bin, in milliseconds, when it was merged and output",
        MERGE_UUID: "UUID of the merged FlowFile, added to the original FlowFiles",
        MERGE_COMPLETION_REASON: "Why the bin was completed",
        "<Attributes from Record Writer>": "Any attribute the Record Writer returns",
    }

    # --- configuration -----------------------------------------------------------------------

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """NiFi's checks: Maximum Number of Records >= Minimum, Maximum Bin Size >= Minimum."""
        from flowcore.units import parse_data_size  # noqa: PLC0415 - only for this check

        problems = []
        low, high = _integer(values.get(MIN_RECORDS.name)), _integer(values.get(MAX_RECORDS.name))
        if low is not None and high is not None and high < low:
            problems.append(
                ValidationResult(
                    "Max Records",
                    str(high),
                    False,
                    "<Maximum Number of Records> property cannot be smaller than <Minimum "
                    "Number of Records> property",
                )
            )
        try:
            low_size = parse_data_size(values.get(MIN_SIZE.name) or "0 B")
            high_text = values.get(MAX_SIZE.name)
            if high_text is not None and parse_data_size(high_text) < low_size:
                problems.append(
                    ValidationResult(
                        "Max Size",
                        high_text,
                        False,
                        "<Maximum Bin Size> property cannot be smaller than <Minimum Bin Size> "
                        "property",
                    )
                )
        except ValueError:
            pass  # the property's own validator says so
        return problems

    def _defragments(self, context: ProcessContext) -> bool:
        return context.get_property(MERGE_STRATEGY).value == MERGE_STRATEGY_DEFRAGMENT.value

    def _limits(self, context: ProcessContext) -> RecordLimits:
        max_size = context.get_property(MAX_SIZE).as_data_size("B")
        return RecordLimits(
            min_records=context.get_property(MIN_RECORDS)
            .evaluate_attribute_expressions()
            .as_integer()
            or 1,
            max_records=context.get_property(MAX_RECORDS)
            .evaluate_attribute_expressions()
            .as_integer()
            or 1000,
            min_bytes=int(context.get_property(MIN_SIZE).as_data_size("B") or 0),
            max_bytes=int(max_size) if max_size is not None else UNLIMITED,
            defragment=self._defragments(context),
        )

    def max_bin_age_ms(self, context: ProcessContext) -> int | None:
        """Max Bin Age in milliseconds (None when not set)."""
        age = context.get_property(MAX_BIN_AGE).as_time_period("ms")
        return int(age) if age is not None else None

    def group_key(self, context: ProcessContext, flowfile: FlowFile) -> str | None:
        """The engine's group: the correlation value or ``fragment.identifier``.

        The schema, which needs the content, splits a group further into bins here.
        """
        if self._defragments(context):
            return flowfile.attributes.get(FRAGMENT_ID)
        name = context.get_property(CORRELATION_ATTRIBUTE_NAME).value
        return flowfile.attributes.get(name) if name else None

    def group_column(self, context: ProcessContext, batch: FlowFileBatch) -> Column | None:
        """:meth:`group_key` of every FlowFile of *batch*, as a column."""
        if self._defragments(context):
            name: str | None = FRAGMENT_ID
        else:
            name = context.get_property(CORRELATION_ATTRIBUTE_NAME).value
        column = batch.column(name) if name else None
        return column if column is not None else constant_column(None, batch.count)

    def single_group(self, context: ProcessContext) -> bool:
        """Bin packing without a correlation attribute: one engine group (schemas split it)."""
        if self._defragments(context):
            return False
        return not context.get_property(CORRELATION_ATTRIBUTE_NAME).value

    def _bin_key(self, context: ProcessContext, flowfile: FlowFile, schema: RecordSchema) -> str:
        """NiFi's ``getGroupId``: the schema's text, then the correlation value."""
        if self._defragments(context):
            return flowfile.attributes.get(FRAGMENT_ID) or ""
        text = schema_text(schema)
        name = context.get_property(CORRELATION_ATTRIBUTE_NAME).value
        value = flowfile.attributes.get(name) if name else None
        return text if value is None else text + value

    # --- triggering (NiFi's MergeRecord.onTrigger) -------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Not used: MergeRecord manages its own sessions (see on_trigger_sessions)."""
        del context, session

    def on_trigger_sessions(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """Bin what is queued, complete expired and full bins, and merge them."""
        if self._manager is None:
            max_bins = context.get_property(MAX_BIN_COUNT).as_integer() or 10
            self._manager = RecordBinManager(
                self._limits(context), max_bins, age_from_queue_date=context.resumed_bins
            )
        manager = self._manager
        max_age = self.max_bin_age_ms(context)
        polled = False
        while True:
            intake = session_factory()
            flowfiles = intake.get(INTAKE)
            if not flowfiles:
                break
            polled = True
            for flowfile in flowfiles:
                self._bin(context, intake, session_factory, flowfile)
            intake.commit()
            self._ready.extend(manager.take_expired(context.now(), max_age))
            self._process_ready(context)
        self._ready.extend(manager.take_expired(context.now(), max_age))
        self._ready.extend(manager.take_full(relaxed=not polled))
        self._process_ready(context)

    def _bin(
        self,
        context: ProcessContext,
        intake: ProcessSession,
        session_factory: Callable[[], ProcessSession],
        flowfile: FlowFile,
    ) -> None:
        manager = self._manager
        assert manager is not None
        limits = manager.limits
        measured = not limits.defragment and (limits.min_bytes > 0 or limits.max_bytes < UNLIMITED)
        reader, writer = services(context, intake)
        assert writer is not None
        into: RecordBin | None = None
        size: int | None = None
        try:
            if measured:
                key, into, count, size, broken = self._measure(
                    context, intake, flowfile, reader, writer
                )
            else:
                schema, count, broken = _inspect(intake, flowfile, reader)
                key = self._bin_key(context, flowfile, schema)
        except RECORD_FAILURES as error:
            context.logger.error("Failed to bin %s due to %s", flowfile, error)
            intake.transfer(flowfile, REL_FAILURE)
            return
        if broken is not None:
            # As NiFi, whose bin had taken some of its records: the bin it would join fails.
            context.logger.error(
                "Failed to create merged FlowFile; routing originals to failure: %s", broken
            )
            target = manager.target(key)
            if target is None:
                intake.transfer(flowfile, REL_FAILURE)
                return
            manager.fail(target)
            intake.migrate(self._sessions[target.id], [flowfile])
            target.add(flowfile)
            self._ready.append(target)
            return
        bin_, completed = manager.add(key, flowfile, count, context.now(), size=size, into=into)
        if bin_.id not in self._sessions:
            self._sessions[bin_.id] = session_factory()
        intake.migrate(self._sessions[bin_.id], [flowfile])
        self._ready.extend(completed)

    def _measure(
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        reader: RecordReaderService,
        writer: RecordWriterService,
    ) -> tuple[str, RecordBin, int, int, RecordError | None]:
        """Write *flowfile*'s records through its bin's writer to count the bytes (NiFi's).

        Returns the bin key, the bin, the records, the bytes they added and the error of a
        record that did not parse after the first (the bin then fails).
        """
        assert self._manager is not None
        with read_records(session, flowfile, reader) as records:
            batches = iter(records)
            first = next(batches, None)  # a first batch that fails: the FlowFile fails alone
            schema = records.schema or RecordSchema(())
            key = self._bin_key(context, flowfile, schema)
            bin_ = self._manager.bin_for(key, flowfile, context.now())
            if bin_.measure is None:
                bin_.measure = _Measure(
                    writer, first.schema if first is not None else schema, flowfile
                )
            before = bin_.measure.bytes
            count = 0
            try:
                for batch in itertools.chain([first] if first is not None else [], batches):
                    bin_.measure.write(batch)
                    count += batch.num_rows
            except RecordError as error:
                return key, bin_, count, bin_.measure.bytes - before, error
        return key, bin_, count, bin_.measure.bytes - before, None

    def _merged_here(self, bin_: Bin) -> bool:
        """A bin that already failed (a record that did not fit) is routed here, not handed on."""
        return bool(getattr(bin_, "failed", False))

    def bin_count(self) -> int:
        """How many bins are open (NiFi's ``getBinCount``)."""
        return self._manager.bin_count if self._manager is not None else 0

    # --- merging a bin (NiFi's RecordBin.complete) -------------------------------------------

    def merge_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        """Merge a ready bin handed over by the engine (its session holds the FlowFiles)."""
        self._process_bin(context, session, bin_)

    def _process_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        contents = list(bin_.flowfiles)
        if getattr(bin_, "failed", False):
            session.transfer(contents, REL_FAILURE)
            return
        if self._defragments(context):
            problem = fragment_problem(contents)
            if problem is not None:
                context.logger.error(
                    "Could not merge bin with %d FlowFiles because %s", len(contents), problem
                )
                session.transfer(contents, REL_FAILURE)
                return
        reader, writer = services(context, session)
        assert writer is not None
        bundle = session.create()
        try:
            bundle, written, count = _write_bundle(session, bundle, contents, reader, writer)
        except RECORD_FAILURES as error:
            context.logger.error(
                "Failed to create merged FlowFile from %d input FlowFiles; routing originals "
                "to failure: %s",
                len(contents),
                error,
            )
            session.remove(bundle)
            session.transfer(contents, REL_FAILURE)
            return
        strategy = context.get_property(merge_props.ATTRIBUTE_STRATEGY).value
        if strategy == merge_props.ATTRIBUTE_STRATEGY_ALL_UNIQUE.value:
            attributes = all_unique_attributes(contents)
        else:
            attributes = common_attributes(contents)
        attributes.pop("uuid", None)
        attributes.update(written)
        reason = bin_.reason or EvictionReason.UNSET
        attributes[RECORD_COUNT] = str(count)
        attributes[MERGE_COUNT] = str(len(contents))
        attributes[MERGE_BIN_AGE] = str(max(0, context.now() - bin_.created_ms))
        attributes[MERGE_COMPLETION_REASON] = COMPLETION_REASONS[reason]
        bundle = session.put_all_attributes(bundle, attributes)
        session.provenance.join(
            contents,
            bundle,
            details=f"Records Merged due to: {attributes[MERGE_COMPLETION_REASON]}",
        )
        session.transfer(bundle, REL_MERGED)
        if context.is_auto_terminated(REL_ORIGINAL):
            session.transfer(contents, REL_ORIGINAL)
        else:
            session.transfer(
                [session.put_attribute(f, MERGE_UUID, bundle.uuid) for f in contents],
                REL_ORIGINAL,
            )
        session.adjust_counter("Records Merged", count)


class _Counter:
    """A stream that keeps only the count of the bytes written to it."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: Any) -> int:
        """Count *data*."""
        size = len(data) if isinstance(data, bytes) else len(memoryview(data).cast("B"))
        self.bytes += size
        return size

    def flush(self) -> None:
        """Nothing to flush."""


class _Measure:
    """A bin's Record Writer writing to a byte counter (NiFi's ``ByteCountingOutputStream``)."""

    def __init__(self, writer: RecordWriterService, schema: Any, flowfile: FlowFile) -> None:
        self._counter = _Counter()
        self._writer = writer.create_writer(schema, flowfile.attributes, WriteStream(self._counter))

    @property
    def bytes(self) -> int:
        """What the writer has written so far."""
        return self._counter.bytes

    def write(self, batch: Any) -> None:
        """Write *batch*'s records (to be counted)."""
        self._writer.write(batch)


def _integer(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # an expression, or a value the property's validator refuses


def _inspect(
    session: ProcessSession, flowfile: FlowFile, reader: RecordReaderService
) -> tuple[RecordSchema, int, RecordError | None]:
    """*flowfile*'s schema and record count, reading no more of it than needed.

    The count is ``record.count`` when it is a count; otherwise the records are counted (one
    pass, batch by batch). A record that does not parse after the schema is known comes back
    as the third value; before it, it raises.
    """
    count = _integer(flowfile.attributes.get(RECORD_COUNT))
    if count is not None and count < 0:
        count = None
    schema = reader.configured_schema(flowfile.attributes)
    if schema is not None and count is not None:
        return schema, count, None
    counted = 0
    with read_records(session, flowfile, reader) as records:
        try:
            for batch in records:
                counted += batch.num_rows
                if count is not None:
                    break  # the first batch gave the schema
        except RecordError as error:
            if records.schema is None:
                raise
            return records.schema, counted, error
        return records.schema or RecordSchema(()), counted if count is None else count, None


def _write_bundle(
    session: ProcessSession,
    bundle: FlowFile,
    contents: list[FlowFile],
    reader: RecordReaderService,
    writer: RecordWriterService,
) -> tuple[FlowFile, dict[str, str], int]:
    """Every record of *contents*, in order, written as *bundle*'s content (streamed)."""
    written: dict[str, str] = {}
    first = contents[0].attributes
    counted = 0

    def produce(out: Any) -> None:
        nonlocal counted
        target = WriteStream(out)
        record_writer = None
        schema: RecordSchema | None = None
        for flowfile in contents:
            with read_records(session, flowfile, reader) as records:
                for batch in records:
                    if record_writer is None:
                        record_writer = writer.create_writer(batch.schema, first, target)
                    record_writer.write(batch)
                    counted += batch.num_rows
                schema = schema or records.schema
        if record_writer is None:
            record_writer = writer.create_writer(schema or RecordSchema(()), first, target)
        written.update(record_writer.finish())

    updated = session.write(bundle, produce)
    count = int(written.pop(RECORD_COUNT, counted))
    return updated, written, count
