"""Columns: one attribute's values for every FlowFile of a batch, without a string each.

Two kinds cover what flows make. An :class:`IntColumn` holds whole numbers (``fragment.index``,
a counter, the result of ``mod``) as an int64 array and renders each as its decimal text on
demand. A :class:`TextColumn` is dictionary-encoded: an int32 code per FlowFile into a tuple of
distinct values, so a column of eight group names over a million FlowFiles is eight strings and
four megabytes of codes. ``None`` among the values means "this FlowFile has no such attribute".

Every operation (cutting, taking by index, concatenating, grouping, encoding) works on the
arrays; a Python string is made only when a single value is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

__all__ = [
    "Column",
    "IntColumn",
    "TextColumn",
    "apply_row",
    "column_from_wire",
    "column_of",
    "concat_columns",
    "constant_column",
]

_INT64 = np.dtype("<i8")
_CODES = np.dtype("<i4")
#: Dictionaries longer than this are stored without their unused values.
_COMPACT_ABOVE = 16
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _frozen_array(values: Any, dtype: np.dtype) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=dtype)
    if array.flags.writeable and array.base is None:
        array.flags.writeable = False
    return array


@attrs.frozen(eq=False)
class IntColumn:
    """Whole numbers, one per FlowFile; each one's attribute value is its decimal text."""

    numbers: np.ndarray = attrs.field(converter=lambda v: _frozen_array(v, _INT64))

    def __len__(self) -> int:
        return len(self.numbers)

    def value(self, index: int) -> str:
        """FlowFile *index*'s value."""
        return str(int(self.numbers[index]))

    def values(self) -> list[str | None]:
        """Every value, in order."""
        return [str(n) for n in self.numbers.tolist()]

    def cut(self, start: int, stop: int) -> IntColumn:
        """Values ``start .. stop-1``."""
        return IntColumn(self.numbers[start:stop])

    def take(self, indices: np.ndarray) -> IntColumn:
        """The values at *indices*, in their order."""
        return IntColumn(self.numbers[indices])

    def encoded(self) -> tuple[np.ndarray, Sequence[str | None]]:
        """``(codes, distinct values)``: value *i* is ``values[codes[i]]``."""
        distinct, codes = np.unique(self.numbers, return_inverse=True)
        return codes.astype(_CODES), _Decimals(distinct)

    def to_wire(self) -> list[Any]:
        """The column as stored: a tag and its little-endian bytes.

        Numbers moving by equal steps (a fragment index, a constant) are stored as a tag, the
        first, the step and the count instead.
        """
        numbers = self.numbers
        if len(numbers) > 1:
            first, step = int(numbers[0]), int(numbers[1]) - int(numbers[0])
            if _LONG_MIN <= step <= _LONG_MAX and np.array_equal(
                numbers, first + step * np.arange(len(numbers), dtype=_INT64)
            ):
                return ["r", first, step, len(numbers)]
        return ["i", numbers.tobytes()]

    def equals(self, other: Column) -> np.ndarray:
        """A mask: where this column's value is *other*'s."""
        if isinstance(other, IntColumn):
            return self.numbers == other.numbers
        return _text_equals(self, other)


