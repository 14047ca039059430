"""GenerateTableFetch: paged SELECT statements, maxima as state, run by ExecuteSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutFile
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch, Page, select_statement


def _runner(path: Path, *, incoming: bool = False, **props: str) -> TestRunner:
    runner = TestRunner(
        GenerateTableFetch(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "TEST_QUERY_DB_TABLE",
                **props,
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    runner.set_incoming_connection(incoming)  # as NiFi's tests: a source unless told
    return runner


def _db(tmp_path: Path, ids: range) -> Path:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table if not exists TEST_QUERY_DB_TABLE (id integer, name text)")
        db.executemany("insert into TEST_QUERY_DB_TABLE values (?, ?)", [(i, f"n{i}") for i in ids])
    return path


def test_pages_and_incremental_state(tmp_path: Path) -> None:
    """NiFi's testAddedRows: pages of Partition Size, then only the rows added since."""
    path = _db(tmp_path, range(3))
    runner = _runner(path, **{"Maximum-value Columns": "ID", "Partition Size": "2"})
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID <= 2 ORDER BY ID LIMIT 2",
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID <= 2 ORDER BY ID LIMIT 2 OFFSET 2",
    ]
    outs[1].assert_attribute_equals("generatetablefetch.offset", "2")
    outs[1].assert_attribute_equals("fragment.count", "2")
    assert "maxvalue.id" not in outs[0].attributes  # QueryDatabaseTable's, not NiFi's here
    assert runner.state == {"test_query_db_table@!@id": "2"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    _db(tmp_path, range(3, 5))
    runner.run()
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID > 2 AND ID <= 4 ORDER BY ID LIMIT 2"
    ]


def test_statements_fetch_every_row_once(tmp_path: Path) -> None:
    """Running the generated statements returns each row once."""
    path = _db(tmp_path, range(7))
    runner = _runner(path, **{"Maximum-value Columns": "id", "Partition Size": "3"})
    runner.run()
    with sqlite3.connect(path) as db:
        ids = [
            r[0]
            for o in runner.flowfiles_for("success")
            for r in db.execute(o.content.decode()).fetchall()
        ]
    assert ids == list(range(7))


