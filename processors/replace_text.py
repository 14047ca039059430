"""ReplaceText: search and replace, prepend, append or substitute text in the content."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO, ClassVar

import attrs
import numpy as np
import regex

from flowcore.errors import ExpressionEvaluationError, ProcessException, RegexTimeoutError
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.expression._evaluate import EvaluationContext
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.patterns import JAVA_LINES, FlowPattern, compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import HELD_CONTENT_MAX, BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    ALWAYS_VALID,
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    ValidationResult,
)
from processors._replacement import (
    decorated_template,
    escape_group_references,
    escape_literal_back_references,
    expand,
    normalize_replacement,
    parse_replacement,
    regex_template,
    substitute_variables,
)
from processors._text import (
    READ_CHUNK,
    LineTooLongError,
    decode,
    encode,
    incremental_encoder,
    iter_lines,
    line_body,
    line_capacity,
    split_lines,
)

__all__ = ["ReplaceText"]

LINE_BY_LINE = "Line-by-Line"
ENTIRE_TEXT = "Entire text"
ALL = "All"
FIRST_LINE = "First-Line"
EXCEPT_FIRST_LINE = "Except-First-Line"
LAST_LINE = "Last-Line"
EXCEPT_LAST_LINE = "Except-Last-Line"
DEFAULT_REGEX = "(?s)(^.*$)"
_WRITE_CHUNK = 1 << 16  # characters of output gathered before each write

PREPEND = AllowableValue(
    "Prepend",
    "Prepend",
    "Insert the Replacement Value at the beginning of the FlowFile or the beginning of each line "
    "(depending on the Evaluation Mode).",
)
APPEND = AllowableValue(
    "Append",
    "Append",
    "Insert the Replacement Value at the end of the FlowFile or the end of each line (depending "
    "on the Evaluation Mode).",
)
SURROUND = AllowableValue(
    "Surround",
    "Surround",
    "Prepends text before the start of the FlowFile (or the start of each line, depending on the "
    "configuration of the Evaluation Mode property) as well as appending text to the end of the "
    "FlowFile (or the end of each line, depending on the configuration of the Evaluation Mode "
    "property)",
)
REGEX_REPLACE = AllowableValue(
    "Regex Replace",
    "Regex Replace",
    "Interpret the Search Value as a Regular Expression and replace all matches with the "
    "Replacement Value. The Replacement Value may reference Capturing Groups used in the Search "
    "Value by using a dollar-sign followed by the Capturing Group number, such as $1 or $2. If "
    "the Search Value is set to .* then everything is replaced without even evaluating the "
    "Regular Expression.",
)
LITERAL_REPLACE = AllowableValue(
    "Literal Replace",
    "Literal Replace",
    "Search for all instances of the Search Value and replace the matches with the Replacement "
    "Value.",
)
ALWAYS_REPLACE = AllowableValue(
    "Always Replace",
    "Always Replace",
    "Always replaces the entire line or the entire contents of the FlowFile (depending on the "
    "value of the <Evaluation Mode> property) and does not bother searching for any value. When "
    "this strategy is chosen, the <Search Value> property is ignored.",
)
SUBSTITUTE_VARIABLES = AllowableValue(
    "Substitute Variables",
    "Substitute Variables",
    "Substitute variable references (specified in ${var} form) using FlowFile attributes for "
    "looking up the replacement value by variable name. When this strategy is chosen, both the "
    "<Search Value> and <Replacement Value> properties are ignored.",
)

REL_SUCCESS = Relationship(
    "success",
    "FlowFiles that have been successfully processed are routed to this relationship. This "
    "includes both FlowFiles that had text replaced and those that did not.",
)
REL_FAILURE = Relationship(
    "failure", "FlowFiles that could not be updated are routed to this relationship"
)

#: What a line (or the whole text) becomes.
LineReplacer = Callable[[str], str]


@attrs.frozen
class _Plan:
    """How this configuration replaces (NiFi's choice of ``ReplacementStrategyExecutor``)."""

    executor: str  # a strategy's value; Regex Replace of ".*" runs as Always Replace
    entire_text: bool
    line_mode: str
    charset: str
    max_buffer: int
    groups: int  # the Search Value's groups, evaluated without a FlowFile (NiFi's setup)

    @property
    def buffers_all(self) -> bool:
        """Whether Entire text reads the whole content into memory (then bounded by the buffer)."""
        return self.executor in (
            REGEX_REPLACE.value,
            LITERAL_REPLACE.value,
            SUBSTITUTE_VARIABLES.value,
        )


class ReplaceText(Processor):
    """Updates the content by replacing text found by a regex or a literal, or adding text.

    Strategies: Regex Replace (``$1`` and ``${'$1':toUpper()}`` in the Replacement Value name the
    match's groups, read as Java reads them), Literal Replace, Prepend, Append, Surround, Always
    Replace and Substitute Variables (``${attribute}`` references in the content), over the
    Entire text (bounded by Maximum Buffer Size, else ``failure``) or Line-by-Line (each line
    with its terminator; a line longer than Maximum Buffer Size sends the FlowFile to
    ``failure``), where Line-by-Line Evaluation Mode picks the lines. Expression Language that
    fails, and a regex past ``regex_time_limit``, send the FlowFile to ``failure``. Each
    FlowFile to ``success`` gets a CONTENT_MODIFIED event, changed or not, as in NiFi.
    """

    REPLACEMENT_STRATEGY = PropertyDescriptor(
        "Replacement Strategy",
        description="The strategy for how and what to replace within the FlowFile's text content.",
        required=True,
        default=REGEX_REPLACE.value,
        allowable_values=(
            PREPEND,
            APPEND,
            SURROUND,
            REGEX_REPLACE,
            LITERAL_REPLACE,
            ALWAYS_REPLACE,
            SUBSTITUTE_VARIABLES,
        ),
    )
    SEARCH_VALUE = PropertyDescriptor(
        "Search Value",
        description="The Search Value to search for in the FlowFile content. Only used for "
        "'Literal Replace' and 'Regex Replace' matching strategies",
        required=True,
        default=DEFAULT_REGEX,
        validators=(ALWAYS_VALID,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(("Replacement Strategy", REGEX_REPLACE.value, LITERAL_REPLACE.value),),
        aliases=("Regular Expression",),
    )
    REPLACEMENT_VALUE = PropertyDescriptor(
        "Replacement Value",
        description="The value to insert using the 'Replacement Strategy'. Using \"Regex "
        'Replace" back-references to Regular Expression capturing groups are supported, but '
        "back-references that reference capturing groups that do not exist in the regular "
        "expression will be treated as literal value. Back References may also be referenced "
        "using the Expression Language, as '$1', '$2', etc. The single-tick marks MUST be "
        'included, as these variables are not "Standard" attribute names (attribute names must '
        "be quoted unless they contain only numbers, letters, and _).",
        required=True,
        default="$1",
        validators=(ALWAYS_VALID,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(
            (
                "Replacement Strategy",
                REGEX_REPLACE.value,
                LITERAL_REPLACE.value,
                ALWAYS_REPLACE.value,
                PREPEND.value,
                APPEND.value,
            ),
        ),
    )
    PREPEND_TEXT = PropertyDescriptor(
        "Text to Prepend",
        description="The text to prepend to the start of the FlowFile, or each line, depending "
        "on the configured value of the Evaluation Mode property",
        required=True,
        validators=(ALWAYS_VALID,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(("Replacement Strategy", SURROUND.value),),
    )
    APPEND_TEXT = PropertyDescriptor(
        "Text to Append",
        description="The text to append to the end of the FlowFile, or each line, depending on "
        "the configured value of the Evaluation Mode property",
        required=True,
        validators=(ALWAYS_VALID,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=(("Replacement Strategy", SURROUND.value),),
    )
    CHARACTER_SET = PropertyDescriptor(
        "Character Set",
        description="The Character Set in which the file is encoded",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    MAX_BUFFER_SIZE = PropertyDescriptor(
        "Maximum Buffer Size",
        description="Specifies the maximum amount of data to buffer (per file or per line, "
        "depending on the Evaluation Mode) in order to apply the replacement. If 'Entire Text' "
        "(in Evaluation Mode) is selected and the FlowFile is larger than this value, the "
        "FlowFile will be routed to 'failure'. In 'Line-by-Line' Mode, if a single line is "
        "larger than this value, the FlowFile will be routed to 'failure'. A default value of 1 "
        "MB is provided, primarily for 'Entire Text' mode. In 'Line-by-Line' Mode, a value such "
        "as 8 KB or 16 KB is suggested. This value is ignored if the <Replacement Strategy> "
        "property is set to one of: Append, Prepend, Always Replace",
        required=True,
        default="1 MB",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    EVALUATION_MODE = PropertyDescriptor(
        "Evaluation Mode",
        description="Run the 'Replacement Strategy' against each line separately (Line-by-Line) "
        "or buffer the entire file into memory (Entire Text) and run against that.",
        required=True,
        default=LINE_BY_LINE,
        allowable_values=(LINE_BY_LINE, ENTIRE_TEXT),
    )
    LINE_BY_LINE_EVALUATION_MODE = PropertyDescriptor(
        "Line-by-Line Evaluation Mode",
        description="Run the 'Replacement Strategy' against each line separately (Line-by-Line) "
        "for all lines in the FlowFile, First Line (Header) alone, Last Line (Footer) alone, "
        "Except the First Line (Header) or Except the Last Line (Footer).",
        required=False,
        default=ALL,
        allowable_values=(ALL, FIRST_LINE, LAST_LINE, EXCEPT_FIRST_LINE, EXCEPT_LAST_LINE),
    )
    property_descriptors: ClassVar = (
        REPLACEMENT_STRATEGY,
        SEARCH_VALUE,
        REPLACEMENT_VALUE,
        PREPEND_TEXT,
        APPEND_TEXT,
        CHARACTER_SET,
        MAX_BUFFER_SIZE,
        EVALUATION_MODE,
        LINE_BY_LINE_EVALUATION_MODE,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = (
        "Text",
        "Regular Expression",
        "Update",
        "Change",
        "Replace",
        "Modify",
        "Regex",
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Literal Replace needs a Search Value; Regex Replace a regex (its EL evaluated first)."""
        strategy = values.get(self.REPLACEMENT_STRATEGY.name)
        search = values.get(self.SEARCH_VALUE.name)
        subject = self.SEARCH_VALUE.display_name
        if strategy == LITERAL_REPLACE.value and not search:
            return [ValidationResult(subject, search, False, "it cannot be empty")]
        if strategy == REGEX_REPLACE.value and search is not None:
            try:
                compile_pattern(compile_expression(search).evaluate({}), JAVA_LINES)
            except ExpressionEvaluationError as ex:
                return [ValidationResult(subject, search, False, str(ex))]
            except Exception as ex:  # NiFi: "Failed to evaluate ... due to"
                why = f"Failed to evaluate the Attribute Expression Language due to {ex}"
                return [ValidationResult(subject, search, False, why)]
        return []

    def _plan(self, context: ProcessContext) -> _Plan:
        strategy = context.get_property(self.REPLACEMENT_STRATEGY).value or REGEX_REPLACE.value
        entire = context.get_property(self.EVALUATION_MODE).value == ENTIRE_TEXT
        search = context.get_property(self.SEARCH_VALUE).value or ""
        groups = 0
        if strategy == REGEX_REPLACE.value:
            replacement = context.get_property(self.REPLACEMENT_VALUE).value
            # NiFi's backward compatibility: these replace everything without a regex
            if search == ".*" or (search == DEFAULT_REGEX and entire and replacement == ""):
                strategy = ALWAYS_REPLACE.value
            else:
                evaluated = context.get_property(self.SEARCH_VALUE).evaluate_attribute_expressions()
                groups = _compiled(evaluated.value or "").groups
        return _Plan(
            executor=strategy,
            entire_text=entire,
            line_mode=context.get_property(self.LINE_BY_LINE_EVALUATION_MODE).value or ALL,
            charset=context.get_property(self.CHARACTER_SET).value or "UTF-8",
            max_buffer=int(context.get_property(self.MAX_BUFFER_SIZE).as_data_size("B") or 0),
            groups=groups,
        )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Replace in one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        plan = self._plan(context)
        if plan.entire_text and plan.buffers_all and flowfile.size > plan.max_buffer:
            self.logger.warning(
                "Transferred %s to 'failure' because it was larger than the buffer size", flowfile
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        try:
            updated = self._replace(context, session, flowfile, plan)
        except (LineTooLongError, ExpressionEvaluationError) as ex:
            # NiFi: BufferOverflowException, Expression Language errors and StackOverflowError
            # (a regex that backtracks too deep, here one past the time limit) go to failure.
            self.logger.warning("Transferred %s to 'failure': %s", flowfile, ex)
            session.transfer(flowfile, REL_FAILURE)
            return
        if updated.content == flowfile.content:  # else the session reports the new content
            session.provenance.modify_content(updated)
        session.transfer(updated, REL_SUCCESS)

    def _replace(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile, plan: _Plan
    ) -> FlowFile:
        ctx = EvaluationContext(
            attributes=flowfile.attributes, flowfile=flowfile, clock=context.now
        )
        executor = plan.executor
        if executor in (PREPEND.value, APPEND.value, SURROUND.value):
            return self._surround(context, session, flowfile, plan, ctx)
        if executor == ALWAYS_REPLACE.value:
            value = self._evaluated(context, self.REPLACEMENT_VALUE, ctx)
            if plan.entire_text:
                return session.write(flowfile, encode(value, plan.charset))
            return _rewrite_lines(session, flowfile, plan, lambda line: value + _ending(line))
        if executor == LITERAL_REPLACE.value:
            search = self._evaluated(context, self.SEARCH_VALUE, ctx)
            value = self._evaluated(context, self.REPLACEMENT_VALUE, ctx)
            return _apply(session, flowfile, plan, lambda text: text.replace(search, value))
        if executor == SUBSTITUTE_VARIABLES.value:
            attributes = flowfile.attributes
            return _apply(session, flowfile, plan, lambda t: substitute_variables(t, attributes))
        return self._regex_replace(context, session, flowfile, plan, ctx)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Replace in a whole batch: each FlowFile's new bytes written as one, no FlowFiles.

        Each content is replaced exactly as :meth:`on_trigger` replaces it (the same line
        reader, selection and encoder over its bytes, property values evaluated per FlowFile as
        columns) and written with ``context.write_contents``; a FlowFile left as it was (Regex
        Replace over the Entire text that matched nothing, or empty content made empty) keeps
        its content and reports CONTENT_MODIFIED, as one by one. Declined, so one by one runs
        instead: Substitute Variables, Regex Replace whose Search or Replacement Value holds
        Expression Language, and any batch in which a FlowFile would go to ``failure`` (too
        large, a line too long, an expression or regex that fails), which one by one reports
        with its warning.
        """
        plan = self._plan(context)
        largest = int(batch.sizes.max(initial=0))
        if largest > HELD_CONTENT_MAX or (
            plan.entire_text and plan.buffers_all and largest > plan.max_buffer
        ):
            return None  # one by one streams it (or routes it to failure, too large to buffer)
        replace = self._batch_replacer(context, batch, plan)
        if replace is None:
            return None
        contents = context.contents(batch)
        new = [replace(row, b"".join(pieces)) for row, pieces in enumerate(contents)]
        kept = np.fromiter(
            (
                v is None or (not v and not size)
                for v, size in zip(new, batch.sizes.tolist(), strict=True)
            ),
            dtype=bool,
            count=batch.count,
        )
        routes = []
        rows = np.flatnonzero(~kept)
        if len(rows):
            part = batch if len(rows) == batch.count else batch.take(rows)
            written = context.write_contents(part, [new[row] for row in rows.tolist()])
            routes.extend(written.routes(REL_SUCCESS.name, rows))
        same = np.flatnonzero(kept)
        if len(same):
            routes.append(
                BatchRoute(REL_SUCCESS.name, same, batch.take(same), content_modified=True)
            )
        return routes

    def _batch_replacer(
        self, context: ProcessContext, batch: FlowFileBatch, plan: _Plan
    ) -> Callable[[int, bytes], bytes | None] | None:
        """FlowFile *row*'s new content from its old (None: left as it was); None: declined."""
        executor, charset = plan.executor, plan.charset

        def values(descriptor: PropertyDescriptor) -> list[str]:
            text = context.get_property(descriptor).value or ""
            if "{" not in text:
                return [text] * batch.count
            column = evaluate_column(compile_expression(text), batch, clock=context.now)
            return column.values()  # type: ignore[return-value]  # property text: never None

        line_replacer: Callable[[int], LineReplacer]
        if executor in (PREPEND.value, APPEND.value, SURROUND.value):
            if executor == SURROUND.value:
                before, after = values(self.PREPEND_TEXT), values(self.APPEND_TEXT)
            else:
                value = values(self.REPLACEMENT_VALUE)
                empty = [""] * batch.count
                before, after = (value, empty) if executor == PREPEND.value else (empty, value)
            if plan.entire_text:
                return lambda row, data: (
                    encode(before[row], charset) + data + encode(after[row], charset)
                )

            def line_replacer(row: int) -> LineReplacer:
                head, tail = before[row], after[row]
                return lambda line: head + line_body(line) + tail + _ending(line)

        elif executor == ALWAYS_REPLACE.value:
            value = values(self.REPLACEMENT_VALUE)
            if plan.entire_text:
                return lambda row, _data: encode(value[row], charset)

            def line_replacer(row: int) -> LineReplacer:
                fixed = value[row]
                return lambda line: fixed + _ending(line)

        elif executor == LITERAL_REPLACE.value:
            search, value = values(self.SEARCH_VALUE), values(self.REPLACEMENT_VALUE)
            if plan.entire_text:
                return lambda row, data: encode(
                    decode(data, charset).replace(search[row], value[row]), charset
                )

            def line_replacer(row: int) -> LineReplacer:
                old, replacement = search[row], value[row]
                return lambda line: line.replace(old, replacement)

        elif executor == REGEX_REPLACE.value:
            substitute = self._batch_regex(context, plan)
            if substitute is None:
                return None
            if plan.entire_text:

                def replaced(_row: int, data: bytes) -> bytes | None:
                    text, count = substitute(decode(data, charset))
                    return encode(text, charset) if count else None

                return replaced

            def line_replacer(_row: int) -> LineReplacer:
                return lambda line: substitute(line)[0]

        else:  # Substitute Variables: each FlowFile's own attributes, left to on_trigger
            return None
        capacity = line_capacity(plan.max_buffer)
        return lambda row, data: _lines_replaced(data, plan, capacity, line_replacer(row))

    def _batch_regex(
        self, context: ProcessContext, plan: _Plan
    ) -> Callable[[str], tuple[str, int]] | None:
        """Regex Replace's substitution when neither value holds Expression Language."""
        search = decorated_template(context.get_property(self.SEARCH_VALUE).value or "").literal
        literal = decorated_template(
            context.get_property(self.REPLACEMENT_VALUE).value or ""
        ).literal
        if search is None or literal is None:
            return None
        pattern = _compiled(search)
        parts = parse_replacement(
            normalize_replacement(escape_literal_back_references(literal, plan.groups)),
            pattern.groups,
        )
        template = regex_template(parts)
        return lambda text: pattern.subn(template, text)

    def _evaluated(
        self, context: ProcessContext, descriptor: PropertyDescriptor, ctx: EvaluationContext
    ) -> str:
        text = context.get_property(descriptor).value or ""
        return compile_expression(text).evaluate_in(ctx) if "{" in text else text

    def _surround(
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        plan: _Plan,
        ctx: EvaluationContext,
    ) -> FlowFile:
        if plan.executor == PREPEND.value:
            before, after = self._evaluated(context, self.REPLACEMENT_VALUE, ctx), ""
        elif plan.executor == APPEND.value:
            before, after = "", self._evaluated(context, self.REPLACEMENT_VALUE, ctx)
        else:
            before = self._evaluated(context, self.PREPEND_TEXT, ctx)
            after = self._evaluated(context, self.APPEND_TEXT, ctx)
        if plan.entire_text:
            head, tail = encode(before, plan.charset), encode(after, plan.charset)
            return session.rewrite(flowfile, lambda source, out: _copy(source, out, head, tail))
        return _rewrite_lines(
            session, flowfile, plan, lambda line: before + line_body(line) + after + _ending(line)
        )

    def _regex_replace(
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        plan: _Plan,
        ctx: EvaluationContext,
    ) -> FlowFile:
        search = decorated_template(context.get_property(self.SEARCH_VALUE).value or "")
        pattern = _compiled(search.evaluate(ctx, regex.escape))
        replacement = decorated_template(context.get_property(self.REPLACEMENT_VALUE).value or "")
        literal = replacement.literal
        if literal is not None:
            parts = parse_replacement(
                normalize_replacement(escape_literal_back_references(literal, plan.groups)),
                pattern.groups,
            )
            template = regex_template(parts)

            def substitute(text: str) -> tuple[str, int]:
                return pattern.subn(template, text)

        else:

            def one(match: Any) -> str:
                groups = {f"${i}": match.group(i) for i in range(match.re.groups + 1)}
                in_match = EvaluationContext(
                    attributes=ctx.attributes, flowfile=flowfile, variables=groups, clock=ctx.clock
                )
                value = replacement.evaluate(in_match, escape_group_references)
                value = normalize_replacement(escape_literal_back_references(value, plan.groups))
                return expand(parse_replacement(value, pattern.groups), match)

            def substitute(text: str) -> tuple[str, int]:
                return pattern.subn(one, text)

        if plan.entire_text:
            text = decode(session.read_bytes(flowfile), plan.charset)
            replaced, count = substitute(text)
            if not count:
                return flowfile
            return session.write(flowfile, encode(replaced, plan.charset))
        return _rewrite_lines(session, flowfile, plan, lambda line: substitute(line)[0])


def _compiled(search: str) -> FlowPattern:
    """The Search Value as a regex (Java's line terminators); refused as NiFi refuses it."""
    try:
        return compile_pattern(search, JAVA_LINES)
    except ExpressionEvaluationError as ex:
        if isinstance(ex, RegexTimeoutError):
            raise
        msg = f"the Search Value is not a valid regular expression: {ex}"
        raise ProcessException(msg) from ex


def _ending(line: str) -> str:
    r"""The ``\r`` and ``\n`` characters that end *line*."""
    return line[len(line.rstrip("\r\n")) :]


def _apply(
    session: ProcessSession, flowfile: FlowFile, plan: _Plan, replace: LineReplacer
) -> FlowFile:
    """*replace* over the whole text or over each line; the content is written either way."""
    if not plan.entire_text:
        return _rewrite_lines(session, flowfile, plan, replace)
    text = decode(session.read_bytes(flowfile), plan.charset)
    return session.write(flowfile, encode(replace(text), plan.charset))


def _copy(source: BinaryIO, out: Any, head: bytes, tail: bytes) -> None:
    if head:
        out.write(head)
    while chunk := source.read(1 << 20):
        out.write(chunk)
    out.write(tail)


def _lines_replaced(data: bytes, plan: _Plan, capacity: int, replace: LineReplacer) -> bytes:
    """*data* rewritten line by line, as :func:`_rewrite_lines` streams it (a batch form's).

    Content shorter than the line reader's chunk is one chunk to it: decoded whole and split
    whole here, the lines and their length check the same, without a stream per FlowFile.
    """
    if len(data) >= READ_CHUNK:
        lines: Iterable[str] = iter_lines(io.BytesIO(data), plan.charset, capacity)
        encoder = incremental_encoder(plan.charset)
        return encoder.encode("".join(_selected(lines, plan.line_mode, replace)), final=True)
    split = split_lines(decode(data, plan.charset))
    if split and max(map(len, split)) > capacity:
        list(iter_lines(io.BytesIO(data), plan.charset, capacity))  # raises, saying which line
    if plan.line_mode.lower() in _EVERY_LINE:
        return encode("".join(map(replace, split)), plan.charset)
    return encode("".join(_selected(split, plan.line_mode, replace)), plan.charset)


#: Line-by-Line Evaluation Modes that replace every line.
_EVERY_LINE = frozenset({ALL.lower(), LINE_BY_LINE.lower()})


def _rewrite_lines(
    session: ProcessSession, flowfile: FlowFile, plan: _Plan, replace: LineReplacer
) -> FlowFile:
    """The content rewritten line by line, streamed: only the lines of the mode replaced."""

    def rewrite(source: BinaryIO, out: Any) -> None:
        encoder = incremental_encoder(plan.charset)
        pending: list[str] = []
        size = 0
        lines = iter_lines(source, plan.charset, line_capacity(plan.max_buffer))
        for text in _selected(lines, plan.line_mode, replace):
            pending.append(text)
            size += len(text)
            if size >= _WRITE_CHUNK:
                out.write(encoder.encode("".join(pending)))
                pending, size = [], 0
        out.write(encoder.encode("".join(pending), final=True))

    return session.rewrite(flowfile, rewrite)


def _selected(lines: Iterable[str], mode: str, replace: LineReplacer) -> Iterator[str]:
    """Each line, replaced when the Line-by-Line Evaluation Mode selects it (NiFi's order)."""
    mode = mode.lower()
    every = {LINE_BY_LINE.lower(), EXCEPT_LAST_LINE.lower(), ALL.lower()}
    iterator = iter(lines)
    preceding = next(iterator, None)
    first = True
    for succeeding in iterator:
        if first and mode == FIRST_LINE.lower():
            yield replace(preceding)  # type: ignore[arg-type]
            first = False
        elif first and mode == EXCEPT_FIRST_LINE.lower():
            first = False
            yield preceding  # type: ignore[misc]
        elif mode in every or (not first and mode == EXCEPT_FIRST_LINE.lower()):
            yield replace(preceding)  # type: ignore[arg-type]
        else:
            yield preceding  # type: ignore[misc]
        preceding = succeeding
    if preceding is None:
        return
    if (
        mode == EXCEPT_LAST_LINE.lower()
        or (not first and mode == FIRST_LINE.lower())
        or (first and mode == EXCEPT_FIRST_LINE.lower())
    ):
        yield preceding
    else:
        yield replace(preceding)
