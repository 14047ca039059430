"""Tests for flowcore/engine/_source_batches.py: sources reading a task's work items as batches.

GetFile and FileSplitter read their items with ``read_work_batches``; with it turned off they
read each item in a session (``read_work``). Both must leave the same FlowFiles in the same
queue order (attributes, content), the same provenance for each FlowFile (event types, fields,
transit URIs, content), the same transfers, bulletins and listing state.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow, SourceProcessor, WorkItem, WorkListing
from flowcore.driver.controller import run_flow
from flowcore.errors import FlowFileHandlingError
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch.columns import IntColumn
from flowcore.processor import Processor
from flowcore.settings import Settings
from processors import FileSplitter, GetFile, PutFile, UpdateAttribute
from processors._file_attributes import key_path
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape

SETTINGS = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)


@pytest.fixture
def spark() -> str:
    """The Spark runner, its session started (skipped without a Java runtime)."""
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    from flowcore.runners.spark import spark_session  # pyspark only when asked for

    spark_session()
    return "spark"


_SETTLED = time.time()  # the inputs' times: modified before, accessed after (see _settle)


class RacingGetFile(GetFile):
    """GetFile whose files named ``*.gone`` vanish once listed and ``*.dir`` become directories
    (stat works, reading fails): skipped with a warning, and put back in the listing."""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        listing = super().list_work(context, state)
        for item in listing.items:
            _race(key_path(item.key))
        return listing


class RacingFileSplitter(FileSplitter):
    """FileSplitter whose ``*.gone`` files vanish once listed, ``*.grow`` files grow (both go
    to failure) and ``*.bad`` blocks fail to read (put back in the listing)."""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        listing = super().list_work(context, state)
        for item in listing.items:
            _race(key_path(item.payload["path"]))
        return listing

    def _aligned(self, context, fd, job, info):  # type: ignore[no-untyped-def]
        if str(job["path"]).endswith(".bad"):
            msg = "simulated read error"
            raise OSError(msg)
        return super()._aligned(context, fd, job, info)


def _race(path: Path) -> None:
    """What happens to a listed file before its task reads it, by its name."""
    if path.name.endswith(".gone") and path.is_file():
        _stashed(path).parent.mkdir(parents=True, exist_ok=True)
        path.rename(_stashed(path))  # put back by _write_inputs: the same file (inode)
    elif path.name.endswith(".dir") and path.is_file():
        path.unlink()
        path.mkdir()
    elif path.name.endswith(".grow") and path.is_file():
        with path.open("ab") as grown:
            grown.write(b"more\n")
        _settle(path, modified=_SETTLED - 1800)  # its new fingerprint is the same every run


def _stashed(path: Path) -> Path:
    """Where a vanished input waits beside the input directory (``in``) for the next run."""
    inputs = next(p for p in path.parents if p.name == "in")
    return inputs.parent / "stash" / path.relative_to(inputs)


def _settle(path: Path, modified: float = _SETTLED - 3600) -> None:
    """Fixed times for an input: reading it then leaves its access time alone (relatime: it
    is after the modification and the change), so each run sees the same attributes."""
    os.utime(path, (_SETTLED + 3600, modified))


def _write_inputs(root: Path, files: list[tuple[str, bytes]]) -> None:
    """The input files (names may hold sub-directories); those a run changed made afresh.

    A file left as it was is not touched: its change time (``file.creationTime``) stays.
    """
    inputs = root / "in"
    for name, data in files:
        path = inputs / name
        if path.is_dir():
            path.rmdir()
        path.parent.mkdir(parents=True, exist_ok=True)
        if _stashed(path).exists():
            _stashed(path).rename(path)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
            _settle(path)


def _held(flow: Flow, source: Any, relationship: str, name: str) -> None:
    """*source*'s *relationship* into a durable queue before a disabled processor: what
    reaches it stays queued, in order, for the test to read."""
    hold = flow.add(UpdateAttribute(held="yes"), name=name, disabled=True)
    flow.connect(source, hold, relationship, durable=True)


def _get_flow(root: Path, processor: type[GetFile] = GetFile, **properties: Any) -> Flow:
    flow = Flow("get")
    get = flow.add(processor(input_directory=str(root / "in"), **properties), name="get")
    _held(flow, get, "success", "hold")
    return flow


def _splitter_flow(
    root: Path, dropped: tuple[str, ...], processor: type[FileSplitter] = FileSplitter, **props: Any
) -> Flow:
    flow = Flow("splitter")
    split = flow.add(processor(input_directory=str(root / "in"), **props), name="split")
    for relationship in ("blocks", "files", "failure"):
        if relationship in dropped:
            flow.auto_terminate(split, relationship)
        else:
            _held(flow, split, relationship, f"hold-{relationship}")
    return flow


def _plain(flowfile: FlowFile) -> tuple:
    """A FlowFile's attributes apart from its uuid (a value equal to it marked as such)."""
    return tuple(
        sorted(
            (k, "<uuid>" if v == flowfile.uuid else v)
            for k, v in flowfile.attributes.items()
            if k != "uuid"
        )
    )


