"""Tests for block views: one large file read as line-aligned blocks by parallel tasks gives
exactly the FlowFiles (content, attributes, order, uuids) and lineage of one task reading it.

Each case runs GetFile -> SplitText -> UpdateAttribute -> (durable) a disabled processor, whose
queue keeps the splits in the order a downstream queue sees them, twice: with
``block_read_min_size`` small (blocks) and ``"0 B"`` (one task), and compares the two.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.compiler.stages import compile_flow, explain
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, SplitText, UpdateAttribute
from repositories.repository_set import RepositorySet

_VARYING = frozenset({"file.lastAccessTime"})  # the first run's read moves it


def _flow(inbox: Path, keep: bool = True, **split: Any) -> Flow:
    made = Flow("blocks")
    get = made.add(GetFile(input_directory=str(inbox), keep_source_file=keep), name="get")
    cut = made.add(SplitText(**{"line_split_count": 1, **split}), name="split")
    tag = made.add(UpdateAttribute(bucket="${fragment.index:mod(8)}"), name="tag")
    hold = made.add(UpdateAttribute(held="yes"), name="hold", disabled=True)
    made.connect(get, cut)
    made.connect(cut, tag, "splits")
    made.connect(tag, hold)
    made.auto_terminate(cut, ["original", "failure"])
    made.auto_terminate(hold, "success")
    return made


def _plain(attributes: Any) -> tuple:
    return tuple(sorted((k, v) for k, v in dict(attributes).items() if k not in _VARYING))


def _outcome(place: Path, flow: Flow, least: str, parallelism: int, runner: str = "direct") -> dict:
    """Run *flow*; the held queue's FlowFiles in order, each FlowFile's history, the parent's
    FORK count and every lineage edge."""
    settings = Settings(
        sync=False,
        parallelism=parallelism,
        block_read_min_size=least,
        driver_run_max_flowfiles=0,
    )
    result = run_flow(flow, runner, repository=place, settings=settings)
    # a file with fewer lines than the header goes to failure, with a bulletin, either way
    bulletins = sorted((b.component_name, b.level) for b in result.bulletins)
    repos = RepositorySet.open(place)
    try:
        queue = []
        for queue_id in repos.flowfiles.queue_ids():
            for summary in repos.flowfiles.segments(queue_id):
                for flowfile in repos.flowfiles.read_segment(summary.segment_id):
                    content = repos.content.read(flowfile.content) if flowfile.content else b""
                    queue.append((flowfile.uuid, _plain(flowfile.attributes), content))
        events = sorted(repos.provenance.search(limit=1_000_000), key=lambda e: e.event_id)
        histories: dict[str, list[tuple]] = defaultdict(list)
        edges = []
        forks = 0
        for event in events:
            if event.event_type.value == "FORK":
                forks += 1
                edges += [(event.flowfile_uuid, child) for child in event.child_uuids]
                continue
            content = repos.content.read(event.content_claim) if event.content_claim else None
            histories[event.flowfile_uuid].append(
                (
                    event.event_type.value,
                    event.component_name,
                    event.file_size,
                    event.relationship,
                    event.transit_uri,
                    _plain(event.previous_attributes),
                    _plain(event.updated_attributes),
                    content,
                )
            )
    finally:
        repos.close()
    return {
        "queue": queue,
        "histories": dict(histories),
        "edges": edges,
        "forks": forks,
        "transfers": {k: dict(v) for k, v in result.transfers.items()},
        "bulletins": bulletins,
    }


def _compare(root: Path, data: bytes, parallelism: int = 3, runner: str = "direct", **split: Any):
    """The block run's and the one-task run's outcomes (asserted equal), and the block run's."""
    inbox = root / "in"
    inbox.mkdir(parents=True)
    (inbox / "big.log").write_bytes(data)
    whole = _outcome(root / "whole", _flow(inbox, **split), "0 B", parallelism)
    blocks = _outcome(root / "blocks", _flow(inbox, **split), "16 B", parallelism, runner)
    assert blocks["queue"] == whole["queue"]
    assert blocks["histories"] == whole["histories"]
    assert blocks["edges"] == whole["edges"]
    assert blocks["transfers"] == whole["transfers"]
    assert blocks["bulletins"] == whole["bulletins"]
    assert all(level != "ERROR" for _, level in whole["bulletins"]) or split.get(
        "header_line_count"
    )
    return whole, blocks


_PIECES = st.sampled_from([b"a", b"bb", b"line", b"x" * 40, b" ", b"\t", b"12345"])
_LINE = st.builds(
    lambda parts, long: b"".join(parts) + (b"L" * 300 if long else b""),
    st.lists(_PIECES, max_size=4),
    st.sampled_from([False] * 6 + [True]),  # now and then a line longer than a block
)
_ENDS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\r"])


