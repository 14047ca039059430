"""kill -9 of dataset writers at random moments: `flowcore run` writing a dataset through
PutDataset, and `flowcore dataset compact`. Readers always see one whole version; a last run
finishes the job with every byte exactly once."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from flowcore.datasets import Dataset

pytestmark = pytest.mark.stress


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
def test_kill_9_during_dataset_writes_loses_and_duplicates_nothing(
    tmp_path: Path, line_inputs: Callable[..., bytes]
) -> None:
    """`flowcore run` writing a dataset, killed with SIGKILL eight times and rerun: the
    manifest is always whole, and the final dataset holds every line exactly once."""
    expected = line_inputs(tmp_path, files=1000)  # ~20 s of work: a dozen kills never finish it
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
        if kills == 8:
            break
    assert kills >= 6, f"only {kills} runs were still going when killed"
    final = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=180, check=False)
    assert final.returncode == 0, final.stderr.decode()
    reader = Dataset(tmp_path / "ds")
    data = b"".join(reader.iter_bytes())
    assert b"".join(sorted(data.splitlines(keepends=True))) == expected
    assert not reader.pending_versions()
    named = {c.id for v in reader.versions() for c in reader.manifest(v).chunks}
    assert {p.name for p in reader.chunk_dir.iterdir()} <= named


@pytest.mark.slow
def test_kill_9_during_compaction_loses_nothing(
    tmp_path: Path, published_dataset: Callable[..., Dataset]
) -> None:
    """`flowcore dataset compact` killed with SIGKILL at random moments: every time, the
    dataset reads back the same bytes from one whole version; a last run finishes the job."""
    pristine = published_dataset(tmp_path / "pristine", [100_000] * 400)
    expected = b"".join(pristine.iter_bytes())
    script = Path(sys.executable).parent / "flowcore"

    def compact(path: Path) -> list[str]:
        return [str(script), "dataset", "compact", str(path), "--desired-chunk-size", "1 GB"]

    # Kill within the time an undisturbed compaction takes on this machine, start-up included.
    # That time varies with the load on the machine, so a compaction that ends before its kill
    # narrows the window to the time it took and does not count: ten real kills are required.
    shutil.copytree(pristine.path, tmp_path / "timed")
    started = time.monotonic()
    subprocess.run(compact(tmp_path / "timed"), capture_output=True, timeout=120, check=True)
    window = time.monotonic() - started
    rng = random.Random(11)
    kills = 0
    for attempt in range(30):
        path = tmp_path / f"ds{attempt}"
        shutil.copytree(pristine.path, path)
        command = compact(path)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = rng.uniform(0.05, 0.9 * window)
        time.sleep(delay)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        else:
            window = max(delay, 0.1)
        process.wait(timeout=60)
        reader = Dataset(path)
        assert b"".join(reader.iter_bytes()) == expected
        assert not reader.pending_versions()
        finished = subprocess.run(command, capture_output=True, timeout=120, check=True)
        assert b"chunks" in finished.stdout
        assert b"".join(reader.iter_bytes()) == expected
        assert len(reader.manifest().chunks) < 400
        named = {c.id for v in reader.versions() for c in reader.manifest(v).chunks}
        assert {p.name for p in reader.chunk_dir.iterdir()} <= named
        if kills == 10:
            break
    assert kills == 10, f"only {kills} compactions were still going when killed"
