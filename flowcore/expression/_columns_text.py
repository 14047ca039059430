"""String chains over a column: each distinct value put through Python's own str methods once.

``${filename:substringBefore('.'):toUpper()}`` over a batch whose filenames all differ cannot be
evaluated once per few distinct values: there are as many as FlowFiles. It is instead one lazy
pipeline of C-level ``map`` calls over the column's dictionary (``str.partition`` then
``str.upper`` ...), consumed once into the result's dictionary, while the FlowFiles' codes stay
as they are. No Python frame runs per value for the common functions, no per-FlowFile context is
made, and the methods are those the per-FlowFile functions call, so the results are theirs by
construction: Unicode case mapping (``ß`` upper-cased is ``SS``), code-point lengths, empty
strings, markers at either end.

numpy 2's ``np.strings`` and ``pyarrow.compute`` were measured for this on a million distinct
filenames (docs/expression-language.md): converting the column's strings into their arrays and
back costs more than this whole pipeline, and pyarrow's case mapping is not Python's.

A chain is taken when its subject is an attribute and every call is one of :data:`TEXT_STEPS`
with literal arguments; a whole number (``length``, ``indexOf``) or boolean
(``startsWith`` ...) ends the string part, and numpy carries on from there
(:func:`~flowcore.expression._columns_numbers.numeric_calls`). Entries whose attribute is absent
are left to the caller, which evaluates one of their FlowFiles the per-FlowFile way (an
environment variable of that name stands in for the attribute there).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import attrs
import numpy as np

from flowcore.expression._columns_numbers import numeric_calls
from flowcore.expression._nodes import Call, Chain, Literal
from flowcore.expression._values import Value, max_length, to_number, to_string
from flowcore.flowfile_batch.columns import Column, IntColumn

__all__ = ["TEXT_STEPS", "ChainValues", "column_entries", "text_chain", "text_template"]

#: What ``java_trim`` strips: every character up to U+0020.
_JAVA_BLANKS = "".join(map(chr, range(33)))
#: A dictionary with more unused entries than this share of the FlowFiles is compacted first.
_UNUSED_SHARE = 1.0

_Pipe = Callable[[Iterable[str]], Iterator[Any]]


@attrs.frozen
class ChainValues:
    """A chain's value for each entry of a column's dictionary.

    Attributes:
        kind: ``"text"`` (values a tuple of str), ``"number"`` (an int64 array) or
            ``"boolean"`` (a bool array).
        values: one per entry.
        codes: each FlowFile's entry.
        absent: the entries whose attribute is absent; their value is a placeholder for the
            caller to replace with the per-FlowFile evaluation's.
    """

    kind: str
    values: Any
    codes: np.ndarray
    absent: tuple[int, ...]


@attrs.frozen
class _Step:
    """How one function works over many strings.

    Attributes:
        kind: what it makes: ``"text"``, ``"number"`` or ``"boolean"``.
        make: the pipe for the literal arguments (None: not for these arguments).
        bound: the longest result for the longest subject *n* (text steps).
    """

    kind: str
    make: Callable[..., _Pipe | None]
    bound: Callable[..., int] = lambda n, *_args: n


def _text(value: Value) -> str:
    return to_string(value) or ""


def _marker(around: Callable[[str], _Pipe]) -> Callable[[Value], _Pipe]:
    """A substringBefore-like step: an empty marker leaves the subject whole, as in NiFi."""

    def make(marker: Value) -> _Pipe:
        text = _text(marker)
        return iter if not text else around(text)

    return make


def _before(m: str) -> _Pipe:
    return lambda values: map(operator.itemgetter(0), map(str.partition, values, repeat(m)))


def _after(m: str) -> _Pipe:  # one piece when the marker is missing: the whole subject
    return lambda values: map(operator.itemgetter(-1), map(str.split, values, repeat(m), repeat(1)))


def _before_last(m: str) -> _Pipe:
    return lambda values: map(operator.itemgetter(0), map(str.rsplit, values, repeat(m), repeat(1)))


def _after_last(m: str) -> _Pipe:  # ("", "", subject) when the marker is missing
    return lambda values: map(operator.itemgetter(2), map(str.rpartition, values, repeat(m)))


def _substring(start: Value, end: Value = None) -> _Pipe | None:
    """``substring``: Java's bounds, where NiFi gives "" for what Java would throw on."""
    begin = to_number(start)
    stop = None if end is None else to_number(end)
    if begin is None or (end is not None and stop is None):
        return _empty()
    try:
        first = int(begin)
        last = None if stop is None else int(stop)
    except (ValueError, OverflowError):  # NaN or infinite: the per-FlowFile error, there
        return None
    if first < 0 or (last is not None and first > last):
        return _empty()
    if last is None:  # past the end, the slice is "" as NiFi's is
        return lambda values: map(operator.getitem, values, repeat(slice(first, None)))

    def cut(text: str) -> str:
        return text[first:last] if last <= len(text) else ""

    return lambda values: map(cut, values)


