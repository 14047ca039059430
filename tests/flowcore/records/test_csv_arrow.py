"""Tests for the CSV reader's Arrow split: the same batches and failures as the Python path."""

from __future__ import annotations

import io

import attrs
import pyarrow as pa
import pyarrow.csv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore.records import _csv_arrow, csv_reader
from flowcore.records import schema as s
from flowcore.records.csv_reader import CsvReaderOptions, read_csv

#: Characters that make CSV hard: separators, quotes, escapes, line breaks, spaces, MySQL's \N.
_CHARS = st.sampled_from([*list('a1,,"\\\n\r \tNnté.|'), "\r\n", '""', "\\N", "\\n", "\\,"])
_CONTENT = st.builds(
    lambda bom, parts: ("\ufeff" if bom else "") + "".join(parts),
    st.booleans(),
    st.lists(_CHARS, max_size=40),
)
_OPTIONS = st.builds(
    CsvReaderOptions,
    csv_format=st.sampled_from(
        ["custom", "rfc-4180", "excel", "mysql", "informix-unload", "informix-unload-csv"]
    ),
    escape_character=st.sampled_from(["\\", None]),
    null_string=st.sampled_from([None, "N"]),
    trim_fields=st.booleans(),
    first_line_is_header=st.booleans(),
    trim_double_quote=st.booleans(),
    batch_size=st.integers(1, 4),
    inference_sample=st.integers(1, 6),
)
_SCHEMA = st.sampled_from(
    [None, s.RecordSchema.of({"a": s.STRING, "b": s.INT}), s.RecordSchema.of({"f": s.STRING})]
)


class _Trickle(io.RawIOBase):
    """A content that gives at most *step* bytes a read (escapes fall across reads)."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = memoryview(data)
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self._step, len(self._data))
        buffer[:size] = self._data[:size]
        self._data = self._data[size:]
        return size


def _outcome(batches: object) -> tuple[list[pa.RecordBatch], str | None]:
    """The batches an iterator gives, and the failure that ends it (type and message)."""
    got: list[pa.RecordBatch] = []
    try:
        for batch in batches:  # type: ignore[attr-defined]
            got.append(batch)
    except Exception as exc:
        return got, f"{type(exc).__name__}: {exc}"
    return got, None


def _both(data: bytes, options: CsvReaderOptions, schema: s.RecordSchema | None, step: int):
    fast = _outcome(read_csv(io.BufferedReader(_Trickle(data, step)), options, schema))
    python = _outcome(
        csv_reader._read_python(
            io.BytesIO(data), options, options.dialect(), schema, csv_reader._Progress()
        )
    )
    return fast, python


def _assert_same(fast, python) -> None:
    (fast_batches, fast_error), (python_batches, python_error) = fast, python
    assert fast_error == python_error
    assert len(fast_batches) == len(python_batches)
    for mine, theirs in zip(fast_batches, python_batches, strict=True):
        assert mine.schema == theirs.schema
        assert mine.equals(theirs), (mine.to_pylist(), theirs.to_pylist())


_CELL = st.lists(
    st.sampled_from(
        [
            "a",
            "1",
            "2.5",
            "true",
            " ",
            "N",
            "é",
            '""',
            '"x,\ny"',
            '"a""b"',
            "\\N",
            "\\,",
            "\\t",
            "\\",
            '"',
            "|",
            "\t",
        ]
    ),
    max_size=3,
).map("".join)


@st.composite
def _table(draw: st.DrawFn) -> tuple[CsvReaderOptions, str]:
    """Options and a content of rows as wide as each other (mostly), in the options' format."""
    options = draw(_OPTIONS)
    width = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(_CELL, min_size=width, max_size=width), max_size=8))
    ends = st.sampled_from(["\n", "\r\n", "\r"])
    delimiter = options.dialect().delimiter
    text = "".join(delimiter.join(row) + draw(ends) for row in rows)
    return options, ("\ufeff" if draw(st.booleans()) else "") + text


