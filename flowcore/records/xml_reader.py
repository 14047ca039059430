"""NiFi's XMLReader as a codec: XML content to bounded Arrow record batches, streamed.

NiFi's ``XMLRecordReader`` rules:

- "Expect Records as Array" ``false``: the root element is the one record; ``true``: the root
  is a wrapper and each element inside it is a record (its name does not matter);
- a child element is a field of its local name; elements repeated become an array; an
  element's text (whitespace-only text ignored) is the value, or, when the element also has
  attributes or children, goes to the field "Field Name for Content" (dropped when unset);
- "Parse XML Attributes": attributes are fields too, named with "Attribute Prefix" first;
- with a schema, the values are coerced to its types (an ARRAY field from one element is an
  array of one; a scalar field takes the element's own text); fields it lacks are dropped;
- without one, it is inferred as NiFi's ``XmlSchemaInference`` does: text is typed as CSV
  text is (INT, LONG, FLOAT, DOUBLE, BOOLEAN, temporal by the formats, else STRING).

The content is parsed by lxml's ``iterparse`` (libxml2), hardened as ``processors/_xml.py``
parses: no network, no DTD loading, no entity expansion, libxml2's amplification limits on; a
DOCTYPE that names an external DTD or declares entities is refused. Each record's element is
freed once converted, so memory is one batch of records, not the document.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import attrs
import pyarrow as pa
from lxml import etree

from flowcore.records._batches import Parsed, batches_of, record_error
from flowcore.records.inference import FieldTypeInference, infer_text_type
from flowcore.records.options import nifi
from flowcore.records.schema import (
    ArrayType,
    ChoiceType,
    DataType,
    MapType,
    RecordField,
    RecordSchema,
    RecordType,
)
from flowcore.records.values import TemporalFormats

__all__ = ["XmlReaderOptions", "read_xml"]


@attrs.frozen
class XmlReaderOptions:
    """XMLReader's properties (NiFi's names in the field docs), with NiFi's defaults.

    Attributes:
        records_as_array: "Expect Records as Array" (evaluated: ``true`` or ``false``).
        attribute_prefix: "Attribute Prefix" (None: attribute names as they are).
        content_field_name: "Field Name for Content" (None: such content is dropped).
        parse_xml_attributes: "Parse XML Attributes".
        date_format: "Date Format".
        time_format: "Time Format".
        timestamp_format: "Timestamp Format".
        batch_size: records per Arrow batch (memory bound; not a NiFi property).
        inference_sample: records schema inference reads (not a NiFi property).
    """

    records_as_array: bool = nifi("Expect Records as Array", False)
    attribute_prefix: str | None = nifi("Attribute Prefix", None)
    content_field_name: str | None = nifi("Field Name for Content", None)
    parse_xml_attributes: bool = nifi("Parse XML Attributes", True)
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)
    batch_size: int = 8192
    inference_sample: int = 10_000

    @property
    def temporal(self) -> TemporalFormats:
        """The three formats as one value."""
        return TemporalFormats(self.date_format, self.time_format, self.timestamp_format)


@attrs.define
class _Node:
    """An element with attributes or children: its fields, and its own text (or None)."""

    fields: dict[str, Any]
    text: str | None


def read_xml(
    stream: IO[bytes],
    options: XmlReaderOptions = XmlReaderOptions(),
    schema: RecordSchema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the XML records in *stream*, under *schema* (None: inferred).

    Raises:
        RecordError: the XML is not well-formed, is unsafe, or a value does not fit the schema
            (the batches of the records before it were yielded first).
    """
    nodes = _record_nodes(stream, options)
    if schema is None:
        head = []
        for item in nodes:
            head.append(item)
            if len(head) >= options.inference_sample:
                break
        schema = _infer([_plain(n, options.content_field_name) for _, _, n in head], options)
        nodes = _chain(head, nodes)
    return batches_of(
        _fitted(nodes, schema, options),
        schema,
        options.temporal,
        options.batch_size,
        options.inference_sample,
    )


def _chain(head: list[Parsed], rest: Iterator[Parsed]) -> Iterator[Parsed]:
    yield from head
    yield from rest


def _fitted(
    nodes: Iterator[Parsed], schema: RecordSchema, options: XmlReaderOptions
) -> Iterator[Parsed]:
    content = options.content_field_name
    for number, line, node in nodes:
        yield number, line, _fit_record(node, schema, content)


# --- parsing ------------------------------------------------------------------------------------


