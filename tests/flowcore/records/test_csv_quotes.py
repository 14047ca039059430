"""Tests for Commons CSV's rule after a closing quote: the Arrow path's check and the re-read."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import _csv_quotes
from flowcore.records import schema as s
from flowcore.records.csv_format import CsvDialect
from flowcore.records.csv_reader import CsvReaderOptions, read_csv

#: Characters that make quoting hard: quotes, separators, escapes, line breaks, spaces.
_TRICKY = st.lists(
    st.sampled_from(['"', '"', ",", "a", "\\", "\n", "\r\n", "\r", " ", "é", '""', "\t"]),
    max_size=30,
).map("".join)
#: Values a writer quotes as needed (no lone CR: Python 3.11's writer leaves it unquoted).
_VALUE = st.text(st.sampled_from(list('ab ,"\n\té\u3000')), max_size=6)


def _suspect(data: bytes, dialect: CsvDialect, cuts: list[int]) -> bool:
    """The check's verdict on *data* given in blocks cut at *cuts*."""
    watch = _csv_quotes.QuoteWatch(dialect)
    at = 0
    for cut in [*sorted(cuts), len(data)]:
        if watch.suspect(data[at:cut]):
            return True
        at = cut
    return watch.finish()


def _refused_by_strict_csv(text: str, dialect: CsvDialect) -> bool:
    """Whether the strict ``csv`` module finds a closing quote followed by something else."""
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=dialect.delimiter,
        quotechar=dialect.quote or '"',
        escapechar=dialect.escape,
        strict=True,
    )
    try:
        for _ in reader:
            pass
    except csv.Error as exc:
        return "expected after" in str(exc)
    return False


@settings(max_examples=300, deadline=None)
@given(_TRICKY, st.sampled_from([None, "\\"]), st.lists(st.integers(0, 40), max_size=3))
def test_the_check_sees_every_closing_quote_commons_csv_refuses_whatever_the_blocks(
    text: str, escape: str | None, cuts: list[int]
) -> None:
    """Where a closing quote is followed by anything but a separator or a line end, the check
    says so, and its verdict does not depend on where the content's blocks are cut."""
    dialect = CsvDialect(escape=escape)
    data = text.encode()
    verdict = _suspect(data, dialect, [])
    assert _suspect(data, dialect, [c for c in cuts if c <= len(data)]) == verdict
    if _refused_by_strict_csv(text, dialect):
        assert verdict


@settings(max_examples=300, deadline=None)
@given(_TRICKY, st.integers(0, 1), st.booleans())
def test_the_bitwise_check_agrees_with_the_check_over_positions(
    text: str, inside: int, start_escaped: bool
) -> None:
    """The prefix-XOR check (content without escapes) gives the verdict and the parity the
    check over the quotes' positions gives, or leaves the block to it."""
    data = text.encode() + b"\n"
    dialect = CsvDialect()
    array = np.frombuffer(data, np.uint8)
    bits, by_positions = _csv_quotes.QuoteWatch(dialect), _csv_quotes.QuoteWatch(dialect)
    verdict = bits._by_bits(array, inside, last=False, start_escaped=start_escaped)
    expected = by_positions._by_positions(
        array, None, inside, last=False, start_escaped=start_escaped
    )
    assert bits._inside == by_positions._inside
    if verdict is not None:
        assert verdict == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_VALUE, min_size=2, max_size=2), min_size=1, max_size=6),
    st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_valid_csv_is_never_refused_and_reads_as_the_csv_module_reads_it(
    rows: list[list[str]], quoting: int, terminator: str
) -> None:
    """CSV as a writer quotes it (doubled quotes, separators and line breaks inside quoted
    values) never makes the check refuse, and reads as Python's csv module reads it."""
    out = io.StringIO()
    csv.writer(out, quoting=quoting, lineterminator=terminator).writerows(rows)
    data = out.getvalue().encode()
    options = CsvReaderOptions(csv_format="rfc-4180", trim_double_quote=False)
    assert not _suspect(data, options.dialect(), [len(data) // 2])
    schema = s.RecordSchema.of({"a": s.STRING, "b": s.STRING})
    got = [r for b in read_csv(io.BytesIO(data), options, schema) for r in b.to_pylist()]
    expected = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert got == [{"a": a or None, "b": b or None} for a, b in expected]


@pytest.mark.parametrize(
    ("lines", "row"),
    [
        (['1,"a" \t,b\n'], ["1", "a", "b"]),
        (['1,"a\n', 'b"  \r\n'], ["1", "a\nb"]),
        (['1,"a"\u3000'], ["1", "a"]),
        (['1,"a""b" ,"c\\"d"\n'], ["1", 'a"b', 'c"d']),
    ],
)
def test_reread_skips_whitespace_after_a_closing_quote(lines: list[str], row: list[str]) -> None:
    """A record the strict csv module refused reads as Commons CSV reads it: the whitespace
    after a closing quote is not part of the value."""
    dialect = CsvDialect(escape="\\")
    assert _csv_quotes.reread(lines[:1], iter(lines[1:]), dialect, 1) == row


def test_reread_names_the_line_of_the_character_and_of_the_quoted_value() -> None:
    """The error names the line of the refused character and the line the value opened on."""
    with pytest.raises(_csv_quotes.AfterQuote, match=r"at line 3: the value quoted from line 2"):
        _csv_quotes.reread(['1,"a\n'], iter(['b"x\n']), CsvDialect(), 2)
    with pytest.raises(_csv_quotes.Unfinished, match="quoted on line 2 has no closing"):
        _csv_quotes.reread(['1,"a\n'], iter([]), CsvDialect(), 2)
