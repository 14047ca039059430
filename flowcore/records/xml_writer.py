"""NiFi's XMLRecordSetWriter as a codec: record batches to XML, byte for byte as NiFi writes it.

NiFi's ``WriteXMLResult`` writes through the JDK's ``XMLStreamWriter`` (and stax-utils'
``IndentingXMLStreamWriter`` when pretty printing); this writer reproduces their bytes:

- the declaration is ``<?xml version="1.0" ?>`` (the JDK's, with its space), omitted with
  "Omit XML Declaration";
- the records are wrapped in "Name of Root Tag" when it is set (else one record only may be
  written), each in "Name of Record Tag" (else the schema's name);
- a field is an element of its name (the characters ``/<>!&'"`` stripped from tag names); an
  empty element is ``<a></a>``; text escapes ``&``, ``<`` and ``>``;
- a null is an empty element unless "Suppress Null Values" suppresses it, and a record (or
  wrapper) whose fields are all suppressed is not written at all;
- arrays repeat the field's element ("Wrap Elements of Arrays": none, or a wrapper/element tag
  named by "Array Tag Name"), maps write an element per key;
- pretty printing indents two spaces per level and ends the document with a newline;
- numbers print as Java prints them (``8.0``), dates/times/timestamps by the configured formats
  (else ``yyyy-MM-dd``, ``HH:mm:ss``, ``yyyy-MM-dd HH:mm:ss``).

Records are written one at a time (XML is per record); memory is one batch.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import IO, Any

import attrs
import pyarrow as pa

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import formats
from flowcore.records.options import nifi
from flowcore.records.schema import (
    ArrayType,
    ChoiceType,
    DataType,
    MapType,
    RecordSchema,
    RecordType,
)
from flowcore.records.values import batch_rows, choose_option, to_text

__all__ = ["XmlRecordWriter", "XmlWriterOptions", "write_xml"]

NEVER_SUPPRESS = "never-suppress"
ALWAYS_SUPPRESS = "always-suppress"
SUPPRESS_MISSING = "suppress-missing"
NO_WRAPPING = "no-wrapping"
USE_PROPERTY_AS_WRAPPER = "use-property-as-wrapper"
USE_PROPERTY_FOR_ELEMENTS = "use-property-for-elements"

_TAG_STRIP = re.compile(r"[/<>!&'\"]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_INDENT = "  "
#: stax-utils' scope flags: markup (elements, indentation) and data (text) written in a scope.
_MARKUP = 1
_DATA = 2


@attrs.frozen
class XmlWriterOptions:
    """XMLRecordSetWriter's properties (NiFi's names and internal values), NiFi's defaults.

    Attributes:
        suppress_nulls: "Suppress Null Values" (a null counts as present: Arrow cannot tell
            a missing field from a null one, so ``suppress-missing`` writes nulls).
        pretty_print: "Pretty Print XML".
        omit_declaration: "Omit XML Declaration".
        root_tag: "Name of Root Tag" (None: a single record, no root).
        record_tag: "Name of Record Tag" (None: the schema's name).
        array_wrapping: "Wrap Elements of Arrays".
        array_tag: "Array Tag Name".
        character_set: "Character Set".
        date_format: "Date Format" (None: ``yyyy-MM-dd``).
        time_format: "Time Format" (None: ``HH:mm:ss``).
        timestamp_format: "Timestamp Format" (None: ``yyyy-MM-dd HH:mm:ss``).
    """

    suppress_nulls: str = nifi(
        "Suppress Null Values",
        NEVER_SUPPRESS,
        validator=attrs.validators.in_((NEVER_SUPPRESS, ALWAYS_SUPPRESS, SUPPRESS_MISSING)),
    )
    pretty_print: bool = nifi("Pretty Print XML", False)
    omit_declaration: bool = nifi("Omit XML Declaration", False)
    root_tag: str | None = nifi("Name of Root Tag", None)
    record_tag: str | None = nifi("Name of Record Tag", None)
    array_wrapping: str = nifi(
        "Wrap Elements of Arrays",
        NO_WRAPPING,
        validator=attrs.validators.in_(
            (NO_WRAPPING, USE_PROPERTY_AS_WRAPPER, USE_PROPERTY_FOR_ELEMENTS)
        ),
    )
    array_tag: str | None = nifi("Array Tag Name", None)
    character_set: str = nifi("Character Set", "UTF-8")
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)

    def __attrs_post_init__(self) -> None:
        if self.array_wrapping != NO_WRAPPING and not self.array_tag:
            msg = (
                "if property 'Wrap Elements of Arrays' is defined as 'Use Property as Wrapper' "
                "or 'Use Property for Elements' the property 'Array Tag Name' has to be set."
            )
            raise ConfigurationError(msg)


class _Out:
    """The JDK's XMLStreamWriter, with stax-utils' indentation when pretty printing."""

    def __init__(self, pretty: bool) -> None:
        self.parts: list[str] = []
        self._pretty = pretty
        self._open: list[str] = []  # the element names open, innermost last
        self._stack = [0]  # stax-utils' flags per depth

    def _before_markup(self) -> None:
        depth = len(self._open)
        so_far = self._stack[depth]
        if not so_far & _DATA and (depth > 0 or so_far != 0):
            self.parts.append("\n" + _INDENT * depth)
            if depth > 0:
                self._stack[depth] |= _MARKUP

    def declaration(self) -> None:
        if self._pretty:
            self._before_markup()
        self.parts.append('<?xml version="1.0" ?>')
        self._stack[0] |= _MARKUP

    def start(self, name: str) -> None:
        if self._pretty:
            self._before_markup()
            self._stack[len(self._open)] |= _MARKUP
            self._stack.append(0)
        self.parts.append(f"<{name}>")
        self._open.append(name)

    def text(self, text: str) -> None:
        self.parts.append(text.translate(_ESCAPES))
        if self._pretty:
            self._stack[len(self._open)] |= _DATA

    def end(self) -> None:
        name = self._open.pop()
        if self._pretty:
            depth = len(self._open) + 1
            if self._stack[depth] == _MARKUP:
                self.parts.append("\n" + _INDENT * (depth - 1))
            self._stack.pop()
        self.parts.append(f"</{name}>")

    def end_document(self) -> None:
        while self._open:
            self.end()
        if self._pretty and self._stack[0] == _MARKUP:
            self.parts.append("\n")
        self._stack[0] = 0

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts = []
        return text


class XmlRecordWriter:
    """Writes record batches to a binary stream as NiFi's WriteXMLResult does.

    Call :meth:`write` for each batch and :meth:`finish` once; the stream stays open.

    Raises:
        ConfigurationError: no record tag and the schema has no name.
    """

    def __init__(
        self,
        stream: IO[bytes],
        schema: RecordSchema,
        options: XmlWriterOptions = XmlWriterOptions(),
    ) -> None:
        record_tag = options.record_tag or schema.name
        if not record_tag:
            msg = (
                "The property 'Name of Record Tag' has not been set and the writer does not "
                "find a record name in the schema."
            )
            raise ConfigurationError(msg)
        self._stream = stream
        self._schema = schema
        self._options = options
        self._record_tag = record_tag
        self._count = 0
        self._written = False
        self._finished = False
        self._out = _Out(options.pretty_print)
        self._never = options.suppress_nulls != ALWAYS_SUPPRESS
        if not options.omit_declaration:
            self._out.declaration()
        if options.root_tag is not None:
            self._out.start(options.root_tag)
        self._flush()

    @property
    def record_count(self) -> int:
        """Records written so far."""
        return self._count

    def _flush(self) -> None:
        text = self._out.take()
        if text:
            self._stream.write(text.encode(self._options.character_set, "xmlcharrefreplace"))

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*.

        Raises:
            RecordError: a second record without "Name of Root Tag".
        """
        for row in batch_rows(batch):
            if self._options.root_tag is None and self._written:
                msg = (
                    "The writer attempts to write multiple record although property 'Name of "
                    "Root Tag' has not been set. If the XMLRecordSetWriter is supposed to write "
                    "multiple records into one FlowFile, this property is required to be "
                    "configured."
                )
                self._flush()
                raise RecordError(msg, record=self._count + 1)
            pending = [self._record_tag]
            if self._record(pending, row, self._schema):
                self._out.end()
                self._written = True
            self._count += 1
        self._flush()

    def finish(self) -> dict[str, str]:
        """End the record set; returns NiFi's attributes (``record.count``, ``mime.type``)."""
        if not self._finished:
            self._finished = True
            self._out.end_document()
            self._flush()
        return {"record.count": str(self._count), "mime.type": "application/xml"}

    # --- NiFi's iterateThroughRecordUsingSchema / writeFieldForType ----------------------------

    def _open_all(self, pending: list[str], name: str | None = None) -> None:
        if name is not None:
            pending.append(name)
        for tag in pending:
            self._out.start(_TAG_STRIP.sub("", tag))
        pending.clear()

    def _empty(self, pending: list[str], name: str) -> None:
        self._open_all(pending, name)
        self._out.end()

    def _record(self, pending: list[str], row: dict[str, Any], schema: RecordSchema) -> bool:
        written = False
        for field in schema.fields:
            value = row.get(field.name) if isinstance(row, dict) else None
            dtype = field.type
            if isinstance(dtype, ChoiceType) and value is not None:
                dtype = choose_option(value, dtype) or dtype
            if value is not None:
                written = self._field(pending, value, dtype, field.name) or written
            elif self._never:
                self._empty(pending, field.name)
                written = True
        return written

    def _close_or_drop(self, pending: list[str], written: bool) -> bool:
        """The end of a wrapper: closed when written, empty when nulls are kept, else dropped."""
        if written:
            self._out.end()
            return True
        if self._never:
            self._open_all(pending)
            self._out.end()
            return True
        pending.pop()
        return False

    def _field(self, pending: list[str], value: Any, dtype: DataType | None, name: str) -> bool:
        if isinstance(dtype, RecordType) and isinstance(value, dict):
            pending.append(name)
            return self._close_or_drop(pending, self._record(pending, value, dtype.schema))
        if isinstance(dtype, ArrayType) or (dtype is None and isinstance(value, list)):
            return self._array(pending, value, dtype, name)
        if isinstance(dtype, MapType) or (dtype is None and isinstance(value, dict)):
            pending.append(name)
            inner = dtype.value if isinstance(dtype, MapType) else None
            written = False
            for key, item in value.items():
                if item is not None:
                    written = self._field(pending, item, inner, key) or written
                elif self._never:
                    self._empty(pending, key)
                    written = True
            return self._close_or_drop(pending, written)
        if isinstance(dtype, ChoiceType):
            dtype = choose_option(value, dtype)
            if isinstance(dtype, RecordType | ArrayType | MapType):
                return self._field(pending, value, dtype, name)
        self._open_all(pending, name)
        self._out.text(self._text(value, dtype))
        self._out.end()
        return True

    def _array(self, pending: list[str], value: Any, dtype: DataType | None, name: str) -> bool:
        if isinstance(value, (bytes, bytearray)):
            # NiFi's WriteXMLResult: an Avro bytes value is an Object[] of Byte
            # (AvroTypeUtil.normalizeValue), written one element per signed byte
            values: list[Any] = [b - 256 if b > 127 else b for b in value]
        else:
            values = value if isinstance(value, list) else [to_text(value)]
        element_type = dtype.element if isinstance(dtype, ArrayType) else None
        wrapping = self._options.array_wrapping
        tag = self._options.array_tag or ""
        if wrapping == USE_PROPERTY_FOR_ELEMENTS:
            element_name, wrapper = tag, name
        elif wrapping == USE_PROPERTY_AS_WRAPPER:
            element_name, wrapper = name, tag
        else:
            element_name, wrapper = name, None
        if wrapper is not None:
            pending.append(wrapper)
        written = False
        for item in values:
            if item is not None:
                written = self._field(pending, item, element_type, element_name) or written
            elif self._never:
                self._empty(pending, name)
                written = True
        if wrapper is None:
            return written
        return self._close_or_drop(pending, written)

    def _text(self, value: Any, dtype: DataType | None) -> str:
        kind = dtype.name if dtype is not None else ""
        options = self._options
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            if kind == "float":
                return formats.java_float_str(value)
            return formats.java_double_str(value)
        if isinstance(value, Decimal):
            return str(int(value)) if kind == "bigint" else formats.java_decimal_str(value)
        if isinstance(value, dt.datetime):
            pattern = options.timestamp_format or formats.DEFAULT_TIMESTAMP
            return formats.pattern(pattern).format(value)
        if isinstance(value, dt.date):
            return formats.pattern(options.date_format or formats.DEFAULT_DATE).format(value)
        if isinstance(value, dt.time):
            return formats.pattern(options.time_format or formats.DEFAULT_TIME).format(value)
        return to_text(value)


def write_xml(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    options: XmlWriterOptions = XmlWriterOptions(),
    schema: RecordSchema | None = None,
) -> dict[str, str]:
    """Write *batches* to *stream* as one XML record set; returns NiFi's attributes."""
    writer: XmlRecordWriter | None = None
    for batch in batches:
        if writer is None:
            writer = XmlRecordWriter(
                stream, schema or RecordSchema.from_arrow(batch.schema), options
            )
        writer.write(batch)
    if writer is None:
        writer = XmlRecordWriter(stream, schema or RecordSchema((), name="record"), options)
    return writer.finish()
