"""Tests for DuplicateFlowFile: copies with copy.index, CLONE events, Number of Copies EL."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.errors import ConfigurationError
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import DuplicateFlowFile, GenerateFlowFile


def test_copies_then_the_original_with_copy_index() -> None:
    """N clones (copy.index 1..N, a CLONE event each) and the original (copy.index 0)."""
    runner = TestRunner(DuplicateFlowFile(number_of_copies="3"))
    runner.enqueue(b"data", {"k": "v"})
    runner.run()
    out = runner.flowfiles_for("success")
    assert sorted(f.attributes["copy.index"] for f in out) == ["0", "1", "2", "3"]
    assert all(f.content == b"data" and f.attributes["k"] == "v" for f in out)
    assert len({f.attributes["uuid"] for f in out}) == 4
    clones = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.CLONE]
    assert len(clones) == 3
    (original,) = [f for f in out if f.attributes["copy.index"] == "0"]
    assert all(list(e.parent_uuids) == [original.attributes["uuid"]] for e in clones)


def test_default_is_100_copies_and_zero_passes_the_original() -> None:
    """The default makes 100 copies; 0 sends only the original, with copy.index 0."""
    runner = TestRunner(DuplicateFlowFile())
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 101)
    runner = TestRunner(DuplicateFlowFile(number_of_copies="0"))
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("copy.index", "0")


def test_number_of_copies_from_an_attribute() -> None:
    """Number of Copies is evaluated per FlowFile; a non-number keeps the FlowFile queued."""
    runner = TestRunner(DuplicateFlowFile(number_of_copies="${copies}"))
    runner.enqueue(b"a", {"copies": "2"})
    runner.enqueue(b"b", {"copies": "1"})
    runner.run(2)
    assert sorted(f.content for f in runner.flowfiles_for("success")) == [b"a"] * 3 + [b"b"] * 2
    runner = TestRunner(DuplicateFlowFile(number_of_copies="${copies}"))
    runner.enqueue(b"c", {"copies": "many"})
    with pytest.raises(ConfigurationError, match="Number of Copies"):
        runner.run()
    assert runner.queue_size() == 1
    TestRunner(DuplicateFlowFile(number_of_copies="-1")).assert_not_valid()


def test_in_a_flow(tmp_path: Path) -> None:
    """GenerateFlowFile -> DuplicateFlowFile in the engine: 1 + N out, N CLONE events."""
    from repositories.repository_set import RepositorySet

    flow = Flow("duplicate")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=2), name="gen")
    dup = flow.add(DuplicateFlowFile(number_of_copies="4"), name="dup")
    flow.connect(gen, dup)
    flow.auto_terminate(dup, "success")
    settings = Settings(sync=False, parallelism=1)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("dup", "success") == 10
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        types = [
            e.event_type for e in repos.provenance.search(limit=100) if e.component_name == "dup"
        ]
    finally:
        repos.close()
    assert types.count(ProvenanceEventType.CLONE) == 8
    assert types.count(ProvenanceEventType.DROP) == 10
