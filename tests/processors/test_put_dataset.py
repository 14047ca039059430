"""Tests for PutDataset: chunks written by tasks, versions published by the driver, the
auto_merge section, and kill -9 during dataset writes."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def _inputs(root: Path, files: int = 8) -> bytes:
    (root / "in").mkdir(parents=True)
    rng = random.Random(4)
    for n in range(files):
        lines = [f"{n}:{i}:" + "z" * rng.randint(0, 50) + "\n" for i in range(rng.randint(50, 400))]
        (root / "in" / f"f{n}.txt").write_text("".join(lines))
    return b"".join(sorted(line for p in (root / "in").iterdir() for line in p.open("rb")))


@pytest.mark.parametrize("mode", ["disabled", "relaxed", "economy"])
def test_a_flow_writes_every_line_once_in_each_mode(tmp_path: Path, mode: str) -> None:
    """On the engine, each mode gives a dataset holding every input line exactly once;
    relaxed leaves fewer, larger chunks than disabled and reports its high-water mark."""
    expected = _inputs(tmp_path)
    result = run_flow(
        _lines_flow(tmp_path, mode, desired_chunk_size="16 KB", chunk_size_threshold=50),
        "direct",
        repository=tmp_path / "repo",
        # GetFile fills a micro-batch; two FlowFiles per micro-batch keep it at one listing
        # of Batch Size 2 each, so the sink sees four stage runs.
        settings=Settings(parallelism=2, sync=False, batch_max_flowfiles=2),
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


SINK_CRASH_FLOW = """
from flowcore import Flow
from processors import GetFile, PutDataset, SplitText

flow = Flow("crash-dataset")
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=1), name="get")
split = flow.add(SplitText(line_split_count=20, remove_trailing_newlines=False), name="split")
put = flow.add(
    PutDataset(directory="ds", auto_merge={"mode": "economy", "desired_chunk_size": "64 KB",
                                            "chunk_size_threshold": 50}),
    name="put",
)
flow.connect(get, split)
flow.connect(split, put, "splits")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


@pytest.mark.slow
def test_kill_9_during_dataset_writes_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """`flowcore run` writing a dataset, killed with SIGKILL a dozen times and rerun: the
    manifest is always whole, and the final dataset holds every line exactly once."""
    expected = _inputs(tmp_path, files=1000)  # ~20 s of work: a dozen kills never finish it
    (tmp_path / "flow.py").write_text(SINK_CRASH_FLOW)
    script = Path(sys.executable).parent / "flowcore"
    command = [str(script), "run", "flow.py", "--runner", "direct"]
    rng = random.Random(9)
    kills = 0
    for _ in range(30):
        process = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        time.sleep(rng.uniform(0.3, 1.0))
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        reader = Dataset(tmp_path / "ds")
        data = b"".join(reader.iter_bytes())  # a whole version, never a torn one
        assert len(set(data.splitlines())) == len(data.splitlines())
        if kills == 12:
            break
    assert kills >= 10, f"only {kills} runs were still going when killed"
    final = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=180, check=False)
    assert final.returncode == 0, final.stderr.decode()
    reader = Dataset(tmp_path / "ds")
    data = b"".join(reader.iter_bytes())
    assert b"".join(sorted(data.splitlines(keepends=True))) == expected
    assert not reader.pending_versions()
    named = {c.id for v in reader.versions() for c in reader.manifest(v).chunks}
    assert {p.name for p in reader.chunk_dir.iterdir()} <= named
