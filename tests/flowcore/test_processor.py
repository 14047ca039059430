"""Tests for the Processor API: configuration, validation, the kinds, picklability."""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping
from typing import ClassVar

import pytest

from flowcore import (
    FlowFileTransform,
    Processor,
    PropertyDescriptor,
    Relationship,
    SourceProcessor,
    TransformResult,
    TwoPhaseSink,
    ValidationResult,
    WorkItem,
    WorkListing,
)
from flowcore.errors import ConfigurationError
from flowcore.parameters import Parameter, SensitiveText
from flowcore.properties import ExpressionLanguageScope
from flowcore.relationship import FAILURE, ORIGINAL, SUCCESS
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR
from processors import BUILTIN_PROCESSORS
from processors.update_attribute import Rule, UpdateAttribute


class Configurable(Processor):
    """Has two properties and a cross-property rule."""

    COUNT = PropertyDescriptor(
        "Line Split Count", required=True, validators=POSITIVE_INTEGER_VALIDATOR
    )
    AGE = PropertyDescriptor("Max Bin Age", validators=TIME_PERIOD_VALIDATOR)
    property_descriptors = (COUNT, AGE)
    relationships = (SUCCESS,)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        if values["Line Split Count"] == "13":
            return [ValidationResult("Line Split Count", "13", False, "13 is unlucky")]
        return []


def test_three_spellings_configure_the_same_property() -> None:
    """Display name, internal name and snake_case keyword set the same property."""
    by_keyword = Configurable(line_split_count=1, max_bin_age=60)
    by_name = Configurable(**{"Line Split Count": "1", "Max Bin Age": "60 secs"})
    assert by_keyword.same_configuration(by_name)
    assert by_keyword.configured == {"Line Split Count": "1", "Max Bin Age": "60 secs"}
    assert repr(by_keyword) == "Configurable(line_split_count='1', max_bin_age='60 secs')"


def test_every_problem_is_reported_at_once() -> None:
    """validate() lists unknown properties (with a suggestion), missing and bad values together."""
    problems = Configurable(line_split_cout=1, max_bin_age="soon").validate()
    texts = [str(p) for p in problems]
    assert len(problems) == 3
    assert any("did you mean 'Line Split Count' (line_split_count)" in t for t in texts)
    assert any("Line Split Count is required" in t for t in texts)
    assert any("'Max Bin Age' validated against 'soon'" in t for t in texts)
    assert [str(p) for p in Configurable(line_split_count=13).validate()] == [
        "'Line Split Count' validated against '13' is invalid because 13 is unlucky"
    ]


def test_remove_property_restores_default() -> None:
    """Removing a property makes its default apply again; None removes too."""
    processor = Configurable(line_split_count=1)
    assert processor.remove_property("line_split_count")
    assert processor.effective_value(Configurable.COUNT) is None
    processor.set_property("Line Split Count", 5)
    processor.set_property("Line Split Count", None)
    assert not processor.remove_property("Line Split Count")


def test_context_rejects_unknown_property_names() -> None:
    """Asking the context for a property the processor lacks names it and suggests one."""
    runner = TestRunner(Configurable(line_split_count=1))
    with pytest.raises(ConfigurationError, match="did you mean"):
        runner.context.get_property("Line Split Cont")


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


@pytest.mark.parametrize("name", sorted(BUILTIN_PROCESSORS))
def test_builtin_processors_are_picklable(name: str) -> None:
    """Every built-in processor, configured, survives pickling (Spark ships processors)."""
    processor = BUILTIN_PROCESSORS[name](**{"my.attribute": "${filename:toUpper():equals('X')}"})
    copy = pickle.loads(pickle.dumps(processor))
    assert copy.same_configuration(processor)
    assert copy.validate() == processor.validate()


def test_relationship_equality_is_by_name() -> None:
    """Relationships compare by name only, as NiFi matches them."""
    assert Relationship("success", "a description") == SUCCESS


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


def test_capabilities_are_settled_when_a_class_is_made() -> None:
    """Capabilities follow the class's own methods: a subclass overriding what a batch hook
    stands in for loses batch binning, one taking over its sessions loses run batching."""
    from processors import MergeContent, UpdateAttribute

    assert MergeContent.capabilities.bins_batches
    assert MergeContent.capabilities.merges_apart
    assert UpdateAttribute.capabilities.run_batching
    assert not Processor.capabilities.run_batching

    class OwnMerge(MergeContent):
        def merge_bin(self, context, session, bin_):  # type: ignore[no-untyped-def]
            super().merge_bin(context, session, bin_)

    class OwnSessions(UpdateAttribute):
        def on_trigger_sessions(self, context, session_factory):  # type: ignore[no-untyped-def]
            super().on_trigger_sessions(context, session_factory)

    assert not OwnMerge.capabilities.bins_batches
    assert OwnMerge.capabilities.merges_apart
    assert not OwnSessions.capabilities.run_batching


