"""Tests for FlowFile batches inside tasks: the same FlowFiles and events as one by one."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowcore.engine._batches as task_batches
import flowcore.engine._source_batches as source_batches
import processors._merge_batches as merge_batches
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._member import TaskMember
from flowcore.expression import compile_expression, evaluate_column
from flowcore.processor import BatchRoute, Processor
from flowcore.processor_kinds import FlowFileTransform, TransformResult
from flowcore.provenance_events import ProvenanceEventType
from flowcore.relationship import Relationship
from flowcore.settings import Settings
from processors import (
    GenerateFlowFile,
    GetFile,
    ListFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
    split_text,
)
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape

SETTINGS = Settings(
    sync=False, parallelism=1, unbounded_source_batches=3, driver_run_max_flowfiles=0
)


def _flow(out: Path, fan_out: bool = False, **generate: object) -> Flow:
    flow = Flow("batches")
    gen = flow.add(GenerateFlowFile(batch_size=7, **generate, kind="x"), name="gen")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=3, maximum_number_of_entries=3), name="merge"
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(gen, tag)
    flow.connect(tag, merge, back_pressure_object_threshold=1_000)
    flow.connect(merge, put, "merged")
    if fan_out:
        flow.connect(gen, put)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@pytest.mark.parametrize(
    "generate",
    [
        {"file_size": "10 B"},
        {"custom_text": "line\n", "mime_type": "text/plain"},
        {},
        {"file_size": "10 B", "unique_flowfiles": True},
        {"custom_text": "x", "size": "${fileSize:plus(1)}", "shout": "${literal('a'):toUpper()}"},
    ],
    ids=["random", "custom-text", "empty", "unique", "expressions"],
)
def test_whole_batches_give_the_flowfiles_and_events_of_the_one_by_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generate: dict, outcome: Callable
) -> None:
    """GenerateFlowFile and UpdateAttribute on batches: same outputs, counts and provenance,
    events in the same order."""
    flow = _flow(tmp_path / "whole" / "out", **generate)
    whole = outcome(tmp_path / "whole", flow, SETTINGS, ordered=True)
    monkeypatch.setattr(GenerateFlowFile, "read_work_batch", lambda *_: None)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    flow = _flow(tmp_path / "single" / "out", **generate)
    single = outcome(tmp_path / "single", flow, SETTINGS, ordered=True)
    if "file_size" in generate:  # random content: each run draws its own bytes
        assert sorted(len(c) for c in whole[1].elements()) == sorted(
            len(c) for c in single[1].elements()
        )
        assert (whole[0], whole[2]) == (single[0], single[2])
    else:
        assert whole == single


@pytest.mark.parametrize(
    "generate",
    [{"file_size": "10 B", "unique_flowfiles": True}, {"custom_text": "x", "n": "${fileSize}"}],
    ids=["unique", "expression"],
)
def test_unique_contents_and_expressions_are_generated_as_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generate: dict
) -> None:
    """GenerateFlowFile makes unique random contents and per-FlowFile attributes as one batch:
    its one-by-one read_work is never called."""

    def refused(*_: object) -> None:
        msg = "read_work must not run: the batch form covers this configuration"
        raise AssertionError(msg)

    monkeypatch.setattr(GenerateFlowFile, "read_work", refused)
    flow = _flow(tmp_path / "out", **generate)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("gen", "success") == 21
    assert not result.bulletins
    if "unique_flowfiles" in generate:
        contents = [p.read_bytes() for p in (tmp_path / "out").iterdir()]
        pieces = {c[i : i + 10] for c in contents for i in range(0, 30, 10)}
        assert len(pieces) == 21  # every FlowFile drew its own bytes


def test_a_fanned_out_relationship_takes_the_flowfiles_one_by_one(tmp_path: Path) -> None:
    """Two destinations need clones, so the batch is materialized: nothing is lost."""
    flow = _flow(tmp_path / "out", fan_out=True, custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("gen", "success") == 42  # 21 FlowFiles, each to two connections
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 21 + 7


def test_a_processor_failing_on_a_batch_gets_its_flowfiles_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transform_batch that raises declines: the FlowFiles still go through on_trigger."""

    def broken(*_: object) -> None:
        msg = "no batches today"
        raise RuntimeError(msg)

    monkeypatch.setattr(UpdateAttribute, "transform_batch", broken)
    flow = _flow(tmp_path / "out", custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 7
    assert all(p.read_bytes() == b"xxx" for p in (tmp_path / "out").iterdir())


def test_a_task_unpacks_at_most_the_flowfile_limit_and_defers_the_other_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Callable
) -> None:
    """Batches a processor takes one by one are unpacked up to batch_max_flowfiles per task;
    the others wait whole in its queue: the same FlowFiles and events, over more
    micro-batches (so each component's events in the same order)."""
    settings = attrs.evolve(SETTINGS, batch_max_flowfiles=7)
    flow = _flow(tmp_path / "whole" / "out", custom_text="x")
    whole = outcome(tmp_path / "whole", flow, settings, ordered=True)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    held: list[int] = []
    real = task_batches.unpacks

    def spying(member: Any, batch: Any, queue_id: str) -> bool:
        unpacked = real(member, batch, queue_id)
        held.append(member.task.unpacked)
        return unpacked

    monkeypatch.setattr(task_batches, "unpacks", spying)
    deferred = outcome(
        tmp_path / "deferred",
        _flow(tmp_path / "deferred" / "out", custom_text="x"),
        settings,
        ordered=True,
    )
    assert _per_component(deferred) == _per_component(whole)
    # Three batches of 7 met UpdateAttribute whole in the first task, which unpacked one and
    # deferred two; the deferred ones come back whole from the queue: the next task unpacks
    # one of the two, the last the third. Each task holds at most 7 unpacked.
    assert held == [7] * 6


