"""kill -9 of real `flowcore run`s whose sinks write files with non-deterministic names."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet
from tests.stress._flowcore_runs import Moments, commits_of

pytestmark = pytest.mark.stress

# Two sinks whose names NiFi would make anew on every attempt: `${uuid}` names, and
# MergeContent's default bundle names (a clock reading in NiFi).
FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

flow = Flow("sink-kills")
get = flow.add(GetFile(input_directory="in", keep_source_file=False, batch_size=2), name="get")
split = flow.add(
    SplitText(line_split_count=1, remove_trailing_newlines=False), name="split"
)
# Without segment.original.filename, MergeContent names a bundle by itself (NiFi: nanoTime).
strip = flow.add(
    UpdateAttribute(delete_attributes_expression="segment[.]original[.]filename"), name="strip"
)
name = flow.add(UpdateAttribute(filename="${uuid}.line"), name="name")
put_lines = flow.add(PutFile(directory="out/lines"), name="put-lines")
merge = flow.add(
    MergeContent(minimum_number_of_entries=40, maximum_number_of_entries=40), name="merge"
)
put_merged = flow.add(PutFile(directory="out/merged"), name="put-merged")
flow.connect(get, split)
flow.connect(split, strip, "splits")
flow.connect(strip, name)
flow.connect(strip, merge)
flow.connect(name, put_lines, durable=True)
flow.connect(merge, put_merged, "merged")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put_lines, ["success", "failure"])
flow.auto_terminate(put_merged, ["success", "failure"])
"""


def _workdir(root: Path, files: int) -> tuple[Path, Counter]:
    """Input files of distinct lines, and the lines they hold."""
    rng = random.Random(16)
    (root / "in").mkdir(parents=True)
    lines: Counter = Counter()
    for number in range(files):
        text = [f"file {number} line {i} {rng.random():.12f}" for i in range(rng.randint(20, 60))]
        lines.update(text)
        (root / "in" / f"f{number:03d}.txt").write_text("\n".join(text) + "\n")
    (root / "flow.py").write_text(FLOW)
    return root, lines


def _runner_options(runner: str) -> list[str]:
    """Every stage run on Spark when it is the runner, however small."""
    return ["--setting", "driver_run_max_flowfiles=0"] if runner == "spark" else []


def _run(workdir: Path, runner: str) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", runner, "--json", *_runner_options(runner)],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the kill reaches Spark's JVM and workers too
    )


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def _outputs(workdir: Path) -> tuple[Counter, Counter, list[str]]:
    """Lines written one per file, lines written in bundles, and hidden files left behind."""
    single: Counter = Counter()
    for path in (workdir / "out" / "lines").iterdir():
        if not path.name.startswith("."):
            single[path.read_text().rstrip("\n")] += 1
    merged: Counter = Counter()
    for path in (workdir / "out" / "merged").iterdir():
        if not path.name.startswith("."):
            merged.update(path.read_text().splitlines())
    hidden = [p.name for p in (workdir / "out").rglob(".*")]
    return single, merged, hidden


def _check_provenance(workdir: Path) -> Counter:
    """No event twice: each FlowFile is sent at most once, event ids are unique."""
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=10_000_000)
        assert len({e.event_id for e in events}) == len(events)
        sends = Counter(e.flowfile_uuid for e in events if e.event_type.value == "SEND")
        assert [u for u, n in sends.items() if n > 1] == []
        receives = Counter(e.flowfile_uuid for e in events if e.event_type.value == "RECEIVE")
        assert [u for u, n in receives.items() if n > 1] == []
        assert repos.flowfiles.queue_ids() == () or all(
            repos.flowfiles.queue_size(q)[0] == 0 for q in repos.flowfiles.queue_ids()
        )
        return Counter(e.event_type.value for e in events)
    finally:
        repos.close()


def _kill_and_compare(tmp_path: Path, runner: str, *, kills: int, files: int) -> None:
    """Run the flow undisturbed, then kill a run on *runner* *kills* times and finish it: both
    write every line once, by name and in a bundle, and record the same events.

    The reference runs on the direct runner whatever *runner* is: a runner does not change
    what a run writes or records, and on Spark it saves a JVM start. The kills follow the
    runs' commits (:class:`Moments`); on Spark, whose start takes seconds, each run is killed
    in the second after its first commit (its session started): kills at random moments of
    the reference's time mostly hit the JVM's start.
    """
    reference, lines = _workdir(tmp_path / "reference", files)
    done = _run(reference, "direct")
    commits = commits_of(done, reference)
    _, err = done.communicate(timeout=600)
    assert done.returncode == 0, err.decode()
    crashed, _ = _workdir(tmp_path / "crashed", files)
    spark = runner == "spark"
    moments = Moments(crashed, commits, early=not spark, past=1.0 if spark else None)
    rng = random.Random(9)
    killed = 0
    for _ in range(kills):
        process = _run(crashed, runner)
        moments(rng, process)
        if process.poll() is not None:
            break  # it finished: the check below names it
        _kill(process)
        killed += 1
    assert killed == kills, f"only {killed} runs were still going when killed"
    final = _run(crashed, runner)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()

    for workdir in (reference, crashed):
        single, merged, hidden = _outputs(workdir)
        assert single == lines  # every line once, under its `${uuid}` name
        assert merged == lines  # every line in exactly one bundle
        assert hidden == []  # no temporary of an uncommitted attempt is left
        assert list((workdir / "in").iterdir()) == []
        assert list((workdir / ".flowcore" / "effects").glob("*")) == []
    ref_events = _check_provenance(reference)
    got_events = _check_provenance(crashed)
    for event_type in ("RECEIVE", "SEND", "FORK", "ATTRIBUTES_MODIFIED"):
        assert got_events[event_type] == ref_events[event_type], event_type


@pytest.mark.slow
def test_kill_9_direct_writes_each_sink_file_once(tmp_path: Path) -> None:
    """A direct run killed eight times writes every line once by `${uuid}` name and once in
    a MergeContent bundle, leaves no temporary, and sends each FlowFile once."""
    _kill_and_compare(tmp_path, "direct", kills=8, files=40)


@pytest.mark.slow
@pytest.mark.spark
def test_kill_9_spark_writes_each_sink_file_once(tmp_path: Path) -> None:
    """The same on Spark `local[2]`: the driver, its JVM and workers killed together.

    Two kills, each in the second after a run's first commit on Spark, and the finishing run:
    three JVM starts (five were: a Spark reference, three kills at random moments of its time,
    at least one of which had to hit a run, mostly the JVM's start, and the finishing run).
    """
    _kill_and_compare(tmp_path, "spark", kills=2, files=40)
