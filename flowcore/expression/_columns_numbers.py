"""Whole-number chains over a column: numpy computes them exactly as the per-FlowFile path.

``${fragment.index:mod(8)}``, ``${fileSize:gt(100)}`` and the tail of ``${filename:length():
plus(1)}`` are Java long arithmetic and comparisons against literal whole numbers: numpy wraps
on overflow as Java's long does, and the quotient and remainder are taken with the dividend's
sign. What numpy would not compute exactly (the one overflowing quotient, an argument past a
long) is left to the per-FlowFile path by returning None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression._nodes import Literal

if TYPE_CHECKING:
    from flowcore.expression._nodes import Call, Node

__all__ = ["numeric_calls", "whole_arithmetic"]

#: Whole-number functions numpy computes exactly as the per-FlowFile evaluation does.
_ARITHMETIC = frozenset({"plus", "minus", "multiply", "mod", "divide"})
_COMPARISONS: Mapping[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "gt": np.greater,
    "ge": np.greater_equal,
    "lt": np.less,
    "le": np.less_equal,
    "equals": np.equal,
}
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _literal_int(node: Node) -> int | None:
    if isinstance(node, Literal) and type(node.value) is int:
        return node.value
    return None


def numeric_calls(values: np.ndarray, calls: Sequence[Call]) -> np.ndarray | None:
    """*calls* applied to whole numbers (int64) or booleans; None when numpy is not exact.

    Raises:
        ExpressionEvaluationError: ``mod(0)`` or ``divide(0)``, as every FlowFile would fail.
    """
    for call in calls:
        if values.dtype == bool:
            if call.name != "not" or call.args:
                return None
            values = ~values
            continue
        argument = _literal_int(call.args[0]) if len(call.args) == 1 else None
        if argument is None:
            return None
        if call.name in _COMPARISONS:
            values = _COMPARISONS[call.name](values, argument)
        elif call.name in _ARITHMETIC:
            computed = whole_arithmetic(call.name, values, argument)
            if computed is None:
                return None
            values = computed
        else:
            return None
    return values


def whole_arithmetic(name: str, values: np.ndarray, argument: int) -> np.ndarray | None:
    """Java long arithmetic on *values*; None where numpy would not match it exactly.

    Raises:
        ExpressionEvaluationError: ``mod(0)`` or ``divide(0)``.
    """
    if not _LONG_MIN <= argument <= _LONG_MAX:
        return None
    with np.errstate(over="ignore"):
        if name == "plus":
            return values + np.int64(argument)  # wraps, as Java's long does
        if name == "minus":
            return values - np.int64(argument)
        if name == "multiply":
            return values * np.int64(argument)
    if argument == 0:
        noun = "divide" if name == "divide" else "mod"
        msg = f"{noun}() by zero"
        raise ExpressionEvaluationError(msg)
    if argument in {-1, _LONG_MIN} or (len(values) and values.min() == _LONG_MIN):
        return None  # the overflowing quotient, a divisor numpy cannot negate: the exact path
    quotient = np.abs(values) // abs(argument) * np.where((values >= 0) == (argument >= 0), 1, -1)
    if name == "divide":
        return quotient
    return values - argument * quotient
