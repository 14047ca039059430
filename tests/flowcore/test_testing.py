"""Tests for the TestRunner harness and its NiFi mock semantics."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from flowcore import Processor, Relationship
from flowcore.controller_service import ControllerService
from flowcore.errors import InvalidProcessorError
from flowcore.processor import BatchRoute
from flowcore.properties import PropertyDescriptor
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR
from processors import MergeContent, RouteOnAttribute, SplitText, UpdateAttribute
from tests.flowcore.engine._batch_outcomes import _Tag  # docs/writing-processors.md's example

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


# --- batch forms ------------------------------------------------------------------------------


def _enqueue_lines(runner: TestRunner, count: int) -> None:
    """Queue *count* one-line FlowFiles carrying fragment.index 1..count and a status."""
    for index in range(1, count + 1):
        status = ("200", "404", "500")[index % 3]
        runner.enqueue(f"line {index}\n", {"fragment.index": str(index), "status": status})


def test_batch_mode_is_off_by_default() -> None:
    """A runner triggers one FlowFile at a time and its sessions take no batches by default."""
    runner = TestRunner(UpdateAttribute(tag="x"))
    _enqueue_lines(runner, 3)
    runner.run()
    assert not runner.batches
    runner.assert_transfer_count("success", 1)
    assert runner.batch_use.whole == runner.batch_use.forked == 0


def test_split_text_forks_batches_and_agrees_with_one_by_one() -> None:
    """SplitText's splits go whole in batch mode, and match the one-by-one splits and FORKs."""
    runner = TestRunner(SplitText(line_split_count=1))
    runner.enqueue(b"a\nbb\n\nccc\n", {"k": "v"})
    runner.enqueue(b"x\ny", {"k": "w"})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.forked == 5
    runner.assert_transfer_count("splits", 5)
    runner.assert_transfer_count("original", 2)
    runner.flowfiles_for("splits")[2].assert_content_equals("ccc")
    runner.flowfiles_for("splits")[2].assert_attribute_equals("fragment.index", "3")


def test_update_attribute_with_expression_language_agrees_with_one_by_one() -> None:
    """UpdateAttribute over columns: shared, per-FlowFile and derived values, same events."""
    processor = UpdateAttribute(
        group="${fragment.index:mod(8)}",
        upper="${status:toUpper():append('-'):append(${filename:length()})}",
        kind="split",
    )
    runner = TestRunner(processor)
    _enqueue_lines(runner, 10)
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 10
    runner.assert_all_flowfiles_transferred("success", 10)
    runner.flowfiles_for("success")[9].assert_attribute_equals("group", "2")
    events = {e.event_type.value for e in runner.provenance_events}
    assert events == {"ATTRIBUTES_MODIFIED"}


def test_route_on_attribute_agrees_with_one_by_one() -> None:
    """RouteOnAttribute by masks: each FlowFile where on_trigger sends it, with its ROUTE event."""
    runner = TestRunner(
        RouteOnAttribute(ok="${status:equals('200')}", lost="${status:equals('404')}")
    )
    _enqueue_lines(runner, 9)
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 9
    for relationship in ("ok", "lost", "unmatched"):
        runner.assert_transfer_count(relationship, 3)
    assert [f.attributes["fragment.index"] for f in runner.flowfiles_for("ok")] == ["3", "6", "9"]
    assert {e.event_type.value for e in runner.provenance_events} == {"ROUTE"}


def test_merge_content_by_correlation_attribute_agrees_with_one_by_one() -> None:
    """MergeContent bins batches by a correlation attribute: same bundles, originals and the
    same open bin left queued as its one-by-one run."""
    processor = MergeContent(
        correlation_attribute_name="status",
        minimum_number_of_entries=3,
        maximum_number_of_entries=3,
    )
    runner = TestRunner(processor)
    _enqueue_lines(runner, 11)
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 9
    runner.assert_transfer_count("merged", 3)
    runner.assert_transfer_count("original", 9)
    assert runner.queue_size() == 2  # the status with 4 FlowFiles left one in an open bin
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_content_equals("line 1\nline 4\nline 7\n")
    merged = {f.attributes["merge.uuid"] for f in runner.flowfiles_for("original")}
    assert merged == {f.uuid for f in runner.flowfiles_for("merged")}


