"""GrokReader: NiFi's reader of unstructured text (log files) through Grok expressions."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.grok import (
    APPEND_TO_PREVIOUS_MESSAGE,
    RAW_LINE,
    SKIP_LINE,
    Grok,
    GrokReaderOptions,
    compile_grok,
    grok_schema,
    parse_patterns,
    read_grok,
)
from flowcore.records.grok_patterns import DEFAULT_PATTERNS
from flowcore.records.schema import RecordSchema
from flowcore.session.streams import buffered
from flowcore.validators import NON_BLANK_VALIDATOR, ValidationResult
from processors.record_services.schema_access import (
    READER_STRATEGIES,
    RecordReaderService,
    schema_access_strategy,
    schema_properties,
)

__all__ = ["GrokReader"]

STRING_FIELDS_FROM_GROK_EXPRESSION = AllowableValue(
    "string-fields-from-grok-expression",
    "Use String Fields From Grok Expression",
    "The schema will be derived using the field names present in all configured Grok "
    "Expressions. All schema fields will have a String type and will be marked as nullable. The "
    "schema will also include a `stackTrace` field, and a `_raw` field containing the input "
    "line string.",
)
_ACCESS = schema_access_strategy(
    (STRING_FIELDS_FROM_GROK_EXPRESSION, *READER_STRATEGIES), STRING_FIELDS_FROM_GROK_EXPRESSION
)

GROK_PATTERNS = PropertyDescriptor(
    "Grok Patterns",
    description="Grok Patterns to use for parsing logs (the patterns' text, or a file holding "
    "them). If not specified, a built-in default Pattern file will be used. If specified, all "
    "patterns specified will override the default patterns.",
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("Grok Pattern File",),
)
GROK_EXPRESSION = PropertyDescriptor(
    "Grok Expressions",
    description="Specifies the format of a log line in Grok format (one or more expressions, "
    "one per line, or a file holding them). The Reader attempts to parse input lines according "
    "to the configured order of the expressions. If a line in the log file does not match any "
    "expressions, the line will be assumed to belong to the previous log message.",
    required=True,
    validators=(NON_BLANK_VALIDATOR,),
    aliases=("Grok Expression",),
)
NO_MATCH_BEHAVIOR = PropertyDescriptor(
    "No Match Behavior",
    description="If a line of text is encountered and it does not match the given Grok "
    "Expression, and it is not part of a stack trace, this property specifies how the text "
    "should be processed.",
    default=APPEND_TO_PREVIOUS_MESSAGE,
    required=True,
    allowable_values=(
        AllowableValue(
            APPEND_TO_PREVIOUS_MESSAGE,
            "Append to Previous Message",
            "The line of text that does not match the Grok Expression will be appended to the "
            "last field of the prior message.",
        ),
        AllowableValue(
            SKIP_LINE,
            "Skip Line",
            "The line of text that does not match the Grok Expression will be skipped.",
        ),
        AllowableValue(
            RAW_LINE,
            "Raw Line",
            "The line of text that does not match the Grok Expression will only be added to "
            "the _raw field.",
        ),
    ),
    aliases=("no-match-behavior",),
)


def _resource_text(value: str, name: str) -> str:
    """A resource property's text: the file it names, else the value itself (NiFi's TEXT).

    Raises:
        ConfigurationError: a URL (flowcore fetches nothing), or a file it cannot read.
    """
    if value.startswith(("http://", "https://")):
        msg = (
            f"{name} names a URL ({value}); flowcore does not fetch resources: give the text "
            "itself or a local file"
        )
        raise ConfigurationError(msg)
    if "\n" not in value and os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as file:
                return file.read()
        except OSError as exc:
            msg = f"{name}: cannot read {value}: {exc.strerror}"
            raise ConfigurationError(msg) from None
    if name == "Grok Patterns" and value.strip() and " " not in value.strip():
        # a pattern definition is "NAME regex": one word is a file name (NiFi 1's Grok Pattern File)
        msg = (
            f"Grok Patterns names the file {value!r}, which does not exist; give its path or "
            "the patterns"
        )
        raise ConfigurationError(msg)
    return value


def compile_expressions(expressions: str | None, patterns: str | None) -> list[Grok]:
    """The Grok Expressions (one a line) compiled with the default and the given patterns.

    Raises:
        ConfigurationError: a pattern is undefined or the expression is not a valid regex.
    """
    definitions = parse_patterns(DEFAULT_PATTERNS)
    if patterns:
        definitions.update(parse_patterns(_resource_text(patterns, "Grok Patterns")))
    lines = _resource_text(expressions or "", "Grok Expressions").splitlines()
    return [compile_grok(line, definitions) for line in lines if line.strip()]


class GrokReader(RecordReaderService):
    """Reads unstructured text such as log files into records with Grok expressions.

    NiFi's GrokReader: each line matching an expression starts a message; other lines are
    appended to it, skipped or kept raw ("No Match Behavior"); a stack trace after a message
    fills its ``stackTrace`` field; ``_raw`` holds the message's text. Every match is bounded by
    the engine's regex time limit.
    """

    nifi_types: ClassVar = ("org.apache.nifi.grok.GrokReader",)
    tags: ClassVar = (
        "grok",
        "logs",
        "logfiles",
        "parse",
        "unstructured",
        "text",
        "record",
        "reader",
        "regex",
        "pattern",
        "logstash",
    )
    property_descriptors: ClassVar = (
        *schema_properties(_ACCESS),
        GROK_PATTERNS,
        GROK_EXPRESSION,
        NO_MATCH_BEHAVIOR,
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """The schema checks, and each Grok Expression compiled."""
        problems = list(super().custom_validate(values))
        expressions = values.get("Grok Expressions")
        if expressions and expressions.strip():
            try:
                compile_expressions(expressions, values.get("Grok Patterns"))
            except ConfigurationError as exc:
                problems.append(ValidationResult("Grok Expressions", expressions, False, str(exc)))
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Compile the expressions and their schema once."""
        super().on_enabled(context)
        self._groks = compile_expressions(
            self.get_property("Grok Expressions").value,
            self.get_property("Grok Patterns").evaluate_attribute_expressions({}).value,
        )
        self._grok_schema = grok_schema(self._groks)
        self._options = GrokReaderOptions(
            no_match_behavior=self.get_property("No Match Behavior").value
        )

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The Grok codec (the Grok fields' schema unless another is configured)."""
        del attributes
        return read_grok(buffered(stream), self._groks, schema or self._grok_schema, self._options)
