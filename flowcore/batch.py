"""The batch API: what a processor author writes batch forms with, in one import.

A processor written per FlowFile works unchanged; for speed on millions of small FlowFiles it
may also handle whole :class:`FlowFileBatch` values (``docs/writing-processors.md#batch-forms``):
a per-FlowFile processor's ``transform_batch`` returns :class:`BatchRoute` values (or the
routes of a :class:`WrittenBatch`) and runs with a :class:`BatchContext`; attributes travel as
columns (:class:`IntColumn`, :class:`TextColumn`, :func:`column_of`), Expression Language is
evaluated over them with :func:`evaluate_column`; a source's batch form makes FlowFiles with a
:class:`BatchMaker`; a binning processor's returns a :class:`BatchBinning` of :class:`Bin`
values.

This module is for users (docs, examples, processors outside flowcore), like ``flowcore``
itself: every name is re-exported from the module that defines it, where flowcore's own code
imports it (``tests/test_layers.py`` holds it to that).
"""

from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_boolean_column, evaluate_column
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, TextColumn, column_of
from flowcore.processor.binning import BatchBinning, Bin
from flowcore.session.batch_context import BatchContext, BatchRoute, WrittenBatch

__all__ = [
    "BatchBinning",
    "BatchContext",
    "BatchMaker",
    "BatchRoute",
    "Bin",
    "Column",
    "FlowFileBatch",
    "IntColumn",
    "TextColumn",
    "WrittenBatch",
    "column_of",
    "compile_expression",
    "evaluate_boolean_column",
    "evaluate_column",
]
