"""What EvaluateJsonPath and SplitJson share (NiFi's AbstractJsonPathProcessor).

Two properties, Null Value Representation and Max String Length, and the text a JsonPath
result becomes: a scalar as Java's ``Objects.toString`` renders it (a JSON null as the chosen
representation, a double as ``Double.toString``), an object or array as Jackson's compact JSON.
"""

from __future__ import annotations

from typing import Any

from flowcore.expression._values import java_double_to_string
from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.validators import DATA_SIZE_VALIDATOR
from processors._json_text import to_json
from processors._jsonpath import is_scalar

__all__ = [
    "MAX_STRING_LENGTH",
    "NULL_VALUE_REPRESENTATION",
    "max_string_length",
    "null_value",
    "representation",
]

EMPTY_STRING_OPTION = "empty string"
NULL_STRING_OPTION = "the string 'null'"
_NULL_REPRESENTATIONS = {EMPTY_STRING_OPTION: "", NULL_STRING_OPTION: "null"}

NULL_VALUE_REPRESENTATION = PropertyDescriptor(
    "Null Value Representation",
    description="Indicates the desired representation of JSON Path expressions resulting in a "
    "null value.",
    required=True,
    default=EMPTY_STRING_OPTION,
    allowable_values=tuple(_NULL_REPRESENTATIONS),
)
MAX_STRING_LENGTH = PropertyDescriptor(
    "Max String Length",
    description="The maximum allowed length of a string value when parsing the JSON document",
    required=True,
    default="20 MB",
    validators=(DATA_SIZE_VALIDATOR,),
)


def null_value(context: ProcessContext) -> str:
    """The text a JSON null becomes."""
    return _NULL_REPRESENTATIONS[context.get_property(NULL_VALUE_REPRESENTATION).value or ""]


def max_string_length(context: ProcessContext) -> int:
    """The longest string a document may hold, in characters (NiFi counts the bytes setting)."""
    return int(context.get_property(MAX_STRING_LENGTH).as_data_size("B") or 0)


def representation(value: Any, null: str) -> str:
    """The text of a JsonPath result (NiFi's ``getResultRepresentation``)."""
    if not is_scalar(value):
        return to_json(value)
    if value is None:
        return null
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(value)
