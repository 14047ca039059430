"""JoltTransformRecord: a Jolt specification applied to each record (NiFi's processor)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import attrs
import pyarrow as pa
from pyjolt import PyJoltError
from pyjolt.transforms import Transform

from flowcore.errors import RecordError
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.records.formats import java_double_str
from flowcore.records.inference import infer_record_schema
from flowcore.records.record_io import RECORD_FAILURES, read_records, services, write_records
from flowcore.records.schema import ArrayType, DataType, MapType, RecordSchema, RecordType
from flowcore.records.values import batch_rows
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors._jolt import (
    CHAIN,
    CUSTOM,
    SORT,
    JoltSpecError,
    TransformCache,
    build_transform,
    parse_spec,
    read_spec_text,
)
from processors._record_update import rows_to_batch
from processors.jolt_transform_json import JoltTransformJSON
from processors.record_services.schema_access import RecordWriterService

__all__ = ["JoltTransformRecord"]

REL_SUCCESS = Relationship(
    "success", "The FlowFile with transformed content will be routed to this relationship"
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile fails processing for any reason (for example, the FlowFile records cannot be "
    "parsed), it will be routed to this relationship",
)
REL_ORIGINAL = Relationship(
    "original",
    "The original FlowFile that was transformed. If the FlowFile fails processing, nothing will "
    "be sent to this relationship",
)


def _renamed(descriptor: PropertyDescriptor, old: str) -> PropertyDescriptor:
    """JoltTransformJSON's property, also under JoltTransformRecord's NiFi 1 name *old*."""
    return attrs.evolve(descriptor, aliases=(*descriptor.aliases, old))


class _TransformFailed(Exception):
    """This FlowFile cannot be transformed (goes to failure)."""


class JoltTransformRecord(Processor):
    """Applies a Jolt specification to each record of a FlowFile (NiFi's JoltTransformRecord).

    The Jolt properties are JoltTransformJSON's (``Jolt Transform``, ``Jolt Specification`` as
    text or a file, with Expression Language per FlowFile, ``Transform Cache Size``, and the
    Custom transform's Python class). Each record, read by the Record Reader, is transformed as
    a JSON object; a result that is an array gives one record per element. The Record Writer
    writes them into a new FlowFile (a child of the original) with ``record.count`` and
    ``mime.type``; its schema is the writer's own or, inherited, the schema inferred from the
    first transformed record, as NiFi's. The transformed FlowFile goes to ``success`` and the
    original to ``original``; a FlowFile whose records do not parse or whose transform fails
    goes to ``failure`` and nothing is made.
    """

    JOLT_TRANSFORM = _renamed(JoltTransformJSON.JOLT_TRANSFORM, "jolt-record-transform")
    JOLT_SPEC = _renamed(JoltTransformJSON.JOLT_SPEC, "jolt-record-spec")
    CUSTOM_CLASS = _renamed(JoltTransformJSON.CUSTOM_CLASS, "jolt-record-custom-class")
    MODULES = _renamed(JoltTransformJSON.MODULES, "jolt-record-custom-modules")
    TRANSFORM_CACHE_SIZE = _renamed(
        JoltTransformJSON.TRANSFORM_CACHE_SIZE, "jolt-record-transform-cache-size"
    )
    RECORD_READER = PropertyDescriptor(
        "Record Reader",
        description="Specifies the Controller Service to use for parsing incoming data and "
        "determining the data's schema.",
        required=True,
        identifies_service="RecordReaderFactory",
        aliases=("jolt-record-record-reader",),
    )
    RECORD_WRITER = PropertyDescriptor(
        "Record Writer",
        description="Specifies the Controller Service to use for writing out the records",
        required=True,
        identifies_service="RecordSetWriterFactory",
        aliases=("jolt-record-record-writer",),
    )
    property_descriptors: ClassVar = (
        JOLT_TRANSFORM,
        JOLT_SPEC,
        CUSTOM_CLASS,
        MODULES,
        TRANSFORM_CACHE_SIZE,
        RECORD_READER,
        RECORD_WRITER,
    )
    # NiFi's names on the class, as NiFi's tests reach them (JoltTransformRecord.REL_SUCCESS).
    REL_SUCCESS: ClassVar = REL_SUCCESS
    REL_FAILURE: ClassVar = REL_FAILURE
    REL_ORIGINAL: ClassVar = REL_ORIGINAL
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_ORIGINAL)
    tags: ClassVar = (
        "record",
        "jolt",
        "transform",
        "shiftr",
        "chainr",
        "defaultr",
        "removr",
        "cardinality",
        "sort",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "record.count": "The number of records in an outgoing FlowFile",
        "mime.type": "The MIME Type that the configured Record Writer indicates is appropriate",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._cache: TransformCache | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_cache"] = None  # transforms are rebuilt where the processor is scheduled
        return state

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """JoltTransformJSON's checks of the specification (the same properties and rules)."""
        # The descriptors are JoltTransformJSON's by name, so its validation applies as it is.
        return JoltTransformJSON.custom_validate(self, values)  # type: ignore[arg-type]

    def on_scheduled(self, context: ProcessContext) -> None:
        """A fresh cache of ``Transform Cache Size`` built transforms."""
        self._cache = TransformCache(
            context.get_property(self.TRANSFORM_CACHE_SIZE).as_integer() or 1
        )

    def _transform(self, context: ProcessContext, flowfile: FlowFile) -> Transform:
        """The transform for *flowfile*: built once per distinct evaluated specification."""
        if self._cache is None:
            self.on_scheduled(context)
        assert self._cache is not None
        strategy = context.get_property(self.JOLT_TRANSFORM).value or CHAIN
        spec = context.get_property(self.JOLT_SPEC)
        text = spec.evaluate_attribute_expressions(flowfile).value if spec.is_set() else None
        custom = context.get_property(self.CUSTOM_CLASS)
        custom_name = (
            custom.evaluate_attribute_expressions(flowfile).value if custom.is_set() else None
        )
        modules = context.get_property(self.MODULES)
        dirs = tuple(
            p.strip()
            for p in (modules.evaluate_attribute_expressions().value or "").split(",")
            if p.strip()
        )

        def build() -> Transform:
            parsed = parse_spec(read_spec_text(text)) if text and strategy != SORT else None
            return build_transform(strategy, parsed, custom_class=custom_name, module_dirs=dirs)

        key = text if strategy != CUSTOM else f"{custom_name}\n{text}"
        try:
            return self._cache.get(key, build)
        except JoltSpecError as ex:
            msg = f"Transform creation failed: {ex}"
            raise _TransformFailed(msg) from ex

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Transform the records of one FlowFile into a new one."""
        original = session.get()
        if original is None:
            return
        reader, writer = services(context, session, self.RECORD_READER, self.RECORD_WRITER)
        assert writer is not None
        transformed = None
        try:
            transform = self._transform(context, original)
            with read_records(session, original, reader) as records:
                out = _Output(transform, writer, original.attributes)
                batches = out.batches(iter(records))
                first = next(batches, None)
                schema = out.schema or records.arrow_schema()
                transformed = session.create(original)  # removed if writing fails
                transformed, written = write_records(
                    session,
                    transformed,
                    writer,
                    schema,
                    _chain(first, batches),
                    attributes=original.attributes,
                )
        except (*RECORD_FAILURES, _TransformFailed) as error:
            context.logger.error("Transform failed for %s: %s", original, error)
            if transformed is not None:
                session.remove(transformed)
            session.transfer(original, REL_FAILURE)
            return
        transformed = session.put_all_attributes(
            transformed, {"record.count": str(out.count), **written}
        )
        session.transfer(transformed, REL_SUCCESS)
        session.transfer(original, REL_ORIGINAL)


def _chain(first: pa.RecordBatch | None, rest: Iterator[pa.RecordBatch]) -> Iterator[Any]:
    if first is not None:
        yield first
    yield from rest


class _Output:
    """The transformed records of a FlowFile, batch by batch, under the first one's schema."""

    def __init__(
        self, transform: Transform, writer: RecordWriterService, attributes: Mapping[str, str]
    ) -> None:
        self._transform = transform
        self._writer = writer
        self._attributes = attributes
        self.schema: RecordSchema | None = None
        self.count = 0

    def batches(self, source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The output batches: each input batch's records, transformed."""
        for batch in source:
            rows: list[dict[str, Any]] = []
            for row in batch_rows(batch):
                results = self._apply(row)
                if self.schema is None:
                    if not results:
                        msg = "Error transforming the first record"
                        raise _TransformFailed(msg)
                    own = infer_record_schema(results[:1])
                    self.schema = self._writer.write_schema(own.to_arrow(), self._attributes)
                rows.extend(results)
            if rows:
                assert self.schema is not None
                yield rows_to_batch(
                    (_java_strings(r, RecordType(self.schema)) for r in rows),
                    self.schema,
                    self.count + 1,
                )
                self.count += len(rows)

    def _apply(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """NiFi's ``transform``: a result object is one record, an array one per element."""
        try:
            owned = getattr(self._transform, "_apply_owned", None)
            result = owned(record) if owned is not None else self._transform.apply(record)
        except (PyJoltError, TypeError, ValueError, KeyError, IndexError, AttributeError) as ex:
            msg = f"the Jolt transform failed: {ex}"
            raise _TransformFailed(msg) from ex
        if result is None:
            return []
        items = result if isinstance(result, list) else [result]
        out = []
        for item in items:
            if item is None:
                continue
            if not isinstance(item, dict):
                msg = f"the Jolt transform gave {json.dumps(item, default=str)[:60]}, not a record"
                raise RecordError(msg, record=self.count + 1)
            out.append(item)
        return out


def _java_strings(value: Any, dtype: DataType | None) -> Any:
    """Maps and arrays where the schema says STRING written as Java's ``toString`` does.

    NiFi's records hold Java maps after Jolt; a writer given one for a STRING field writes
    ``{Day=15, Hour=6}``. Elsewhere the value is left as it is.
    """
    if value is None or dtype is None:
        return value
    if dtype.name == "string" and isinstance(value, (Mapping, list)):
        return _java_text(value)
    if isinstance(dtype, RecordType) and isinstance(value, Mapping):
        out = dict(value)
        for field in dtype.schema.fields:
            if field.name in out:
                out[field.name] = _java_strings(out[field.name], field.type)
        return out
    if isinstance(dtype, ArrayType) and isinstance(value, list):
        return [_java_strings(v, dtype.element) for v in value]
    if isinstance(dtype, MapType) and isinstance(value, Mapping):
        return {k: _java_strings(v, dtype.value) for k, v in value.items()}
    return value


def _java_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}={_java_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_text(v) for v in value) + "]"
    return str(value)
