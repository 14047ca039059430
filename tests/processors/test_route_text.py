"""Tests for RouteText: NiFi's TestRouteText cases (every matching and routing strategy, groups,
line endings, expressions), provenance, and a run in a flow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutFile, RouteText

TEXT = "start middle end\nnot match"
ANY = "Route to 'matched' if lines matches any condition"
ALL = "Route to 'matched' if line matches all conditions"


def _route(content: str | bytes, **properties: Any) -> TestRunner:
    runner = TestRunner(RouteText(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def _contents(runner: TestRunner, relationship: str) -> list[str]:
    return [f.content.decode() for f in runner.flowfiles_for(relationship)]


@pytest.mark.parametrize(
    ("strategy", "value", "ignore_case", "content", "routed", "unmatched"),
    [
        ("Starts With", "start", False, TEXT, ["start middle end\n"], ["not match"]),
        (
            "Starts With",
            "start",
            False,
            "STart middle end\nstart middle end",
            ["start middle end"],
            ["STart middle end\n"],
        ),
        (
            "Starts With",
            "start",
            True,
            "start middle end\nSTart middle end",
            ["start middle end\nSTart middle end"],
            [],
        ),
        ("Ends With", "end", False, TEXT, ["start middle end\n"], ["not match"]),
        ("Contains", "middle", False, TEXT, ["start middle end\n"], ["not match"]),
        ("Contains", "miDDlE", True, TEXT, ["start middle end\n"], ["not match"]),
        ("Equals", "start middle end", False, TEXT, ["start middle end\n"], ["not match"]),
        (
            "Matches Regular Expression",
            ".*(mid).*",
            False,
            TEXT,
            ["start middle end\n"],
            ["not match"],
        ),
        (
            "Contains Regular Expression",
            "(m.d)",
            False,
            TEXT,
            ["start middle end\n"],
            ["not match"],
        ),
        (
            "Starts With",
            "start",
            False,
            "start middle end\r\nnot match",
            ["start middle end\r\n"],
            ["not match"],
        ),
        (
            "Starts With",
            "start",
            False,
            "start middle end\rnot match",
            ["start middle end\r"],
            ["not match"],
        ),
    ],
)
def test_matching_strategies(  # noqa: PLR0917 - the parameters of one case
    strategy: str,
    value: str,
    ignore_case: bool,
    content: str,
    routed: list[str],
    unmatched: list[str],
) -> None:
    """NiFi's simple cases: each matching strategy, case, and every line terminator."""
    runner = _route(content, matching_strategy=strategy, ignore_case=ignore_case, simple=value)
    assert _contents(runner, "simple") == routed
    assert _contents(runner, "unmatched") == unmatched
    assert _contents(runner, "original") == [content]
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("RouteText.Route", "original")


def test_a_line_goes_to_each_matching_property() -> None:
    """NiFi's testRouteLineToMultipleRelationships."""
    runner = _route(TEXT, matching_strategy="Contains", t="t", e="e", z="z")
    assert _contents(runner, "t") == [TEXT]
    assert _contents(runner, "e") == ["start middle end\n"]
    assert _contents(runner, "z") == _contents(runner, "unmatched") == []


def test_groups() -> None:
    """NiFi's grouping cases: one FlowFile per relationship and group, RouteText.Group set."""
    runner = _route(
        "1,5,hello\n2,5,world\n1,8,good-bye\n1,5,overt",
        matching_strategy="Contains",
        grouping_regular_expression="(.*?),(.*?),.*",
        o="o",
    )
    found = {f.attributes["RouteText.Group"]: f.content.decode() for f in runner.flowfiles_for("o")}
    assert found == {
        "1, 5": "1,5,hello\n1,5,overt",
        "2, 5": "2,5,world\n",
        "1, 8": "1,8,good-bye\n",
    }
    runner = _route(
        "1,hello\n2,world\n1,good-bye\n3,ciao",
        matching_strategy="Contains",
        grouping_regular_expression="(.*?),.*",
        l="l",
    )
    by_group = {
        f.attributes["RouteText.Group"]: f.content.decode() for f in runner.flowfiles_for("l")
    }
    assert by_group == {"1": "1,hello\n", "2": "2,world\n"}
    others = {
        f.attributes["RouteText.Group"]: f.content.decode()
        for f in runner.flowfiles_for("unmatched")
    }
    assert others == {"1": "1,good-bye\n", "3": "3,ciao"}


