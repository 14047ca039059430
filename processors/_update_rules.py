"""UpdateAttribute's batch form: advanced rules and attribute changes over columns.

One by one, UpdateAttribute evaluates every rule's conditions against a FlowFile (each rule's
conditions in order, stopping at the first false one), merges the actions of the rules that
matched over the defaults, evaluates them and the Delete Attributes Expression, and applies them.
Over a batch the same happens in masks and columns:

1. :func:`match_rules`: each rule's conditions as boolean columns, each condition evaluated
   only over the FlowFiles the earlier ones left matching, so a FlowFile evaluates exactly the
   conditions it evaluates one by one (an error in a later condition is its error only);
2. :func:`group_by_matches`: the FlowFiles grouped by the set of rules they match, one
   :class:`RuleGroup` per combination, each holding its rows in input order;
3. the processor evaluates each group's actions over the group's FlowFiles;
4. :func:`apply_changes`: the groups' values put back in input order, as one batch;
5. :func:`final_state`: the state the FlowFiles leave, when it is stored and no expression
   reads it.

:func:`called_functions` tells which Expression Language functions a configuration calls, for
what the batch form cannot evaluate column by column (``nextInt``'s order, ``getStateValue``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs
import numpy as np

from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_boolean_column
from flowcore.expression._nodes import Call, Chain, walk
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, TextColumn, concat_columns

__all__ = [
    "RuleGroup",
    "apply_changes",
    "called_functions",
    "final_state",
    "group_by_matches",
    "match_rules",
    "present_everywhere",
]

#: Rules whose matches are packed as the bits of one whole number (more: grouped row-wise).
_PACKED_RULES = 62


@attrs.frozen(eq=False)
class RuleGroup:
    """FlowFiles of a batch that match the same rules.

    Attributes:
        rules: the indices of the rules they match, in rule order.
        rows: their positions in the batch, ascending; None for every FlowFile.
    """

    rules: tuple[int, ...]
    rows: np.ndarray | None

    def part(self, batch: FlowFileBatch) -> FlowFileBatch:
        """The group's FlowFiles, as a batch of their own."""
        return batch if self.rows is None else batch.take(self.rows)


def called_functions(texts: Iterable[str]) -> Counter[str]:
    """How many of *texts* call each Expression Language function, nested calls included.

    Raises:
        ExpressionSyntaxError: a text is not valid Expression Language.
    """
    counted: Counter[str] = Counter()
    for text in texts:
        names = {
            node.name
            for part in compile_expression(text).template.parts
            if isinstance(part, Chain)
            for node in walk(part)
            if isinstance(node, Call)
        }
        counted.update(names)
    return counted


def match_rules(
    conditions: Sequence[Sequence[str]],
    batch: FlowFileBatch,
    *,
    clock: Callable[[], int] | None,
    state: Mapping[str, str] | None,
) -> np.ndarray:
    """Which FlowFiles each rule matches: a ``(rules, FlowFiles)`` mask.

    Rule *i* matches where all of ``conditions[i]`` are true (a rule without conditions matches
    every FlowFile). A condition is evaluated only over the FlowFiles every earlier condition of
    its rule held for, as ``all()`` stops one by one.

    Raises:
        ExpressionEvaluationError: a condition fails for a FlowFile that evaluates it.
    """
    matched = np.ones((len(conditions), batch.count), dtype=bool)
    for mask, rule_conditions in zip(matched, conditions, strict=True):
        for condition in rule_conditions:
            rows = np.flatnonzero(mask)
            if not len(rows):
                break
            part = batch if len(rows) == batch.count else batch.take(rows)
            mask[rows] = evaluate_boolean_column(
                compile_expression(condition), part, clock=clock, state=state
            )
    return matched


