"""AttributesToJSON: a FlowFile's attributes as a JSON object, as NiFi's AttributesToJSON."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.patterns import FlowPattern, compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import BOOLEAN_VALIDATOR, NON_EMPTY_VALIDATOR, REGULAR_EXPRESSION_VALIDATOR
from processors._json_text import InvalidJsonError, quote, read_json_text, to_json

__all__ = ["AttributesToJSON"]

JSON_ATTRIBUTE_NAME = "JSONAttributes"
DESTINATION_ATTRIBUTE = "flowfile-attribute"
DESTINATION_CONTENT = "flowfile-content"
APPLICATION_JSON = "application/json"
#: NiFi's CoreAttributes, left out of the "all attributes" JSON by Include Core Attributes false
NIFI_CORE_ATTRIBUTES = frozenset(
    {
        "filename",
        "path",
        "absolute.path",
        "uuid",
        "mime.type",
        "priority",
        "discard.reason",
        "alternate.identifier",
    }
)
ESCAPED = AllowableValue("ESCAPED", "Escaped", "Escapes JSON attribute values to strings")
NESTED = AllowableValue(
    "NESTED", "Nested", "Handles JSON attribute values as nested structured objects or arrays"
)

REL_SUCCESS = Relationship("success", "Successfully converted attributes to JSON")
REL_FAILURE = Relationship("failure", "Failed to convert attributes to JSON")

Selection = Callable[[Mapping[str, str]], dict[str, str | None]]


class AttributesToJSON(Processor):
    """Writes FlowFile attributes as a JSON object (NiFi's AttributesToJSON).

    The JSON goes to the ``JSONAttributes`` attribute or replaces the content (then
    ``mime.type`` is ``application/json``). Which attributes: those of Attributes List (a
    missing one as ``""``, or ``null`` with Null Value true) plus those whose names match
    Attributes Regular Expression; with neither, all of them, core attributes included unless
    Include Core Attributes is false. With JSON Handling Strategy ``Nested``, a value that looks
    like a JSON object or array is embedded as JSON; one that does not parse sends the FlowFile
    to ``failure``. Keys come in Attributes List order, then by name (NiFi's order is that of
    Java hash maps).
    """

    ATTRIBUTES_LIST = PropertyDescriptor(
        "Attributes List",
        description="Comma separated list of attributes to be included in the resulting JSON. If "
        "this value is left empty then all existing Attributes will be included. This list of "
        "attributes is case sensitive. If an attribute specified in the list is not found it will "
        "be be emitted to the resulting JSON with an empty string or NULL value.",
        validators=(NON_EMPTY_VALIDATOR,),
    )
    ATTRIBUTES_REGEX = PropertyDescriptor(
        "Attributes Regular Expression",
        name="attributes-to-json-regex",
        description="Regular expression that will be evaluated against the flow file attributes "
        "to select the matching attributes. This property can be used in combination with the "
        "attributes list property.",
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        validators=(REGULAR_EXPRESSION_VALIDATOR, NON_EMPTY_VALIDATOR),
    )
    DESTINATION = PropertyDescriptor(
        "Destination",
        description="Control if JSON value is written as a new flowfile attribute "
        "'JSONAttributes' or written in the flowfile content. Writing to flowfile content will "
        "overwrite any existing flowfile content.",
        required=True,
        default=DESTINATION_ATTRIBUTE,
        allowable_values=(DESTINATION_ATTRIBUTE, DESTINATION_CONTENT),
    )
    INCLUDE_CORE_ATTRIBUTES = PropertyDescriptor(
        "Include Core Attributes",
        description="Determines if the FlowFile org.apache.nifi.flowfile.attributes.CoreAttributes "
        "which are contained in every FlowFile should be included in the final JSON value "
        "generated.",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    NULL_VALUE = PropertyDescriptor(
        "Null Value",
        description="If true a non existing selected attribute will be NULL in the resulting "
        "JSON. If false an empty string will be placed in the JSON",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    JSON_HANDLING_STRATEGY = PropertyDescriptor(
        "JSON Handling Strategy",
        description="Strategy to use for handling attributes which contain nested JSON.",
        required=True,
        default=ESCAPED.value,
        allowable_values=(ESCAPED, NESTED),
    )
    PRETTY_PRINT = PropertyDescriptor(
        "Pretty Print",
        description="Apply pretty print formatting to the output.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
        dependencies=[(DESTINATION, DESTINATION_CONTENT)],
    )
    property_descriptors: ClassVar = (
        ATTRIBUTES_LIST,
        ATTRIBUTES_REGEX,
        DESTINATION,
        INCLUDE_CORE_ATTRIBUTES,
        NULL_VALUE,
        JSON_HANDLING_STRATEGY,
        PRETTY_PRINT,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("json", "attributes", "flowfile")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        JSON_ATTRIBUTE_NAME: "JSON representation of Attributes"
    }

    def _selection(self, context: ProcessContext) -> Selection:
        """The function choosing one FlowFile's attributes, in their JSON order."""
        listed = _listed(context.get_property(self.ATTRIBUTES_LIST).value)
        regex_value = context.get_property(self.ATTRIBUTES_REGEX)
        pattern = None
        if regex_value.is_set():
            pattern = compile_pattern(regex_value.evaluate_attribute_expressions().value or "")
        if listed is None and pattern is None:
            drop = (
                frozenset()
                if context.get_property(self.INCLUDE_CORE_ATTRIBUTES).as_boolean()
                else NIFI_CORE_ATTRIBUTES
            )
            return lambda attributes: {
                k: attributes[k] for k in sorted(attributes) if k not in drop
            }
        null = bool(context.get_property(self.NULL_VALUE).as_boolean())
        return lambda attributes: _selected(attributes, listed or (), pattern, null)

    def _formatted(
        self, context: ProcessContext, selected: dict[str, str | None]
    ) -> dict[str, Any]:
        """The values as they go into the JSON: nested JSON parsed under ``Nested``.

        Raises:
            InvalidJsonError: a value that looks like JSON does not parse.
        """
        if context.get_property(self.JSON_HANDLING_STRATEGY).value != NESTED.value:
            return selected  # type: ignore[return-value]
        return {k: _nested(v) for k, v in selected.items()}

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Write one FlowFile's attributes as JSON."""
        flowfile = session.get()
        if flowfile is None:
            return
        selected = self._selection(context)(flowfile.attributes)
        try:
            formatted = self._formatted(context, selected)
        except InvalidJsonError as ex:
            context.logger.error("%s", ex)
            session.transfer(flowfile, REL_FAILURE)
            return
        if context.get_property(self.DESTINATION).value == DESTINATION_CONTENT:
            pretty = bool(context.get_property(self.PRETTY_PRINT).as_boolean())
            flowfile = session.write(flowfile, to_json(formatted, pretty=pretty).encode("utf-8"))
            flowfile = session.put_attribute(flowfile, "mime.type", APPLICATION_JSON)
        else:
            flowfile = session.put_attribute(flowfile, JSON_ATTRIBUTE_NAME, to_json(formatted))
        session.transfer(flowfile, REL_SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """The JSON of a whole batch: the ``JSONAttributes`` column, or the new contents.

        Each FlowFile's JSON is assembled from pieces made once per distinct value: a shared
        attribute's ``"name":"value"`` once for the batch, a column's once per value in its
        dictionary. With Destination ``flowfile-content`` (compact or pretty-printed) the texts
        are written with ``context.write_contents`` and ``mime.type`` becomes
        ``application/json`` (a CONTENT_MODIFIED each). Returns None (one by one) when the
        FlowFiles would not all have the same keys (an attribute chosen by the regex or taken
        as one of all that only some hold); a ``Nested`` value that does not parse raises, so
        that batch goes one by one too (to ``failure`` for that FlowFile, with its error).
        """
        to_content = context.get_property(self.DESTINATION).value == DESTINATION_CONTENT
        present = {*batch.attributes, *batch.columns, *batch.uuid_named, "uuid"}
        # the keys of a FlowFile that holds every attribute present in the batch
        keys = list(self._selection(context)(dict.fromkeys(present, "")))
        listed = set(_listed(context.get_property(self.ATTRIBUTES_LIST).value) or ())
        if any(k not in listed and _partial(batch, k) for k in keys):
            return None
        pretty = to_content and bool(context.get_property(self.PRETTY_PRINT).as_boolean())
        layout = _PRETTY if pretty else _COMPACT
        nested = context.get_property(self.JSON_HANDLING_STRATEGY).value == NESTED.value
        missing = None if context.get_property(self.NULL_VALUE).as_boolean() else ""
        piece = functools.partial(_nested_piece if nested else _piece, pretty=pretty)
        per_key = [_pieces(batch, key, piece, missing) for key in keys]
        if not keys:
            texts: Sequence[str] = [layout.empty] * batch.count
        else:
            texts = [
                layout.start + layout.between.join(row) + layout.end
                for row in zip(*per_key, strict=True)
            ]
        if not to_content:
            column = column_of(texts)
            return [
                BatchRoute(
                    REL_SUCCESS.name, None, batch.with_columns({JSON_ATTRIBUTE_NAME: column})
                )
            ]
        typed = batch.with_attributes({"mime.type": APPLICATION_JSON})
        written = context.write_contents(typed, (t.encode("utf-8") for t in texts))
        return written.routes(REL_SUCCESS.name)


@attrs.frozen
class _Layout:
    """How a JSON object's members join: Jackson's compact form or its default pretty printer."""

    start: str
    between: str
    end: str
    empty: str


_COMPACT = _Layout("{", ",", "}", "{}")
_PRETTY = _Layout("{\n  ", ",\n  ", "\n}", "{ }")


def _partial(batch: FlowFileBatch, name: str) -> bool:
    """Whether only some FlowFiles of *batch* hold the attribute *name*."""
    column = batch.columns.get(name)
    return column is not None and any(v is None for v in column.values())


def _pieces(
    batch: FlowFileBatch,
    name: str,
    piece: Callable[[str, str | None], str],
    missing: str | None,
) -> Sequence[str]:
    """``"name":value`` for each FlowFile of *batch*; *missing* for those without it."""
    if name == "uuid" or name in batch.uuid_named:
        prefix = piece(name, "")[:-1]  # a uuid needs no escaping
        return [f'{prefix}{u}"' for u in batch.uuids()]
    column = batch.columns.get(name)
    if column is None:
        value = batch.attributes.get(name, missing)
        return [piece(name, value)] * batch.count
    made: dict[str | None, str] = {}
    return [
        made[v] if v in made else made.setdefault(v, piece(name, missing if v is None else v))
        for v in column.values()
    ]


def _piece(name: str, value: str | None, *, pretty: bool) -> str:
    """The member ``"name":"value"`` (``"name" : "value"`` pretty-printed)."""
    return f"{quote(name)}{' : ' if pretty else ':'}{'null' if value is None else quote(value)}"


def _nested_piece(name: str, value: str | None, *, pretty: bool) -> str:
    """The member of *name* with a value that may be nested JSON, as :func:`to_json` writes it.

    Raises:
        InvalidJsonError: the value looks like JSON but does not parse.
    """
    if pretty:  # '{\n  "name" : value\n}', its members indented one level
        return to_json({name: _nested(value)}, pretty=True)[4:-2]
    return to_json({name: _nested(value)})[1:-1]


def _listed(text: str | None) -> tuple[str, ...] | None:
    """Attributes List as names, in order, without repeats; None when not set or blank."""
    if text is None or not text.strip():
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    return tuple(dict.fromkeys(names))


def _selected(
    attributes: Mapping[str, str],
    listed: Sequence[str],
    pattern: FlowPattern | None,
    null: bool,
) -> dict[str, str | None]:
    result: dict[str, str | None] = {}
    for name in listed:
        value = attributes.get(name)
        result[name] = value if value is not None or null else ""
    if pattern is not None:
        for name in sorted(attributes):
            if pattern.accepts(name):
                result[name] = attributes[name]
    return result


def _nested(value: str | None) -> Any:
    """*value*, or the JSON it holds when it looks like an object or an array.

    Raises:
        InvalidJsonError: it looks like JSON but does not parse.
    """
    if value is None:
        return None
    trimmed = value.strip()
    if (trimmed.startswith("[") and trimmed.endswith("]")) or (
        trimmed.startswith("{") and trimmed.endswith("}")
    ):
        return read_json_text(trimmed)
    return value