@given(_table(), _SCHEMA, st.integers(1, 8))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_arrow_split_of_tables_gives_the_python_paths_batches_and_failures(
    table: tuple[CsvReaderOptions, str], schema: s.RecordSchema | None, step: int
) -> None:
    """On rows of tricky values (quoted separators and line breaks, doubled quotes, escapes,
    empty and null values, a BOM, CRLF and CR) the reader gives the Python path's batches."""
    options, text = table
    _assert_same(*_both(text.encode(), options, schema, step))


@given(_CONTENT, _OPTIONS, _SCHEMA, st.integers(1, 8))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_arrow_split_gives_the_python_paths_batches_and_failures(
    text: str, options: CsvReaderOptions, schema: s.RecordSchema | None, step: int
) -> None:
    """On tricky text (quotes, escapes, line breaks, empty and null values, ragged rows, a BOM,
    CRLF) the reader gives the Python path's batches and its failure, byte for byte."""
    _assert_same(*_both(text.encode(), options, schema, step))


@given(
    st.lists(
        st.lists(
            st.sampled_from(["x", "1", "", '"q,\n"', "\\\\", "\\t", "N", " y "]),
            min_size=2,
            max_size=2,
        ),
        min_size=1,
        max_size=30,
    ),
    st.integers(0, 40),
    st.sampled_from(["", "1,2,3", "7", '"open']),
)
@settings(max_examples=60, deadline=None)
def test_a_late_refusal_falls_back_without_losing_or_repeating_records(
    rows: list[list[str]], where: int, odd: str
) -> None:
    """Rows Arrow splits, then one it refuses (ragged, an open quote): the records given before
    the refusal are not given again and the rest come from the Python path."""
    lines = [",".join(r) for r in rows]
    lines.insert(min(where, len(lines)), odd)
    data = ("a,b\n" + "\n".join(lines) + "\n").encode()
    options = CsvReaderOptions(first_line_is_header=True, batch_size=2, inference_sample=3)
    _assert_same(*_both(data, options, None, 5))


@given(_table(), _SCHEMA, st.sampled_from([1, 40, 300, 1 << 20]), st.integers(1, 5))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_records_are_the_same_whatever_the_batch_budget(
    table: tuple[CsvReaderOptions, str], schema: s.RecordSchema | None, budget: int, repeat: int
) -> None:
    """Batches cut by bytes (Arrow blocks of 64 bytes here) give the same records and failure."""
    options, text = table
    data = (text * repeat).encode()
    saved = _csv_arrow.BLOCK_SIZE
    _csv_arrow.BLOCK_SIZE = 64
    try:
        outcomes = [
            _outcome(read_csv(io.BytesIO(data), attrs.evolve(options, **sizes), schema))
            for sizes in ({"batch_bytes": budget, "batch_size": 1 << 16}, {"batch_bytes": 1 << 30})
        ]
    finally:
        _csv_arrow.BLOCK_SIZE = saved
    (budgeted, budget_error), (whole, whole_error) = outcomes
    assert budget_error == whole_error
    if whole:
        mine, theirs = pa.Table.from_batches(budgeted), pa.Table.from_batches(whole)
        assert mine.schema == theirs.schema
        assert mine.equals(theirs), (mine.to_pylist(), theirs.to_pylist())
    else:
        assert not budgeted


def test_common_content_is_split_by_arrow() -> None:
    """A plain CSV with quotes, escapes and quoted line breaks is split by Arrow, not refused."""
    data = b'id,name\n1,"a ""b"", c"\n2,x\\,y\n3,"two\nlines"\n'
    options = CsvReaderOptions(first_line_is_header=True)
    split = _csv_arrow.ArrowSplit(
        io.BytesIO(data), options.dialect(), first_line_is_header=True, batch_size=10
    )
    (chunk,) = list(split.chunks())
    assert split.header == ["id", "name"]
    assert [c.to_pylist() for c in chunk] == [
        ["1", "2", "3"],
        ['a "b", c', "x,y", "two\nlines"],
    ]


