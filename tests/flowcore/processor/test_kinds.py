"""Tests for the processor kinds: transforms, sources, two-phase sinks and binning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

from flowcore import (
    ExpressionLanguageScope,
    Flow,
    FlowFileTransform,
    Processor,
    PropertyDescriptor,
    Relationship,
    SourceProcessor,
    TransformResult,
    TwoPhaseSink,
    WorkItem,
    WorkListing,
)
from flowcore.processor import Capabilities
from flowcore.processor.relationship import FAILURE, ORIGINAL, SUCCESS
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR


class Shout(FlowFileTransform):
    """Upper-cases text; 'boom' raises; 'twice' yields two results."""

    relationships = (SUCCESS, FAILURE, ORIGINAL)

    def transform(self, context, flowfile):
        text = flowfile.text()
        if text == "boom":
            msg = "boom"
            raise ValueError(msg)
        if text == "twice":
            return [
                TransformResult(contents="one"),
                TransformResult(contents="two", attributes={"n": "2"}),
            ]
        if text == "drop":
            return []
        return TransformResult(
            contents=text.upper(), attributes={"shouted": "true"}, remove_attributes=("gone",)
        )


def test_flowfile_transform_success_failure_original() -> None:
    """A transform writes content and attributes, sends a clone to original, errors to failure."""
    runner = TestRunner(Shout())
    runner.enqueue("hi", {"gone": "x"})
    runner.enqueue("boom")
    runner.run(2)
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals("HI")
    out.assert_attribute_equals("shouted", "true")
    out.assert_attribute_not_exists("gone")
    runner.flowfiles_for("original")[0].assert_content_equals("hi")
    runner.flowfiles_for("failure")[0].assert_content_equals("boom")


def test_flowfile_transform_several_results_and_none() -> None:
    """Several results go to the input and clones of it; no result removes the input."""
    runner = TestRunner(Shout())
    runner.enqueue("twice")
    runner.enqueue("drop")
    runner.run(2)
    assert [f.content for f in runner.flowfiles_for("success")] == [b"one", b"two"]
    assert runner.flowfiles_for("success")[1].attributes["n"] == "2"
    assert runner.queue_size() == 0


class Counter(SourceProcessor):
    """Emits one FlowFile per number above the last one listed."""

    LIMIT = PropertyDescriptor("Limit", default="3", validators=POSITIVE_INTEGER_VALIDATOR)
    property_descriptors = (LIMIT,)

    def list_work(self, context, state):
        start = int(state.get("next", "0"))
        limit = context.get_property(self.LIMIT).as_integer()
        items = [WorkItem(str(n), {"n": n}) for n in range(start, limit)]
        return WorkListing(items, {"next": str(limit)})

    def read_work(self, context, session, item):
        flowfile = session.write(session.create(), str(item.payload["n"]))
        session.transfer(flowfile, SUCCESS)


def test_source_commits_its_listing_state_with_its_output() -> None:
    """A source lists once per trigger and never repeats items across triggers."""
    runner = TestRunner(Counter())
    runner.run(2)
    assert [f.content for f in runner.flowfiles_for("success")] == [b"0", b"1", b"2"]
    assert runner.state == {"next": "3"}


def test_a_source_that_identifies_its_work_has_the_capability() -> None:
    """``identifies_work`` is a source's capability, settled with the class: the engine
    derives uuids from the items of a source that declares it, and of no other."""

    class Named(Counter):
        identifies_work = True

    assert Named.capabilities.identifies_work
    assert Named.capabilities == Capabilities(identifies_work=True)
    assert not Counter.capabilities.identifies_work
    assert not Shout.capabilities.identifies_work


class Collect(TwoPhaseSink):
    """Stages the tasks' contents on commit and publishes them when told to."""

    relationships = (SUCCESS,)

    def __init__(self, **properties):
        super().__init__(**properties)
        self.staged: dict[str, list[bytes]] = {}
        self.published: list[bytes] = []

    def write(self, context, session, flowfiles):
        data = b"|".join(session.read_bytes(f) for f in flowfiles)
        session.transfer(flowfiles, SUCCESS)
        return data

    def commit(self, context, messages, state, jobs):
        version = str(int(state.get("version", "0")) + 1)
        self.staged[version] = list(messages)
        return {"version": version}

    def publish(self, context, state):
        self.published.extend(self.staged.pop(state["version"], []))


