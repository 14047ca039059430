"""NiFi's CSVSchemaInference over the CSV reader's sample, a column at a time with Arrow.

Each column's values are classified (INT, LONG, FLOAT, DOUBLE, BOOLEAN, a configured date,
time or timestamp, STRING) by Arrow's kernels; only non-ASCII values and those that may be
temporal go through :func:`~flowcore.records.inference.infer_text_type` one by one.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records import _csv_arrow, formats
from flowcore.records._csv_values import Ends, clean_column, ends, unquoted
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
            strings = clean_column(
                sample.column(index), dialect, trim_double_quote=trim_double_quote
            )
            sample.cleaned[index] = strings
        inference = FieldTypeInference()
        for dtype in _text_types(strings, temporal):
            inference.add(dtype)
        fields.append(RecordField(name, inference.to_type(), True))
    return RecordSchema(fields)


#: The types :func:`infer_text_type` gives, by the codes :func:`_text_types` uses.
_TEXT_TYPES = (INT, LONG, FLOAT, DOUBLE, BOOLEAN, TIMESTAMP, DATE, TIME, STRING)
_NONE = len(_TEXT_TYPES)
_NUMBER = r"^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$"
_FLOAT_MAX = 3.4028234663852886e38
_FLOAT_MIN = 1.401298464324817e-45  # Java's Float.MIN_VALUE, as NiFi compares with it
#: What Python's ``str.strip()`` takes off ASCII text (the temporal test strips so).
_PY_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _text_types(strings: pa.Array, temporal: TemporalFormats) -> list[DataType]:
    r"""The types :func:`infer_text_type` gives *strings*' values, each once, in first order.

    ASCII values are classified by Arrow's kernels (RE2's ``[0-9]`` is Python's ``\d`` on
    them); other values, and ASCII values that may be a date, time or timestamp, by
    :func:`infer_text_type` itself.
    """
    # CSVSchemaInference takes one more pair of quotes off than the reader does
    text = unquoted(strings)
    fast = _column_of_one_kind(text, temporal)
    if fast is not None:
        return fast
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


def _column_of_one_kind(text: pa.Array, temporal: TemporalFormats) -> list[DataType] | None:
    """:func:`_text_types` of a column of one kind of value, in a few kernels (None: mixed).

    NiFi infers each FlowFile's schema, so a flow of many small FlowFiles pays this per
    column per FlowFile: the general classification costs ~50 kernel calls a column, this
    ~10. It decides ASCII columns that are all whole numbers, all numbers with a point, all
    booleans, or all other text (then all STRING, or all of the first configured temporal
    format); anything else (non-ASCII, a bare ``""``, a mix) is left to the general way.
    """
    count = len(text) - text.null_count
    if count == 0:
        return []
    bounds = ends(text)
    if not bounds.ascii() and not pc.all(pc.string_is_ascii(text)).as_py():
        return None
    if bounds.any_empty():
        return None
    numeric = _count(pc.match_substring_regex(text, _NUMBER)) if _may_be_numbers(bounds) else 0
    if numeric == count:
        return _numbers(text)
    if numeric:
        return None
    booleans = 0
    lengths = bounds.lengths
    if not bounds.known or (((lengths == 4) | (lengths == 5)) & bounds.has).any():
        lower = pc.utf8_lower(text)
        booleans = _count(pc.or_(pc.equal(lower, "true"), pc.equal(lower, "false")))
    if booleans:
        return [BOOLEAN] if booleans == count else None
    # a column all of the first temporal format: its first value must be (one regex tells)
    java = next((p for p in (temporal.timestamp, temporal.date, temporal.time) if p), None)
    head = text.drop_null()[0].as_py()
    if java is not None and formats.pattern(java).matches(head):
        first = _first_temporal(text, temporal)
        if first is not None and first[0].null_count == text.null_count:
            return [_TEXT_TYPES[first[1]]]
    if not _may_be_temporal(bounds, temporal):
        return [STRING]
    maybe = _maybe_temporal(text, temporal, bounds)
    if maybe is None or not pc.any(maybe).as_py():
        return [STRING]
    return None


#: The bytes a value matching :data:`_NUMBER` may start with, and those it may end with.
_NUMBER_FIRST = np.isin(np.arange(256), np.frombuffer(b"-.0123456789", dtype=np.uint8))
_NUMBER_LAST = np.isin(np.arange(256), np.frombuffer(b"0123456789", dtype=np.uint8))


def _may_be_numbers(bounds: Ends) -> bool:
    """Whether a value may match :data:`_NUMBER` (else the regex, the dearest kernel, need not run).

    A number starts with ``-``, ``.`` or a digit and ends with a digit.
    """
    if not bounds.known:
        return True
    return bool((_NUMBER_FIRST[bounds.first] & _NUMBER_LAST[bounds.last] & bounds.has).any())


def _numbers(text: pa.Array) -> list[DataType] | None:
    """The types of a column of numbers only: INT, LONG, FLOAT, DOUBLE by first occurrence."""
    point = pc.match_substring(text, ".")
    masks: list[tuple[pa.Array, DataType]] = []
    if pc.any(pc.invert(point)).as_py():
        try:
            ints = pc.cast(pc.if_else(point, None, text), pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond a long
            return None
        small = pc.and_(pc.greater_equal(ints, -(2**31)), pc.less(ints, 2**31))
        masks += [(small, INT), (pc.invert(small), LONG)]
    if pc.any(point).as_py():
        floats = pc.cast(pc.if_else(point, text, None), pa.float64())
        wide = pc.or_(pc.greater(floats, _FLOAT_MAX), pc.less(floats, _FLOAT_MIN))
        masks += [(pc.invert(wide), FLOAT), (wide, DOUBLE)]
    found = [
        (index, dtype) for mask, dtype in masks if (index := pc.index(mask, True).as_py()) >= 0
    ]
    return [dtype for _, dtype in sorted(found, key=lambda pair: pair[0])]


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
