"""Tests for flowcore.driver.run_result: what a run reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.compiler.plan import MemberPlan, Route
from flowcore.driver.run_result import (
    MAX_BULLETIN_LINES,
    MAX_REASON_LINES,
    FailedFlowFiles,
    LoggedReason,
    RunResult,
    failed_flowfiles,
    logged_reasons,
    stage_summary,
    why_stuck,
)
from processors import GenerateFlowFile, PutFile, UpdateAttribute
from repositories.records import Bulletin


def _result(**changes: object) -> RunResult:
    values: dict[str, object] = {
        "flow": "logs",
        "runner": "direct",
        "repository": "/tmp/repo",
        "micro_batches": 2,
        "stage_runs": 3,
        "elapsed_seconds": 1.5,
        "transfers": {"split": {"splits": (15, 1500), "original": (1, 1500)}},
        "received": {"split": 1},
        "provenance_events": 32,
        "queued": {},
        "bulletins": (),
        "plan": "",
    }
    values.update(changes)
    return RunResult(**values)  # type: ignore[arg-type]


def test_count_reads_a_relationships_flowfiles_and_zero_when_never_used() -> None:
    """count() gives FlowFiles per component and relationship, 0 for ones that sent nothing."""
    result = _result()
    assert result.count("split", "splits") == 15
    assert result.count("split", "failure") == 0
    assert result.count("merge", "merged") == 0


def test_summary_lists_transfers_queues_and_bulletins() -> None:
    """summary() names the run, each relationship's FlowFiles and bytes, what is still queued
    and every bulletin."""
    bulletin = Bulletin(0, "c1", "tag", "ERROR", "boom")
    text = _result(queued={"tag -> merge": (4, 400)}, bulletins=(bulletin,)).summary()
    assert text.splitlines()[0] == (
        "flow 'logs' on direct: 2 micro-batch(es), 3 stage run(s) in 1.50 s"
    )
    assert "  split -> original: 1 FlowFiles, 1500 bytes" in text
    assert "  split -> splits: 15 FlowFiles, 1500 bytes" in text
    assert "  provenance events: 32" in text
    assert "  still queued in tag -> merge: 4 FlowFiles, 400 bytes" in text
    assert "  bulletin: tag: boom" in text


def test_a_spark_run_reports_the_session_start_apart_from_the_run() -> None:
    """On Spark the first line gives the session's start and the flow's own time apart, and
    says when the session was reused."""
    started = _result(runner="spark", master="local[2]", start_seconds=2.9).summary()
    assert started.splitlines()[0] == (
        "flow 'logs' on spark (local[2]): session started in 2.90 s; flow ran in 1.50 s: "
        "2 micro-batch(es), 3 stage run(s)"
    )
    reused = _result(runner="spark", master="local[2]", start_seconds=0.0).summary()
    assert reused.splitlines()[0].endswith(
        "session reused; flow ran in 1.50 s: 2 micro-batch(es), 3 stage run(s)"
    )


def test_stage_summary_is_json_ready_data() -> None:
    """stage_summary() turns the result into plain dicts, for --json and the benchmarks."""
    data = stage_summary(_result())
    assert data["flow"] == "logs"
    assert data["transfers"]["split"]["splits"] == (15, 1500)


def test_a_run_with_flowfiles_left_is_not_finished_and_says_why() -> None:
    """finished is False while anything is queued; summary() gives each queue's reason."""
    assert _result().finished
    result = _result(queued={"a -> b": (2, 20)}, stuck={"a -> b": "held in open bins"})
    assert not result.finished
    assert "a -> b: 2 FlowFiles, 20 bytes (held in open bins)" in result.summary()


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"reader": None}, "no connection of the flow reads this queue"),
        ({"reader": "put", "full_outputs": ["put -> log"]}, "put could not run: its output queue"),
        ({"reader": "put", "full_outputs": ["q"], "in_bins": True}, "its open bins included"),
        ({"reader": "put", "parked": True, "failed": True}, "processor errors in put (see the"),
        # parked without an error of its reader: penalized upstream (a failure routed to it)
        ({"reader": "mark", "parked": True}, "penalized past the end of the run"),
        ({"reader": "put", "returned": True, "failed": True}, "processor errors in put"),
        ({"reader": "put", "returned": True}, "penalized past the end of the run"),
        ({"reader": "merge", "in_bins": True}, "held in open bins of merge"),
        ({"reader": "put"}, "not taken by put before the run ended"),
        (
            {"reader": "put", "parked": True, "unscheduled": "on_scheduled raised OSError: x"},
            "put could not be scheduled: on_scheduled raised OSError: x (see the bulletins)",
        ),
    ],
)
def test_why_stuck_names_the_cause_a_user_can_act_on(facts: dict, expected: str) -> None:
    """Each cause reads as a sentence naming the processor and what moves the FlowFiles."""
    reader = facts.pop("reader")
    assert expected in why_stuck(reader, **facts)


