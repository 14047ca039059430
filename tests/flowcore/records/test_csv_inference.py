"""Tests for the CSV reader's column-wise schema inference (NiFi's CSVSchemaInference)."""

from __future__ import annotations

import datetime as dt
import io

import attrs
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import _csv_inference, _csv_values
from flowcore.records import schema as s
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.records.inference import infer_text_schema

_CELLS = st.sampled_from(
    [
        "",
        "0",
        "-0",
        "12",
        "-2147483649",
        "2147483647",
        "9223372036854775808",
        "1.5",
        "-1.5",
        ".5",
        "0.0",
        "1" + "0" * 40 + ".5",
        "true",
        "FALSE",
        "tru",
        "x",
        "é",
        "١٢",
        '"7"',
        '""',
        '"',
        "2024-01-02 03:04:05",
        " 2024-01-02 03:04:05",
        "2024-01-02",
        "01/02/2024",
        "03:04:05",
        "1700000000000",
        "NaN",
        "1e5",
        "+1",
    ]
)


@given(st.lists(st.lists(_CELLS, min_size=0, max_size=4), min_size=1, max_size=12))
@settings(max_examples=80, deadline=None)
def test_column_wise_inference_is_the_row_wise_inference(rows: list[list[str]]) -> None:
    """The reader's column-wise inference gives infer_text_schema's schema on tricky text."""
    for temporal in (
        CsvReaderOptions(),
        CsvReaderOptions(timestamp_format="yyyy-MM-dd HH:mm:ss", date_format="MM/dd/yyyy"),
        CsvReaderOptions(time_format="HH:mm:ss", date_format="yyyy-MM-dd"),
    ):
        options = attrs.evolve(temporal, trim_fields=False)
        dialect = options.dialect()
        columns = {f"f{i}": i for i in range(4)}
        cleaned = [
            [
                _csv_values.clean(row[i], dialect, trim_double_quote=options.trim_double_quote)
                if i < len(row)
                else None
                for i in columns.values()
            ]
            for row in rows
        ]
        expected = infer_text_schema(list(columns), cleaned, options.temporal)
        inferred = _csv_inference.infer_schema(
            columns,
            rows,
            dialect,
            trim_double_quote=options.trim_double_quote,
            temporal=options.temporal,
        )
        assert inferred == expected, rows


_EDGES = st.sampled_from(
    [
        *["", "5.", "-", ".", "-.5", "--1", "1-", "1.2.3", "7 ", " 7", "\t", "x1", "True"],
        *["nope", "é1", "2024-01-02 03:04:05", "-2024-01-02 03:04:05", "a2024-01-02 03:04:05"],
        "01/02/2024",
    ]
)


@given(st.lists(st.lists(_EDGES, min_size=1, max_size=3), min_size=1, max_size=10))
@settings(max_examples=60, deadline=None)
def test_column_wise_inference_skips_kernels_only_where_they_cannot_match(
    rows: list[list[str]],
) -> None:
    """Values that almost look like numbers or booleans get infer_text_schema's schema."""
    options = CsvReaderOptions(timestamp_format="yyyy-MM-dd HH:mm:ss", date_format="MM/dd/yyyy")
    dialect = options.dialect()
    columns = {f"f{i}": i for i in range(3)}
    cleaned = [
        [
            _csv_values.clean(row[i], dialect, trim_double_quote=True) if i < len(row) else None
            for i in columns.values()
        ]
        for row in rows
    ]
    expected = infer_text_schema(list(columns), cleaned, options.temporal)
    inferred = _csv_inference.infer_schema(
        columns, rows, dialect, trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows


_WHOLE = st.integers(-(2**63), 2**63 - 1).map(str)


_DECIMAL = st.tuples(st.integers(-(10**12), 10**12), st.integers(0, 10**6)).map(
    lambda p: f"{p[0]}.{p[1]}"
)


_NEAR_INT = st.sampled_from(["999999999", "-999999999", "1000000000", "2147483648", "0000000001"])


_NEAR_FLOAT = st.sampled_from(
    [
        *["0.0", "-0.0", ".0", "00.000", "-.5", "0.1", "9" * 36 + ".9", "." + "0" * 36 + "1"],
        *["0." + "0" * 44 + "1", "0." + "0" * 45 + "1", "1" * 39 + ".5", "4" + "0" * 38 + ".0"],
    ]
)


@given(
    st.lists(
        st.lists(st.one_of(_WHOLE, _DECIMAL, _NEAR_INT, _NEAR_FLOAT), min_size=2, max_size=2),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=100, deadline=None)
def test_columns_of_numbers_infer_as_row_wise(rows: list[list[str]]) -> None:
    """Columns of whole and decimal numbers (INT, FLOAT and DOUBLE without a cast when short)
    get infer_text_schema's INT, LONG, FLOAT and DOUBLE in the same order."""
    options = CsvReaderOptions()
    columns = {"a": 0, "b": 1}
    expected = infer_text_schema(list(columns), rows, options.temporal)
    inferred = _csv_inference.infer_schema(
        columns, rows, options.dialect(), trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows


_STAMPS = st.one_of(
    st.datetimes(dt.datetime(900, 1, 1), dt.datetime(9999, 12, 31)).map(
        lambda d: d.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0")
    ),
    st.sampled_from(["2024-02-30 10:00:00", "1700000000000", "", "2024-01-02 03:04:05 "]),
)


@given(st.lists(_STAMPS, min_size=1, max_size=10))
@settings(max_examples=50, deadline=None)
def test_an_inferred_timestamp_column_reads_as_with_its_schema_given(stamps: list[str]) -> None:
    """A timestamp column the inference parsed (its parse kept for the conversion) reads the
    same records as when the schema is given and the conversion parses the column itself."""
    options = CsvReaderOptions(
        first_line_is_header=True, timestamp_format="yyyy-MM-dd HH:mm:ss", trim_fields=False
    )
    data = ("stamp,n\n" + "".join(f"{v},1\n" for v in stamps)).encode()
    inferred = list(read_csv(io.BytesIO(data), options))
    schema = s.RecordSchema.from_arrow(inferred[0].schema)
    given = list(read_csv(io.BytesIO(data), options, schema))
    assert [b.to_pylist() for b in inferred] == [b.to_pylist() for b in given]
    if all(v[:1].isdigit() and len(v) == 19 and v[5:7] != "02" for v in stamps):
        assert inferred[0].schema.field("stamp").type == pa.timestamp("us")


_PATTERNS = [
    ("yyyy-MM-dd HH:mm:ss", "%Y-%m-%d %H:%M:%S"),
    ("MM.dd", "%m.%d"),
    ("yyyy.MM", "%Y.%m"),
    ("yyyyMMdd", "%Y%m%d"),
    ("HH:mm:ss", "%H:%M:%S"),
]


@given(
    st.sampled_from(_PATTERNS),
    st.lists(st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)), min_size=1),
    st.sampled_from(["timestamp_format", "date_format", "time_format"]),
)
@settings(max_examples=80, deadline=None)
def test_a_column_of_one_format_infers_as_row_wise(
    pattern: tuple[str, str], stamps: list[dt.datetime], which: str
) -> None:
    """A column all in the first configured format (whose values may also be numbers, as
    ``MM.dd``'s are) gets infer_text_schema's type."""
    options = CsvReaderOptions(**{which: pattern[0]})
    rows = [[stamp.strftime(pattern[1])] for stamp in stamps]
    expected = infer_text_schema(["a"], rows, options.temporal)
    inferred = _csv_inference.infer_schema(
        {"a": 0}, rows, options.dialect(), trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows
