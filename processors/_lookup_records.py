"""LookupRecord's work on one record: coordinates, lookups, the update, the enriched schema.

NiFi's LookupRecord has two strategies (``Record Update Strategy``): *use-property* looks one
set of coordinates up per (sub-)record and writes the result where ``Result RecordPath``
points; *replace-existing-values* looks each value its paths select up on its own and
replaces it. :class:`RecordLookup` does either on records as Python mappings (the
RecordPath evaluator's form); the service's answers are memoised per FlowFile in a bounded LRU
(:class:`Lookups`).
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Mapping, MutableMapping
from typing import Any

import attrs
import pyarrow as pa

from flowcore.record_path import RecordPath
from flowcore.record_path._values import FieldValue
from flowcore.records._batches import batches_of
from flowcore.records.inference import infer_value_type, merge_types
from flowcore.records.schema import (
    STRING,
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    MapType,
    RecordField,
    RecordSchema,
    RecordType,
    SimpleType,
)
from flowcore.records.values import TemporalFormats
from processors.lookup_services.base import LookupFailureError, LookupService

__all__ = [
    "MEMO_ENTRIES",
    "Lookups",
    "MatchResult",
    "RecordLookup",
    "enriched_schema",
    "rows_to_batch",
    "with_text",
]


class MatchResult(enum.Enum):
    """How one (sub-)record's lookups went (NiFi's ``MatchResult``)."""

    ALL_MATCH = "all"
    NONE_MATCH = "none"
    SOME_MATCH = "some"


def _hashable(value: Any) -> Any:
    """*value* as a dictionary key (records and arrays by their contents)."""
    if isinstance(value, Mapping):
        return tuple((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


#: How many answers :class:`Lookups` keeps per FlowFile (least recently used go first): a
#: FlowFile of a million distinct keys holds this many answers, not a million.
MEMO_ENTRIES = 10_000


class Lookups:
    """The lookup service's answers for one FlowFile, memoised in an LRU of *entries*.

    Records of one FlowFile repeat their keys (a country, a customer): the service is asked
    once per key while it stays among the *entries* most recently used ones. The bound keeps
    memory flat on a FlowFile with millions of distinct keys (an evicted key is asked again).

    Args:
        service: the lookup service (bound to the processor's session).
        context: the FlowFile's attributes (NiFi passes them as the lookup context).
        entries: the most answers kept (:data:`MEMO_ENTRIES`).
    """

    def __init__(
        self, service: LookupService, context: Mapping[str, str], entries: int | None = None
    ) -> None:
        self.service = service
        self.context = dict(context)
        self.entries = MEMO_ENTRIES if entries is None else entries
        self._answers: OrderedDict[Any, Any] = OrderedDict()
        self.count = 0

    def __len__(self) -> int:
        """The answers held now (at most ``entries``)."""
        return len(self._answers)

    def get(self, coordinates: Mapping[str, Any]) -> Any | None:
        """The service's value at *coordinates*, or None.

        Raises:
            LookupFailureError: the service failed (NiFi: "Failed to lookup coordinates").
        """
        key = _hashable(coordinates)
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        try:
            found = self.service.lookup(dict(coordinates), self.context)
        except LookupFailureError as error:
            msg = f"Failed to lookup coordinates {dict(coordinates)} in Lookup Service: {error}"
            raise LookupFailureError(msg) from None
        self.count += 1
        self._answers[key] = found
        if len(self._answers) > self.entries:
            self._answers.popitem(last=False)
        return found


def _copy(value: Any) -> Any:
    """A lookup result as a value of its own (records are changed in place later)."""
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


@attrs.frozen
class RecordLookup:
    """The lookups and updates of one FlowFile's records (NiFi's replacement strategies).

    Attributes:
        paths: the coordinate RecordPaths, by coordinate name (the dynamic properties).
        result_path: ``Result RecordPath`` (use-property), or None.
        root_path: ``Root Record Path``, or None.
        record_fields: ``Record Result Contents`` is ``record-fields``.
        in_place: the strategy is ``replace-existing-values``.
        coordinate_key: the service's single required key (in place).
    """

    paths: Mapping[str, RecordPath]
    result_path: RecordPath | None
    root_path: RecordPath | None
    record_fields: bool
    in_place: bool
    coordinate_key: str

    def sub_records(self, record: MutableMapping[str, Any]) -> list[MutableMapping[str, Any]]:
        """The records the paths evaluate against (NiFi's ``getSubRecords``)."""
        if self.root_path is None:
            return [record]
        found: list[Any] = []
        for field in self.root_path.evaluate(record):
            value = field.value
            if isinstance(value, list | tuple):
                found.extend(value)
            else:
                found.append(value)
        return [v for v in found if isinstance(v, MutableMapping)]

    def apply(self, record: MutableMapping[str, Any], lookups: Lookups) -> set[MatchResult]:
        """Look *record*'s (sub-)records up and update them in place; the match results."""
        strategy = self._in_place if self.in_place else self._use_property
        return {strategy(sub, lookups) for sub in self.sub_records(record)}

    def coordinates(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """Each path's one non-null value by its name; None when one selects none or several."""
        found = {}
        for name, path in self.paths.items():
            values = [f.value for f in path.evaluate(record) if f.value is not None]
            if len(values) != 1:
                return None
            found[name] = values[0]
        return found

    def _use_property(self, record: MutableMapping[str, Any], lookups: Lookups) -> MatchResult:
        coordinates = self.coordinates(record)
        if coordinates is None:
            return MatchResult.NONE_MATCH
        found = lookups.get(coordinates)
        if found is None:
            return MatchResult.NONE_MATCH
        self._write_result(record, found)
        return MatchResult.ALL_MATCH

    def _write_result(self, record: MutableMapping[str, Any], found: Any) -> None:
        """NiFi's ``applyLookupResult``: the result at Result RecordPath (or its fields)."""
        if self.result_path is None:
            return
        targets: list[FieldValue] = list(self.result_path.evaluate(record))
        for target in targets:
            if self.record_fields and isinstance(found, Mapping):
                destination = target.value
                if isinstance(destination, MutableMapping):
                    destination.update(_copy(found))
                else:
                    target.update_value(_copy(found))
            else:
                target.update_value(_copy(found))

    def _in_place(self, record: MutableMapping[str, Any], lookups: Lookups) -> MatchResult:
        unmatched = matched = False
        for path in self.paths.values():
            selected = path.evaluate(record)
            if not selected:
                continue  # an empty array counts as a match
            values = [f for f in selected if f.value is not None]
            if not values:
                return MatchResult.NONE_MATCH
            for field in values:
                found = lookups.get({self.coordinate_key: field.value})
                if found is None:
                    unmatched = True
                    continue
                matched = True
                field.update_value(_copy(found))
        if unmatched and matched:
            return MatchResult.SOME_MATCH
        return MatchResult.NONE_MATCH if unmatched else MatchResult.ALL_MATCH


# --- the enriched schema ------------------------------------------------------------------


def enriched_schema(
    schema: RecordSchema, record: Mapping[str, Any], hints: RecordSchema | None = None
) -> RecordSchema:
    """*schema* with what *record* gained (NiFi's ``incorporateInactiveFields``).

    A field the record has and the schema lacks is added (typed by its value, a STRING when
    null); a nested record or array of records gains its new fields the same way; a field
    that now holds a record where its type was not one becomes that record's type. Added
    fields are nullable: records without a match have none. A field *hints* has (the schema
    the added values came with) takes its type from there, wherever it is added.
    """
    fields = [
        attrs.evolve(field, type=_widened(field.type, record.get(field.name), hints))
        for field in schema.fields
    ]
    for name, value in record.items():
        if schema.field(name) is None:
            hinted = hints.field(name) if hints is not None else None
            dtype = hinted.type if hinted is not None else _typed(value)
            fields.append(RecordField(name, dtype, nullable=True))
    return attrs.evolve(schema, fields=fields)


def _typed(value: Any) -> DataType:
    return infer_value_type(value) or STRING


def _widened(dtype: DataType, value: Any, hints: RecordSchema | None) -> DataType:
    if value is None:
        return dtype
    if isinstance(dtype, RecordType) and isinstance(value, Mapping):
        return RecordType(enriched_schema(dtype.schema, value, hints))
    if (
        isinstance(dtype, ArrayType)
        and isinstance(dtype.element, RecordType)
        and isinstance(value, list | tuple)
    ):
        element = dtype.element.schema
        for item in value:
            if isinstance(item, Mapping):
                element = enriched_schema(element, item, hints)
        return attrs.evolve(dtype, element=RecordType(element))
    if isinstance(value, Mapping) and not isinstance(dtype, RecordType | MapType):
        return _typed(value)
    if isinstance(value, str):
        return with_text(dtype)
    return dtype


#: Types whose values are text in a record: a text value in them is no lookup answer's mark.
_TEXT_VALUED = frozenset({"string", "char", "uuid", "enum", "date", "time", "timestamp"})


def with_text(dtype: DataType) -> DataType:
    """*dtype* once a lookup wrote a text answer into its field (NiFi's ``mergeDataTypes``).

    LookupRecord sets the answer with the type ``inferDataType`` gives text, STRING; the
    field's type merges with it: a STRING stays, a CHAR or UUID widens to STRING, any other
    type becomes a CHOICE of it and STRING (a BOOLEAN field holding "yes" is
    CHOICE[BOOLEAN, STRING]; NiFi writes "1" there as the text it is, not as true). A field
    whose values are text already (an ENUM, a date as read, a CHOICE with one of those) keeps
    its type: a text value there need not be an answer.
    """
    if isinstance(dtype, ChoiceType):
        if any(option.name in _TEXT_VALUED for option in dtype.options):
            return dtype
        # the options as they are (one that widens another is not merged into it), and STRING
        return ChoiceType(sorted([*dtype.options, STRING], key=DataType.order))
    if dtype.name in ("char", "uuid"):
        return STRING
    if dtype.name in _TEXT_VALUED or not isinstance(dtype, SimpleType | DecimalType):
        return dtype
    merged = merge_types(dtype, STRING)
    assert merged is not None  # merging two types is never None
    return merged


def rows_to_batch(rows: list[dict[str, Any]], schema: RecordSchema) -> pa.RecordBatch:
    """*rows* as one batch of *schema* (values coerced as a reader coerces them).

    Raises:
        RecordError: a value does not fit its field (naming the record and field).
    """
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=schema.to_arrow())
    parsed = ((number, None, row) for number, row in enumerate(rows, start=1))
    batches = list(batches_of(parsed, schema, TemporalFormats(), max(len(rows), 1), 0))
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches, schema=schema.to_arrow()).combine_chunks().to_batches()[0]
