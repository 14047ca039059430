"""Tests for explain's notes on expressions evaluated per FlowFile."""

from __future__ import annotations

from flowcore.builder import Flow
from flowcore.compiler.expression_notes import expression_notes
from flowcore.compiler.stages import compile_flow, explain
from processors import GenerateFlowFile, RouteOnAttribute, UpdateAttribute


def _flow() -> Flow:
    flow = Flow("amounts")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(
        UpdateAttribute(
            total="${amount:toDecimal():multiply(2)}",
            shown="${amount:format('#,##0')}",
        ),
        name="tag",
    )
    route = flow.add(RouteOnAttribute(big="${amount:toDecimal():gt(250)}"), name="route")
    off = flow.add(UpdateAttribute(late="${now()}"), name="off", disabled=True)
    flow.connect(gen, tag)
    flow.connect(tag, route)
    flow.connect(route, off, "big")
    flow.auto_terminate(route, "unmatched")
    flow.auto_terminate(off, "success")
    return flow


def test_explain_names_an_expression_evaluated_per_flowfile_and_not_a_vectorised_one() -> None:
    """format() has no column form: its property is named with why; toDecimal() chains are not."""
    flow = _flow()
    line = (
        "UpdateAttribute 'tag': shown = ${amount:format('#,##0')} is evaluated per FlowFile "
        "(format() has no column form)"
    )
    for text in (explain(compile_flow(flow)), flow.explain()):
        assert line in text
        assert "toDecimal" not in text  # tag's total and route's big are computed over columns


def test_a_disabled_member_is_not_named() -> None:
    """A disabled processor evaluates nothing, so its now() is not a note."""
    compiled = compile_flow(_flow())
    notes = [n for plan in compiled.plans.values() for n in expression_notes(plan)]
    assert notes == [
        "UpdateAttribute 'tag': shown = ${amount:format('#,##0')} is evaluated per FlowFile "
        "(format() has no column form)"
    ]
