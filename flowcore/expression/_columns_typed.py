"""Typed chains over columns: numbers, booleans and nulls as NiFi makes them, many at once.

``${amount:toDecimal():gt(250)}``, ``${size:toNumber():multiply(2)}``,
``${status:isEmpty():not():and(${retries:lt(3)})}``: the chains that read numbers out of text,
do arithmetic, compare, test for nulls and combine booleans. Each is evaluated for every entry
of its attribute's column at once, as a :data:`Vector` of values of one EL type with a null
mask, through the very rules of the per-FlowFile functions (:mod:`~flowcore.expression.
_functions`): ``to_number``'s reading of text (:func:`~flowcore.expression._columns_parse.
parse_numbers`), Java long arithmetic for two whole numbers and double arithmetic otherwise,
comparisons as doubles when either side is one, ``equals`` between different types by their
text, nulls that stay null through arithmetic and compare false.

A chain starts from its attribute's entries (an absent attribute is the environment variable
of that name, or null, as the per-FlowFile lookup has it); string functions with literal
arguments run through :data:`~flowcore.expression._columns_text.TEXT_STEPS` while the value is
text without nulls. ``and``/``or`` with an expression argument evaluate it the same way; two
chains over different attributes meet FlowFile by FlowFile (each one's entries spread by its
codes).

Nothing here raises: what the per-FlowFile path would fail on (``divide(0)`` of a whole number,
``mod`` of an infinite decimal, a string over the length limit) or what this module does not
know makes :func:`typed_chain` return None, and the caller evaluates the batch another way,
which meets the failure FlowFile by FlowFile.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Any

import attrs
import numpy as np

from flowcore.expression._columns_numbers import whole_arithmetic
from flowcore.expression._columns_parse import Numbers, parse_numbers, render_doubles
from flowcore.expression._columns_text import TEXT_STEPS
from flowcore.expression._nodes import AttributeRef, Call, Chain, Literal
from flowcore.expression._values import (
    Value,
    java_double_to_string,
    max_length,
    to_boolean,
    to_number,
    to_string,
)

__all__ = [
    "ARITHMETIC",
    "BOOLEAN_STEPS",
    "NUMBER_STEPS",
    "Booleans",
    "Texts",
    "Typed",
    "Vector",
    "render_vector",
    "truth",
    "typed_chain",
]

#: What ``java_trim`` strips: every character up to U+0020.
_JAVA_BLANKS = "".join(map(chr, range(33)))
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
#: A long's text as ``str`` writes it: what ``equals`` of a whole number compares a string with.
_LONG_TEXT = re.compile(r"0|-?[1-9][0-9]{0,18}")


@attrs.frozen(eq=False)
class Texts:
    """A string (or null) per entry.

    Attributes:
        values: the strings; None where null.
        null: which entries are null.
    """

    values: tuple[str | None, ...]
    null: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


@attrs.frozen(eq=False)
class Booleans:
    """A boolean (or null) per entry.

    Attributes:
        values: the booleans (false where null).
        null: which entries are null.
    """

    values: np.ndarray
    null: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


#: One EL value per entry, all of one type: strings, numbers (longs and doubles) or booleans.
Vector = Texts | Numbers | Booleans


@attrs.frozen(eq=False)
class Typed:
    """A chain's value per entry, and each FlowFile's entry.

    Attributes:
        vector: the values.
        codes: each FlowFile's entry; None when there is one entry per FlowFile.
    """

    vector: Vector
    codes: np.ndarray | None

    def rows(self, values: np.ndarray) -> np.ndarray:
        """Per-entry *values* spread to the FlowFiles."""
        return values if self.codes is None else values[self.codes]


#: How a chain's subject is found: an attribute's name, and whether its first function works
#: on text (then whole-number columns are given as their texts), to its entries.
Subjects = Callable[[str, bool], Typed | None]


def typed_chain(chain: Chain, subjects: Subjects) -> Typed | None:
    """*chain*'s value for each entry of its attribute, or None when not computed here.

    Args:
        chain: an expression; only an attribute may be its subject.
        subjects: finds an attribute's entries.
    """
    subject = chain.subject
    if not isinstance(subject, AttributeRef):
        return None
    calls = chain.calls
    textual = bool(calls) and calls[0].name in TEXT_STEPS and calls[0].name not in _NULL_AWARE
    typed = subjects(subject.name, textual)
    for call in calls:
        if typed is None:
            return None
        typed = _step(call, typed, subjects)
    return typed


def _step(call: Call, typed: Typed, subjects: Subjects) -> Typed | None:
    """*call* applied to each entry's value."""
    name, vector = call.name, typed.vector
    if name in ("and", "or"):
        return _combine(name, call, typed, subjects)
    if not all(isinstance(arg, Literal) for arg in call.args):
        return None  # an argument that varies: the per-FlowFile way
    args = tuple(arg.value for arg in call.args)  # type: ignore[union-attr]
    operation = _OPERATIONS.get(name)
    if operation is not None:
        result = operation(vector, *args)
    elif name in TEXT_STEPS and isinstance(vector, Texts) and not vector.null.any():
        result = _text_step(name, vector, args)
    else:
        return None
    return None if result is None else Typed(result, typed.codes)