def _outcome(
    root: Path,
    name: str,
    flow: Flow,
    runner: str = "direct",
    *,
    settings: Settings = SETTINGS,
    ordered: bool = True,
) -> dict[str, Any]:
    """What a run of *flow* leaves: each queue's FlowFiles in order (attributes, content, and
    their events), every FlowFile's events, the events in order (when *ordered*), transfers,
    bulletins, the sources' listing states, and how many queue segments hold a batch."""
    result = run_flow(flow, runner, repository=root / name / "repo", settings=settings)
    repos = RepositorySet.open(root / name / "repo")
    try:
        events = sorted(repos.provenance.search(limit=1_000_000), key=lambda e: e.event_id)
        for found in events[:: max(1, len(events) // 20)]:
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)

        def shape(event: Any) -> tuple:
            content = b""
            if event.content_claim is not None:  # what a replay of the event would read
                content = repos.content.read(event.content_claim)
            return (*event_shape(event), event.transit_uri, content)

        histories: dict[str, list[tuple]] = {}
        for event in events:
            histories.setdefault(event.flowfile_uuid, []).append(shape(event))
        queues = {}
        batched = 0
        for queue_id in sorted(repos.flowfiles.queue_ids()):
            queue = []
            for summary in repos.flowfiles.segments(queue_id):
                batched += summary.batched
                for flowfile in repos.flowfiles.read_segment(summary.segment_id):
                    content = repos.content.read(flowfile.content) if flowfile.content else b""
                    history = tuple(histories.get(flowfile.uuid, ()))
                    queue.append((_plain(flowfile), content, flowfile.size, history))
            queues[queue_id] = queue
        states = {c: dict(repos.flowfiles.state(c)) for c in ("get", "split")}
    finally:
        repos.close()
    bulletins = sorted((b.level, b.message) for b in result.bulletins)
    return {
        "queues": queues,
        "histories": Counter(tuple(h) for h in histories.values()),
        "events": [shape(e) for e in events] if ordered else None,
        "transfers": dict(result.transfers),
        "bulletins": bulletins,
        "states": states,
        "batched": batched,
    }


def _counted(patch: pytest.MonkeyPatch, kind: type[Processor]) -> list[int]:
    """Counts the work items *kind*'s batch form reads (on this process's runner)."""
    read: list[int] = []
    original = kind.read_work_batches  # type: ignore[attr-defined]

    def counting(self, context, items, maker):  # type: ignore[no-untyped-def]
        read.append(len(items))
        return original(self, context, items, maker)

    patch.setattr(kind, "read_work_batches", counting)
    return read


def _compare(
    root: Path, make_flow: Any, kind: type[Processor], runner: str, **options: Any
) -> tuple[dict[str, Any], list[int]]:
    """The batch form's outcome on *runner*, asserted equal to one by one's (direct), and the
    items each call of the batch form read (on the direct runner)."""
    with pytest.MonkeyPatch.context() as patch:
        read = _counted(patch, kind)
        batched = _outcome(root, "batches", make_flow(), runner, **options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kind, "read_work_batches", lambda *_: None)
        single = _outcome(root, "single", make_flow(), **options)
    segments = batched.pop("batched")  # batch segments: the batch form ran (on any runner)
    assert single.pop("batched") == 0
    assert batched == single
    assert segments or not any(batched["queues"].values())
    return batched, read


# --- GetFile --------------------------------------------------------------------------------

_NAMES = st.sampled_from(
    ["a.txt", "b.log", "c", ".hidden", "sub/d.txt", "sub/deeper/e", ".dot/f", "caf\udce9.txt"]
)
_FILES = st.lists(
    st.tuples(
        st.tuples(_NAMES, st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.binary(max_size=700) | st.sampled_from([b"", b"x" * 5000]),
    ),
    max_size=25,
    unique_by=lambda f: f[0],
)


def _get_cases(racing: bool) -> st.SearchStrategy[dict[str, Any]]:
    """GetFile's inputs and properties (files that race its reads when *racing*)."""
    races = ["x.gone", "y.dir", "sub/z.gone"] if racing else []
    return st.fixed_dictionaries(
        {
            "files": _FILES,
            "racing": st.lists(st.sampled_from(races), unique=True) if races else st.just([]),
            "batch_size": st.integers(1, 12),
            "recurse": st.booleans(),
            "file_filter": st.sampled_from([r"[^\.].*", ".*"]),
            "appendable": st.sampled_from(["1 KB", "1 MB"]),
        }
    )


def _check_get_file(root: Path, case: dict[str, Any], runner: str) -> None:
    """GetFile on *runner* with its batch form, then one by one: the same outcome."""
    (root / "in").mkdir()
    racing = case["racing"]
    inputs = case["files"] + [(name, b"racing") for name in racing]

    def flow() -> Flow:
        _write_inputs(root, inputs)
        return _get_flow(
            root,
            RacingGetFile if racing else GetFile,
            keep_source_file=True,
            batch_size=case["batch_size"],
            recurse_subdirectories=case["recurse"],
            file_filter=case["file_filter"],
        )

    settings = attrs.evolve(
        SETTINGS, content_claim_max_appendable_size=case["appendable"], parallelism=2
    )
    outcome, read = _compare(root, flow, GetFile, runner, settings=settings)
    queue = next(iter(outcome["queues"].values()), [])
    assert len(queue) == outcome["transfers"].get("get", {}).get("success", (0, 0))[0]
    assert sum(read) >= len(queue) or runner != "direct"
    unread = [m for _, m in outcome["bulletins"] if "could not read" in m]
    assert len(unread) == ("y.dir" in racing)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_get_cases(racing=True))
def test_get_file_batches_give_the_one_by_one_flowfiles_and_events(
    tmp_path_factory: pytest.TempPathFactory, case: dict[str, Any]
) -> None:
    """GetFile's batch form and read_work give the same FlowFiles, order, content, events,
    bulletins and state: empty, large, hidden, nested and non-UTF-8 files, files that vanish
    (skipped with a warning) or cannot be read (put back), contents over several claims."""
    _check_get_file(tmp_path_factory.mktemp("get"), case, "direct")


@pytest.mark.spark
@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_get_cases(racing=False))
def test_get_file_batches_on_spark_give_the_one_by_one_outcome(
    tmp_path_factory: pytest.TempPathFactory, spark: str, case: dict[str, Any]
) -> None:
    """GetFile's batch form on Spark gives the direct runner's one-by-one outcome."""
    _check_get_file(tmp_path_factory.mktemp("get"), case, spark)


