"""Tests that the README's code does what the README says."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_every_python_block_of_the_readme_compiles() -> None:
    """A newcomer copies these: each must at least be valid Python."""
    assert BLOCKS
    for block in BLOCKS:
        compile(block, str(README), "exec")


def test_the_readme_batch_form_agrees_with_its_per_flowfile_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's batch-form example runs, and its batch form gives what transform gives."""
    (block,) = [b for b in BLOCKS if "def transform_batch" in b]
    module = types.ModuleType("readme_batch_example")  # importable: the harness pickles it
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    exec(
        "from flowcore import FlowFileTransform, TransformResult\n"
        "from flowcore.expression import compile_expression, evaluate_column\n" + block,
        namespace,
    )
    from flowcore.testing import TestRunner

    runner = TestRunner(namespace["Shout"]())  # type: ignore[operator]
    for name in ("a.log", "b.log", "c.txt"):
        runner.enqueue(b"x", {"filename": name})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 3
    runner.flowfiles_for("success")[1].assert_attribute_equals("name", "B.LOG")
