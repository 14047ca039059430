"""QueryDatabaseTable's reads (processors/sql/query_base.py) on PostgreSQL: binary or text rows
give the same records, streamed reads end cleanly, Set Auto Commit as NiFi's."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors.record_services import JsonRecordSetWriter, ParquetRecordSetWriter
from processors.sql import query_base
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch
from processors.sql.query_database_table import QueryDatabaseTable
from processors.sql.query_database_table_record import QueryDatabaseTableRecord

#: One column per type of BINARY_SAME_TYPES: (name, SQL type, OID, literals of its rows).
_TYPES = [
    ("b", "bool", 16, ["true", "false"]),
    ("by", "bytea", 17, ["'\\x00ff10'", "''"]),
    ("nm", "name", 19, ["'a name'", "''"]),
    ("i8", "bigint", 20, ["-9223372036854775808", "9223372036854775807"]),
    ("i2", "smallint", 21, ["-32768", "7"]),
    ("i4", "int", 23, ["-2147483648", "2147483647"]),
    ("t", "text", 25, ["'é\u4e2d\\t'", "''"]),
    ("o", "oid", 26, ["4294967295", "0"]),
    ("j", "json", 114, ['\'{"a": [1, 2.5, null], "b": "x"}\'', "'null'"]),
    ("f8", "double precision", 701, ["0.1", "'-Infinity'"]),
    ("ip", "inet", 869, ["'10.1.2.3/8'", "'::1'"]),
    ("ia", "int[]", 1007, ["'{1,NULL,3}'", "'{}'"]),
    ("ta", "text[]", 1009, ["'{a,\"b c\",NULL}'", "'{}'"]),
    ("ch", "char(3)", 1042, ["'ab'", "''"]),
    ("vc", "varchar(8)", 1043, ["'varchar'", "''"]),
    ("d", "date", 1082, ["'2024-02-29'", "'0001-01-01'"]),
    ("tm", "time", 1083, ["'23:59:59.125'", "'00:00'"]),
    ("ts", "timestamp", 1114, ["'2024-02-29 12:30:01.123'", "'1900-01-01'"]),
    ("tz", "timestamptz", 1184, ["'2024-02-29 12:30:01.5+05:30'", "'1970-01-01Z'"]),
    ("iv", "interval", 1186, ["'1 year 2 days 03:04:05.6'", "'-1 hour'"]),
    ("tt", "timetz", 1266, ["'12:30:00+02'", "'00:00Z'"]),
    ("n", "numeric(12,3)", 1700, ["-123456789.125", "0.001"]),  # NaN: no Arrow decimal
    ("u", "uuid", 2950, ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "gen_random_uuid()"]),
    ("jb", "jsonb", 3802, ['\'{"k": {"n": 1e3}}\'', "'[]'"]),
]


def _table(postgres, name: str, columns: list[tuple[str, str, list[str]]], rows: int) -> None:
    """*name* with an ``id`` and *columns*; row i takes each column's i-th literal, the last
    row is all NULL."""
    postgres.execute(f"drop table if exists {name}")
    postgres.execute(
        f"create table {name} (id int primary key, "
        + ", ".join(f"{c} {sql}" for c, sql, _ in columns)
        + ")"
    )
    for index in range(rows):
        values = [literals[index] for _, _, literals in columns]
        postgres.execute(f"insert into {name} values ({index}, {', '.join(values)})")
    postgres.execute(f"insert into {name} (id) values ({rows})")


def _runner(
    postgres, table: str, writer: Any, pool: dict[str, str] | None = None, **props: str
) -> TestRunner:
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": table,
                "Maximum-value Columns": "id",
                "Record Writer": "writer",
                **props,
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp",
            **{
                "Database Connection URL": postgres.jdbc_url,
                "Database User": postgres.user,
                **(pool or {}),
            },
        )
    )
    runner.add_service(writer)
    return runner


def _read(
    postgres, table: str, writer_type: type, writer_props: dict | None = None, **props: str
) -> list[tuple[bytes, dict]]:
    """Each FlowFile's content and attributes (less uuid and filename) from a run over *table*."""
    writer = writer_type("writer", **(writer_props or {}))
    runner = _runner(postgres, table, writer, **{"Fetch Size": "2", **props})
    runner.run()
    return [
        (out.content, {k: v for k, v in out.attributes.items() if k not in ("uuid", "filename")})
        for out in runner.flowfiles_for("success")
    ]


