"""kill -9 of real `flowcore run`s on the columnar path (issue 18): lines split, tagged, routed
and merged as batches; a rerun loses nothing, duplicates nothing and records each event once."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from repositories._wal_codec import unpack
from repositories.repository_set import RepositorySet, check_repositories
from tests.stress._flowcore_runs import Moments, status_time

pytestmark = pytest.mark.stress

# GetFile -> SplitText (one line a split: the batch form) -> UpdateAttribute with a per-FlowFile
# expression (a column) and a per-file one (a shared value) -> RouteOnAttribute (masks).
_HEAD = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, RouteOnAttribute, SplitText, UpdateAttribute

flow = Flow("columnar-kills")
get = flow.add(GetFile(input_directory="in", keep_source_file=True, batch_size=1), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
tag = flow.add(
    UpdateAttribute(bucket="${fragment.index:mod(8)}", origin="${filename:substringBefore('.')}"),
    name="tag",
)
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.auto_terminate(split, ["original", "failure"])
"""

# Bucket 6 is dropped at the route; the others are binned by bucket, 500 lines a bundle, and
# written under a name no other bundle has. A newline after each line (demarcator and footer)
# makes a bundle hold its lines' bytes.
BINNING_FLOW = (
    _HEAD
    + """
route = flow.add(RouteOnAttribute(low="${bucket:lt(4)}", six="${bucket:equals('6')}"), name="route")
merge = flow.add(
    MergeContent(
        correlation_attribute_name="bucket",
        minimum_number_of_entries=500,
        maximum_number_of_entries=500,
        maximum_number_of_bins=16,
        delimiter_strategy="Text",
        demarcator="\\n",
        footer="\\n",
    ),
    name="merge",
)
name = flow.add(UpdateAttribute(filename="${bucket}-${uuid}.txt"), name="name")
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="fail"), name="put")
flow.connect(tag, route)
flow.connect(route, merge, ["low", "unmatched"])
flow.connect(merge, name, "merged")
flow.connect(name, put)
flow.auto_terminate(route, "six")
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""
)
BIN = 500  # lines a bundle, as BINNING_FLOW's MergeContent makes them

# Every line reaches Defragment, by either route: it rebuilds each input file byte for byte.
DEFRAGMENT_FLOW = (
    _HEAD
    + """
route = flow.add(RouteOnAttribute(low="${bucket:lt(4)}"), name="route")
merge = flow.add(
    MergeContent(
        merge_strategy="Defragment",
        maximum_number_of_bins=64,
        delimiter_strategy="Text",
        demarcator="\\n",
        footer="\\n",
    ),
    name="merge",
)
put = flow.add(PutFile(directory="out", conflict_resolution_strategy="fail"), name="put")
flow.connect(tag, route)
flow.connect(route, merge, ["low", "unmatched"])
flow.connect(merge, put, "merged")
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""
)

# One input file a micro-batch (one GetFile trigger), so a run commits many times.
RUN_OPTIONS = ("--batch-size", "1")

# Events the batch forms record as columnar runs: nearly all of them must be stored that way.
COLUMNAR = (
    ("ATTRIBUTES_MODIFIED", "tag"),
    ("ROUTE", "route"),
    ("DROP", "merge"),
)


def _workdir(root: Path, flow_text: str, files: int) -> dict[str, list[str]]:
    """A work directory with *flow_text* and *files* input files of distinct lines: their
    lines by file name."""
    rng = random.Random(18)
    (root / "in").mkdir(parents=True)
    inputs = {}
    for number in range(files):
        lines = [
            f"file {number} line {i} " + "x" * rng.randint(0, 40)
            for i in range(rng.randint(100, 500))
        ]
        name = f"f{number:02d}.txt"
        (root / "in" / name).write_text("\n".join(lines) + "\n")
        inputs[name] = lines
    (root / "flow.py").write_text(flow_text)
    return inputs


def _start(workdir: Path, runner: str, log: Path | None = None) -> subprocess.Popen:
    """Start ``flowcore run`` in *workdir*; its output goes to *log* (else nowhere)."""
    script = Path(sys.executable).parent / "flowcore"
    command = [str(script), "run", "flow.py", "--runner", runner, "--json", *RUN_OPTIONS]
    if runner == "spark":  # every stage run on Spark, however small
        command += ["--master", "local[2]", "--setting", "driver_run_max_flowfiles=0"]
    with open(log or os.devnull, "wb") as output:
        return subprocess.Popen(
            command,
            cwd=workdir,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the kill reaches Spark's JVM and workers too
        )


