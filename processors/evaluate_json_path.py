"""EvaluateJsonPath: JsonPath results into attributes or content, as NiFi's EvaluateJsonPath."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import ClassVar

import attrs
import numpy as np

from flowcore.errors import ProcessException
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult, Validator
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
    JsonPathQuery,
    PathNotFoundError,
    compile_json_path,
    is_scalar,
)

__all__ = ["EvaluateJsonPath"]

DESTINATION_ATTRIBUTE = "flowfile-attribute"
DESTINATION_CONTENT = "flowfile-content"
RETURN_AUTO = "auto-detect"
RETURN_JSON = "json"
RETURN_SCALAR = "scalar"
NOT_FOUND_IGNORE = "ignore"
NOT_FOUND_WARN = "warn"
NOT_FOUND_SKIP = "skip"

REL_MATCH = Relationship(
    "matched",
    "FlowFiles are routed to this relationship when the JsonPath is successfully evaluated and "
    "the FlowFile is modified as a result",
)
REL_NO_MATCH = Relationship(
    "unmatched",
    "FlowFiles are routed to this relationship when the JsonPath does not match the content of "
    "the FlowFile and the Destination is set to flowfile-content",
)
REL_FAILURE = Relationship(
    "failure",
    "FlowFiles are routed to this relationship when the JsonPath cannot be evaluated against the "
    "content of the FlowFile; for instance, if the FlowFile is not valid JSON",
)


def _json_path(value: str) -> str | None:
    try:
        compile_json_path(value)
    except ValueError as ex:
        return str(ex)
    return None


JSON_PATH_VALIDATOR = Validator("JsonPathValidator", _json_path)


@attrs.frozen
class _Log:
    """A line :meth:`EvaluateJsonPath.on_trigger` logs for one FlowFile."""

    level: int
    message: str
    arguments: tuple[object, ...]


@attrs.frozen
class _Outcome:
    """Where one FlowFile goes and what it gets: attributes, or new content."""

    relationship: str
    attributes: Mapping[str, str] = attrs.field(factory=dict)
    content: str | None = None


@attrs.frozen
class _Settings:
    """The properties as one evaluation needs them."""

    to_attribute: bool
    scalar: bool
    not_found: str
    null_value: str
    max_string_length: int
    queries: tuple[tuple[str, JsonPathQuery], ...]


class EvaluateJsonPath(Processor):
    """Evaluates JsonPath expressions against JSON content (NiFi's EvaluateJsonPath).

    Each dynamic property is a JsonPath; with Destination ``flowfile-attribute`` its result
    becomes the attribute of the property's name, with ``flowfile-content`` (exactly one path)
    it replaces the content. Return Type ``auto-detect`` means ``scalar`` for attributes and
    ``json`` for content; a ``scalar`` expression that finds an object or array sends the
    FlowFile to ``failure`` unchanged, as does content that is not JSON. A definite path
    (``$.a.b``) that finds nothing is "not found": an empty attribute (or none, with ``skip``),
    or ``unmatched`` for content; an indefinite one (``$..b``, ``[*]``, filters) gives a list,
    ``[]`` when nothing matches. Paths follow Jayway JsonPath (see ``processors/_jsonpath.py``
    for the few differences).
    """

    DESTINATION = PropertyDescriptor(
        "Destination",
        description="Indicates whether the results of the JsonPath evaluation are written to the "
        "FlowFile content or a FlowFile attribute; if using attribute, must specify the Attribute "
        "Name property. If set to flowfile-content, only one JsonPath may be specified, and the "
        "property name is ignored.",
        required=True,
        default=DESTINATION_CONTENT,
        allowable_values=(DESTINATION_CONTENT, DESTINATION_ATTRIBUTE),
    )
    RETURN_TYPE = PropertyDescriptor(
        "Return Type",
        description="Indicates the desired return type of the JSON Path expressions.  Selecting "
        "'auto-detect' will set the return type to 'json' for a Destination of "
        "'flowfile-content', and 'scalar' for a Destination of 'flowfile-attribute'.",
        required=True,
        default=RETURN_AUTO,
        allowable_values=(RETURN_AUTO, RETURN_JSON, RETURN_SCALAR),
    )
    PATH_NOT_FOUND = PropertyDescriptor(
        "Path Not Found Behavior",
        description="Indicates how to handle missing JSON path expressions when destination is "
        "set to 'flowfile-attribute'. Selecting 'warn' will generate a warning when a JSON path "
        "expression is not found. Selecting 'skip' will omit attributes for any unmatched JSON "
        "path expressions.",
        required=True,
        default=NOT_FOUND_IGNORE,
        allowable_values=(NOT_FOUND_WARN, NOT_FOUND_IGNORE, NOT_FOUND_SKIP),
        dependencies=[(DESTINATION, DESTINATION_ATTRIBUTE)],
    )
    property_descriptors: ClassVar = (
        DESTINATION,
        RETURN_TYPE,
        PATH_NOT_FOUND,
        NULL_VALUE_REPRESENTATION,
        MAX_STRING_LENGTH,
    )
    relationships: ClassVar = (REL_MATCH, REL_NO_MATCH, REL_FAILURE)
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("JSON", "evaluate", "JsonPath")

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A JsonPath expression; its result goes to the attribute of its name."""
        return PropertyDescriptor(
            name,
            description="A JsonPath expression: its result becomes this attribute "
            "(flowfile-attribute) or the content (flowfile-content)",
            validators=(JSON_PATH_VALIDATOR,),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Destination flowfile-content takes exactly one JsonPath."""
        if values.get(self.DESTINATION.name) == DESTINATION_CONTENT and (
            len(self.dynamic_properties) != 1
        ):
            why = f"Exactly one JsonPath must be set if using destination of {DESTINATION_CONTENT}"
            return [ValidationResult("JsonPaths", None, False, why)]
        return []

    def _settings(self, context: ProcessContext) -> _Settings:
        to_attribute = context.get_property(self.DESTINATION).value == DESTINATION_ATTRIBUTE
        return_type = context.get_property(self.RETURN_TYPE).value
        if return_type == RETURN_AUTO:
            return_type = RETURN_SCALAR if to_attribute else RETURN_JSON
        return _Settings(
            to_attribute=to_attribute,
            scalar=return_type == RETURN_SCALAR,
            not_found=context.get_property(self.PATH_NOT_FOUND).value or NOT_FOUND_IGNORE,
            null_value=null_value(context),
            max_string_length=max_string_length(context),
            queries=tuple(
                (name, compile_json_path(text)) for name, text in self.dynamic_properties.items()
            ),
        )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Evaluate the paths against one FlowFile's content."""
        flowfile = session.get()
        if flowfile is None:
            return
        settings = self._settings(context)
        log = _logger(context)
        outcome = _evaluate(settings, session.read_bytes(flowfile), str(flowfile), log)
        if outcome.content is not None:
            # the session records CONTENT_MODIFIED; NiFi's explicit report would add a second
            flowfile = session.write(flowfile, outcome.content.encode("utf-8"))
        elif outcome.attributes:
            flowfile = session.put_all_attributes(flowfile, outcome.attributes)
        session.transfer(flowfile, outcome.relationship)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Evaluate the paths for a whole batch: attribute columns, or new contents.

        Each FlowFile's content is read from the batch's claim and evaluated exactly as
        :meth:`on_trigger` does. Destination ``flowfile-attribute``: those that fail go to
        ``failure`` unchanged (their lines logged), the others to ``matched`` with one column
        per attribute set. Destination ``flowfile-content``: the results are written with
        ``context.write_contents`` (a CONTENT_MODIFIED each) and go to ``matched``, a path not
        found sends the FlowFile to ``unmatched`` unchanged; a batch in which a FlowFile would
        log (go to ``failure``, or warn of a path not found) is declined, so each line is
        logged one by one, with its FlowFile.
        """
        settings = self._settings(context)
        if not settings.to_attribute:
            return _content_routes(context, settings, batch)
        uuids = batch.uuids()
        lines: list[_Log] = []  # logged once every FlowFile is evaluated: a later one may raise,
        outcomes = [  # and then the batch goes one by one, which logs them again
            _evaluate(settings, b"".join(pieces), uuids[row], lines.append)
            for row, pieces in enumerate(context.contents(batch))
        ]
        log = _logger(context)
        for line in lines:
            log(line)
        matched = np.array([o.relationship == REL_MATCH.name for o in outcomes], dtype=bool)
        routes = []
        rows = np.flatnonzero(matched)
        if len(rows):
            part = batch.take(rows)
            columns = {}
            for name, _ in settings.queries:
                current = part.column(name)
                values = []
                for position, row in enumerate(rows):
                    value = outcomes[row].attributes.get(name)
                    if value is None and current is not None:
                        value = current.value(position)  # skipped: left as it was
                    values.append(value)
                columns[name] = column_of(values)
            routes.append(BatchRoute(REL_MATCH.name, rows, part.with_columns(columns)))
        failed = np.flatnonzero(~matched)
        if len(failed):
            routes.append(BatchRoute(REL_FAILURE.name, failed, batch.take(failed)))
        return routes


def _content_routes(
    context: BatchContext, settings: _Settings, batch: FlowFileBatch
) -> list[BatchRoute] | None:
    """Destination ``flowfile-content`` over *batch*; None when a FlowFile would log."""
    uuids = batch.uuids()
    lines: list[_Log] = []
    results: list[str | None] = []  # the new content; None: unmatched
    for row, pieces in enumerate(context.contents(batch)):
        outcome = _evaluate(settings, b"".join(pieces), uuids[row], lines.append)
        if lines:
            return None
        results.append(outcome.content)
    found = np.fromiter((r is not None for r in results), dtype=bool, count=batch.count)
    routes = []
    rows = np.flatnonzero(found)
    if len(rows):
        part = batch if len(rows) == batch.count else batch.take(rows)
        contents = (results[row].encode("utf-8") for row in rows.tolist())  # type: ignore[union-attr]
        written = context.write_contents(part, contents)
        routes.extend(written.routes(REL_MATCH.name, rows))
    missed = np.flatnonzero(~found)
    if len(missed):
        routes.append(BatchRoute(REL_NO_MATCH.name, missed, batch.take(missed)))
    return routes


def _evaluate(
    settings: _Settings, data: bytes, label: str, log: Callable[[_Log], None]
) -> _Outcome:
    """Where one FlowFile with content *data* goes, with its new attributes or content.

    The lines NiFi logs go to *log* as they come (:func:`_logger` logs them; a batch form that
    would rather decline than log them collects them).

    Raises:
        ProcessException: a function at the end of a path cannot apply to what it found
            (NiFi's JsonPathException: the session rolls back, the FlowFile is penalized).
    """
    why = "it is JSON null"  # which Jayway cannot read as a document
    try:
        document = read_json(data, settings.max_string_length)
    except InvalidJsonError as ex:
        document, why = None, str(ex)
    if document is None:
        log(_Log(logging.ERROR, "FlowFile %s did not have valid JSON content: %s.", (label, why)))
        return _Outcome(REL_FAILURE.name)
    results: dict[str, str] = {}
    for name, query in settings.queries:
        try:
            found = query.read(document)
        except PathNotFoundError:
            if settings.not_found == NOT_FOUND_WARN:
                why = "FlowFile %s could not find path %s for attribute key %s."
                log(_Log(logging.WARNING, why, (label, query.text, name)))
            if not settings.to_attribute:
                return _Outcome(REL_NO_MATCH.name)
            if settings.not_found != NOT_FOUND_SKIP:
                results[name] = ""
            continue
        except JsonPathEvaluationError as ex:
            msg = f"could not evaluate {query.text!r} ({name!r}) for {label}: {ex}"
            raise ProcessException(msg) from None
        except JsonPathLimitError as ex:  # the library's own failure: the FlowFile's
            why = "Unable to evaluate %s for FlowFile %s: %s; routing to failure"
            log(_Log(logging.ERROR, why, (name, label, ex)))
            return _Outcome(REL_FAILURE.name)
        if settings.scalar and not is_scalar(found):
            why = (
                "Unable to return a scalar value for the expression %s for FlowFile %s. "
                "Evaluated value was %s. Transferring to failure."
            )
            shown = representation(found, settings.null_value)
            log(_Log(logging.ERROR, why, (query.text, label, shown)))
            return _Outcome(REL_FAILURE.name)
        text = representation(found, settings.null_value)
        if not settings.to_attribute:
            return _Outcome(REL_MATCH.name, content=text)
        results[name] = text
    return _Outcome(REL_MATCH.name, attributes=results)


def _logger(context: ProcessContext) -> Callable[[_Log], None]:
    """What logs a line on the processor's logger at once, as NiFi's ``onTrigger`` does."""

    def log(line: _Log) -> None:
        context.logger.log(line.level, line.message, *line.arguments)

    return log
