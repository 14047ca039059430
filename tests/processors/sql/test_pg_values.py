"""PostgreSQL values as pgjdbc gives them (processors/sql/pg_values.py), checked against
PostgreSQL's own text."""

from __future__ import annotations

import pytest

from processors.sql.pg_values import array_text, interval_text, money, nifi_loaders

#: Intervals of every shape PostgreSQL's text takes (IntervalStyle postgres).
_INTERVALS = [
    "1 year 2 mons 3 days 04:05:06.5",
    "-1 hour",
    "1 day -02:00:00",
    "-1 year -2 mons +3 days -04:05:06.000001",
    "14 mons",
    "0",
    "100 hours 59 minutes 1.25 seconds",
    "-0.000001 seconds",
    "2 years 1 second",
]


def test_interval_text_in_pgjdbc_form() -> None:
    """PostgreSQL's interval text becomes PGInterval's; another IntervalStyle stays."""
    assert interval_text("1 year 2 mons 3 days 04:05:06.5") == (
        "1 years 2 mons 3 days 4 hours 5 mins 6.5 secs"
    )
    assert interval_text("-04:05:06") == "0 years 0 mons 0 days -4 hours -5 mins -6.0 secs"
    assert interval_text("P1Y2M") == "P1Y2M"
    assert interval_text("@ 1 year") == "@ 1 year"


def test_money_as_pgjdbc_reads_it() -> None:
    """Money's text as pgjdbc's double: symbol and separators dropped, sign kept."""
    assert money("$1,234.50") == 1234.5
    assert money("-$3.10") == -3.1
    assert money("($7.00)") == -7.0


def test_binary_and_text_intervals_agree(postgres) -> None:
    """An interval read in binary gives the text read's pgjdbc form, for every shape."""
    with postgres.connect() as connection:
        nifi_loaders(connection)
        values = ", ".join(f"'{v}'::interval" for v in _INTERVALS)
        text = connection.execute(f"select {values}").fetchone()
        binary = connection.cursor(binary=True).execute(f"select {values}").fetchone()
    assert text == binary
    assert text[1] == "0 years 0 mons 0 days -1 hours 0 mins 0.0 secs"
    assert text[6] == "0 years 0 mons 0 days 100 hours 59 mins 1.25 secs"


@pytest.mark.parametrize(
    "literal",
    [
        "array[1, null, 3]",
        "array['a b', '', 'NULL', null, 'x\"y\\z', '{}', 'é']",
        "array[[1.5, 2], [3, 4]]::float8[]",
        "array[1e20, 1e-7, 'Infinity', '-Infinity', 'NaN', 0.1]::float8[]",
        "array[2.50, -1, 1e-10]::numeric[]",
        "array[true, false, null]",
        "array['2024-01-01 10:00:00.5', '2024-02-29', '0001-01-01 00:00:00.000001']::timestamp[]",
        "array['2024-01-01', '1999-12-31']::date[]",
        "array['12:30', '23:59:59.25']::time[]",
        "array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']::uuid[]",
        "array['\\x00ff'::bytea, '']",
        "'{}'::int[]",
    ],
)
def test_array_text_is_postgres_text(postgres, literal: str) -> None:
    """An array psycopg loaded, written back as text, is PostgreSQL's own text of it."""
    ((loaded, text),) = postgres.execute(f"select {literal}, ({literal})::text")
    assert array_text(loaded) == text
