"""A MergeContent harness and readers of what it transferred, for the test_merge_content_*
modules."""

from __future__ import annotations

from flowcore.testing import TestRunner
from processors import MergeContent

TEXT = {"mime.type": "application/plain-text", "fragment.index": "1"}


def runner_for(**properties: object) -> TestRunner:
    return TestRunner(MergeContent(**properties))


def hello_world(runner: TestRunner) -> None:
    for text in ("Hello", ", ", "World!"):
        runner.enqueue(text, TEXT)


def merged(runner: TestRunner) -> list[bytes]:
    return [f.content for f in runner.flowfiles_for("merged")]


def counts(runner: TestRunner) -> tuple[int, int, int]:
    return tuple(len(runner.flowfiles_for(r)) for r in ("merged", "original", "failure"))  # type: ignore[return-value]