def _finish(workdir: Path, runner: str) -> list[float]:
    """Run the flow to its end; the moments (seconds from its start) its commits were seen."""
    started = time.monotonic()
    log = workdir / "run.log"
    process = _start(workdir, runner, log)
    commits = []
    last = status_time(workdir)
    while process.poll() is None:
        if (now := status_time(workdir)) != last:
            commits.append(time.monotonic() - started)
            last = now
        time.sleep(0.01)
    output = log.read_text()
    assert process.returncode == 0, output
    assert json.loads(output[output.index("{") :])["queued"] == {}
    return commits


def _kill_repeatedly(workdir: Path, runner: str, moments: Moments, kills: int) -> int:
    """Start the flow in *workdir* and SIGKILL it at one of *moments*, *kills* times or until a
    run ends on its own (the work is then done); how many were killed."""
    rng = random.Random(2026)
    killed = 0
    while killed < kills:
        process = _start(workdir, runner)
        moments(rng, process)
        if process.poll() is not None:
            assert process.returncode == 0
            break
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
    return killed


def _stored_events(workdir: Path) -> tuple[Counter, Counter]:
    """Events by (type, component) as the provenance store holds them, and how many of them
    sit in columnar runs (rows a batch recorded, holding their uuid numbers)."""
    database = sqlite3.connect(workdir / ".flowcore" / "provenance" / "provenance.db")
    try:
        rows = database.execute(
            "select event_type, component_name, event_id, run_count, run_data, event_group"
            " from provenance_event order by event_id"
        ).fetchall()
    finally:
        database.close()
    stored: Counter = Counter()
    columnar: Counter = Counter()
    # Rows of an event group share one block of ids, interleaved in the one-by-one order;
    # blocks, and rows outside groups, never overlap.
    groups: Counter = Counter()
    blocks = []  # (first id, ids): a row outside groups, or a whole group
    for _, _, event_id, count, _, group in rows:
        if group is None:
            blocks.append((event_id, count))
        else:
            groups[group] += count
    next_id = -1
    for start, length in sorted([*blocks, *groups.items()]):
        assert start >= next_id, f"event id {start} is inside the block before it"
        next_id = start + length
    for kind, component, event_id, count, data, group in rows:
        if group is not None:
            assert group <= event_id < group + groups[group], (event_id, group)
        stored[kind, component] += count
        if count > 1 and "numbers" in unpack(data):
            columnar[kind, component] += count
    return stored, columnar


def _check_repositories(workdir: Path) -> list:
    """Every provenance event as a search finds it; checks that no event is recorded twice, no
    FlowFile is merged twice, no queue is left and the repositories are sound."""
    repository = workdir / ".flowcore"
    assert check_repositories(repository) == []
    repos = RepositorySet.open(repository)
    try:
        assert repos.flowfiles.queue_ids() == ()
        assert repos.content.check() == []
        events = repos.provenance.search(limit=10_000_000)  # runs unfolded into events
    finally:
        repos.close()
    assert len({e.event_id for e in events}) == len(events)
    for kind in ("ATTRIBUTES_MODIFIED", "ROUTE"):
        changed = Counter(e.flowfile_uuid for e in events if e.event_type.value == kind)
        assert [u for u, n in changed.items() if n > 1] == [], kind
    merged = Counter(
        parent for e in events if e.event_type.value == "JOIN" for parent in e.parent_uuids
    )
    assert [u for u, n in merged.items() if n > 1] == []
    dropped = {
        e.flowfile_uuid
        for e in events
        if e.event_type.value == "DROP" and e.component_name == "merge"
    }
    assert set(merged) == dropped  # each original merged once and dropped once
    return events


def _compare_provenance(crashed: Path, reference: Path) -> None:
    """The crashed run's events, searched and as stored, are the undisturbed run's, and the
    batch forms recorded them as columnar runs in both."""
    events = _check_repositories(crashed)
    searched = Counter((e.event_type.value, e.component_name) for e in events)
    stored, columnar = _stored_events(crashed)
    expected, expected_columnar = _stored_events(reference)
    assert searched == stored
    assert stored == expected
    for key in COLUMNAR:
        assert expected_columnar[key] >= 0.95 * expected[key] > 0, (key, expected_columnar)
        assert columnar[key] >= 0.95 * stored[key], (key, columnar)