def test_get_file_batches_on_each_runner(tmp_path: Path, runner: str) -> None:
    """GetFile -> durable queue on this runner, over files in several tasks: the direct
    one-by-one outcome."""
    files = [(f"d{i % 3}/f{i:03d}.txt", f"file {i}\n".encode() * (i % 5)) for i in range(40)]
    (tmp_path / "in").mkdir()

    def flow() -> Flow:
        _write_inputs(tmp_path, files)
        return _get_flow(tmp_path, keep_source_file=True, batch_size=7)

    outcome, read = _compare(tmp_path, flow, GetFile, runner)
    (queue,) = outcome["queues"].values()
    assert len(queue) == 40
    if runner == "direct":  # 40 files listed 7 at a time, read in one task: all at once
        assert read == [40]
    settings = attrs.evolve(SETTINGS, parallelism=3)
    outcome, read = _compare(tmp_path / "3", flow, GetFile, runner, settings=settings)
    assert len(next(iter(outcome["queues"].values()))) == 40


def test_get_file_batches_delete_each_file_after_the_commit(tmp_path: Path) -> None:
    """Without Keep Source File the batch form deletes every file it read once the commit is
    durable, as one by one does, and PutFile writes them all from the batches."""
    outcomes = {}
    for name in ("batches", "single"):
        inputs = tmp_path / name / "in"
        for i in range(30):
            (inputs / f"s{i % 2}").mkdir(parents=True, exist_ok=True)
            (inputs / f"s{i % 2}" / f"f{i:02d}").write_bytes(f"content {i}\n".encode())
        flow = Flow("move")
        get = flow.add(GetFile(input_directory=str(inputs)), name="get")
        put = flow.add(PutFile(directory=str(tmp_path / name / "out")), name="put")
        flow.connect(get, put)
        flow.auto_terminate(put, ["success", "failure"])
        with pytest.MonkeyPatch.context() as patch:
            read = _counted(patch, GetFile)
            if name == "single":
                patch.setattr(GetFile, "read_work_batches", lambda *_: None)
            result = run_flow(
                flow, "direct", repository=tmp_path / name / "repo", settings=SETTINGS
            )
        assert bool(read) == (name == "batches")
        assert not any(p.is_file() for p in inputs.rglob("*"))
        written = {p.name: p.read_bytes() for p in (tmp_path / name / "out").iterdir()}
        outcomes[name] = (written, dict(result.transfers), result.bulletins)
    assert outcomes["batches"] == outcomes["single"]
    assert len(outcomes["batches"][0]) == 30


