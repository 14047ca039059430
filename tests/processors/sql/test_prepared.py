"""PutDatabaseRecord's two-phase commit into PostgreSQL (PREPARE TRANSACTION, COMMIT PREPARED)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from flowcore import ProcessContext, Processor, ProcessSession
from flowcore.errors import AfterCommitRetry
from flowcore.processor.relationship import SUCCESS
from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader
from processors.sql import prepared
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from tests.servers.postgres import PostgresServer, postgres_server
from tests.servers.tcp_proxy import tcp_proxy

_REAL_ACTIONS = PutDatabaseRecord.run_after_commit_actions


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> list[Mapping[str, Any]]:
    """The harness's after-commit actions, held back (as a crash after the WAL commit would)."""
    actions: list[Mapping[str, Any]] = []

    def hold(self: Any, context: Any, payloads: Sequence[Mapping[str, Any]]) -> None:
        del self, context
        actions.extend(payloads)

    monkeypatch.setattr(PutDatabaseRecord, "run_after_commit_actions", hold)
    return actions


@pytest.fixture
def table(postgres: PostgresServer) -> Iterator[str]:
    """An empty ``persons`` table; no prepared transaction left behind."""
    postgres.execute("drop table if exists persons")
    postgres.execute("create table persons (id int primary key, name text)")
    yield "persons"
    for (gid,) in postgres.execute("select gid from pg_prepared_xacts"):
        postgres.execute(f"rollback prepared '{gid}'")


def _runner(url: str, port_user: str = "postgres") -> TestRunner:
    runner = TestRunner(
        PutDatabaseRecord(**{
            "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
            "Table Name": "persons", "Statement Type": "INSERT",
        })
    )  # fmt: skip
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": url, "Database User": port_user})
    )
    runner.add_service(JsonTreeReader("reader"))
    return runner


def _prepared_gids(postgres: PostgresServer) -> list[str]:
    return [g for (g,) in postgres.execute("select gid from pg_prepared_xacts order by gid")]


def _commit(runner: TestRunner, actions: Sequence[Mapping[str, Any]]) -> None:
    _REAL_ACTIONS(runner.processor, runner.context, actions)


