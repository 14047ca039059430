"""Tests for ``flowcore.batch``: the batch API a processor author imports in one line."""

from __future__ import annotations

import importlib
import inspect

import flowcore.batch


def test_all_is_sorted_and_each_name_is_its_defining_modules() -> None:
    """__all__ is sorted isort-style and each name is the very object its defining module holds
    (a re-export, never a copy), so ``isinstance`` checks agree with the engine's."""

    def isort_key(name: str) -> tuple[int, str]:
        return (0 if name[0].isupper() else 1), name

    names = list(flowcore.batch.__all__)
    assert names == sorted(names, key=isort_key)
    for name in names:
        value = getattr(flowcore.batch, name)
        if isinstance(value, type) or inspect.isfunction(value):
            defining = value.__module__
            assert getattr(importlib.import_module(defining), name) is value, name


def test_the_batch_forms_page_names_are_all_here() -> None:
    """What docs/writing-processors.md#batch-forms uses is importable from flowcore.batch."""
    used = {
        "BatchContext",
        "BatchMaker",
        "BatchRoute",
        "FlowFileBatch",
        "IntColumn",
        "TextColumn",
        "WrittenBatch",
        "column_of",
        "compile_expression",
        "evaluate_boolean_column",
        "evaluate_column",
    }
    assert used <= set(flowcore.batch.__all__)
