"""GenerateTableFetch: paged SELECT statements, maxima as state, run by ExecuteSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flowcore.testing import TestRunner
from processors.sql.generate_table_fetch import (
    GenerateTableFetch,
    Page,
    _literal,
    select_statement,
)
from tests.processors.sql.gtf_runners import (
    THREE,
    bucket_runner,
    found,
    pg_runner,
    pg_runner_for,
    sqlite_db,
    sqlite_runner,
)


def test_pages_and_incremental_state(tmp_path: Path) -> None:
    """NiFi's testAddedRows: pages of Partition Size, then only the rows added since."""
    path = sqlite_db(tmp_path, range(3))
    runner = sqlite_runner(path, **{"Maximum-value Columns": "ID", "Partition Size": "2"})
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
    sqlite_db(tmp_path, range(3, 5))
    runner.run()
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID > 2 AND ID <= 4 ORDER BY ID LIMIT 2"
    ]


def test_statements_fetch_every_row_once(tmp_path: Path) -> None:
    """Running the generated statements returns each row once."""
    path = sqlite_db(tmp_path, range(7))
    runner = sqlite_runner(path, **{"Maximum-value Columns": "id", "Partition Size": "3"})
    runner.run()
    with sqlite3.connect(path) as db:
        ids = [
            r[0]
            for o in runner.flowfiles_for("success")
            for r in db.execute(o.content.decode()).fetchall()
        ]
    assert ids == list(range(7))


