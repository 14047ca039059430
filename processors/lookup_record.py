"""LookupRecord: enrich records from a lookup service, and route them by whether it matched."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordPathError
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.record_path import RecordPath, compile_record_path, is_valid_record_path
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    RecordWriter,
    read_records,
)
from flowcore.records.record_io import services as record_services
from flowcore.records.schema import RecordSchema
from flowcore.records.values import batch_rows
from flowcore.session.process_session import ProcessSession
from flowcore.session.streams import WriteStream
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, ValidationResult, Validator
from processors._lookup_columns import columnar_lookup, conform
from processors._lookup_records import (
    Lookups,
    MatchResult,
    RecordLookup,
    enriched_schema,
    rows_to_batch,
)
from processors.lookup_services.base import LookupFailureError, LookupService
from processors.record_services.schema_access import RecordWriterService

__all__ = ["LookupRecord"]


def _record_path(value: str) -> str | None:
    if is_valid_record_path(value):
        return None
    try:
        compile_record_path(value)
    except RecordPathError as error:
        return str(error)
    return None


#: NiFi's RecordPathValidator.
RECORD_PATH_VALIDATOR = Validator("RecordPathValidator", _record_path)

ROUTE_TO_SUCCESS = AllowableValue(
    "route-to-success",
    "Route to 'success'",
    "Records will be routed to a 'success' Relationship regardless of whether or not there is a "
    "match in the configured Lookup Service",
)
ROUTE_TO_MATCHED_UNMATCHED = AllowableValue(
    "route-to-matched-unmatched",
    "Route to 'matched' or 'unmatched'",
    "Records will be routed to either a 'matched' or an 'unmatched' Relationship depending on "
    "whether or not there was a match in the configured Lookup Service. A single input FlowFile "
    "may result in two different output FlowFiles. If the given Record Paths evaluate such that "
    "multiple sub-records are evaluated, the parent Record will be routed to 'unmatched' unless "
    "all sub-records match.",
)
RESULT_ENTIRE_RECORD = AllowableValue(
    "insert-entire-record",
    "Insert Entire Record",
    "The entire Record that is retrieved from the Lookup Service will be inserted into the "
    "destination path.",
)
RESULT_RECORD_FIELDS = AllowableValue(
    "record-fields",
    "Insert Record Fields",
    "All of the fields in the Record that is retrieved from the Lookup Service will be inserted "
    "into the destination path.",
)
USE_PROPERTY = AllowableValue(
    "use-property",
    'Use "Result RecordPath" Property',
    'The "Result RecordPath" property will be used to determine which part of the record should '
    "be updated with the value returned by the Lookup Service",
)
REPLACE_EXISTING_VALUES = AllowableValue(
    "replace-existing-values",
    "Replace Existing Values",
    'The "Result RecordPath" property will be ignored and the lookup service must be a single '
    "simple key lookup service. Every dynamic property value should be a record path. For each "
    "dynamic property, the value contained in the field corresponding to the record path will "
    "be used as the key in the Lookup Service and the value returned by the Lookup Service will "
    "be used to replace the existing value. It is possible to configure multiple dynamic "
    "properties to replace multiple values in one execution. This strategy only supports simple "
    "types replacements (strings, integers, etc).",
)

REL_MATCHED = Relationship(
    "matched",
    "All records for which the lookup returns a value will be routed to this relationship",
)
REL_UNMATCHED = Relationship(
    "unmatched",
    "All records for which the lookup does not have a matching value will be routed to this "
    "relationship",
)
REL_SUCCESS = Relationship(
    "success",
    "All records will be sent to this Relationship if configured to do so, unless a failure occurs",
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile cannot be enriched, the unchanged FlowFile will be routed to this relationship",
)


class LookupRecord(Processor):
    """Looks fields of each record up in a Lookup Service and adds the result to the record.

    NiFi's LookupRecord. Each user-defined property is a coordinate: its name the key, the
    value its RecordPath selects the value (a path selecting no value or several makes the
    record unmatched). With ``Record Update Strategy`` ``use-property`` the service's result
    goes where ``Result RecordPath`` points (the whole result, or with ``record-fields`` the
    fields of a record result into the record there); with ``replace-existing-values`` every
    value each path selects is looked up on its own and replaced by the result. ``Root Record
    Path`` evaluates the paths against child records instead. Records go to ``success``, or to
    ``matched`` / ``unmatched`` (one FlowFile each) with ``route-to-matched-unmatched``; a
    record whose sub-records did not all match is unmatched. The output schema is the first
    matched record's (NiFi's rule): when none matches, the added fields are left out.

    The content is read twice at most, as NiFi reads it: a first pass finds the schema and
    stops at the first match (NiFi's ``determineResultSchema``; none when replacing values in
    place), then ONE pass enriches each batch and routes it to the children of every
    relationship at once. The service's answers are kept per FlowFile in an LRU of
    :data:`~processors._lookup_records.MEMO_ENTRIES` coordinates (the columnar path asks each
    distinct key of a batch once), so memory is bounded by a record batch and that many
    answers. ``Cache Size`` is accepted (NiFi's cache across records) and not needed.
    """

    LOOKUP_SERVICE = PropertyDescriptor(
        "Lookup Service",
        description="The Lookup Service to use in order to lookup a value in each Record",
        required=True,
        identifies_service="LookupService",
        aliases=("lookup-service",),
    )
    ROOT_RECORD_PATH = PropertyDescriptor(
        "Root Record Path",
        description="A RecordPath that points to a child Record within each of the top-level "
        "Records in the FlowFile. If specified, the additional RecordPath properties will be "
        "evaluated against this child Record instead of the top-level Record. This allows for "
        "performing enrichment against multiple child Records within a single top-level Record.",
        validators=(RECORD_PATH_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    ROUTING_STRATEGY = PropertyDescriptor(
        "Routing Strategy",
        description="Specifies how to route records after a Lookup has completed",
        required=True,
        default=ROUTE_TO_SUCCESS.value,
        allowable_values=(ROUTE_TO_SUCCESS, ROUTE_TO_MATCHED_UNMATCHED),
        aliases=("routing-strategy",),
    )
    RESULT_CONTENTS = PropertyDescriptor(
        "Record Result Contents",
        description="When a result is obtained that contains a Record, this property determines "
        "whether the Record itself is inserted at the configured path or if the contents of the "
        "Record (i.e., the sub-fields) will be inserted at the configured path.",
        required=True,
        default=RESULT_ENTIRE_RECORD.value,
        allowable_values=(RESULT_ENTIRE_RECORD, RESULT_RECORD_FIELDS),
        aliases=("result-contents",),
    )
    REPLACEMENT_STRATEGY = PropertyDescriptor(
        "Record Update Strategy",
        description="This property defines the strategy to use when updating the record with "
        "the value returned by the Lookup Service.",
        required=True,
        default=USE_PROPERTY.value,
        allowable_values=(REPLACE_EXISTING_VALUES, USE_PROPERTY),
        aliases=("record-update-strategy",),
    )
    RESULT_RECORD_PATH = PropertyDescriptor(
        "Result RecordPath",
        description="A RecordPath that points to the field whose value should be updated with "
        "whatever value is returned from the Lookup Service. If not specified, the value that is "
        "returned from the Lookup Service will be ignored, except for determining whether the "
        "FlowFile should be routed to the 'matched' or 'unmatched' Relationship.",
        validators=(RECORD_PATH_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(("Record Update Strategy", (USE_PROPERTY.value,)),),
        aliases=("result-record-path",),
    )
    CACHE_SIZE = PropertyDescriptor(
        "Cache Size",
        description="Specifies how many lookup values/records should be cached.Setting this "
        "property to zero means no caching will be done and the table will be queried for each "
        "lookup value in each record. If the lookup table changes often or the most recent data "
        "must be retrieved, do not use the cache.",
        required=True,
        default="0",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        aliases=("record-path-lookup-miss-result-cache-size",),
    )
    property_descriptors: ClassVar = (
        RECORD_READER,
        RECORD_WRITER,
        LOOKUP_SERVICE,
        ROOT_RECORD_PATH,
        ROUTING_STRATEGY,
        RESULT_CONTENTS,
        REPLACEMENT_STRATEGY,
        RESULT_RECORD_PATH,
        CACHE_SIZE,
    )
    relationships: ClassVar = (REL_MATCHED, REL_UNMATCHED, REL_SUCCESS, REL_FAILURE)
    supports_dynamic_properties: ClassVar = True
    supports_batching: ClassVar = True
    tags: ClassVar = (
        "lookup",
        "enrichment",
        "route",
        "record",
        "csv",
        "json",
        "avro",
        "database",
        "db",
        "logs",
        "convert",
        "filter",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer",
        "record.count": "The number of records in the FlowFile",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor | None:
        """A coordinate: a RecordPath whose value is looked up under *name*."""
        return PropertyDescriptor(
            name,
            description="A RecordPath that points to the field whose value will be looked up "
            "in the configured Lookup Service",
            validators=(RECORD_PATH_VALIDATOR,),
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def _routes_matched(self) -> bool:
        strategy = self.effective_value(self.ROUTING_STRATEGY)
        return strategy == ROUTE_TO_MATCHED_UNMATCHED.value

    def get_relationships(self) -> tuple[Relationship, ...]:
        """matched, unmatched and failure; or success and failure (NiFi's Routing Strategy)."""
        if self._routes_matched():
            return (REL_MATCHED, REL_UNMATCHED, REL_FAILURE)
        return (REL_SUCCESS, REL_FAILURE)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """At least one coordinate (the service's required keys are checked when it runs)."""
        del values
        if not self.dynamic_properties:
            return [
                ValidationResult(
                    "User-Defined Properties",
                    None,
                    False,
                    "At least one user-defined property must be specified.",
                )
            ]
        return []

    # --- the work -------------------------------------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Enrich and route one FlowFile's records."""
        flowfile = session.get()
        if flowfile is None:
            return
        reader, writer = record_services(context, session)
        assert writer is not None
        service = session.controller_service(context.get_property(self.LOOKUP_SERVICE).value or "")
        created: list[FlowFile] = []
        try:
            if not isinstance(service, LookupService):
                msg = (
                    f"Lookup Service names {type(service).__name__}, which is not a "
                    "LookupService (processors.lookup_services.LookupService)"
                )
                raise LookupFailureError(msg)
            lookup = self._record_lookup(context, flowfile, service)
            lookups = Lookups(service.for_session(session), flowfile.attributes)
            schema = (
                None
                if lookup.in_place
                else self._survey(session, flowfile, reader, lookup, lookups)
            )
            relationships = (
                [REL_MATCHED, REL_UNMATCHED] if self._routes_matched() else [REL_SUCCESS]
            )
            created.extend(session.create(flowfile) for _ in relationships)
            children = list(zip(created, relationships, strict=True))
            routed = _RoutedWrite(session, flowfile, writer, children)
            written = routed.run(
                lambda: self._routed(
                    session, flowfile, reader, lookup=lookup, lookups=lookups, schema=schema
                )
            )
            outputs = []
            for relationship, (child, attributes, count) in zip(
                relationships, written, strict=True
            ):
                if relationship is not REL_SUCCESS and not count:
                    session.remove(child)  # NiFi makes no FlowFile for an unused relationship
                    continue
                attributes.setdefault("record.count", str(count))
                outputs.append((session.put_all_attributes(child, attributes), relationship))
        except (*RECORD_FAILURES, LookupFailureError) as error:
            context.logger.error("Failed to process %s: %s", flowfile, error)
            session.remove(created)
            session.transfer(flowfile, REL_FAILURE)
            return
        for child, relationship in outputs:
            count = int(child.attributes.get("record.count", "0"))
            session.transfer(child, relationship)
            session.adjust_counter("Records Processed", count)
            session.adjust_counter(f"Records Routed to {relationship.name}", count)
            session.provenance.route(child, relationship)
        session.remove(flowfile)
        context.logger.info(
            "Successfully processed %s, creating %d derivative FlowFiles and processing %d records",
            flowfile,
            len(outputs),
            routed.records,
        )

    def _record_lookup(
        self, context: ProcessContext, flowfile: FlowFile, service: LookupService
    ) -> RecordLookup:
        """The coordinate paths and strategy for *flowfile* (properties evaluated against it).

        Raises:
            LookupFailureError: the coordinates do not fit the service's required keys.
        """
        paths: dict[str, RecordPath] = {}
        for name in self.dynamic_properties:
            text = context.get_property(name).evaluate_attribute_expressions(flowfile).value
            paths[name] = compile_record_path(text or "")
        in_place = (
            context.get_property(self.REPLACEMENT_STRATEGY).value == REPLACE_EXISTING_VALUES.value
        )
        required = sorted(service.required_keys)
        if in_place and len(required) != 1:
            msg = (
                f'When using "{REPLACE_EXISTING_VALUES.display_name}" as Record Update Strategy, '
                "only a Lookup Service requiring a single key can be used."
            )
            raise LookupFailureError(msg)
        missing = [key for key in required if key not in paths]
        if not in_place and missing:
            msg = (
                f"The configured Lookup Services requires that a key be provided with the name "
                f"'{missing[0]}'. Please add a new property to this Processor with a name "
                f"'{missing[0]}' and provide a RecordPath that can be used to retrieve the "
                "appropriate value."
            )
            raise LookupFailureError(msg)

        def path_of(descriptor: PropertyDescriptor) -> RecordPath | None:
            value = context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value
            return compile_record_path(value) if value else None

        return RecordLookup(
            paths=paths,
            result_path=None if in_place else path_of(self.RESULT_RECORD_PATH),
            root_path=path_of(self.ROOT_RECORD_PATH),
            record_fields=context.get_property(self.RESULT_CONTENTS).value
            == RESULT_RECORD_FIELDS.value,
            in_place=in_place,
            coordinate_key=required[0] if required else "key",
        )

    def _relationship(self, results: set[MatchResult]) -> Relationship:
        """NiFi's ``getRelationships`` of one record's match results."""
        if not self._routes_matched():
            return REL_SUCCESS
        if MatchResult.SOME_MATCH in results or MatchResult.NONE_MATCH in results:
            return REL_UNMATCHED
        return REL_MATCHED if MatchResult.ALL_MATCH in results else REL_UNMATCHED

    def _survey(
        self,
        session: ProcessSession,
        flowfile: FlowFile,
        reader: object,
        lookup: RecordLookup,
        lookups: Lookups,
    ) -> RecordSchema:
        """The output schema: the reader's, enriched by the first record that matched.

        NiFi's ``determineResultSchema``: a first pass that stops at the first match (the
        whole content only when no record matches).
        """
        found: RecordSchema | None = None
        with read_records(session, flowfile, reader) as records:  # type: ignore[arg-type]
            for batch in records:
                fast = columnar_lookup(lookup, batch, lookups)
                if fast is not None:
                    updated, matched = fast
                    if pc.any(matched).as_py():
                        found = RecordSchema.from_arrow(updated.schema)
                        break
                    continue
                schema = RecordSchema.from_arrow(batch.schema)
                for row in batch_rows(batch):
                    if MatchResult.ALL_MATCH in lookup.apply(row, lookups):
                        found = enriched_schema(schema, row)
                        break
                if found is not None:
                    break
            base = records.schema or RecordSchema(())
        return found or base

    def _routed(
        self,
        session: ProcessSession,
        flowfile: FlowFile,
        reader: object,
        *,
        lookup: RecordLookup,
        lookups: Lookups,
        schema: RecordSchema | None,
    ) -> Iterator[tuple[Relationship | None, pa.RecordBatch | RecordSchema]]:
        """The enriched records, batch by batch, each with its relationship: ONE pass.

        Yields ``(relationship, batch)`` pairs, then ``(None, schema)``: the schema written
        (*schema*, or the reader's when None: replacing values in place keeps it).
        """
        with read_records(session, flowfile, reader) as records:  # type: ignore[arg-type]
            for batch in records:
                target = schema or records.schema or RecordSchema.from_arrow(batch.schema)
                fast = columnar_lookup(lookup, batch, lookups)
                if fast is not None:
                    updated, matched = fast
                    if not self._routes_matched():
                        yield REL_SUCCESS, conform(updated, target)
                        continue
                    for relationship, mask in (
                        (REL_MATCHED, matched),
                        (REL_UNMATCHED, pc.invert(matched)),
                    ):
                        piece = updated.filter(mask)
                        if piece.num_rows:
                            yield relationship, conform(piece, target)
                    continue
                kept: dict[str, list[dict]] = {}
                for row in batch_rows(batch):
                    relationship = self._relationship(lookup.apply(row, lookups))
                    kept.setdefault(relationship.name, []).append(row)
                for relationship in (REL_SUCCESS, REL_MATCHED, REL_UNMATCHED):
                    if relationship.name in kept:
                        yield relationship, rows_to_batch(kept[relationship.name], target)
            yield None, schema or records.schema or RecordSchema(())


class _RoutedWrite:
    """One child FlowFile per relationship, all written in one pass over routed batches.

    The session's content writer takes several open streams: each child's write callback
    opens the next child's, and the innermost runs the pass, so the content is read (and
    looked up) once whatever the number of relationships. A record writer is made at the
    first batch for its relationship (or at the end, empty, with the final schema).
    """

    def __init__(
        self,
        session: ProcessSession,
        flowfile: FlowFile,
        writer: RecordWriterService,
        children: list[tuple[FlowFile, Relationship]],
    ) -> None:
        self._session = session
        self._attributes = flowfile.attributes
        self._writer = writer
        self._children = children
        self._streams: dict[str, WriteStream] = {}
        self._writers: dict[str, RecordWriter] = {}
        self._counts = {relationship.name: 0 for _, relationship in children}
        self._written: dict[str, dict[str, str]] = {}
        self.records = 0

    def run(
        self,
        batches: Callable[[], Iterator[tuple[Relationship | None, pa.RecordBatch | RecordSchema]]],
    ) -> list[tuple[FlowFile, dict[str, str], int]]:
        """Write the children; each one's new version, writer attributes and record count."""
        updated = [child for child, _ in self._children]

        def nest(index: int) -> None:
            if index == len(self._children):
                self._pass(batches())
                return
            child, relationship = self._children[index]

            def produce(out: Any) -> None:
                self._streams[relationship.name] = WriteStream(out)
                nest(index + 1)

            updated[index] = self._session.write(child, produce)

        nest(0)
        return [
            (updated[index], self._written[relationship.name], self._counts[relationship.name])
            for index, (_, relationship) in enumerate(self._children)
        ]

    def _pass(
        self, batches: Iterator[tuple[Relationship | None, pa.RecordBatch | RecordSchema]]
    ) -> None:
        final: RecordSchema = RecordSchema(())
        for relationship, item in batches:
            if relationship is None:
                assert isinstance(item, RecordSchema)
                final = item
                continue
            assert isinstance(item, pa.RecordBatch)
            name = relationship.name
            record_writer = self._writers.get(name)
            if record_writer is None:
                record_writer = self._writer.create_writer(
                    item.schema, self._attributes, self._streams[name]
                )
                self._writers[name] = record_writer
            record_writer.write(item)
            self._counts[name] += item.num_rows
            self.records += item.num_rows
        for name, stream in self._streams.items():
            record_writer = self._writers.get(name)
            if record_writer is None:
                record_writer = self._writer.create_writer(final, self._attributes, stream)
            self._written[name] = dict(record_writer.finish())
