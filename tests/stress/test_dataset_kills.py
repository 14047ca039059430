"""kill -9 of dataset writers: `flowcore run` writing a dataset through PutDataset (at moments
that follow its commits), and `flowcore dataset compact` (at random moments). Readers always
see one whole version; a last run finishes the job with every byte exactly once."""

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
from tests.stress._flowcore_runs import Moments, commits_of, start_flowcore_run

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


#: GetFile lists eight files a micro-batch (one stage run from GetFile to PutDataset).
EIGHT_FILES = ("--setting", "batch_max_flowfiles=8")


def _dataset_lines(directory: Path) -> bytes:
    """The lines of the dataset in *directory*'s published version, sorted."""
    reader = Dataset(directory / "ds")
    return b"".join(sorted(b"".join(reader.iter_bytes()).splitlines(keepends=True)))


@pytest.mark.slow
def test_kill_9_during_dataset_writes_loses_and_duplicates_nothing(
    tmp_path: Path, line_inputs: Callable[..., bytes]
) -> None:
    """`flowcore run` writing a dataset, killed with SIGKILL eight times and rerun: the
    manifest is always whole, and the final dataset holds every line exactly once.

    The kills follow an undisturbed run's commits (:class:`Moments`: before, around and just
    after a run's first commit): kills 0.3-1.0 s after the start only ever hit the start-up on
    a busy machine, and a micro-batch took every file listed by then. 160 files listed eight a
    micro-batch make about 40 commits; a killed run gets a few done.
    """
    reference = tmp_path / "reference"
    expected = line_inputs(reference, files=160)
    (reference / "flow.py").write_text(SINK_CRASH_FLOW)
    undisturbed = start_flowcore_run(reference, *EIGHT_FILES)
    commits = commits_of(undisturbed, reference)
    assert undisturbed.wait(timeout=60) == 0
    assert _dataset_lines(reference) == expected
    crashed = tmp_path / "crashed"
    assert line_inputs(crashed, files=160) == expected
    (crashed / "flow.py").write_text(SINK_CRASH_FLOW)
    moments = Moments(crashed, commits)
    rng = random.Random(9)
    kills = 0
    for _ in range(8):
        process = start_flowcore_run(crashed, *EIGHT_FILES)
        moments(rng, process)
        if process.poll() is not None:
            break  # it finished: the check below names it
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        reader = Dataset(crashed / "ds")
        data = b"".join(reader.iter_bytes())  # a whole version, never a torn one
        assert len(set(data.splitlines())) == len(data.splitlines())
    assert kills == 8, f"only {kills} runs were still going when killed"
    final = start_flowcore_run(crashed, *EIGHT_FILES)
    _, err = final.communicate(timeout=180)
    assert final.returncode == 0, err.decode()
    assert _dataset_lines(crashed) == expected
    reader = Dataset(crashed / "ds")
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
