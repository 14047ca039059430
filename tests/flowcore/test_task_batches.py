"""Tests for FlowFile batches inside tasks: the same FlowFiles and events as one by one."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.controller import run_flow
from flowcore.provenance import ProvenanceEvent
from flowcore.repository_set import RepositorySet
from flowcore.settings import Settings
from processors import GenerateFlowFile, MergeContent, PutFile, UpdateAttribute

SETTINGS = Settings(sync=False, parallelism=1, unbounded_source_batches=3)
#: Uuids, and a merged FlowFile's filename (a nanosecond clock).
_VARIES = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|^\d{10,}$"
)


def _flow(out: Path, fan_out: bool = False, **generate: object) -> Flow:
    flow = Flow("batches")
    gen = flow.add(GenerateFlowFile(batch_size=7, **generate, kind="x"), name="gen")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=3, maximum_number_of_entries=3), name="merge"
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(gen, tag)
    flow.connect(tag, merge, back_pressure_object_threshold=1_000)
    flow.connect(merge, put, "merged")
    if fan_out:
        flow.connect(gen, put)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _shape(event: ProvenanceEvent) -> tuple:
    """An event without what differs between runs: uuids, times, claim places."""

    def plain(attributes: dict) -> tuple:
        kept = {k: _VARIES.sub("<varies>", v) for k, v in attributes.items()}
        if "merge.bin.age" in kept:
            kept["merge.bin.age"] = "<varies>"
        return tuple(sorted(kept.items()))

    return (
        event.event_type.value,
        event.component_name,
        event.file_size,
        event.relationship,
        event.details,
        event.source_queue_identifier is not None,
        plain(dict(event.previous_attributes)),
        plain(dict(event.updated_attributes)),
        event.content_claim is not None,
        event.previous_content_claim is not None,
        event.previous_file_size,
        len(event.parent_uuids),
        len(event.child_uuids),
    )


def _run(root: Path, flow: Flow) -> tuple[Counter, Counter, dict]:
    result = run_flow(flow, "direct", repository=root / "repo", settings=SETTINGS)
    repos = RepositorySet.open(root / "repo")
    try:
        events = repos.provenance.search(limit=100_000)
        uuids = [e.flowfile_uuid for e in events if e.event_type.value == "CREATE"]
        assert len(set(uuids)) == len(uuids) == result.count("gen", "success")
        for found in events[:: max(1, len(events) // 10)]:  # each is found again by its uuid
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)
    finally:
        repos.close()
    contents = Counter(p.read_bytes() for p in (root / "out").iterdir())
    return Counter(_shape(e) for e in events), contents, dict(result.transfers)


@pytest.mark.parametrize(
    "generate",
    [{"file_size": "10 B"}, {"custom_text": "line\n", "mime_type": "text/plain"}, {}],
    ids=["random", "custom-text", "empty"],
)
def test_whole_batches_give_the_flowfiles_and_events_of_the_one_by_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generate: dict
) -> None:
    """GenerateFlowFile and UpdateAttribute on batches: same outputs, counts and provenance."""
    whole = _run(tmp_path / "whole", _flow(tmp_path / "whole" / "out", **generate))
    monkeypatch.setattr(GenerateFlowFile, "read_work_batch", lambda *_: None)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    single = _run(tmp_path / "single", _flow(tmp_path / "single" / "out", **generate))
    if "file_size" in generate:  # random content: each run draws its own bytes
        assert sorted(len(c) for c in whole[1].elements()) == sorted(
            len(c) for c in single[1].elements()
        )
        assert (whole[0], whole[2]) == (single[0], single[2])
    else:
        assert whole == single


def test_a_fanned_out_relationship_takes_the_flowfiles_one_by_one(tmp_path: Path) -> None:
    """Two destinations need clones, so the batch is materialized: nothing is lost."""
    flow = _flow(tmp_path / "out", fan_out=True, custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("gen", "success") == 42  # 21 FlowFiles, each to two connections
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 21 + 7


def test_a_processor_failing_on_a_batch_gets_its_flowfiles_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transform_batch that raises declines: the FlowFiles still go through on_trigger."""

    def broken(*_: object) -> None:
        msg = "no batches today"
        raise RuntimeError(msg)

    monkeypatch.setattr(UpdateAttribute, "transform_batch", broken)
    flow = _flow(tmp_path / "out", custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 7
    assert all(p.read_bytes() == b"xxx" for p in (tmp_path / "out").iterdir())
