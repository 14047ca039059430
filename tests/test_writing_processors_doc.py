"""Tests that docs/writing-processors.md's code runs as written: every import it names exists,
and its examples do what the page says."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "writing-processors.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_every_import_of_the_page_works() -> None:
    """Each ``from x import a, b`` of the page's examples imports (a newcomer copies them)."""
    imports = [
        line
        for block in BLOCKS
        for line in block.splitlines()
        if re.match(r"(from \S+ )?import ", line)
    ]
    assert len(imports) >= 5
    for line in imports:
        exec(line, {})  # raises ImportError naming the missing name


def test_the_page_examples_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's blocks, run one after the other as a reader would, all pass their own
    assertions (the harness runs, the batch forms agree with their per-FlowFile forms)."""
    module = types.ModuleType("writing_processors_examples")  # importable: the harness pickles
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    assert len(BLOCKS) >= 5
    for block in BLOCKS:
        exec(compile(block, str(PAGE), "exec"), namespace)
    for name in ("Truncate", "Label", "Tag", "Shout"):
        assert name in namespace, name
    from flowcore.testing import TestRunner

    runner = TestRunner(namespace["Shout"]())
    runner.enqueue(b"abc")
    runner.assert_batch_form_agrees()
    runner.flowfiles_for("success")[0].assert_content_equals("ABC")
