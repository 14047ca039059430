"""Tests for RouteOnContent: NiFi's TestRouteOnContent cases, clones and ROUTE events, the batch
form against one by one, and a run in a flow."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, RouteOnContent

HELLO = "Hello, World!"
CONTAINS = {"match_requirement": "content must contain match"}


def test_cloning_to_every_matching_relationship() -> None:
    """NiFi's testCloning: one FlowFile matching two regexes goes to both (one a clone)."""
    runner = TestRunner(RouteOnContent(**CONTAINS, hello="Hello", world="World"))
    runner.enqueue(HELLO)
    runner.run()
    runner.assert_transfer_count("hello", 1)
    runner.assert_transfer_count("world", 1)
    runner.assert_transfer_count("unmatched", 0)
    routes = [
        runner.flowfiles_for(r)[0].attributes["RouteOnContent.Route"] for r in ("hello", "world")
    ]
    assert routes == ["hello", "world"]
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.ROUTE) == 2
    assert types.count(ProvenanceEventType.CLONE) == 1


def test_expression_results_are_literal() -> None:
    """NiFi's testSubstituteAttributes; an attribute's regex characters are taken literally."""
    runner = TestRunner(RouteOnContent(**CONTAINS, attr="Hel${highLow}"))
    runner.enqueue(HELLO, {"highLow": "lo"})
    runner.enqueue(HELLO, {"highLow": "l."})
    runner.run(2)
    assert [f.content for f in runner.flowfiles_for("attr")] == [HELLO.encode()]
    assert [f.content for f in runner.flowfiles_for("unmatched")] == [HELLO.encode()]


def test_only_the_buffer_must_match() -> None:
    """NiFi's testBufferSize: with 3 bytes buffered, 'Hel' matches the whole content."""
    runner = TestRunner(RouteOnContent(content_buffer_size="3 B", rel="Hel"))
    runner.enqueue(HELLO)
    runner.run()
    runner.assert_all_flowfiles_transferred("rel", 1)


def test_exact_match_and_crlf() -> None:
    """'content must match exactly' needs the whole text; '$' stops before a final CRLF."""
    runner = TestRunner(RouteOnContent(whole="Hello.*", line="Hello.*$"))
    runner.enqueue("Hello\r\n")
    runner.run()
    assert runner.flowfiles_for("unmatched")
    runner = TestRunner(RouteOnContent(**CONTAINS, line="^Hello.*$"))
    runner.enqueue("Hello\r\n")
    runner.run()
    assert runner.flowfiles_for("line")


def test_relationships_and_validation() -> None:
    """Each dynamic property is a relationship; 'unmatched' cannot be one; regexes must compile."""
    assert RouteOnContent(a="x", b="y").relationship_names() == ("a", "b", "unmatched")
    assert [p.subject for p in RouteOnContent(bad="(").validate()] == ["bad"]
    assert not RouteOnContent(unmatched="x").is_valid()


@settings(max_examples=40, deadline=None)
@given(contents=st.lists(st.text(alphabet="abc\n", max_size=8), min_size=1, max_size=8))
def test_batch_form_agrees_with_one_by_one(contents: list[str]) -> None:
    """The batch form routes each FlowFile where on_trigger does, with the same events."""
    runner = TestRunner(RouteOnContent(**CONTAINS, a_then_b="a.*b", only_c="^c+$"))
    for content in contents:
        runner.enqueue(content)
    runner.assert_batch_form_agrees(allow_decline=True)


def test_in_a_flow(tmp_path: Path) -> None:
    """GenerateFlowFile -> RouteOnContent on the direct runner: routed counts and ROUTE events."""
    flow = Flow("route-content")
    gen = flow.add(GenerateFlowFile(custom_text="ERROR disk full", batch_size=3), name="gen")
    route = flow.add(RouteOnContent(**CONTAINS, errors="^ERROR"), name="route")
    flow.connect(gen, route)
    flow.auto_terminate(route, ["errors", "unmatched"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("route", "errors") == 3
    assert result.count("route", "unmatched") == 0
