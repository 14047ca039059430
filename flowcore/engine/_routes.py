"""A ``transform_batch`` result checked as the engine takes it whole, every problem named.

A batch form's routes must hold each FlowFile of its batch exactly once, go to relationships
the processor declares, and change only attributes, and contents written through the batch
form's context (``write_contents``). One check serves the engine (:mod:`._batches`: a bulletin
names the problems and the batch's FlowFiles go one by one) and the test harness's batch mode
(which raises it as the processor's error), so a wrong batch form is found the same way in
both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from flowcore.errors import BatchResultError
from flowcore.processor.base import Processor
from flowcore.session.batch_context import BatchRoute

if TYPE_CHECKING:
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.session.batch_context import BatchContext

__all__ = ["checked_routes"]

#: The fields of a batch a batch form must keep: everything but the attributes.
_KEPT = (
    "ids",
    "uuid_key",
    "uuid_numbers",
    "resource_claim",
    "offsets",
    "sizes",
    "entry_date",
    "lineage_start_date",
    "lineage_start_indices",
    "queue_date",
    "queue_date_indices",
)


#: The fields a batch form changes by writing contents (``BatchContext.write_contents``).
_CONTENT = {"resource_claim", "offsets", "sizes"}


def _name(batch: FlowFileBatch, row: int) -> str:
    """FlowFile *row* of *batch*, as a message names it."""
    return f"#{row} ({batch.flowfile(row).attributes.get('filename', '')})"


def checked_routes(
    processor: Processor,
    batch: FlowFileBatch,
    result: Any,
    context: BatchContext | None = None,
) -> list[tuple[BatchRoute, np.ndarray, FlowFileBatch]]:
    """A ``transform_batch`` result as ``(route, rows, the input's FlowFiles at rows)``.

    *context* is the batch form's: contents it wrote (``write_contents``) may replace the
    input's.

    Raises:
        BatchResultError: the result is not one the engine takes whole, with every problem
            named: a route to an undeclared relationship, rows and FlowFiles that do not
            match, a FlowFile in no route or in several, or a change beyond attributes and
            contents written through the context.
    """
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str):
        routes = [BatchRoute(result[0], None, result[1])]
    else:
        routes = list(result)
    declared = processor.relationship_names()
    problems = []
    taken: list[np.ndarray] = []
    checked = []
    for route in routes:
        where = f"route to {route.relationship!r}"
        if route.relationship not in declared:
            problems.append(f"{where}: no such relationship (it declares {sorted(declared)!r})")
        rows = np.arange(batch.count) if route.rows is None else np.asarray(route.rows, np.int64)
        if len(rows) != route.batch.count:
            problems.append(f"{where}: {len(rows)} rows but {route.batch.count} FlowFiles")
            continue
        if len(rows) and (rows.min() < 0 or rows.max() >= batch.count):
            problems.append(f"{where}: rows outside the {batch.count} FlowFiles given")
            continue
        taken.append(rows)
        before = batch if route.rows is None else batch.take(rows)
        changed = _changed_fields(before, route.batch)
        if changed and set(changed) <= _CONTENT and context is not None:
            if context.wrote(route.batch):
                changed = []
            else:
                changed.append("(contents change only through context.write_contents)")
        if changed:
            problems.append(f"{where}: changes more than attributes: {', '.join(changed)}")
        checked.append((route, rows, before))
    held = (
        np.bincount(np.concatenate(taken), minlength=batch.count)
        if taken
        else np.zeros(batch.count, dtype=np.int64)
    )
    missing = np.flatnonzero(held == 0).tolist()
    twice = np.flatnonzero(held > 1).tolist()
    if missing:
        problems.append("in no route: " + ", ".join(_name(batch, r) for r in missing[:10]))
    if twice:
        problems.append("in several routes: " + ", ".join(_name(batch, r) for r in twice[:10]))
    if problems:
        listed = "\n  ".join(problems)
        msg = (
            f"{type(processor).__name__}.transform_batch returned a result the engine would not "
            f"take whole (its {batch.count} FlowFiles go one by one):\n  {listed}"
        )
        raise BatchResultError(msg)
    return checked


def _changed_fields(before: FlowFileBatch, after: FlowFileBatch) -> list[str]:
    """The fields other than attributes in which *after* differs from *before*."""
    changed = []
    for name in _KEPT:
        old, new = getattr(before, name), getattr(after, name)
        same = np.array_equal(old, new) if isinstance(old, np.ndarray) else old == new
        if not same:
            changed.append(name)
    return changed
