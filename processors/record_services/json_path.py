"""JsonPathReader: NiFi's JSON reader whose fields are user-defined JsonPath expressions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.json_path_reader import JsonPathReaderOptions, read_json_path
from flowcore.records.schema import RecordSchema
from flowcore.validators import ValidationResult, Validator
from processors._jsonpath import PathNotFoundError, compile_json_path
from processors.record_services._options import options_from
from processors.record_services.json import ALLOW_COMMENTS, MAX_STRING_LENGTH
from processors.record_services.schema_access import (
    INFER_SCHEMA,
    READER_STRATEGIES,
    RecordReaderService,
    date_time_properties,
    schema_access_strategy,
    schema_properties,
)

__all__ = ["JsonPathReader"]

_ACCESS = schema_access_strategy((*READER_STRATEGIES, INFER_SCHEMA), INFER_SCHEMA)


def _json_path_problem(value: str) -> str | None:
    try:
        compile_json_path(value)
    except ValueError as exc:
        return f"{value!r} is not a valid JsonPath expression: {exc}"
    return None


JSON_PATH_VALIDATOR = Validator("JsonPathValidator", _json_path_problem)


class _Path:
    """A compiled JsonPath as the codec calls it: not found is a LookupError."""

    def __init__(self, text: str) -> None:
        self._query = compile_json_path(text)

    def __call__(self, document: Any) -> Any:
        try:
            return self._query.read(document)
        except PathNotFoundError as exc:
            raise LookupError(str(exc)) from None


class JsonPathReader(RecordReaderService):
    """Parses JSON records and takes each field with a user-defined JsonPath (NiFi's reader).

    Each dynamic property is a field: its name the field's name, its value a JsonPath evaluated
    against each JSON record. JSON fields no path extracts are not returned. The records are
    read as JsonTreeReader reads them (an object, an array, or one per line).
    """

    nifi_types: ClassVar = ("org.apache.nifi.json.JsonPathReader",)
    tags: ClassVar = ("json", "jsonpath", "record", "reader", "parser")
    supports_dynamic_properties: ClassVar = True
    property_descriptors: ClassVar = (
        *schema_properties(_ACCESS),
        MAX_STRING_LENGTH,
        ALLOW_COMMENTS,
        *date_time_properties(),
    )

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """A field of the records: a JsonPath (NiFi's dynamic property, no Expression Language)."""
        return PropertyDescriptor(
            name,
            description="JsonPath Expression that indicates how to retrieve the value from a "
            f"JSON Object for the '{name}' column",
            el_scope=ExpressionLanguageScope.NONE,
            validators=(JSON_PATH_VALIDATOR,),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """The schema checks, and NiFi's: at least one JsonPath."""
        problems = list(super().custom_validate(values))
        if not self.dynamic_properties:
            problems.append(
                ValidationResult(
                    "JSON Paths",
                    None,
                    False,
                    "No JSON Paths were specified; add a dynamic property per field (its name "
                    "the field, its value a JsonPath such as $.id)",
                )
            )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Compile the paths and build the codec's options once."""
        super().on_enabled(context)
        self._options = options_from(self, JsonPathReaderOptions)
        self._paths = {name: _Path(text) for name, text in self.dynamic_properties.items()}

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The JsonPath codec."""
        del attributes
        return read_json_path(stream, self._paths, self._options, schema)
