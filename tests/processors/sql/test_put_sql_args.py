"""PutSQL's sql.args.N: JDBC types, NULLs, sql.args.N.format for dates, times and binary."""

from __future__ import annotations

import base64
import datetime
import random
import sqlite3
from pathlib import Path

import pytest

from tests.processors.sql.put_sql_runners import pg_runner, sql_args, sqlite_runner

UTC = datetime.UTC


def _millis(moment: datetime.datetime) -> str:
    """Epoch milliseconds of *moment* read as UTC (flowcore's zone), as text."""
    return str(int(moment.replace(tzinfo=UTC).timestamp() * 1000))


def test_timestamp_values_epoch_and_string(postgres) -> None:
    """NiFi's testUsingTimestampValuesEpochAndString: TIMESTAMP (93) as epoch millis (UTC,
    flowcore's zone) or as text."""
    runner = pg_runner(postgres, "id integer primary key, ts1 timestamp(3), ts2 timestamp(3)")
    epoch = _millis(datetime.datetime(2001, 1, 1, 0, 1, 1, 1000))
    runner.enqueue(
        "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (1, ?, ?)",
        sql_args((93, epoch), (93, "2002-02-02 12:02:02.002")),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts1::text, ts2::text from pg_persons") == [
        (1, "2001-01-01 00:01:01.001", "2002-02-02 12:02:02.002")
    ]


def test_date_values_epoch_and_string(postgres) -> None:
    """NiFi's testUsingDateValuesEpochAndString: DATE (91) as epoch millis or as text."""
    runner = pg_runner(postgres, "id integer primary key, ts1 date, ts2 date")
    epoch = _millis(datetime.datetime(2001, 1, 1))
    runner.enqueue(
        "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (1, ?, ?)",
        sql_args((91, epoch), (91, "2002-02-02")),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts1::text, ts2::text from pg_persons") == [
        (1, "2001-01-01", "2002-02-02")
    ]


def test_null_parameter_and_negative_type(postgres) -> None:
    """NiFi's testWithNullParameter and testUsingSqlDataTypesWithNegativeValues: a type
    without a value binds NULL; BIGINT (-5) binds a number."""
    runner = pg_runner(postgres, "id integer primary key, name varchar(100), code bigint")
    runner.enqueue(
        "INSERT INTO pg_persons (ID, NAME, CODE) VALUES (?, ?, ?)",
        sql_args((4, "1"), (12, "Mark"), (4, None)),
    )
    runner.enqueue(
        "INSERT INTO pg_persons (ID, NAME, CODE) VALUES (2, 'Mark', ?)", sql_args((-5, "84"))
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert postgres.execute("select * from pg_persons order by id") == [
        (1, "Mark", None),
        (2, "Mark", 84),
    ]


def test_bit_type(postgres) -> None:
    """NiFi's testBitType: BIT (-7) values 1, 0, -5, t, f, T, true, false bind a boolean."""
    runner = pg_runner(postgres, "id integer primary key, bt1 boolean")
    sql = "INSERT INTO pg_persons (ID, BT1) VALUES (?, ?)"
    for n, value in enumerate(["1", "0", "-5", "t", "f", "T", "true", "false"], start=1):
        runner.enqueue(sql, sql_args((4, str(n)), (-7, value)))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 8)
    rows = postgres.execute("select bt1 from pg_persons order by id")
    assert [r[0] for r in rows] == [True, False, False, True, False, True, True, False]


def test_timestamp_values_with_format_attribute(postgres) -> None:
    """NiFi's testUsingTimestampValuesWithFormatAttribute: ISO_LOCAL_DATE_TIME and a pattern
    with nanoseconds (PostgreSQL keeps microseconds: rounded, as pgjdbc's value would be)."""
    runner = pg_runner(postgres, "id integer primary key, ts1 timestamp(6), ts2 timestamp(6)")
    runner.enqueue(
        "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (1, ?, ?)",
        sql_args(
            (93, "2002-02-02T12:02:02"),
            (93, "2002-02-02T12:02:02.123456789"),
            f1="ISO_LOCAL_DATE_TIME",
            f2="yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS",
        ),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts1::text, ts2::text from pg_persons") == [
        (1, "2002-02-02 12:02:02", "2002-02-02 12:02:02.123457")
    ]