def _split_flow(root: Path, out: Path, lines_per_split: int) -> Flow:
    """GetFile -> SplitText -> UpdateAttribute (EL) -> RouteOnAttribute -> MergeContent -> put."""
    flow = Flow("distinct")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=lines_per_split), name="split")
    tag = flow.add(
        UpdateAttribute(
            group="${fragment.index:mod(3)}",
            lines="${text.line.count:plus(1)}",
            source="${segment.original.filename:substringBefore('.'):toUpper()}",
            kind="split",
        ),
        name="tag",
    )
    route = flow.add(RouteOnAttribute(low="${fragment.index:mod(3):lt(1)}"), name="route")
    merge = flow.add(
        MergeContent(correlation_attribute_name="group", minimum_number_of_entries=1_000),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${source}-${group}-${merge.count}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, route)
    flow.connect(route, merge, ["low", "unmatched"], back_pressure_object_threshold=100_000)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _run_outcome(
    root: Path, name: str, flow: Flow, runner: str = "direct", settings: Settings = SETTINGS
) -> tuple:
    """Events (shapes, in the order of their ids), written files and transfers of *flow*, run
    with *root*/*name* as its repository (outputs in *root*/*name*/out); the input stays, one
    set of file attributes for every run. Events are checked to be found again by their
    uuids."""
    result = run_flow(flow, runner, repository=root / name / "repo", settings=settings)
    repos = RepositorySet.open(root / name / "repo")
    try:
        events = repos.provenance.search(limit=1_000_000)
        for found in events[:: max(1, len(events) // 20)]:
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)
    finally:
        repos.close()
    _assert_made_before_used(events)
    events = _one_fork_per_parent(sorted(events, key=lambda e: e.event_id))
    out = root / name / "out"
    files = {p.name: p.read_bytes() for p in out.iterdir()} if out.exists() else {}
    return [_unread(event_shape(e)) for e in events], files, dict(result.transfers)


def _per_component(outcome: tuple) -> tuple:
    """An outcome with its events apart per component, each component's in their order.

    What a run whose batches were handed on before their session's commit (a large split,
    ``batch_hand_over_flowfiles``) shares with the one-by-one run: the next members process
    each part before the split makes the next, so components' events come interleaved.
    """
    events: dict[str, list] = {}
    for shape in outcome[0]:
        events.setdefault(shape[1], []).append(shape)
    return (events, *outcome[1:])


def _assert_made_before_used(events: list) -> None:
    """No FlowFile has an event before (a lower id than) the event that made it."""
    made: dict[str, int] = {}
    for event in sorted(events, key=lambda e: e.event_id):
        for child in event.child_uuids:
            made.setdefault(child, event.event_id)
    for event in events:
        if event.flowfile_uuid in made:
            assert event.event_id >= made[event.flowfile_uuid], event  # a JOIN names itself


def _one_fork_per_parent(events: list) -> list:
    """The events with each parent's FORKs as one, where the first was: a split handed on in
    parts (a session holding more than HAND_OVER_AT children) records a FORK per part."""
    forks: dict[str, list] = {}
    for event in events:
        if event.event_type is ProvenanceEventType.FORK:
            forks.setdefault(event.flowfile_uuid, []).append(event)
    joined = {
        id(group[0]): attrs.evolve(
            group[0], child_uuids=tuple(c for e in group for c in e.child_uuids)
        )
        for group in forks.values()
    }
    return [
        joined.get(id(e), e)
        for e in events
        if e.event_type is not ProvenanceEventType.FORK or id(e) in joined
    ]


def _split_outcome(
    root: Path,
    name: str,
    lines_per_split: int,
    runner: str = "direct",
    settings: Settings = SETTINGS,
) -> tuple:
    """:func:`_run_outcome` of the split flow."""
    flow = _split_flow(root, root / name / "out", lines_per_split)
    return _run_outcome(root, name, flow, runner, settings)


def _unread(shape: tuple) -> tuple:
    """An event shape without the input's access time (an earlier run read the file)."""
    return tuple(
        tuple(p for p in part if p[0] != "file.lastAccessTime")
        if isinstance(part, tuple) and part and isinstance(part[0], tuple)
        else part
        for part in shape
    )


def _one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn every batch form off: the per-FlowFile path the batch forms must equal."""
    monkeypatch.setattr(TaskMember, "accepts_batches", False)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    monkeypatch.setattr(RouteOnAttribute, "transform_batch", lambda *_: None)


_LINE = st.text(st.sampled_from("abc 5"), max_size=6).map(str.encode)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(_LINE, min_size=1, max_size=30), min_size=1, max_size=3),
    st.booleans(),
    st.integers(1, 3),
    st.sampled_from([1, 4, split_text.BATCH_SPLITS]),
)
def test_distinct_splits_as_batches_give_the_one_by_one_flowfiles_and_events(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[bytes]],
    final_newline: bool,
    lines_per_split: int,
    batch_splits: int,
) -> None:
    """SplitText, UpdateAttribute and RouteOnAttribute on batches: same files, transfers and
    provenance, events in the same order (empty lines, unterminated last lines, groups of
    lines and inputs split into several batches included); handed on part by part, each
    component's events in the same order."""
    root = tmp_path_factory.mktemp("splits")
    (root / "in").mkdir()
    for number, lines in enumerate(files):
        body = b"\n".join(lines) + (b"\n" if final_newline else b"")
        (root / "in" / f"part{number}.log").write_bytes(body)
    hand_over_at = 0 if batch_splits < 5 else 200_000  # small parts: handed on before the commit
    handing_over = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=hand_over_at)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(split_text, "BATCH_SPLITS", batch_splits)
        batched = _split_outcome(root, "batches", lines_per_split, settings=handing_over)
    with pytest.MonkeyPatch.context() as patch:
        _one_by_one(patch)
        single = _split_outcome(root, "single", lines_per_split)
    if hand_over_at:
        assert batched == single
    else:
        assert _per_component(batched) == _per_component(single)


