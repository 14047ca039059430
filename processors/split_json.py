"""SplitJson: one FlowFile per element of a JSON array a JsonPath finds, as NiFi's SplitJson."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.errors import ProcessException
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR, ValidationResult
from processors._json_path_common import (
    MAX_STRING_LENGTH,
    NULL_VALUE_REPRESENTATION,
    max_string_length,
    null_value,
    representation,
)
from processors._json_text import InvalidJsonError, read_json
from processors._jsonpath import (
    JsonPathEvaluationError,
    JsonPathLimitError,
    PathNotFoundError,
    compile_json_path,
)

__all__ = ["SplitJson"]

FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

#: The most splits made from one FlowFile. Every split is held (about 5 KB of objects each)
#: until the FlowFile's session commits, so a 100 MB array of a million objects took over 6 GB;
#: past this bound the FlowFile goes to failure before any split is made (about 600 MB at it).
MAX_SPLITS = 100_000

REL_ORIGINAL = Relationship(
    "original",
    "The original FlowFile that was split into segments. If the FlowFile fails processing, "
    "nothing will be sent to this relationship",
)
REL_SPLIT = Relationship(
    "split", "All segments of the original FlowFile will be routed to this relationship"
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile fails processing for any reason (for example, the FlowFile is not valid JSON "
    "or the specified path does not exist), it will be routed to this relationship",
)


class SplitJson(Processor):
    """Splits a JSON array found by a JsonPath into one FlowFile per element (NiFi's SplitJson).

    Each split holds its element as text (a scalar as itself, null as Null Value
    Representation, an object or array as compact JSON) and gets ``fragment.identifier``,
    ``fragment.index`` (from 0, as NiFi), ``fragment.count`` and ``segment.original.filename``;
    the original gets ``fragment.identifier`` and ``fragment.count`` and goes to ``original``.
    Content that is not JSON, a path that finds nothing, or a result that is not an array sends
    the FlowFile to ``failure`` and makes no split. The splits are children of the original
    (one FORK event).

    Memory: as NiFi's SplitJson, this reads the whole document into memory; and every split is
    held until the session commits. So an array of more than :data:`MAX_SPLITS` elements goes
    to ``failure`` (a bulletin says how many it holds and how to split it in parts), where
    NiFi would try and run out of heap.
    """

    JSON_PATH_EXPRESSION = PropertyDescriptor(
        "JsonPath Expression",
        description="A JsonPath expression that indicates the array element to split into "
        "JSON/scalar fragments.",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        JSON_PATH_EXPRESSION,
        NULL_VALUE_REPRESENTATION,
        MAX_STRING_LENGTH,
    )
    relationships: ClassVar = (REL_ORIGINAL, REL_SPLIT, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("json", "split", "jsonpath")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        FRAGMENT_ID: "All split FlowFiles produced from the same parent FlowFile will have the "
        "same randomly generated UUID added for this attribute",
        FRAGMENT_INDEX: "A one-up number that indicates the ordering of the split FlowFiles that "
        "were created from a single parent FlowFile",
        FRAGMENT_COUNT: "The number of split FlowFiles generated from the parent FlowFile",
        SEGMENT_ORIGINAL_FILENAME: "The filename of the parent FlowFile",
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """The expression must compile (NiFi checks it in customValidate too)."""
        text = values.get(self.JSON_PATH_EXPRESSION.name)
        if text is None:
            return []
        try:
            compile_json_path(text)
        except ValueError as ex:
            return [ValidationResult(self.JSON_PATH_EXPRESSION.name, text, False, str(ex))]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Split one FlowFile."""
        original = session.get()
        if original is None:
            return
        query = compile_json_path(context.get_property(self.JSON_PATH_EXPRESSION).value or "")
        why = "it is JSON null"  # Jayway cannot read JSON null either
        try:
            document = read_json(session.read_bytes(original), max_string_length(context))
        except InvalidJsonError as ex:
            document, why = None, str(ex)
        if document is None:
            context.logger.error("FlowFile %s did not have valid JSON content: %s.", original, why)
            session.transfer(original, REL_FAILURE)
            return
        try:
            found = query.read(document)
        except JsonPathEvaluationError as ex:  # NiFi's JsonPathException: the session rolls back
            msg = f"could not evaluate {query.text!r} for {original}: {ex}"
            raise ProcessException(msg) from None
        except JsonPathLimitError as ex:  # the library's own failure: the FlowFile's
            context.logger.error("Unable to split %s: %s; routing to failure", original, ex)
            session.transfer(original, REL_FAILURE)
            return
        except PathNotFoundError:
            context.logger.warning(
                "JsonPath %s could not be found for FlowFile %s", query.text, original
            )
            session.transfer(original, REL_FAILURE)
            return
        if not isinstance(found, list):
            context.logger.error(
                "The evaluated value %s of %s was not a JSON Array compatible type and cannot "
                "be split.",
                representation(found, "null"),
                query.text,
            )
            session.transfer(original, REL_FAILURE)
            return
        if len(found) > MAX_SPLITS:
            context.logger.error(
                "Unable to split %s: %s found an array of %d elements, more than the %d "
                "SplitJson makes from one FlowFile (each split is held in memory until the "
                "FlowFile is done); split the array in parts first, for instance with slices "
                "such as $[0:%d] in several SplitJson; routing to failure",
                original,
                query.text,
                len(found),
                MAX_SPLITS,
                MAX_SPLITS,
            )
            session.transfer(original, REL_FAILURE)
            return
        null = null_value(context)
        fragment_id = session.identifier_for(original, FRAGMENT_ID)
        shared = {FRAGMENT_ID: fragment_id, FRAGMENT_COUNT: str(len(found))}
        for index, element in enumerate(found):
            split = session.write(session.create(original), representation(element, null))
            attributes = {
                **shared,
                SEGMENT_ORIGINAL_FILENAME: split.attributes.get("filename", ""),
                FRAGMENT_INDEX: str(index),
            }
            session.transfer(session.put_all_attributes(split, attributes), REL_SPLIT)
        session.transfer(session.put_all_attributes(original, shared), REL_ORIGINAL)
        context.logger.info("Split %s into %d FlowFiles", original, len(found))