# --- FileSplitter ---------------------------------------------------------------------------

_LINES = st.lists(st.text("ab \r", max_size=12).map(str.encode), max_size=40).map(b"\n".join)


def _splitter_cases(racing: bool) -> st.SearchStrategy[dict[str, Any]]:
    """FileSplitter's inputs and properties (files that race its reads when *racing*)."""
    races = ["x.gone", "y.grow", "z.bad"] if racing else []
    return st.fixed_dictionaries(
        {
            "contents": st.lists(_LINES, min_size=1, max_size=4),
            "racing": st.lists(st.sampled_from(races), unique=True) if races else st.just([]),
            "block_size": st.sampled_from(["7 B", "40 B", "1 KB"]),
            "threshold": st.integers(1, 30),
            "reader": st.sampled_from(["Lines", "Fixed Length", "None"]),
            "copy": st.booleans(),
            "dropped": st.sampled_from([(), ("files",), ("failure",), ("files", "failure")]),
        }
    )


def _check_file_splitter(root: Path, case: dict[str, Any], runner: str) -> dict[str, Any]:
    """FileSplitter on *runner* with its batch form, then one by one: the same outcome."""
    (root / "in").mkdir()
    files = [(f"part{i}.log", data) for i, data in enumerate(case["contents"])]
    files += [(name, b"line one\nline two\nline three\n") for name in case["racing"]]
    properties: dict[str, Any] = {
        "block_size": case["block_size"],
        "blocks_threshold": case["threshold"],
        "record_reader": case["reader"],
        "copy_into_repository": case["copy"],
    }
    if case["reader"] == "Fixed Length":
        properties["record_length"] = "3 B"
    processor = RacingFileSplitter if case["racing"] else FileSplitter

    def flow() -> Flow:
        _write_inputs(root, files)
        return _splitter_flow(root, case["dropped"], processor, **properties)

    settings = attrs.evolve(SETTINGS, parallelism=2)
    outcome, read = _compare(root, flow, FileSplitter, runner, settings=settings)
    assert read or runner != "direct"
    unread = [m for _, m in outcome["bulletins"] if "could not read" in m]
    assert bool(unread) == ("z.bad" in case["racing"])
    return outcome


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_splitter_cases(racing=True))
def test_file_splitter_batches_give_the_one_by_one_flowfiles_and_events(
    tmp_path_factory: pytest.TempPathFactory, case: dict[str, Any]
) -> None:
    """FileSplitter's batch form and read_work give the same blocks, file and failure
    FlowFiles in each queue's order, with the same events (RECEIVE details per block, CREATE,
    DROP when auto-terminated), zero-copy or copied, with blocks that fail to read put back."""
    _check_file_splitter(tmp_path_factory.mktemp("splitter"), case, "direct")


