"""NiFi's Expression Language: parse once, evaluate many times.

>>> expr = compile_expression("${filename:substringBefore('.')}-${size:plus(1)}")
>>> expr.evaluate({"filename": "data.csv", "size": "41"})
'data-42'

Property text is literal text with embedded ``${...}`` expressions (``$$`` escapes a ``$``
before ``{``). :func:`compile_expression` parses it into a picklable :class:`Expression`;
parsing errors raise :class:`~flowcore.errors.ExpressionSyntaxError` with the position.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from flowcore.errors import (
    ExpressionEvaluationError,
    ExpressionLimitError,
    ExpressionSyntaxError,
    RegexTimeoutError,
)
from flowcore.expression._columns import evaluate_boolean_column, evaluate_column
from flowcore.expression._columns_way import column_way
from flowcore.expression._compile import Program, compile_text, compile_value
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._functions import FUNCTIONS, use_compiler
from flowcore.expression._nodes import ResultType, Template
from flowcore.expression._parser import MAX_DEPTH, parse
from flowcore.expression._regex import java_regex
from flowcore.expression._values import Value, to_boolean

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile

__all__ = [
    "FUNCTION_NAMES",
    "EvaluationContext",
    "Expression",
    "ResultType",
    "column_way",
    "compile_expression",
    "contains_expression",
    "evaluate_boolean_column",
    "evaluate_column",
    "java_regex",
    "validate_expression",
]

#: Every function name the Expression Language knows.
FUNCTION_NAMES: frozenset[str] = frozenset(FUNCTIONS)


@attrs.frozen
class Expression:
    """A compiled property value: literal text plus embedded expressions.

    Attributes:
        text: the property text as written.
        template: the parsed form.
    """

    text: str
    template: Template = attrs.field(repr=False)
    # The template compiled to closures (``_compile``): made again, not pickled, on unpickling.
    _text_program: Callable[[EvaluationContext], str] = attrs.field(
        init=False, repr=False, eq=False, hash=False
    )
    _value_program: Program | None = attrs.field(init=False, repr=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_text_program", compile_text(self.template))
        object.__setattr__(self, "_value_program", compile_value(self.template))

    def __reduce__(self) -> tuple[type[Expression], tuple[str, Template]]:
        return (Expression, (self.text, self.template))

    @property
    def result_type(self) -> ResultType:
        """The static result type (a lone ``${...}``'s type, else STRING)."""
        return self.template.result_type

    @property
    def has_expressions(self) -> bool:
        """Whether the text holds any ``${...}`` or ``#{...}`` (else it is a constant)."""
        return any(not isinstance(part, str) for part in self.template.parts)

    def evaluate(
        self,
        attributes: Mapping[str, str] | FlowFile | None = None,
        *,
        variables: Mapping[str, str] | None = None,
        state: Mapping[str, str] | None = None,
        parameters: Mapping[str, str] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> str:
        """Evaluate to a string, as a property value; null parts render as nothing.

        Args:
            attributes: an attribute map, or a FlowFile (then its virtual properties such as
                ``fileSize`` resolve too).
            variables: names that override everything else.
            state: processor state for ``getStateValue``.
            parameters: values for ``#{name}`` references.
            clock: the time source for ``now()``, in epoch milliseconds.

        Raises:
            ExpressionEvaluationError: a function failed (bad regex, unparsable date ...).
        """
        return self.evaluate_in(_context(attributes, variables, state, parameters, clock))

    def evaluate_in(self, ctx: EvaluationContext) -> str:
        """Evaluate to a string in an existing :class:`EvaluationContext`.

        Raises:
            ExpressionEvaluationError: a function failed. A limit's error (a regular
                expression past ``regex_time_limit``, a result past ``expression_max_length``)
                names this expression too, so a bulletin shows which property hit it.
        """
        try:
            return self._text_program(ctx)
        except (ExpressionLimitError, RegexTimeoutError) as error:
            self._name_in(error)
            raise
        except RecursionError:
            raise self._too_deep() from None

    def evaluate_value(
        self,
        attributes: Mapping[str, str] | FlowFile | None = None,
        **kwargs: object,
    ) -> Value:
        """Evaluate a lone ``${...}`` to its typed value (bool, int, float, date, str or None).

        Text with several parts evaluates to the concatenated string.
        """
        return self.value_in(_context(attributes, **kwargs))  # type: ignore[arg-type]

    def value_in(self, ctx: EvaluationContext) -> Value:
        """Like :meth:`evaluate_value`, in an existing :class:`EvaluationContext`."""
        program = self._value_program
        if program is not None:
            try:
                return program(ctx)
            except (ExpressionLimitError, RegexTimeoutError) as error:
                self._name_in(error)
                raise
            except RecursionError:
                raise self._too_deep() from None
        return self.evaluate_in(ctx)

    def _name_in(self, error: ExpressionLimitError | RegexTimeoutError) -> None:
        """Make *error* name this expression (the innermost one, when they nest)."""
        if error.expression is not None:
            return
        error.args = (f"in {_shown(self.text)}: {error}", *error.args[1:])
        error.expression = self.text

    def _too_deep(self) -> ExpressionEvaluationError:
        """The error for a RecursionError (a guard: parsing already limits nesting)."""
        msg = (
            f"{_shown(self.text)} nests too deeply to evaluate (Python's recursion limit); keep "
            f"expressions under {MAX_DEPTH} levels"
        )
        return ExpressionEvaluationError(msg)

    def boolean_in(self, ctx: EvaluationContext) -> bool:
        """Like :meth:`evaluate_boolean`, in an existing :class:`EvaluationContext`."""
        return to_boolean(self.value_in(ctx)) is True

    def evaluate_boolean(
        self, attributes: Mapping[str, str] | FlowFile | None = None, **kwargs: object
    ) -> bool:
        """Evaluate and coerce to a boolean as NiFi does (``"true"`` in any case is true)."""
        return to_boolean(self.evaluate_value(attributes, **kwargs)) is True


def _context(
    attributes: Mapping[str, str] | FlowFile | None,
    variables: Mapping[str, str] | None = None,
    state: Mapping[str, str] | None = None,
    parameters: Mapping[str, str] | None = None,
    clock: Callable[[], int] | None = None,
) -> EvaluationContext:
    from flowcore.flowfile import FlowFile  # noqa: PLC0415 - keeps the EL importable alone

    flowfile = attributes if isinstance(attributes, FlowFile) else None
    attrs_map = flowfile.attributes if flowfile is not None else (attributes or {})
    return EvaluationContext(
        attributes=attrs_map,  # type: ignore[arg-type]
        flowfile=flowfile,
        variables=variables or {},
        state=state,
        parameters=parameters or {},
        clock=clock,
    )


def _shown(text: str) -> str:
    return repr(text if len(text) <= 200 else text[:197] + "...")


@functools.lru_cache(maxsize=4096)
def compile_expression(text: str) -> Expression:
    """Parse property *text* once; the result is cached, immutable and picklable.

    Raises:
        ExpressionSyntaxError: the text is malformed; the message and ``position`` say where.
    """
    return Expression(text, parse(text))


use_compiler(compile_expression)  # evaluateELString compiles with it


def contains_expression(text: str | None) -> bool:
    """Whether *text* holds Expression Language (``${...}`` or ``#{...}``), not just literals."""
    if not text or ("${" not in text and "#{" not in text):
        return False
    try:
        return compile_expression(text).has_expressions
    except ExpressionSyntaxError:
        return True


def validate_expression(text: str, expected: ResultType | None = None) -> str | None:
    """Return why *text* is not a valid expression (of the *expected* type), or ``None``.

    A String is what every result becomes, as in NiFi: its validator for a String property
    (``createAttributeExpressionLanguageValidator(STRING)``, extra characters allowed) takes
    the result as text whatever its type, and evaluation turns it into text as Java's
    ``toString`` does (:func:`~flowcore.expression._values.to_string`: a Date as
    ``Date.toString()``, a Whole Number without ``.0``, a Decimal as ``Double.toString``).
    So ``${now()}`` or ``${a:length()}`` is a valid String. The numeric types stand for
    one another; a Boolean, Date or Number expected is checked strictly.
    """
    try:
        expression = compile_expression(text)
    except ExpressionSyntaxError as ex:
        return str(ex)
    if expected is not None and expected is not ResultType.STRING and expression.has_expressions:
        actual = expression.result_type
        numeric = {ResultType.NUMBER, ResultType.WHOLE_NUMBER, ResultType.DECIMAL}
        if actual != expected and not (expected in numeric and actual in numeric):
            return (
                f"expected the expression to return {expected.value} but it returns {actual.value}"
            )
    return None
