"""PutDatabaseRecord's two-phase commit on Spark: PREPARE in a worker, COMMIT on the driver."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from flowcore import Flow, ProcessContext, Processor, ProcessSession
from flowcore.processor.relationship import SUCCESS
from flowcore.settings import Settings
from processors import GenerateFlowFile
from processors.record_services import JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from repositories.repository_set import RepositorySet
from tests.servers.postgres import PostgresServer

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

ROWS = 3
STALL_SECONDS = 60.0  # the attempt is killed long before; a bound, should the kill not come


class _LostOnce(Processor):
    """Holds up the first Spark task's first attempt after PutDatabaseRecord's PREPARE, for the
    test to kill it (its Python worker is then destroyed); others pass their FlowFiles on.

    Spark retries a killed attempt whatever ``spark.task.maxFailures`` says (a local master
    fails a job at the first failure), so the test shares the suite's session.
    """

    relationships: ClassVar = (SUCCESS,)
    MARKS: ClassVar[str] = ""  # where a first attempt writes its task attempt id

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        from pyspark import TaskContext  # in a Spark worker only

        task = TaskContext.get()
        if task is not None and task.attemptNumber() == 0 and not any(Path(self.MARKS).iterdir()):
            mark = Path(self.MARKS) / f"{task.taskAttemptId()}.tid"
            mark.write_text(str(task.taskAttemptId()))
            time.sleep(STALL_SECONDS)  # killed meanwhile
            msg = "the first attempt was not killed"
            raise RuntimeError(msg)
        session.transfer(flowfile, SUCCESS)


def _prepared(postgres: PostgresServer, prefix: str) -> list[str]:
    """The gids prepared under *prefix*: the server is shared, other tests' are not counted."""
    query = "select gid from pg_prepared_xacts where gid ^@ %s order by gid"
    return [gid for (gid,) in postgres.execute(query, (prefix,))]


def _kill_first_attempts(
    context: Any, marks: Path, postgres: PostgresServer, prefix: str, stop: threading.Event
) -> list[tuple[int, int]]:
    """In a thread: kill each attempt that marks itself; (task attempt id, this repository's
    transactions prepared then)."""
    killed: list[tuple[int, int]] = []

    def watch() -> None:
        while not stop.is_set():
            for mark in marks.glob("*.tid"):
                tid = int(mark.read_text())
                if tid in {k for k, _ in killed}:
                    continue
                killed.append((tid, len(_prepared(postgres, prefix))))
                context._jsc.sc().killTaskAttempt(tid, True, "test: attempt lost after PREPARE")
            stop.wait(0.05)

    threading.Thread(target=watch, name="kill-first-attempts", daemon=True).start()
    return killed


def test_a_task_retried_by_spark_after_prepare_leaves_no_stray_and_no_duplicate(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """On Spark (the suite's session): a task's first attempt dies after PREPARE, Spark retries
    it; the retry's rows are committed by the driver, the dead attempt's prepared transaction
    is rolled back: each row once (a table without a key shows duplicates), none left
    prepared."""
    from flowcore.driver.controller import run_flow
    from flowcore.runners.spark import SparkRunner

    postgres.execute("drop table if exists spark_rows")
    postgres.execute("create table spark_rows (id int, name text)")  # no key: duplicates show
    records = ",".join(f'{{"id": {n}, "name": "row{n}"}}' for n in range(ROWS))
    flow = Flow("prepared-on-spark")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{
            "Database Connection URL": postgres.jdbc_url, "Database User": postgres.user,
        })
    )  # fmt: skip
    flow.add_service(JsonTreeReader("reader"))
    gen = flow.add(GenerateFlowFile(**{"Custom Text": f"[{records}]"}), name="gen")
    put = flow.add(
        PutDatabaseRecord(**{
            "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
            "Table Name": "spark_rows", "Statement Type": "INSERT",
        }),
        name="put",
    )  # fmt: skip
    lost = flow.add(_LostOnce(), name="lost")
    flow.connect(gen, put)
    flow.connect(put, lost, "success")
    flow.auto_terminate(put, ["failure", "retry"])
    flow.auto_terminate(lost, ["success"])
    marks = tmp_path / "marks"
    marks.mkdir()
    _LostOnce.MARKS = str(marks)
    repos = RepositorySet.open(tmp_path / "repo")  # its id, for the gids this test prepares
    try:
        prefix = f"flowcore-{repos.repository_id}-"
    finally:
        repos.close()
    spark = SparkRunner()
    stop = threading.Event()
    killed = _kill_first_attempts(spark.context, marks, postgres, prefix, stop)
    try:
        result = run_flow(
            flow,
            spark,
            repository=tmp_path / "repo",
            settings=Settings(sync=False, driver_run_max_flowfiles=0),
        )
    finally:
        stop.set()
    assert [prepared for _, prepared in killed] == [1]  # one attempt died after its PREPARE
    assert result.count("put", "success") == 1
    assert result.count("lost", "success") == 1
    assert postgres.execute("select id, name from spark_rows order by id") == [
        (n, f"row{n}") for n in range(ROWS)
    ]
    assert _prepared(postgres, prefix) == []
