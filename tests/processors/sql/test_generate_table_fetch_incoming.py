"""GenerateTableFetch fed by a connection: once per incoming FlowFile, state per table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.processor import ProcessorKind
from flowcore.settings import Settings
from processors import GetFile, PutFile
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch
from tests.processors.sql.gtf_runners import (
    THREE,
    bucket_runner,
    found,
    pg_runner,
    pg_runner_for,
    sqlite_db,
    sqlite_runner,
)


def test_initial_max_value_with_el_and_multiple_tables(postgres) -> None:
    """NiFi's testInitialMaxValueWithELAndMultipleTables: an incoming FlowFile's attributes
    name the table and its initial maximum; each table keeps its own state; the FlowFile is
    dropped."""
    pg_runner(postgres, "gtf_in_one", THREE)
    runner = pg_runner(
        postgres,
        "gtf_in_two",
        THREE,
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
    assert [found(postgres, o) for o in outs] == [1, 1]
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
    runner = pg_runner(
        postgres,
        "gtf_in_el",
        THREE,
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
    bucket_runner(postgres, "gtf_inp_one", [(0, 0), (1, 0)])
    bucket_runner(postgres, "gtf_inp_two", [(0, 0)])
    postgres.execute("drop table if exists gtf_inp_three")
    runner = pg_runner_for(
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
    runner = bucket_runner(
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
    runner = bucket_runner(
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
    bucket_runner(postgres, "gtf_in_types_two", [(1, 0)])
    runner = bucket_runner(
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
    runner = sqlite_runner(
        sqlite_db(tmp_path, range(3)), incoming=True, **{"Maximum-value Columns": "id"}
    )
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}


def test_a_self_loop_feeds_it_in_a_flow(tmp_path: Path) -> None:
    """NiFi's trigger tests hasIncomingConnection(): with only a self-loop (failure) it waits
    per FlowFile, unlike ExecuteSQL; it never runs, nothing is written."""
    flow = Flow("gtf-self-loop")
    db = sqlite_db(tmp_path, range(3))
    flow.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{db}"}))
    fetch = flow.add(
        GenerateTableFetch(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": "TEST_QUERY_DB_TABLE"}
        ),
        name="fetch",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(fetch, fetch, "failure")
    flow.connect(fetch, put, "success")
    flow.auto_terminate(put, ["success", "failure"])
    assert flow.kind_of(fetch) is ProcessorKind.PER_FLOWFILE
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert not (tmp_path / "out").exists()


def test_only_self_loops_log_an_error_when_scheduled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """NiFi's setup: with only self-loops (``setNonLoopConnection(false)``) it logs that the
    failure relationship needs another incoming connection, and waits (nothing queued)."""
    runner = sqlite_runner(sqlite_db(tmp_path, range(3)), incoming=True)
    runner.set_non_loop_connection(False)
    with caplog.at_level("ERROR", logger="flowcore.processors"):
        runner.run()
    runner.assert_transfer_count("success", 0)
    assert "The failure relationship can be used only if there is another incoming" in caplog.text


def test_empty_flowfile_per_incoming_flowfile(tmp_path: Path) -> None:
    """Output Empty FlowFile on Zero Results fed by a connection: each incoming FlowFile
    gets one (NiFi's every trigger), where a source outputs it once until rows come."""
    runner = sqlite_runner(
        sqlite_db(tmp_path, range(0)),
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
