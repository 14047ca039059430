"""Tests for flowcore.driver.run_result: what a run reports."""

from __future__ import annotations

import pytest

from flowcore.driver.run_result import RunResult, stage_summary, why_stuck
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
        ({"reader": "put", "parked": True}, "processor errors in put (see the bulletins)"),
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