def _pg_runner(
    postgres, table: str, rows: list[str], *, incoming: bool = False, **props: str
) -> TestRunner:
    postgres.execute(f"drop table if exists {table}")
    postgres.execute(
        f"create table {table} (id integer not null, type varchar(20), name varchar(100), "
        "scale float, bucket integer default 0)"
    )
    for row in rows:
        postgres.execute(f"insert into {table} (id, type, name, scale) values {row}")
    runner = TestRunner(
        GenerateTableFetch(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": table, **props}
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    runner.set_incoming_connection(incoming)
    return runner


_THREE = ["(0, 'male', 'Joe Smith', 1.0)", "(1, 'female', 'Carrie Jones', 5.0)"]
_THREE.append("(2, NULL, NULL, 2.0)")


def _found(postgres, flowfile) -> int:
    return len(postgres.execute(flowfile.content.decode()))


def test_one_partition_fetches_all_rows(postgres) -> None:
    """NiFi's testOnePartition: Partition Size 0 is one statement without LIMIT."""
    runner = _pg_runner(
        postgres, "gtf_one", _THREE, **{"Maximum-value Columns": "ID", "Partition Size": "0"}
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    assert out.content.decode() == "SELECT * FROM gtf_one WHERE ID <= 2"
    assert "generatetablefetch.limit" not in out.attributes
    assert _found(postgres, out) == 3


def test_flowfile_generated_on_zero_results(postgres) -> None:
    """NiFi's testFlowFileGeneratedOnZeroResults: an empty table makes one FlowFile only if
    Output Empty FlowFile on Zero Results is true, with NiFi's attributes."""
    runner = _pg_runner(
        postgres,
        "gtf_zero",
        [],
        **{"Columns to Return": "ID,BUCKET", "Maximum-value Columns": "ID", "Partition Size": "1"},
    )
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property("Output Empty FlowFile on Zero Results", "true")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    assert out.attributes["generatetablefetch.tableName"] == "gtf_zero"
    assert out.attributes["generatetablefetch.columnNames"] == "ID,BUCKET"
    assert out.attributes["generatetablefetch.whereClause"] == "1=1"
    assert out.attributes["generatetablefetch.maxColumnNames"] == "ID"
    assert "generatetablefetch.limit" not in out.attributes
    assert "generatetablefetch.offset" not in out.attributes
    assert out.attributes["fragment.index"] == "0"
    assert out.attributes["fragment.count"] == "0"


def test_custom_order_by_column(postgres) -> None:
    """NiFi's testCustomOrderByColumn: without Maximum-value Columns the pages are ordered by
    Custom ORDER BY Column, the WHERE clause is 1=1."""
    runner = _pg_runner(
        postgres,
        "gtf_order",
        _THREE,
        **{"Custom ORDER BY Column": "SCALE", "Partition Size": "2"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_order WHERE 1=1 ORDER BY SCALE LIMIT 2",
        "SELECT * FROM gtf_order WHERE 1=1 ORDER BY SCALE LIMIT 2 OFFSET 2",
    ]
    assert [(o.attributes["fragment.index"], o.attributes["fragment.count"]) for o in outs] == [
        ("0", "2"),
        ("1", "2"),
    ]
    assert [_found(postgres, o) for o in outs] == [2, 1]


def test_added_rows_with_custom_where_clause(postgres) -> None:
    """NiFi's testAddedRowsWithCustomWhereClause: the clause sits between the lower and
    upper bounds; later runs fetch only the matching rows past the maximum."""
    runner = _pg_runner(
        postgres,
        "gtf_where",
        _THREE,
        **{
            "Additional WHERE clause": "type = 'male' OR type IS NULL",
            "Maximum-value Columns": "ID",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_where WHERE (type = 'male' OR type IS NULL) AND ID <= 2 "
        "ORDER BY ID LIMIT 10000"
    ]
    assert _found(postgres, outs[0]) == 2
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    for row in ["(3, 'female', 'Mary West', 15.0)", "(4, 'male', 'M J', 15.0)"]:
        postgres.execute(f"insert into gtf_where (id, type, name, scale) values {row}")
    postgres.execute("insert into gtf_where (id, type, name, scale) values (5, 'male', 'M', 1)")
    runner.set_property("Partition Size", "1")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_where WHERE ID > 2 AND (type = 'male' OR type IS NULL) AND ID <= 5 "
        "ORDER BY ID LIMIT 1",
        "SELECT * FROM gtf_where WHERE ID > 2 AND (type = 'male' OR type IS NULL) AND ID <= 5 "
        "ORDER BY ID LIMIT 1 OFFSET 1",
    ]
    assert [_found(postgres, o) for o in outs] == [1, 1]
    assert runner.state == {"gtf_where@!@id": "5"}


def test_initial_max_value(postgres) -> None:
    """NiFi's testInitialMaxValue: initial.maxvalue.<column> is the first lower bound."""
    runner = _pg_runner(
        postgres,
        "gtf_initial",
        _THREE,
        **{"Maximum-value Columns": "ID", "initial.maxvalue.ID": "1"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_initial WHERE ID > 1 AND ID <= 2 ORDER BY ID LIMIT 10000"
    ]
    assert _found(postgres, outs[0]) == 1


def test_use_column_values_for_partitioning(postgres) -> None:
    """NiFi's testUseColumnValuesForPartitioning: pages are ranges of the column's values,
    the next run's ranges start past the kept maximum (a range may hold no row)."""
    runner = _pg_runner(
        postgres,
        "gtf_values",
        ["(10, 'a', 'x', 1.0)", "(11, 'b', 'y', 5.0)", "(12, NULL, NULL, 2.0)"],
        **{
            "Maximum-value Columns": "ID",
            "Column for Value Partitioning": "ID",
            "Partition Size": "2",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_values WHERE ID <= 12 AND ID >= 10 AND ID < 12",
        "SELECT * FROM gtf_values WHERE ID <= 12 AND ID >= 12 AND ID < 14",
    ]
    assert [_found(postgres, o) for o in outs] == [2, 1]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    for row in ["(20, 'c', 'z', 1.0)", "(21, 'd', 'w', 1.0)", "(24, 'e', 'v', 1.0)"]:
        postgres.execute(f"insert into gtf_values (id, type, name, scale) values {row}")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_values WHERE ID > 12 AND ID <= 24 AND ID >= 20 AND ID < 22",
        "SELECT * FROM gtf_values WHERE ID > 12 AND ID <= 24 AND ID >= 22 AND ID < 24",
        "SELECT * FROM gtf_values WHERE ID > 12 AND ID <= 24 AND ID >= 24 AND ID < 26",
    ]
    assert [_found(postgres, o) for o in outs] == [2, 0, 1]
    assert [o.attributes["generatetablefetch.offset"] for o in outs] == ["20", "22", "24"]


def test_use_column_values_for_partitioning_no_max_value_column(postgres) -> None:
    """NiFi's testUseColumnValuesForPartitioningNoMaxValueColumn: the last page is bounded by
    the column's maximum instead of a limit; without a maximum kept, each run repeats."""
    runner = _pg_runner(
        postgres,
        "gtf_values_nomax",
        ["(10, 'a', 'x', 1.0)", "(11, 'b', 'y', 5.0)", "(12, NULL, NULL, 2.0)"],
        **{"Column for Value Partitioning": "ID", "Partition Size": "2"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_values_nomax WHERE 1=1 AND ID >= 10 AND ID < 12",
        "SELECT * FROM gtf_values_nomax WHERE ID <= 12 AND ID >= 12",
    ]
    assert "generatetablefetch.limit" not in outs[1].attributes
    assert [_found(postgres, o) for o in outs] == [2, 1]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 2)


def test_column_for_value_partitioning_is_one_column() -> None:
    """NiFi's customValidate: a comma in Column for Value Partitioning (no EL) is invalid."""
    runner = TestRunner(
        GenerateTableFetch(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "t",
                "Column for Value Partitioning": "id, bucket",
            }
        )
    )
    problems = [p for p in runner.validation_problems() if not p.valid]
    assert any("requires a single column name, but a comma" in p.explanation for p in problems)


@pytest.mark.parametrize(
    ("db_type", "pages"),
    [
        (
            "Generic",
            ["SELECT * FROM t WHERE a > 1 ORDER BY a LIMIT 2", "... ORDER BY a LIMIT 2 OFFSET 2"],
        ),
        (
            "PostgreSQL",
            ["SELECT * FROM t WHERE a > 1 ORDER BY a LIMIT 2", "... ORDER BY a LIMIT 2 OFFSET 2"],
        ),
        (
            "MS SQL 2012+",
            [
                "SELECT * FROM t WHERE a > 1 ORDER BY a OFFSET 0 ROWS FETCH NEXT 2 ROWS ONLY",
                "... ORDER BY a OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY",
            ],
        ),
        (
            "Oracle 12+",
            [
                "SELECT * FROM t WHERE a > 1 ORDER BY a FETCH NEXT 2 ROWS ONLY",
                "... ORDER BY a OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY",
            ],
        ),
    ],
)
def test_select_statement_per_database_type(db_type: str, pages: list[str]) -> None:
    """NiFi's adapters' getSelectStatement: each Database Type's paging; value partitions
    the same for all (a range, unordered, no paging clause)."""
    first = select_statement(db_type, Page("t", "*", "a > 1", "a", 2, 0))
    second = select_statement(db_type, Page("t", None, "a > 1", "a", 2, 2))
    assert [first, "... " + second[second.index("ORDER BY") :]] == pages
    ranged = select_statement(db_type, Page("t", "a, b", "a > 1", "a", 2, 10), "a")
    assert ranged == "SELECT a, b FROM t WHERE a > 1 AND a >= 10 AND a < 12"
    last = select_statement(db_type, Page("t", "", "a <= 12", "a", None, 12), "a")
    assert last == "SELECT * FROM t WHERE a <= 12 AND a >= 12"


def _bucket_runner(
    postgres, table: str, rows: list[tuple[int, int]], *, incoming: bool = False, **props: str
) -> TestRunner:
    postgres.execute(f"drop table if exists {table}")
    postgres.execute(f"create table {table} (id integer not null, bucket integer not null)")
    for row in rows:
        postgres.execute(f"insert into {table} (id, bucket) values {row}")
    return _pg_runner_for(postgres, table, incoming=incoming, **props)


def _pg_runner_for(postgres, table: str, *, incoming: bool = False, **props: str) -> TestRunner:
    runner = TestRunner(
        GenerateTableFetch(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": table, **props}
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    runner.set_incoming_connection(incoming)
    return runner


def test_multiple_partitions(postgres) -> None:
    """NiFi's testMultiplePartitions: with two Maximum-value Columns a row must pass both
    (a new id in an old bucket is not fetched)."""
    runner = _bucket_runner(
        postgres,
        "gtf_buckets",
        [(0, 0), (1, 0)],
        **{"Maximum-value Columns": "ID, BUCKET", "Partition Size": "1"},
    )
    counts = []
    for row in [None, (2, 0), (3, 1), (4, 0), (5, 1)]:
        if row:
            postgres.execute(f"insert into gtf_buckets (id, bucket) values {row}")
        runner.run()
        counts.append(sum(_found(postgres, o) for o in runner.flowfiles_for("success")))
        runner.clear_transfer_state()
    assert counts == [2, 1, 1, 0, 1]


def test_added_rows_two_tables(postgres) -> None:
    """NiFi's testAddedRowsTwoTables: another Table Name starts from its own maximum."""
    rows = ["(0, 'a', 'Joe Smith', 1.0)", "(1, 'b', 'Carrie Jones', 5.0)"]
    rows.append("(2, NULL, NULL, 2.0)")
    runner = _pg_runner(postgres, "gtf_t1", rows, **{"Maximum-value Columns": "ID"})
    _pg_runner(postgres, "gtf_t2", rows)
    runner.run()
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM gtf_t1 WHERE ID <= 2 ORDER BY ID LIMIT 10000"
    ]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property("Table Name", "gtf_t2")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == "SELECT * FROM gtf_t2 WHERE ID <= 2 ORDER BY ID LIMIT 10000"
    assert _found(postgres, out) == 3
    runner.clear_transfer_state()
    for i in (3, 4, 5):
        postgres.execute(f"insert into gtf_t2 (id, name) values ({i}, 'Mary West')")
    runner.set_property("Partition Size", "2")
    runner.run()
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM gtf_t2 WHERE ID > 2 AND ID <= 5 ORDER BY ID LIMIT 2",
        "SELECT * FROM gtf_t2 WHERE ID > 2 AND ID <= 5 ORDER BY ID LIMIT 2 OFFSET 2",
    ]
    assert runner.state == {"gtf_t1@!@id": "2", "gtf_t2@!@id": "5"}


def test_added_rows_right_bounded(postgres) -> None:
    """NiFi's testAddedRowsRightBounded: pages bounded by the maximum seen; a text column's
    maximum is quoted, and its NULLs count (7 rows: 4 pages)."""
    rows = ["(0, 'a', 'Joe Smith', 1.0)", "(1, 'b', 'Carrie Jones', 5.0)"]
    rows.append("(2, NULL, NULL, 2.0)")
    runner = _pg_runner(postgres, "gtf_right", rows, **{"Maximum-value Columns": "ID"})
    runner.run()
    runner.clear_transfer_state()
    for i, name in [(3, "Mary West"), (4, "Marty Johnson"), (5, "Marty Johnson")]:
        postgres.execute(f"insert into gtf_right (id, name) values ({i}, '{name}')")
    runner.set_property("Partition Size", "2")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [_found(postgres, o) for o in outs] == [2, 1]
    runner.clear_transfer_state()
    postgres.execute("insert into gtf_right (id, name) values (6, 'Mr. NiFi')")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_right WHERE ID > 5 AND ID <= 6 ORDER BY ID LIMIT 2"
    )
    runner.clear_transfer_state()
    runner.set_state({})
    runner.set_property("Maximum-value Columns", "name")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_right WHERE name <= 'Mr. NiFi' ORDER BY name LIMIT 2"
    ] + [
        f"SELECT * FROM gtf_right WHERE name <= 'Mr. NiFi' ORDER BY name LIMIT 2 OFFSET {n}"
        for n in (2, 4, 6)
    ]


def test_a_text_maximum_that_looks_like_a_number_is_quoted(postgres) -> None:
    """A varchar Maximum-value Column whose maximum is digits ('9') is compared as text (a
    bare 9 made PostgreSQL refuse the statement: character varying <= integer)."""
    runner = _pg_runner(
        postgres,
        "gtf_codes",
        ["(0, '10', 'a', 1.0)", "(1, '9', 'b', 1.0)"],
        **{"Maximum-value Columns": "type"},
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert (
        out.content.decode()
        == "SELECT * FROM gtf_codes WHERE type <= '9' ORDER BY type LIMIT 10000"
    )
    assert _found(postgres, out) == 2
    runner.clear_transfer_state()
    postgres.execute("insert into gtf_codes (id, type) values (2, '95')")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_codes WHERE type > '9' AND type <= '95' ORDER BY type LIMIT 10000"
    )
    assert _found(postgres, out) == 1


def test_added_rows_timestamp_right_bounded(postgres) -> None:
    """NiFi's testAddedRowsTimestampRightBounded: timestamps as NiFi writes them, quoted;
    rows older than the maximum are not fetched."""
    postgres.execute("drop table if exists gtf_ts")
    postgres.execute("create table gtf_ts (id integer not null, created_on timestamp)")
    postgres.execute(
        "insert into gtf_ts values (0, '1962-09-23 03:23:34.234'), "
        "(1, '2000-01-01 03:23:34.234'), (2, '2010-01-01 00:00:00')"
    )
    runner = _pg_runner_for(postgres, "gtf_ts", **{"Maximum-value Columns": "created_on"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_ts WHERE created_on <= '2010-01-01 00:00:00.0' "
        "ORDER BY created_on LIMIT 10000"
    )
    runner.clear_transfer_state()
    postgres.execute(
        "insert into gtf_ts values (3, '2000-01-01 03:23:34.234'), "
        "(4, '2000-01-01 03:23:34.234'), (5, '2011-01-01 02:23:34.234'), "
        "(6, '2011-01-01 03:23:34.234'), (7, '2011-01-01 04:23:34.236')"
    )
    runner.set_property("Partition Size", "2")
    runner.run()
    outs = runner.flowfiles_for("success")
    where = "created_on > '2010-01-01 00:00:00.0' AND created_on <= '2011-01-01 04:23:34.236'"
    assert [o.content.decode() for o in outs] == [
        f"SELECT * FROM gtf_ts WHERE {where} ORDER BY created_on LIMIT 2",
        f"SELECT * FROM gtf_ts WHERE {where} ORDER BY created_on LIMIT 2 OFFSET 2",
    ]
    assert [_found(postgres, o) for o in outs] == [2, 1]


def test_no_duplicate_with_right_bounded(postgres) -> None:
    """NiFi's testNoDuplicateWithRightBounded: rows added after the statement was made are
    not in its result but in the next run's."""
    rows = ["(0, 'a', 'x', 1.0)", "(1, 'b', 'y', 5.0)", "(2, NULL, NULL, 2.0)"]
    runner = _pg_runner(postgres, "gtf_nodup", rows, **{"Maximum-value Columns": "ID"})
    runner.run()
    (first,) = runner.flowfiles_for("success")
    for i in (3, 4, 5):
        postgres.execute(f"insert into gtf_nodup (id) values ({i})")
    assert _found(postgres, first) == 3
    runner.clear_transfer_state()
    runner.run()
    (second,) = runner.flowfiles_for("success")
    assert _found(postgres, second) == 3


def test_backwards_compatibility_state_key_static_table(postgres, monkeypatch) -> None:
    """NiFi's testBackwardsCompatibilityStateKeyStaticTableDynamicMaxValues: a maximum kept
    under the column's name alone (before the table prefix) is the lower bound; the new one
    is kept under <table>@!@<column>."""
    monkeypatch.setenv("maxValueCol", "id")
    runner = _bucket_runner(
        postgres, "gtf_legacy", [(0, 0), (1, 0)], **{"Maximum-value Columns": "${maxValueCol}"}
    )
    runner.set_state({"id": "0"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_legacy WHERE id > 0 AND id <= 1 ORDER BY id LIMIT 10000"
    )
    assert runner.state == {"id": "0", "gtf_legacy@!@id": "1"}


def test_backwards_compatibility_state_key_variable_registry(postgres, monkeypatch) -> None:
    """NiFi's testBackwardsCompatibilityStateKeyVariableRegistry: with Expression Language in
    Table Name the column-only key is not read."""
    monkeypatch.setenv("tableName", "gtf_legacy_el")
    monkeypatch.setenv("maxValueCol", "id")
    runner = _bucket_runner(
        postgres,
        "gtf_legacy_el",
        [(0, 0), (1, 0)],
        **{"Table Name": "${tableName}", "Maximum-value Columns": "${maxValueCol}"},
    )
    runner.set_state({"id": "0"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_legacy_el WHERE id <= 1 ORDER BY id LIMIT 10000"
    )


def test_initial_max_value_with_el(postgres, monkeypatch) -> None:
    """NiFi's testInitialMaxValueWithEL: initial.maxvalue.<column> from the environment."""
    monkeypatch.setenv("maxval.id", "1")
    runner = _pg_runner(
        postgres,
        "gtf_initial_el",
        _THREE,
        **{"Maximum-value Columns": "ID", "initial.maxvalue.ID": "${maxval.id}"},
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_initial_el WHERE ID > 1 AND ID <= 2 ORDER BY ID LIMIT 10000"
    )
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_expressions_are_evaluated_once_per_trigger(postgres, monkeypatch) -> None:
    """The statements use the values the listing counted with: an expression whose value
    changes between listing and reading (here the environment) is not evaluated again."""
    monkeypatch.setenv("GTF_WHERE", "type = 'a'")
    runner = _pg_runner(
        postgres,
        "gtf_once",
        ["(0, 'a', 'x', 1.0)", "(1, 'b', 'y', 1.0)", "(2, 'b', 'z', 1.0)"],
        **{
            "Additional WHERE clause": "${GTF_WHERE}",
            "Partition Size": "${GTF_SIZE}",
            "Maximum-value Columns": "id",
        },
    )
    monkeypatch.setenv("GTF_SIZE", "1")
    listed = GenerateTableFetch.list_work

    def list_then_change(self, context, state):  # type: ignore[no-untyped-def]
        listing = listed(self, context, state)
        monkeypatch.setenv("GTF_WHERE", "type = 'b'")
        monkeypatch.setenv("GTF_SIZE", "5")
        return listing

    monkeypatch.setattr(GenerateTableFetch, "list_work", list_then_change)
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_once WHERE (type = 'a') AND id <= 0 ORDER BY id LIMIT 1"
    ]


def test_a_partitioning_column_of_nulls_makes_no_flowfile(postgres) -> None:
    """New rows whose Column for Value Partitioning is NULL give no range, so no statement and,
    with Output Empty FlowFile on Zero Results false, no FlowFile (NiFi's numberOfFetches 0)."""
    runner = _pg_runner(
        postgres,
        "gtf_null_parts",
        ["(0, 'a', 'x', 1.0)", "(1, 'b', 'y', 5.0)"],
        **{"Column for Value Partitioning": "bucket", "Partition Size": "2"},
    )
    postgres.execute("update gtf_null_parts set bucket = NULL")
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_migrate_properties(postgres) -> None:
    """NiFi's testMigrateProperties: NiFi 1's internal names (and NiFi 2.7's "Additional WHERE
    Clause", which was a dynamic property here and dropped) set the properties."""
    runner = _pg_runner(
        postgres,
        "gtf_migrate",
        _THREE,
        **{
            "Maximum-value Columns": "ID",
            "gen-table-fetch-partition-size": "2",
            "gen-table-column-for-val-partitioning": "ID",
            "gen-table-output-flowfile-on-zero-results": "true",
            "gen-table-custom-orderby-column": "SCALE",
            "db-fetch-db-type": "PostgreSQL",
            "Additional WHERE Clause": "scale > 1.5",
        },
    )
    assert runner.context.dynamic_properties == {}
    runner.run()
    # ids 1 and 2 pass the clause: one range of 2 values, bounded by the maximum (NiFi's way)
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_migrate WHERE (scale > 1.5) AND ID <= 2 AND ID <= 2 AND ID >= 1"
    )
    assert _found(postgres, out) == 2


def test_initial_max_value_with_el_and_multiple_tables(postgres) -> None:
    """NiFi's testInitialMaxValueWithELAndMultipleTables: an incoming FlowFile's attributes
    name the table and its initial maximum; each table keeps its own state; the FlowFile is
    dropped."""
    _pg_runner(postgres, "gtf_in_one", _THREE)
    runner = _pg_runner(
        postgres,
        "gtf_in_two",
        _THREE,
        incoming=True,
        **{
            "Table Name": "${table.name}",
            "Maximum-value Columns": "ID",
            "initial.maxvalue.ID": "${maxval.id}",
        },
    )
    runner.enqueue(b"", {"table.name": "gtf_in_one", "maxval.id": "1"})
    runner.enqueue(b"", {"table.name": "gtf_in_two", "maxval.id": "1"})
    runner.run(2)
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        f"SELECT * FROM {t} WHERE ID > 1 AND ID <= 2 ORDER BY ID LIMIT 10000"
        for t in ("gtf_in_one", "gtf_in_two")
    ]
    assert [_found(postgres, o) for o in outs] == [1, 1]
    runner.assert_queue_empty()
    assert runner.state == {"gtf_in_one@!@id": "2", "gtf_in_two@!@id": "2"}
    runner.clear_transfer_state()
    runner.enqueue(b"", {"table.name": "gtf_in_two", "maxval.id": "1"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_queue_empty()


def test_initial_max_value_with_el_and_incoming(postgres) -> None:
    """NiFi's testInitialMaxValueWithELAndIncoming: initial.maxvalue from the FlowFile's
    attributes; its children carry them; the FlowFile is removed (FORK, DROP)."""
    runner = _pg_runner(
        postgres,
        "gtf_in_el",
        _THREE,
        incoming=True,
        **{"Maximum-value Columns": "ID", "initial.maxvalue.ID": "${maxval.id}"},
    )
    runner.enqueue(b"", {"maxval.id": "1", "source": "list"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_in_el WHERE ID > 1 AND ID <= 2 ORDER BY ID LIMIT 10000"
    )
    out.assert_attribute_equals("source", "list")  # a child of the incoming FlowFile
    assert {e.event_type.name for e in runner.provenance_events} >= {"FORK", "DROP"}
    runner.clear_transfer_state()
    runner.enqueue(b"", {"maxval.id": "1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 0)
    runner.assert_queue_empty()


def test_multiple_partitions_incoming_flowfiles(postgres) -> None:
    """NiFi's testMultiplePartitionsIncomingFlowFiles: Table Name and Partition Size from each
    FlowFile; a table that does not exist sends its FlowFile to failure with the error."""
    _bucket_runner(postgres, "gtf_inp_one", [(0, 0), (1, 0)])
    _bucket_runner(postgres, "gtf_inp_two", [(0, 0)])
    postgres.execute("drop table if exists gtf_inp_three")
    runner = _pg_runner_for(
        postgres,
        "x",
        incoming=True,
        **{"Table Name": "${tableName}", "Partition Size": "${partSize}"},
    )
    runner.enqueue(b"", {"tableName": "gtf_inp_one", "partSize": "1"})
    runner.enqueue(b"", {"tableName": "gtf_inp_two", "partSize": "2"})
    runner.enqueue(b"", {"tableName": "gtf_inp_three", "partSize": "1"})
    runner.run(3)
    outs = runner.flowfiles_for("success")
    assert [o.attributes["tableName"] for o in outs] == ["gtf_inp_one"] * 2 + ["gtf_inp_two"]
    (failed,) = runner.flowfiles_for("failure")
    failed.assert_attribute_equals("tableName", "gtf_inp_three")
    assert "gtf_inp_three" in failed.attributes["generatetablefetch.sql.error"]
    runner.assert_queue_empty()


def test_backwards_compatibility_state_key_static_table_incoming(postgres) -> None:
    """NiFi's testBackwardsCompatibilityStateKeyStaticTableDynamicMaxValues (with an incoming
    connection): Maximum-value Columns from the FlowFile, the column-only key read."""
    runner = _bucket_runner(
        postgres,
        "gtf_in_legacy",
        [(0, 0), (1, 0)],
        incoming=True,
        **{"Maximum-value Columns": "${maxValueCol}"},
    )
    runner.enqueue(b"", {"maxValueCol": "id"})
    runner.set_state({"id": "0"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_in_legacy WHERE id > 0 AND id <= 1 ORDER BY id LIMIT 10000"
    )


@pytest.mark.parametrize("max_columns", ["${maxValueCol}", "id"])
def test_backwards_compatibility_state_key_dynamic_table(postgres, max_columns: str) -> None:
    """NiFi's testBackwardsCompatibilityStateKeyDynamicTable{Dynamic,Static}MaxValues: with
    the table from the FlowFile the column-only key is not read; the next FlowFile starts
    past the maximum kept under <table>@!@<column>."""
    runner = _bucket_runner(
        postgres,
        "gtf_in_legacy_dyn",
        [(0, 0), (1, 0)],
        incoming=True,
        **{"Table Name": "${tableName}", "Maximum-value Columns": max_columns},
    )
    attributes = {"tableName": "gtf_in_legacy_dyn", "maxValueCol": "id"}
    runner.enqueue(b"", attributes)
    runner.set_state({"id": "0"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_in_legacy_dyn WHERE id <= 1 ORDER BY id LIMIT 10000"
    )
    assert "generatetablefetch.columnNames" not in out.attributes
    for name, value in {
        "generatetablefetch.tableName": "gtf_in_legacy_dyn",
        "generatetablefetch.whereClause": "id <= 1",
        "generatetablefetch.maxColumnNames": "id",
        "generatetablefetch.limit": "10000",
        "generatetablefetch.offset": "0",
    }.items():
        out.assert_attribute_equals(name, value)
    runner.clear_transfer_state()
    postgres.execute("insert into gtf_in_legacy_dyn (id, bucket) values (2, 0)")
    runner.enqueue(b"", attributes)
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_in_legacy_dyn WHERE id > 1 AND id <= 2 ORDER BY id LIMIT 10000"
    )
    out.assert_attribute_equals("generatetablefetch.whereClause", "id > 1 AND id <= 2")


def test_column_type_missing(postgres) -> None:
    """NiFi's testColumnTypeMissing and testMultipleColumnTypeMissing: tables named by the
    FlowFiles, each with its own maxima; a later FlowFile fetches only the new rows."""
    _bucket_runner(postgres, "gtf_in_types_two", [(1, 0)])
    runner = _bucket_runner(
        postgres,
        "gtf_in_types",
        [(1, 0)],
        incoming=True,
        **{"Table Name": "${tableName}", "Maximum-value Columns": "${maxValueCol}"},
    )
    for table in ("gtf_in_types", "gtf_in_types_two"):
        runner.enqueue(b"", {"tableName": table, "maxValueCol": "id"})
    runner.run(2)
    runner.assert_all_flowfiles_transferred("success", 2)
    runner.clear_transfer_state()
    postgres.execute("insert into gtf_in_types (id, bucket) values (2, 0)")
    runner.enqueue(b"", {"tableName": "gtf_in_types", "maxValueCol": "id"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_in_types WHERE id > 1 AND id <= 2 ORDER BY id LIMIT 10000"
    )


def test_incoming_connection_with_nothing_queued_does_nothing(tmp_path: Path) -> None:
    """NiFi's rule: with an incoming connection and no FlowFile queued, nothing runs (no
    statement, no state)."""
    runner = _runner(_db(tmp_path, range(3)), incoming=True, **{"Maximum-value Columns": "id"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}


def test_empty_flowfile_per_incoming_flowfile(tmp_path: Path) -> None:
    """Output Empty FlowFile on Zero Results fed by a connection: each incoming FlowFile
    gets one (NiFi's every trigger), where a source outputs it once until rows come."""
    runner = _runner(
        _db(tmp_path, range(0)),
        incoming=True,
        **{"Maximum-value Columns": "id", "Output Empty FlowFile on Zero Results": "true"},
    )
    runner.enqueue(b"")
    runner.enqueue(b"")
    runner.run(2)
    outs = runner.flowfiles_for("success")
    assert [o.attributes["fragment.count"] for o in outs] == ["0", "0"]
    assert outs[0].attributes["fragment.identifier"] != outs[1].attributes["fragment.identifier"]


def test_in_a_flow_fed_by_files_naming_tables(tmp_path: Path) -> None:
    """On the direct runner, fed by GetFile (file name = table), each FlowFile's table gets
    its statement; the per-table maxima commit with them, so a later run of the same
    repository fetches only the rows added since."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        for table, ids in (("t1", range(3)), ("t2", range(2))):
            db.execute(f"create table {table} (id integer)")
            db.executemany(f"insert into {table} values (?)", [(i,) for i in ids])
    inbox = tmp_path / "in"
    inbox.mkdir()

    def run(names: list[str], out: Path) -> dict[str, str]:
        for name in names:
            (inbox / name).write_text("")
        flow = Flow("gtf-fed")
        flow.add_service(
            DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
        )
        get = flow.add(GetFile(input_directory=str(inbox)), name="get")
        fetch = flow.add(
            GenerateTableFetch(
                **{
                    "Database Connection Pooling Service": "dbcp",
                    "Table Name": "${filename}",
                    "Maximum-value Columns": "id",
                    "Partition Size": "0",
                }
            ),
            name="fetch",
        )
        put = flow.add(PutFile(directory=str(out)), name="put")
        flow.connect(get, fetch)
        flow.connect(fetch, put, "success")
        flow.auto_terminate(fetch, "failure")
        flow.auto_terminate(put, ["success", "failure"])
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
        return {f.name: f.read_text() for f in out.iterdir()}

    assert run(["t1", "t2"], tmp_path / "out1") == {
        "t1": "SELECT * FROM t1 WHERE id <= 2",
        "t2": "SELECT * FROM t2 WHERE id <= 1",
    }
    with sqlite3.connect(path) as db:
        db.executemany("insert into t1 values (?)", [(3,), (4,)])
    assert run(["t1", "t2"], tmp_path / "out2") == {
        "t1": "SELECT * FROM t1 WHERE id > 2 AND id <= 4",
    }
