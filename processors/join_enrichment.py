"""JoinEnrichment: join the records of ForkEnrichment's 'original' and 'enrichment' FlowFiles."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, closing
from typing import ClassVar

import attrs
import duckdb
import pyarrow as pa

from flowcore.flowfile import FlowFile
from flowcore.processor.binning import Bin, BinLimits, BinManager, EvictionReason
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.record_path import compile_record_path
from flowcore.records.record_io import RECORD_FAILURES, RECORD_WRITER, read_records, write_records
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
)
from processors._calcite_duckdb import DuckConnections
from processors._join_strategies import insert_fields, sql_join, wrapper
from processors._merge_bins import HeldBins
from processors._merge_properties import MAX_BIN_COUNT as MERGE_MAX_BIN_COUNT
from processors.fork_enrichment import (
    ENRICHMENT_GROUP_ID,
    ENRICHMENT_ROLE,
    ROLE_ENRICHMENT,
    ROLE_ORIGINAL,
)
from processors.lookup_record import RECORD_PATH_VALIDATOR

__all__ = ["JoinEnrichment"]

#: FlowFiles taken from the queue per intake session.
BATCH = 1000  # FlowFiles

JOIN_WRAPPER = AllowableValue(
    "Wrapper",
    "Wrapper",
    "The output is a Record that contains two fields: (1) 'original', containing the Record "
    "from the original FlowFile and (2) 'enrichment' containing the corresponding Record from "
    "the enrichment FlowFile. Records will be correlated based on their index in the FlowFile. "
    "If one FlowFile has more Records than the other, a null value will be used.",
)
JOIN_SQL = AllowableValue(
    "SQL",
    "SQL",
    "The output is derived by evaluating a SQL SELECT statement that allows for two tables: "
    "'original' and 'enrichment'. This allows for SQL JOIN statements to be used in order to "
    "correlate the Records of the two FlowFiles, so the index in which the Record is "
    "encountered in the FlowFile does not matter.",
)
JOIN_INSERT_ENRICHMENT_FIELDS = AllowableValue(
    "Insert Enrichment Fields",
    "Insert Enrichment Fields",
    "The enrichment is joined together with the original FlowFile by placing all fields of the "
    "enrichment Record into the corresponding Record from the original FlowFile. Records will "
    "be correlated based on their index in the FlowFile.",
)
_SQL_ONLY = (("Join Strategy", (JOIN_SQL.value,)),)

REL_JOINED = Relationship(
    "joined",
    "The resultant FlowFile with Records joined together from both the original and enrichment "
    "FlowFiles will be routed to this relationship",
)
REL_ORIGINAL = Relationship(
    "original",
    "Both of the incoming FlowFiles ('original' and 'enrichment') will be routed to this "
    "Relationship. I.e., this is the 'original' version of both of these FlowFiles.",
    auto_terminated=True,
)
REL_TIMEOUT = Relationship(
    "timeout",
    "If one of the incoming FlowFiles (i.e., the 'original' FlowFile or the 'enrichment' "
    "FlowFile) arrives to this Processor but the other does not arrive within the configured "
    "Timeout period, the FlowFile that did arrive is routed to this relationship.",
)
REL_FAILURE = Relationship(
    "failure",
    "If both the 'original' and 'enrichment' FlowFiles arrive at the processor but there was a "
    "failure in joining the records, both of those FlowFiles will be routed to this "
    "relationship.",
)


class JoinEnrichment(HeldBins):
    """Joins the records of an 'original' FlowFile and its 'enrichment' (NiFi's JoinEnrichment).

    FlowFiles are binned by ``enrichment.group.id`` (ForkEnrichment sets it), two to a bin:
    the one whose ``enrichment.role`` is ``ORIGINAL`` and the ``ENRICHMENT`` one. Their records
    are joined by the ``Join Strategy`` into one FlowFile to ``joined`` (a JOIN of both, with
    ``record.count``, ``mime.type`` and the writer's attributes; the writer sees both
    FlowFiles' attributes, the enrichment's winning); both inputs go to ``original``. A
    FlowFile whose partner does not come within ``Timeout`` goes to ``timeout`` (in a batch
    run, also when the input ends without it); a pair that cannot be joined (a role missing,
    records that do not parse, SQL that fails) to ``failure``.

    Wrapper and Insert Enrichment Fields read both FlowFiles in step, batch by batch; SQL holds
    the enrichment's records as a table (NiFi buffers them too) and streams the original's.
    """

    ORIGINAL_RECORD_READER = PropertyDescriptor(
        "Original Record Reader",
        description="The Record Reader for reading the 'original' FlowFile",
        required=True,
        identifies_service="RecordReaderFactory",
    )
    ENRICHMENT_RECORD_READER = PropertyDescriptor(
        "Enrichment Record Reader",
        description="The Record Reader for reading the 'enrichment' FlowFile",
        required=True,
        identifies_service="RecordReaderFactory",
    )
    RECORD_WRITER = attrs.evolve(
        RECORD_WRITER,
        description="The Record Writer to use for writing the results. If the Record Writer is "
        "configured to inherit the schema from the Record, the schema that it will inherit will "
        "be the result of merging both the 'original' record schema and the 'enrichment' record "
        "schema.",
        aliases=(),
    )
    JOIN_STRATEGY = PropertyDescriptor(
        "Join Strategy",
        description="Specifies how to join the two FlowFiles into a single FlowFile",
        required=True,
        default=JOIN_WRAPPER.value,
        allowable_values=(JOIN_WRAPPER, JOIN_SQL, JOIN_INSERT_ENRICHMENT_FIELDS),
    )
    SQL = PropertyDescriptor(
        "SQL",
        description="The SQL SELECT statement to evaluate. Expression Language may be provided, "
        "but doing so may result in poorer performance. Because this Processor is dealing with "
        "two FlowFiles at a time, it's also important to understand how attributes will be "
        "referenced. If both FlowFiles have an attribute with the same name but different "
        "values, the Expression Language will resolve to the value provided by the 'enrichment' "
        "FlowFile.",
        required=True,
        default="SELECT original.*, enrichment.* \nFROM original \nLEFT OUTER JOIN enrichment "
        "\nON original.id = enrichment.id",
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=_SQL_ONLY,
    )
    DEFAULT_PRECISION = PropertyDescriptor(
        "Default Decimal Precision",
        description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
        "specific 'precision' denoting number of available digits is required. Generally, "
        "precision is defined by column data type definition or database engines default. "
        "However undefined precision (0) can be returned from some database engines. 'Default "
        "Decimal Precision' is used when writing those undefined precision numbers.",
        default="10",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=_SQL_ONLY,
        aliases=("dbf-default-precision",),
    )
    DEFAULT_SCALE = PropertyDescriptor(
        "Default Decimal Scale",
        description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
        "specific 'scale' denoting number of available decimal digits is required. Generally, "
        "scale is defined by column data type definition or database engines default. However "
        "when undefined precision (0) is returned, scale can also be uncertain with some "
        "database engines. 'Default Decimal Scale' is used when writing those undefined numbers. "
        "If a value has more decimals than specified scale, then the value will be rounded-up, "
        "e.g. 1.53 becomes 2 with scale 0, and 1.5 with scale 1.",
        default="0",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=_SQL_ONLY,
        aliases=("dbf-default-scale",),
    )
    INSERTION_RECORD_PATH = PropertyDescriptor(
        "Insertion Record Path",
        description="Specifies where in the 'original' Record the 'enrichment' Record's fields "
        "should be inserted. Note that if the RecordPath does not point to any existing field in "
        "the original Record, the enrichment will not be inserted.",
        required=True,
        default="/",
        validators=(RECORD_PATH_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(("Join Strategy", (JOIN_INSERT_ENRICHMENT_FIELDS.value,)),),
    )
    MAX_BIN_COUNT = attrs.evolve(MERGE_MAX_BIN_COUNT, default="10000")
    TIMEOUT = PropertyDescriptor(
        "Timeout",
        description="Specifies the maximum amount of time to wait for the second FlowFile once "
        "the first arrives at the processor, after which point the first FlowFile will be routed "
        "to the 'timeout' relationship.",
        required=True,
        default="10 min",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        ORIGINAL_RECORD_READER,
        ENRICHMENT_RECORD_READER,
        RECORD_WRITER,
        JOIN_STRATEGY,
        SQL,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
        INSERTION_RECORD_PATH,
        MAX_BIN_COUNT,
        TIMEOUT,
    )
    relationships: ClassVar = (REL_JOINED, REL_ORIGINAL, REL_TIMEOUT, REL_FAILURE)
    tags: ClassVar = (
        "fork",
        "join",
        "enrichment",
        "record",
        "sql",
        "wrap",
        "recordpath",
        "merge",
        "combine",
        "streams",
    )
    reads_attributes: ClassVar[Mapping[str, str]] = {
        ENRICHMENT_GROUP_ID: "The bin: the 'original' and 'enrichment' FlowFiles to join",
        ENRICHMENT_ROLE: "ORIGINAL or ENRICHMENT",
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer",
        "record.count": "The number of records in the FlowFile",
    }

    # --- binning (NiFi's BinFiles with two entries a bin) -------------------------------------

    def max_bin_age_ms(self, context: ProcessContext) -> int | None:
        """Timeout in milliseconds."""
        age = context.get_property(self.TIMEOUT).as_time_period("ms")
        return None if age is None else int(age)

    def group_key(self, context: ProcessContext, flowfile: FlowFile) -> str | None:
        """The bin group: ``enrichment.group.id``."""
        del context
        return flowfile.attributes.get(ENRICHMENT_GROUP_ID)

    def on_trigger_sessions(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """Bin new FlowFiles by group id, then join (or time out) the ready bins."""
        if self._manager is None:
            self._manager = BinManager(
                BinLimits(min_entries=2, max_entries=2), age_from_queue_date=context.resumed_bins
            )
        max_bins = context.get_property(self.MAX_BIN_COUNT).as_integer() or 10000
        while self._manager.bin_count <= max_bins:
            intake = session_factory()
            flowfiles = intake.get(BATCH)
            if not flowfiles:
                break
            now = context.now()
            groups: dict[str | None, list[FlowFile]] = {}
            for flowfile in flowfiles:
                groups.setdefault(self.group_key(context, flowfile), []).append(flowfile)
            for key, members in groups.items():
                moving: dict[int, list[FlowFile]] = {}
                for offer in self._manager.offer(key, members, now):
                    if offer.bin.id not in self._sessions:
                        self._sessions[offer.bin.id] = session_factory()
                    moving.setdefault(offer.bin.id, []).append(offer.flowfile)
                    if offer.alone:
                        self._ready.append(offer.bin)
                for bin_id, moved in moving.items():
                    intake.migrate(self._sessions[bin_id], moved)
            intake.commit()
        self._ready.extend(
            self._manager.remove_ready_bins(
                relaxed=False, now_ms=context.now(), max_age_ms=self.max_bin_age_ms(context)
            )
        )
        if not self._ready and self._manager.bin_count > max_bins:
            oldest = self._manager.remove_oldest_bin()
            if oldest is not None:
                self._ready.append(oldest)
        self._process_ready(context)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Not used: JoinEnrichment manages its own sessions (see on_trigger_sessions)."""
        del context, session

    # --- joining one bin (NiFi's processBin) ---------------------------------------------------

    def merge_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        """Join a ready bin's two FlowFiles, or time its one FlowFile out."""
        flowfiles = list(bin_.flowfiles)
        if len(flowfiles) != 2:
            if bin_.reason is EvictionReason.BIN_MANAGER_FULL:
                session.transfer(flowfiles)  # back to the queue, as NiFi
                return
            session.transfer(flowfiles, REL_TIMEOUT)
            role = flowfiles[0].attributes.get(ENRICHMENT_ROLE)
            missing = {ROLE_ORIGINAL: ROLE_ENRICHMENT, ROLE_ENRICHMENT: ROLE_ORIGINAL}.get(
                role or "", "other"
            )
            context.logger.warning(
                "Timed out waiting for the %s FlowFile to match %s; routing to %s",
                missing,
                flowfiles[0],
                REL_TIMEOUT.name,
            )
            return
        roles = {f.attributes.get(ENRICHMENT_ROLE): f for f in flowfiles}
        original, enrichment = roles.get(ROLE_ORIGINAL), roles.get(ROLE_ENRICHMENT)
        if original is None or enrichment is None:
            context.logger.error(
                "Received two FlowFiles %s but could not find both an 'original' and an "
                "'enrichment' FlowFile. The FlowFiles do not appear to have the proper "
                "attributes necessary for use with this Processor. Routing to %s",
                flowfiles,
                REL_FAILURE.name,
            )
            session.transfer(flowfiles, REL_FAILURE)
            return
        joined = session.create([original, enrichment])
        try:
            joined = self._join(context, session, joined, original, enrichment)
        except (*RECORD_FAILURES, duckdb.Error) as error:
            context.logger.error(
                "Failed to join 'original' FlowFile %s and 'enrichment' FlowFile %s; routing "
                "to failure: %s",
                original,
                enrichment,
                error,
            )
            session.remove(joined)
            session.transfer(flowfiles, REL_FAILURE)
            return
        count = int(joined.attributes.get("record.count", "0"))
        session.adjust_counter("Records Written", count)
        session.transfer(joined, REL_JOINED)
        session.transfer(flowfiles, REL_ORIGINAL)

    def _join(
        self,
        context: ProcessContext,
        session: ProcessSession,
        joined: FlowFile,
        original: FlowFile,
        enrichment: FlowFile,
    ) -> FlowFile:
        """Write the joined records into *joined*; it, with the writer's attributes."""
        attributes = {**original.attributes, **enrichment.attributes}
        original_reader = session.controller_service(
            context.get_property(self.ORIGINAL_RECORD_READER).value or ""
        )
        enrichment_reader = session.controller_service(
            context.get_property(self.ENRICHMENT_RECORD_READER).value or ""
        )
        writer = session.controller_service(context.get_property(self.RECORD_WRITER).value or "")
        strategy = context.get_property(self.JOIN_STRATEGY).value or JOIN_WRAPPER.value
        with ExitStack() as stack:
            left = stack.enter_context(read_records(session, original, original_reader))
            right = stack.enter_context(read_records(session, enrichment, enrichment_reader))
            if strategy == JOIN_SQL.value:
                sql = context.get_property(self.SQL).evaluate_attribute_expressions(attributes)
                table = pa.Table.from_batches(list(right), schema=right.arrow_schema())
                first, rest = _first(iter(left))
                schema = first.schema if first is not None else left.arrow_schema()
                connection = DuckConnections.of(self).get()
                # closed here, so a failed write unregisters the tables before the next join
                result = stack.enter_context(
                    closing(sql_join(connection, rest, schema, table, sql.value or ""))
                )
                first_result, results = _first(result)
                out_schema = first_result.schema if first_result is not None else pa.schema([])
                joined, written = write_records(
                    session, joined, writer, out_schema, results, attributes=attributes
                )
            else:
                if strategy == JOIN_WRAPPER.value:
                    schema, batches = wrapper(iter(left), iter(right))
                else:
                    path = (
                        context.get_property(self.INSERTION_RECORD_PATH)
                        .evaluate_attribute_expressions(attributes)
                        .value
                    )
                    schema, batches = insert_fields(
                        iter(left), iter(right), compile_record_path(path or "/")
                    )
                joined, written = write_records(
                    session, joined, writer, schema, batches, attributes=attributes
                )
        return session.put_all_attributes(joined, written)


def _first(
    batches: Iterator[pa.RecordBatch],
) -> tuple[pa.RecordBatch | None, Iterator[pa.RecordBatch]]:
    """The first batch (None: none) and every batch, that one included."""
    first = next(batches, None)

    def every() -> Iterator[pa.RecordBatch]:
        if first is not None:
            yield first
        yield from batches

    return first, every()
