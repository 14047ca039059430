"""The CSV reader's values: cleaned as NiFi's CSVReader cleans them, typed a column at a time.

Both row splits (Arrow's and the ``csv`` module's) give raw string columns; these functions
trim them, take one pair of quotes off, make empty values and the Null String null, and cast
each column to its field's type with Arrow's kernels (value by value only where Arrow refuses
a value NiFi takes, or to name the one that does not fit).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records import formats
from flowcore.records.csv_format import CsvDialect
from flowcore.records.inference import infer_text_type
from flowcore.records.schema import (
    INTEGRAL,
    ChoiceType,
    DataType,
    RecordField,
    SimpleType,
    arrow_type,
)
from flowcore.records.values import JAVA_SPACE, FieldError, TemporalFormats, coerce

__all__ = [
    "BadValue",
    "Ends",
    "Numbers",
    "clean",
    "clean_column",
    "clean_column_ends",
    "column",
    "ends",
    "unquoted",
]


def clean(value: str, dialect: CsvDialect, *, trim_double_quote: bool) -> str | None:
    """One value as NiFi's CSVReader reads it: trimmed, unquoted once, empty or Null String null."""
    if dialect.trim or dialect.ignore_surrounding_spaces:
        value = value.strip(JAVA_SPACE)  # Commons CSV's trim
    if dialect.null_string is not None and value == dialect.null_string:
        return None
    if trim_double_quote and len(value) > 1 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value or None


def clean_column(strings: pa.Array, dialect: CsvDialect, *, trim_double_quote: bool) -> pa.Array:
    """:func:`clean` for a whole column at once, with Arrow's string kernels."""
    return clean_column_ends(strings, dialect, trim_double_quote=trim_double_quote)[0]


def clean_column_ends(
    strings: pa.Array, dialect: CsvDialect, *, trim_double_quote: bool
) -> tuple[pa.Array, Ends]:
    """:func:`clean_column`, and the cleaned column's :class:`Ends` (the inference reads them).

    The ends of the raw column tell which kernels can change nothing (no value starts or ends
    with a space, none starts with a quote, none is empty): a flow of many small FlowFiles
    pays every kernel call per column per FlowFile, and most columns need none of them.
    """
    bounds = ends(strings)
    if (dialect.trim or dialect.ignore_surrounding_spaces) and bounds.may_have_space():
        strings = pc.utf8_trim(strings, JAVA_SPACE)
        bounds = ends(strings)
    if dialect.null_string is not None:
        strings = pc.if_else(pc.equal(strings, dialect.null_string), None, strings)
        bounds = ends(strings)
    if trim_double_quote:
        # one pair, across lines too; a bare pair leaves "" (null), as NiFi's trim then isEmpty
        unquoted_strings = unquoted(strings, bounds)
        if unquoted_strings is not strings:
            strings = unquoted_strings
            bounds = ends(strings)
    if not bounds.any_empty():
        return strings, bounds
    if not bounds.known:
        empty = pc.equal(strings, "")
        return pc.if_else(empty, None, strings), bounds
    strings = _nulls_where_empty(strings, bounds)
    return strings, ends(strings)


def _nulls_where_empty(strings: pa.Array, bounds: Ends) -> pa.Array:
    """*strings* with its empty values null, the same values otherwise.

    A new validity bitmap over the same offsets and bytes (an empty value has no bytes to
    drop), where ``if_else`` would copy every value.
    """
    validity = pa.py_buffer(np.packbits(bounds.has, bitorder="little"))
    offsets, data = strings.buffers()[1:3]
    shifted = strings.offset
    if shifted:  # the bitmap starts at the first value: the offsets must too
        width = 8 if pa.types.is_large_string(strings.type) else 4
        offsets = offsets.slice(shifted * width)
    return pa.Array.from_buffers(strings.type, len(strings), [validity, offsets, data])


def unquoted(strings: pa.Array, bounds: Ends | None = None) -> pa.Array:
    """The values without one pair of surrounding double quotes (``^"(.*)"$``, vectorised).

    The mask first (from *bounds*, the column's :class:`Ends`, when given): a regex
    replacement over every value costs ten times the rare values that are quoted. The same
    array when no value starts with a quote.
    """
    if bounds is not None and bounds.known and not (bounds.has & (bounds.first == _QUOTE)).any():
        return strings
    opens = pc.starts_with(strings, '"')
    if not pc.any(opens).as_py():
        return strings
    quoted = pc.and_(
        pc.and_(opens, pc.ends_with(strings, '"')), pc.greater_equal(pc.utf8_length(strings), 2)
    )
    return pc.if_else(quoted, pc.utf8_slice_codeunits(strings, 1, -1), strings)