def test_a_processor_that_never_scheduled_leaves_the_run_unfinished() -> None:
    """A source whose on_scheduled raised leaves nothing queued, yet the run is not finished;
    summary() says it never ran and why."""
    result = _result(unscheduled={"get": "on_scheduled raised OSError: x"})
    assert not result.finished
    assert "  get never ran: it could not be scheduled: on_scheduled raised OSError: x" in (
        result.summary()
    )


def test_flowfiles_waiting_for_a_disabled_processor_leave_the_run_finished() -> None:
    """What waits for a disabled processor is queued yet intentional: the run is finished."""
    result = _result(
        queued={"gen -[success]-> tag": (2, 10), "a -[x]-> b": (1, 5)},
        disabled={"gen -[success]-> tag": "tag", "a -[x]-> b": "tag"},
    )
    assert result.finished
    assert result.waiting_for_disabled() == {"tag": (3, 15)}
    assert "(waits for disabled tag)" in result.summary()
    assert not _result(queued={"q": (1, 1)}, disabled={}).finished


def test_flowfiles_before_a_funnel_with_no_way_out_leave_the_run_finished() -> None:
    """What waits before a dangling funnel is queued as NiFi keeps it: finished, not stuck,
    totalled per funnel apart from what waits for disabled processors."""
    result = _result(
        queued={"tag -[success]-> hold": (2, 10), "a -[x]-> b": (1, 5)},
        dead_ends={"tag -[success]-> hold": "hold"},
        disabled={"a -[x]-> b": "b"},
    )
    assert result.finished
    assert result.waiting_before_funnels() == {"hold": (2, 10)}
    assert result.waiting_for_disabled() == {"b": (1, 5)}
    assert "(waits before funnel 'hold', no outgoing connection)" in result.summary()
    assert not _result(queued={"q": (1, 1)}, dead_ends={"r": "hold"}).finished


_CANNOT = "Cannot write FlowFile[id={n}, uuid=u{n}, filename=f{n}, size=1]: {why}"
_OVER = "more than 100 warnings in one task; "


def _bulletins(*messages: str, component: str = "c-put", name: str = "put") -> list[Bulletin]:
    return [Bulletin(0, component, name, "ERROR", m) for m in messages]


def test_logged_reasons_groups_alike_messages_and_counts_what_a_task_counted() -> None:
    """Messages alike but for their FlowFile are one reason (the first message kept); a
    bulletin made past a task's limit adds the records it counted."""
    bulletins = _bulletins(
        _CANNOT.format(n=1, why="/a is not a directory"),
        _CANNOT.format(n=2, why="/b is not a directory"),
        _CANNOT.format(n=3, why="/a is not a directory"),
        _OVER + "40 more like this: " + _CANNOT.format(n=9, why="/a is not a directory"),
        _OVER + "7 more with other reasons",
    )
    assert logged_reasons(bulletins) == (
        LoggedReason(_CANNOT.format(n=1, why="/a is not a directory"), 42),
        LoggedReason(_CANNOT.format(n=2, why="/b is not a directory"), 1),
        LoggedReason(None, 7),
    )


