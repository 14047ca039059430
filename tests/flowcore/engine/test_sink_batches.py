"""Tests for sinks consuming FlowFile batches in tasks: LogAttribute and PutFile through
``transform_batch``, PutDataset through ``write_batches``; the same files, chunks, log lines,
events and transfers as with their batch forms turned off."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flowcore import Flow, Processor
from flowcore.datasets import Dataset
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, LogAttribute, PutDataset, PutFile, SplitText, UpdateAttribute
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape
from tests.flowcore.engine._batch_outcomes import _unread

SETTINGS = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
SINKS = ("PutFile", "PutDataset", "LogAttribute")
_RUNS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b\d{13}\b")


def _sink(kind: str, out: Path) -> Processor:
    if kind == "PutFile":
        return PutFile(directory=f"{out}/${{fragment.index:mod(3)}}")
    if kind == "PutDataset":
        return PutDataset(directory=str(out), demarcator="\n", desired_chunk_size="2 KB")
    # the input's access time changes when a run reads it: not logged, so runs compare
    return LogAttribute(
        log_payload="true",
        log_prefix="${fragment.index:mod(2)}",
        attributes_to_ignore="file.lastAccessTime",
    )


def _flow(root: Path, kind: str, out: Path) -> Flow:
    """GetFile -> SplitText (one line each, as batches) -> the sink (PutFile: each split
    named apart by UpdateAttribute first)."""
    flow = Flow("to-sink")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    processor = _sink(kind, out)
    sink = flow.add(processor, name="sink")
    flow.connect(get, split)
    if kind == "PutFile":
        name = flow.add(UpdateAttribute(filename="${filename}.${fragment.index}"), name="name")
        flow.connect(split, name, "splits")
        flow.connect(name, sink)
    else:
        flow.connect(split, sink, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(sink, list(processor.relationship_names()))
    return flow


def _outcome(root: Path, name: str, kind: str, runner: str, caplog: Any) -> tuple:
    """Event shapes (with transit URIs), what the sink wrote, log lines and transfers."""
    out = root / name / "out"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="flowcore.processors.LogAttribute"):
        result = run_flow(
            _flow(root, kind, out), runner, repository=root / name / "repo", settings=SETTINGS
        )
    lines = sorted(
        _RUNS.sub("<run>", r.getMessage()).replace(str(out), "<out>") for r in caplog.records
    )
    repos = RepositorySet.open(root / name / "repo")
    try:
        events = repos.provenance.search(limit=1_000_000)
        for found in events[:: max(1, len(events) // 20)]:
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)
    finally:
        repos.close()
    shapes = Counter(
        (*_unread(event_shape(e)), (e.transit_uri or "").removeprefix(out.as_uri())) for e in events
    )
    if kind == "PutDataset":
        dataset = Dataset(out)
        written: object = (
            b"".join(dataset.iter_bytes()),
            [(c.size, c.records) for c in dataset.manifest().chunks],
        )
    else:
        written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    return shapes, written, lines, dict(result.transfers)


def _batch_forms_off(patch: pytest.MonkeyPatch) -> None:
    """The sinks' batch forms declined: every FlowFile goes through on_trigger or write()."""
    patch.setattr(PutFile, "transform_batch", lambda *_: None)
    patch.setattr(LogAttribute, "transform_batch", lambda *_: None)
    patch.setattr(PutDataset, "write_batches", lambda *_: None)


def _count_batch_forms(patch: pytest.MonkeyPatch) -> list[int]:
    """Counts the FlowFiles the sinks' batch forms take (on this process's runner)."""
    taken: list[int] = []
    for kind, name in ((PutFile, "transform_batch"), (LogAttribute, "transform_batch")):
        original = getattr(kind, name)

        def counted(self, context, batch, original=original):  # type: ignore[no-untyped-def]
            taken.append(batch.count)
            return original(self, context, batch)

        patch.setattr(kind, name, counted)
    original_write = PutDataset.write_batches

    def write(self, context, batches):  # type: ignore[no-untyped-def]
        taken.append(sum(b.count for b in batches))
        return original_write(self, context, batches)

    patch.setattr(PutDataset, "write_batches", write)
    return taken


@pytest.mark.parametrize("kind", SINKS)
def test_a_sink_on_batches_gives_the_one_by_one_outcome(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, runner: str, kind: str
) -> None:
    """Split lines reach the sink as batches: its batch form writes the same files (or
    chunks, or log lines), with the same events (SEND transit URIs included) and transfers as
    on_trigger (write()) one FlowFile at a time, on this runner."""
    (tmp_path / "in").mkdir()
    for number in range(3):
        lines = [f"file {number} line {i} {'x' * (i % 7)}" for i in range(120)]
        (tmp_path / "in" / f"part{number}.log").write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as patch:
        taken = _count_batch_forms(patch)
        batched = _outcome(tmp_path, "batches", kind, runner, caplog)
    if runner == "direct":
        assert sum(taken) == 360  # every split went through the batch form
    with pytest.MonkeyPatch.context() as patch:
        _batch_forms_off(patch)
        single = _outcome(tmp_path, "single", kind, "direct", caplog)
    assert batched == single
    if kind == "LogAttribute":
        assert len(single[2]) == 360
    else:
        assert single[1]
