"""ExecuteSQL(Record) without an incoming connection: a source whose triggers run SQL Query."""

from __future__ import annotations

import io
import json
import pickle
import sqlite3
import time
from pathlib import Path

import fastavro
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import ProcessException
from flowcore.processor import ProcessorKind
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import PutFile
from processors.record_services import JsonRecordSetWriter
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.execute_base import AbstractExecuteSQL
from processors.sql.execute_sql import ExecuteSQL
from processors.sql.execute_sql_record import ExecuteSQLRecord

#: NiFi's tests: 250 rows (BATCH_SIZE) read 5 per FlowFile make 50 fragments (FRAGMENT_SIZE).
ROWS = 250
FRAGMENTS = 50
BOTH = pytest.mark.parametrize("cls", [ExecuteSQL, ExecuteSQLRecord], ids=["avro", "record"])


def _db(tmp_path: Path, rows: int = ROWS) -> Path:
    """A SQLite file with NiFi's TEST_NULL_INT holding *rows* rows."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "create table TEST_NULL_INT (id integer not null, val1 integer, val2 integer, "
            "constraint my_pk primary key (id))"
        )
        db.executemany("insert into TEST_NULL_INT values (?, 1, 1)", [(i,) for i in range(rows)])
    return path


def _runner(
    cls: type[AbstractExecuteSQL], path: Path, *, incoming: bool = False, **props: str
) -> TestRunner:
    """*cls* on the SQLite file *path*; without an incoming connection unless *incoming*."""
    writer = {"Record Writer": "json"} if cls is ExecuteSQLRecord else {}
    runner = TestRunner(cls(**{"Database Connection Pooling Service": "dbcp", **writer, **props}))
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    if cls is ExecuteSQLRecord:
        runner.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    runner.set_incoming_connection(incoming)
    return runner


def _rows(cls: type[AbstractExecuteSQL], content: bytes) -> list[dict]:
    """The records of a result FlowFile's content (Avro, or the JSON writer's lines)."""
    if cls is ExecuteSQL:
        return list(fastavro.reader(io.BytesIO(content)))
    return [json.loads(line) for line in content.decode().splitlines()]


def test_kind_depends_on_an_incoming_connection() -> None:
    """A source without an incoming connection, per-FlowFile fed; both forms pickle."""
    processor = ExecuteSQL(**{"SQL Query": "select 1"})
    assert processor.kind_for(False) is ProcessorKind.SOURCE
    assert processor.kind_for(True) is ProcessorKind.PER_FLOWFILE
    fed = pickle.loads(pickle.dumps(processor.with_input(True)))
    assert fed.kind is ProcessorKind.PER_FLOWFILE
    assert fed.same_configuration(processor)
    assert pickle.loads(pickle.dumps(processor.with_input(False))).kind is ProcessorKind.SOURCE


@BOTH
def test_no_incoming_connection(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testNoIncomingConnection: SQL Query's result as one FlowFile with no parent,
    a RECEIVE from the pool's URL, duration = execution + fetch time."""
    runner = _runner(cls, _db(tmp_path), **{"SQL Query": "select * from TEST_NULL_INT"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", str(ROWS))
    out.assert_attribute_equals("executesql.resultset.index", "0")
    out.assert_attribute_not_exists("input.flowfile.uuid")
    out.assert_attribute_not_exists("fragment.identifier")
    execution = int(out.attributes["executesql.query.executiontime"])
    fetch = int(out.attributes["executesql.query.fetchtime"])
    assert int(out.attributes["executesql.query.duration"]) == execution + fetch
    assert len(_rows(cls, out.content)) == ROWS
    (event,) = runner.provenance_events
    assert event.event_type.value == "RECEIVE"
    assert tuple(event.parent_uuids) == ()
    assert event.transit_uri.startswith("jdbc:sqlite:")
    assert event.details == f"Retrieved {ROWS} rows"


@BOTH
def test_each_trigger_runs_the_query_again(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """Run Schedule's triggers each run the query: a row added in between is in the next."""
    path = _db(tmp_path, rows=2)
    runner = _runner(cls, path, **{"SQL Query": "select id from TEST_NULL_INT order by id"})
    runner.run(1, stop_on_finish=False)
    with sqlite3.connect(path) as db:
        db.execute("insert into TEST_NULL_INT values (7, 1, 1)")
    runner.run(2)
    counts = [o.attributes["executesql.row.count"] for o in runner.flowfiles_for("success")]
    assert counts == ["2", "3", "3"]
    last = runner.flowfiles_for("success")[-1]
    assert [r["id"] for r in _rows(cls, last.content)] == [0, 1, 7]
    assert len({o.attributes["uuid"] for o in runner.flowfiles_for("success")}) == 3


@BOTH
def test_incoming_connection_with_no_flowfile_and_no_query(
    tmp_path: Path, cls: type[AbstractExecuteSQL]
) -> None:
    """NiFi's testIncomingConnectionWithNoFlowFile(AndNoQuery): fed but nothing queued, with
    or without SQL Query: scheduled, nothing runs, nothing is routed."""
    path = _db(tmp_path)
    for props in ({"SQL Query": "select * from TEST_NULL_INT"}, {}):
        runner = _runner(cls, path, incoming=True, **props)
        runner.run()
        runner.assert_transfer_count("success", 0)
        runner.assert_transfer_count("failure", 0)
        assert runner.provenance_events == []


@BOTH
def test_no_incoming_connection_and_no_query(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testNoIncomingConnectionAndNoQuery: scheduling fails, naming what is missing."""
    runner = _runner(cls, _db(tmp_path))
    with pytest.raises(ProcessException, match="Either the Select Query must be specified"):
        runner.run()


@BOTH
def test_with_output_batching(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testWithOutputBatching: 50 fragments of 5 rows, fragment.index/identifier, no
    fragment.count (Output Batch Size set)."""
    runner = _runner(
        cls,
        _db(tmp_path),
        **{
            "Max Rows Per Flow File": "5",
            "Output Batch Size": "5",
            "SQL Query": "SELECT * FROM TEST_NULL_INT",
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", FRAGMENTS)
    outs = runner.flowfiles_for("success")
    assert [o.attributes["fragment.index"] for o in outs] == [str(i) for i in range(FRAGMENTS)]
    assert len({o.attributes["fragment.identifier"] for o in outs}) == 1
    for out in (outs[0], outs[-1]):
        out.assert_attribute_equals("executesql.row.count", "5")
        out.assert_attribute_not_exists("fragment.count")
        out.assert_attribute_equals("executesql.resultset.index", "0")


@BOTH
def test_max_rows_per_flowfile(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testMaxRowsPerFlowFile: 50 fragments of 5 rows, each with fragment.count 50."""
    runner = _runner(
        cls,
        _db(tmp_path),
        **{
            "Max Rows Per Flow File": "5",
            "Fetch Size": "5",
            "Output Batch Size": "0",
            "SQL Query": "SELECT * FROM TEST_NULL_INT",
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", FRAGMENTS)
    outs = runner.flowfiles_for("success")
    assert {o.attributes["fragment.count"] for o in outs} == {str(FRAGMENTS)}
    assert {o.attributes["executesql.row.count"] for o in outs} == {"5"}
    outs[-1].assert_attribute_equals("fragment.index", str(FRAGMENTS - 1))
    assert [r["id"] for o in outs for r in _rows(cls, o.content)] == list(range(ROWS))


@BOTH
def test_insert_statement_creates_flowfile(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testInsertStatementCreatesFlowFile: no result set, one empty result FlowFile
    (row count 0), and the row is inserted."""
    path = _db(tmp_path, rows=0)
    runner = _runner(
        cls,
        path,
        **{"SQL Query": "insert into TEST_NULL_INT (id, val1, val2) VALUES (0, NULL, 1)"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", "0")
    assert _rows(cls, out.content) == []
    with sqlite3.connect(path) as db:
        assert db.execute("select count(*) from TEST_NULL_INT").fetchone() == (1,)


@BOTH
def test_with_sql_exception(tmp_path: Path, cls: type[AbstractExecuteSQL]) -> None:
    """NiFi's testWithSqlException: a bad query without input routes nothing; the error is
    logged (a bulletin in a flow) and the processor yields."""
    runner = _runner(cls, _db(tmp_path), **{"SQL Query": "SELECT val9 FROM TEST_NULL_INT"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)
    assert runner.context.yielded


def _flow(path: Path, out: Path, *, query: str | None) -> Flow:
    """ExecuteSQL and ExecuteSQLRecord without input, each into a PutFile of its own."""
    flow = Flow("execute-sql-source")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    flow.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    sql = {"SQL Query": query} if query else {}
    avro = flow.add(
        ExecuteSQL(**{"Database Connection Pooling Service": "dbcp", **sql}), name="avro"
    )
    record = flow.add(
        ExecuteSQLRecord(
            **{"Database Connection Pooling Service": "dbcp", "Record Writer": "json", **sql}
        ),
        name="record",
    )
    for source in (avro, record):
        put = flow.add(PutFile(directory=str(out / source.name)), name=f"put-{source.name}")
        flow.connect(source, put, "success")
        flow.auto_terminate(source, "failure")
        flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_in_a_flow_a_batch_run_runs_the_query_once(tmp_path: Path) -> None:
    """On the direct runner, without input, a batch run runs each query once and ends (one
    result file each); the next run of the same repository runs them again, new rows in."""
    path = _db(tmp_path, rows=3)
    repository = tmp_path / "repo"
    query = "select id from TEST_NULL_INT order by id"
    result = run_flow(
        _flow(path, tmp_path / "out1", query=query),
        "direct",
        repository=repository,
        settings=Settings(sync=False),
    )
    assert result.transfers["avro"] == {"success": (1, result.transfers["avro"]["success"][1])}
    assert result.transfers["record"]["success"][0] == 1
    (avro,) = (tmp_path / "out1" / "avro").iterdir()
    assert [r["id"] for r in _rows(ExecuteSQL, avro.read_bytes())] == [0, 1, 2]
    (record,) = (tmp_path / "out1" / "record").iterdir()
    assert [r["id"] for r in _rows(ExecuteSQLRecord, record.read_bytes())] == [0, 1, 2]
    with sqlite3.connect(path) as db:
        db.execute("insert into TEST_NULL_INT values (3, 1, 1)")
    run_flow(
        _flow(path, tmp_path / "out2", query=query),
        "direct",
        repository=repository,
        settings=Settings(sync=False),
    )
    (avro,) = (tmp_path / "out2" / "avro").iterdir()
    assert [r["id"] for r in _rows(ExecuteSQL, avro.read_bytes())] == [0, 1, 2, 3]


def test_in_a_flow_without_a_query_scheduling_fails(tmp_path: Path) -> None:
    """Without input and without SQL Query, each is unscheduled with NiFi's message as a
    bulletin; nothing runs, and the batch run ends."""
    result = run_flow(
        _flow(_db(tmp_path), tmp_path / "out", query=None),
        "direct",
        repository=tmp_path / "repo",
        settings=Settings(sync=False),
    )
    assert set(result.unscheduled) == {"avro", "record"}
    assert all("Either the Select Query must be specified" in b.message for b in result.bulletins)
    assert result.transfers == {}


def test_in_a_flow_a_failing_query_is_a_bulletin(tmp_path: Path) -> None:
    """NiFi's testWithSqlException in a flow: nothing routed, the database's error an ERROR
    bulletin naming the query; the batch run ends."""
    result = run_flow(
        _flow(_db(tmp_path), tmp_path / "out", query="select val9 from TEST_NULL_INT"),
        "direct",
        repository=tmp_path / "repo",
        settings=Settings(sync=False),
    )
    assert not any(t.get("success") or t.get("failure") for t in result.transfers.values())
    errors = [b for b in result.bulletins if b.level == "ERROR"]
    assert {b.component_name for b in errors} == {"avro", "record"}
    assert all("select val9 from TEST_NULL_INT" in b.message for b in errors)
    assert all("no such column: val9" in b.message for b in errors)


def test_in_a_continuous_run_it_runs_on_its_run_schedule(tmp_path: Path) -> None:
    """A continuous run triggers it again each Run Schedule period (NiFi's "run this query
    every 5 minutes"), each run's result its own FlowFile."""
    flow = Flow("execute-sql-scheduled")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{_db(tmp_path)}"})
    )
    query = flow.add(
        ExecuteSQL(
            **{"Database Connection Pooling Service": "dbcp", "SQL Query": "select 1 as one"}
        ),
        name="query",
        run_schedule="100 millis",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(query, put, "success")
    flow.auto_terminate(query, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    out = tmp_path / "out"

    def written() -> int:
        return len(list(out.iterdir())) if out.exists() else 0

    started = time.monotonic()
    run_flow(
        flow,
        "direct",
        repository=tmp_path / "repo",
        settings=Settings(sync=False, poll_interval="20 ms"),
        continuous=True,
        should_stop=lambda: written() >= 3 or time.monotonic() - started > 60,
    )
    files = sorted(out.iterdir())
    assert len(files) >= 3
    assert all(_rows(ExecuteSQL, f.read_bytes()) == [{"one": 1}] for f in files)


def test_in_a_flow_with_only_a_self_loop_it_runs_as_a_source(tmp_path: Path) -> None:
    """ExecuteSQL -failure-> ExecuteSQL (its only incoming connection a self-loop) runs its
    query on its own, as NiFi's (``hasNonLoopConnection()`` false): one result file."""
    flow = Flow("execute-sql-self-loop")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{_db(tmp_path, 3)}"})
    )
    query = "select id from TEST_NULL_INT order by id"
    sql = flow.add(
        ExecuteSQL(**{"Database Connection Pooling Service": "dbcp", "SQL Query": query}),
        name="query",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(sql, sql, "failure")
    flow.connect(sql, put, "success")
    flow.auto_terminate(put, ["success", "failure"])
    assert flow.kind_of(sql) is ProcessorKind.SOURCE
    assert flow.resolved_processor(sql).kind is ProcessorKind.SOURCE
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    (written,) = (tmp_path / "out").iterdir()
    assert [r["id"] for r in _rows(ExecuteSQL, written.read_bytes())] == [0, 1, 2]


@BOTH
def test_only_self_loops_run_the_query_and_a_looped_flowfile_is_processed(
    tmp_path: Path, cls: type[AbstractExecuteSQL]
) -> None:
    """NiFi's trigger with only self-loops (``setNonLoopConnection(false)``): with nothing
    queued it runs the query on its own (a FETCH: it has an incoming connection); a FlowFile
    come back on the loop is processed."""
    query = {"SQL Query": "select id from TEST_NULL_INT"}
    runner = _runner(cls, _db(tmp_path, 2), incoming=True, **query)
    runner.set_non_loop_connection(False)
    runner.run(1, stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_not_exists("input.flowfile.uuid")
    assert [e.event_type.value for e in runner.provenance_events] == ["FETCH"]
    looped = runner.enqueue(b"", {"looped": "yes"})
    runner.run(1)
    runner.assert_all_flowfiles_transferred("success", 2)
    second = runner.flowfiles_for("success")[1]
    second.assert_attribute_equals("input.flowfile.uuid", looped.attributes["uuid"])
    second.assert_attribute_equals("looped", "yes")


def test_only_self_loops_and_no_query_is_refused_when_scheduled(tmp_path: Path) -> None:
    """With only self-loops nothing brings a query before it runs on its own: scheduling
    fails with NiFi's message and the reason."""
    runner = _runner(ExecuteSQL, _db(tmp_path), incoming=True)
    runner.set_non_loop_connection(False)
    with pytest.raises(ProcessException, match=r"Either the Select Query.*loop back to it"):
        runner.run()


def test_a_flowfile_come_back_on_its_self_loop_is_processed(tmp_path: Path) -> None:
    """Run as a source, a result looped back on success is taken per FlowFile, as NiFi's
    trigger takes it: its query (an attribute makes it fail) routes it to failure, not lost."""
    flow = Flow("execute-sql-looped")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{_db(tmp_path, 3)}"})
    )
    query = (
        "select id from TEST_NULL_INT "
        "${executesql.row.count:isNull():not():ifElse('where no_such_column', '')}"
    )
    sql = flow.add(
        ExecuteSQL(**{"Database Connection Pooling Service": "dbcp", "SQL Query": query}),
        name="query",
        penalty_duration="0 sec",  # the failed FlowFile, penalized as NiFi's, passes at once
    )
    results = flow.add(PutFile(directory=str(tmp_path / "out")), name="results")
    failed = flow.add(PutFile(directory=str(tmp_path / "failed")), name="failed")
    flow.connect(sql, sql, "success")
    flow.connect(sql, results, "success")
    flow.connect(sql, failed, "failure")
    for put in (results, failed):
        flow.auto_terminate(put, ["success", "failure"])
    assert flow.kind_of(sql) is ProcessorKind.SOURCE
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.queued == {}
    (written,) = (tmp_path / "out").iterdir()
    assert [r["id"] for r in _rows(ExecuteSQL, written.read_bytes())] == [0, 1, 2]
    (looped,) = (tmp_path / "failed").iterdir()
    assert looped.read_bytes() == written.read_bytes()
