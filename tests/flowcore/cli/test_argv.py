"""Tests for what the commands read off the command line before heavy imports."""

from __future__ import annotations

import subprocess
import sys

from flowcore.cli._argv import split_pairs


def test_pairs_split_at_the_first_equals_sign_and_are_stripped() -> None:
    """``key = a=b`` is key ``key``, value ``a=b``; the last of a repeated key wins."""
    assert split_pairs(["spark.x = 1", "k=a=b", "spark.x=2"]) == (
        {"spark.x": "2", "k": "a=b"},
        None,
    )


def test_the_first_text_without_equals_is_handed_back() -> None:
    """A malformed pair is returned for the caller to name; the pairs before it are kept."""
    assert split_pairs(["a=1", "oops", "b=2"]) == ({"a": "1"}, "oops")


def test_the_module_imports_nothing_heavy() -> None:
    """The early start reads it before rich or the engine are imported."""
    code = (
        "import sys, flowcore.cli._argv;"
        "print(sorted(m for m in ('rich', 'flowcore.engine', 'pyspark') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
