"""GenerateTableFetch: paged SELECT statements, maxima as state, run by ExecuteSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch


def _runner(path: Path, **props: str) -> TestRunner:
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
    outs[0].assert_attribute_equals("maxvalue.id", "2")
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


def _pg_runner(postgres, table: str, rows: list[str], **props: str) -> TestRunner:
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
    """NiFi's testUseColumnValuesForPartitioning: pages are ranges of the column's values."""
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
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM gtf_values WHERE ID <= 12 AND ID >= 10 AND ID < 12",
        "SELECT * FROM gtf_values WHERE ID <= 12 AND ID >= 12 AND ID < 14",
    ]
