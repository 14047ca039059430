"""Tests for PutDataset: chunks written by tasks, versions published by the driver, and the
auto_merge section (kill -9 during dataset writes: tests/stress/test_dataset_kills.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.datasets import AutoMergeMode, Dataset
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutDataset, SplitText


def test_the_harness_writes_chunks_and_publishes_a_version(tmp_path: Path) -> None:
    """FlowFiles go into a chunk with the demarcator between them, a version is published,
    and each FlowFile gets a SEND event."""
    runner = TestRunner(PutDataset(directory=str(tmp_path / "ds"), demarcator="\n"))
    for text in ("a", "b", "c"):
        runner.enqueue(text, {"k": text})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    dataset = Dataset(tmp_path / "ds")
    assert b"".join(dataset.iter_bytes()) == b"a\nb\nc"
    assert dataset.latest_version() == 1
    assert runner.state["version"] == "1"
    sends = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.SEND]
    assert len(sends) == 3


def test_chunks_roll_over_at_the_desired_size_and_record_key_ranges(tmp_path: Path) -> None:
    """A task starts a new chunk once one reaches the desired size; each records its keys."""
    runner = TestRunner(
        PutDataset(directory=str(tmp_path / "ds"), desired_chunk_size="4 B", key_attribute="k")
    )
    for key in ("b", "a", "d", "c"):
        runner.enqueue("xyz", {"k": key})
    runner.run()
    chunks = Dataset(tmp_path / "ds").manifest().chunks
    assert [(c.size, c.first_key, c.last_key) for c in chunks] == [(6, "a", "b"), (6, "c", "d")]


def test_the_auto_merge_section_sets_the_properties_and_is_checked() -> None:
    """auto_merge={...} is the same as the properties; manual mode needs its two limits."""
    sink = PutDataset(directory="ds", auto_merge={"mode": "economy", "desired_chunk_size": "64 MB"})
    config = sink.auto_merge()
    assert config.mode is AutoMergeMode.ECONOMY
    assert config.desired_chunk_size == 64 * 1024 * 1024
    TestRunner(sink).assert_valid()
    TestRunner(PutDataset(directory="ds", auto_merge={"mode": "manual"})).assert_not_valid()
    with pytest.raises(ValueError, match="auto_merge has no 'size'"):
        PutDataset(directory="ds", auto_merge={"size": 1})


def _lines_flow(root: Path, mode: str, **section: object) -> Flow:
    flow = Flow("to-dataset")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True, batch_size=2))
    split = flow.add(SplitText(line_split_count=20, remove_trailing_newlines=False), name="split")
    put = flow.add(
        PutDataset(directory=str(root / "ds"), auto_merge={"mode": mode, **section}), name="put"
    )
    flow.connect(get, split)
    flow.connect(split, put, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@pytest.mark.parametrize("mode", ["disabled", "relaxed", "economy"])
def test_a_flow_writes_every_line_once_in_each_mode(
    tmp_path: Path, mode: str, runner: str, line_inputs: Callable[..., bytes]
) -> None:
    """On the engine, each mode gives a dataset holding every input line exactly once;
    relaxed leaves fewer, larger chunks than disabled and reports its high-water mark."""
    expected = line_inputs(tmp_path)
    result = run_flow(
        _lines_flow(tmp_path, mode, desired_chunk_size="16 KB", chunk_size_threshold=50),
        runner,
        repository=tmp_path / "repo",
        # GetFile fills a micro-batch; two FlowFiles per micro-batch keep it at one listing
        # of Batch Size 2 each, so the sink sees four stage runs.
        settings=Settings(
            parallelism=2, sync=False, batch_max_flowfiles=2, driver_run_max_flowfiles=0
        ),
    )
    dataset = Dataset(tmp_path / "ds")
    data = b"".join(dataset.iter_bytes())
    assert b"".join(sorted(data.splitlines(keepends=True))) == expected
    report = result.sinks["put"]
    assert int(report["version"]) == dataset.latest_version()
    assert int(report["chunks"]) == len(dataset.manifest().chunks)
    if mode == "relaxed":
        assert int(report["merge.jobs"]) > 0
        assert int(report["intermediate"]) <= 1
        assert int(report["intermediate.high_water"]) > int(report["intermediate"])
    if mode == "disabled":
        assert int(report["merge.jobs"]) == 0


def _written(runner: TestRunner, directory: Path) -> tuple:
    """What a run of PutDataset left: transfers, events, chunks (with their bytes) and state,
    without what two runs always differ in (uuids, the dataset's place, the run's operation)."""
    transfers = [
        (bytes(f.content), {k: v for k, v in f.attributes.items() if k != "uuid"})
        for f in runner.flowfiles_for("success")
    ]
    events = sorted(
        (e.event_type.value, e.filename, (e.transit_uri or "").removeprefix(directory.as_uri()))
        for e in runner.provenance_events
    )
    dataset = Dataset(directory)
    chunks = [
        (c.size, c.records, c.first_key, c.last_key, dataset.chunk_path(c.id).read_bytes())
        for c in dataset.manifest().chunks
    ]
    state = {k: v for k, v in runner.state.items() if k != "operation"}
    return transfers, events, chunks, b"".join(dataset.iter_bytes()), state


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flowfiles=st.lists(
        st.tuples(st.binary(max_size=30), st.sampled_from([None, "a", "b", "10", "9"])),
        min_size=1,
        max_size=25,
    ),
    demarcator=st.sampled_from([None, "\n", "--"]),
    desired=st.sampled_from(["1 B", "16 B", "40 B", "1 GB"]),
    key=st.booleans(),
    triggers=st.integers(1, 2),
)
def test_the_batch_form_writes_the_one_by_one_chunks(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    flowfiles: list[tuple[bytes, str | None]],
    demarcator: str | None,
    desired: str,
    key: bool,
    triggers: int,
) -> None:
    """Random records, demarcators, chunk sizes and key ranges: write_batches gives write()'s
    chunks (bytes, counts, keys), versions, transfers and SEND events."""
    root = tmp_path_factory.mktemp("ds")
    outcomes = []
    for batches in (True, False):
        directory = root / ("batch" if batches else "single")
        properties: dict[str, object] = {"directory": str(directory), "desired_chunk_size": desired}
        if demarcator is not None:
            properties["demarcator"] = demarcator
        if key:
            properties["key_attribute"] = "k"
        runner = TestRunner(PutDataset(**properties), batches=batches)
        half = len(flowfiles) // triggers
        for part in (flowfiles[:half], flowfiles[half:]) if triggers == 2 else (flowfiles,):
            for content, value in part:
                named = {"filename": f"f{runner.queue_size()}-{len(content)}"}
                runner.enqueue(content, named if value is None else {**named, "k": value})
            runner.run()
        if batches:
            assert runner.batch_use.whole == len(flowfiles)
        outcomes.append(_written(runner, directory))
    assert outcomes[0] == outcomes[1]


def test_a_batch_form_writes_more_than_a_trigger_takes_in_parts(tmp_path: Path) -> None:
    """More FlowFiles than one trigger of on_trigger takes: written in as many parts and
    versions as on_trigger's triggers write them (batch mode writes them all in one trigger)."""
    from flowcore.processor.kinds import HARNESS_WRITE

    outcomes = []
    for batches in (True, False):
        directory = tmp_path / str(batches)
        runner = TestRunner(PutDataset(directory=str(directory), demarcator="\n"), batches=batches)
        for index in range(HARNESS_WRITE + 5):
            runner.enqueue(f"{index}", {"filename": f"f{index}"})
        runner.run(2)
        outcomes.append(_written(runner, directory))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][4]["version"] == "2"