@pytest.fixture
def opened(monkeypatch) -> list[tuple[bool, bool]]:
    """(binary, the connection in autocommit) of every stream a read opens."""
    streams: list[tuple[bool, bool]] = []
    streamed = query_base._Streamed

    class Recording(streamed):
        def __init__(self, cursor: Any, *args: Any, binary: bool, **kwargs: Any) -> None:
            streams.append((binary, cursor.connection.autocommit))
            super().__init__(cursor, *args, binary=binary, **kwargs)

    monkeypatch.setattr(query_base, "_Streamed", Recording)
    return streams


def test_binary_types_load_as_their_text(postgres) -> None:
    """psycopg loads every type of BINARY_SAME_TYPES, edge values and NULL included, into the
    same Python values from binary results as from text."""
    assert {oid for _, _, oid, _ in _TYPES} == query_base.BINARY_SAME_TYPES
    _table(postgres, "every_type", [(c, sql, lit) for c, sql, _, lit in _TYPES], 2)
    with postgres.connect() as connection:
        text = connection.cursor()
        text.execute("select * from every_type order by id")
        binary = connection.cursor(binary=True)
        binary.execute("select * from every_type order by id")
        assert [c.type_code for c in binary.description[1:]] == [oid for *_, oid, _ in _TYPES]
        for by_text, by_binary in zip(text.fetchall(), binary.fetchall(), strict=True):
            names = ("id", *(t[0] for t in _TYPES))
            for name, left, right in zip(names, by_text, by_binary, strict=True):
                assert type(left) is type(right), name
                assert repr(left) == repr(right), name


@pytest.mark.parametrize("writer_type", [JsonRecordSetWriter, ParquetRecordSetWriter])
def test_every_type_writes_the_same_records_binary_or_text(
    postgres, monkeypatch, opened, writer_type
) -> None:
    """A table of every binary-safe type is read as binary, and its records and attributes are
    those of a read as text (the set emptied)."""
    _table(postgres, "every_type", [(c, sql, lit) for c, sql, _, lit in _TYPES], 2)
    # The edge values hold infinities: NiFi's JSON writer takes them with scientific notation.
    props = {"Allow Scientific Notation": "true"} if writer_type is JsonRecordSetWriter else {}
    as_binary = _read(postgres, "every_type", writer_type, props)
    monkeypatch.setattr(query_base, "BINARY_SAME_TYPES", frozenset())
    as_text = _read(postgres, "every_type", writer_type, props)
    assert [binary for binary, _ in opened] == [True, False]
    assert as_binary == as_text
    assert as_binary[0][1]["record.count"] == "3"


def test_a_type_without_a_binary_loader_reads_as_text(postgres, opened) -> None:
    """An enum, xml, money or real column makes the whole read text: the values stay strings,
    money pgjdbc's double, and real its shortest decimal."""
    postgres.execute("drop table if exists moods")
    postgres.execute("drop type if exists mood")
    postgres.execute("create type mood as enum ('sad', 'ok')")
    columns = [
        ("m", "mood", ["'ok'"]),
        ("x", "xml", ["'<a/>'"]),
        ("mo", "money", ["12.5"]),
        ("r", "real", ["1.5e-7"]),
    ]
    _table(postgres, "moods", columns, 1)
    ((content, _),) = _read(postgres, "moods", JsonRecordSetWriter)
    assert [binary for binary, _ in opened] == [False]
    assert json.loads(content)[0] == {"id": 0, "m": "ok", "x": "<a/>", "mo": 12.5, "r": 1.5e-7}


def test_fragments_end_the_stream_and_the_connection_goes_back_as_it_was(postgres) -> None:
    """Maximum Number of Fragments stops a streamed read part way (the rest cancelled); the
    pool's connection comes back out of autocommit and serves the next read."""
    postgres.execute("drop table if exists many")
    postgres.execute("create table many (id int primary key)")
    postgres.execute("insert into many select generate_series(0, 999)")
    runner = _runner(
        postgres,
        "many",
        JsonRecordSetWriter("writer"),
        **{
            "Fetch Size": "3",
            "Max Rows Per Flow File": "4",
            "Maximum Number of Fragments": "2",
        },
    )
    runner.run(stop_on_finish=False)
    outs = runner.flowfiles_for("success")
    assert [[r["id"] for r in json.loads(o.content)] for o in outs] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [o.attributes["fragment.count"] for o in outs] == ["2", "2"]
    raw = runner.controller_service("dbcp").engine().raw_connection()
    try:
        assert raw.driver_connection.autocommit is False
        cursor = raw.cursor()
        cursor.execute("select count(*) from many")
        assert cursor.fetchone() == (1000,)
    finally:
        raw.close()
        runner.stop()