def test_defragment_of_split_batches_agrees_with_one_by_one() -> None:
    """Splits made as a batch, defragmented from batches: each file whole again, as one by one."""
    split = TestRunner(SplitText(line_split_count=2, remove_trailing_newlines=False), batches=True)
    split.enqueue(b"".join(b"row %d\n" % i for i in range(7)), {"filename": "a.log"})
    split.enqueue(b"".join(b"other %d\n" % i for i in range(4)), {"filename": "b.log"})
    split.run()
    merge = TestRunner(MergeContent(merge_strategy="Defragment"))
    for piece in split.flowfiles_for("splits"):
        merge.enqueue(piece)
    merge.assert_batch_form_agrees()
    contents = sorted(f.content for f in merge.flowfiles_for("merged"))
    assert contents == [
        b"".join(b"other %d\n" % i for i in range(4)),
        b"".join(b"row %d\n" % i for i in range(7)),
    ]


def test_a_user_vectorised_processor_runs_in_batch_mode() -> None:
    """The documented _Tag gets the queue as one batch; its results read as one by one's."""
    runner = TestRunner(_Tag(), batches=True)
    _enqueue_lines(runner, 10)
    runner.run()
    assert runner.batch_use.whole == 10
    runner.assert_transfer_count("low", 6)
    runner.assert_transfer_count("high", 4)
    groups = [f.attributes["group"] for f in runner.flowfiles_for("low")]
    assert groups == ["1", "2", "3", "0", "1", "2"]
    events = runner.provenance_events
    assert [e.event_type.value for e in events] == ["ATTRIBUTES_MODIFIED"] * 10
    assert events[0].updated_attributes == {"group": "1"}
    runner.assert_queue_empty()


def test_a_user_vectorised_processor_agrees_with_its_on_trigger() -> None:
    """The documented _Tag's batch form agrees with its per-FlowFile form."""
    runner = TestRunner(_Tag())
    _enqueue_lines(runner, 20)
    runner.assert_batch_form_agrees()


class _Forgetful(_Tag):
    """A wrong batch form: it tags as _Tag does but drops the status attribute."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        return [
            BatchRoute(r.relationship, r.rows, r.batch.without_attributes(["status"]))
            for r in super().transform_batch(context, batch)
        ]


def test_a_batch_form_that_drops_an_attribute_is_caught() -> None:
    """The agreement assertion names each FlowFile that lost the attribute, and the values."""
    runner = TestRunner(_Forgetful())
    runner.enqueue("a", {"fragment.index": "1", "status": "200", "filename": "first.log"})
    runner.enqueue("b", {"fragment.index": "6", "status": "404", "filename": "second.log"})
    with pytest.raises(AssertionError) as caught:
        runner.assert_batch_form_agrees()
    message = str(caught.value)
    assert (
        "the batch form of _Forgetful disagrees with its one-by-one form (2 differences)" in message
    )
    assert (
        "low[0] (first.log): attribute 'status' is '200' one by one, absent in the batch form"
        in message
    )
    assert "high[0] (second.log): attribute 'status' is '404' one by one" in message


class _Leaky(_Tag):
    """A wrong batch form: the high FlowFiles are in no route."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        return super().transform_batch(context, batch)[:1]


def test_routes_that_lose_a_flowfile_fail_in_batch_mode() -> None:
    """Routes the engine would quietly refuse fail the run, naming the FlowFiles in no route."""
    runner = TestRunner(_Leaky(), batches=True)
    runner.enqueue("a", {"fragment.index": "1", "filename": "kept.log"})
    runner.enqueue("b", {"fragment.index": "5", "filename": "lost.log"})
    with pytest.raises(
        AssertionError,
        match=r"_Leaky.transform_batch returned a result the engine "
        r"would not take whole .*\n  in no route: #1 \(lost.log\)",
    ):
        runner.run()


class _Plain(Processor):
    """Passes FlowFiles to success one at a time: it has no batch form."""

    relationships = (SUCCESS,)

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, SUCCESS)


def test_a_processor_without_a_batch_form_is_reported_not_compared() -> None:
    """Nothing went through a batch form: the assertion says so and why, unless allowed."""
    runner = TestRunner(_Plain())
    runner.enqueue("a")
    with pytest.raises(
        AssertionError,
        match=r"_Plain took no FlowFile through a batch form "
        r"\(transform_batch returned None for 1 FlowFile\)",
    ):
        runner.assert_batch_form_agrees()
    again = TestRunner(_Plain())
    again.enqueue("a")
    again.assert_batch_form_agrees(allow_decline=True)
    again.assert_all_flowfiles_transferred("success", 1)