def _empty() -> _Pipe:
    return lambda values: map(str.__mul__, values, repeat(0))  # "" for each


def _tests(method: Callable[[str, str], bool]) -> Callable[[Value], _Pipe]:
    def make(other: Value) -> _Pipe:
        return lambda values: map(method, values, repeat(_text(other)))

    return make


def _equals(other: Value) -> _Pipe:
    return lambda values: map(_text(other).__eq__, values)


def _equals_ignore_case(other: Value) -> _Pipe:
    return lambda values: map(_text(other).lower().__eq__, map(str.lower, values))


def _in(*others: Value) -> _Pipe:
    return lambda values: map(frozenset(map(_text, others)).__contains__, values)


def _searches(method: Callable[[str, str], int]) -> Callable[[Value], _Pipe]:
    def make(other: Value) -> _Pipe:
        return lambda values: map(method, values, repeat(_text(other)))

    return make


def _constant(value: bool) -> Callable[[], _Pipe]:
    test = operator.is_not if value else operator.is_
    return lambda: lambda values: map(test, values, repeat(None))


#: The functions a string chain can hold, by EL name.
TEXT_STEPS: Mapping[str, _Step] = {
    "toUpper": _Step("text", lambda: lambda values: map(str.upper, values), lambda n: 3 * n),
    "toLower": _Step("text", lambda: lambda values: map(str.lower, values), lambda n: 3 * n),
    "trim": _Step("text", lambda: lambda values: map(str.strip, values, repeat(_JAVA_BLANKS))),
    "substringBefore": _Step("text", _marker(_before)),
    "substringAfter": _Step("text", _marker(_after)),
    "substringBeforeLast": _Step("text", _marker(_before_last)),
    "substringAfterLast": _Step("text", _marker(_after_last)),
    "substring": _Step("text", _substring),
    "append": _Step(
        "text",
        lambda tail: lambda values: map(str.__add__, values, repeat(_text(tail))),
        lambda n, tail: n + len(_text(tail)),
    ),
    "prepend": _Step(
        "text",
        lambda head: lambda values: map(_text(head).__add__, values),
        lambda n, head: n + len(_text(head)),
    ),
    "length": _Step("number", lambda: lambda values: map(len, values)),
    "indexOf": _Step("number", _searches(str.find)),
    "lastIndexOf": _Step("number", _searches(str.rfind)),
    "startsWith": _Step("boolean", _tests(str.startswith)),
    "endsWith": _Step("boolean", _tests(str.endswith)),
    "contains": _Step("boolean", _tests(str.__contains__)),
    "equals": _Step("boolean", _equals),
    "equalsIgnoreCase": _Step("boolean", _equals_ignore_case),
    "in": _Step("boolean", _in),
    # NiFi's isEmpty strips with Java's Character.isWhitespace; the per-FlowFile one with str.strip
    "isEmpty": _Step("boolean", lambda: lambda values: map(operator.not_, map(str.strip, values))),
    "isNull": _Step("boolean", _constant(False)),
    "notNull": _Step("boolean", _constant(True)),
}


def text_chain(chain: Chain, column: Column) -> ChainValues | None:
    """*chain*'s value for each entry of *column*, or None when it is not a string chain.

    Raises:
        ExpressionEvaluationError: as numpy's part of the chain does (``mod(0)``).
    """
    plan = _plan(chain.calls)
    if plan is None:
        return None
    pipes, bounds, kind, rest = plan
    codes, entries = column_entries(column)
    try:
        longest = len("".join(entries))  # the total is a bound on every value's length
        present, absent = entries, ()
    except TypeError:  # some entries are absent (None)
        absent = tuple(i for i, value in enumerate(entries) if value is None)
        present = tuple(value for value in entries if value is not None)
        longest = len("".join(present))
    if bounds and _longest_result(bounds, longest) > max_length():
        longest = max(map(len, present), default=0)
        if _longest_result(bounds, longest) > max_length():
            return None  # some FlowFile's result is over the limit: the per-FlowFile error
    flowing: Iterator[Any] = iter(present)
    for pipe in pipes:
        flowing = pipe(flowing)
    if kind == "text":
        values: Any = tuple(flowing)
    else:
        dtype = np.int64 if kind == "number" else np.bool_
        values = numeric_calls(np.fromiter(flowing, dtype, len(present)), rest)
        if values is None:
            return None
        kind = "boolean" if values.dtype == np.bool_ else "number"
    if absent:
        values = _with_placeholders(kind, values, absent, len(entries))
    return ChainValues(kind, values, codes, absent)