def test_two_phase_sink_writes_stages_then_publishes() -> None:
    """A two-phase sink's write result is staged by commit, under a state the harness keeps,
    and published after."""
    sink = Collect()
    runner = TestRunner(sink)
    runner.enqueue("a")
    runner.enqueue("b")
    runner.run()
    assert sink.published == [b"a|b"]
    assert runner.state == {"version": "1"}
    runner.enqueue("c")
    runner.run()
    assert sink.published == [b"a|b", b"c"]
    assert runner.state == {"version": "2"}


class PairUp(Processor):
    """Holds FlowFiles in a bin session across triggers and joins them two by two."""

    relationships = (Relationship("merged"), ORIGINAL)

    def __init__(self, **properties):
        super().__init__(**properties)
        self._bin = None

    def on_trigger_sessions(self, context, session_factory):
        intake = session_factory()
        flowfile = intake.get()
        if flowfile is None:
            return
        if self._bin is None:
            self._bin = session_factory()
        intake.migrate(self._bin, [flowfile])
        intake.commit()
        held = [r.current for r in self._bin._ledger.records.values()]
        if len(held) == 2:
            merged = self._bin.merge(held, self._bin.create(held), demarcator=b"+")
            self._bin.transfer(merged, "merged")
            self._bin.transfer(held, ORIGINAL)
            self._bin.commit()
            self._bin = None

    def on_stopped(self, context):
        if self._bin is not None:
            self._bin.rollback()
            self._bin = None


def test_bins_can_hold_flowfiles_across_triggers_and_return_them_on_stop() -> None:
    """A binning processor keeps FlowFiles in its own sessions; stopping returns unfinished ones."""
    runner = TestRunner(PairUp())
    for content in ("a", "b", "c"):
        runner.enqueue(content)
    runner.run(3)
    runner.flowfiles_for("merged")[0].assert_content_equals("a+b")
    runner.assert_transfer_count("original", 2)
    runner.assert_queue_not_empty()
    assert [runner.content.read(f.content) for f in runner.queued_flowfiles] == [b"c"]
    join = [e for e in runner.provenance_events if e.event_type.value == "JOIN"]
    assert len(join) == 1


class _Flaky(SourceProcessor):
    """Lists three items; reading "b" fails while the marker file exists."""

    relationships = (SUCCESS,)
    MARKER: ClassVar[str] = ""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        items = [WorkItem(k) for k in ("a", "b", "c") if k not in state]
        return WorkListing(items, {**state, **{i.key: "done" for i in items}})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        if item.key == "b" and os.path.exists(self.MARKER):
            msg = "cannot read b now"
            raise OSError(msg)
        flowfile = session.write(session.create(), item.key.encode())
        session.transfer(flowfile, SUCCESS)


def test_an_item_whose_read_failed_is_not_marked_done_and_comes_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A listed item whose read fails stays out of the committed listing state (the default
    requeue_work), and the next run reads it: each item once."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import PutFile

    marker = tmp_path / "failing"
    marker.write_text("")
    _Flaky.MARKER = str(marker)
    flow = Flow("flaky")
    source = flow.add(_Flaky(), name="source")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(source, put)
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1)
    first = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert first.count("source", "success") == 2
    assert any("cannot read b now" in b.message for b in first.bulletins)
    marker.unlink()
    second = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert second.count("source", "success") == 1
    assert sorted(p.read_text() for p in (tmp_path / "out").iterdir()) == ["a", "b", "c"]


