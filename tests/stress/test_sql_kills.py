"""kill -9 of real `flowcore run`s of QueryDatabaseTableRecord -> PutDatabaseRecord (INSERT).

The source's maximum (``src@!@id``) commits with its FlowFiles, so each row enters the flow
once however the run dies; PutDatabaseRecord prepares each FlowFile's INSERT in the task and
commits it (COMMIT PREPARED) after the write-ahead log commit, and a start rolls back what
uncommitted attempts prepared, so a plain INSERT into a table without a key (where a repeat
would show) lands each row exactly once. The table grows between runs; the target ends equal
to an uninterrupted run's, no prepared transaction is left, and the committed SENDs account
for each row exactly once.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet
from tests.servers.postgres import PostgresServer, postgres_server
from tests.stress._flowcore_runs import Moments, commits_of

pytestmark = pytest.mark.stress

ROOT = Path(__file__).resolve().parents[2]
STEPS = 3
ROWS_PER_STEP = 400

FLOW = """
from flowcore import Flow
from processors.record_services import JsonRecordSetWriter, JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from processors.sql.query_database_table_record import QueryDatabaseTableRecord

flow = Flow("sql-kills")
flow.add_service(DBCPConnectionPool("dbcp", **{{"Database Connection URL": "{url}",
                                             "Database User": "postgres"}}))
flow.add_service(JsonRecordSetWriter("writer"))
flow.add_service(JsonTreeReader("reader"))
query = flow.add(QueryDatabaseTableRecord(**{{
    "Database Connection Pooling Service": "dbcp", "Table Name": "src",
    "Maximum-value Columns": "id", "Record Writer": "writer",
    "Max Rows Per Flow File": "50"}}), name="query")
put = flow.add(PutDatabaseRecord(**{{
    "Database Connection Pooling Service": "dbcp", "Record Reader": "reader",
    "Table Name": "dst", "Statement Type": "INSERT"}}), name="put")
flow.connect(query, put, durable=True)
flow.auto_terminate(put, ["success", "failure", "retry"])
"""


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster for this module."""
    with postgres_server() as server:
        yield server


def _database(server: PostgresServer, name: str, workdir: Path) -> None:
    server.execute(f"drop database if exists {name}")
    server.execute(f"create database {name}")
    import psycopg

    with psycopg.connect(
        host=server.host, port=server.port, user=server.user, dbname=name, autocommit=True
    ) as db:
        db.execute("create table src (id int primary key, v text)")
        db.execute("create table dst (id int, v text)")  # no key: a repeat would show
    workdir.mkdir(parents=True)
    url = f"jdbc:postgresql://{server.host}:{server.port}/{name}"
    (workdir / "flow.py").write_text(FLOW.format(url=url))


def _grow(server: PostgresServer, name: str, step: int) -> None:
    import psycopg

    start = step * ROWS_PER_STEP
    with (
        psycopg.connect(
            host=server.host, port=server.port, user=server.user, dbname=name, autocommit=True
        ) as db,
        db.cursor() as cursor,
    ):
        cursor.executemany(
            "insert into src values (%s, %s)",
            [(i, f"v{i}") for i in range(start, start + ROWS_PER_STEP)],
        )


def _rows(server: PostgresServer, name: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(host=server.host, port=server.port, user=server.user, dbname=name) as db:
        return db.execute("select id, v from dst order by id").fetchall()


def _run(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json",
         "--setting", "batch_max_flowfiles=4"],
        cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _sent_rows(workdir: Path) -> int:
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
        sends = [e for e in events if e.event_type.value == "SEND"]
        return sum(int(re.findall(r"\d+", e.details or "0")[0]) for e in sends)
    finally:
        repos.close()


def _prepared(server: PostgresServer, name: str) -> list[tuple]:
    return server.execute(f"select gid from pg_prepared_xacts where database = '{name}'")


@pytest.mark.slow
def test_kill_9_reads_and_inserts_each_row_exactly_once(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """Killed at moments that follow the runs (before and after a first commit) while the table
    grows, then rerun: the target holds exactly the uninterrupted run's rows (INSERT, no key),
    nothing stays prepared, and the committed writes count each row once."""
    _database(postgres, "reference", tmp_path / "reference")
    for step in range(STEPS):
        _grow(postgres, "reference", step)
    started = time.monotonic()
    done = _run(tmp_path / "reference")
    commits = commits_of(done, tmp_path / "reference")
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err.decode()
    assert commits, "the undisturbed run committed nothing"
    duration = time.monotonic() - started
    expected = _rows(postgres, "reference")
    assert len(expected) == STEPS * ROWS_PER_STEP

    _database(postgres, "crashed", tmp_path / "crashed")
    rng = random.Random(5)
    moments = Moments(tmp_path / "crashed", commits)  # following the runs, not the clock
    killed = 0
    for step in range(STEPS):
        _grow(postgres, "crashed", step)
        process = _run(tmp_path / "crashed")
        moments(rng, process)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
            killed += 1
    print(f"killed {killed} of {STEPS} runs; an uninterrupted run took {duration:.1f} s")
    assert killed >= 2, f"only {killed} runs were still going when killed"
    final = _run(tmp_path / "crashed")
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    assert _rows(postgres, "crashed") == expected
    assert _prepared(postgres, "crashed") == _prepared(postgres, "reference") == []
    assert _sent_rows(tmp_path / "crashed") == _sent_rows(tmp_path / "reference") == len(expected)