def text_template(parts: Sequence[str | Chain], column: Column) -> ChainValues | None:
    """Property text of literal text and string chains over *column*, for each entry.

    A lone chain keeps its kind (:func:`text_chain`); text with several parts is their
    concatenation, each chain's value rendered as the per-FlowFile evaluation renders it. The
    absent entries' placeholders stand for the whole text.
    """
    if len(parts) == 1 and isinstance(parts[0], Chain):
        return text_chain(parts[0], column)
    pieces: list[Iterable[str]] = []
    last: ChainValues | None = None
    for part in parts:
        if isinstance(part, str):
            pieces.append(repeat(part))
            continue
        last = text_chain(part, column)
        if last is None:
            return None
        pieces.append(_rendered(last))
    if last is None:
        return None
    values = tuple(map("".join, zip(*pieces, strict=False)))  # the repeats never end
    limit = max_length()  # the total first: cheaper than the longest, and mostly enough
    if len("".join(values)) > limit and max(map(len, values), default=0) > limit:
        return None  # the concatenation's per-FlowFile error
    return ChainValues("text", values, last.codes, last.absent)


def _rendered(values: ChainValues) -> Iterable[str]:
    """Each entry's value as property text: whole numbers in decimal, booleans in words."""
    if values.kind == "text":
        return values.values  # type: ignore[no-any-return]
    if values.kind == "number":
        return map(str, values.values.tolist())
    return map(("false", "true").__getitem__, values.values.tolist())


def _plan(
    calls: Sequence[Call],
) -> tuple[list[_Pipe], list[tuple[_Step, tuple[Value, ...]]], str, Sequence[Call]] | None:
    """The pipes for the string part of *calls*, the text steps' bounds, its kind, the rest."""
    pipes: list[_Pipe] = []
    bounds: list[tuple[_Step, tuple[Value, ...]]] = []
    for position, call in enumerate(calls):
        step = TEXT_STEPS.get(call.name)
        if step is None or not all(isinstance(arg, Literal) for arg in call.args):
            return None
        args = tuple(arg.value for arg in call.args)  # type: ignore[union-attr]
        pipe = step.make(*args)
        if pipe is None:
            return None
        pipes.append(pipe)
        if step.kind != "text":
            return pipes, bounds, step.kind, calls[position + 1 :]
        bounds.append((step, args))
    return pipes, bounds, "text", ()


def _longest_result(bounds: list[tuple[_Step, tuple[Value, ...]]], longest: int) -> int:
    """The longest string any text step can make from subjects of at most *longest* chars."""
    for step, args in bounds:
        longest = step.bound(longest, *args)
    return longest


def column_entries(column: Column) -> tuple[np.ndarray, Sequence[str | None]]:
    """``(codes, entries)`` of *column*: its dictionary, without most unused values."""
    if isinstance(column, IntColumn):
        numbers = column.numbers
        return np.arange(len(numbers), dtype=np.int32), tuple(map(str, numbers.tolist()))
    codes, dictionary = column.codes, column.dictionary
    if len(dictionary) <= len(codes) * _UNUSED_SHARE + 16:
        return codes, dictionary
    used = np.zeros(len(dictionary), dtype=bool)
    used[codes] = True
    kept = np.flatnonzero(used)
    remap = np.zeros(len(dictionary), dtype=np.int32)
    remap[kept] = np.arange(len(kept), dtype=np.int32)
    return remap[codes], tuple(dictionary[i] for i in kept.tolist())


def _with_placeholders(kind: str, values: Any, absent: tuple[int, ...], count: int) -> Any:
    """*values* of the present entries spread over all *count* entries, placeholders between."""
    if kind == "text":
        spread = list(values)
        for entry in absent:  # in increasing order: each lands where it belongs
            spread.insert(entry, "")
        return tuple(spread)
    full = np.zeros(count, dtype=values.dtype)
    keep = np.ones(count, dtype=bool)
    keep[list(absent)] = False
    full[keep] = values
    return full
