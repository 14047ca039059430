"""Tests for the Flow builder's entry points: explain's formats and a run's counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowcore.builder import Flow
from flowcore.errors import DrawingError
from processors import GenerateFlowFile, UpdateAttribute


def tagged(name: str) -> Flow:
    flow = Flow(name)
    gen = flow.add(GenerateFlowFile(batch_size=3, file_size="10 B"), name="gen")
    tag = flow.add(UpdateAttribute(source="gen"), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    return flow


def test_explain_with_a_repository_writes_the_last_runs_counts(tmp_path: Path) -> None:
    """After a run, explain(repository=...) puts its FlowFiles and bytes on the edges; a
    repository another flow ran on gives none."""
    flow = tagged("counted")
    flow.run("direct", repository=tmp_path / "repo")
    document = json.loads(flow.explain("json", repository=tmp_path / "repo"))
    counts = [(e["source"], e["target"], e["flowfiles"], e["bytes"]) for e in document["edges"]]
    gen, tag = (flow.component(name).id for name in ("gen", "tag"))
    assert counts == [(gen, tag, 3, 30), (tag, f"{tag}:auto-terminated", 3, 30)]
    other = tagged("other").explain("json", repository=tmp_path / "repo")
    assert all("flowfiles" not in e for e in json.loads(other)["edges"])


def test_explain_refuses_an_unknown_format() -> None:
    """A misspelt format names the ones there are."""
    with pytest.raises(DrawingError, match="use one of"):
        tagged("f").explain("png")


def test_from_nifi_gives_a_flow_with_the_imports_notes() -> None:
    """Flow.from_nifi returns a Flow (run, explain) carrying the import's notes; a flow built in
    Python has none."""
    samples = Path(__file__).parent / "nifi" / "samples"
    flow = Flow.from_nifi(samples / "registry-snapshot.json")
    assert isinstance(flow, Flow)
    assert flow.name == "Audit trail"
    assert [n.subject for n in flow.notes] == ["Poll", "connection Poll -> Audit"]
    assert tagged("plain").notes == ()
