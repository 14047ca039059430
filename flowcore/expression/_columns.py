"""Expression Language over a FlowFile batch: one value per FlowFile without a context each.

An expression is evaluated for a whole :class:`~flowcore.flowfile_batch.FlowFileBatch` in the
cheapest way that gives each FlowFile exactly the value the per-FlowFile evaluation would:

1. **once**, when it names only attributes every FlowFile shares (and nothing that changes
   from call to call, such as ``now()`` or ``UUID()``);
2. **vectorised**, when it is one chain of whole-number arithmetic and comparisons
   (``${fragment.index:mod(8)}``, ``${fileSize:gt(100)}``) over a whole-number column: numpy
   computes it with Java's long semantics (wrapping, remainder with the dividend's sign);
3. **once per distinct input**, when the attributes it names take few distinct values (a
   dictionary-encoded column of group names, a filename shared by the splits of one file):
   evaluated per combination, spread back by the codes;
4. **per FlowFile**, the compiled evaluation of each one's attributes, otherwise.

Errors are the per-FlowFile evaluation's: the caller routes a batch whose expressions fail
through the one-by-one path, which reports them FlowFile by FlowFile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import AttributeRef, Call, Chain, Literal, Node, ParameterRef
from flowcore.expression._values import to_boolean
from flowcore.flowfile_batch.columns import (
    Column,
    IntColumn,
    TextColumn,
    column_of,
    constant_column,
)

if TYPE_CHECKING:
    from flowcore.expression import Expression
    from flowcore.flowfile_batch import FlowFileBatch

__all__ = ["evaluate_boolean_column", "evaluate_column"]

#: Functions whose result changes from one call to the next: never evaluated once for many.
_VOLATILE = frozenset({"now", "UUID", "nextInt", "random", "thread", "math"})
#: Functions that read every attribute (``allAttributes`` ...): each FlowFile's own map.
_ALL_ATTRIBUTES = frozenset(
    {
        "allAttributes",
        "anyAttribute",
        "allMatchingAttributes",
        "anyMatchingAttribute",
        "allDelineatedValues",
        "anyDelineatedValue",
    }
)
#: FlowFile properties a name can resolve to before its attributes.
_VIRTUAL = frozenset(
    {"fileSize", "flowFileId", "entryDate", "lineageStartDate", "lastQueueDate", "queueDateIndex"}
)
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
#: Distinct inputs worth evaluating once each: at most this share of the FlowFiles.
_DISTINCT_SHARE = 0.5


def evaluate_column(
    expression: Expression,
    batch: FlowFileBatch,
    *,
    clock: Callable[[], int] | None = None,
    state: Mapping[str, str] | None = None,
) -> Column:
    """*expression*'s value as property text (null as ``""``) for each FlowFile of *batch*.

    Raises:
        ExpressionEvaluationError: the expression fails for some FlowFile.
    """
    return _evaluate(expression, batch, clock, state, boolean=False)  # type: ignore[return-value]


def evaluate_boolean_column(
    expression: Expression,
    batch: FlowFileBatch,
    *,
    clock: Callable[[], int] | None = None,
    state: Mapping[str, str] | None = None,
) -> np.ndarray:
    """Whether *expression* is true (as :meth:`Expression.evaluate_boolean`) for each FlowFile.

    Raises:
        ExpressionEvaluationError: the expression fails for some FlowFile.
    """
    return _evaluate(expression, batch, clock, state, boolean=True)  # type: ignore[return-value]


def _evaluate(
    expression: Expression,
    batch: FlowFileBatch,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
    *,
    boolean: bool,
) -> Column | np.ndarray:
    count = batch.count
    if not count:
        return np.zeros(0, dtype=bool) if boolean else constant_column("", 0)
    names, volatile = _names(expression)
    varying = sorted(n for n in names if n in _VIRTUAL or batch.varies(n))
    if not volatile and not varying:
        one = _evaluate_row(expression, batch, 0, clock=clock, state=state, boolean=boolean)
        if boolean:
            return np.full(count, bool(one), dtype=bool)
        return constant_column(one, count)  # type: ignore[arg-type]
    if volatile:
        return _per_row(expression, batch, range(count), clock=clock, state=state, boolean=boolean)
    vector = _vectorised(expression, batch)
    if vector is not None:
        if vector.dtype == bool:
            return vector if boolean else TextColumn(vector.astype(np.int32), ("false", "true"))
        if boolean:
            return np.zeros(count, dtype=bool)  # a number is never "true"
        return IntColumn(vector)
    codes, representatives = _distinct_inputs(batch, varying)
    if codes is not None and len(representatives) <= max(1, int(count * _DISTINCT_SHARE)):
        values = _per_row(
            expression,
            batch,
            representatives,
            clock=clock,
            state=state,
            boolean=boolean,
            raw=True,
        )
        if boolean:
            return np.asarray(values, dtype=bool)[codes]
        column = TextColumn(codes, tuple(values))  # type: ignore[arg-type]
        return column
    return _per_row(expression, batch, range(count), clock=clock, state=state, boolean=boolean)


def _walk(node: Any) -> Iterator[Any]:
    """Every node under *node*, itself included."""
    yield node
    if isinstance(node, Chain):
        yield from _walk(node.subject)
        for call in node.calls:
            yield from _walk(call)
    elif isinstance(node, Call):
        for arg in node.args:
            yield from _walk(arg)


def _names(expression: Expression) -> tuple[frozenset[str], bool]:
    """The names the expression reads, and whether its value may change from call to call.

    Reading every attribute counts as changing: each FlowFile is then evaluated on its own.
    """
    names: set[str] = set()
    volatile = False
    for part in expression.template.parts:
        if isinstance(part, str | ParameterRef):
            continue
        for node in _walk(part):
            if isinstance(node, AttributeRef):
                names.add(node.name)
            elif isinstance(node, Call) and (
                node.name in _VOLATILE or node.name in _ALL_ATTRIBUTES
            ):
                volatile = True
    return frozenset(names), volatile


def _virtual_column(batch: FlowFileBatch, name: str) -> np.ndarray:
    if name == "fileSize":
        return batch.sizes
    if name == "flowFileId":
        return batch.ids
    if name == "queueDateIndex":
        return batch.queue_date_indices
    scalar = {
        "entryDate": batch.entry_date,
        "lineageStartDate": batch.lineage_start_date,
        "lastQueueDate": batch.queue_date,
    }[name]
    return np.full(batch.count, scalar, dtype=np.int64)


def _numbers_of(batch: FlowFileBatch, name: str) -> np.ndarray | None:
    """The whole numbers attribute (or FlowFile property) *name* holds, when a column has them."""
    if name in _VIRTUAL:
        return _virtual_column(batch, name)
    column = batch.columns.get(name)
    return column.numbers if isinstance(column, IntColumn) else None


def _literal_int(node: Node) -> int | None:
    if isinstance(node, Literal) and type(node.value) is int:
        return node.value
    return None


def _vectorised(expression: Expression, batch: FlowFileBatch) -> np.ndarray | None:
    """The chain computed with numpy, or None when it is not one numpy computes exactly."""
    parts = expression.template.parts
    if len(parts) != 1 or not isinstance(parts[0], Chain):
        return None
    chain = parts[0]
    if not isinstance(chain.subject, AttributeRef):
        return None
    values = _numbers_of(batch, chain.subject.name)
    if values is None:
        return None
    for call in chain.calls:
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
            computed = _arithmetic(call.name, values, argument)
            if computed is None:
                return None
            values = computed
        else:
            return None
    return values


def _arithmetic(name: str, values: np.ndarray, argument: int) -> np.ndarray | None:
    """Java long arithmetic on *values*; None where numpy would not match it exactly."""
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
    if argument == -1 or (len(values) and values.min() == _LONG_MIN):
        return None  # the one overflowing quotient: left to the exact path
    quotient = np.abs(values) // abs(argument) * np.where((values >= 0) == (argument >= 0), 1, -1)
    if name == "divide":
        return quotient
    return values - argument * quotient


def _distinct_inputs(batch: FlowFileBatch, names: list[str]) -> tuple[np.ndarray | None, list[int]]:
    """Which distinct combination of *names*' values each FlowFile has, and one FlowFile each.

    Returns ``(codes, representatives)``; ``(None, [])`` when the combinations cannot be
    counted in an int64.
    """
    combined = np.zeros(batch.count, dtype=np.int64)
    span = 1
    for name in names:
        if name in _VIRTUAL:
            column: Column | None = IntColumn(_virtual_column(batch, name))
        else:
            column = batch.column(name)
        if column is None:
            continue
        codes, values = column.encoded()
        if span * max(1, len(values)) >= 1 << 62:
            return None, []
        combined += codes.astype(np.int64) * span
        span *= max(1, len(values))
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    return inverse.astype(np.int32), first.tolist()


def _context(
    batch: FlowFileBatch,
    index: int,
    *,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
) -> EvaluationContext:
    """The context the per-FlowFile evaluation would give FlowFile *index*."""
    flowfile = batch.flowfile(index)
    return EvaluationContext(
        attributes=flowfile.attributes, flowfile=flowfile, state=state, clock=clock
    )


def _evaluate_row(
    expression: Expression,
    batch: FlowFileBatch,
    index: int,
    *,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
    boolean: bool,
) -> str | bool:
    ctx = _context(batch, index, clock=clock, state=state)
    if boolean:
        return to_boolean(expression.value_in(ctx)) is True
    return expression.evaluate_in(ctx)


def _per_row(
    expression: Expression,
    batch: FlowFileBatch,
    rows: Any,
    *,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
    boolean: bool,
    raw: bool = False,
) -> Any:
    """Each FlowFile of *rows* evaluated on its own; a list when *raw*, else a column."""
    values = [
        _evaluate_row(expression, batch, i, clock=clock, state=state, boolean=boolean) for i in rows
    ]
    if raw:
        return values
    if boolean:
        return np.asarray(values, dtype=bool)
    return column_of(values)  # type: ignore[arg-type]