def test_date_time_values_with_format_attribute(postgres) -> None:
    """NiFi's testUsingDateTimeValuesWithFormatAttribute: TIME and DATE with ISO_LOCAL_TIME /
    ISO_LOCAL_DATE, as epoch millis without a format, and with HHmmssSSS / yyyyMMdd."""
    runner = pg_runner(postgres, "id integer primary key, ts1 time, ts2 date")
    sql = "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (?, ?, ?)"
    time_millis = _millis(datetime.datetime(1970, 1, 1, 2, 3, 4))
    date_millis = _millis(datetime.datetime(2002, 3, 4))
    for attributes in (
        sql_args(
            (4, "1"), (92, "02:03:04"), (91, "2002-03-04"), f2="ISO_LOCAL_TIME", f3="ISO_LOCAL_DATE"
        ),
        sql_args((4, "2"), (92, time_millis), (91, date_millis)),
        sql_args((4, "3"), (92, "020304000"), (91, "20020304"), f2="HHmmssSSS", f3="yyyyMMdd"),
    ):
        runner.enqueue(sql, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    rows = postgres.execute("select id, ts1::text, ts2::text from pg_persons order by id")
    assert rows == [(n, "02:03:04", "2002-03-04") for n in (1, 2, 3)]


def test_time_values_epoch_and_string(postgres) -> None:
    """NiFi's testUsingTimeValuesEpochAndString: TIME (92) as epoch millis of today (the time
    of day kept) and as text in the pattern HH:mm:ss."""
    runner = pg_runner(postgres, "id integer primary key, ts1 time, ts2 time")
    today = datetime.datetime.now(UTC).replace(tzinfo=None)
    epoch = _millis(datetime.datetime.combine(today.date(), datetime.time(0, 1, 2)))
    runner.enqueue(
        "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (1, ?, ?)",
        sql_args((92, epoch), (92, "12:03:04"), f2="HH:mm:ss"),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts1::text, ts2::text from pg_persons") == [
        (1, "00:01:02", "12:03:04")
    ]


def test_negative_epoch_millis(postgres) -> None:
    """NiFi's LONG_PATTERN (-?\\d{1,19}): epoch millis before 1970 bind a TIMESTAMP and a DATE
    (they failed: only unsigned digits were read as millis)."""
    runner = pg_runner(postgres, "id integer primary key, ts1 timestamp(3), ts2 date")
    runner.enqueue(
        "INSERT INTO pg_persons (ID, ts1, ts2) VALUES (1, ?, ?)",
        sql_args((93, "-86399999"), (91, "-86400000")),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts1::text, ts2::text from pg_persons") == [
        (1, "1969-12-31 00:00:00.001", "1969-12-31")
    ]


def _ascii(rng: random.Random, size: int) -> str:
    return "".join(chr(rng.randrange(32, 127)) for _ in range(size))


def test_binary_column_types(postgres) -> None:
    """NiFi's testBinaryColumnTypes on bytea: BINARY, VARBINARY and LONGVARBINARY (8, 50 and
    32,700 bytes) as ASCII text (no format, and ascii), hex and base64."""
    runner = pg_runner(postgres, "id integer primary key, bn1 bytea, bn2 bytea, bn3 bytea")
    sql = "INSERT INTO pg_persons (ID, bn1, bn2, bn3) VALUES (?, ?, ?, ?)"
    rng = random.Random(7)
    text = [_ascii(rng, size) for size in (8, 50, 32700)]
    raw = [rng.randbytes(size) for size in (8, 50, 32700)]
    encoded = [[v.hex() for v in raw], [base64.b64encode(v).decode() for v in raw]]
    types = (-2, -3, -4)
    expected = {1: [t.encode() for t in text], 2: [t.encode() for t in text], 3: raw, 4: raw}
    rows = {1: (text, None), 2: (text, "ascii"), 3: (encoded[0], "hex"), 4: (encoded[1], "base64")}
    for n, (values, fmt) in rows.items():
        formats = {f"f{i}": fmt for i in (2, 3, 4)} if fmt else {}
        pairs = [(kind, value) for kind, value in zip(types, values, strict=True)]
        runner.enqueue(sql, sql_args((4, str(n)), *pairs, **formats))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 4)
    got = postgres.execute("select id, bn1, bn2, bn3 from pg_persons order by id")
    assert {row[0]: [bytes(v) for v in row[1:]] for row in got} == expected


_BAD_VALUES = {
    "binary format": (sql_args((-3, "abc"), f1="utf8"), "formatter `utf8`"),
    "odd hex": (sql_args((-3, "abc"), f1="hex"), "Hexadecimal decoding failed"),
    "bad base64": (sql_args((-3, "a*bc"), f1="base64"), "Base64 decoding failed"),
    "date pattern": (sql_args((91, "2002-03"), f1="yyyyMMdd"), "does not match the pattern"),
    "no time": (sql_args((93, "2002-03-04"), f1="ISO_LOCAL_DATE"), "gives no time of day"),
    "tinyint range": (sql_args((-6, "300")), "out of range"),
    "spaced integer": (sql_args((4, " 5")), "For input string"),
    "epoch range": (sql_args((93, "9" * 19)), "cannot be converted to TIMESTAMP"),
}


@pytest.mark.parametrize("case", sorted(_BAD_VALUES))
def test_values_that_do_not_parse_go_to_failure(tmp_path: Path, case: str) -> None:
    """NiFi's setParameter errors: a value not in its sql.args.N.format (or outside its Java
    type) sends the FlowFile to failure, error.message naming the attribute and why."""
    attributes, reason = _BAD_VALUES[case]
    runner, _ = sqlite_runner(tmp_path, **{"Support Fragmented Transactions": "false"})
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (1, ?)", attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["error.message"]
    assert message.startswith("The value of the sql.args.1.value is ")
    assert reason in message


def test_boolean_and_integer_texts_as_java_reads_them(tmp_path: Path) -> None:
    """JdbcCommon.setParameter: BOOLEAN (16) is Boolean.parseBoolean ("1" is false), BIT (-7)
    also takes "1" and "t" ("yes" is false); integers take a sign, as Integer.parseInt."""
    runner, path = sqlite_runner(tmp_path)
    sql = "INSERT INTO PERSONS (ID, CODE) VALUES (?, ?)"
    cases = [(16, "TRUE"), (16, "1"), (16, "t"), (-7, "T"), (-7, "yes"), (4, "+5"), (-5, "-7")]
    for n, (kind, value) in enumerate(cases, start=1):
        runner.enqueue(sql, sql_args((4, str(n)), (kind, value)))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", len(cases))
    with sqlite3.connect(path) as db:
        codes = [r[0] for r in db.execute("select code from PERSONS order by id")]
    assert codes == [1, 0, 0, 1, 0, 5, -7]