@pytest.mark.parametrize(
    ("routing", "values", "matched", "unmatched"),
    [
        (ANY, {"a": "start", "b": "not"}, [TEXT], []),
        (ANY, {"a": "start", "b": "zzz"}, ["start middle end\n"], ["not match"]),
        (ALL, {"a": "start", "b": "s"}, ["start middle end\n"], ["not match"]),
        (ALL, {"a": "start", "b": "zzz"}, [], [TEXT]),
    ],
)
def test_any_and_all(
    routing: str, values: dict[str, str], matched: list[str], unmatched: list[str]
) -> None:
    """The 'matched' strategies: any condition, or all of them."""
    runner = _route(TEXT, matching_strategy="Contains", routing_strategy=routing, **values)
    assert runner.processor.relationship_names() == ("original", "unmatched", "matched")
    assert _contents(runner, "matched") == matched
    assert _contents(runner, "unmatched") == unmatched


def test_satisfies_expression_with_line_and_line_number() -> None:
    """NiFi's testSatisfiesExpression: 'line' (with its terminator) and 'lineNo'."""
    runner = _route(
        "hello\n\ngood-bye, you\n    \t\t\n",
        matching_strategy="Satisfies Expression",
        empty="${line:isEmpty()}",
        **{
            "third-line": "${lineNo:equals(3)}",
            "second-field-you": "${line:getDelimitedField(2):trim():equals('you')}",
        },
    )
    assert _contents(runner, "empty") == ["\n    \t\t\n"]
    assert _contents(runner, "third-line") == ["good-bye, you\n"]
    assert _contents(runner, "second-field-you") == ["good-bye, you\n"]
    assert _contents(runner, "unmatched") == ["hello\n"]


def test_whitespace_is_trimmed_unless_told_not_to() -> None:
    """Ignore Leading/Trailing Whitespace decides whether '  x ' equals 'x'."""
    assert _contents(_route("  x \n", matching_strategy="Equals", v="x"), "v") == ["  x \n"]
    runner = _route(
        "  x \n",
        matching_strategy="Equals",
        v="x",
        **{"Ignore Leading/Trailing Whitespace": "false"},
    )
    assert _contents(runner, "unmatched") == ["  x \n"]


def test_provenance_and_attributes() -> None:
    """Each new FlowFile is a child of the input (FORK) with a ROUTE event; so is the input."""
    runner = _route(TEXT, matching_strategy="Starts With", simple="start")
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.FORK) == 1
    assert types.count(ProvenanceEventType.ROUTE) == 3
    child = runner.flowfiles_for("simple")[0]
    child.assert_attribute_equals("RouteText.Route", "simple")
    child.assert_attribute_equals("RouteText.Group", "")


def test_validation() -> None:
    """No properties, a bad regex, a non-boolean expression, or no Matching Strategy: invalid."""
    assert not RouteText(matching_strategy="Starts With").is_valid()
    assert [
        p.subject
        for p in RouteText(matching_strategy="Matches Regular Expression", s="[").validate()
    ] == ["s"]
    problems = RouteText(matching_strategy="Satisfies Expression", s="${line}").validate()
    assert "required to return a Boolean value" in problems[0].explanation
    assert not RouteText(s="x").is_valid()


def test_binary_content_goes_unmatched() -> None:
    """NiFi's testNotText: undecodable bytes still route, the original unchanged."""
    data = bytes(range(256))
    runner = _route(data, matching_strategy="Starts With", simple="start")
    assert runner.flowfiles_for("original")[0].content == data
    runner.assert_transfer_count("unmatched", 1)


def test_in_a_flow_unmatched_auto_terminated(tmp_path: Path) -> None:
    """GetFile -> RouteText -> PutFile on the direct runner: comment lines dropped, the rest
    written; with 'unmatched' auto-terminated no FlowFile is made for it."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "conf.txt").write_text("# comment\nkey=1\n# more\nother=2\n")
    flow = Flow("route-text")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    route = flow.add(
        RouteText(matching_strategy="Starts With", comments="#", routing_strategy=ANY),
        name="route",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, route)
    flow.connect(route, put, "matched")
    flow.auto_terminate(route, ["original", "unmatched"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert (tmp_path / "out" / "conf.txt").read_text() == "# comment\n# more\n"
    assert result.count("route", "unmatched") == 0
    assert result.count("route", "matched") == 1
