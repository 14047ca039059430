"""kill -9 of real `flowcore run`s at random moments: a rerun loses and duplicates nothing."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet
from tests.stress._flowcore_runs import Moments, commits_of, start_flowcore_run

pytestmark = pytest.mark.stress


CRASH_FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

flow = Flow("crash")
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=3), name="get")
split = flow.add(SplitText(line_split_count=20, remove_trailing_newlines=False), name="split")
tag = flow.add(UpdateAttribute(stage="x"), name="tag")
merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, tag, "splits")
# back pressure: GetFile lists 24 files a micro-batch (a run of a few dozen commits, not three)
flow.connect(tag, merge, back_pressure_object_threshold=24)
flow.connect(merge, put, "merged")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


SPLITTER_CRASH_FLOW = """
from flowcore import Flow
from processors import FileSplitter, MergeContent, PutFile, UpdateAttribute

flow = Flow("crash-splitter")
split = flow.add(
    FileSplitter(input_directory="in", block_size="4 KB", blocks_threshold=8), name="split"
)
tag = flow.add(UpdateAttribute(stage="x"), name="tag")
merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(split, tag, "blocks")
flow.connect(tag, merge)
flow.connect(merge, put, "merged")
flow.auto_terminate(split, ["files", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


def _crash_workdir(root: Path, flow_text: str, files: int) -> Path:
    """*files* input files of distinct lines, and the flow: enough that eight kills never
    finish the work."""
    rng = random.Random(5)
    (root / "in").mkdir(parents=True)
    for number in range(files):
        lines = [
            f"file {number} line {i} " + "x" * rng.randint(0, 60)
            for i in range(rng.randint(500, 1500))
        ]
        (root / "in" / f"f{number:03d}.txt").write_text("\n".join(lines) + "\n")
    (root / "flow.py").write_text(flow_text)
    return root


def _event_counts(repository: Path) -> Counter:
    repos = RepositorySet.open(repository)
    try:
        events = repos.provenance.search(limit=10_000_000)
        assert len({e.event_id for e in events}) == len(events)
        return Counter((e.event_type.value, e.component_name) for e in events)
    finally:
        repos.close()


def _kill_then_finish(workdir: Path, delay: Callable[[random.Random], float]) -> None:
    """SIGKILL `flowcore run` in *workdir* eight times, each after *delay* seconds, then let
    one run finish. A run that ends before its kill is followed by another, and the delays
    shrink by a quarter: the undisturbed run that measured them may have shared the machine
    with a heavier neighbour than these do."""
    rng = random.Random(2026)
    kills = 0
    scale = 1.0
    for _ in range(30):
        process = start_flowcore_run(workdir)
        time.sleep(delay(rng) * scale)
        if process.poll() is not None:
            scale *= 0.75
            continue
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        if kills == 8:
            break
    assert kills >= 6, f"only {kills} runs were still going when killed"
    final = start_flowcore_run(workdir)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()


def _kill_at_moments_then_finish(workdir: Path, moments: Moments) -> None:
    """SIGKILL `flowcore run` in *workdir* at eight of *moments*, then let one run finish."""
    rng = random.Random(2026)
    kills = 0
    for _ in range(30):
        process = start_flowcore_run(workdir)
        moments(rng, process)
        if process.poll() is not None:
            break  # it finished: the check below names it
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        if kills == 8:
            break
    assert kills == 8, f"only {kills} runs were still going when killed"
    final = start_flowcore_run(workdir)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()


def _kill_rerun_and_compare(tmp_path: Path, flow_text: str, files: int) -> None:
    """Run *flow_text* once undisturbed, then SIGKILL another run eight times and rerun it:
    the output files, the provenance event counts and the repositories must agree.

    The kills come at :class:`Moments` taken from the undisturbed run's commits: before,
    around and just after a first commit.
    """
    reference = _crash_workdir(tmp_path / "reference", flow_text, files)
    undisturbed = start_flowcore_run(reference)
    commits = commits_of(undisturbed, reference)
    assert undisturbed.wait(timeout=120) == 0
    crashed = _crash_workdir(tmp_path / "crashed", flow_text, files)
    assert len(commits) >= 8, commits
    _kill_at_moments_then_finish(crashed, Moments(crashed, commits))
    expected = {p.name: p.read_bytes() for p in (reference / "out").iterdir()}
    got = {p.name: p.read_bytes() for p in (crashed / "out").iterdir()}
    assert got == expected
    assert got == {p.name: p.read_bytes() for p in (reference / "in").iterdir()}
    assert _event_counts(crashed / ".flowcore") == _event_counts(reference / ".flowcore")
    repos = RepositorySet.open(crashed / ".flowcore")
    try:
        assert repos.flowfiles.queue_ids() == ()
        assert repos.content.check() == []
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """`flowcore run` killed with SIGKILL eight times, then rerun, writes what an
    uninterrupted run writes, and records each provenance event exactly once.

    The kills follow the undisturbed run's commits: 576 files killed in a run's first 0.9 s
    only ever hit the start-up on a busy machine (its one micro-batch took them all, and
    committed after 2.5 s). 192 files in micro-batches of 24 make about 20 commits; a killed
    run gets a few done.
    """
    _kill_rerun_and_compare(tmp_path, CRASH_FLOW, files=192)


@pytest.mark.slow
def test_kill_9_during_file_splitter_ingestion_repeats_and_skips_no_block(
    tmp_path: Path,
) -> None:
    """FileSplitter killed mid-ingestion eight times: every block is emitted exactly once
    (same RECEIVE counts as an undisturbed run) and Defragment rebuilds every file.

    The kills follow the undisturbed run's commits: a fixed 0.9 s after the start only ever
    hit the start-up on a busy machine. 48 files make 612 blocks in 78 micro-batches (4 s of
    CPU undisturbed): a killed run gets a few micro-batches done, and eight never finish.
    """
    _kill_rerun_and_compare(tmp_path, SPLITTER_CRASH_FLOW, files=48)


BATCH_CRASH_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, MergeContent, UpdateAttribute

flow = Flow("crash-batches")
gen = flow.add(GenerateFlowFile(batch_size=400_000, custom_text="0123456789"), name="gen")
tag = flow.add(UpdateAttribute(stage="x"), name="tag")
merge = flow.add(
    MergeContent(minimum_number_of_entries=10_000, maximum_number_of_entries=10_000),
    name="merge",
)
flow.connect(gen, tag)
flow.connect(tag, merge, back_pressure_object_threshold=0)
flow.auto_terminate(merge, ["merged", "original", "failure"])
"""


@pytest.mark.slow
def test_kill_9_while_merging_batches_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """Batches binned and merged whole, killed eight times: every FlowFile created (each
    run generates anew) is merged exactly once, and each event is recorded once.

    The merged FlowFiles are dropped rather than written out: a bundle's name comes from a
    clock, as NiFi's does, so a file written by a killed attempt would be written again under
    another name (PutFile is at-least-once; the other kill tests name their outputs).
    """
    import sqlite3

    undisturbed = tmp_path / "undisturbed"
    undisturbed.mkdir()
    (undisturbed / "flow.py").write_text(BATCH_CRASH_FLOW)
    started = time.monotonic()
    assert start_flowcore_run(undisturbed).wait(timeout=300) == 0
    duration = time.monotonic() - started
    workdir = tmp_path / "crashed"
    workdir.mkdir()
    (workdir / "flow.py").write_text(BATCH_CRASH_FLOW)
    # start-up, tasks, commits, indexing; a run that finished is followed by one that
    # generates more
    _kill_then_finish(workdir, lambda rng: rng.uniform(0.3, 0.9) * duration)
    database = sqlite3.connect(workdir / ".flowcore" / "provenance" / "provenance.db")
    rows = database.execute(
        "select event_type, component_name, sum(run_count), sum(run_count * file_size)"
        " from provenance_event group by event_type, component_name"
    )
    counts = {(kind, name): (count, size) for kind, name, count, size in rows}
    database.close()
    created, _ = counts[("CREATE", "gen")]
    assert created % 400_000 == 0
    assert counts[("ATTRIBUTES_MODIFIED", "tag")][0] == created
    joins, merged_bytes = counts[("JOIN", "merge")]
    assert merged_bytes == 10 * created  # every FlowFile's 10 bytes in exactly one bundle
    # each original dropped once; each bundle dropped once (merged is auto-terminated)
    assert counts[("DROP", "merge")] == (created + joins, 10 * created + merged_bytes)
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        assert repos.flowfiles.queue_ids() == ()
        assert repos.content.check() == []
    finally:
        repos.close()
