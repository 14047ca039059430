"""Tests for the binning shuffle's map side: groups, partitions and the one-group shortcut."""

from __future__ import annotations

from pathlib import Path

import repositories.segments as segment_files
from flowcore import Flow
from flowcore.compiler.stages import compile_flow
from flowcore.engine.shuffle import group_records, record_order, single_group
from flowcore.flowfile import FlowFile
from processors import GenerateFlowFile, MergeContent


def _plans(**merge: object) -> list:
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(custom_text="a\nb\nc"), name="gen")
    combine = flow.add(MergeContent(**merge), name="merge")
    flow.connect(gen, combine)
    flow.auto_terminate(combine, ["merged", "original", "failure"])
    compiled = compile_flow(flow)
    return [compiled.plans[s.id] for s in compiled.stages]


def test_single_group_asks_every_binning_member() -> None:
    """A stage is one group when each binning member says so; a narrow stage never is."""
    narrow, binning = _plans()
    assert not single_group(narrow)
    assert single_group(binning)
    assert not single_group(_plans(correlation_attribute_name="customer")[1])


def test_flowfiles_of_one_group_meet_in_one_partition(tmp_path: Path) -> None:
    """A segment's FlowFiles are keyed by their Correlation Attribute: one partition a group."""
    plan = _plans(correlation_attribute_name="customer")[1]
    queue_id = next(iter(plan.queue_members))
    flowfiles = [
        FlowFile.create(i, 1, {"customer": f"c{i % 3}"}).replace(queue_date_index=i)
        for i in range(30)
    ]
    summary = segment_files.write_segment(tmp_path, queue_id, flowfiles, owner="t", sync=False)
    keyed = group_records(plan, tmp_path, queue_id, summary.segment_id, partitions=7)
    assert len(keyed) == 30
    partitions: dict[str, set[int]] = {}
    for partition, (queue, flowfile) in keyed:
        assert queue == queue_id
        partitions.setdefault(flowfile.attributes["customer"], set()).add(partition)
    assert all(len(p) == 1 for p in partitions.values())
    assert record_order(flowfiles[3]) < record_order(flowfiles[4])
