"""LookupRecord: enrich records from a lookup service, and route them by whether it matched."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordPathError
from flowcore.flowfile import FlowFile
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.record_path import RecordPath, compile_record_path, is_valid_record_path
from flowcore.records.schema import RecordSchema
from flowcore.records.values import batch_rows
from flowcore.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, ValidationResult, Validator
from processors._lookup_columns import columnar_lookup, conform
from processors._lookup_records import (
    Lookups,
    MatchResult,
    RecordLookup,
    enriched_schema,
    rows_to_batch,
)
from processors._record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    write_records,
)
from processors._record_io import services as record_services
from processors.lookup_services.base import LookupFailureError, LookupService

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

    Every distinct set of coordinates is looked up once per FlowFile, so the service's
    answers stay consistent over the passes the processor makes (one to find the schema and
    count, one per relationship written; memory bounded by a record batch and the distinct
    answers). ``Cache Size`` is accepted (NiFi's cache across records) and not needed.
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
            schema, counts = self._survey(session, flowfile, reader, lookup, lookups)
            outputs = []
            for relationship in self._relationships_used(counts):
                child = session.create(flowfile)
                created.append(child)
                child, written = write_records(
                    session,
                    child,
                    writer,
                    schema,
                    self._routed(
                        session,
                        flowfile=flowfile,
                        reader=reader,
                        lookup=lookup,
                        lookups=lookups,
                        schema=schema,
                        relationship=relationship,
                    ),
                    attributes=flowfile.attributes,
                )
                written.setdefault("record.count", str(counts[relationship.name]))
                outputs.append((session.put_all_attributes(child, written), relationship))
        except (*RECORD_FAILURES, RecordPathError, LookupFailureError) as error:
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
            sum(counts.values()),
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

    def _split(self, hits: int, rows: int) -> list[tuple[str, int]]:
        """Records per relationship of a batch with *hits* of *rows* matched (no root path)."""
        if not self._routes_matched():
            return [(REL_SUCCESS.name, rows)]
        return [(REL_MATCHED.name, hits), (REL_UNMATCHED.name, rows - hits)]

    def _relationships_used(self, counts: Mapping[str, int]) -> list[Relationship]:
        if not self._routes_matched():
            return [REL_SUCCESS]
        return [r for r in (REL_MATCHED, REL_UNMATCHED) if counts.get(r.name)]

    def _survey(
        self,
        session: ProcessSession,
        flowfile: FlowFile,
        reader: object,
        lookup: RecordLookup,
        lookups: Lookups,
    ) -> tuple[RecordSchema, dict[str, int]]:
        """The output schema and the records per relationship (a first pass over the content).

        The schema is the reader's, enriched by the first record that matched (NiFi's
        ``determineResultSchema``; replacing values in place keeps the reader's).
        """
        counts: dict[str, int] = {}
        found: RecordSchema | None = None
        with read_records(session, flowfile, reader) as records:  # type: ignore[arg-type]
            for batch in records:
                fast = columnar_lookup(lookup, batch, lookups)
                if fast is not None:
                    updated, matched = fast
                    hits = pc.sum(matched).as_py() or 0
                    if found is None and hits:
                        found = RecordSchema.from_arrow(updated.schema)
                    for name, count in self._split(hits, batch.num_rows):
                        counts[name] = counts.get(name, 0) + count
                    continue
                schema = RecordSchema.from_arrow(batch.schema)
                for row in batch_rows(batch):
                    results = lookup.apply(row, lookups)
                    if found is None and not lookup.in_place and MatchResult.ALL_MATCH in results:
                        found = enriched_schema(schema, row)
                    relationship = self._relationship(results)
                    counts[relationship.name] = counts.get(relationship.name, 0) + 1
            base = records.schema or RecordSchema(())
        return found or base, counts

    def _routed(
        self,
        session: ProcessSession,
        *,
        flowfile: FlowFile,
        reader: object,
        lookup: RecordLookup,
        lookups: Lookups,
        schema: RecordSchema,
        relationship: Relationship,
    ) -> Iterator[pa.RecordBatch]:
        """The enriched records of *relationship*, batch by batch (a pass over the content)."""
        with read_records(session, flowfile, reader) as records:  # type: ignore[arg-type]
            for batch in records:
                fast = columnar_lookup(lookup, batch, lookups)
                if fast is not None:
                    updated, matched = fast
                    if relationship is REL_MATCHED:
                        updated = updated.filter(matched)
                    elif relationship is REL_UNMATCHED:
                        updated = updated.filter(pc.invert(matched))
                    if updated.num_rows:
                        yield conform(updated, schema)
                    continue
                kept = []
                for row in batch_rows(batch):
                    if self._relationship(lookup.apply(row, lookups)) is relationship:
                        kept.append(row)
                if kept:
                    yield rows_to_batch(kept, schema)