@st.composite
def _files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_LINE, _ENDS), min_size=1, max_size=60))
    crlf = draw(st.sampled_from(["lf", "mixed"]))
    body = b"".join(line + (end if crlf == "mixed" else b"\n") for line, end in lines)
    if draw(st.booleans()):  # no final newline
        body = body.rstrip(b"\r\n") + b"tail"
    return body


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=_files(),
    lines=st.integers(1, 3),
    trailing=st.sampled_from(["true", "false"]),
    parallelism=st.integers(2, 4),
    header=st.sampled_from([0, 0, 1, 2]),
)
def test_blocks_give_the_one_task_split(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    data: bytes,
    lines: int,
    trailing: str,
    parallelism: int,
    header: int,
) -> None:
    """Any file shape, Line Split Count 1..3, header lines 0..2: the one-task splits and history."""
    root = tmp_path_factory.mktemp("shape")
    try:
        _compare(
            root,
            data,
            parallelism,
            line_split_count=lines,
            remove_trailing_newlines=trailing,
            header_line_count=header,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_large_file_is_read_by_parallel_tasks(tmp_path: Path) -> None:
    """A file of many blocks' worth of lines is forked by one task per block, numbered on."""
    data = b"".join(b"line %d\r\n" % i if i % 7 else b"\n" for i in range(2_000))
    whole, blocks = _compare(tmp_path, data, parallelism=4)
    assert whole["forks"] == 1
    assert blocks["forks"] == 4
    indexes = [int(dict(a)["fragment.index"]) for _, a, _ in blocks["queue"]]
    assert indexes == list(range(1, len(indexes) + 1))
    assert {dict(a)["fragment.count"] for _, a, _ in blocks["queue"]} == {str(len(indexes))}
    parent = next(u for u, h in blocks["histories"].items() if h[0][0] == "RECEIVE")
    assert [h[0] for h in blocks["histories"][parent]] == ["RECEIVE", "DROP"]
    assert blocks["histories"][parent][0][2] == len(data)  # the whole file's size


def test_a_line_longer_than_a_block(tmp_path: Path) -> None:
    """A line spanning several nominal blocks stays one split; the blocks around it agree."""
    data = b"short\n" * 5 + b"L" * 5_000 + b"\n" + b"after\n" * 5
    _, blocks = _compare(tmp_path, data, parallelism=4)
    assert 1 < blocks["forks"] < 4


def test_header_lines_are_copied_into_every_block_split(tmp_path: Path) -> None:
    """A header (copied into every split) travels to every block's task: the one-task splits."""
    data = b"# head\r\n# more\n" + b"".join(b"row %d\n" % i for i in range(500)) + b"end"
    whole, blocks = _compare(tmp_path, data, header_line_count=2, line_split_count=7)
    assert whole["forks"] == 1
    assert blocks["forks"] == 3
    assert all(c.startswith(b"# head\r\n# more\n") for _, _, c in blocks["queue"])


def test_a_header_marker_reads_the_file_in_one_task(tmp_path: Path) -> None:
    """A header found by its marker characters is read in one task, and explain says why."""
    data = b"# head\n" + b"".join(b"row %d\n" % i for i in range(500))
    whole, blocks = _compare(tmp_path, data, header_line_marker_characters="#")
    assert blocks["forks"] == whole["forks"] == 1
    text = explain(compile_flow(_flow(tmp_path / "in", header_line_marker_characters="#")))
    assert "reads each file in one task: SplitText finds its header by" in text


def test_the_file_read_as_blocks_can_be_replayed(tmp_path: Path) -> None:
    """The split's original (its DROP) names the whole file: a replay brings it back whole."""
    data = b"".join(b"record %d\n" % i for i in range(2_000))
    _, blocks = _compare(tmp_path, data)
    assert blocks["forks"] == 3
    repos = RepositorySet.open(tmp_path / "blocks")
    try:
        drop = next(
            e
            for e in repos.provenance.search(limit=100_000)
            if e.event_type.value == "DROP" and e.component_name == "split"
        )
        assert drop.file_size == len(data)
        queue = drop.source_queue_identifier
        assert queue is not None
        again = repos.provenance.replay(
            drop.event_id, content=repos.content, flowfiles=repos.flowfiles, queues=[queue]
        )
        assert repos.content.read(again.content) == data
    finally:
        repos.close()


def test_explain_names_block_reads(tmp_path: Path) -> None:
    """The plan and flowcore explain's picture say GetFile reads large files as blocks."""
    (tmp_path / "in").mkdir()
    said = "'get' reads large files as line-aligned blocks in parallel tasks for 'split'"
    assert said in explain(compile_flow(_flow(tmp_path / "in")))
    assert said in _flow(tmp_path / "in").explain()


def test_without_keep_source_file_the_file_goes_once(tmp_path: Path) -> None:
    """Blocks of a file GetFile deletes: ingested once, deleted after the commit."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    data = b"".join(b"%d\n" % i for i in range(3_000))
    (inbox / "big.log").write_bytes(data)
    blocks = _outcome(tmp_path / "repo", _flow(inbox, keep=False), "1 KB", 3)
    assert not (inbox / "big.log").exists()
    assert blocks["forks"] == 3
    assert b"".join(c + b"\n" for _, _, c in blocks["queue"]) == data


def test_blocks_on_spark_give_the_one_task_split(tmp_path: Path, runner: str) -> None:
    """On each runner (Spark: tasks in parallel) the blocks give the one-task split."""
    data = b"".join(b"entry %d %s\n" % (i, b"z" * (i % 30)) for i in range(3_000))
    _, blocks = _compare(tmp_path, data, parallelism=2, runner=runner, line_split_count=2)
    assert blocks["forks"] == 2
