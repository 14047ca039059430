"""Tests for the TestRunner harness and its NiFi mock semantics."""

from __future__ import annotations

import re

import pytest

from flowcore import Processor, Relationship
from flowcore.errors import InvalidProcessorError
from flowcore.properties import PropertyDescriptor
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR

SUCCESS = Relationship("success")


class Lifecycle(Processor):
    """Records lifecycle calls and passes FlowFiles through; content 'fail' raises."""

    COUNT = PropertyDescriptor("Count", default="1", validators=POSITIVE_INTEGER_VALIDATOR)
    property_descriptors = (COUNT,)
    relationships = (SUCCESS,)

    def __init__(self, **properties):
        super().__init__(**properties)
        self.calls: list[str] = []

    def on_scheduled(self, context):
        self.calls.append("scheduled")

    def on_trigger(self, context, session):
        self.calls.append("trigger")
        flowfile = session.get()
        if flowfile is None:
            return
        if session.read_bytes(flowfile) == b"fail":
            msg = "processing failed"
            raise RuntimeError(msg)
        session.transfer(flowfile, SUCCESS)

    def on_unscheduled(self, context):
        self.calls.append("unscheduled")

    def on_stopped(self, context):
        self.calls.append("stopped")


def test_enqueue_defaults_match_nifi_mock() -> None:
    """Enqueued FlowFiles get <n>.mockFlowFile, path 'target' and a uuid; attributes override."""
    runner = TestRunner(Lifecycle)
    first = runner.enqueue(b"a")
    second = runner.enqueue("b", {"filename": "given.txt"})
    assert re.fullmatch(r"\d+\.mockFlowFile", first.attributes["filename"])
    assert first.attributes["path"] == "target"
    assert first.attributes["uuid"] == first.uuid
    assert second.attributes["filename"] == "given.txt"
    assert second.content == b"b"


def test_enqueue_a_path_uses_its_name(tmp_path) -> None:
    """Enqueueing a path reads the file and names the FlowFile after it."""
    source = tmp_path / "original.txt"
    source.write_bytes(b"file body")
    queued = TestRunner(Lifecycle).enqueue(source)
    assert queued.attributes["filename"] == "original.txt"
    assert queued.content == b"file body"


def test_run_schedules_triggers_n_times_and_stops() -> None:
    """run(n) calls on_scheduled once, on_trigger n times, then stops."""
    processor = Lifecycle()
    runner = TestRunner(processor)
    runner.run(3)
    assert processor.calls == [
        "scheduled",
        "trigger",
        "trigger",
        "trigger",
        "unscheduled",
        "stopped",
    ]


def test_run_without_stop_keeps_the_processor_scheduled() -> None:
    """run(n, stop_on_finish=False) does not stop; a later run does not reschedule."""
    processor = Lifecycle()
    runner = TestRunner(processor)
    runner.run(1, stop_on_finish=False)
    runner.run(1)
    assert processor.calls == ["scheduled", "trigger", "trigger", "unscheduled", "stopped"]


def test_processor_exception_rolls_back_penalizes_and_propagates() -> None:
    """An exception rolls the session back, penalizes the input and reaches the caller."""
    runner = TestRunner(Lifecycle)
    runner.enqueue(b"fail")
    with pytest.raises(RuntimeError, match="processing failed"):
        runner.run()
    assert runner.queue_size() == 1
    assert len(runner.penalized_flowfiles) == 1
    runner.assert_transfer_count("success", 0)


def test_invalid_processor_does_not_run() -> None:
    """run() refuses an invalid processor, listing every problem."""
    runner = TestRunner(Lifecycle(count=0, bogus="x"))
    with pytest.raises(InvalidProcessorError) as caught:
        runner.run()
    assert len(caught.value.problems) == 2
    assert "positive integer" in str(caught.value)
    runner.assert_not_valid()
    with pytest.raises(AssertionError, match="bogus"):
        runner.assert_valid()


def test_set_property_returns_its_validation_result() -> None:
    """set_property answers whether that property is now valid."""
    runner = TestRunner(Lifecycle)
    assert runner.set_property("Count", "5").valid
    assert not runner.set_property("count", "-1").valid
    assert not runner.set_property("nope", "1").valid
    assert runner.remove_property("nope")
    runner.remove_property("Count")
    runner.assert_valid()


def test_transfer_assertions_and_clearing() -> None:
    """Transfer assertions count since the last clear and explain failures."""
    runner = TestRunner(Lifecycle)
    runner.enqueue(b"a")
    runner.enqueue(b"b")
    runner.run(2)
    runner.assert_all_flowfiles_transferred("success", 2)
    runner.assert_queue_empty()
    assert [f.content for f in runner.flowfiles_for(SUCCESS)] == [b"a", b"b"]
    with pytest.raises(
        AssertionError, match="expected 3 FlowFiles transferred to 'success' but got 2"
    ):
        runner.assert_transfer_count("success", 3)
    runner.clear_transfer_state()
    runner.assert_transfer_count("success", 0)
    with pytest.raises(AssertionError, match="empty"):
        runner.assert_queue_not_empty()


def test_mock_flowfile_assertions(tmp_path) -> None:
    """MockFlowFile assertions compare content (bytes, str, path) and attributes."""
    runner = TestRunner(Lifecycle)
    runner.enqueue(b"body", {"k": "v"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"body")
    out.assert_content_equals("body")
    expected = tmp_path / "expected"
    expected.write_bytes(b"body")
    out.assert_content_equals(expected)
    out.assert_attribute_equals("k", "v")
    out.assert_attribute_exists("uuid")
    out.assert_attribute_not_exists("x")
    with pytest.raises(AssertionError, match="expected b'other'"):
        out.assert_content_equals("other")
    with pytest.raises(AssertionError, match="'k'"):
        out.assert_attribute_equals("k", "w")


def test_clock_only_moves_when_advanced() -> None:
    """The harness clock is frozen until advance_time moves it."""
    runner = TestRunner(Lifecycle)
    start = runner.now()
    assert runner.now() == start
    runner.advance_time(1.5)
    assert runner.now() == start + 1500


def test_state_can_be_set_and_read() -> None:
    """set_state replaces the processor state that sessions read."""
    runner = TestRunner(Lifecycle)
    runner.set_state({"k": "v"})
    assert runner.state == {"k": "v"}
    assert runner.get_state().version == 0


def test_outputs_read_content_on_demand() -> None:
    """Transferred FlowFiles keep a pointer, not a copy; content is read when asked for."""
    runner = TestRunner(Lifecycle)
    runner.enqueue(b"lazy")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    assert out._content is None
    assert out.content == b"lazy"


def test_enqueue_output_of_another_runner() -> None:
    """A MockFlowFile from one runner can be enqueued into another, attributes included."""
    first = TestRunner(Lifecycle)
    first.enqueue(b"body", {"k": "v"})
    first.run()
    second = TestRunner(Lifecycle)
    queued = second.enqueue(first.flowfiles_for("success")[0], {"extra": "1"})
    assert queued.content == b"body"
    assert queued.attributes["k"] == "v"
    assert queued.attributes["extra"] == "1"
    assert queued.uuid != first.flowfiles_for("success")[0].uuid