def group_by_matches(matched: np.ndarray) -> list[RuleGroup]:
    """The FlowFiles grouped by the rules they match (*matched* as :func:`match_rules` gives).

    Groups come in the order of their match patterns; a single group holds every FlowFile
    (``rows`` None), so a batch whose FlowFiles all match alike is never cut.
    """
    rules, count = matched.shape
    if not rules or not count:
        return [RuleGroup((), None)]
    if rules <= _PACKED_RULES:
        weights = np.left_shift(np.int64(1), np.arange(rules, dtype=np.int64))
        codes = weights @ matched.astype(np.int64)
        keys, inverse = np.unique(codes, return_inverse=True)
        patterns = (keys[:, None] & weights[None, :]) != 0
    else:
        patterns, inverse = np.unique(matched.T, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(patterns) == 1:
        return [RuleGroup(tuple(np.flatnonzero(patterns[0]).tolist()), None)]
    order = np.argsort(inverse, kind="stable")  # each group's rows stay ascending
    bounds = np.cumsum(np.bincount(inverse))[:-1]
    return [
        RuleGroup(tuple(np.flatnonzero(pattern).tolist()), rows)
        for pattern, rows in zip(patterns, np.split(order, bounds), strict=True)
    ]


def present_everywhere(column: Column) -> bool:
    """Whether every FlowFile of *column* has the attribute (no None value is used)."""
    if isinstance(column, IntColumn) or None not in column.dictionary:
        return True
    absent = [i for i, value in enumerate(column.dictionary) if value is None]
    return not np.isin(column.codes, absent).any()


def _absent_everywhere(column: Column) -> bool:
    """Whether no FlowFile of *column* has the attribute."""
    if isinstance(column, IntColumn):
        return False
    absent = [i for i, value in enumerate(column.dictionary) if value is None]
    return bool(absent) and bool(np.isin(column.codes, absent).all())


def apply_changes(
    batch: FlowFileBatch,
    groups: Sequence[RuleGroup],
    changes: Sequence[Mapping[str, Column | None]],
) -> FlowFileBatch:
    """*batch* with each group's attribute changes: a column of values, or None (removed).

    A name a group leaves alone keeps the incoming values of that group's FlowFiles. One value
    for all FlowFiles is set as a shared attribute, as a FlowFile-by-FlowFile update leaves it.
    """
    full = dict(changes[0]) if len(groups) == 1 else _reassembled(batch, groups, changes)
    shared: dict[str, str] = {}
    columns: dict[str, Column] = {}
    removed: list[str] = []
    for name, column in full.items():
        if column is None or _absent_everywhere(column):
            removed.append(name)
        elif (
            isinstance(column, TextColumn)
            and len(column.dictionary) == 1
            and column.dictionary[0] is not None
        ):
            shared[name] = column.dictionary[0]
        else:
            columns[name] = column
    changed = batch.with_attributes(shared) if shared else batch
    if columns:
        changed = changed.with_columns(columns)
    if removed:
        changed = changed.without_attributes(removed)
    return changed


def _reassembled(
    batch: FlowFileBatch,
    groups: Sequence[RuleGroup],
    changes: Sequence[Mapping[str, Column | None]],
) -> dict[str, Column | None]:
    """Each changed name's full column: the groups' pieces, put back in input order."""
    order = np.concatenate([g.rows for g in groups])  # type: ignore[misc]  # several groups
    positions = np.empty(len(order), dtype=np.int64)
    positions[order] = np.arange(len(order), dtype=np.int64)
    names = dict.fromkeys(name for change in changes for name in change)
    full: dict[str, Column | None] = {}
    for name in names:
        incoming = batch.column(name)
        pieces = []
        for group, change in zip(groups, changes, strict=True):
            size = len(group.rows)  # type: ignore[arg-type]
            if name in change:
                piece = change[name]
                pieces.append(piece if piece is not None else _nones(size))
            elif incoming is not None:
                pieces.append(incoming.take(group.rows))  # type: ignore[arg-type]
            else:
                pieces.append(_nones(size))
        full[name] = concat_columns(pieces).take(positions)
    return full


def _nones(count: int) -> TextColumn:
    """*count* FlowFiles without the attribute."""
    return TextColumn(np.zeros(count, dtype=np.int32), (None,))


def final_state(
    initialised: Mapping[str, str],
    groups: Sequence[RuleGroup],
    updates: Sequence[Mapping[str, Column]],
    count: int,
) -> dict[str, str]:
    """The state *count* FlowFiles leave when each stores its updates in turn.

    One by one, each FlowFile's updates go over the state the previous one left (which
    starts *initialised*): a variable ends with its value in the last FlowFile that set it.
    """
    state = dict(initialised)
    last: dict[str, tuple[int, str]] = {}
    for group, group_updates in zip(groups, updates, strict=True):
        size = count if group.rows is None else len(group.rows)
        if not size:
            continue
        row = count - 1 if group.rows is None else int(group.rows[-1])
        for name, column in group_updates.items():
            if name not in last or last[name][0] < row:
                value = column.value(size - 1)
                last[name] = (row, value or "")
    state.update({name: value for name, (_, value) in last.items()})
    return state