def _record_nodes(stream: IO[bytes], options: XmlReaderOptions) -> Iterator[Parsed]:
    """Each record element of *stream* as ``(number, line, node)``, freed once converted.

    Only end events are asked for (half the events of start and end): a record is the root,
    or, with records as an array, an element whose parent is the root.
    """
    array = options.records_as_array
    number = 0
    checked = False
    events = etree.iterparse(
        stream,
        events=("end",),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        for _, element in events:
            if not checked:
                checked = True
                _check_doctype(element.getroottree().docinfo, number)
            parent = element.getparent()
            if array:
                if parent is None or parent.getparent() is not None:
                    continue
            elif parent is not None:
                continue
            number += 1
            yield number, element.sourceline, _element_value(element, options, top=True)
            element.clear(keep_tail=True)
            if parent is not None:
                while element.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:
        raise record_error(
            number + 1, exc.lineno, None, f"not well-formed XML: {exc.msg}"
        ) from None


def _check_doctype(info: Any, number: int) -> None:
    if not info.doctype:
        return
    if info.system_url or info.public_id:
        msg = f"the document names an external DTD ({info.system_url!r}), which is never fetched"
        raise record_error(number + 1, 1, None, msg)
    dtd = info.internalDTD
    if dtd is not None and list(dtd.iterentities()):
        msg = "the document declares entities, which are not expanded"
        raise record_error(number + 1, 1, None, msg)


def _element_value(element: Any, options: XmlReaderOptions, *, top: bool = False) -> Any:
    """The value of *element*: its text, or a node of its attributes, children and text."""
    fields: dict[str, Any] = {}
    if options.parse_xml_attributes and len(element.attrib):
        prefix = options.attribute_prefix or ""
        for name, value in element.attrib.items():
            fields[prefix + name] = value
    pieces = []
    text = element.text
    if text and not text.isspace():
        if not len(element) and not fields and not top:
            return text  # a leaf element's text: the common case
        pieces.append(text)
    for child in element:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = tag[tag.index("}") + 1 :] if tag[0] == "{" else tag  # the local name
        value = _element_value(child, options)
        if value is not None:
            if name in fields:
                old = fields[name]
                fields[name] = [*old, value] if isinstance(old, list) else [old, value]
            else:
                fields[name] = value
        if child.tail and not child.tail.isspace():
            pieces.append(child.tail)
    text = "".join(pieces) or None
    if top or fields:
        return _Node(fields, text)
    return text


# --- values -------------------------------------------------------------------------------------


def _plain(value: Any, content: str | None) -> Any:
    """*value* as plain dicts, lists and text (NiFi's ``parseUnknownField``)."""
    if isinstance(value, _Node):
        out = {name: _plain(v, content) for name, v in value.fields.items()}
        if value.text is not None and content:
            out[content] = value.text
        return out
    if isinstance(value, list):
        return [_plain(v, content) for v in value]
    return value


def _fit_record(node: Any, schema: RecordSchema, content: str | None) -> dict[str, Any]:
    """A record element's value for *schema*'s fields (NiFi's ``parseRecord``)."""
    if not isinstance(node, _Node):
        node = _Node({}, node)
    out: dict[str, Any] = {}
    by_name = _fields_by_name(schema)
    for name, value in node.fields.items():
        field = by_name.get(name)
        if field is not None:
            fitted = _fit(value, field.type, content)
            if fitted is not None:
                out[field.name] = fitted
    if node.text is not None and content and content in by_name:
        out[content] = node.text
    return out


#: Field lookups by name (aliases included) per schema, kept with the schema they describe.
_BY_NAME: dict[int, tuple[RecordSchema, dict[str, RecordField]]] = {}


def _fields_by_name(schema: RecordSchema) -> dict[str, RecordField]:
    """*schema*'s fields by name and alias (NiFi's ``getField``), made once per schema."""
    cached = _BY_NAME.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    by_name = {alias: f for f in schema.fields for alias in f.aliases}
    by_name.update({f.name: f for f in schema.fields})
    if len(_BY_NAME) > 256:
        _BY_NAME.clear()
    _BY_NAME[id(schema)] = (schema, by_name)
    return by_name


def _fit(value: Any, dtype: DataType | None, content: str | None) -> Any:
    """A field's value for *dtype* (NiFi's ``parseFieldForType``)."""
    if value is None or dtype is None:
        return _plain(value, content)
    if isinstance(dtype, ArrayType):
        items = value if isinstance(value, list) else [value]
        fitted = [_fit(v, dtype.element, content) for v in items]
        return [v for v in fitted if v is not None] or None
    if isinstance(dtype, ChoiceType):
        return _plain(value, content)
    if isinstance(value, list):  # repeated but not an array: the last one, as NiFi overwrites
        value = value[-1]
    if isinstance(dtype, RecordType):
        fitted = _fit_record(value, dtype.schema, content)
        return fitted or None
    if isinstance(dtype, MapType):
        if not isinstance(value, _Node):
            return None
        entries = {k: _fit(v, dtype.value, content) for k, v in value.fields.items()}
        return entries or None
    if isinstance(value, _Node):
        return value.text
    return value


# --- inference (NiFi's XmlSchemaInference) ------------------------------------------------------


def _infer(records: list[Any], options: XmlReaderOptions) -> RecordSchema:
    temporal = options.temporal
    return _infer_schema([r for r in records if isinstance(r, dict)], temporal)


def _infer_schema(records: list[dict[str, Any]], temporal: TemporalFormats) -> RecordSchema:
    fields: dict[str, FieldTypeInference] = {}
    for record in records:
        for name, value in record.items():
            inference = fields.get(name)
            if inference is None:
                inference = fields[name] = FieldTypeInference()
            inference.add(_infer_type(value, temporal))
    return RecordSchema(RecordField(name, inf.to_type(), True) for name, inf in fields.items())


def _infer_type(value: Any, temporal: TemporalFormats) -> DataType | None:
    if value is None:
        return None
    if isinstance(value, str):
        return infer_text_type(value, temporal)
    if isinstance(value, dict):
        return RecordType(_infer_schema([value], temporal))
    element = FieldTypeInference()
    for item in value:
        element.add(_infer_type(item, temporal))
    return ArrayType(element.to_type())
