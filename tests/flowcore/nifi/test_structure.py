"""Tests for flowcore.nifi.structure: what makes two flows the same."""

from __future__ import annotations

from flowcore.builder import Flow
from flowcore.definition.component_settings import RetrySettings
from flowcore.parameters import Parameter
from processors import LogAttribute, SplitText


def structured() -> Flow:
    """A small flow for the comparison tests, settings left to their defaults."""
    flow = Flow("s", parameters={"n": "1"})
    split = flow.add(SplitText(line_split_count="#{n}"), name="split")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(split, log, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    return flow


def test_flows_built_alike_are_the_same() -> None:
    """Two flows built the same way compare equal, ids and component order aside."""
    assert structured().same_as(structured())
    other = Flow("s", parameters={"n": "1"})
    log = other.add(LogAttribute(), name="log")
    split = other.add(SplitText(line_split_count="#{n}"), name="split")
    other.connect(split, log, "splits")
    other.auto_terminate(split, ["failure", "original"])
    assert other.same_as(structured())


def test_defaults_written_out_are_the_same_as_defaults_left_unset() -> None:
    """NiFi's exports write every default: a flow that spells them out is the same flow."""
    flow = Flow("s", parameters={"n": "1"})
    split = flow.add(
        SplitText(line_split_count="#{n}", header_line_count="0"),
        name="split",
        penalty_duration="30 secs",
        yield_duration="1000 ms",
        retry=RetrySettings(relationships=()),
    )
    log = flow.add(LogAttribute(), name="log")
    flow.connect(
        split, log, "splits", back_pressure_object_threshold=10_000, flowfile_expiration="0 sec"
    )
    flow.auto_terminate(split, ["original", "failure"])
    assert flow.same_as(structured())


def test_what_a_flow_does_tells_flows_apart() -> None:
    """A property, a setting, a relationship or a parameter makes another flow."""
    base = structured().describe_structure()
    changed = structured()
    changed.component("split").processor.set_property("Line Split Count", "2")
    assert changed.describe_structure() != base
    changed = structured()
    changed.auto_terminate(changed.component("log"), "success")
    assert changed.describe_structure() != base
    changed = Flow("s", parameters={"n": "2"})
    assert changed.describe_structure()["parameters"] != base["parameters"]


def test_durable_and_ids_are_not_part_of_the_structure() -> None:
    """durable=True is how a queue is kept, not what the flow does (NiFi has no such setting)."""
    flow = Flow("s", parameters={"n": "1"})
    split = flow.add(SplitText(line_split_count="#{n}"), name="split")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(split, log, "splits", durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    assert flow.same_as(structured())


def test_sensitive_values_never_show_in_the_structure() -> None:
    """A sensitive parameter is compared by name and flags, never by value."""
    flow = Flow("s", parameters={"t": Parameter("t", "hunter2", sensitive=True)})
    assert "hunter2" not in repr(flow.describe_structure())