@pytest.mark.parametrize("rows", [0, 20_000])  # the content's end in Arrow's first block, a later
@pytest.mark.parametrize(
    ("end", "open_"),
    [
        (b'1,"x', True),
        (b'1,"x""', True),
        (b'1,"x\n', True),
        (b'1,"x\n2,y\r\n', True),
        (b'1,"', True),
        (b'1,"x\\"y', True),
        (b'1,"x"\n', False),
        (b'1,"x"', False),
        (b'1,"x"""', False),
        (b'1,""', False),
        (b"1,x", False),
        (b'1,x""', False),
        (b'1,"x,""y""\n"\n', False),
        (b'"1","a ""b"", c"\r\n', False),
    ],
)
def test_arrow_refuses_a_content_that_ends_inside_a_quoted_value(
    end: bytes, open_: bool, rows: int
) -> None:
    """Arrow closes a quoted value the content's end cuts; its split refuses such a content (the
    Python path gives NiFi's error) and keeps the contents whose last value is closed."""
    data = b"a,b\n" + b"".join(b'%d,"v %d"\n' % (i, i) for i in range(rows)) + end
    split = _csv_arrow.ArrowSplit(
        io.BytesIO(data), CsvReaderOptions().dialect(), first_line_is_header=True, batch_size=64
    )
    if open_:
        with pytest.raises(_csv_arrow.SplitFailed, match="may end inside a quoted value"):
            list(split.chunks())
    else:
        assert sum(len(chunk[0]) for chunk in split.chunks()) == rows + 1


@pytest.mark.parametrize(
    ("options", "usable"),
    [
        (CsvReaderOptions(), True),
        (CsvReaderOptions(csv_format="mysql"), True),
        (CsvReaderOptions(comment_marker="#"), False),
        (CsvReaderOptions(csv_format="tdf"), False),
        (CsvReaderOptions(character_set="ISO-8859-1"), False),
        (CsvReaderOptions(value_separator="é"), False),
        (CsvReaderOptions(value_separator='"'), False),
    ],
)
def test_arrow_splits_only_where_its_split_is_the_python_paths(
    options: CsvReaderOptions, usable: bool
) -> None:
    """Comment markers, surrounding-space skipping, other character sets and non-ASCII or
    clashing characters keep the Python path."""
    assert _csv_arrow.usable(options.dialect(), options.character_set) is usable


def test_a_wide_content_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """More columns than Arrow's split types as strings: the Python path reads them."""
    monkeypatch.setattr(_csv_arrow, "MAX_COLUMNS", 2)
    typed = pa.csv.ConvertOptions(column_types={"f0": pa.string(), "f1": pa.string()})
    monkeypatch.setattr(_csv_arrow, "_STRINGS", typed)
    width = 3
    data = (",".join(f"c{i}" for i in range(width)) + "\n" + ",".join("1" * width) + "\n").encode()
    options = CsvReaderOptions(first_line_is_header=True)
    (batch,) = list(read_csv(io.BytesIO(data), options))
    assert batch.num_columns == width
    assert batch.column(0).to_pylist() == [1]


@pytest.mark.parametrize("budget", [1, 1 << 30])
def test_an_escaped_carriage_return_is_read_as_the_python_path_reads_it(budget: int) -> None:
    """An escape before a CR byte, where Arrow's 64-byte blocks cut around it, keeps every row
    (pyarrow joined ``zz`` to the row before, or dropped a row: the Python path reads it)."""
    data = b"ab\\\r\nzz\nc\n" * 40
    options = CsvReaderOptions(
        csv_format="mysql", escape_character="\\", first_line_is_header=False, batch_size=1 << 16
    )
    saved = _csv_arrow.BLOCK_SIZE
    _csv_arrow.BLOCK_SIZE = 64
    try:
        fast = _outcome(read_csv(io.BytesIO(data), attrs.evolve(options, batch_bytes=budget)))
    finally:
        _csv_arrow.BLOCK_SIZE = saved
    rows = [r for batch in fast[0] for r in batch.column(0).to_pylist()]
    assert fast[1] is None
    assert rows == ["ab\r", "zz", "c"] * 40