def test_failure_lines_give_one_line_per_reason_with_its_flowfiles() -> None:
    """When the processor logged once per failed FlowFile, each reason's line counts its
    FlowFiles; the first reason is the first message, FlowFile and all."""
    failed = FailedFlowFiles(
        "PutFile",
        1452,
        1452,
        (
            LoggedReason(_CANNOT.format(n=1, why="/a is not a directory"), 1000),
            LoggedReason(_CANNOT.format(n=5, why="/b is not a directory"), 452),
        ),
    )
    assert failed.one_per_flowfile
    assert failed.reason == _CANNOT.format(n=1, why="/a is not a directory")
    assert failed.lines("put") == [
        "PutFile 'put': 1000 FlowFile(s) to failure: Cannot write FlowFile[...]: /a is not a "
        "directory",
        "PutFile 'put': 452 FlowFile(s) to failure: Cannot write FlowFile[...]: /b is not a "
        "directory",
    ]


def test_failure_lines_say_how_often_a_reason_was_logged_when_that_is_not_per_flowfile() -> None:
    """A processor that logged once for many FlowFiles (MergeContent's defragment) or not at
    all: the lines give the FlowFiles and, apart, how often each reason was logged."""
    merged = FailedFlowFiles("MergeContent", 30, 300, (LoggedReason("Cannot defragment", 3),))
    assert merged.lines("merge") == [
        "MergeContent 'merge': 30 FlowFile(s) to failure; it logged 3 time(s): Cannot defragment"
    ]
    silent = FailedFlowFiles("FileSplitter", 2, 0)
    assert silent.reason is None
    assert silent.lines("split") == [
        "FileSplitter 'split': 2 FlowFile(s) to failure (it logged no reason; their DROP events "
        "are in provenance)"
    ]


def test_failure_lines_are_bounded_whatever_the_number_of_reasons() -> None:
    """Past MAX_REASON_LINES reasons, and for what a task counted as other reasons, one more
    line sums the rest and points at the bulletins."""
    reasons = tuple(LoggedReason(f"bad {chr(97 + n)}", 1) for n in range(8))
    failed = FailedFlowFiles("ReplaceText", 12, 12, (*reasons, LoggedReason(None, 4)))
    lines = failed.lines("replace")
    assert len(lines) == MAX_REASON_LINES + 1
    assert lines[0] == "ReplaceText 'replace': 1 FlowFile(s) to failure: bad a"
    assert lines[-1] == (
        "ReplaceText 'replace': 7 FlowFile(s) to failure for other reasons: see the bulletins "
        "(flowcore status)"
    )


def _member(name: str, routes: dict[str, tuple[Route, ...]], dropped: set[str]) -> MemberPlan:
    return MemberPlan(f"c-{name}", name, "PutFile", None, routes, frozenset(dropped), True)


def test_failed_flowfiles_counts_only_an_auto_terminated_unconnected_failure() -> None:
    """A failure auto-terminated is reported with its processor's own bulletins as reasons; a
    failure connected somewhere (even if also auto-terminated: NiFi's connection wins) is not,
    and neither is a processor that sent nothing there."""
    members = [
        _member("put", {}, {"success", "failure"}),
        _member("handled", {"failure": (Route("q", "c-mark"),)}, {"success", "failure"}),
        _member("fine", {}, {"success", "failure"}),
    ]
    transfers = {
        "put": {"failure": (3, 30), "success": (1, 10)},
        "handled": {"failure": (5, 50)},
        "fine": {"success": (9, 90)},
    }
    bulletins = [
        *_bulletins("no room", "no room"),
        *_bulletins("x", component="c-handled", name="handled"),
    ]
    assert failed_flowfiles(members, transfers, bulletins) == {
        "put": FailedFlowFiles("PutFile", 3, 30, (LoggedReason("no room", 2),))
    }


def test_failed_flowfiles_counts_failure_and_retry_whatever_their_case() -> None:
    """InvokeHTTP's auto-terminated Failure, Retry and No Retry are counted as lost and named in
    the line; FetchFile's not.found, an outcome a flow may expect, is not."""
    members = [
        _member("enrich", {}, {"Original", "Failure", "Retry", "No Retry"}),
        _member("fetch", {}, {"success", "not.found"}),
    ]
    transfers = {
        "enrich": {"Retry": (3, 30), "No Retry": (1, 5), "Failure": (0, 0), "Original": (4, 35)},
        "fetch": {"not.found": (2, 0)},
    }
    failed = failed_flowfiles(members, transfers, [])
    assert failed == {"enrich": FailedFlowFiles("PutFile", 4, 35, (), ("No Retry", "Retry"))}
    assert failed["enrich"].lines("enrich") == [
        "PutFile 'enrich': 4 FlowFile(s) to No Retry, Retry (it logged no reason; their DROP"
        " events are in provenance)"
    ]