def test_a_declined_configuration_goes_one_by_one_in_batch_mode() -> None:
    """UpdateAttribute storing state declines: its FlowFiles go through on_trigger, and the
    decline is recorded."""
    runner = TestRunner(
        UpdateAttribute(
            store_state="Store state locally",
            stateful_variables_initial_value="0",
            count="${getStateValue('count'):plus(1)}",
        ),
        batches=True,
    )
    _enqueue_lines(runner, 4)
    runner.run()
    assert runner.batch_use.declined == ["transform_batch returned None for 4 FlowFiles"]
    runner.assert_all_flowfiles_transferred("success", 4)
    runner.flowfiles_for("success")[3].assert_attribute_equals("count", "4")


class _Fussy(_Tag):
    """A batch form that raises for a batch holding fragment 3 (as for a failing FlowFile)."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        if "3" in batch.column("fragment.index").values():
            msg = "fragment 3 is not welcome"
            raise ValueError(msg)
        return super().transform_batch(context, batch)


def test_a_raising_batch_form_declines_and_agrees() -> None:
    """A batch form that raises declines: the FlowFiles go one by one, and the reason is kept."""
    runner = TestRunner(_Fussy())
    _enqueue_lines(runner, 4)
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.declined == [
        "transform_batch raised ValueError('fragment 3 is not welcome') for 4 FlowFiles"
    ]
    runner.assert_transfer_count("low", 3)


def test_the_documented_batch_form_and_harness_example_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/writing-processors.md's batch-forms section runs as written: Tag, Shout (a batch
    form writing content, which agrees with its on_trigger), then Tag's test."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "writing-processors.md"
    section = docs.read_text().split("## Batch forms", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 3
    example = types.ModuleType("writing_processors_example")  # a module, so Tag pickles
    monkeypatch.setitem(sys.modules, example.__name__, example)
    for block in blocks:
        exec(block, example.__dict__)  # the documentation's own example
    assert example.runner.batch_use.whole == 10
    shout = TestRunner(example.Shout())
    for text in ("quiet", "", "still quiet"):
        shout.enqueue(text)
    shout.assert_batch_form_agrees()
    assert [f.content for f in shout.flowfiles_for("success")] == [b"QUIET", b"", b"STILL QUIET"]


class _Login(Processor):
    """Puts the length of its sensitive Password and its Greeting on each FlowFile."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    GREETING = PropertyDescriptor("Greeting")
    property_descriptors = (PASSWORD, GREETING)
    relationships = (SUCCESS,)

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        secret = context.get_property(self.PASSWORD).value or ""
        greeting = context.get_property(self.GREETING).value or ""
        flowfile = session.put_all_attributes(flowfile, {"n": str(len(secret)), "g": greeting})
        session.transfer(flowfile, SUCCESS)


def test_the_harness_takes_parameters() -> None:
    """TestRunner(parameters=...) and set_parameter bind #{name}; undefined ones are invalid."""
    runner = TestRunner(_Login(password="#{pw}", greeting="#{hi}!"), parameters={"hi": "hello"})
    runner.assert_not_valid()
    assert "parameter 'pw', which is not defined" in str(runner.validation_problems())
    runner.set_parameter("pw", "hunter2")
    assert "which is not sensitive" in str(runner.validation_problems())
    runner.set_parameter("pw", "hunter2", sensitive=True)
    runner.enqueue("x")
    runner.run()
    (out,) = runner.flowfiles_for(SUCCESS)
    out.assert_attribute_equals("n", "7")
    out.assert_attribute_equals("g", "hello!")
    assert "hunter2" not in repr(runner.processor)


def test_an_auto_terminated_relationship_drops_what_goes_there() -> None:
    """auto_terminate: FlowFiles sent there are dropped with NiFi's DROP and counted, not
    transferred, and the context says the relationship is auto-terminated."""
    runner = TestRunner(SplitText(line_split_count=1))
    runner.auto_terminate("splits")
    assert runner.context.is_auto_terminated("splits")
    runner.enqueue(b"a\nbb\n")
    runner.run()
    assert runner.flowfiles_for("splits") == []
    runner.assert_all_flowfiles_transferred("original", 1)
    assert runner.auto_terminated_count("splits") == 2
    drops = [e for e in runner.provenance_events if e.event_type.value == "DROP"]
    assert [(e.details, e.file_size) for e in drops] == [
        ("Auto-Terminated by splits Relationship", 1),
        ("Auto-Terminated by splits Relationship", 2),
    ]
    with pytest.raises(ValueError, match="has no relationship 'nope' to auto-terminate"):
        runner.auto_terminate(["original", "nope"])