def test_one_partition_fetches_all_rows(postgres) -> None:
    """NiFi's testOnePartition: Partition Size 0 is one statement without LIMIT."""
    runner = pg_runner(
        postgres, "gtf_one", THREE, **{"Maximum-value Columns": "ID", "Partition Size": "0"}
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    assert out.content.decode() == "SELECT * FROM gtf_one WHERE ID <= 2"
    assert "generatetablefetch.limit" not in out.attributes
    assert found(postgres, out) == 3


def test_flowfile_generated_on_zero_results(postgres) -> None:
    """NiFi's testFlowFileGeneratedOnZeroResults: an empty table makes one FlowFile only if
    Output Empty FlowFile on Zero Results is true, with NiFi's attributes."""
    runner = pg_runner(
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
    runner = pg_runner(
        postgres,
        "gtf_order",
        THREE,
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
    assert [found(postgres, o) for o in outs] == [2, 1]


def test_added_rows_with_custom_where_clause(postgres) -> None:
    """NiFi's testAddedRowsWithCustomWhereClause: the clause sits between the lower and
    upper bounds; later runs fetch only the matching rows past the maximum."""
    runner = pg_runner(
        postgres,
        "gtf_where",
        THREE,
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
    assert found(postgres, outs[0]) == 2
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
    assert [found(postgres, o) for o in outs] == [1, 1]
    assert runner.state == {"gtf_where@!@id": "5"}


def test_initial_max_value(postgres) -> None:
    """NiFi's testInitialMaxValue: initial.maxvalue.<column> is the first lower bound."""
    runner = pg_runner(
        postgres,
        "gtf_initial",
        THREE,
        **{"Maximum-value Columns": "ID", "initial.maxvalue.ID": "1"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM gtf_initial WHERE ID > 1 AND ID <= 2 ORDER BY ID LIMIT 10000"
    ]
    assert found(postgres, outs[0]) == 1


def test_use_column_values_for_partitioning(postgres) -> None:
    """NiFi's testUseColumnValuesForPartitioning: pages are ranges of the column's values,
    the next run's ranges start past the kept maximum (a range may hold no row)."""
    runner = pg_runner(
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
    assert [found(postgres, o) for o in outs] == [2, 1]
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
    assert [found(postgres, o) for o in outs] == [2, 0, 1]
    assert [o.attributes["generatetablefetch.offset"] for o in outs] == ["20", "22", "24"]


def test_use_column_values_for_partitioning_no_max_value_column(postgres) -> None:
    """NiFi's testUseColumnValuesForPartitioningNoMaxValueColumn: the last page is bounded by
    the column's maximum instead of a limit; without a maximum kept, each run repeats."""
    runner = pg_runner(
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
    assert [found(postgres, o) for o in outs] == [2, 1]
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


def test_multiple_partitions(postgres) -> None:
    """NiFi's testMultiplePartitions: with two Maximum-value Columns a row must pass both
    (a new id in an old bucket is not fetched)."""
    runner = bucket_runner(
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
        counts.append(sum(found(postgres, o) for o in runner.flowfiles_for("success")))
        runner.clear_transfer_state()
    assert counts == [2, 1, 1, 0, 1]


def test_added_rows_two_tables(postgres) -> None:
    """NiFi's testAddedRowsTwoTables: another Table Name starts from its own maximum."""
    rows = ["(0, 'a', 'Joe Smith', 1.0)", "(1, 'b', 'Carrie Jones', 5.0)"]
    rows.append("(2, NULL, NULL, 2.0)")
    runner = pg_runner(postgres, "gtf_t1", rows, **{"Maximum-value Columns": "ID"})
    pg_runner(postgres, "gtf_t2", rows)
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
    assert found(postgres, out) == 3
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
    runner = pg_runner(postgres, "gtf_right", rows, **{"Maximum-value Columns": "ID"})
    runner.run()
    runner.clear_transfer_state()
    for i, name in [(3, "Mary West"), (4, "Marty Johnson"), (5, "Marty Johnson")]:
        postgres.execute(f"insert into gtf_right (id, name) values ({i}, '{name}')")
    runner.set_property("Partition Size", "2")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [found(postgres, o) for o in outs] == [2, 1]
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
    runner = pg_runner(
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
    assert found(postgres, out) == 2
    runner.clear_transfer_state()
    postgres.execute("insert into gtf_codes (id, type) values (2, '95')")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content.decode() == (
        "SELECT * FROM gtf_codes WHERE type > '9' AND type <= '95' ORDER BY type LIMIT 10000"
    )
    assert found(postgres, out) == 1


def test_added_rows_timestamp_right_bounded(postgres) -> None:
    """NiFi's testAddedRowsTimestampRightBounded: timestamps as NiFi writes them, quoted;
    rows older than the maximum are not fetched."""
    postgres.execute("drop table if exists gtf_ts")
    postgres.execute("create table gtf_ts (id integer not null, created_on timestamp)")
    postgres.execute(
        "insert into gtf_ts values (0, '1962-09-23 03:23:34.234'), "
        "(1, '2000-01-01 03:23:34.234'), (2, '2010-01-01 00:00:00')"
    )
    runner = pg_runner_for(postgres, "gtf_ts", **{"Maximum-value Columns": "created_on"})
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
    assert [found(postgres, o) for o in outs] == [2, 1]


def test_no_duplicate_with_right_bounded(postgres) -> None:
    """NiFi's testNoDuplicateWithRightBounded: rows added after the statement was made are
    not in its result but in the next run's."""
    rows = ["(0, 'a', 'x', 1.0)", "(1, 'b', 'y', 5.0)", "(2, NULL, NULL, 2.0)"]
    runner = pg_runner(postgres, "gtf_nodup", rows, **{"Maximum-value Columns": "ID"})
    runner.run()
    (first,) = runner.flowfiles_for("success")
    for i in (3, 4, 5):
        postgres.execute(f"insert into gtf_nodup (id) values ({i})")
    assert found(postgres, first) == 3
    runner.clear_transfer_state()
    runner.run()
    (second,) = runner.flowfiles_for("success")
    assert found(postgres, second) == 3


def test_backwards_compatibility_state_key_static_table(postgres, monkeypatch) -> None:
    """NiFi's testBackwardsCompatibilityStateKeyStaticTableDynamicMaxValues: a maximum kept
    under the column's name alone (before the table prefix) is the lower bound; the new one
    is kept under <table>@!@<column>."""
    monkeypatch.setenv("maxValueCol", "id")
    runner = bucket_runner(
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
    runner = bucket_runner(
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
    runner = pg_runner(
        postgres,
        "gtf_initial_el",
        THREE,
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
    runner = pg_runner(
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
    runner = pg_runner(
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
    runner = pg_runner(
        postgres,
        "gtf_migrate",
        THREE,
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
    assert found(postgres, out) == 2


def test_a_maximum_with_quotes_and_backslashes_never_ends_its_literal() -> None:
    """A text maximum taken from the table's data is one literal: quotes doubled, and for
    MySQL (backslash escapes on by default) backslashes doubled, so `x\\' OR 1=1 -- ` stays
    inside its quotes (the statement goes to ExecuteSQL as it is)."""
    value = "x\\' OR 1=1 -- "
    assert _literal(value, False, "MySQL") == "'x\\\\'' OR 1=1 -- '"
    assert _literal(value, False, "PostgreSQL") == "'x\\'' OR 1=1 -- '"
    assert _literal("9", False, "MySQL") == "'9'"
    assert _literal("9", True, "MySQL") == "9"


def test_timestamptz_maximum_is_java_timestamp_text(postgres) -> None:
    """A timestamptz maximum is kept as NiFi's Timestamp.toString in UTC, and its literal
    carries +00 so the generated statement bounds the same instant in any session zone."""
    postgres.execute("drop table if exists gtf_tz")
    postgres.execute("create table gtf_tz (id integer not null, at timestamptz)")
    postgres.execute("insert into gtf_tz values (0, '2026-01-01 01:00:00-05:00')")
    runner = pg_runner_for(postgres, "gtf_tz", **{"Maximum-value Columns": "at"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert runner.state["gtf_tz@!@at"] == "2026-01-01 06:00:00.0"
    assert out.content.decode() == (
        "SELECT * FROM gtf_tz WHERE at <= '2026-01-01 06:00:00.0+00' ORDER BY at LIMIT 10000"
    )
    assert found(postgres, out) == 1