# --- strings --------------------------------------------------------------------------------


def _text_step(name: str, vector: Texts, args: tuple[Value, ...]) -> Vector | None:
    """A string function of :data:`TEXT_STEPS` over strings without nulls."""
    step = TEXT_STEPS[name]
    pipe = step.make(*args)
    if pipe is None:
        return None
    values: tuple[str, ...] = vector.values  # type: ignore[assignment]  # no nulls
    count = len(values)
    if step.kind == "text":
        if values and step.bound(max(map(len, values)), *args) > max_length():
            return None  # some result over the limit: the per-FlowFile error
        return Texts(tuple(pipe(values)), vector.null)
    if step.kind == "number":
        longs = np.fromiter(pipe(values), np.int64, count)
        return Numbers(longs, np.zeros(count), np.zeros(count, dtype=bool), vector.null)
    return Booleans(np.fromiter(pipe(values), bool, count), vector.null)


def truth(vector: Vector) -> Booleans:
    """Each value as ``to_boolean`` reads it: ``"true"`` in any case (trimmed) or true itself.

    Numbers are false; nulls stay null.
    """
    if isinstance(vector, Booleans):
        return vector
    if isinstance(vector, Numbers):
        return Booleans(np.zeros(len(vector), dtype=bool), vector.null)
    trimmed = map(str.strip, _filled(vector), repeat(_JAVA_BLANKS))
    values = np.fromiter(map("true".__eq__, map(str.lower, trimmed)), bool, len(vector))
    return Booleans(values & ~vector.null, vector.null)


def _filled(vector: Texts) -> tuple[str, ...]:
    """The strings, nulls as ""."""
    if not vector.null.any():
        return vector.values  # type: ignore[return-value]
    return tuple("" if value is None else value for value in vector.values)


# --- numbers --------------------------------------------------------------------------------


def _numbers(vector: Vector, *, decimals: bool = False) -> Numbers:
    """Each value as ``to_number`` reads it (booleans are no numbers: null)."""
    if isinstance(vector, Numbers):
        return vector
    if isinstance(vector, Booleans):
        return Numbers.nulls(len(vector))
    return parse_numbers(vector.values, decimals=decimals)


def _to_number(vector: Vector) -> Numbers:
    """``toNumber``: decimals truncated to longs, saturating as Java's cast; NaN, Infinity null."""
    numbers = _numbers(vector)
    decimal = numbers.decimal & ~numbers.null
    if not decimal.any():
        return numbers
    doubles = numbers.doubles
    with np.errstate(invalid="ignore"):
        inside = (doubles >= -(2.0**63)) & (doubles < 2.0**63)
        truncated = np.where(decimal & inside, doubles, 0.0).astype(np.int64)
        saturated = np.where(doubles > 0, _LONG_MAX, _LONG_MIN)
    longs = np.where(decimal, np.where(inside, truncated, saturated), numbers.longs)
    null = numbers.null | (decimal & ~np.isfinite(doubles))
    return Numbers(longs, np.zeros(len(longs)), np.zeros(len(longs), dtype=bool), null)


def _to_decimal(vector: Vector) -> Numbers:
    """``toDecimal``: every number as a double."""
    numbers = _numbers(vector, decimals=True)
    count = len(numbers)
    return Numbers(
        np.zeros(count, dtype=np.int64), numbers.as_doubles(), ~numbers.null, numbers.null
    )


def _argument(value: Value) -> int | float | None:
    """A literal argument as a number; None (no number, or a whole one past a long) otherwise."""
    number = to_number(value)
    if isinstance(number, int) and not _LONG_MIN <= number <= _LONG_MAX:
        return None
    return number


