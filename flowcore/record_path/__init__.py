"""NiFi's RecordPath: select, test and change fields of records.

RecordPath (NiFi's ``nifi-record-path``) is the little language UpdateRecord, PartitionRecord,
LookupRecord and others use to point into a record: ``/name``, ``//city``,
``/accounts[./balance > 100]/id``, ``substringBefore(/name, ' ')``. Records are Python mappings
(nested dicts, lists and maps), with an optional schema (:class:`RecordSchemaLike`).

    >>> path = compile_record_path("/accounts[*]/id")
    >>> [fv.value for fv in path.evaluate({"accounts": [{"id": 6}, {"id": 9}]})]
    [6, 9]

Compile once, evaluate often: :func:`compile_record_path` caches by text, and a
:class:`RecordPath` pickles as its text (Spark ships processors that hold them). Each result
is a :class:`FieldValue` whose :meth:`~FieldValue.update_value` writes into the record.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from flowcore.errors import (
    RecordPathError,
    RecordPathEvaluationError,
    RecordPathSyntaxError,
)
from flowcore.record_path._columns import child_chain, evaluate_column
from flowcore.record_path._evaluate import Context, evaluate
from flowcore.record_path._nodes import ROOT, Expression, Path, to_text
from flowcore.record_path._parser import FILTER_FUNCTIONS, STANDALONE_FUNCTIONS, parse
from flowcore.record_path._schema import (
    DataType,
    DataTypeLike,
    RecordSchema,
    RecordSchemaLike,
    infer_type,
)
from flowcore.record_path._values import FieldValue, RecordField, root_value

__all__ = [
    "FILTER_FUNCTIONS",
    "STANDALONE_FUNCTIONS",
    "DataType",
    "DataTypeLike",
    "FieldValue",
    "RecordField",
    "RecordPath",
    "RecordPathError",
    "RecordPathEvaluationError",
    "RecordPathSyntaxError",
    "RecordSchema",
    "RecordSchemaLike",
    "child_chain",
    "compile_record_path",
    "evaluate_column",
    "infer_type",
    "is_valid_record_path",
    "parse",
    "to_text",
]

#: How many compiled paths the process keeps (NiFi's processors keep a RecordPathCache too).
CACHE_SIZE = 1024  # paths


@attrs.frozen
class RecordPath:
    """A compiled RecordPath: its text and syntax tree. Build it with :func:`compile_record_path`.

    It pickles as its text (and is rebuilt through the cache), so a processor holding one
    ships to Spark executors cheaply.
    """

    path: str
    tree: Expression = attrs.field(eq=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (compile_record_path, (self.path,))

    def __str__(self) -> str:
        return self.path

    @property
    def is_absolute(self) -> bool:
        """True when the path starts at the root record (``/...``), as NiFi's ``isAbsolute``."""
        return isinstance(self.tree, Path) and self.tree.start == ROOT

    def iter_values(
        self,
        record: Mapping[str, Any],
        *,
        schema: RecordSchemaLike | None = None,
        context: FieldValue | None = None,
    ) -> Iterator[FieldValue]:
        """The selected FieldValues, lazily (do not change the record while iterating)."""
        root = root_value(record, schema)
        return evaluate(self.tree, Context(root, context))

    def evaluate(
        self,
        record: Mapping[str, Any],
        *,
        schema: RecordSchemaLike | None = None,
        context: FieldValue | None = None,
    ) -> tuple[FieldValue, ...]:
        """The FieldValues this path selects in *record*, in NiFi's order.

        Args:
            record: the record (a mapping; nested records are mappings, arrays lists).
            schema: its schema, when known: tells maps from records, orders ``/*`` and ``//``.
            context: the context node for a relative path (``./x``, ``..``): a FieldValue
                from an earlier evaluation, as UpdateRecord's "Relative" replacement uses.

        Raises:
            RecordPathEvaluationError: a function failed on the data (a bad regex, a value
                that is not a number for ``add``).
        """
        return tuple(self.iter_values(record, schema=schema, context=context))


@functools.lru_cache(maxsize=CACHE_SIZE)
def compile_record_path(path: str) -> RecordPath:
    """Parse and check *path* once; the same text returns the same :class:`RecordPath`.

    Raises:
        RecordPathSyntaxError: *path* is not a valid RecordPath (the message names the
            position and what was expected).
    """
    return RecordPath(path, parse(path))


def is_valid_record_path(path: str) -> bool:
    """Whether *path* compiles (NiFi's ``RecordPathValidator`` for processor properties)."""
    try:
        compile_record_path(path)
    except RecordPathSyntaxError:
        return False
    return True
