"""Tests for ControlRate: NiFi's cases, its throttles in state, and held FlowFiles in a run."""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ControlRate, GetFile, SplitText


def _runner(**properties: str) -> TestRunner:
    runner = TestRunner(ControlRate())
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


COUNT_3_PER_SEC = {
    "Rate Control Criteria": "flowfile count",
    "Maximum Rate": "3",
    "Time Duration": "1 sec",
}


def test_file_count_rate() -> None:
    """NiFi's testFileCountRate: 3 pass, the 4th is held until the second is over."""
    runner = _runner(**COUNT_3_PER_SEC)
    for n in range(1, 5):
        runner.enqueue(f"test data {n}")
    runner.run(4, stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("success", 3)
    runner.clear_transfer_state()
    runner.run(50, stop_on_finish=False)
    runner.assert_transfer_count("success", 0)
    runner.assert_queue_not_empty()
    runner.advance_time(1.1)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.assert_queue_empty()


def test_grouping_attribute_keeps_a_throttle_per_group() -> None:
    """NiFi's testFileCountWithGrouping: 3 of group 1 and the one of group 2 pass."""
    runner = _runner(**{**COUNT_3_PER_SEC, "Time Duration": "1 min", "Grouping Attribute": "group"})
    for _ in range(5):
        runner.enqueue("test data", {"group": "1"})
    runner.enqueue("test data", {"group": "2"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 4)
    groups = [f.attributes["group"] for f in runner.flowfiles_for("success")]
    assert sorted(groups) == ["1", "1", "1", "2"]
    assert runner.queue_size() == 2


def test_data_rate_lets_one_overshoot_through_then_penalizes() -> None:
    """NiFi's throttle: the window admits while under the maximum; an overshoot delays the next
    FlowFile by the time the extra bytes would take."""
    runner = _runner(**{"Maximum Rate": "10 B", "Time Duration": "1 sec"})
    runner.enqueue(b"x" * 15)
    runner.enqueue(b"y" * 5)
    runner.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.advance_time(1.1)  # window over, but the 5 bytes too many cost half a second more
    runner.run(stop_on_finish=False)
    runner.assert_transfer_count("success", 1)
    runner.advance_time(0.6)
    runner.run()
    runner.assert_transfer_count("success", 2)


def test_attribute_rate_sends_a_bad_attribute_to_failure() -> None:
    """Attribute value accrues the attribute; a missing or non-positive one goes to failure."""
    runner = _runner(
        **{
            "Rate Control Criteria": "attribute value",
            "Rate Controlled Attribute": "n",
            "Maximum Rate": "10",
            "Time Duration": "1 min",
        }
    )
    runner.enqueue("a", {"n": "6"})
    runner.enqueue("b", {"n": "0"})
    runner.enqueue("c", {"n": "6"})
    runner.enqueue("d", {"n": "1"})
    runner.run(3)
    runner.assert_transfer_count("failure", 1)
    assert [f.attributes["n"] for f in runner.flowfiles_for("success")] == ["6", "6"]
    assert runner.queue_size() == 1  # 12 of 10 passed: d waits


def test_route_to_rate_exceeded() -> None:
    """NiFi 2.x's Route to 'rate exceeded': what the rate refuses goes there, with ROUTE events."""
    runner = _runner(**{**COUNT_3_PER_SEC, "Rate Exceeded Strategy": "Route to 'rate exceeded'"})
    assert "rate exceeded" in runner.processor.relationship_names()
    for n in range(5):
        runner.enqueue(f"{n}")
    runner.run()
    runner.assert_transfer_count("success", 3)
    runner.assert_transfer_count("rate exceeded", 2)
    runner.assert_queue_empty()
    routes = [e.relationship for e in runner.provenance_events if e.event_type.value == "ROUTE"]
    assert routes == ["success"] * 3 + ["rate exceeded"] * 2


def test_hold_flowfile_has_no_rate_exceeded_relationship() -> None:
    """The default strategy holds FlowFiles: 'rate exceeded' is not a relationship then."""
    assert ControlRate().relationship_names() == ("success", "failure")


def test_data_rate_or_flowfile_count_enforces_either() -> None:
    """NiFi 2.x's combined criteria: the count limit stops small FlowFiles under the size one."""
    runner = _runner(
        **{
            "Rate Control Criteria": "data rate or flowfile count",
            "Maximum Data Rate": "1 KB",
            "Maximum FlowFile Rate": "2",
            "Time Duration": "1 min",
        }
    )
    for _ in range(4):
        runner.enqueue(b"x")
    runner.run()
    runner.assert_transfer_count("success", 2)
    assert runner.queue_size() == 2


def test_validation_follows_the_criteria() -> None:
    """Maximum Rate must be a data size for data rate, a count otherwise; attribute value needs
    its attribute; the combined criteria needs both of its maximums."""
    runner = _runner(**{"Maximum Rate": "10"})
    runner.assert_not_valid()  # 10 is no data size
    runner.set_property("Maximum Rate", "10 KB")
    runner.assert_valid()
    runner.set_property("Rate Control Criteria", "flowfile count")
    runner.assert_not_valid()
    runner.set_property("Maximum Rate", "10")
    runner.assert_valid()
    runner.set_property("Rate Control Criteria", "attribute value")
    runner.assert_not_valid()
    runner.set_property("Rate Controlled Attribute", "n")
    runner.assert_valid()
    runner.set_property("Rate Control Criteria", "data rate or flowfile count")
    runner.assert_not_valid()
    runner.set_property("Time Duration", "0.5 sec")
    assert any("Time Duration" in str(p) for p in runner.validation_problems())


def test_the_throttles_are_committed_state() -> None:
    """What passed is in the processor's state, so a new schedule goes on from it."""
    runner = _runner(**COUNT_3_PER_SEC)
    for _ in range(4):
        runner.enqueue("x")
    runner.run()  # stops and schedules again on the next run: only the state carries over
    runner.run()
    runner.assert_transfer_count("success", 3)
    assert any(key != "config" for key in runner.state)


def test_a_batch_run_waits_out_the_window_for_held_flowfiles(tmp_path: Path, runner: str) -> None:
    """Held FlowFiles stay queued and pass as the window allows: the run ends with all of them
    through (2 per second, so 5 take two more windows), none left queued."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("".join(f"{n}\n" for n in range(5)))
    flow = Flow("throttled")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    rate = flow.add(
        ControlRate(rate_control_criteria="flowfile count", maximum_rate=2, time_duration="1 sec"),
        name="rate",
    )
    flow.connect(get, split)
    flow.connect(split, rate, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(rate, ["success", "failure"])
    settings = Settings(sync=False, driver_run_max_flowfiles=0)
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=settings)
    assert result.transfers["rate"]["success"][0] == 5
    assert result.queued == {}
    assert result.elapsed_seconds >= 2
    assert "ControlRate 'rate' triggers serially" in result.plan