class _Tee(Processor):
    """Sends each FlowFile to success and a clone to ``copies``, auto-terminated by default."""

    relationships = (
        Relationship("success", "the FlowFile"),
        Relationship("copies", "a clone, dropped unless connected", auto_terminated=True),
    )

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            copy = session.clone(flowfile)
            session.transfer(flowfile, "success")
            session.transfer(copy, "copies")


def test_a_relationship_auto_terminated_by_default_drops_as_if_auto_terminated() -> None:
    """A relationship the processor declares auto-terminated drops what goes there, as
    auto_terminate would: DROP with NiFi's details, counted, and the context says so."""
    runner = TestRunner(_Tee())
    assert runner.context.is_auto_terminated("copies")
    assert not runner.context.is_auto_terminated("success")
    runner.enqueue(b"hi")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert runner.flowfiles_for("copies") == []
    assert runner.auto_terminated_count("copies") == 1
    drops = [e for e in runner.provenance_events if e.event_type.value == "DROP"]
    assert [(e.details, e.file_size) for e in drops] == [
        ("Auto-Terminated by copies Relationship", 2)
    ]


@pytest.mark.parametrize(
    ("processor", "dropped"),
    [
        (lambda: SplitText(line_split_count=1), ["splits"]),
        (lambda: SplitText(line_split_count=2), ["splits", "original"]),
        (lambda: UpdateAttribute(tag="${fragment.index:mod(2)}"), ["success"]),
        (lambda: RouteOnAttribute(low="${fragment.index:lt(3)}"), ["unmatched"]),
        (lambda: MergeContent(minimum_number_of_entries=2), ["original"]),
    ],
    ids=["splits", "splits-and-original", "update", "route", "merge-originals"],
)
def test_batch_forms_dropping_whole_agree_with_one_by_one(
    processor: Any, dropped: list[str]
) -> None:
    """Batch forms whose FlowFiles go to auto-terminated relationships drop them whole: the
    same FlowFiles, events and drop counts as one by one, and the batch form was used."""
    runner = TestRunner(processor())
    runner.auto_terminate(dropped)
    if isinstance(runner.processor, MergeContent):
        runner.auto_terminate("failure")
    _enqueue_lines(runner, 5)
    runner.enqueue(b"six\nseven\n\neight", {"fragment.index": "6"})
    runner.assert_batch_form_agrees()  # and a batch form was used (whole, or forked)
    assert sum(runner.auto_terminated_count(r) for r in dropped) > 0


class _Prefixes(ControllerService):
    """A service holding one prefix, set when it is enabled."""

    implements = ("PrefixService",)
    PREFIX = PropertyDescriptor("Prefix", required=True)
    property_descriptors = (PREFIX,)

    def on_enabled(self, context: Any) -> None:
        self.prefix = context.get_property(self.PREFIX).value


class _Prefix(Processor):
    """Prefixes each FlowFile's content with its service's prefix (no batch form)."""

    SERVICE = PropertyDescriptor("Prefix Service", required=True, identifies_service=True)
    property_descriptors = (SERVICE,)
    relationships = (Relationship("success"),)

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        service = session.controller_service(context.get_property(self.SERVICE).value)
        content = service.prefix.encode() + session.read_bytes(flowfile)
        session.transfer(session.write(flowfile, content), "success")


def test_the_agreement_twin_has_the_runners_services() -> None:
    """assert_batch_form_agrees runs its one-by-one twin with the services added to the runner,
    so a processor naming a service can be checked."""
    runner = TestRunner(_Prefix(prefix_service="p"))
    runner.add_service(_Prefixes("p", prefix=">"))
    runner.enqueue("a")
    runner.enqueue("b")
    runner.assert_batch_form_agrees(allow_decline=True)
    assert [f.content for f in runner.flowfiles_for("success")] == [b">a", b">b"]