def _bundles(workdir: Path) -> dict[str, list[list[str]]]:
    """The bundles written, as lists of lines, by bucket (the first part of their names)."""
    bundles: dict[str, list[list[str]]] = {}
    for path in sorted((workdir / "out").iterdir()):
        match = re.fullmatch(r"(\d)-[0-9a-f-]{36}\.txt", path.name)
        assert match, f"unexpected file {path.name!r} in out/"
        text = path.read_text()
        assert text.endswith("\n")
        bundles.setdefault(match[1], []).append(text[:-1].split("\n"))
    return bundles


def _check_bundles(workdir: Path, inputs: dict[str, list[str]]) -> dict[str, list[int]]:
    """Every routed line in exactly one bundle of its bucket, in its file's order; the bundle
    sizes by bucket."""
    position = {}  # line -> (file number, line index)
    bucket_of = {}
    wanted: Counter = Counter()
    for number, lines in enumerate(inputs.values()):
        for i, line in enumerate(lines):
            position[line] = (number, i)
            bucket_of[line] = str((i + 1) % 8)  # fragment.index counts from 1
            if bucket_of[line] != "6":
                wanted[line] += 1
    written: Counter = Counter()
    sizes = {}
    for bucket, bundles in _bundles(workdir).items():
        sizes[bucket] = sorted(len(b) for b in bundles)
        for bundle in bundles:
            written.update(bundle)
            assert {bucket_of.get(line) for line in bundle} == {bucket}
            assert len(bundle) <= BIN
            # a queue keeps its order: a file's lines come in order within a bundle
            last: dict[int, int] = {}
            for line in bundle:
                number, index = position[line]
                assert last.get(number, -1) < index, f"{line!r} out of order"
                last[number] = index
    assert written == wanted  # nothing lost, nothing duplicated
    # bins are full but for one a bucket, closed at the end of the input
    for bucket, found in sizes.items():
        assert found[1:] == [BIN] * (len(found) - 1), bucket
    return sizes


@pytest.mark.slow
def test_kill_9_binning_by_bucket_on_the_columnar_path_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    """Lines split, tagged, routed and binned by bucket as batches, killed eight times:
    every routed line is written once, and each event is recorded once, as an undisturbed run."""
    reference = tmp_path / "reference"
    inputs = _workdir(reference, BINNING_FLOW, 48)
    commits = _finish(reference, "direct")
    crashed = tmp_path / "crashed"
    _workdir(crashed, BINNING_FLOW, 48)
    # start-up and recovery, tasks, commits, indexing, publishing
    assert _kill_repeatedly(crashed, "direct", Moments(crashed, commits), kills=8) == 8
    _finish(crashed, "direct")
    assert not list((crashed / "out").glob(".*"))  # no temporary of a killed attempt is left
    assert _check_bundles(crashed, inputs) == _check_bundles(reference, inputs)
    _compare_provenance(crashed, reference)


@pytest.mark.slow
def test_kill_9_defragment_on_the_columnar_path_rebuilds_every_file_once(tmp_path: Path) -> None:
    """Lines split, tagged and routed as batches, then defragmented, killed eight times: each
    input file is written back byte for byte, and each event is recorded once."""
    reference = tmp_path / "reference"
    _workdir(reference, DEFRAGMENT_FLOW, 48)
    commits = _finish(reference, "direct")
    crashed = tmp_path / "crashed"
    _workdir(crashed, DEFRAGMENT_FLOW, 48)
    assert _kill_repeatedly(crashed, "direct", Moments(crashed, commits), kills=8) == 8
    _finish(crashed, "direct")
    inputs = {p.name: p.read_bytes() for p in (reference / "in").iterdir()}
    for workdir in (reference, crashed):
        assert {p.name: p.read_bytes() for p in (workdir / "out").iterdir()} == inputs
    _compare_provenance(crashed, reference)


@pytest.mark.slow
@pytest.mark.spark
def test_kill_9_spark_binning_on_the_columnar_path_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    """The binning flow on Spark `local[2]`, its driver, JVM and workers killed mid-run: the
    lines, bundles and events are those of an undisturbed direct run."""
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    reference = tmp_path / "reference"
    inputs = _workdir(reference, BINNING_FLOW, 12)
    commits = _finish(reference, "direct")
    crashed = tmp_path / "crashed"
    _workdir(crashed, BINNING_FLOW, 12)
    # a Spark start takes seconds: each run is killed in the second after its first commit
    moments = Moments(crashed, commits, early=False, past=1.0)
    assert _kill_repeatedly(crashed, "spark", moments, kills=2) == 2
    _finish(crashed, "spark")
    assert not list((crashed / "out").glob(".*"))
    assert _check_bundles(crashed, inputs) == _check_bundles(reference, inputs)
    _compare_provenance(crashed, reference)
