"""Tests for flowcore.nifi.contexts: NiFi's parameter contexts made the flow's one context."""

from __future__ import annotations

from typing import Any

from flowcore.nifi.contexts import flow_parameters
from flowcore.nifi.groups import Group
from flowcore.parameters import Parameter, ParameterContext


def _context(name: str, parameters: list[dict[str, Any]], inherited: tuple = ()) -> dict:
    return {"name": name, "parameters": parameters, "inheritedParameterContexts": list(inherited)}


def _p(name: str, value: str | None = None, sensitive: bool = False) -> dict[str, Any]:
    return {"name": name, "value": value, "sensitive": sensitive, "description": ""}


CONTEXTS = {
    "child": _context("child", [_p("greeting", "hello"), _p("token", sensitive=True)], ["base"]),
    "base": _context("base", [_p("greeting", "hi"), _p("source", "web")]),
}


def _bound(*names: str | None) -> list[Group]:
    return [
        Group(f"G{i}" if i else "", {"parameterContextName": name} if name else {})
        for i, name in enumerate(names)
    ]


def test_a_context_wins_over_those_it_inherits() -> None:
    """The bound context's own value wins; inherited ones fill in the rest."""
    imported = flow_parameters("flow", CONTEXTS, _bound("child"), None)
    values = {n: p.value for n, p in imported.context.effective().items()}
    assert values == {"greeting": "hello", "source": "web", "token": None}
    assert imported.problems == ()


def test_sensitive_parameters_come_without_a_value() -> None:
    """A sensitive parameter keeps its flag and no value, even an encrypted one in the file."""
    contexts = {"c": _context("c", [_p("pw", "enc{0A1B2C}", sensitive=True)])}
    imported = flow_parameters("flow", contexts, _bound("c"), None)
    found = imported.context.find("pw")
    assert found is not None
    assert found.sensitive
    assert found.value is None


def test_the_users_parameters_win_and_keep_the_files_sensitivity() -> None:
    """A user's value wins over the file's; a plain value for a sensitive name stays sensitive."""
    secret = Parameter("token", sensitive=True, value_from_env="TOKEN")
    imported = flow_parameters(
        "flow", CONTEXTS, _bound("child"), {"greeting": "hey", "token": secret}
    )
    assert imported.context.find("greeting").value == "hey"  # type: ignore[union-attr]
    assert imported.context.find("token") == secret
    plain = flow_parameters("flow", CONTEXTS, _bound("child"), {"token": "x"}).context
    assert plain.find("token").sensitive  # type: ignore[union-attr]


def test_a_users_context_is_put_over_the_files() -> None:
    """A ParameterContext given by the user is searched first."""
    mine = ParameterContext("mine", parameters={"source": "api"})
    imported = flow_parameters("flow", CONTEXTS, _bound("child"), mine)
    assert imported.context.find("source").value == "api"  # type: ignore[union-attr]


def test_groups_binding_different_contexts_share_one_when_values_agree() -> None:
    """Contexts bound by different groups are all searched, the top group's first."""
    contexts = {**CONTEXTS, "more": _context("more", [_p("source", "web"), _p("extra", "1")])}
    imported = flow_parameters("flow", contexts, _bound("base", None, "more"), None)
    assert imported.problems == ()
    values = {n: p.value for n, p in imported.context.effective().items()}
    assert values == {"extra": "1", "greeting": "hi", "source": "web"}


def test_contexts_giving_one_name_different_values_are_reported() -> None:
    """Two bound contexts disagreeing on a name is a problem, unless the user settles it."""
    contexts = {
        "a": _context("a", [_p("dir", "/a")]),
        "b": _context("b", [_p("dir", "/b")]),
    }
    [problem] = flow_parameters("flow", contexts, _bound("a", "b"), None).problems
    assert problem.subject == "parameter 'dir'"
    assert "different values" in problem.problem
    assert flow_parameters("flow", contexts, _bound("a", "b"), {"dir": "/c"}).problems == ()


def test_a_missing_bound_or_inherited_context_is_reported() -> None:
    """Binding a context the file lacks, or inheriting one, is a problem naming it."""
    contexts = {"c": _context("c", [], ["gone"])}
    problems = flow_parameters("flow", contexts, _bound("c", "absent"), None).problems
    assert len(problems) == 2
    assert "inherits parameter context 'gone'" in problems[0].problem
    assert "binds parameter context 'absent'" in problems[1].problem


def test_a_context_fed_by_a_parameter_provider_is_noted() -> None:
    """Values from a NiFi parameter provider must come from the user: a note says so."""
    contexts = {"c": {**_context("c", [_p("x", None)]), "parameterProvider": "vault"}}
    [(subject, note)] = flow_parameters("flow", contexts, _bound("c"), None).notes
    assert subject == "parameter context 'c'"
    assert "parameter provider" in note


def test_a_context_that_inherits_itself_is_a_problem_not_a_recursion() -> None:
    """A cycle of inherited contexts is reported with its chain."""
    looped = {
        "a": _context("a", [_p("x", "1")], ["b"]),
        "b": _context("b", [], ["a"]),
    }
    imported = flow_parameters("flow", looped, _bound("a"), None)
    assert [p.subject for p in imported.problems] == ["parameter context 'a'"]
    assert "inherits itself ('a' -> 'b' -> 'a')" in imported.problems[0].problem


def test_a_chain_of_inherited_contexts_past_the_limit_is_a_problem() -> None:
    """3,000 contexts each inheriting the next: one problem naming the limit."""
    chain = {f"c{i}": _context(f"c{i}", [], [f"c{i + 1}"]) for i in range(3_000)}
    imported = flow_parameters("flow", chain, _bound("c0"), None)
    assert len(imported.problems) == 1
    assert "more than 128 deep" in imported.problems[0].problem