def _arithmetic(name: str) -> Callable[[Vector, Value], Numbers | None]:
    """plus, minus, multiply, divide or mod by a literal, as ``_functions._arithmetic``."""

    def apply(vector: Vector, other: Value) -> Numbers | None:
        numbers = _numbers(vector)
        argument = to_number(other)
        if argument is None:
            return Numbers.nulls(len(numbers))  # a null operand makes null
        if isinstance(argument, int) and not _LONG_MIN <= argument <= _LONG_MAX:
            return None  # Python's int would not wrap as the long numpy holds
        present = ~numbers.null
        longs = numbers.longs
        if isinstance(argument, int):
            whole = present & ~numbers.decimal
            doubled = present & numbers.decimal
            if whole.any():
                if name in ("divide", "mod") and argument == 0:
                    return None  # the per-FlowFile error
                computed = whole_arithmetic(name, np.where(whole, longs, 0), argument)
                if computed is None:
                    return None
                longs = computed
        else:
            doubled = present
        doubles = numbers.doubles
        if doubled.any():
            doubles = _double_arithmetic(name, numbers.as_doubles(), float(argument), doubled)
            if doubles is None:
                return None
        return Numbers(longs, doubles, doubled, numbers.null)

    return apply


def _double_arithmetic(
    name: str, left: np.ndarray, right: float, rows: np.ndarray
) -> np.ndarray | None:
    """Double arithmetic as Python's on floats; None where Python would raise (``fmod(inf)``).

    A divisor of zero gives what ``_functions._arithmetic`` spells out: NaN for ``mod``, and
    IEEE's quotient (NaN for 0 or NaN, else an infinity of the sign) for ``divide``.
    """
    with np.errstate(all="ignore"):
        if name == "plus":
            return left + right
        if name == "minus":
            return left - right
        if name == "multiply":
            return left * right
        if name == "divide":
            return left / right
        if right == 0:
            return np.full(len(left), np.nan)
        if (rows & np.isinf(left)).any():
            return None  # math.fmod(inf, x) raises
        return np.fmod(left, right)


_COMPARE: Mapping[str, Callable[[Any, Any], Any]] = {
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}


def _comparison(name: str) -> Callable[[Vector, Value], Booleans | None]:
    """gt, ge, lt or le against a literal: as doubles when either side is one."""
    compare = _COMPARE[name]

    def apply(vector: Vector, other: Value) -> Booleans | None:
        numbers = _numbers(vector)
        count = len(numbers)
        argument = _argument(other)
        present = ~numbers.null
        if argument is None:  # no number, or one past a long (left to the exact way)
            if to_number(other) is not None:
                return None
            return Booleans(np.zeros(count, dtype=bool), np.zeros(count, dtype=bool))
        with np.errstate(invalid="ignore"):
            if isinstance(argument, float):
                values = compare(numbers.as_doubles(), argument)
            else:
                values = np.where(
                    numbers.decimal,
                    compare(numbers.doubles, float(argument)),
                    compare(numbers.longs, argument),
                )
        return Booleans(values & present, np.zeros(count, dtype=bool))

    return apply


# --- equality and nulls ---------------------------------------------------------------------


def _equals(vector: Vector, other: Value) -> Booleans:
    """``equals``: the same type compares values, different types their text (``_equals``)."""
    count = len(vector)
    never = np.zeros(count, dtype=bool)
    if isinstance(vector, Texts):
        target = to_string(other)
        values = np.fromiter(map(operator.eq, vector.values, repeat(target)), bool, count)
        return Booleans(values, never)
    if isinstance(vector, Booleans):
        if isinstance(other, bool):
            values = vector.values == other
        elif isinstance(other, str) and other in ("true", "false"):
            values = vector.values == (other == "true")
        else:
            values = never
        return Booleans(values & ~vector.null, never)
    whole = _whole_equals(vector.longs, other)
    decimal = _decimal_equals(vector.doubles, other)
    values = np.where(vector.decimal, decimal, whole)
    return Booleans(values & ~vector.null, never)


def _whole_equals(longs: np.ndarray, other: Value) -> np.ndarray:
    """Longs equal to *other*: an equal whole number, or a string that is one's text."""
    if isinstance(other, str):
        if not _LONG_TEXT.fullmatch(other) or not _LONG_MIN <= int(other) <= _LONG_MAX:
            return np.zeros(len(longs), dtype=bool)
        other = int(other)
    if type(other) is not int or not _LONG_MIN <= other <= _LONG_MAX:
        return np.zeros(len(longs), dtype=bool)  # a decimal's or a boolean's text never is
    return longs == other