_QUOTE = ord('"')


class Ends:
    """The first and last byte and the length in bytes of each value of a string column.

    NiFi infers each FlowFile's schema, so a flow of many small FlowFiles pays every kernel
    call per column per FlowFile; these gathers (one byte per value, from the array's
    buffers) tell cheaply when a kernel cannot change or match anything: no value starts or
    ends with a space (nothing to trim), none starts and ends as a number does (no regex).

    Attributes:
        known: the column is a string column (else every test answers "may").
        valid: which values are not null.
        has: which values are valid and not empty (only their bytes mean anything).
        first: each value's first byte.
        last: each value's last byte.
        lengths: each value's length in bytes.
    """

    def __init__(self, strings: pa.Array) -> None:
        count = len(strings)
        self.known = pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)
        if not self.known:
            strings = pa.nulls(count, pa.string())
        large = pa.types.is_large_string(strings.type)
        buffers = strings.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)[
            strings.offset : strings.offset + count + 1
        ]
        self.lengths = np.diff(offsets)
        self.valid = np.ones(count, dtype=bool)
        if strings.null_count:
            bits = np.frombuffer(buffers[0], dtype=np.uint8)
            first = strings.offset
            self.valid = np.unpackbits(
                bits[first // 8 : (first + count + 7) // 8 + 1], bitorder="little"
            )[first % 8 : first % 8 + count].astype(bool)
        self.has = (self.lengths > 0) & self.valid
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else None
        if data is None or not len(data) or not count:
            self.first = self.last = np.zeros(count, dtype=np.uint8)
            self._bytes = np.zeros(0, dtype=np.uint8)
            self._offsets = np.zeros(count + 1, dtype=np.int64)
            return
        self._bytes = data[offsets[0] : offsets[-1]]
        self._offsets = offsets
        top = len(data) - 1
        self.first = data[np.minimum(offsets[:-1], top)]
        self.last = data[np.clip(offsets[1:] - 1, 0, top)]

    def ascii(self) -> bool:
        """Whether every byte of the values is ASCII (a null's bytes, if any, count too)."""
        return self.known and not (len(self._bytes) and self._bytes.max() >= 128)

    def any_empty(self) -> bool:
        """Whether a valid value is empty."""
        return not self.known or bool(((self.lengths == 0) & self.valid).any())

    def numbers(self) -> Numbers:
        r"""Which values are numbers as the inference's number regex says, with a point, zero.

        The regex ``^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$`` run with numpy over the values' bytes:
        its values are exactly those of the bytes ``0-9 . -`` with a ``-`` only as the first
        byte, at most one ``.``, and a digit last (a byte of a non-ASCII character is none of
        those, as the regex matches no such character). One sum per value counts its other
        bytes, its digits 1-9 and its points at once, each in 21 bits of a uint64 (values of
        2**21 bytes or more: one sum each). The sums are ``reduceat``'s, a zero after the bytes
        so an empty last value has a place; they are right for the values that are not empty,
        the only ones that count (an empty value's is the next byte's weight).

        Only for a string column (:attr:`known`).
        """
        weights = np.zeros(len(self._bytes) + 1, dtype=np.uint64)
        start = (self._offsets[:-1] - self._offsets[0]).astype(np.intp)
        if len(self.lengths) and int(self.lengths.max()) >= _FIELD:
            counts = []
            for table in _NUMBER_CLASSES:
                np.take(table, self._bytes, out=weights[:-1], mode="clip")
                counts.append(np.add.reduceat(weights, start))
            others, nonzero, points = counts
        else:
            np.take(_NUMBER_WEIGHTS, self._bytes, out=weights[:-1], mode="clip")
            sums = np.add.reduceat(weights, start) if len(start) else weights[:0]
            mask = np.uint64(_FIELD - 1)
            others = sums & mask
            nonzero = (sums >> np.uint64(21)) & mask
            points = sums >> np.uint64(42)
        minus = self.first == _MINUS
        numeric = self.has & (others == minus) & (points <= 1) & _DIGIT_BYTES[self.last]
        return Numbers(numeric, numeric & (points == 1), numeric & (nonzero == 0))

    def may_have_space(self) -> bool:
        """Whether a value may start or end with a character up to a space (ASCII only)."""
        if not self.known:
            return True
        return bool((((self.first <= 32) | (self.last <= 32)) & self.has).any())


_MINUS = ord("-")
_DIGIT_BYTES = np.isin(np.arange(256), np.frombuffer(b"0123456789", dtype=np.uint8))
_FIELD = 1 << 21
#: The byte classes :meth:`Ends.numbers` counts: other bytes, digits 1-9, points.
_NUMBER_CLASSES = (
    (~_DIGIT_BYTES & (np.arange(256) != ord("."))).astype(np.uint64),
    (_DIGIT_BYTES & (np.arange(256) != ord("0"))).astype(np.uint64),
    (np.arange(256) == ord(".")).astype(np.uint64),
)
#: Each byte's weight in :meth:`Ends.numbers`: other 1, a digit 1-9 2**21, a point 2**42.
_NUMBER_WEIGHTS = (
    _NUMBER_CLASSES[0]
    + _NUMBER_CLASSES[1] * np.uint64(_FIELD)
    + _NUMBER_CLASSES[2] * np.uint64(1 << 42)
)


@attrs.frozen(eq=False)
class Numbers:
    """What :meth:`Ends.numbers` tells of each value of a column.

    Attributes:
        numeric: the value matches the inference's number regex.
        points: a number with a point.
        zeros: a number all of whose digits are 0 (``-0``, ``0.00``).
    """

    numeric: np.ndarray
    points: np.ndarray
    zeros: np.ndarray


def ends(strings: pa.Array) -> Ends:
    """:class:`Ends` of *strings* (a ``string`` or ``large_string`` array)."""
    return Ends(strings)


class BadValue(Exception):
    """A value that does not fit its field: its row in the batch, the field, NiFi's reason."""

    def __init__(self, row: int, field: str, message: str) -> None:
        super().__init__(message)
        self.row = row
        self.field = field


_VECTOR_CASTS = frozenset({*INTEGRAL, "float", "double", "decimal"}) - {"bigint"}


def column(
    strings: pa.Array,
    field: RecordField,
    temporal: TemporalFormats,
    *,
    parsed: tuple[str, pa.Array] | None = None,
) -> pa.Array:
    """A cleaned string column as *field*'s type: Arrow's casts, else value by value.

    *parsed*: (Java pattern, its ``parse_column`` of *strings*), what schema inference parsed
    already; a date or timestamp field of that pattern takes it instead of parsing again.

    Raises:
        BadValue: the first value that does not fit.
    """
    dtype = field.type
    target = arrow_type(dtype)
    if not field.nullable and strings.null_count:
        row = strings.is_null().to_pylist().index(True)
        raise BadValue(row, field.name, "the field is not nullable but has no value")
    if isinstance(dtype, SimpleType) and dtype.name in ("string", "uuid"):
        return strings
    if isinstance(dtype, SimpleType) and dtype.name == "char":
        return pc.utf8_slice_codeunits(strings, 0, 1)
    if dtype.name == "boolean":
        lower = pc.utf8_lower(strings)
        true = pc.equal(lower, "true")
        bad = pc.and_(pc.invert(pc.or_(true, pc.equal(lower, "false"))), pc.is_valid(strings))
        if pc.any(bad).as_py():
            _raise_first(strings.to_pylist(), dtype, field.name, temporal)
        return true
    if dtype.name in _VECTOR_CASTS and not _hex_integers(strings, dtype):
        try:
            cast = pc.cast(strings, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # Arrow's cast refused a value: convert one by one (NiFi is more lenient)
        else:
            if _java_non_finite(strings, cast):
                return cast
    if dtype.name in ("timestamp", "date"):
        return _temporal_column(strings, field, temporal, target, parsed)
    return pa.array(_coerce_all(strings.to_pylist(), dtype, field.name, temporal), target)


#: Text Double.parseDouble reads that Arrow's cast also reads and makes NaN or infinite.
_JAVA_NON_FINITE = r"^[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)$"


def _java_non_finite(strings: pa.Array, cast: pa.Array) -> bool:
    """Whether each NaN or infinity of a float *cast* of *strings* is one Java reads too.

    Arrow's cast reads ``inf``, ``nan``, ``INF``; Java's Double.parseDouble (NiFi's toDouble)
    only ``NaN``, ``Infinity`` (signed) and numbers too large. A finite column (the usual
    one) costs one ``is_finite`` kernel.
    """
    if not pa.types.is_floating(cast.type):
        return True
    finite = pc.is_finite(cast)
    if pc.all(finite).as_py() is not False:
        return True
    odd = pc.filter(strings, pc.invert(finite))
    return bool(pc.all(pc.match_substring_regex(odd, _JAVA_NON_FINITE)).as_py())


def _hex_integers(strings: pa.Array, dtype: DataType) -> bool:
    """Whether an integral column has text with an ``x``: Arrow's cast reads ``0x10`` as 16.

    Java's Integer.parseInt (NiFi's toInteger) refuses hex; Arrow's integer parsing reads a
    ``0x`` prefix and is otherwise as strict (a sign and digits; it refuses a ``+`` parseInt
    takes, which the value-by-value path converts). One scan of the values' bytes (memchr
    speed; a byte of a null slot can only send the column the exact slow way) keeps it exact.
    """
    if dtype.name not in INTEGRAL or len(strings) == 0:
        return False
    if not pa.types.is_string(strings.type):
        return bool(pc.any(pc.match_substring(strings, "x", ignore_case=True)).as_py())
    _, offsets, data = strings.buffers()
    if data is None:
        return False
    bounds = np.frombuffer(offsets, dtype=np.int32)[
        strings.offset : strings.offset + len(strings) + 1
    ]
    raw = memoryview(data)[int(bounds[0]) : int(bounds[-1])].tobytes()
    return b"x" in raw or b"X" in raw


def _temporal_column(
    strings: pa.Array,
    field: RecordField,
    temporal: TemporalFormats,
    target: pa.DataType,
    known: tuple[str, pa.Array] | None = None,
) -> pa.Array:
    """A DATE or TIMESTAMP column, vectorised where that is exact, else value by value.

    Arrow parses the values it parses exactly as NiFi's rules would
    (:meth:`formats.DateTimePattern.parse_column`); the rest go through :func:`coerce`.
    """
    kind = field.type.name
    text = (
        (temporal.timestamp or formats.DEFAULT_TIMESTAMP)
        if kind == "timestamp"
        else (temporal.date or formats.DEFAULT_DATE)
    )
    if known is not None and known[0] == text:
        parsed: pa.Array | None = known[1]
    else:
        parsed = formats.pattern(text).parse_column(strings)
    if parsed is None:
        return pa.array(_coerce_all(strings.to_pylist(), field.type, field.name, temporal), target)
    if kind == "date":
        parsed = pc.cast(pc.floor_temporal(parsed, unit="day"), pa.date32())
    if parsed.null_count == strings.null_count:  # a null parse is a null value's only
        return parsed.cast(target)
    missing = pc.and_(pc.is_null(parsed), pc.is_valid(strings))
    if not pc.any(missing).as_py():
        return parsed.cast(target)
    rows = pc.indices_nonzero(missing)
    try:
        rest = _coerce_all(strings.take(rows).to_pylist(), field.type, field.name, temporal)
    except BadValue as bad:
        raise BadValue(rows[bad.row].as_py(), bad.field, str(bad)) from None
    return pc.replace_with_mask(parsed.cast(target), missing, pa.array(rest, target))


def _coerce_all(
    values: list[str | None], dtype: DataType, name: str, temporal: TemporalFormats
) -> list[Any]:
    cache: dict[str, Any] = {}
    out = []
    for row, value in enumerate(values):
        if value is None:
            out.append(None)
            continue
        if value not in cache:
            try:
                cache[value] = _coerce_text(value, dtype, name, temporal)
            except FieldError as exc:
                raise BadValue(row, name, str(exc)) from None
        out.append(cache[value])
    return out


def _coerce_text(value: str, dtype: DataType, name: str, temporal: TemporalFormats) -> Any:
    if isinstance(dtype, ChoiceType):
        typed = _typed_text(value, temporal)
        return coerce(typed, dtype, temporal, name)
    return coerce(value, dtype, temporal, name)


def _typed_text(value: str, temporal: TemporalFormats) -> Any:
    """A CSV value as the Python value of the type NiFi infers for it (for a CHOICE)."""
    inferred = infer_text_type(value, temporal)
    if inferred is None:
        return value
    if inferred.name in ("int", "long"):
        return int(value)
    if inferred.name in ("float", "double"):
        return float(value)
    if inferred.name == "boolean":
        return value.lower() == "true"
    return value


def _raise_first(
    values: list[str | None], dtype: DataType, name: str, temporal: TemporalFormats
) -> None:
    _coerce_all(values, dtype, name, temporal)
