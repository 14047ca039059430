"""kill -9 of `flowcore run`s of a Wait/Notify fork-join flow: signals commit with FlowFiles."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet
from tests.stress._flowcore_runs import start_flowcore_run

pytestmark = pytest.mark.stress

# Each file's original waits at Wait for fragment.count Notify signals of its lines and is
# written as <name>-<wait.counter.total>.txt. A signal counted twice (a Notify redone after its
# signal was kept) or lost (kept FlowFiles without their signal) changes a total or leaves an
# original waiting; an original released twice shows as a second SEND.
FORK_JOIN_FLOW = """
from flowcore import Flow
from flowcore.services import MapCacheService
from processors import GetFile, Notify, PutFile, SplitText, UpdateAttribute, Wait

flow = Flow("crash-fork-join")
flow.add_service(MapCacheService("signals"))
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=2), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
tell = flow.add(
    Notify(release_signal_identifier="${fragment.identifier}", distributed_cache_service="signals",
           signal_buffer_count="7"),
    name="notify",
)
wait = flow.add(
    Wait(release_signal_identifier="${fragment.identifier}",
         target_signal_count="${fragment.count}", distributed_cache_service="signals",
         wait_buffer_count="3"),
    name="wait",
)
name = flow.add(
    UpdateAttribute(filename="${filename:substringBefore('.')}-${wait.counter.total}.txt"),
    name="name",
)
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, tell, "splits", durable=True)
flow.connect(split, wait, "original", durable=True)
flow.connect(wait, wait, "wait")
flow.connect(wait, name, "success")
flow.connect(name, put)
flow.auto_terminate(split, "failure")
flow.auto_terminate(tell, ["success", "failure"])
flow.auto_terminate(wait, ["expired", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""

FILES = 40


def _lines(index: int) -> int:
    return 10 + (index * 7) % 41


def _workdir(root: Path) -> Path:
    (root / "in").mkdir(parents=True)
    for index in range(FILES):
        text = "".join(f"file {index} line {i}\n" for i in range(_lines(index)))
        (root / "in" / f"f{index:02d}.txt").write_text(text)
    (root / "flow.py").write_text(FORK_JOIN_FLOW)
    return root


def _kill_then_finish(workdir: Path, duration: float) -> int:
    """SIGKILL `flowcore run` up to eight times at random moments, then let one run finish."""
    rng = random.Random(33)
    kills = 0
    for _ in range(30):
        process = start_flowcore_run(workdir)
        time.sleep(rng.uniform(0.3, max(0.35, min(1.2, duration))))
        if process.poll() is not None:
            continue  # it finished before the kill; the next run has nothing left to do
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        if kills == 8:
            break
    final = start_flowcore_run(workdir)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()
    return kills


def _sends(repository: Path) -> Counter:
    repos = RepositorySet.open(repository)
    try:
        events = repos.provenance.search(limit=10_000_000)
        return Counter(e.component_name for e in events if e.event_type.value == "SEND")
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_never_counts_a_signal_twice_nor_releases_an_original_twice(
    tmp_path: Path,
) -> None:
    """Killed up to eight times then rerun, the fork-join flow releases every original once,
    with exactly its number of lines counted, and leaves no signal and no queued FlowFile."""
    reference = _workdir(tmp_path / "reference")
    started = time.monotonic()
    assert start_flowcore_run(reference).wait(timeout=300) == 0
    duration = time.monotonic() - started
    crashed = _workdir(tmp_path / "crashed")
    kills = _kill_then_finish(crashed, duration)
    assert kills >= 4, f"only {kills} runs were still going when killed"
    expected = {f"f{i:02d}-{_lines(i)}.txt" for i in range(FILES)}
    assert {p.name for p in (reference / "out").iterdir()} == expected
    assert {p.name for p in (crashed / "out").iterdir()} == expected
    for index in range(FILES):
        written = (crashed / "out" / f"f{index:02d}-{_lines(index)}.txt").read_text()
        assert written == (crashed / "in" / f"f{index:02d}.txt").read_text()
    assert _sends(crashed / ".flowcore") == Counter({"put": FILES})
    repos = RepositorySet.open(crashed / ".flowcore")
    try:
        assert not repos.flowfiles.state("service:signals")
        assert repos.flowfiles.queue_ids() == ()
    finally:
        repos.close()