@pytest.mark.spark
@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_splitter_cases(racing=False))
def test_file_splitter_batches_on_spark_give_the_one_by_one_outcome(
    tmp_path_factory: pytest.TempPathFactory, spark: str, case: dict[str, Any]
) -> None:
    """FileSplitter's batch form on Spark gives the direct runner's one-by-one outcome."""
    _check_file_splitter(tmp_path_factory.mktemp("splitter"), case, spark)


def test_file_splitter_batches_on_each_runner(tmp_path: Path, runner: str) -> None:
    """Many small blocks of several files, copied, on this runner: the direct one-by-one
    outcome, every block read as batches."""
    lines = [b"\n".join(f"file {f} line {i}".encode() for i in range(60)) for f in range(5)]
    case = {
        "contents": lines,
        "racing": [],
        "block_size": "100 B",
        "threshold": 1000,
        "reader": "Lines",
        "copy": True,
        "dropped": ("files",),
    }
    outcome = _check_file_splitter(tmp_path, case, runner)
    blocks = outcome["transfers"]["split"]["blocks"][0]
    assert blocks == sum(-(-len(c) // 100) for c in lines)


# --- a user's source ----------------------------------------------------------------------------


class Forgetful(SourceProcessor):
    """A user's source whose batch form makes a batch per item and returns only the first."""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        if state:
            return WorkListing((), state)
        return WorkListing([WorkItem(k) for k in ("a", "b")], {"listed": "yes"})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        session.transfer(session.write(session.create(), item.key), "success")

    def read_work_batches(self, context, items, maker):  # type: ignore[no-untyped-def]
        made = [maker.create(1, {}, item.key.encode()) for item in items]
        return [("success", made[0])]


def test_a_batch_made_and_not_returned_fails_naming_the_source_and_the_fix(
    tmp_path: Path,
) -> None:
    """A batch form that forgets a batch it made would lose its FlowFiles: the run fails with
    a FlowFileHandlingError naming the processor, the method and what to return."""
    flow = Flow("forgetful")
    source = flow.add(Forgetful(), name="mine")
    _held(flow, source, "success", "hold")
    with pytest.raises(FlowFileHandlingError) as raised:
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    message = str(raised.value)
    assert message.startswith("Forgetful 'mine': read_work_batches made 1 FlowFile(s) in 1 ")
    assert "return every batch the maker made" in message
    assert raised.value.processor == "mine"


def _queued_uuids(repository: Path) -> dict[str, list[str]]:
    """Each durable queue's FlowFiles' uuids, in queue order."""
    repos = RepositorySet.open(repository)
    try:
        return {
            queue: [
                flowfile.uuid
                for summary in repos.flowfiles.segments(queue)
                for flowfile in repos.flowfiles.read_segment(summary.segment_id)
            ]
            for queue in sorted(repos.flowfiles.queue_ids())
        }
    finally:
        repos.close()


def test_an_item_read_alone_as_a_batch_gets_its_sessions_uuids(tmp_path: Path) -> None:
    """Items read as a batch each (FileSplitter's blocks, with a file's FlowFile beside its first
    block and a vanished file's failure) and a lone GetFile file get exactly the uuids one by
    one's sessions give them."""
    files = [("a.log", b"one\ntwo\nthree\nfour\n"), ("b.log", b"five\nsix\n"), ("x.gone", b"z\n")]

    def splitter() -> Flow:
        _write_inputs(tmp_path / "split", files)
        return _splitter_flow(tmp_path / "split", (), RacingFileSplitter, block_size="6 B")

    def lone_file() -> Flow:
        _write_inputs(tmp_path / "get", files[:1])
        return _get_flow(tmp_path / "get", keep_source_file=True)

    for name, make_flow, kind in (("split", splitter, FileSplitter), ("get", lone_file, GetFile)):
        uuids = {}
        for way in ("batches", "single"):
            with pytest.MonkeyPatch.context() as patch:
                read = _counted(patch, kind)
                if way == "single":
                    patch.setattr(kind, "read_work_batches", lambda *_: None)
                repository = tmp_path / name / way
                run_flow(make_flow(), "direct", repository=repository, settings=SETTINGS)
            assert bool(read) == (way == "batches")
            uuids[way] = _queued_uuids(repository)
        assert uuids["batches"] == uuids["single"]
        # 6 blocks, 2 files and a failure; 1 file
        assert sum(map(len, uuids["single"].values())) == (9 if name == "split" else 1)


class Hesitant(SourceProcessor):
    """A user's source naming its work whose batch form makes a batch, then raises: each item
    is then read in a session."""

    identifies_work = True

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        if state:
            return WorkListing((), state)
        return WorkListing([WorkItem(k, {"letter": k}) for k in ("a", "b")], {"listed": "yes"})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        session.transfer(session.write(session.create(), item.key), "success")

    def read_work_batches(self, context, items, maker):  # type: ignore[no-untyped-def]
        maker.create(1, {}, b"made, then given up")
        msg = "changed its mind"
        raise RuntimeError(msg)


def test_an_item_whose_batch_form_raised_gets_one_by_ones_uuids(tmp_path: Path) -> None:
    """The uuids a batch form took before it raised are not the member's: the sessions that
    read its items then give the FlowFiles one by one's uuids."""
    uuids = {}
    for way in ("batches", "single"):
        flow = Flow("hesitant")
        _held(flow, flow.add(Hesitant(), name="mine"), "success", "hold")
        with pytest.MonkeyPatch.context() as patch:
            if way == "single":
                patch.setattr(Hesitant, "read_work_batches", lambda *_: None)
            run_flow(flow, "direct", repository=tmp_path / way, settings=SETTINGS)
        uuids[way] = _queued_uuids(tmp_path / way)
    assert uuids["batches"] == uuids["single"]
    assert [len(queue) for queue in uuids["single"].values()] == [2]


class Spans(SourceProcessor):
    """A source of small contents (some empty) with numbered attributes: its batch form writes
    them at once and makes the FlowFiles with ``create_spans`` and a column."""

    identifies_work = True
    contents = (b"one", b"", b"three", b"4", b"")

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        if state:
            return WorkListing((), state)
        return WorkListing([WorkItem("spans", {"n": 5})], {"listed": "yes"})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        for index, content in enumerate(self.contents):
            flowfile = session.write(session.create(), content)
            flowfile = session.put_all_attributes(flowfile, {"kind": "span", "n": str(index)})
            session.provenance.receive(flowfile, "test://spans")
            session.transfer(flowfile, "success")

    def read_work_batches(self, context, items, maker):  # type: ignore[no-untyped-def]
        claim = maker.write(b"".join(self.contents))
        sizes = [len(c) for c in self.contents]
        batch = maker.create_spans(claim, sizes, {"kind": "span"})
        batch = batch.with_columns({"n": IntColumn(list(range(len(sizes))))})
        maker.report_receive(batch, "test://spans")
        return [("success", batch)]


def test_create_spans_gives_the_one_by_one_flowfiles_and_events(tmp_path: Path) -> None:
    """FlowFiles made by create_spans over one written claim (empty contents among them) have
    the contents, attributes, uuids and RECEIVE events (no claim for an empty one) of one
    session writing each."""
    outcomes = {}
    for way in ("batches", "single"):
        flow = Flow("spans")
        _held(flow, flow.add(Spans(), name="mine"), "success", "hold")
        with pytest.MonkeyPatch.context() as patch:
            if way == "single":
                patch.setattr(Spans, "read_work_batches", lambda *_: None)
            outcomes[way] = _outcome(tmp_path, way, flow)
        outcomes[way]["uuids"] = _queued_uuids(tmp_path / way / "repo")
    assert outcomes["batches"].pop("batched") == 1
    assert outcomes["single"].pop("batched") == 0
    assert outcomes["batches"] == outcomes["single"]
    (queue,) = outcomes["single"]["queues"].values()
    assert [content for _, content, _, _ in queue] == list(Spans.contents)


class Short(Spans):
    """A batch form giving create_spans sizes short of its claim (then declining)."""

    refused = ""

    def read_work_batches(self, context, items, maker):  # type: ignore[no-untyped-def]
        claim = maker.write(b"abc")
        try:
            maker.create_spans(claim, [1, 1], {})
        except ValueError as error:
            Short.refused = str(error)


def test_create_spans_refuses_sizes_that_do_not_fill_the_claim(tmp_path: Path) -> None:
    """Sizes adding up to more or less than the claim written are a ValueError naming both."""
    flow = Flow("short")
    _held(flow, flow.add(Short(), name="mine"), "success", "hold")
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert Short.refused == "2 contents of 2 bytes in all for a claim of 3 bytes"