@attrs.frozen(eq=False)
class TextColumn:
    """Text values, dictionary-encoded; a ``None`` value means the attribute is absent."""

    codes: np.ndarray = attrs.field(converter=lambda v: _frozen_array(v, _CODES))
    dictionary: tuple[str | None, ...] = attrs.field(converter=tuple)

    def __len__(self) -> int:
        return len(self.codes)

    def value(self, index: int) -> str | None:
        """FlowFile *index*'s value (None: it has no such attribute)."""
        return self.dictionary[self.codes[index]]

    def values(self) -> list[str | None]:
        """Every value, in order."""
        dictionary = self.dictionary
        return [dictionary[c] for c in self.codes.tolist()]

    def cut(self, start: int, stop: int) -> TextColumn:
        """Values ``start .. stop-1`` (the dictionary is shared, unused values included)."""
        return TextColumn(self.codes[start:stop], self.dictionary)

    def take(self, indices: np.ndarray) -> TextColumn:
        """The values at *indices*, in their order."""
        return TextColumn(self.codes[indices], self.dictionary)

    def encoded(self) -> tuple[np.ndarray, tuple[str | None, ...]]:
        """``(codes, distinct values)``: value *i* is ``values[codes[i]]``."""
        return self.codes, self.dictionary

    def to_wire(self) -> list[Any]:
        """The column as stored: a tag, the code bytes and the dictionary.

        The dictionary leaves out the values no FlowFile uses: a cut of a column of distinct
        values keeps only its own.
        """
        codes, dictionary = self.codes, self.dictionary
        if len(dictionary) > _COMPACT_ABOVE:
            used = np.bincount(codes, minlength=len(dictionary)) > 0
            if not used.all():
                remap = np.cumsum(used, dtype=_CODES) - 1
                codes = remap[codes]
                dictionary = tuple(v for v, u in zip(dictionary, used.tolist(), strict=True) if u)
        return ["t", codes.tobytes(), list(dictionary)]

    def equals(self, other: Column) -> np.ndarray:
        """A mask: where this column's value is *other*'s."""
        return _text_equals(self, other)


class _Decimals(Sequence[str]):
    """Whole numbers read as their decimal texts, each made when asked for."""

    def __init__(self, numbers: np.ndarray) -> None:
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._numbers)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [str(n) for n in self._numbers[index].tolist()]
        return str(int(self._numbers[index]))


Column = IntColumn | TextColumn


def _text_equals(left: Column, right: Column) -> np.ndarray:
    left_codes, left_values = left.encoded()
    right_codes, right_values = right.encoded()
    table: dict[str | None, int] = {}
    left_map = np.array([table.setdefault(v, len(table)) for v in left_values], dtype=_CODES)
    right_map = np.array([table.setdefault(v, len(table)) for v in right_values], dtype=_CODES)
    return left_map[left_codes] == right_map[right_codes]


def apply_row(values: dict[str, str | None], columns: Mapping[str, Column], index: int) -> None:
    """Set each column's value at *index* in the attribute map *values* (None: remove it)."""
    for name, column in columns.items():
        value = column.value(index)
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value


def constant_column(value: str | None, count: int) -> TextColumn:
    """*value* for each of *count* FlowFiles."""
    return TextColumn(np.zeros(count, dtype=_CODES), (value,))


def column_of(values: Sequence[str | None]) -> Column:
    """A column holding *values*: whole numbers in canonical form as an :class:`IntColumn`."""
    if values and all(v is not None and _canonical_int(v) for v in values):
        return IntColumn(np.array([int(v) for v in values], dtype=_INT64))  # type: ignore[arg-type]
    table: dict[str | None, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), _CODES, len(values))
    return TextColumn(codes, tuple(table))


def _canonical_int(text: str) -> bool:
    """Whether *text* is an int64 written as ``str(int)`` writes it."""
    try:
        number = int(text)
    except ValueError:
        return False
    return str(number) == text and -(1 << 63) <= number < (1 << 63)


def concat_columns(columns: Sequence[Column]) -> Column:
    """The columns one after the other."""
    if all(isinstance(c, IntColumn) for c in columns):
        return IntColumn(np.concatenate([c.numbers for c in columns]))  # type: ignore[union-attr]
    table: dict[str | None, int] = {}
    parts = []
    for column in columns:
        codes, values = column.encoded()
        remap = np.array([table.setdefault(v, len(table)) for v in values], dtype=_CODES)
        parts.append(remap[codes] if len(remap) else codes)
    return TextColumn(np.concatenate(parts) if parts else np.zeros(0, _CODES), tuple(table))


def column_from_wire(wire: Sequence[Any]) -> Column:
    """The inverse of a column's ``to_wire``."""
    if wire[0] == "i":
        return IntColumn(np.frombuffer(wire[1], dtype=_INT64))
    if wire[0] == "r":
        _, first, step, count = wire
        return IntColumn(first + step * np.arange(count, dtype=_INT64))
    return TextColumn(np.frombuffer(wire[1], dtype=_CODES), tuple(wire[2]))
