"""kill -9 of `flowcore run`s whose files are read as line-aligned blocks by parallel tasks: a
rerun loses and repeats nothing (each file's blocks commit together, with GetFile's listing)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet

pytestmark = pytest.mark.stress

BLOCK_FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

flow = Flow("crash-blocks")
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=1), name="get")
split = flow.add(SplitText(line_split_count=3, remove_trailing_newlines=False), name="split")
tag = flow.add(UpdateAttribute(stage="x"), name="tag")
merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.connect(tag, merge)
flow.connect(merge, put, "merged")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""
#: Files of ~120 KB read as up to 4 blocks of at least 32 KB each.
_ARGS = ("--parallelism", "4", "--setting", "block_read_min_size=32 KB")


def _start(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json", *_ARGS],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _workdir(root: Path) -> Path:
    rng = random.Random(7)
    (root / "in").mkdir(parents=True)
    for number in range(6):
        lines = [f"f{number} l{i} " + "y" * rng.randint(0, 40) for i in range(4_500)]
        ending = "\r\n" if number % 3 == 0 else "\n"
        (root / "in" / f"f{number:02d}.log").write_text(ending.join(lines) + ending, newline="")
    (root / "flow.py").write_text(BLOCK_FLOW)
    return root


def _event_counts(repository: Path) -> Counter:
    repos = RepositorySet.open(repository)
    try:
        events = repos.provenance.search(limit=10_000_000)
        assert len({e.event_id for e in events}) == len(events)
        return Counter((e.event_type.value, e.component_name) for e in events)
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_during_block_reads_loses_and_repeats_nothing(tmp_path: Path) -> None:
    """Block-reading runs SIGKILLed then finished write each file once, events as undisturbed."""
    reference = _workdir(tmp_path / "reference")
    started = time.monotonic()
    first = _start(reference)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    duration = time.monotonic() - started
    counts = _event_counts(reference / ".flowcore")
    assert counts["FORK", "split"] > counts["RECEIVE", "get"] == 6  # blocks: a FORK each
    crashed = _workdir(tmp_path / "crashed")
    rng = random.Random(2026)
    kills = 0
    while kills < 8:
        process = _start(crashed)
        # early and often: start-up, the driver's cuts, block tasks, commits
        time.sleep(rng.uniform(0.3, max(0.5, min(3.0, duration * 0.6))))
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
    assert kills >= 5, f"only {kills} runs were still going when killed"
    final = _start(crashed)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    inputs = {p.name: p.read_bytes() for p in (crashed / "in").iterdir()}
    assert {p.name: p.read_bytes() for p in (crashed / "out").iterdir()} == inputs
    assert _event_counts(crashed / ".flowcore") == counts
    repos = RepositorySet.open(crashed / ".flowcore")
    try:
        assert repos.flowfiles.queue_ids() == ()
        assert repos.content.check() == []
    finally:
        repos.close()