def test_rows_are_visible_only_after_the_after_commit_action(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """The task prepares; the rows appear with COMMIT PREPARED, once, however often it runs."""
    runner = _runner(postgres.jdbc_url)
    runner.enqueue(b'[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]')
    runner.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("success", 1)
    assert [a["op"] for a in held] == ["commit_prepared"]
    gid = held[0]["gid"]
    assert gid.startswith(prepared.gid_prefix(runner.context.component))
    assert _prepared_gids(postgres) == [gid]
    assert postgres.execute(f"select count(*) from {table}") == [(0,)]
    _commit(runner, held)
    _commit(runner, held)  # a start-up after a crash does it again: already done
    assert postgres.execute(f"select id, name from {table} order by id") == [(1, "a"), (2, "b")]
    assert _prepared_gids(postgres) == []


def test_a_sweep_touches_only_its_own_repository_and_component(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """Two repositories (same component id) against one database: one restarts and rolls back
    its uncommitted attempt while the other's prepared transaction is in flight, untouched."""
    first, second = _runner(postgres.jdbc_url), _runner(postgres.jdbc_url)
    assert first.context.component.id == second.context.component.id
    first.enqueue(b'[{"id": 1, "name": "first"}]')
    first.run(stop_on_finish=False)
    second.enqueue(b'[{"id": 2, "name": "second"}]')
    second.run(stop_on_finish=False)
    first_gid, second_gid = (a["gid"] for a in held)
    assert sorted(_prepared_gids(postgres)) == sorted([first_gid, second_gid])
    first.processor.settle_after_commit_actions(first.context, [])  # its attempt never committed
    assert _prepared_gids(postgres) == [second_gid]
    _commit(second, held[1:])
    assert postgres.execute(f"select id, name from {table}") == [(2, "second")]


def test_a_sweep_keeps_what_the_log_says_was_committed(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """At start-up the pending actions' gids stay prepared (to be committed), others go."""
    runner = _runner(postgres.jdbc_url)
    runner.enqueue(b'[{"id": 1, "name": "committed"}]')
    runner.enqueue(b'[{"id": 2, "name": "never"}]')
    runner.run(2, stop_on_finish=False)
    kept, dropped = held
    runner.processor.settle_after_commit_actions(runner.context, [kept])
    assert _prepared_gids(postgres) == [kept["gid"]]
    engine = runner.context.service_lookup("dbcp").engine()
    with engine.connect() as pooled:  # the sweep's statement_timeout is not left behind
        assert pooled.exec_driver_sql("SHOW statement_timeout").scalar() == "0"
    assert dropped["gid"] != kept["gid"]
    _commit(runner, [kept])
    assert postgres.execute(f"select id, name from {table}") == [(1, "committed")]


def test_commit_prepared_is_retried_then_left_pending_never_rolled_back(
    postgres: PostgresServer, table: str, held: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection is lost after the WAL commit: COMMIT PREPARED is tried a bounded number
    of times, then AfterCommitRetry keeps it pending; the next start's sweep keeps it and
    its commit makes the rows visible."""
    monkeypatch.setattr(prepared, "BACKOFF_SECONDS", 0.01)
    with tcp_proxy(postgres.host, postgres.port) as proxy:
        url = f"jdbc:postgresql://127.0.0.1:{proxy.port}/{postgres.database}"
        runner = _runner(url)
        runner.enqueue(b'[{"id": 1, "name": "a"}]')
        runner.run(stop_on_finish=False)
        proxy.cut()
        with pytest.raises(AfterCommitRetry, match="after 4 tries"):
            _commit(runner, held)
        assert _prepared_gids(postgres) == [held[0]["gid"]]
        proxy.restore()
        runner.processor.settle_after_commit_actions(runner.context, held)  # the next start
        assert _prepared_gids(postgres) == [held[0]["gid"]]
        _commit(runner, held)
    assert postgres.execute(f"select id, name from {table}") == [(1, "a")]
    assert _prepared_gids(postgres) == []


def test_without_max_prepared_transactions_it_commits_in_the_task_and_warns_once(
    caplog: pytest.LogCaptureFixture, held: list
) -> None:
    """PostgreSQL's default max_prepared_transactions=0: the old path (rows committed in the
    task, no action), and one warning naming the setting."""
    with postgres_server(max_prepared_transactions=0) as server:
        server.execute("create table persons (id int primary key, name text)")
        runner = _runner(server.jdbc_url)
        runner.enqueue(b'[{"id": 1, "name": "a"}]')
        runner.enqueue(b'[{"id": 2, "name": "b"}]')
        with caplog.at_level(logging.WARNING):
            runner.run(2)
        runner.assert_all_flowfiles_transferred("success", 2)
        assert held == []
        assert server.execute("select count(*) from persons") == [(2,)]
    warnings = [
        r.getMessage() for r in caplog.records if "max_prepared_transactions" in r.getMessage()
    ]
    assert len(warnings) == 1
    assert "at-least-once" in warnings[0]


def test_gids_are_scoped_and_checked() -> None:
    """A gid carries the repository id and the component's digest; nothing else is spliced."""
    from flowcore.session.host import ComponentInfo

    one = prepared.gid_prefix(ComponentInfo("put", "PutDatabaseRecord", "put", "ab12"))
    other = prepared.gid_prefix(ComponentInfo("put", "PutDatabaseRecord", "put", "cd34"))
    renamed = prepared.gid_prefix(ComponentInfo("put2", "PutDatabaseRecord", "put2", "ab12"))
    assert len({one, other, renamed}) == 3
    assert prepared.gid_prefix(ComponentInfo("put", "PutDatabaseRecord", "put")) is None
    assert prepared.new_gid(one).startswith(one)
    with pytest.raises(ValueError, match="not a flowcore gid"):
        prepared.prepare(None, "x'; drop table persons; --")


def test_when_the_server_holds_its_limit_the_flowfile_waits_queued(
    postgres: PostgresServer,
    table: str,
    held: list,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """max_prepared_transactions (10 here) taken by FlowFiles not yet committed: the next one
    is rolled back and stays queued, and the processor yields; nothing fails; one warning
    (a bulletin) says why, not one per FlowFile."""
    from processors.sql import put_database_record

    monkeypatch.setattr(put_database_record, "_try_later_warned", {})
    runner = _runner(postgres.jdbc_url)
    for n in range(12):
        runner.enqueue(f'[{{"id": {n}, "name": "r{n}"}}]'.encode())
    runner.run(12, stop_on_finish=False)
    runner.assert_transfer_count("success", 10)
    runner.assert_transfer_count("failure", 0)
    assert runner.queue_size() == 2
    assert runner.context.yielded
    warned = [r for r in caplog.records if "wait queued" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].levelno == logging.WARNING
    _commit(runner, held)
    assert postgres.execute(f"select count(*) from {table}") == [(10,)]
    assert _prepared_gids(postgres) == []


def test_a_flow_rolls_back_its_strays_at_start_and_after_each_commit(
    postgres: PostgresServer, table: str, tmp_path
) -> None:
    """A run on a repository whose earlier run died after PREPARE: its start rolls back that
    stray (its own prefix) and leaves another repository's alone; one a lost attempt leaves
    during the run goes after the stage run's commit; the row is committed once."""
    from flowcore import Flow
    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from flowcore.session.host import ComponentInfo
    from processors import GenerateFlowFile
    from repositories.repository_set import RepositorySet

    flow = Flow("prepared")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{
            "Database Connection URL": postgres.jdbc_url, "Database User": postgres.user,
        })
    )  # fmt: skip
    flow.add_service(JsonTreeReader("reader"))
    gen = flow.add(
        GenerateFlowFile(**{"Custom Text": '[{"id": 1, "name": "once"}]', "Batch Size": "1"}),
        name="gen",
    )
    put = flow.add(
        PutDatabaseRecord(**{
            "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
            "Table Name": table, "Statement Type": "INSERT",
        }),
        name="put",
    )  # fmt: skip
    flow.connect(gen, put)
    flow.auto_terminate(put, ["success", "failure", "retry"])

    def stray(gid: str, number: int) -> None:
        with postgres.connect() as db:
            db.autocommit = False
            db.execute(f"insert into {table} values ({number}, 'stray')")
            db.execute(f"prepare transaction '{gid}'")

    repos = RepositorySet.open(tmp_path / "repo")
    try:
        component = flow.component("put").id
        own = prepared.gid_prefix(ComponentInfo(component, "", "", repos.repository_id))
        other = prepared.new_gid(
            prepared.gid_prefix(ComponentInfo(component, "", "", "0123456789abcdef"))
        )
        stray(prepared.new_gid(own), 10)  # an earlier run's attempt that never committed
        stray(other, 11)  # another repository's, in flight
        controller = Controller(flow, DirectRunner(), repos)
        controller.sinks.recover()
        assert _prepared_gids(postgres) == [other]
        stray(prepared.new_gid(own), 12)  # an attempt of this run, lost (a Spark executor)
        for stage in controller.compiled.stages:
            controller.run_stage(stage)
        controller.sinks.release()
        controller.close()
    finally:
        repos.close()
    assert postgres.execute(f"select id, name from {table}") == [(1, "once")]
    assert _prepared_gids(postgres) == [other]  # another repository's: untouched


def test_a_lock_held_by_a_stray_makes_the_flowfile_wait_not_hang(
    postgres: PostgresServer, table: str, held: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead attempt's prepared transaction holds the row's lock: the rerun's INSERT waits
    LOCK_TIMEOUT, then its FlowFile stays queued (the processor yields) instead of hanging;
    once the stray is rolled back it goes through."""
    monkeypatch.setattr(prepared, "LOCK_TIMEOUT", "100ms")
    runner = _runner(postgres.jdbc_url)
    stray = prepared.new_gid(prepared.gid_prefix(runner.context.component))
    with postgres.connect() as db:
        db.autocommit = False
        db.execute(f"insert into {table} values (1, 'stray')")
        db.execute(f"prepare transaction '{stray}'")
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    runner.run(stop_on_finish=False)
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("retry", 0)
    assert runner.queue_size() == 1
    assert runner.context.yielded
    runner.processor.settle_after_commit_actions(runner.context, [])
    runner.context.yielded = False
    runner.run(stop_on_finish=False, initialize=False)
    runner.assert_all_flowfiles_transferred("success", 1)
    _commit(runner, held)
    assert postgres.execute(f"select id, name from {table}") == [(1, "a")]


class _LoseTheDatabase(Processor):
    """Cuts the loopback proxy to PostgreSQL in the task, after PutDatabaseRecord's PREPARE."""

    relationships: ClassVar = (SUCCESS,)
    PROXY: ClassVar[Any] = None

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        type(self).PROXY.cut()
        session.transfer(flowfile, SUCCESS)


def test_a_commit_prepared_lost_after_the_wal_commit_is_committed_at_the_next_start(
    postgres: PostgresServer, table: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database goes away between the task's PREPARE and the driver's COMMIT PREPARED: the
    bounded retries fail, the action stays pending in the repository (the transaction stays
    prepared, not rolled back), and the next start commits it: the row lands once."""
    from flowcore import Flow
    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from processors import GenerateFlowFile
    from repositories.repository_set import RepositorySet

    monkeypatch.setattr(prepared, "BACKOFF_SECONDS", 0.01)
    with tcp_proxy(postgres.host, postgres.port) as proxy:
        _LoseTheDatabase.PROXY = proxy
        url = f"jdbc:postgresql://127.0.0.1:{proxy.port}/{postgres.database}"
        flow = Flow("lost")
        flow.add_service(
            DBCPConnectionPool("dbcp", **{
                "Database Connection URL": url, "Database User": postgres.user,
            })
        )  # fmt: skip
        flow.add_service(JsonTreeReader("reader"))
        gen = flow.add(
            GenerateFlowFile(**{"Custom Text": '[{"id": 1, "name": "once"}]', "Batch Size": "1"}),
            name="gen",
        )
        put = flow.add(
            PutDatabaseRecord(**{
                "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
                "Table Name": table, "Statement Type": "INSERT",
            }),
            name="put",
        )  # fmt: skip
        lose = flow.add(_LoseTheDatabase(), name="lose")
        flow.connect(gen, put)
        flow.connect(put, lose, "success")
        flow.auto_terminate(put, ["failure", "retry"])
        flow.auto_terminate(lose, ["success"])
        repos = RepositorySet.open(tmp_path / "repo")
        try:
            result = Controller(flow, DirectRunner(), repos).run()
            assert result.count("put", "success") == 1
            assert len(list(Path(repos.paths.effects).glob("*.actions"))) == 1
            assert len(_prepared_gids(postgres)) == 1  # kept prepared, not rolled back
            assert postgres.execute(f"select count(*) from {table}") == [(0,)]
            proxy.restore()
            restarted = Controller(flow, DirectRunner(), repos)
            restarted.sinks.recover()  # the next start
            restarted.sinks.release()
            assert list(Path(repos.paths.effects).glob("*.actions")) == []
        finally:
            repos.close()
    assert postgres.execute(f"select id, name from {table}") == [(1, "once")]
    assert _prepared_gids(postgres) == []


def test_commit_prepared_never_gives_up_on_an_error_of_the_statement_or_the_pool(
    postgres: PostgresServer, table: str, held: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error that is not the connection's (42501, 57014, ...) or an unreachable pool (a
    service disabled in an edited flow) keeps the action pending (AfterCommitRetry): its
    FlowFile is committed, so its transaction must never be dropped and then swept."""
    runner = _runner(postgres.jdbc_url)
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    runner.run(stop_on_finish=False)
    real = prepared._finish

    def refuse(connection: Any, verb: str, gid: str) -> None:
        if verb == "COMMIT":
            msg = "permission denied (42501)"
            raise RuntimeError(msg)
        real(connection, verb, gid)

    monkeypatch.setattr(prepared, "_finish", refuse)
    with pytest.raises(AfterCommitRetry, match="42501"):
        _commit(runner, held)
    monkeypatch.setattr(prepared, "_finish", real)
    lookup, runner.context.service_lookup = runner.context.service_lookup, None
    with pytest.raises(AfterCommitRetry, match="cannot reach its Database Connection"):
        _commit(runner, held)
    runner.context.service_lookup = lookup
    assert _prepared_gids(postgres) == [held[0]["gid"]]
    _commit(runner, held)
    assert postgres.execute(f"select id, name from {table}") == [(1, "a")]


def _statement_timeout(*_: Any) -> None:
    msg = "canceling statement due to statement timeout (57014)"
    raise RuntimeError(msg)


def _lost_flow(url: str, table: str, *, with_put: bool = True) -> Any:
    """gen -> put -> lose (cuts the database after the PREPARE); without put: gen -> lose."""
    from flowcore import Flow
    from processors import GenerateFlowFile

    flow = Flow("lost")
    flow.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": url, "Database User": "postgres"})
    )
    flow.add_service(JsonTreeReader("reader"))
    gen = flow.add(
        GenerateFlowFile(**{"Custom Text": '[{"id": 1, "name": "once"}]', "Batch Size": "1"}),
        name="gen",
    )
    lose = flow.add(_LoseTheDatabase(), name="lose")
    flow.auto_terminate(lose, ["success"])
    if not with_put:
        flow.connect(gen, lose)
        return flow
    put = flow.add(
        PutDatabaseRecord(**{
            "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
            "Table Name": table, "Statement Type": "INSERT",
        }),
        name="put",
    )  # fmt: skip
    flow.connect(gen, put)
    flow.connect(put, lose, "success")
    flow.auto_terminate(put, ["failure", "retry"])
    return flow


@pytest.mark.parametrize("how", ["processor_removed_for_one_start", "commit_refused_for_a_start"])
def test_a_committed_row_is_never_rolled_back_by_a_later_sweep(
    postgres: PostgresServer, table: str, tmp_path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A COMMIT PREPARED left pending survives a start without the processor in the flow, or
    one where COMMIT PREPARED fails with a statement error: its pending file stays, the sweeps
    spare its gid, and a later start commits the row (it was rolled back before the fix)."""
    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from flowcore.settings import Settings
    from repositories.repository_set import RepositorySet

    monkeypatch.setattr(prepared, "BACKOFF_SECONDS", 0.01)
    settings = Settings(after_commit_budget="200 ms")
    with tcp_proxy(postgres.host, postgres.port) as proxy:
        _LoseTheDatabase.PROXY = proxy
        url = f"jdbc:postgresql://127.0.0.1:{proxy.port}/{postgres.database}"
        flow = _lost_flow(url, table)
        repos = RepositorySet.open(tmp_path / "repo")
        try:
            result = Controller(flow, DirectRunner(), repos, settings).run()
            assert result.count("put", "success") == 1  # the WAL says: written
            assert result.pending_after_commit == 1
            assert "after-commit: 1 action batch(es)" in result.summary()
            proxy.restore()
            second = flow
            if how == "processor_removed_for_one_start":
                second = _lost_flow(url, table, with_put=False)
            else:
                monkeypatch.setattr(prepared, "_finish", _statement_timeout)
            start = Controller(second, DirectRunner(), repos, settings)
            start.sinks.recover()
            start.sinks.release()
            monkeypatch.undo()
            assert len(list(Path(repos.paths.effects).glob("*.actions"))) == 1
            assert len(_prepared_gids(postgres)) == 1  # spared by both sweeps
            start = Controller(flow, DirectRunner(), repos, settings)
            start.sinks.recover()
            start.sinks.release()
            assert list(Path(repos.paths.effects).glob("*.actions")) == []
        finally:
            repos.close()
    assert postgres.execute(f"select id, name from {table}") == [(1, "once")]
    assert _prepared_gids(postgres) == []


def test_a_copied_repository_running_at_once_is_refused_not_swept(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """Two processes with one repository id (cp -a, or a copy at the same path on another
    host): the one that runs holds an advisory lock; the other's sweep is refused with a
    ConfigurationError naming the copy (at the same path, too), and rolls back
    nothing of the first's prepared transactions."""
    from flowcore.errors import ConfigurationError

    runner = _runner(postgres.jdbc_url)
    runner.enqueue(b'[{"id": 1, "name": "first"}]')
    runner.run(stop_on_finish=False)  # the first copy's row, prepared, its action pending
    key = prepared.repository_lock_key(runner.context.component.repository_id)
    with postgres.connect() as other:  # the first copy's process, which holds the lock
        other.autocommit = True
        assert other.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (True,)
        with pytest.raises(ConfigurationError, match="a copy of it started at the same path"):
            runner.processor.settle_after_commit_actions(runner.context, [])
        assert _prepared_gids(postgres) == [held[0]["gid"]]
        # the first copy's process ends: its lock goes (unlocked here: the server ends a closed
        # session's locks when it gets to it, which may be after this test's next statement)
        other.execute("select pg_advisory_unlock(%s)", (key,))
    runner.processor.settle_after_commit_actions(runner.context, held)  # it is gone: holds it
    _commit(runner, held)
    assert postgres.execute(f"select id, name from {table}") == [(1, "first")]


def _end_the_lock_holder(postgres: PostgresServer, key: int) -> None:
    """End the session holding advisory lock *key* (a restart, an idle timeout, a DBA)."""
    (ended,) = postgres.execute(
        "select count(pg_terminate_backend(pid)) from pg_locks where locktype = 'advisory' "
        "and granted and classid = ((%s >> 32) & 4294967295)::oid "
        "and objid = (%s & 4294967295)::oid and objsubid = 1",
        (key, key),
    )
    assert ended == (1,)


def test_a_repository_lock_lost_with_its_session_is_checked_and_taken_again(
    postgres: PostgresServer, table: str
) -> None:
    """The advisory lock's session ends under it: the next sweep sees the lock gone (the
    connection does not say so), takes it again so a copy is refused; if a copy took it
    meanwhile, the sweep is refused instead of running unlocked."""
    from flowcore.errors import ConfigurationError

    runner = _runner(postgres.jdbc_url)
    runner.run(stop_on_finish=False)  # started: its pool enabled
    runner.context.service_lookup = runner.controller_service  # as the driver's context
    runner.processor.settle_after_commit_actions(runner.context, [])  # takes the lock
    key = prepared.repository_lock_key(runner.context.component.repository_id)
    _end_the_lock_holder(postgres, key)
    runner.processor.settle_after_commit_actions(runner.context, [])  # takes it again
    with postgres.connect() as other:  # a copy starting now is refused
        other.autocommit = True
        assert other.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (False,)
    _end_the_lock_holder(postgres, key)
    with postgres.connect() as other:  # a copy takes it while this process's session is gone
        other.autocommit = True
        assert other.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (True,)
        with pytest.raises(ConfigurationError, match="another host or in another container"):
            runner.processor.settle_after_commit_actions(runner.context, [])
        other.execute("select pg_advisory_unlock(%s)", (key,))  # as its session's end (above)
    runner.processor.settle_after_commit_actions(runner.context, [])  # the copy is gone


def test_a_copy_of_a_repository_never_rolls_back_what_the_original_will_commit(
    postgres: PostgresServer, table: str, tmp_path, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """cp -r of a crashed run's repository, started after the original ran on: the copy takes a
    new id, commits what its own pending file names (the original's old id), and leaves the
    original's later prepared transaction (pending in the original only) alone, with a
    warning; the original's next start commits it: each of its rows lands once."""
    import shutil

    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from flowcore.settings import Settings
    from repositories.repository_set import RepositorySet

    del table  # its teardown rolls back what a failure leaves prepared
    postgres.execute("drop table if exists copied")
    postgres.execute("create table copied (id int, name text)")  # no key: duplicates show
    monkeypatch.setattr(prepared, "BACKOFF_SECONDS", 0.01)
    settings = Settings(after_commit_budget="200 ms")
    original, copy = tmp_path / "original", tmp_path / "copy"

    def start(directory: Path, flow: Any, *, run: bool) -> str:
        repos = RepositorySet.open(directory)
        try:
            controller = Controller(flow, DirectRunner(), repos, settings)
            if run:
                assert controller.run().pending_after_commit == 1  # the database cut
            else:
                controller.sinks.recover()
                controller.sinks.release()
            return repos.repository_id
        finally:
            repos.close()

    with tcp_proxy(postgres.host, postgres.port) as proxy:
        _LoseTheDatabase.PROXY = proxy
        url = f"jdbc:postgresql://127.0.0.1:{proxy.port}/{postgres.database}"
        flow = _lost_flow(url, "copied")
        first_id = start(original, flow, run=True)  # crashes with a COMMIT PREPARED pending
        shutil.copytree(original, copy)
        proxy.restore()
        assert start(original, flow, run=True) == first_id  # commits it; one more pending
        proxy.restore()
        [later] = _prepared_gids(postgres)
        assert later.startswith(f"flowcore-{first_id}-")
        with caplog.at_level(logging.WARNING, logger="flowcore"):
            copy_id = start(copy, flow, run=False)
        assert copy_id != first_id
        assert _prepared_gids(postgres) == [later]  # the original's: not the copy's to judge
        assert any(later in r.getMessage() for r in caplog.records)
        assert start(original, flow, run=False) == first_id  # commits it
    assert postgres.execute("select id, name from copied") == [(1, "once"), (1, "once")]
    assert _prepared_gids(postgres) == []


def test_a_repository_restored_in_place_keeps_its_id_and_rolls_back_its_strays(
    postgres: PostgresServer, table: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository restored from a backup into its own path (another inode) keeps its id: the
    prepared transaction its restored log does not name is rolled back at start, not left
    holding its row's locks under an id no one sweeps."""
    import shutil

    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from flowcore.settings import Settings
    from repositories.repository_set import RepositorySet

    del table  # its teardown rolls back what a failure leaves prepared
    postgres.execute("drop table if exists restored")
    postgres.execute("create table restored (id int, name text)")
    monkeypatch.setattr(prepared, "BACKOFF_SECONDS", 0.01)
    settings = Settings(after_commit_budget="200 ms")
    repo = tmp_path / "repo"

    def start(flow: Any, *, run: bool) -> tuple[str, tuple[str, ...]]:
        repos = RepositorySet.open(repo)
        try:
            if flow is not None:
                controller = Controller(flow, DirectRunner(), repos, settings)
                if run:
                    assert controller.run().pending_after_commit == 1  # the database cut
                else:
                    controller.sinks.recover()
                    controller.sinks.release()
            return repos.repository_id, repos.former_repository_ids
        finally:
            repos.close()

    first_id, _ = start(None, run=False)
    shutil.copytree(repo, tmp_path / "backup")  # the backup, before the run below
    with tcp_proxy(postgres.host, postgres.port) as proxy:
        _LoseTheDatabase.PROXY = proxy
        url = f"jdbc:postgresql://127.0.0.1:{proxy.port}/{postgres.database}"
        flow = _lost_flow(url, "restored")
        start(flow, run=True)  # crashes with a COMMIT PREPARED pending (in this log only)
        proxy.restore()
        [stray] = _prepared_gids(postgres)
        assert stray.startswith(f"flowcore-{first_id}-")
        (tmp_path / "repo").rename(tmp_path / "damaged")  # the damaged one set aside
        shutil.copytree(tmp_path / "backup", repo)  # restored in place: another inode
        assert start(flow, run=False) == (first_id, ())  # its sweep: the stray is its own
    assert _prepared_gids(postgres) == []
    assert postgres.execute("select id, name from restored") == []
