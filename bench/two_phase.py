"""What exactly-once costs: PutDatabaseRecord's two-phase commit, and after-commit time budgets.

Two measurements, each beside its baseline in the same run (rounds interleaved):

1. ``PutDatabaseRecord`` into PostgreSQL, ``--flowfiles`` JSON FlowFiles of ``--rows`` rows
   each (INSERT, through the test harness, which carries the after-commit action out at
   once): into a cluster with ``max_prepared_transactions=10`` (PREPARE TRANSACTION in the
   trigger, COMMIT PREPARED after it) and into one with PostgreSQL's default 0 (COMMIT in the
   trigger, the at-least-once path). Both clusters run with fsync off (tests/servers/postgres.py):
   on a real disk PREPARE adds a WAL flush per FlowFile.
2. A flow (direct runner): GenerateFlowFile (``--stage-runs`` source batches of one FlowFile)
   into a processor that records one after-commit action per FlowFile taking
   ``--action-seconds`` (a slow remote server): the time until every FlowFile is committed
   with ``after_commit_budget`` 1 hour (each commit waits for its actions, as before the
   budget) and ``100 millis``.

    .venv/bin/python bench/two_phase.py [--flowfiles N] [--rows N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flowcore import Flow, ProcessContext, Processor, ProcessSession
from flowcore.driver.controller import Controller
from flowcore.processor.relationship import SUCCESS
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile
from processors.record_services import JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from repositories.repository_set import RepositorySet
from tests.servers.postgres import postgres_server


def bench_put(server: Any, contents: list[bytes]) -> float:
    """Seconds to write *contents* (one FlowFile each) with PutDatabaseRecord."""
    server.execute("drop table if exists t")
    server.execute("create table t (id bigint primary key, name text, amount double precision)")
    runner = TestRunner(
        PutDatabaseRecord(**{
            "Record Reader": "reader", "Database Connection Pooling Service": "dbcp",
            "Table Name": "t", "Statement Type": "INSERT",
        })
    )  # fmt: skip
    runner.add_service(
        DBCPConnectionPool("dbcp", **{
            "Database Connection URL": server.jdbc_url, "Database User": server.user,
        })
    )  # fmt: skip
    runner.add_service(JsonTreeReader("reader"))
    for content in contents:
        runner.enqueue(content)
    started = time.perf_counter()
    runner.run(len(contents))
    elapsed = time.perf_counter() - started
    runner.assert_all_flowfiles_transferred("success", len(contents))
    return elapsed


class _SlowRemote(Processor):
    """One after-commit action per FlowFile that takes SECONDS (a slow server)."""

    relationships: ClassVar = (SUCCESS,)
    SECONDS: ClassVar = 0.5

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        session.after_commit({"flowfile": flowfile.attributes["uuid"]})
        session.transfer(flowfile, SUCCESS)

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        del context, actions
        time.sleep(type(self).SECONDS)


def bench_budget(budget: str, stage_runs: int) -> tuple[float, int, int]:
    """Seconds until every FlowFile is committed; action batches left pending at the end;
    the stage runs (commits) made."""
    with tempfile.TemporaryDirectory() as directory:
        flow = Flow("slow-remote")
        gen = flow.add(GenerateFlowFile(batch_size=1, file_size="1 B"), name="gen")
        slow = flow.add(_SlowRemote(), name="slow")
        flow.connect(gen, slow)
        flow.auto_terminate(slow, ["success"])
        settings = Settings(
            after_commit_budget=budget,
            unbounded_source_batches=stage_runs,
            batch_max_flowfiles=1,  # one FlowFile, so one action, per stage run
        )
        repos = RepositorySet.open(Path(directory) / "repo", settings)
        try:
            controller = Controller(flow, DirectRunner(), repos, settings)
            started = time.perf_counter()
            controller.sinks.recover()
            controller._loop(False, None, None)  # the micro-batches, without the end-of-run wait
            elapsed = time.perf_counter() - started
            left = controller.sinks.actions.close(0)
            runs = controller._stage_runs
        finally:
            repos.close()
    return elapsed, left, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flowfiles", type=int, default=200)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stage-runs", type=int, default=6)
    parser.add_argument("--action-seconds", type=float, default=0.5)
    args = parser.parse_args()
    contents = [
        json.dumps([
            {"id": f * args.rows + r, "name": f"n{f}-{r}", "amount": r * 0.5}
            for r in range(args.rows)
        ]).encode()
        for f in range(args.flowfiles)
    ]  # fmt: skip
    rows = args.flowfiles * args.rows
    times: dict[str, list[float]] = {"two-phase": [], "in-task commit": []}
    with (
        postgres_server(max_prepared_transactions=10) as prepared,
        postgres_server(max_prepared_transactions=0) as plain,
    ):
        for _ in range(args.repeat):  # interleaved
            times["in-task commit"].append(bench_put(plain, contents))
            times["two-phase"].append(bench_put(prepared, contents))
    _SlowRemote.SECONDS = args.action_seconds
    budgets: dict[str, list[tuple[float, int, int]]] = {"1 hour": [], "100 millis": []}
    for _ in range(args.repeat):
        for budget, results in budgets.items():
            results.append(bench_budget(budget, args.stage_runs))
    report = {
        "put_database_record": {
            name: {
                "best_s": min(v),
                "range_s": [min(v), max(v)],
                "rows_per_s": rows / min(v),
                "flowfiles_per_s": args.flowfiles / min(v),
            }
            for name, v in times.items()
        },
        "after_commit_budget": {
            budget: {
                "best_s": min(t for t, _, _ in v),
                "range_s": [min(t for t, _, _ in v), max(t for t, _, _ in v)],
                "pending_at_end": v[0][1],
                "commits": v[0][2],
            }
            for budget, v in budgets.items()
        },
        "settings": vars(args),
    }
    print(json.dumps(report, indent=2))
    print()
    print(
        f"PutDatabaseRecord, {args.flowfiles} FlowFiles x {args.rows} rows (best of {args.repeat})"
    )
    for name, figures in report["put_database_record"].items():
        low, high = figures["range_s"]
        print(
            f"  {name:15} {figures['flowfiles_per_s']:8.0f} FlowFiles/s "
            f"{figures['rows_per_s']:9.0f} rows/s  ({low:.2f}-{high:.2f} s)"
        )
    print(
        f"{args.stage_runs} source batches, one {args.action_seconds} s after-commit action per "
        f"FlowFile (best of {args.repeat})"
    )
    for budget, figures in report["after_commit_budget"].items():
        low, high = figures["range_s"]
        print(
            f"  budget {budget:11} {figures['commits']} commits done in {low:.2f} s "
            f"({low:.2f}-{high:.2f}); {figures['pending_at_end']} action batches pending then"
        )


if __name__ == "__main__":
    main()