class Secretive(Processor):
    """Has a sensitive property and an ordinary one that takes Expression Language."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    GREETING = PropertyDescriptor("Greeting", el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES)
    property_descriptors = (PASSWORD, GREETING)
    relationships = (SUCCESS,)


def _secret() -> SensitiveText:
    return SensitiveText("hunter2", Parameter("pw", "hunter2", sensitive=True))


def test_parameters_are_substituted_when_values_are_read() -> None:
    """Bound values replace references in every reading path; validators see the values."""
    processor = Configurable(line_split_count="#{n}", max_bin_age="#{age} sec")
    processor.bind_parameters({"n": "3", "age": "5"})
    assert processor.effective_value(Configurable.COUNT) == "3"
    assert processor.configured == {"Line Split Count": "3", "Max Bin Age": "5 sec"}
    assert processor.validate() == ()
    processor.bind_parameters({"n": "x", "age": "5"})
    assert "'x'" in str(processor.validate()[0])
    assert repr(processor) == "Configurable(line_split_count='#{n}', max_bin_age='#{age} sec')"


def test_undefined_parameters_are_problems_naming_property_and_parameter() -> None:
    """A reference to an undefined name is one problem, and the property's validators wait."""
    problems = Configurable(line_split_count="#{count}").validate()
    assert len(problems) == 1
    assert problems[0].subject == "Line Split Count"
    assert "parameter 'count', which is not defined" in problems[0].explanation
    assert "not a valid parameter reference" in str(
        Configurable(line_split_count="#{a/b}").validate()
    )


def test_sensitive_parameters_follow_nifis_rules() -> None:
    """Sensitive parameters only in sensitive properties, alone; sensitive properties only them."""
    values = {"pw": _secret(), "plain": "p"}
    wrong_way = Secretive(greeting="#{pw}")
    wrong_way.bind_parameters(values)
    assert "only a sensitive property" in str(wrong_way.validate())
    not_sensitive = Secretive(password="#{plain}")
    not_sensitive.bind_parameters(values)
    assert "which is not sensitive" in str(not_sensitive.validate())
    around = Secretive(password="x#{pw}")
    around.bind_parameters(values)
    assert "nothing else" in str(around.validate())
    right = Secretive(password="#{pw}", greeting="hi ${name} #{plain}")
    right.bind_parameters(values)
    assert right.validate() == ()
    assert isinstance(right.effective_value(Secretive.PASSWORD), SensitiveText)
    assert "hunter2" not in repr(right) + repr(Secretive(password="hunter2"))


def test_with_parameters_copies_only_processors_that_reference_them() -> None:
    """with_parameters returns the processor itself without references, else a bound copy."""
    plain = Configurable(line_split_count="1")
    assert plain.with_parameters({"n": "2"}) is plain
    configured = Secretive(password="#{pw}")
    bound = configured.with_parameters({"pw": _secret()})
    assert bound is not configured
    assert configured.effective_value(Secretive.PASSWORD) == ""
    assert bound.effective_value(Secretive.PASSWORD) == "hunter2"
    assert bound.referenced_parameters() == {"Password": ("pw",)}
    bound.set_property("Greeting", "x")
    assert "Greeting" not in configured.configured


def test_raw_configured_keeps_parameter_references() -> None:
    """raw_configured is what was written; configured substitutes the parameters."""
    split = BUILTIN_PROCESSORS["SplitText"](line_split_count="#{n}")
    split.bind_parameters({"n": "3"})
    assert split.raw_configured == {"Line Split Count": "#{n}"}
    assert split.configured == {"Line Split Count": "3"}


def test_advanced_configuration_is_compared_with_the_properties() -> None:
    """Most processors have none; UpdateAttribute's rules make two configurations differ."""
    assert BUILTIN_PROCESSORS["SplitText"]().advanced_configuration() == ()
    rule = Rule("r", actions={"a": "b"})
    assert not UpdateAttribute(rules=[rule]).same_configuration(UpdateAttribute())
    assert UpdateAttribute(rules=[rule]).same_configuration(UpdateAttribute(rules=[rule]))