def test_summary_lists_failures_and_bulletins_once_per_reason() -> None:
    """summary() has a `failed:` line per processor and reason, and alike bulletins once with
    their count."""
    bulletins = tuple(_bulletins(*(_CANNOT.format(n=n, why="/a is odd") for n in range(3))))
    failed = {"put": FailedFlowFiles("PutFile", 3, 3, logged_reasons(bulletins))}
    result = _result(bulletins=bulletins, failed=failed)
    text = result.summary()
    assert (
        "  failed: PutFile 'put': 3 FlowFile(s) to failure: Cannot write FlowFile[...]: /a is odd"
        in text
    )
    assert f"  bulletin: put: {_CANNOT.format(n=0, why='/a is odd')} (3 like this)" in text
    assert text.count("bulletin:") == 1
    assert result.finished  # dropped at failure is done with, not unfinished work
    assert stage_summary(result)["failed"]["put"]["count"] == 3


def _failing_flow(tmp_path: Path, *, connected: bool) -> Flow:
    """1,452 FlowFiles PutFile cannot write (its directory is under a file)."""
    tmp_path.mkdir()
    (tmp_path / "file").write_text("not a directory")
    flow = Flow("fails")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=1452), name="gen")
    put = flow.add(
        PutFile(directory=str(tmp_path / "file" / "sub")), name="put", penalty_duration=0
    )
    flow.connect(gen, put)
    flow.auto_terminate(put, "success")
    if connected:
        mark = flow.add(UpdateAttribute(handled="yes"), name="mark")
        flow.connect(put, mark, "failure")
        flow.auto_terminate(mark, "success")
    else:
        flow.auto_terminate(put, "failure")
    return flow


def test_a_run_reports_what_went_to_an_auto_terminated_failure(tmp_path: Path) -> None:
    """flow.run(): result.failed counts PutFile's 1,452 failures with its first reason; the
    same failure connected to another processor is handled, and not reported."""
    flow = _failing_flow(tmp_path / "a", connected=False)
    result = flow.run("direct", repository=tmp_path / "a" / "repo")
    failed = result.failed["put"]
    assert (failed.processor_type, failed.count, failed.size) == ("PutFile", 1452, 1452)
    assert failed.reason is not None
    assert failed.reason.startswith("Cannot write FlowFile[id=1, ")
    assert failed.reason.endswith("file/sub cannot be made; routing to failure")
    assert [r.count for r in failed.reasons] == [1452]
    assert result.failure_lines() == [
        f"PutFile 'put': 1452 FlowFile(s) to failure: Cannot write FlowFile[...]: "
        f"{tmp_path / 'a' / 'file'} is a file, not a directory, so "
        f"{tmp_path / 'a' / 'file' / 'sub'} cannot be made; routing to failure"
    ]
    handled = _failing_flow(tmp_path / "b", connected=True)
    result = handled.run("direct", repository=tmp_path / "b" / "repo")
    assert result.count("mark", "success") == 1452
    assert result.failed == {}
    assert result.finished


def test_a_summary_shows_a_bounded_number_of_distinct_bulletins() -> None:
    """Bulletins all different (a file name in each): MAX_BULLETIN_LINES of them, then one
    line summing the others."""
    bulletins = tuple(_bulletins(*(f"cannot read '{chr(97 + n)}.txt'" for n in range(26))))
    reasons = _result(bulletins=bulletins).bulletin_reasons()["put"]
    assert len(reasons) == MAX_BULLETIN_LINES + 1
    assert reasons[-1] == LoggedReason(None, 26 - MAX_BULLETIN_LINES)
    text = _result(bulletins=bulletins).summary()
    assert f"  bulletin: put: {26 - MAX_BULLETIN_LINES} more, of other reasons" in text
    assert text.count("bulletin:") == MAX_BULLETIN_LINES + 1