def test_distinct_splits_as_batches_on_each_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str
) -> None:
    """The batch path on this runner gives the direct one-by-one path's outcome, events in
    the same order; its splits handed on before the commit, each component's in the same
    order."""
    lines = [f"10.0.0.{i % 7} GET /p/{i} {(200, 404, 500)[i % 3]}".encode() for i in range(500)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "access.log").write_bytes(b"\n".join(lines) + b"\n")
    batched = _split_outcome(tmp_path, "batches", 1, runner)
    handing_over = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=0)
    handed = _split_outcome(tmp_path, "handed", 1, runner, settings=handing_over)
    _one_by_one(monkeypatch)
    single = _split_outcome(tmp_path, "single", 1)
    assert batched == single
    assert _per_component(handed) == _per_component(single)
    assert batched[2]["split"]["splits"][0] == 500


def _defragment_flow(root: Path, out: Path) -> Flow:
    """GetFile -> SplitText (3 lines, newlines kept) -> MergeContent Defragment -> PutFile."""
    flow = Flow("defragment")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=3, remove_trailing_newlines=False), name="split")
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, merge, "splits")
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_defragmenting_batches_reassembles_each_file_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defragment over split batches: each file whole again, the same events as one by one."""
    (tmp_path / "in").mkdir()
    inputs = {
        f"part{n}.log": b"".join(f"{n} line {i}\n".encode() for i in range(50 + n * 7))
        for n in range(3)
    }
    for name, data in inputs.items():
        (tmp_path / "in" / name).write_bytes(data)
    binned: list[int] = []
    real = merge_batches._defragment

    def spying(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        binned.extend(len(made.ready) for _ in [made] if made is not None)
        return made

    monkeypatch.setattr(merge_batches, "_defragment", spying)
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
        flow = _defragment_flow(tmp_path, tmp_path / name / "out")
        outcomes.append(_run_outcome(tmp_path, name, flow))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == inputs
    assert sum(binned) == 3  # every file was reassembled from batches


class _Parity(FlowFileTransform):
    """Tags each split odd or even, drops text.line.count, and sends line 5 to failure."""

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        index = int(flowfile.attributes["fragment.index"])
        if index == 5:
            return TransformResult("failure")
        return TransformResult(
            attributes={"parity": "odd" if index % 2 else "even", "uuid": "ignored"},
            remove_attributes=("text.line.count", "filename"),
        )


def _transform_flow(root: Path, out: Path) -> Flow:
    flow = Flow("transform")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    parity = flow.add(_Parity(), name="parity")
    merge = flow.add(
        MergeContent(correlation_attribute_name="parity", minimum_number_of_entries=1_000),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${parity}-${merge.count}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, parity, "splits")
    flow.connect(parity, merge, "success")
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(parity, "failure")
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_a_user_transform_on_batches_gives_the_one_by_one_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FlowFileTransform gets each FlowFile of a batch and its results become columns: the
    same files, transfers and events as one by one, and the FlowFiles stay batches after it."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"line %d\n" % i for i in range(40)))
    called: list[int] = []
    real = _Parity.transform_batch

    def counting(self: _Parity, context: Any, batch: Any) -> Any:
        made = real(self, context, batch)
        called.append(0 if made is None else batch.count)
        return made

    monkeypatch.setattr(_Parity, "transform_batch", counting)
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
            monkeypatch.setattr(_Parity, "transform_batch", lambda *_: None)
        flow = _transform_flow(tmp_path, tmp_path / name / "out")
        outcomes.append(_run_outcome(tmp_path, name, flow))
    assert outcomes[0] == outcomes[1]
    assert called == [40]
    assert outcomes[0][2]["parity"] == {"success": (39, 264), "failure": (1, 6)}


class _Tag(Processor):
    """docs/writing-processors.md's batch form example, as written there."""

    relationships = (Relationship("low"), Relationship("high"))

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        group = int(flowfile.attributes["fragment.index"]) % 8
        flowfile = session.put_attribute(flowfile, "group", str(group))
        session.transfer(flowfile, "low" if group < 4 else "high")

    def transform_batch(self, context: Any, batch: Any) -> Any:
        groups = evaluate_column(compile_expression("${fragment.index:mod(8)}"), batch)
        tagged = batch.with_columns({"group": groups})
        low = groups.numbers < 4
        return [
            BatchRoute("low", np.flatnonzero(low), tagged.where(low)),
            BatchRoute("high", np.flatnonzero(~low), tagged.where(~low)),
        ]


