"""Numbers in a column's text, read and written as the per-FlowFile evaluation does, many at once.

``${amount:toDecimal():gt(250)}`` over a million distinct amounts spends its time in
:func:`~flowcore.expression._values.to_number`: trimming, two regular expressions and
``float`` or ``int`` per value. :func:`parse_numbers` reads the whole column in a few passes of
``pyarrow.compute`` instead (RE2 to tell the forms apart, Arrow's casts to read them):

* ``-?`` and 1 to 18 ASCII digits is a whole number, as ``to_number`` reads it: Arrow's cast to
  int64 reads the same digits (18 digits never leave a long);
* ``[-+]?``, digits with a point or an exponent (``12.50``, ``.5``, ``1e3``), at most 40
  characters, is a decimal: Arrow's cast to float64 (fast_float) and Python's ``float`` both
  round correctly, so they give the same double;
* text without a digit (of any script), ``NaN`` or ``Infinity`` in it is no number (null);
* anything else (blanks to trim, hex, ``NaN``, ``1.5d``, a 19-digit whole number, ``+7``) is
  given to ``to_number`` itself, one value at a time: there are few of those.

Text Arrow cannot hold (a lone surrogate) is read by ``to_number`` value by value. Either way
each value is what the per-FlowFile path makes of it, by construction or by the same function.

:func:`render_doubles` writes decimals as Java's ``Double.toString`` (the per-FlowFile
rendering, :func:`~flowcore.expression._values.java_double_to_string`): Python's ``repr`` of a
double is the same shortest digits, and between 1e-3 and 1e7 it is written the same way too, so
only the values outside that range take the slow function.

pyarrow is imported when a column is first parsed: ``import flowcore`` stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from flowcore.expression._values import to_number

__all__ = ["Numbers", "parse_numbers", "render_doubles"]

#: Whole numbers ``to_number`` reads as ``int`` reads them, never past a long: Arrow's int64 cast.
_WHOLE = r"^-?[0-9]{1,18}$"
#: Decimals with a point or an exponent: Arrow's float64 cast (with the length bound below).
_DECIMAL = (
    r"^[-+]?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?|[0-9]+[eE][-+]?[0-9]{1,4})$"
)
#: Either, for a column read only as decimals (``toDecimal``): a whole number's double is
#: its text's double, both correctly rounded from the same value.
_ANY_DECIMAL = r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?$"
#: The longest text read by Arrow's float cast: far inside what both parsers round exactly.
_DECIMAL_CHARS = 40
#: Text that may be a number in some form ``to_number`` reads (Python's ``\d`` and ``int`` take
#: any Unicode digit, ``"٣"`` is 3); the rest is none.
_MAYBE = r"\p{Nd}|NaN|Infinity"
#: The range where Java's ``Double.toString`` writes plain digits, as Python's ``repr`` does.
_PLAIN_LOW, _PLAIN_HIGH = 1e-3, 1e7


@attrs.frozen(eq=False)
class Numbers:
    """A number (or null) per entry: whole numbers as Java longs, decimals as doubles.

    Attributes:
        longs: the whole numbers, where ``decimal`` and ``null`` are both false (0 elsewhere).
        doubles: the decimals, where ``decimal`` is true and ``null`` false.
        decimal: which entries are decimals.
        null: which entries are null (no number).
    """

    longs: np.ndarray
    doubles: np.ndarray
    decimal: np.ndarray
    null: np.ndarray

    @classmethod
    def nulls(cls, count: int) -> Numbers:
        """*count* nulls."""
        return cls(
            np.zeros(count, dtype=np.int64),
            np.zeros(count, dtype=np.float64),
            np.zeros(count, dtype=bool),
            np.ones(count, dtype=bool),
        )

    def __len__(self) -> int:
        return len(self.null)

    def as_doubles(self) -> np.ndarray:
        """Each entry as a double (``float(number)``; nulls hold garbage)."""
        return np.where(self.decimal, self.doubles, self.longs.astype(np.float64))


def parse_numbers(texts: Sequence[str | None], *, decimals: bool = False) -> Numbers:
    """``to_number`` of each of *texts* (None stays null), read in whole-column passes.

    Args:
        texts: the values.
        decimals: the caller needs only each number's double (``toDecimal``): whole numbers
            may then be read as decimals, which is one pass fewer.
    """
    count = len(texts)
    try:
        import pyarrow as pa  # noqa: PLC0415 - only when a column is parsed: flowcore imports light

        array = pa.array(texts, pa.large_string())
    except (UnicodeError, ValueError, TypeError, OverflowError):  # a lone surrogate
        return _exactly(texts, np.arange(count), Numbers.nulls(count))
    return _parsed(array, count, decimals=decimals)


def _parsed(array: Any, count: int, *, decimals: bool) -> Numbers:
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    numbers = Numbers.nulls(count)
    rows = np.arange(count)  # where each of *array*'s texts lands
    if not decimals:
        whole = _mask(pc.match_substring_regex(array, _WHOLE))
        read = pc.cast(array.filter(pa.array(whole)), pa.int64()).to_numpy()
        numbers.longs[rows[whole]] = read
        numbers.null[rows[whole]] = False
        rows, array = rows[~whole], array.filter(pa.array(~whole))
    short = _mask(pc.less_equal(pc.utf8_length(array), _DECIMAL_CHARS))
    simple = short & _mask(pc.match_substring_regex(array, _ANY_DECIMAL if decimals else _DECIMAL))
    read = pc.cast(array.filter(pa.array(simple)), pa.float64()).to_numpy(zero_copy_only=False)
    if decimals:  # "-0" is the long 0, whose double is 0.0 (only "-0.0" is -0.0): read exactly
        simple[np.flatnonzero(simple)[(read == 0) & np.signbit(read)]] = False
        read = read[~((read == 0) & np.signbit(read))]
    numbers.doubles[rows[simple]] = read
    numbers.decimal[rows[simple]] = True
    numbers.null[rows[simple]] = False
    rows, array = rows[~simple], array.filter(pa.array(~simple))
    maybe = _mask(pc.match_substring_regex(array, _MAYBE))
    rows, array = rows[maybe], array.filter(pa.array(maybe))
    return _exactly(array.to_pylist(), rows, numbers, positions=False)


def _mask(result: Any) -> np.ndarray:
    """A boolean Arrow array as a numpy mask, nulls (null texts) false."""
    return np.asarray(result.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _exactly(
    texts: Sequence[str | None], rows: np.ndarray, numbers: Numbers, *, positions: bool = True
) -> Numbers:
    """``to_number`` itself for each text: *rows* say where each lands in *numbers*.

    With *positions*, ``texts[row]`` is read for each row; else ``texts`` are in rows' order.
    """
    rows_list = rows.tolist()
    values = [texts[row] for row in rows_list] if positions else texts
    for row, text in zip(rows_list, values, strict=True):
        number = None if text is None else to_number(text)
        if number is None:
            continue
        numbers.null[row] = False
        if isinstance(number, float):
            numbers.decimal[row] = True
            numbers.doubles[row] = number
        else:  # a long, as to_number reads no whole number past one
            numbers.longs[row] = number
    return numbers


def render_doubles(values: np.ndarray) -> list[str]:
    """Each double as Java's ``Double.toString`` writes it (``java_double_to_string``)."""
    texts = list(map(repr, values.tolist()))
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(values)
        plain = ((magnitude >= _PLAIN_LOW) & (magnitude < _PLAIN_HIGH)) | (values == 0)
    for row in np.flatnonzero(~plain).tolist():
        text = texts[row]
        texts[row] = _scientific(text) if text[-1].isdigit() else _NOT_FINITE[text]
    return texts


#: ``repr`` of the doubles that are not finite, and how Java writes them.
_NOT_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _scientific(text: str) -> str:
    """A finite double's ``repr`` rewritten in Java's ``d.dddE<exponent>``: the same digits.

    ``repr`` writes plain digits down to 1e-4 and up to 1e16 (``0.000125``, ``12345678.9``),
    and ``1.25e-05`` beyond; Java writes ``1.25E-4``, ``1.23456789E7``, ``1.25E-5``.
    """
    sign = "-" if text[0] == "-" else ""
    body = text.removeprefix("-")
    if "e" in body:
        mantissa, _, exponent = body.partition("e")
        power, digits = int(exponent), mantissa.replace(".", "")
    else:
        whole, _, fraction = body.partition(".")
        if whole != "0":
            power, digits = len(whole) - 1, whole + fraction
        else:
            significant = fraction.lstrip("0")
            power, digits = len(significant) - len(fraction) - 1, significant
    digits = digits.rstrip("0") or "0"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"
