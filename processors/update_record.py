"""UpdateRecord: change record fields a RecordPath selects, as NiFi's UpdateRecord."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import attrs
import pyarrow as pa

from flowcore.errors import RecordError, RecordPathSyntaxError
from flowcore.expression import compile_expression, contains_expression
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.record_path import compile_record_path
from flowcore.record_path._columns import child_chain
from flowcore.record_path._values import FieldValue
from flowcore.records.inference import infer_value_type, merge_types
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    convert,
    route_failure,
    services,
)
from flowcore.records.schema import STRING, RecordField, RecordSchema, RecordType
from flowcore.records.values import FieldError, TemporalFormats, batch_rows, coerce, to_text
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors._record_update import Updates, nifi_type, path_schema, prefer, rows_to_batch
from processors.record_services.schema_access import RecordWriterService

__all__ = ["UpdateRecord"]

REL_SUCCESS = Relationship(
    "success", "FlowFiles that are successfully transformed will be routed to this relationship"
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile cannot be transformed from the configured input format to the configured "
    "output format, the unchanged FlowFile will be routed to this relationship",
)

LITERAL_VALUES = AllowableValue(
    "literal-value",
    "Literal Value",
    "The value entered for a Property (after Expression Language has been evaluated) is the "
    "desired value to update the Record Fields with. Expression Language may reference "
    "variables 'field.name', 'field.type', and 'field.value' to access information about the "
    "field and the value of the field being evaluated.",
)
RECORD_PATH_VALUES = AllowableValue(
    "record-path-value",
    "Record Path Value",
    "The value entered for a Property (after Expression Language has been evaluated) is not "
    "the literal value to use but rather is a Record Path that should be evaluated against the "
    "Record, and the result of the RecordPath will be used to update the Record. Note that if "
    "this option is selected, and the Record Path results in multiple values for a given "
    "Record, the input FlowFile will be routed to the 'failure' Relationship.",
)

#: The EL variables NiFi gives a literal value per selected field.
FIELD_NAME, FIELD_VALUE, FIELD_TYPE, RECORD_INDEX = (
    "field.name",
    "field.value",
    "field.type",
    "record.index",
)

#: EL that may differ between records: the per-field variables, or a function that does.
_PER_RECORD = re.compile(r"field\.(name|value|type)|record\.index|UUID|random|nextInt|now")

_NO_FORMATS = TemporalFormats()


@attrs.frozen
class _Rule:
    """One dynamic property: the path it updates and its replacement for one FlowFile."""

    path: str
    replacement: str | None
    per_field: bool  # a literal whose EL NiFi evaluates per field (field.*, record.index)


class UpdateRecord(Processor):
    """Updates the fields of each record that RecordPaths select (NiFi's UpdateRecord).

    Each dynamic property's name is a RecordPath naming the fields to update; its value (with
    Expression Language over the FlowFile's attributes) is the new value ("Literal Value", where
    the EL may use ``field.name``, ``field.value``, ``field.type`` and ``record.index``) or a
    RecordPath whose result is the new value ("Record Path Value"; relative paths such as
    ``../nickname`` start at each selected field, ``/`` replaces the whole record).

    The records' schema changes as NiFi's does: a path to a field the schema lacks adds it, a
    new value's type merges with the field's (INT and a literal string: CHOICE[INT, STRING]),
    and the Record Writer's schema comes from the first record. A literal for a top-level
    ``/field`` with no per-record EL is one column operation on the Arrow batch; anything else
    goes record by record through RecordPath. The FlowFile goes to ``success`` with
    ``record.count``, ``mime.type`` and the writer's attributes (CONTENT_MODIFIED); one whose
    records do not parse, whose replacement path is not valid or whose new values do not fit
    the writer's schema goes to ``failure`` unchanged with ``record.error.message``.
    """

    REPLACEMENT_VALUE_STRATEGY = PropertyDescriptor(
        "Replacement Value Strategy",
        description="Specifies how to interpret the configured replacement values",
        default=LITERAL_VALUES.value,
        required=True,
        allowable_values=(LITERAL_VALUES, RECORD_PATH_VALUES),
        aliases=("replacement-value-strategy",),
    )
    # NiFi's names on the class, as NiFi's tests reach them (UpdateRecord.RECORD_PATH_VALUES).
    RECORD_READER: ClassVar = RECORD_READER
    RECORD_WRITER: ClassVar = RECORD_WRITER
    LITERAL_VALUES: ClassVar = LITERAL_VALUES
    RECORD_PATH_VALUES: ClassVar = RECORD_PATH_VALUES
    REL_SUCCESS: ClassVar = REL_SUCCESS
    REL_FAILURE: ClassVar = REL_FAILURE
    property_descriptors: ClassVar = (RECORD_READER, RECORD_WRITER, REPLACEMENT_VALUE_STRATEGY)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "update",
        "record",
        "generic",
        "schema",
        "json",
        "csv",
        "avro",
        "log",
        "logs",
        "freeform",
        "text",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        RECORD_INDEX: "This attribute provides the current row index and is only available "
        "inside the literal value expression.",
        "record.error.message": "This attribute provides on failure the error message "
        "encountered by the Reader or Writer.",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A RecordPath (the name) and its replacement value."""
        return PropertyDescriptor(
            name,
            description="Specifies the value to use to replace fields in the record that match "
            f"the RecordPath: {name}",
            required=False,
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """At least one RecordPath, and each property name a valid RecordPath."""
        del values
        paths = self.dynamic_properties
        if not paths:
            return [
                ValidationResult(
                    "User-defined Properties",
                    None,
                    False,
                    "At least one RecordPath must be specified",
                )
            ]
        problems = []
        for name in paths:
            try:
                compile_record_path(name)
            except RecordPathSyntaxError as error:
                why = f"Property Name is not a valid RecordPath value: {error}"
                problems.append(ValidationResult(name, paths[name], False, why))
        return problems

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Update the records of one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        as_path = context.get_property(self.REPLACEMENT_VALUE_STRATEGY).value == (
            RECORD_PATH_VALUES.value
        )
        try:
            rules = tuple(self._rules(context, flowfile, as_path))
            if not as_path and all(_is_column(rule) for rule in rules):
                transform = _ColumnUpdate(rules, writer, flowfile.attributes)
            else:
                transform = _RecordUpdate(rules, as_path, writer, flowfile)
            updated, written, count = convert(session, flowfile, reader, writer, transform)
        except RECORD_FAILURES as error:
            route_failure(context, session, flowfile, error, REL_FAILURE)
            return
        updated = session.put_all_attributes(updated, written)
        session.transfer(updated, REL_SUCCESS)
        session.adjust_counter("Records Processed", count)
        context.logger.info("Successfully converted %d records for %s", count, updated)

    def _rules(self, context: ProcessContext, flowfile: FlowFile, as_path: bool) -> Iterator[_Rule]:
        for name in self.dynamic_properties:
            prop = context.get_property(name)
            per_field = not as_path and contains_expression(prop.value)
            if as_path or not per_field:
                text = prop.evaluate_attribute_expressions(flowfile).value
                yield _Rule(name, text, per_field=False)
            elif _PER_RECORD.search(prop.value or ""):
                yield _Rule(name, prop.value, per_field=True)
            else:  # EL that is the same for every record: evaluated once
                text = prop.evaluate_attribute_expressions(flowfile).value
                yield _Rule(name, text, per_field=False)


def _is_column(rule: _Rule) -> bool:
    """Whether *rule* is a literal for a top-level field, the same for every record."""
    names = child_chain(compile_record_path(rule.path).tree)
    return not rule.per_field and names is not None and len(names) == 1


class _ColumnUpdate:
    """Literal values for top-level fields, as column operations on each batch."""

    def __init__(
        self, rules: tuple[_Rule, ...], writer: RecordWriterService, attributes: Mapping[str, str]
    ) -> None:
        self._rules = [(child_chain(compile_record_path(r.path).tree)[0], r) for r in rules]  # type: ignore[index]
        self._writer = writer
        self._attributes = attributes
        self._plan: tuple[pa.Schema, list[tuple[str, pa.Field, Any]]] | None = None

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        plan = self._plan
        if plan is None or plan[0] != batch.schema:
            plan = self._plan = (batch.schema, self._columns(batch.schema))
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        fields = {f.name: f for f in batch.schema}
        for name, field, value in plan[1]:
            columns[name] = _constant(value, field.type, batch.num_rows)
            fields[name] = field
        return pa.RecordBatch.from_arrays(
            list(columns.values()), schema=pa.schema(list(fields.values()))
        )

    def _columns(self, arrow: pa.Schema) -> list[tuple[str, pa.Field, Any]]:
        """Each updated field's Arrow field (the writer's type) and its coerced value."""
        own = RecordSchema.from_arrow(arrow)
        fields = {f.name: f for f in own.fields}
        for name, _ in self._rules:
            known = fields.get(name)
            if known is None:
                fields[name] = RecordField(name, STRING)
            else:
                kind = merge_types(known.type, STRING) or STRING
                fields[name] = attrs.evolve(known, type=kind)
        own = RecordSchema(fields.values(), own.name, own.namespace)
        target = self._writer.write_schema(own.to_arrow(), self._attributes)
        out = []
        for name, rule in self._rules:
            field = target.field(name) or fields[name]
            try:
                value = coerce(prefer(rule.replacement, field.type), field.type, _NO_FORMATS, name)
            except FieldError as exc:
                msg = f"record 1, field {name!r}: {exc}"
                raise RecordError(msg, record=1, field=name) from None
            arrow_field = RecordSchema((attrs.evolve(field, name=name),)).to_arrow().field(0)
            out.append((name, arrow_field, value))
        return out


def _constant(value: Any, kind: pa.DataType, length: int) -> pa.Array:
    try:
        return pa.repeat(pa.scalar(value, kind), length)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([value] * length, kind)


class _RecordUpdate:
    """The general case: each record through RecordPath, as NiFi's ``UpdateRecord.process``."""

    def __init__(
        self,
        rules: tuple[_Rule, ...],
        as_path: bool,
        writer: RecordWriterService,
        flowfile: FlowFile,
    ) -> None:
        self._rules = [(compile_record_path(r.path), r) for r in rules]
        self._replacements = (
            {r.path: compile_record_path(r.replacement or "") for r in rules} if as_path else {}
        )
        self._expressions = {
            r.path: compile_expression(r.replacement or "") for r in rules if r.per_field
        }
        self._as_path = as_path
        self._writer = writer
        self._flowfile = flowfile
        self._index = 0
        self._target: RecordSchema | None = None

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        schema = RecordSchema.from_arrow(batch.schema)
        rows = []
        first = self._index + 1
        for row in batch_rows(batch):
            self._index += 1
            updates = Updates()
            record, own = self._process(row, schema, updates)
            if self._target is None:
                own = updates.schema_of(record, own)
                self._target = self._writer.write_schema(own.to_arrow(), self._flowfile.attributes)
            rows.append(record)
        target = self._target or schema
        return rows_to_batch(rows, target, first)

    def _process(
        self, record: dict[str, Any], schema: RecordSchema, updates: Updates
    ) -> tuple[dict[str, Any], RecordSchema]:
        for path, rule in self._rules:
            view = path_schema(schema)
            selected = path.evaluate(record, schema=view)
            if self._as_path:
                try:
                    record, schema = self._by_path(record, schema, selected, rule, updates)
                except RecordError as exc:
                    msg = f"record {self._index}, property {rule.path!r}: {exc}"
                    raise RecordError(msg, record=self._index, field=exc.field) from None
            elif rule.per_field:
                expression = self._expressions[rule.path]
                for fv in selected:
                    variables = {
                        FIELD_NAME: fv.field_name,
                        FIELD_VALUE: None if fv.value is None else to_text(fv.value),
                        FIELD_TYPE: nifi_type(fv).name.upper(),
                        RECORD_INDEX: str(self._index),
                    }
                    value = expression.evaluate(self._flowfile, variables=variables)
                    updates.set(fv, value, STRING)
            else:
                for fv in selected:
                    updates.set(fv, rule.replacement, STRING)
        return record, schema

    def _by_path(
        self,
        record: dict[str, Any],
        schema: RecordSchema,
        destinations: tuple[FieldValue, ...],
        rule: _Rule,
        updates: Updates,
    ) -> tuple[dict[str, Any], RecordSchema]:
        replacement = self._replacements[rule.path]
        view = path_schema(schema)
        root = len(destinations) == 1 and destinations[0].parent is None
        if replacement.is_absolute or root:
            context = destinations[0] if root and not replacement.is_absolute else None
            selected = replacement.evaluate(record, schema=view, context=context)
            if root:
                return _new_root(record, schema, selected, updates)
            for fv in destinations:
                _update_field(fv, selected, updates)
            return record, schema
        for fv in destinations:
            _update_field(fv, replacement.evaluate(record, schema=view, context=fv), updates)
        return record, schema


def _update_field(fv: FieldValue, selected: tuple[FieldValue, ...], updates: Updates) -> None:
    """NiFi's ``updateFieldValue(fieldValue, getReplacementObject(selected))``."""
    if len(selected) > 1:
        value, schema = _built_record(selected)
        updates.adopt(value, schema)
        updates.set(fv, value, None)
    elif selected:
        updates.set(fv, selected[0].value, nifi_type(selected[0]))
    else:
        updates.set(fv, None, None)


def _built_record(selected: tuple[FieldValue, ...]) -> tuple[dict[str, Any], RecordSchema]:
    """A record of the selected fields (NiFi's MapRecord over their fields).

    Raises:
        RecordError: two selected values share a field name (the elements of one array, the
            same field of several records): NiFi's SimpleRecordSchema refuses such a schema,
            so the FlowFile fails rather than keep only the last value under the name.
    """
    fields: dict[str, RecordField] = {}
    values: dict[str, Any] = {}
    for fv in selected:
        name = fv.field_name or "value"
        if name in fields:
            msg = (
                f"Two fields are given with the same name (or alias) of '{name}': the "
                f"Record Path Value selected {len(selected)} values for one field, so they "
                "cannot make one record; select one value (an index or a predicate)"
            )
            raise RecordError(msg, field=name)
        fields[name] = RecordField(name, nifi_type(fv))
        values[name] = fv.value
    return values, RecordSchema(fields.values())


def _new_root(
    record: dict[str, Any],
    schema: RecordSchema,
    selected: tuple[FieldValue, ...],
    updates: Updates,
) -> tuple[dict[str, Any], RecordSchema]:
    """The whole record replaced (NiFi's ``updateRecord`` when replacing the root)."""
    if not selected:
        return record, schema
    if len(selected) > 1:
        value, own = _built_record(selected)
    elif isinstance(selected[0].value, Mapping):
        value = selected[0].value
        if not isinstance(value, dict):
            value = dict(value)
        kind = nifi_type(selected[0])
        if isinstance(kind, RecordType):
            own = kind.schema
        else:
            inferred = infer_value_type(value)
            own = inferred.schema if isinstance(inferred, RecordType) else RecordSchema(())
    else:
        value, own = _built_record(selected)
    updates.adopt(value, own)
    return value, own
