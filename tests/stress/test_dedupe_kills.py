"""kill -9 of `flowcore run`s of a DetectDuplicate flow: the cache commits with its FlowFiles."""

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

# Files g00-c0.txt and g00-c1.txt hold the same lines: each line's key (group and line number)
# comes twice, so exactly one copy is a non-duplicate, whichever is seen first, and its output
# file is the same either way. A FlowFile marked a duplicate of itself after a redo, or a
# duplicate let through, changes the files or the counts.
DEDUPE_FLOW = """
from flowcore import Flow
from flowcore.services import MapCacheService
from processors import DetectDuplicate, GetFile, PutFile, SplitText, UpdateAttribute

flow = Flow("crash-dedupe")
flow.add_service(MapCacheService("seen", maximum_cache_entries=100_000))
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=2), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
dedupe = flow.add(
    DetectDuplicate(
        cache_entry_identifier="${filename:substringBefore('-')}-${fragment.index}",
        flowfile_description="${filename}",
        distributed_cache_service="seen",
    ),
    name="dedupe",
)
name = flow.add(
    UpdateAttribute(filename="${filename:substringBefore('-')}-${fragment.index}.txt"),
    name="name",
)
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, dedupe, "splits", durable=True)
flow.connect(dedupe, name, "non-duplicate")
flow.connect(name, put)
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(dedupe, ["duplicate", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""

GROUPS, LINES = 40, 60


def _workdir(root: Path) -> Path:
    (root / "in").mkdir(parents=True)
    for group in range(GROUPS):
        text = "".join(f"group {group} line {i}\n" for i in range(LINES))
        for copy in range(2):
            (root / "in" / f"g{group:02d}-c{copy}.txt").write_text(text)
    (root / "flow.py").write_text(DEDUPE_FLOW)
    return root


def _kill_then_finish(workdir: Path, duration: float) -> None:
    """SIGKILL `flowcore run` eight times at random moments, then let one run finish."""
    rng = random.Random(2026)
    kills = 0
    for _ in range(30):
        process = start_flowcore_run(workdir)
        time.sleep(rng.uniform(0.3, min(0.9, duration)))
        if process.poll() is not None:
            break  # it finished: the checks still apply
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        if kills == 8:
            break
    assert kills >= 5, f"only {kills} runs were still going when killed"
    final = start_flowcore_run(workdir)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()


def _routes(repository: Path) -> Counter:
    repos = RepositorySet.open(repository)
    try:
        events = repos.provenance.search(limit=10_000_000)
        assert len({e.event_id for e in events}) == len(events)
        return Counter(
            (e.event_type.value, e.component_name, e.relationship)
            for e in events
            if e.event_type.value in ("ROUTE", "SEND", "CREATE", "RECEIVE")
        )
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_never_marks_a_flowfile_its_own_duplicate_nor_lets_one_through(
    tmp_path: Path,
) -> None:
    """Killed eight times then rerun, the dedupe flow writes one file per key with its line,
    routes exactly as an undisturbed run does, and leaves the cache with every key once."""
    reference = _workdir(tmp_path / "reference")
    started = time.monotonic()
    assert start_flowcore_run(reference).wait(timeout=120) == 0
    duration = time.monotonic() - started
    crashed = _workdir(tmp_path / "crashed")
    _kill_then_finish(crashed, duration)
    expected = {p.name: p.read_bytes() for p in (reference / "out").iterdir()}
    assert len(expected) == GROUPS * LINES
    assert {p.name: p.read_bytes() for p in (crashed / "out").iterdir()} == expected
    routes = _routes(crashed / ".flowcore")
    assert routes == _routes(reference / ".flowcore")
    assert routes[("ROUTE", "dedupe", "non-duplicate")] == GROUPS * LINES
    assert routes[("ROUTE", "dedupe", "duplicate")] == GROUPS * LINES
    repos = RepositorySet.open(crashed / ".flowcore")
    try:
        assert len(repos.flowfiles.state("service:seen")) == GROUPS * LINES
        assert repos.flowfiles.queue_ids() == ()
    finally:
        repos.close()