class _Prefix(FlowFileTransform):
    """NiFi's idiom: a property with Expression Language, evaluated against the FlowFile."""

    PREFIX = PropertyDescriptor(
        "Prefix",
        default="${filename}-${fileSize}",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    property_descriptors = (PREFIX,)

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        prefix = context.get_property(self.PREFIX).evaluate_attribute_expressions(flowfile)
        return TransformResult(attributes={"prefix": prefix.get_value()})


@pytest.mark.parametrize("batches", [False, True])
def test_a_transform_evaluates_expressions_against_its_flowfile_in_the_harness(
    batches: bool,
) -> None:
    """``evaluate_attribute_expressions(flowfile)`` takes the view a transform gets."""
    runner = TestRunner(_Prefix(), batches=batches)
    runner.enqueue("abc", {"filename": "a.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("prefix", "a.txt-3")


def test_a_transform_evaluates_expressions_against_its_flowfile_in_a_flow(tmp_path: Path) -> None:
    """The same idiom in a flow: every FlowFile gets its value (here its file's name), none
    goes to failure."""
    from processors import GetFile, PutFile, SplitText, UpdateAttribute

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("x\nyy\n")
    flow = Flow("prefix")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
    split = flow.add(SplitText(line_split_count=1), name="split")
    prefix = flow.add(_Prefix(prefix="${fragment.index}-${fileSize}"), name="prefix")
    name = flow.add(UpdateAttribute(filename="${prefix}"), name="name")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, prefix, "splits")
    flow.connect(prefix, name, "success")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(prefix, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    result = flow.run("direct", repository=str(tmp_path / "repo"))
    assert result.transfers["prefix"].get("failure", (0, 0))[0] == 0
    written = {p.name: p.read_text() for p in (tmp_path / "out").iterdir()}
    assert written == {"1-1": "x", "2-2": "yy"}


class _Wrong(FlowFileTransform):
    """Returns what its FlowFile's content names: not a TransformResult."""

    relationships = (SUCCESS,)

    def transform(self, context: Any, flowfile: Any) -> Any:
        wrong = {
            "dict": {"relationship": "success"},
            "rel": TransformResult("nowhere"),
            "int": TransformResult(attributes={"n": 1}),  # type: ignore[dict-item]
        }
        return wrong[flowfile.text()]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("dict", r"_Wrong.transform must return a TransformResult.*returned dict"),
        ("rel", r"relationship 'nowhere', which is not declared \(declared: \['success'\]\)"),
        ("int", r"attribute 'n' must be a str, got int 1"),
    ],
)
def test_a_transform_returning_the_wrong_thing_is_told_the_contract(
    content: str, message: str
) -> None:
    """A result against the contract fails with a message naming it, not an AttributeError;
    without ``failure`` the FlowFile is rolled back, penalized."""
    from flowcore.errors import ProcessException

    runner = TestRunner(_Wrong())
    runner.enqueue(content)
    with pytest.raises(ProcessException, match=message):
        runner.run()
    assert runner.queue_size() == 1


class _Mixed(FlowFileTransform):
    """Contents (some empty), attributes set and removed, errors and two relationships."""

    relationships = (SUCCESS, FAILURE, Relationship("odd"))

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        n = int(flowfile.attributes["i"])
        if n % 7 == 0:
            msg = f"{n} fails"
            raise ValueError(msg)
        relationship = "odd" if n % 2 else "success"
        if n % 3 == 0:
            contents = flowfile.text().upper() if n % 9 else ""
            return TransformResult(relationship, contents=contents, attributes={"n": str(n)})
        return TransformResult(
            relationship, attributes={"len": str(flowfile.size)}, remove_attributes=("gone",)
        )


@pytest.mark.parametrize("drop_failures", [False, True])
def test_the_transform_batch_form_takes_contents_and_failures_whole(drop_failures: bool) -> None:
    """New contents, reads, errors sent to failure and several relationships all go through
    the batch form, with the FlowFiles, events and order of one by one."""
    runner = TestRunner(_Mixed())
    if drop_failures:
        runner.auto_terminate("failure")
    for i in range(1, 40):
        runner.enqueue("" if i % 10 == 0 else f"line {i}", {"i": str(i), "gone": "g"})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 39
    runner.flowfiles_for("odd")[1].assert_content_equals("LINE 3")


class _WrongWithFailure(_Wrong):
    """The same, with ``failure``: where a broken result goes."""

    relationships = (SUCCESS, FAILURE)


def test_a_wrong_result_goes_to_failure_with_the_contract_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With ``failure`` declared, a result against the contract sends the FlowFile there, as an
    exception in ``transform`` does, and the log names the contract."""
    runner = TestRunner(_WrongWithFailure())
    runner.enqueue("dict")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "must return a TransformResult, or a list of them" in caplog.text
    assert "AttributeError" not in caplog.text