def test_fragments_ending_with_the_rows_make_no_empty_flowfile(postgres) -> None:
    """Rows filling the last fragment exactly: the read past them (an empty chunk, no
    description from the stream) adds no FlowFile."""
    postgres.execute("drop table if exists four")
    postgres.execute("create table four (id int primary key, name text)")
    postgres.execute("insert into four select i, 'n' || i from generate_series(0, 3) i")
    outs = _read(postgres, "four", JsonRecordSetWriter, **{"Max Rows Per Flow File": "2"})
    assert [[r["id"] for r in json.loads(c)] for c, _ in outs] == [[0, 1], [2, 3]]
    assert [a["fragment.count"] for _, a in outs] == ["2", "2"]


@pytest.mark.parametrize(("auto_commit", "autocommit"), [(None, True), ("false", False)])
def test_set_auto_commit_as_nifi(postgres, opened, auto_commit, autocommit) -> None:
    """Set Auto Commit unset reads in autocommit (JDBC's default, which NiFi leaves as it is);
    false reads in a transaction, as before."""
    postgres.execute("drop table if exists clock")
    postgres.execute("create table clock (id int primary key)")
    postgres.execute("insert into clock values (1)")
    props = {} if auto_commit is None else {"Set Auto Commit": auto_commit}
    ((content, _),) = _read(postgres, "clock", JsonRecordSetWriter, **props)
    assert json.loads(content) == [{"id": 1}]
    assert opened == [(True, autocommit)]


def test_a_validation_query_before_an_autocommit_read(postgres, opened) -> None:
    """A pool's Validation Query leaves its checkout in a transaction: the read ends it before
    turning autocommit on."""
    postgres.execute("drop table if exists checked")
    postgres.execute("create table checked (id int primary key)")
    postgres.execute("insert into checked values (1), (2)")
    runner = _runner(
        postgres, "checked", JsonRecordSetWriter("writer"), pool={"Validation Query": "select 1"}
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert json.loads(out.content) == [{"id": 1}, {"id": 2}]
    assert opened == [(True, True)]


@contextlib.contextmanager
def _locked(postgres, table: str) -> Iterator[None]:
    """*table* locked (ACCESS EXCLUSIVE) by another session; given up after 15 s at most, so a
    listing that ignores Max Wait Time finishes (and reads the rows) instead of hanging."""
    locker = postgres.connect()
    locker.autocommit = False
    locker.execute(f"lock table {table} in access exclusive mode")
    release = threading.Timer(15, locker.rollback)
    release.start()
    try:
        yield
    finally:
        release.cancel()
        locker.rollback()
        locker.close()


@pytest.mark.parametrize("processor", ["QueryDatabaseTable", "GenerateTableFetch"])
def test_max_wait_time_bounds_the_listing(postgres, caplog, processor: str) -> None:
    """Max Wait Time cancels the driver's listing query (QueryDatabaseTable's, GenerateTable
    Fetch's) behind a lock, as NiFi's setQueryTimeout: logged naming the property, nothing
    listed, no state kept, the processor yields."""
    postgres.execute("drop table if exists waited")
    postgres.execute("create table waited (id int primary key)")
    postgres.execute("insert into waited values (1)")
    kind = QueryDatabaseTable if processor == "QueryDatabaseTable" else GenerateTableFetch
    runner = TestRunner(
        kind(**{
            "Database Connection Pooling Service": "dbcp", "Table Name": "waited",
            "Maximum-value Columns": "id", "Max Wait Time": "1 sec",
        })
    )  # fmt: skip
    runner.add_service(
        DBCPConnectionPool(
            "dbcp",
            **{"Database Connection URL": postgres.jdbc_url, "Database User": postgres.user},
        )
    )
    runner.set_incoming_connection(False)  # GenerateTableFetch lists as a source when not fed
    with _locked(postgres, "waited"):
        runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}
    assert runner.context.yielded
    assert "the listing query ran longer than Max Wait Time (1 seconds)" in caplog.text


def test_max_wait_time_bounds_the_read(postgres) -> None:
    """Max Wait Time cancels the task's read (its query and fetches): the item's session
    rolls back (read again later), the error names the property."""
    runner = TestRunner(
        QueryDatabaseTable(**{
            "Database Connection Pooling Service": "dbcp", "Table Name": "slow",
            "Custom Query": "SELECT 1 AS id, pg_sleep(20) AS s", "Max Wait Time": "1 sec",
        })
    )  # fmt: skip
    runner.add_service(
        DBCPConnectionPool(
            "dbcp",
            **{"Database Connection URL": postgres.jdbc_url, "Database User": postgres.user},
        )
    )
    with pytest.raises(ProcessException, match="query ran longer than Max Wait Time"):
        runner.run()
    runner.assert_transfer_count("success", 0)
