"""NiFi's CSVSchemaInference over the CSV reader's sample, a column at a time with Arrow.

Each column's values are classified (INT, LONG, FLOAT, DOUBLE, BOOLEAN, a configured date,
time or timestamp, STRING) by Arrow's kernels; only non-ASCII values and those that may be
temporal go through :func:`~flowcore.records.inference.infer_text_type` one by one.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records import _csv_arrow, formats
from flowcore.records._csv_values import Ends, Numbers, clean_column_ends, ends, unquoted
from flowcore.records.csv_format import CsvDialect
from flowcore.records.inference import FieldTypeInference, infer_text_type
from flowcore.records.schema import (
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    DataType,
    RecordField,
    RecordSchema,
)
from flowcore.records.values import TemporalFormats

__all__ = ["infer_schema"]


def infer_schema(
    columns: dict[str, int],
    head: list[list[str]] | _csv_arrow.Columns,
    dialect: CsvDialect,
    *,
    trim_double_quote: bool,
    temporal: TemporalFormats,
) -> RecordSchema:
    """NiFi's ``CSVSchemaInference`` over the sample *head*, a column at a time.

    The same schema as :func:`~flowcore.records.inference.infer_text_schema` over the cleaned
    rows: a field's type depends only on which value types occur and in which order they
    first occur, so each column's types are found with Arrow's kernels and added once each.
    """
    sample = _csv_arrow.RowColumns(head) if isinstance(head, list) else head
    fields = []
    for name, index in columns.items():
        strings = sample.cleaned.get(index)
        if strings is None:
            strings, bounds = clean_column_ends(
                sample.column(index), dialect, trim_double_quote=trim_double_quote
            )
            sample.cleaned[index] = strings
        else:
            bounds = ends(strings)
        found = _column_types(strings, temporal, bounds)
        if found.parsed is not None:
            sample.parsed[index] = found.parsed
        inference = FieldTypeInference()
        for dtype in found.types:
            inference.add(dtype)
        fields.append(RecordField(name, inference.to_type(), True))
    return RecordSchema(fields)


@attrs.frozen
class _ColumnTypes:
    """A column's value types in first order, and what the first configured format parsed.

    Attributes:
        types: the types :func:`infer_text_type` gives the values, each once, in first order.
        parsed: (Java pattern, :meth:`formats.DateTimePattern.parse_column` of the cleaned
            column) when the inference parsed it: the reader's conversion of the same rows
            to that format's type takes it instead of parsing them again.
    """

    types: list[DataType]
    parsed: tuple[str, pa.Array] | None = None


def _column_types(strings: pa.Array, temporal: TemporalFormats, bounds: Ends) -> _ColumnTypes:
    """:func:`_text_types` of a cleaned column whose :class:`Ends` are *bounds*."""
    # CSVSchemaInference takes one more pair of quotes off than the reader does
    text = unquoted(strings, bounds)
    if text is not strings:  # the general way, which takes that pair off itself
        return _ColumnTypes(_text_types(strings, temporal))
    fast = _column_of_one_kind(text, temporal, bounds)
    if fast is not None:
        return fast
    return _ColumnTypes(_text_types(text, temporal, unquote=False))


#: The types :func:`infer_text_type` gives, by the codes :func:`_text_types` uses.
_TEXT_TYPES = (INT, LONG, FLOAT, DOUBLE, BOOLEAN, TIMESTAMP, DATE, TIME, STRING)
_NONE = len(_TEXT_TYPES)
_NUMBER = r"^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$"
_FLOAT_MAX = 3.4028234663852886e38
_FLOAT_MIN = 1.401298464324817e-45  # Java's Float.MIN_VALUE, as NiFi compares with it
#: What Python's ``str.strip()`` takes off ASCII text (the temporal test strips so).
_PY_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _text_types(
    strings: pa.Array, temporal: TemporalFormats, *, unquote: bool = True
) -> list[DataType]:
    r"""The types :func:`infer_text_type` gives *strings*' values, each once, in first order.

    ASCII values are classified by Arrow's kernels (RE2's ``[0-9]`` is Python's ``\d`` on
    them); other values, and ASCII values that may be a date, time or timestamp, by
    :func:`infer_text_type` itself.
    """
    # CSVSchemaInference takes one more pair of quotes off than the reader does
    text = unquoted(strings) if unquote else strings
    if unquote and (fast := _column_of_one_kind(text, temporal, ends(text))) is not None:
        return fast.types
    codes = np.full(len(text), _NONE, dtype=np.int8)
    ascii_ = pc.fill_null(pc.and_(pc.string_is_ascii(text), pc.not_equal(text, "")), False)
    numeric = pc.and_(ascii_, pc.fill_null(pc.match_substring_regex(text, _NUMBER), False))
    point = pc.and_(numeric, pc.match_substring(text, "."))
    whole = pc.and_(numeric, pc.invert(point))
    try:
        floats = pc.cast(pc.if_else(point, text, None), pa.float64())
        ints = pc.cast(pc.if_else(whole, text, None), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond a long: one by one
        return _types_one_by_one(text.to_pylist(), temporal)
    wide = pc.or_(pc.greater(floats, _FLOAT_MAX), pc.less(floats, _FLOAT_MIN))
    small = pc.and_(pc.greater_equal(ints, -(2**31)), pc.less(ints, 2**31))
    lower = pc.utf8_lower(text)
    boolean = pc.and_(ascii_, pc.or_(pc.equal(lower, "true"), pc.equal(lower, "false")))
    rest = pc.and_(ascii_, pc.invert(pc.or_(numeric, pc.fill_null(boolean, False))))
    for mask, code in (
        (pc.and_(whole, small), 0),
        (pc.and_(whole, pc.invert(small)), 1),
        (pc.and_(point, pc.invert(wide)), 2),
        (pc.and_(point, wide), 3),
        (boolean, 4),
        (rest, 8),
    ):
        codes[pc.fill_null(mask, False).to_numpy(zero_copy_only=False)] = code
    # one by one: non-ASCII values, and what may match a date/time/timestamp format
    slow = pc.and_(pc.is_valid(text), pc.invert(ascii_))
    slow = pc.and_(pc.not_equal(text, ""), slow)
    maybe = _maybe_temporal(text, temporal) if pc.any(rest).as_py() else None
    if maybe is not None and pc.any(pc.and_(rest, maybe)).as_py():
        maybe = pc.and_(rest, maybe)
        first = _first_temporal(text, temporal)
        if first is not None:  # what the first format Arrow parses exactly is that type
            parsed, code = first
            decided = pc.fill_null(pc.and_(maybe, pc.is_valid(parsed)), False)
            codes[decided.to_numpy(zero_copy_only=False)] = code
            maybe = pc.and_(maybe, pc.invert(decided))
        slow = pc.or_(slow, maybe)
    slow_rows = pc.indices_nonzero(pc.fill_null(slow, False)).to_numpy()
    if len(slow_rows):
        for row, value in zip(slow_rows, text.take(slow_rows).to_pylist(), strict=True):
            dtype = infer_text_type(value, temporal)
            codes[row] = _NONE if dtype is None else _TEXT_TYPES.index(dtype)
    found = pc.unique(pa.array(codes)).to_pylist()  # in order of first occurrence
    return [_TEXT_TYPES[code] for code in found if code != _NONE]


def _column_of_one_kind(
    text: pa.Array, temporal: TemporalFormats, bounds: Ends
) -> _ColumnTypes | None:
    """:func:`_text_types` of a column of one kind of value, from its bytes (None: mixed).

    NiFi infers each FlowFile's schema, so a flow of many small FlowFiles pays this per
    column per FlowFile: the general classification costs ~50 kernel calls a column, this
    a few numpy passes over the values' bytes (*bounds*, the column's :class:`Ends`) and a
    kernel or two. It decides ASCII columns that are all whole numbers, all numbers with a
    point, all booleans, or all other text (then all STRING, or all of the first configured
    temporal format); anything else (non-ASCII, a bare ``""``, a mix) is left to the general
    way.
    """
    count = len(text) - text.null_count
    if count == 0:
        return _ColumnTypes([])
    if not bounds.ascii() and not pc.all(pc.string_is_ascii(text)).as_py():
        return None
    if bounds.any_empty():
        return None
    java = next((p for p in (temporal.timestamp, temporal.date, temporal.time) if p), None)
    head = _first_value(text, bounds)
    temporal_head = java is not None and formats.pattern(java).matches(head)
    if temporal_head and _parses_no_number(java):  # type: ignore[arg-type]
        found = _all_first_temporal(text, temporal, java)  # type: ignore[arg-type]
        if found is not None:  # no value is a number or a boolean: all of that format
            return found
    numbers = None
    if not _may_be_numbers(bounds):
        numeric = 0
    elif bounds.known:
        numbers = bounds.numbers()
        numeric = int(numbers.numeric.sum())
    else:
        numeric = _count(pc.match_substring_regex(text, _NUMBER))
    if numeric == count:
        found = _numbers(text, bounds, numbers)
        return None if found is None else _ColumnTypes(found)
    if numeric:
        return None
    booleans = 0
    if _may_be_booleans(bounds):
        lower = pc.utf8_lower(text)
        booleans = _count(pc.or_(pc.equal(lower, "true"), pc.equal(lower, "false")))
    if booleans:
        return _ColumnTypes([BOOLEAN]) if booleans == count else None
    # a column all of the first temporal format: its first value must be (one regex tells)
    if temporal_head and not _parses_no_number(java):  # type: ignore[arg-type]
        found = _all_first_temporal(text, temporal, java)  # type: ignore[arg-type]
        if found is not None:
            return found
    if not _may_be_temporal(bounds, temporal):
        return _ColumnTypes([STRING])
    maybe = _maybe_temporal(text, temporal, bounds)
    if maybe is None or not pc.any(maybe).as_py():
        return _ColumnTypes([STRING])
    return None


#: The bytes a value matching :data:`_NUMBER` may start with, and those it may end with.
_NUMBER_FIRST = np.isin(np.arange(256), np.frombuffer(b"-.0123456789", dtype=np.uint8))
_NUMBER_LAST = np.isin(np.arange(256), np.frombuffer(b"0123456789", dtype=np.uint8))


def _may_be_numbers(bounds: Ends) -> bool:
    """Whether a value may match :data:`_NUMBER` (else no value's bytes need a look).

    A number starts with ``-``, ``.`` or a digit and ends with a digit.
    """
    if not bounds.known:
        return True
    return bool((_NUMBER_FIRST[bounds.first] & _NUMBER_LAST[bounds.last] & bounds.has).any())


def _all_first_temporal(
    text: pa.Array, temporal: TemporalFormats, java: str
) -> _ColumnTypes | None:
    """The first configured format's type, its parse kept, if it parses every value (else None).

    Only for a column whose values are neither numbers nor booleans (the types NiFi tests
    first).
    """
    first = _first_temporal(text, temporal)
    if first is None or first[0].null_count != text.null_count:
        return None
    parsed, code = first
    return _ColumnTypes([_TEXT_TYPES[code]], (java, parsed))


@functools.lru_cache(maxsize=64)
def _parses_no_number(java: str) -> bool:
    """Whether no value the vectorised parse of *java* takes is a number (:data:`_NUMBER`).

    That parse takes only values of the pattern's fixed width with its literals at their
    places and ASCII digits at every other place, so all are numbers or none is, as one of
    them tells: then a column it parses whole needs no look for numbers (nor booleans, of
    digits). False when the pattern has no vectorised parse.
    """
    pattern = formats.pattern(java)
    if pattern.parse_column(pa.array([], pa.string())) is None:
        return False
    return re.fullmatch(_NUMBER.strip("^$"), pattern.format(dt.datetime(2000, 1, 1))) is None


def _may_be_booleans(bounds: Ends) -> bool:
    """Whether a value may be ``true`` or ``false`` in any case (4 or 5 bytes, t or f first)."""
    if not bounds.known:
        return True
    lengths = bounds.lengths
    return bool(
        (((lengths == 4) | (lengths == 5)) & bounds.has & _BOOLEAN_FIRST[bounds.first]).any()
    )


_BOOLEAN_FIRST = np.isin(np.arange(256), np.frombuffer(b"tTfF", dtype=np.uint8))


def _first_value(text: pa.Array, bounds: Ends) -> str:
    """The first value that is not null (the column has one)."""
    index = int(np.argmax(bounds.valid)) if text.null_count else 0
    return text[index].as_py()


#: The most digits a whole number has that is an INT whatever they are (|n| < 10**9 < 2**31).
_INT_DIGITS = 9


def _numbers(text: pa.Array, bounds: Ends, numbers: Numbers | None) -> list[DataType] | None:
    """The types of a column of numbers only: INT, LONG, FLOAT, DOUBLE by first occurrence.

    *numbers*: the column's :meth:`Ends.numbers` (None: not known). Without a cast where the
    bytes tell: a whole number of at most :data:`_INT_DIGITS` digits is an INT; a number with
    a point of at most :data:`_FLOAT_CHARS` characters is a DOUBLE when below Java's
    ``Float.MIN_VALUE`` (negative, or zero: ``-0.0`` too), else a FLOAT (under 10**37, and
    at least 10**-37 when not zero).
    """
    if numbers is None:
        points = pc.fill_null(pc.match_substring(text, "."), False).to_numpy(zero_copy_only=False)
    else:
        points = numbers.points
    wholes = bounds.valid & ~points
    firsts: list[tuple[int, DataType]] = []
    if wholes.any():
        digits = bounds.lengths - (bounds.first == ord("-"))
        if int(digits[wholes].max()) <= _INT_DIGITS:
            firsts.append((int(np.argmax(wholes)), INT))
        else:
            try:
                ints = pc.cast(pc.if_else(pa.array(points), None, text), pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond a long
                return None
            values = pc.fill_null(ints, 0).to_numpy(zero_copy_only=False)
            small = wholes & (values >= -(2**31)) & (values < 2**31)
            firsts += _firsts((small, INT), (wholes & ~small, LONG))
    if points.any():
        if numbers is not None and int(bounds.lengths[points].max()) <= _FLOAT_CHARS:
            wide = points & ((bounds.first == ord("-")) | numbers.zeros)
        else:
            chosen = text if points.all() else pc.if_else(pa.array(points), text, None)
            values = pc.cast(chosen, pa.float64()).to_numpy(zero_copy_only=False)
            with np.errstate(invalid="ignore"):
                wide = points & ((values > _FLOAT_MAX) | (values < _FLOAT_MIN))
        firsts += _firsts((points & ~wide, FLOAT), (wide, DOUBLE))
    return [dtype for _, dtype in sorted(firsts, key=lambda pair: pair[0])]


#: The most characters a number with a point has that is a FLOAT unless negative or zero.
_FLOAT_CHARS = 38


def _firsts(*masks: tuple[np.ndarray, DataType]) -> list[tuple[int, DataType]]:
    """(first row, type) of each mask that has a row."""
    return [(int(np.argmax(mask)), dtype) for mask, dtype in masks if mask.any()]


#: A format's regex that starts with a number field (``(?P<y>-?\d{1,9})``, ``(?P<M>\d{2})``).
_NUMBER_FIELD_FIRST = re.compile(r"\(\?P<\w+>(-\?)?\\d")
_DIGITS = np.isin(np.arange(256), np.frombuffer(b"0123456789", dtype=np.uint8))
_DIGITS_OR_MINUS = np.isin(np.arange(256), np.frombuffer(b"-0123456789", dtype=np.uint8))


def _may_be_temporal(bounds: Ends, temporal: TemporalFormats) -> bool:
    """Whether a value may match a configured format (else its regex need not run).

    A format that starts with a number field (NiFi's defaults do) matches only values whose
    first byte is a digit (or ``-``, for a year): a column of names has none. Surrounding
    spaces (which the test strips) or a format starting otherwise: maybe.
    """
    patterns = [p for p in (temporal.timestamp, temporal.date, temporal.time) if p]
    if not bounds.known or bounds.may_have_space():
        return bool(patterns)
    for java in patterns:
        start = _NUMBER_FIELD_FIRST.match(formats.pattern(java).regex.pattern)
        if start is None:
            return True
        table = _DIGITS_OR_MINUS if start.group(1) else _DIGITS
        if (table[bounds.first] & bounds.has).any():
            return True
    return False


def _count(mask: pa.Array) -> int:
    """How many values of a boolean array are true."""
    return int(pc.sum(mask).as_py() or 0)


def _first_temporal(text: pa.Array, temporal: TemporalFormats) -> tuple[pa.Array, int] | None:
    """The values the first configured format (timestamp, date, time: NiFi's order) parses.

    :meth:`formats.DateTimePattern.parse_column` parses only what ``parse_datetime`` would
    (null: not known), and a text value that parses in the first format NiFi tries is of that
    format's type, so the values it parses need no test one by one.
    """
    for dtype, java in (
        (TIMESTAMP, temporal.timestamp),
        (DATE, temporal.date),
        (TIME, temporal.time),
    ):
        if java:
            parsed = formats.pattern(java).parse_column(text)
            return None if parsed is None else (parsed, _TEXT_TYPES.index(dtype))
    return None


def _maybe_temporal(
    text: pa.Array, temporal: TemporalFormats, bounds: Ends | None = None
) -> pa.Array | None:
    """Which ASCII values may match a configured format (None: no format is configured).

    The formats' own regexes, run by RE2 over the stripped values: a value none matches is
    not temporal; one that matches is tested by :func:`infer_text_type`.
    """
    patterns = [p for p in (temporal.timestamp, temporal.date, temporal.time) if p]
    if not patterns:
        return None
    bounds = bounds or ends(text)
    stripped = pc.utf8_trim(text, _PY_SPACE) if bounds.may_have_space() else text
    maybe = None
    for java in patterns:
        regex = formats.pattern(java).regex.pattern
        try:
            found = pc.match_substring_regex(stripped, "(?i)^" + regex.replace(r"\Z", "$"))
        except pa.ArrowInvalid:  # not RE2 syntax: every value is tested one by one
            return pc.is_valid(text)
        maybe = found if maybe is None else pc.or_(maybe, found)
    return maybe


def _types_one_by_one(values: list[str | None], temporal: TemporalFormats) -> list[DataType]:
    seen: dict[DataType, None] = {}
    for value in values:
        dtype = infer_text_type(value, temporal)
        if dtype is not None:
            seen.setdefault(dtype)
    return list(seen)