def _decimal_equals(doubles: np.ndarray, other: Value) -> np.ndarray:
    """Doubles equal to *other*: an equal double, or a string that is one's Java text."""
    never = np.zeros(len(doubles), dtype=bool)
    if type(other) is float:
        return doubles == other
    if not isinstance(other, str):
        return never  # a long's text has no point, a boolean's no digit
    if other == "NaN":
        return np.isnan(doubles)
    try:
        target = float(other)
    except ValueError:
        return never
    if java_double_to_string(target) != other:
        return never  # not how Java writes any double
    return (doubles == target) & (np.signbit(doubles) == np.signbit(target))


def _is_null(vector: Vector) -> Booleans:
    return Booleans(vector.null.copy(), np.zeros(len(vector), dtype=bool))


def _not_null(vector: Vector) -> Booleans:
    return Booleans(~vector.null, np.zeros(len(vector), dtype=bool))


def _is_empty(vector: Vector) -> Booleans:
    """Null, or text that strips to nothing (a number's or boolean's text never does)."""
    empty = vector.null.copy()
    if isinstance(vector, Texts):
        blank = map(operator.not_, map(str.strip, _filled(vector)))
        empty |= np.fromiter(blank, bool, len(vector))
    return Booleans(empty, np.zeros(len(vector), dtype=bool))


def _not(vector: Vector) -> Booleans:
    """``not``: the value read as a boolean, negated; null stays null."""
    read = truth(vector)
    return Booleans(~read.values & ~read.null, read.null)


def _combine(name: str, call: Call, typed: Typed, subjects: Subjects) -> Typed | None:
    """``and``/``or``: true where both (either) are ``"true"``, a null or anything else false.

    NiFi evaluates the argument only where the subject does not decide; here it is evaluated
    for every entry, which gives the same values as long as it cannot fail: a chain this module
    computes never does (it returns None instead).
    """
    (argument,) = call.args
    left = truth(typed.vector)
    left_true = left.values & ~left.null
    if isinstance(argument, Literal):
        right_true: np.ndarray | bool = to_boolean(argument.value) is True
        codes = typed.codes
    elif isinstance(argument, Chain):
        other = typed_chain(argument, subjects)
        if other is None:
            return None
        right = truth(other.vector)
        right_true = right.values & ~right.null
        if other.codes is not typed.codes:  # different attributes: FlowFile by FlowFile
            left_true, right_true = typed.rows(left_true), other.rows(right_true)
            codes = None
        else:
            codes = typed.codes
    else:
        return None
    values = (left_true & right_true) if name == "and" else (left_true | right_true)
    values = np.asarray(np.broadcast_to(values, left_true.shape), dtype=bool)
    return Typed(Booleans(values, np.zeros(len(values), dtype=bool)), codes)


#: Whole-number and decimal arithmetic by a literal.
ARITHMETIC = frozenset({"plus", "minus", "multiply", "divide", "mod"})
#: Functions making numbers, computed here over any value.
NUMBER_STEPS = frozenset({"toNumber", "toDecimal", *ARITHMETIC})
#: Functions making booleans, computed here over any value (``and``/``or`` take a chain too).
BOOLEAN_STEPS = frozenset(
    {"gt", "ge", "lt", "le", "equals", "isNull", "notNull", "isEmpty", "not", "and", "or"}
)
#: Functions of TEXT_STEPS computed here when the value is not text or has nulls.
_NULL_AWARE = frozenset({"equals", "isNull", "notNull", "isEmpty"})

_OPERATIONS: Mapping[str, Callable[..., Vector | None]] = {
    "toNumber": _to_number,
    "toDecimal": _to_decimal,
    **{name: _arithmetic(name) for name in ARITHMETIC},
    **{name: _comparison(name) for name in _COMPARE},
    "equals": _equals,
    "isNull": _is_null,
    "notNull": _not_null,
    "isEmpty": _is_empty,
    "not": _not,
}


# --- rendering ------------------------------------------------------------------------------


def render_vector(vector: Vector) -> tuple[str, ...]:
    """Each value as property text, as ``render`` writes it (null as ``""``)."""
    if isinstance(vector, Texts):
        return _filled(vector)
    if isinstance(vector, Booleans):
        words = np.where(vector.values, 1, 0) + np.where(vector.null, 2, 0)
        return tuple(map(("false", "true", "", "").__getitem__, words.tolist()))
    texts = np.empty(len(vector), dtype=object)
    whole = ~vector.decimal & ~vector.null
    texts[whole] = list(map(str, vector.longs[whole].tolist()))
    decimal = vector.decimal & ~vector.null
    texts[decimal] = render_doubles(vector.doubles[decimal])
    texts[vector.null] = ""
    return tuple(texts.tolist())
