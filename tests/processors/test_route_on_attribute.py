"""Tests for RouteOnAttribute: the three strategies, clones, ROUTE events, validation."""

from __future__ import annotations

import time
from pathlib import Path

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, RouteOnAttribute, UpdateAttribute


def test_route_to_property_name_clones_for_each_match() -> None:
    """Each true condition gets the FlowFile (cloned as needed); none true goes to unmatched."""
    runner = TestRunner(RouteOnAttribute(**{"one": "${x:equals(1)}", "positive": "${x:gt(0)}"}))
    for x in ("1", "5", "-5"):
        runner.enqueue(x, {"x": x})
    runner.run(3)
    assert [f.content for f in runner.flowfiles_for("one")] == [b"1"]
    assert [f.content for f in runner.flowfiles_for("positive")] == [b"1", b"5"]
    unmatched = runner.flowfiles_for("unmatched")
    assert [f.content for f in unmatched] == [b"-5"]
    unmatched[0].assert_attribute_equals("RouteOnAttribute.Route", "unmatched")
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.ROUTE) == 4
    assert types.count(ProvenanceEventType.CLONE) == 1


def test_all_and_any_strategies() -> None:
    """'all match' needs every condition; 'any matches' needs one."""
    conditions = {"a": "${a:equals('1')}", "b": "${b:equals('1')}"}
    for strategy, expected in (
        ("Route to 'matched' if all match", ["matched", "unmatched"]),
        ("Route to 'matched' if any matches", ["matched", "matched"]),
    ):
        runner = TestRunner(RouteOnAttribute(routing_strategy=strategy, **conditions))
        runner.enqueue(b"", {"a": "1", "b": "1"})
        runner.enqueue(b"", {"a": "1", "b": "0"})
        runner.run(2)
        routed = [
            f.attributes["RouteOnAttribute.Route"]
            for r in ("matched", "unmatched")
            for f in runner.flowfiles_for(r)
        ]
        assert sorted(routed) == sorted(expected)
        assert runner.processor.relationship_names() == ("matched", "unmatched")


def test_conditions_must_be_boolean_expressions() -> None:
    """A condition that is not a boolean expression is invalid, naming the property."""
    problems = RouteOnAttribute(**{"bad": "${x}", "broken": "${x:equals(}"}).validate()
    assert [p.subject for p in problems] == ["bad", "broken"]
    assert "Boolean" in problems[0].explanation


def test_run_time_expression_error_keeps_the_flowfile() -> None:
    """A condition that fails at run time (bad regex from an attribute) loses nothing."""
    import pytest

    from flowcore.errors import ExpressionEvaluationError

    runner = TestRunner(RouteOnAttribute(check="${value:matches(${pattern})}"))
    runner.enqueue(b"keep me", {"value": "x", "pattern": "("})
    with pytest.raises(ExpressionEvaluationError, match="regular expression"):
        runner.run()
    assert runner.queue_size() == 1
    assert runner.penalized_flowfiles[0].attributes["pattern"] == "("


def test_a_condition_past_the_regex_time_limit_is_named_and_the_others_pass(
    tmp_path: Path,
) -> None:
    """The FlowFile it cannot decide waits, penalized; the bulletin names the condition, the
    pattern and the limit; a FlowFile with a harmless name is routed as usual."""
    flow = Flow("hostile")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=2), name="gen")
    hostile = "a" * 40 + "!"
    name = flow.add(
        UpdateAttribute(filename=f"${{nextInt():mod(2):equals(0):ifElse('{hostile}', 'ok')}}"),
        name="name",
    )
    route = flow.add(RouteOnAttribute(aas="${filename:find('^(a|aa)+$')}"), name="route")
    flow.connect(gen, name)
    flow.connect(name, route)
    flow.auto_terminate(route, ["aas", "unmatched"])
    settings = Settings(sync=False, parallelism=1, regex_time_limit="200 millis")
    started = time.monotonic()
    result = run_flow(flow, "direct", repository=tmp_path / "r", settings=settings)
    assert time.monotonic() - started < 30
    assert result.count("route", "unmatched") == 1
    assert result.queued == {"route (returned after errors)": (1, 1)}
    (bulletin,) = result.bulletins
    for part in ("could not evaluate 'aas'", "'^(a|aa)+$'", "0.2 s limit", "penalized"):
        assert part in bulletin.message
