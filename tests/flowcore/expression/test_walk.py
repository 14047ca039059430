"""Tests for the tree walk: what evaluating a parsed expression gives, node by node."""

from __future__ import annotations

from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import Chain
from flowcore.expression._parser import parse
from flowcore.expression._walk import evaluate_chain


def _chain(text: str) -> Chain:
    (chain,) = parse(text).parts
    assert isinstance(chain, Chain)
    return chain


def test_a_multi_attribute_subject_walks_the_chain_over_each_value() -> None:
    """``anyAttribute`` evaluates the chain once per attribute and is true if any is."""
    chain = _chain("${anyAttribute('a', 'b'):equals('x')}")
    assert evaluate_chain(chain, EvaluationContext(attributes={"a": "y", "b": "x"})) is True
    assert evaluate_chain(chain, EvaluationContext(attributes={"a": "y", "b": "z"})) is False


def test_a_reducer_ends_a_multi_attribute_subject_and_the_chain_goes_on() -> None:
    """``join`` reduces the values to one, which the calls after it take as their subject."""
    chain = _chain("${allAttributes('a', 'b'):join('-'):toUpper()}")
    assert evaluate_chain(chain, EvaluationContext(attributes={"a": "x", "b": "y"})) == "X-Y"