def test_the_documented_batch_form_gives_the_per_flowfile_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example of docs/writing-processors.md: same files, transfers and events either way."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"row %d\n" % i for i in range(30)))
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
            monkeypatch.setattr(_Tag, "transform_batch", lambda *_: None)
        flow = Flow("tag")
        get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
        split = flow.add(SplitText(line_split_count=1), name="split")
        tag = flow.add(_Tag(), name="tag")
        merge = flow.add(
            MergeContent(correlation_attribute_name="group", minimum_number_of_entries=100),
            name="merge",
        )
        rename = flow.add(UpdateAttribute(filename="${group}"), name="rename")
        put = flow.add(PutFile(directory=str(tmp_path / name / "out")), name="put")
        flow.connect(get, split)
        flow.connect(split, tag, "splits")
        flow.connect(tag, merge, ["low", "high"])
        flow.connect(merge, rename, "merged")
        flow.connect(rename, put)
        flow.auto_terminate(split, ["original", "failure"])
        flow.auto_terminate(merge, ["original", "failure"])
        flow.auto_terminate(put, ["success", "failure"])
        outcomes.append(_run_outcome(tmp_path, name, flow))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2]["tag"] == {"low": (15, 84), "high": (15, 86)}


class _ForkThenFail(Processor):
    """Forks a one-byte child as a batch, transfers it, then fails (when told to)."""

    relationships = (Relationship("splits"), Relationship("original"))

    def __init__(self, *, fail: bool) -> None:
        super().__init__()
        self.fail = fail

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        parent = session.get()
        if parent is None:
            return
        children = session.fork_batch(parent, np.array([0]), np.array([1]), {"child": "y"}, {})
        session.transfer_batch(children, "splits")
        if self.fail:
            msg = "after the hand-over"
            raise RuntimeError(msg)
        session.transfer(parent, "original")


