"""The tree walk: what evaluating a parsed expression gives, one syntax node at a time.

:func:`evaluate_chain` defines what every evaluation gives. Expressions run the closures
:mod:`~flowcore.expression._compile` makes from the tree instead, which decide ahead what this
walk decides per evaluation; the multi-attribute subjects (``anyAttribute`` ...) are walked.
"""

from __future__ import annotations

import attrs

from flowcore.errors import ExpressionEvaluationError, FlowcoreError
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._functions import FUNCTIONS
from flowcore.expression._nodes import AttributeRef, Call, Chain, Literal, Node, ParameterRef
from flowcore.expression._values import Value, check_length, shown, to_boolean

__all__ = ["evaluate_chain"]


def _evaluate_node(node: Node, ctx: EvaluationContext) -> Value:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Chain):
        return evaluate_chain(node, ctx)
    if isinstance(node, AttributeRef):
        return ctx.lookup(node.name)
    if isinstance(node, ParameterRef):
        return ctx.parameters.get(node.name)
    return _invoke(node, None, ctx)


#: What a function raises on bad data, each made an ExpressionEvaluationError: a date past year
#: 9999 (ValueError, or OSError on some platforms), JSON nested too deep for ``jsonPath``
#: (RecursionError), a digit string over Python's 4,300-digit limit (ValueError) ...
_DATA_ERRORS = (
    ValueError,
    TypeError,
    ArithmeticError,
    IndexError,
    KeyError,
    OSError,
    RecursionError,
)


def _invoke(call: Call, subject: Value, ctx: EvaluationContext) -> Value:
    spec = FUNCTIONS[call.name]
    if spec.lazy:
        args: list[object] = [_Thunk(arg, ctx) for arg in call.args]
    else:
        args = [_evaluate_node(arg, ctx) for arg in call.args]
    try:
        result = spec.impl(ctx, subject, *args)
    except FlowcoreError:
        raise
    except _DATA_ERRORS as ex:
        msg = f"{call.name}() failed on {shown(subject)}: {type(ex).__name__}: {ex}"
        raise ExpressionEvaluationError(msg) from ex
    if isinstance(result, str):  # the amplifying functions refuse before building; the
        check_length(len(result), call.name)  # others (escapeJson, urlEncode ...) here
    return result


@attrs.frozen
class _Thunk:
    node: Node
    ctx: EvaluationContext

    def __call__(self) -> Value:
        return _evaluate_node(self.node, self.ctx)


def evaluate_chain(chain: Chain, ctx: EvaluationContext) -> Value:
    """Evaluate ``${subject:calls...}``, including multi-attribute subjects and reducers."""
    subject = chain.subject
    if isinstance(subject, Call) and FUNCTIONS[subject.name].kind == "multi":
        return _evaluate_multi(chain, subject, ctx)
    value = _evaluate_node(subject, ctx)
    for call in chain.calls:
        value = _invoke(call, value, ctx)
    return value


def _evaluate_multi(chain: Chain, subject: Call, ctx: EvaluationContext) -> Value:
    values: list[Value] = list(_invoke(subject, None, ctx))  # type: ignore[arg-type]
    if not values:
        # NiFi evaluates the chain once even when nothing matched, on a null value, so
        # ${allMatchingAttributes('x.*'):isNull()} is true when no attribute matches.
        values = [None]
    calls = iter(chain.calls)
    for call in calls:
        spec = FUNCTIONS[call.name]
        if spec.kind == "reduce":
            args = [_evaluate_node(arg, ctx) for arg in call.args]
            value = spec.impl(ctx, values, *args)
            for rest in calls:
                value = _invoke(rest, value, ctx)
            return value
        values = [_invoke(call, v, ctx) for v in values]
    results = [to_boolean(v) is True for v in values]
    return any(results) if subject.name.startswith("any") else all(results)
