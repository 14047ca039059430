"""Expression Language over a FlowFile batch: one value per FlowFile without a context each.

An expression is evaluated for a whole :class:`~flowcore.flowfile_batch.FlowFileBatch` in the
cheapest way that gives each FlowFile exactly the value the per-FlowFile evaluation would:

1. **once**, when it names only attributes every FlowFile shares (and nothing that changes
   from call to call, such as ``now()`` or ``UUID()``);
2. **numpy**, when it is one chain of whole-number arithmetic and comparisons
   (``${fragment.index:mod(8)}``, ``${fileSize:gt(100)}``) over a whole-number column, with
   Java's long semantics (:mod:`~flowcore.expression._columns_numbers`);
3. **a string pipeline**, when it is one chain of string functions with literal arguments
   over one attribute (``${filename:substringBefore('.'):toUpper()}``, ``...:length():mod(4)``,
   ``...:endsWith('.log')``): each distinct value of the column goes once through C-level maps
   of the very ``str`` methods the per-FlowFile functions call, however many distinct values
   there are, and the FlowFiles keep their codes (:mod:`~flowcore.expression._columns_text`);
4. **typed vectors**, when it is a chain (or text of chains) that reads numbers out of text,
   does arithmetic, compares, tests for nulls or combines booleans
   (``${amount:toDecimal():gt(250)}``, ``${size:toNumber():multiply(2)}``,
   ``${a:isEmpty():or(${b:lt(3)})}``): each distinct value once, in whole-column passes, with
   NiFi's types and nulls (:mod:`~flowcore.expression._columns_typed`);
5. **once per distinct input**, when the attributes it names take few distinct values (a
   dictionary-encoded column of group names, a filename shared by the splits of one file):
   evaluated per combination, spread back by the codes;
6. **per FlowFile**, the compiled evaluation (:mod:`~flowcore.expression._compile`) of each
   one's attributes, otherwise.

Errors are the per-FlowFile evaluation's: the caller routes a batch whose expressions fail
through the one-by-one path, which reports them FlowFile by FlowFile. A way that cannot be
exact for some input (a string over the length limit, a quotient that overflows) steps aside
for the next one rather than guess. Which ways an expression can take is a matter of its text
alone (:func:`~flowcore.expression._columns_way.column_way`): ``explain`` names those left to
the last two.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Mapping
from itertools import repeat
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from flowcore.expression._columns_numbers import numeric_calls
from flowcore.expression._columns_parse import Numbers
from flowcore.expression._columns_text import ChainValues, column_entries, text_template
from flowcore.expression._columns_typed import (
    Booleans,
    Texts,
    Typed,
    render_vector,
    truth,
    typed_chain,
)
from flowcore.expression._columns_way import ALL_ATTRIBUTES, VOLATILE
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import AttributeRef, Call, Chain, ParameterRef, walk
from flowcore.expression._values import max_length, render, to_boolean
from flowcore.flowfile_batch.columns import (
    Column,
    IntColumn,
    TextColumn,
    column_of,
    constant_column,
)

if TYPE_CHECKING:
    from flowcore.expression._compile import Compiled
    from flowcore.flowfile_batch import FlowFileBatch

__all__ = ["evaluate_boolean_column", "evaluate_column"]

#: FlowFile properties a name can resolve to before its attributes.
_VIRTUAL = frozenset(
    {"fileSize", "flowFileId", "entryDate", "lineageStartDate", "lastQueueDate", "queueDateIndex"}
)
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
#: What ``java_trim`` strips: every character up to U+0020.
_JAVA_BLANKS = "".join(map(chr, range(33)))
#: Distinct inputs worth evaluating once each: at most this share of the FlowFiles.
_DISTINCT_SHARE = 0.5


def evaluate_column(
    expression: Compiled,
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
    expression: Compiled,
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
    expression: Compiled,
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
    text = _text_vectorised(expression, batch, clock, state, boolean=boolean)
    if text is not None:
        return text
    typed = _typed_vectorised(expression, batch, boolean=boolean)
    if typed is not None:
        return typed
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


def _names(expression: Compiled) -> tuple[frozenset[str], bool]:
    """The names the expression reads, and whether its value may change from call to call.

    Reading every attribute counts as changing: each FlowFile is then evaluated on its own.
    """
    names: set[str] = set()
    volatile = False
    for part in expression.template.parts:
        if isinstance(part, str | ParameterRef):
            continue
        for node in walk(part):
            if isinstance(node, AttributeRef):
                names.add(node.name)
            elif isinstance(node, Call) and (node.name in VOLATILE or node.name in ALL_ATTRIBUTES):
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


def _vectorised(expression: Compiled, batch: FlowFileBatch) -> np.ndarray | None:
    """The chain computed with numpy, or None when it is not one numpy computes exactly."""
    chain = _lone_chain(expression)
    if chain is None or not isinstance(chain.subject, AttributeRef):
        return None
    values = _numbers_of(batch, chain.subject.name)
    if values is None:
        return None
    return numeric_calls(values, chain.calls)


def _lone_chain(expression: Compiled) -> Chain | None:
    parts = expression.template.parts
    return parts[0] if len(parts) == 1 and isinstance(parts[0], Chain) else None


def _text_vectorised(
    expression: Compiled,
    batch: FlowFileBatch,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
    *,
    boolean: bool,
) -> Column | np.ndarray | None:
    """String chains over one attribute, in text or alone, each distinct value once.

    See :mod:`~flowcore.expression._columns_text`.
    """
    parts = expression.template.parts
    names = {
        p.subject.name
        for p in parts
        if isinstance(p, Chain) and isinstance(p.subject, AttributeRef)
    }
    if len(names) != 1 or not all(
        isinstance(p, str) or (isinstance(p, Chain) and isinstance(p.subject, AttributeRef))
        for p in parts
    ):
        return None
    (name,) = names
    column = None if name in _VIRTUAL else batch.column(name)
    if column is None:
        return None
    result = text_template(parts, column)  # type: ignore[arg-type]
    if result is None:
        return None
    if result.absent:
        result = _with_absent(expression, batch, result, clock, state)
        if result is None:
            return None
    values, codes = result.values, result.codes
    if result.kind == "number":
        return np.zeros(len(codes), dtype=bool) if boolean else IntColumn(values[codes])
    if result.kind == "boolean":
        mask = values[codes]
        return mask if boolean else TextColumn(mask.astype(np.int32), ("false", "true"))
    if boolean:  # Boolean.valueOf(text.trim()): only "true" in any case
        trues = np.fromiter(
            map("true".__eq__, map(str.lower, map(str.strip, values, repeat(_JAVA_BLANKS)))),
            dtype=bool,
            count=len(values),
        )
        return trues[codes]
    return TextColumn(codes, values)


def _typed_vectorised(
    expression: Compiled, batch: FlowFileBatch, *, boolean: bool
) -> Column | np.ndarray | None:
    """Typed chains, alone or in text, each attribute's distinct values once.

    See :mod:`~flowcore.expression._columns_typed`. Text joining chains over different
    attributes is joined FlowFile by FlowFile.
    """
    subjects = _Subjects(batch)
    parts = expression.template.parts
    if len(parts) == 1 and isinstance(parts[0], Chain):
        typed = typed_chain(parts[0], subjects)
        if typed is None:
            return None
        vector = typed.vector
        if boolean:
            read = truth(vector)
            return typed.rows(read.values & ~read.null)
        if isinstance(vector, Numbers) and not (vector.null.any() or vector.decimal.any()):
            return IntColumn(typed.rows(vector.longs))
        if isinstance(vector, Booleans) and not vector.null.any():
            return TextColumn(typed.rows(vector.values.astype(np.int32)), ("false", "true"))
        return _text_column(render_vector(vector), typed.codes, batch.count)
    pieces: list[str | Typed] = []
    for part in parts:
        if isinstance(part, Chain):
            typed = typed_chain(part, subjects)
            if typed is None:
                return None
            pieces.append(typed)
        else:  # a parameter the context has no value for renders as nothing, as per FlowFile
            pieces.append(part if isinstance(part, str) else "")
    chains = [piece for piece in pieces if isinstance(piece, Typed)]
    if not chains:
        return None
    codes = chains[0].codes
    if any(chain.codes is not codes for chain in chains):
        codes = None  # different attributes: joined FlowFile by FlowFile
    rendered = [_rendered_piece(piece, codes) for piece in pieces]
    values = tuple(map("".join, zip(*rendered, strict=False)))  # the repeats never end
    limit = max_length()
    if len("".join(values)) > limit and max(map(len, values), default=0) > limit:
        return None  # the concatenation's per-FlowFile error
    if boolean:
        read = truth(Texts(values, np.zeros(len(values), dtype=bool)))
        return read.values if codes is None else read.values[codes]
    return _text_column(values, codes, batch.count)


def _rendered_piece(piece: str | Typed, codes: np.ndarray | None) -> Any:
    """A piece of text per entry of *codes* (per FlowFile when None): literal text repeats."""
    if isinstance(piece, str):
        return repeat(piece)
    texts = render_vector(piece.vector)
    if piece.codes is codes:
        return texts
    assert piece.codes is not None
    return map(texts.__getitem__, piece.codes.tolist())


def _text_column(values: tuple[str, ...], codes: np.ndarray | None, count: int) -> TextColumn:
    return TextColumn(np.arange(count) if codes is None else codes, values)


@attrs.define
class _Subjects:
    """Each attribute's entries for typed chains, made once per name and use.

    An absent attribute is what the per-FlowFile lookup finds then: the environment variable
    of that name, else null. A FlowFile property (``fileSize`` ...) and a whole-number column
    are numbers already, unless the chain starts with a string function.
    """

    batch: FlowFileBatch
    made: dict[tuple[str, bool], Typed | None] = attrs.field(factory=dict)

    def __call__(self, name: str, textual: bool) -> Typed | None:
        key = (name, textual)
        if key not in self.made:
            self.made[key] = self._subject(name, textual=textual)
        return self.made[key]

    def _subject(self, name: str, *, textual: bool) -> Typed:
        batch = self.batch
        count = batch.count
        numbers = _numbers_of(batch, name)
        if numbers is not None:
            none = np.zeros(count, dtype=bool)
            if textual:
                return Typed(Texts(tuple(map(str, numbers.tolist())), none), None)
            return Typed(Numbers(numbers, np.zeros(count), none, none), None)
        column = batch.column(name)
        if column is None:
            codes, values = np.zeros(count, dtype=np.int32), (None,)
        else:
            codes, values = column_entries(column)
        if None in values:
            found = os.environ.get(name)
            values = tuple(found if value is None else value for value in values)
        null = np.fromiter(map(operator.is_, values, repeat(None)), bool, len(values))
        return Typed(Texts(tuple(values), null), codes)


def _with_absent(
    expression: Compiled,
    batch: FlowFileBatch,
    result: ChainValues,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
) -> ChainValues | None:
    """*result* with each absent entry's value: the per-FlowFile one of one of its FlowFiles.

    None when that value is not of the chain's kind: the other ways evaluate the expression.
    """
    values = list(result.values) if result.kind == "text" else result.values.copy()
    for entry in result.absent:
        rows = np.flatnonzero(result.codes == entry)
        if not len(rows):
            continue  # an unused entry: its placeholder stays
        value = expression.value_in(_context(batch, int(rows[0]), clock=clock, state=state))
        if result.kind == "text":
            if value is not None and not isinstance(value, str):
                return None
            values[entry] = render(value)
        elif result.kind == "number":
            if type(value) is not int or not _LONG_MIN <= value <= _LONG_MAX:
                return None
            values[entry] = value
        elif type(value) is bool:
            values[entry] = value
        else:
            return None
    if result.kind == "text":
        values = tuple(values)
    return attrs.evolve(result, values=values, absent=())


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
    expression: Compiled,
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
    expression: Compiled,
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
