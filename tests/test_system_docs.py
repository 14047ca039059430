"""Tests that the flows in the docs pages about external systems are valid as written: a
newcomer copies them, and the first thing `flowcore run` does is validate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flowcore.errors import FlowValidationError

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ("s3.md", "sftp.md", "kafka.md", "http-servers.md", "sql.md")


def _flows() -> list[tuple[str, int, str]]:
    """(page, block number, code) of each block that builds a whole flow (``Flow(`` in it)."""
    found = []
    for page in PAGES:
        blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
        found += [(page, n, b) for n, b in enumerate(blocks, 1) if "= Flow(" in b]
    return found


def test_the_system_pages_have_flows_to_check() -> None:
    """The pages still hold the flows this module checks (a renamed page fails here)."""
    assert {page for page, _, _ in _flows()} >= {"s3.md", "sftp.md", "kafka.md", "http-servers.md"}


@pytest.mark.parametrize(("page", "number", "code"), _flows(), ids=lambda v: str(v)[:20])
def test_a_docs_flow_validates_as_written(page: str, number: int, code: str) -> None:
    """The block, run as written, builds a flow that validates (every relationship handled,
    every property and service accepted) but for the files it names on a user's machine (keys,
    known hosts); it reaches no server."""
    namespace: dict[str, object] = {}
    exec(compile(code, f"{page} block {number}", "exec"), namespace)
    flow = namespace["flow"]
    try:
        flow.validate()
    except FlowValidationError as invalid:
        problems = [str(p) for p in invalid.problems]
        assert [p for p in problems if not p.endswith("does not exist")] == [], problems
