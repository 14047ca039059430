"""The column fast path: a plain child chain (``/a/b/c``) read from a pyarrow Table as a column.

Record processors hold many records as one Arrow table; for the common path that only walks
child fields they can take the column (struct field access) instead of building a Python
object per record. Anything else (wildcards, indices, predicates, functions) returns None
from :func:`child_chain` and goes through the per-record evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.errors import RecordPathEvaluationError
from flowcore.record_path._nodes import ROOT, Child, Expression, Path

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["child_chain", "evaluate_column"]


def child_chain(tree: Expression) -> tuple[str, ...] | None:
    """The field names of *tree* when it is an absolute chain of named children, else None."""
    if not isinstance(tree, Path) or tree.start != ROOT or not tree.steps:
        return None
    names = []
    for step in tree.steps:
        if not isinstance(step, Child) or step.name is None:
            return None
        names.append(step.name)
    return tuple(names)


def evaluate_column(tree: Expression, table: pa.Table) -> pa.ChunkedArray:
    """The values of the child chain *tree* for every row of *table*, as one column.

    A missing top-level field, or a missing field inside a struct, is an error here (the
    per-record path would give null values): a processor checks the schema first.

    Raises:
        RecordPathEvaluationError: *tree* is not a child chain, or a field is not in the
            table's schema.
    """
    import pyarrow as pa  # noqa: PLC0415 - pyarrow loads only for columnar callers
    import pyarrow.compute as pc  # noqa: PLC0415

    names = child_chain(tree)
    if names is None:
        msg = "evaluate_column takes a plain child chain such as /a/b/c; check child_chain first"
        raise RecordPathEvaluationError(msg)
    first, rest = names[0], names[1:]
    if first not in table.column_names:
        msg = f"the table has no column {first!r} (it has {table.column_names!r})"
        raise RecordPathEvaluationError(msg)
    column = table.column(first)
    for depth, name in enumerate(rest, start=1):
        kind = column.type
        if not pa.types.is_struct(kind) or kind.get_field_index(name) < 0:
            where = "/" + "/".join(names[:depth])
            msg = f"{where} has no child field {name!r} in the table's schema (its type is {kind})"
            raise RecordPathEvaluationError(msg)
        column = pc.struct_field(column, name)
    return column