def _fork_flow(root: Path, *, fail: bool) -> Flow:
    flow = Flow("handed")
    gen = flow.add(GenerateFlowFile(batch_size=2, custom_text="ab"), name="gen")
    fork = flow.add(_ForkThenFail(fail=fail), name="fork")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    put = flow.add(PutFile(directory=str(root / "out")), name="put")
    flow.connect(gen, fork, durable=True)
    flow.connect(fork, tag, "splits")
    flow.connect(tag, put)
    flow.auto_terminate(fork, "original")
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_a_session_failing_after_its_batches_went_on_is_rolled_back_as_any_other(
    tmp_path: Path,
) -> None:
    """Batches handed on before the commit cannot be called back: when the session then fails,
    the task runs again holding its batches, and the failure rolls back, penalizes and reports
    its FlowFile as without a hand-over; the run goes on and nothing it made is committed."""
    outcomes = []
    for hand_over_at in (0, 200_000):
        settings = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=hand_over_at)
        root = tmp_path / str(hand_over_at)
        result = run_flow(
            _fork_flow(root, fail=True), "direct", repository=root / "repo", settings=settings
        )
        repos = RepositorySet.open(root / "repo")
        try:
            events = repos.provenance.search(limit=100)
            shapes = Counter((e.component_name, e.event_type.value) for e in events)
            queued = [repos.flowfiles.queue_size(q)[0] for q in repos.flowfiles.queue_ids()]
        finally:
            repos.close()
        assert not (root / "out").exists() or not any((root / "out").iterdir())
        assert any("after the hand-over" in b.message for b in result.bulletins), result.bulletins
        outcomes.append((shapes, queued, dict(result.transfers), sorted(result.queued)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == Counter({("gen", "CREATE"): 6})  # the fork committed nothing
    assert outcomes[0][1] == [6]  # all its input queued again, penalized
    result = run_flow(
        _fork_flow(tmp_path, fail=False),
        "direct",
        repository=tmp_path / "repo2",
        settings=SETTINGS,
    )
    assert result.count("tag", "success") == 6  # three generations of two, one child each


@pytest.mark.parametrize("durable", [True, False])
def test_a_batch_taken_whole_never_overtakes_one_declined_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """When the batch form declines a.txt's lines (they go one by one) and takes b.txt's,
    b.txt's still follow a.txt's, across a durable queue or a pipe: queue order holds."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\na2\na3\n")
    (tmp_path / "in" / "b.txt").write_text("b1\nb2\nb3\n")
    real = UpdateAttribute.transform_batch
    calls: list[int] = []

    def declining_first(self: UpdateAttribute, context: Any, batch: Any) -> Any:
        calls.append(batch.count)
        return None if len(calls) == 1 else real(self, context, batch)

    monkeypatch.setattr(UpdateAttribute, "transform_batch", declining_first)
    flow = Flow("order")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=6, maximum_number_of_entries=6), name="merge"
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits", durable=durable)
    flow.connect(tag, merge)
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert [p.read_bytes() for p in (tmp_path / "out").iterdir()] == [b"a1a2a3b1b2b3"]
    assert calls == [3]  # b.txt's batch waited behind a.txt's one by one: unpacked too


def _source_flow(root: Path, source: Processor) -> Flow:
    """A source alone, its ``success`` auto-terminated."""
    flow = Flow("dropped")
    made = flow.add(source, name="source")
    flow.auto_terminate(made, "success")
    return flow


def _dropped_outcome(root: Path, name: str, source: Processor, runner: str = "direct") -> tuple:
    """The events of a source whose FlowFiles are all dropped, in order, and the counts."""
    result = run_flow(_source_flow(root, source), runner, repository=root / name, settings=SETTINGS)
    repos = RepositorySet.open(root / name)
    try:
        events = sorted(repos.provenance.search(limit=100_000), key=lambda e: e.event_id)
    finally:
        repos.close()
    _assert_made_before_used(events)
    return [event_shape(e) for e in events], dict(result.transfers)


def _sources(kind: str, root: Path, draw: tuple) -> Processor:
    """A GenerateFlowFile (batch size, content) or a ListFile of files of the sizes drawn."""
    if kind == "generate":
        batch_size, content = draw
        return GenerateFlowFile(batch_size=batch_size, kind="x", **content)
    if not (root / "in").exists():  # written once: both runs list the same files
        (root / "in").mkdir()
        for number, size in enumerate(draw):
            path = root / "in" / f"f{number}.txt"
            path.write_bytes(b"z" * size)
            os.utime(path, (1_700_000_000, 1_700_000_000))  # old: listed at once, no lag
    return ListFile(input_directory=str(root / "in"))


_CONTENTS = st.sampled_from(
    [
        {},
        {"custom_text": "line\n"},
        {"file_size": "3 B"},
        {"file_size": "4 B", "unique_flowfiles": True},
    ]
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.tuples(st.just("generate"), st.tuples(st.integers(1, 40), _CONTENTS)),
        st.tuples(st.just("list"), st.lists(st.integers(0, 20), min_size=1, max_size=30)),
    )
)
def test_a_sources_batches_dropped_whole_give_the_one_by_one_events_in_order(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[str, tuple]
) -> None:
    """GenerateFlowFile and ListFile with ``success`` auto-terminated make their FlowFiles as
    batches and drop them whole: the same counts and events, field for field and in the same
    order (every CREATE, then every DROP) as read one by one."""
    kind, draw = drawn
    root = tmp_path_factory.mktemp("sources")
    source = type(_sources(kind, root, draw))
    dropped: list[int] = []
    real = task_batches.drop_whole

    def counted(member: Any, relationship: str, before: Any, after: Any, queue: Any) -> None:
        dropped.append(after.count)
        real(member, relationship, before, after, queue)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source_batches, "drop_whole", counted)  # what a source's batches call
        batched = _dropped_outcome(root, "batches", _sources(kind, root, draw))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "read_work_batch", lambda *_: None)
        single = _dropped_outcome(root, "single", _sources(kind, root, draw))
    if "file_size" in str(draw):  # random content: each run draws its own bytes
        assert [s[:2] for s in batched[0]] == [s[:2] for s in single[0]]
    assert batched == single
    made = single[1]["source"]["success"][0]
    assert sum(dropped) == made
    per_item, items = (draw[0], 3) if kind == "generate" else (len(draw), 1)
    assert [s[0] for s in single[0]] == (["CREATE"] * per_item + ["DROP"] * per_item) * items


@pytest.mark.parametrize("kind", ["generate", "list"])
def test_a_sources_batches_dropped_whole_on_each_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str, kind: str
) -> None:
    """On this runner, a source's batches dropped whole give the direct one-by-one outcome."""
    draw = (25, {"custom_text": "x"}) if kind == "generate" else (3, 0, 9, 1)
    batched = _dropped_outcome(tmp_path, "batches", _sources(kind, tmp_path, draw), runner)
    monkeypatch.setattr(type(_sources(kind, tmp_path, draw)), "read_work_batch", lambda *_: None)
    single = _dropped_outcome(tmp_path, "single", _sources(kind, tmp_path, draw))
    assert batched == single
    assert batched[1]["source"]["success"][0] == (75 if kind == "generate" else 4)


class _Interleaved(Processor):
    """Odd lines and even lines as two routes to `success` (as ReplaceText's rewritten and
    unchanged FlowFiles): the batch form's parts interleave in input order."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")

    def transform_batch(self, context, batch):  # type: ignore[no-untyped-def]
        index = batch.column("fragment.index").numbers  # type: ignore[union-attr]
        odd = index % 2 == 1
        return [
            BatchRoute("success", np.flatnonzero(odd), batch.where(odd)),
            BatchRoute("success", np.flatnonzero(~odd), batch.where(~odd)),
        ]


@pytest.mark.parametrize("one_by_one", [False, True])
def test_interleaved_parts_reach_the_next_member_in_input_order(
    tmp_path: Path, one_by_one: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch form's parts for one pipelined member go on in input order: the member counts
    the FlowFiles (stored state) in the order of their lines, as one by one does."""
    if one_by_one:
        _one_by_one(monkeypatch)
        monkeypatch.setattr(_Interleaved, "transform_batch", lambda *_: None)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f.txt").write_bytes(b"".join(b"line%d\n" % i for i in range(1, 10)))
    flow = Flow("order")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    step = flow.add(_Interleaved(), name="step")
    count = flow.add(
        UpdateAttribute(
            store_state="Store state locally",
            stateful_variables_initial_value="0",
            n="${getStateValue('n'):plus(1)}",
        ),
        name="count",
    )
    flow.connect(get, split)
    flow.connect(split, step, "splits")
    flow.connect(step, count)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(count, ["success", "set state fail"])
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = repos.provenance.search(event_type="ATTRIBUTES_MODIFIED", limit=1000)
        seen = sorted(
            (int(e.updated_attributes["n"]), int(e.attributes["fragment.index"]))
            for e in events
            if e.component_name == "count"
        )
    finally:
        repos.close()
    assert [index for _, index in seen] == list(range(1, 10))
