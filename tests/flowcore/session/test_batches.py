"""Tests for a session's batch outputs: batches made by fork_batch, sent on or dropped whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowcore.session._batches as session_batches
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._member import TaskMember
from flowcore.errors import FlowFileHandlingError
from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim, Rope
from flowcore.processor import Processor
from flowcore.processor.relationship import Relationship
from flowcore.provenance_events import ProvenanceEventType
from flowcore.session.host import RetryPolicy
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, SplitText, UpdateAttribute, split_text
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape

SETTINGS = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
DROP = ProvenanceEventType.DROP


def _split_flow(root: Path, lines_per_split: int, *, original: str) -> Flow:
    """GetFile -> SplitText with ``splits`` auto-terminated; ``original`` auto-terminated
    ("dropped"), sent on to an UpdateAttribute ("sent"), or both ("both": connected wins)."""
    flow = Flow("drops")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=lines_per_split), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["splits", "failure"])
    if original != "sent":
        flow.auto_terminate(split, "original")
    if original != "dropped":
        tag = flow.add(UpdateAttribute(seen="yes"), name="tag")
        flow.connect(split, tag, "original")
        flow.auto_terminate(tag, "success")
    return flow


def _without_access_time(shape: tuple) -> tuple:
    """An event shape without the input's access time (an earlier run read the file)."""
    return tuple(
        tuple(p for p in part if p[0] != "file.lastAccessTime")
        if isinstance(part, tuple) and part and isinstance(part[0], tuple)
        else part
        for part in shape
    )


def _outcome(root: Path, name: str, flow: Flow, runner: str = "direct", **changes: Any) -> tuple:
    """The events of *flow* run in *root*/*name*, in the order recorded, and its counts.

    Each FORK's children are checked to be dropped in the order it names them, after it.
    """
    settings = attrs.evolve(SETTINGS, **changes)
    result = run_flow(flow, runner, repository=root / name, settings=settings)
    repos = RepositorySet.open(root / name)
    try:
        events = sorted(repos.provenance.search(limit=1_000_000), key=lambda e: e.event_id)
        for found in events[:: max(1, len(events) // 10)]:  # each is found again by its uuid
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)
    finally:
        repos.close()
    _assert_children_dropped_in_order(events)
    shapes = [_without_access_time(event_shape(e)) for e in events]
    return shapes, dict(result.transfers)


def _assert_children_dropped_in_order(events: list) -> None:
    """Every FORK's children are dropped after it, in the order the FORKs name them."""
    position = {e.flowfile_uuid: i for i, e in enumerate(events) if e.event_type is DROP}
    for index, event in enumerate(events):
        if event.event_type is ProvenanceEventType.FORK:
            dropped = [position[c] for c in event.child_uuids if c in position]
            assert dropped == sorted(dropped)
            assert all(at > index for at in dropped)


def _one_by_one(patch: pytest.MonkeyPatch) -> None:
    """Sessions take no batch: the one-by-one path the batches must equal."""
    patch.setattr(TaskMember, "accepts_batches", False)


_LINE = st.text(st.sampled_from("ab 7"), max_size=5).map(str.encode)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(_LINE, min_size=1, max_size=25), min_size=1, max_size=3),
    st.booleans(),
    st.tuples(st.integers(1, 3), st.sampled_from([2, split_text.BATCH_SPLITS])),
    st.sampled_from(["dropped", "sent", "both"]),
)
def test_splits_dropped_whole_give_the_one_by_one_events_in_order(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[bytes]],
    final_newline: bool,
    splitting: tuple[int, int],
    original: str,
) -> None:
    """SplitText's splits auto-terminated go whole: the same counts and the same events, field
    for field and in the same order (FORK, the original's DROP, then each split's), whether the
    original is dropped, sent on, or both connected and auto-terminated (connected wins)."""
    lines_per_split, batch_splits = splitting  # lines per split, splits per batch
    root = tmp_path_factory.mktemp("drops")
    (root / "in").mkdir()
    for number, lines in enumerate(files):
        body = b"\n".join(lines) + (b"\n" if final_newline else b"")
        (root / "in" / f"part{number}.log").write_bytes(body)
    runs: list[int] = []
    real = session_batches.drop_run

    def counted(*args: Any) -> Any:
        made = real(*args)
        runs.append(made.count)
        return made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(split_text, "BATCH_SPLITS", batch_splits)
        patch.setattr(session_batches, "drop_run", counted)
        batched = _outcome(root, "batches", _split_flow(root, lines_per_split, original=original))
    with pytest.MonkeyPatch.context() as patch:
        _one_by_one(patch)
        single = _outcome(root, "single", _split_flow(root, lines_per_split, original=original))
    assert batched == single
    dropped = single[1]["split"].get("splits", (0, 0))[0]
    assert sum(runs) == dropped  # every split was dropped whole, in runs
    assert sum(shape[0] == "DROP" and shape[1] == "split" for shape in single[0]) == dropped + (
        len(files) if original == "dropped" else 0
    )


def test_splits_dropped_whole_on_each_runner(tmp_path: Path, runner: str) -> None:
    """On this runner, splits dropped whole give the direct one-by-one counts and events in
    order; handed on before the commit (a large split), the same events with each part's FORK
    before its DROPs."""
    lines = [f"10.0.0.{i % 7} GET /p/{i}".encode() for i in range(300)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "access.log").write_bytes(b"\n".join(lines) + b"\n")
    batched = _outcome(tmp_path, "batches", _split_flow(tmp_path, 1, original="dropped"), runner)
    handed = _outcome(
        tmp_path,
        "handed",
        _split_flow(tmp_path, 1, original="dropped"),
        runner,
        batch_hand_over_flowfiles=0,
    )
    with pytest.MonkeyPatch.context() as patch:
        _one_by_one(patch)
        single = _outcome(tmp_path, "single", _split_flow(tmp_path, 1, original="dropped"))
    assert batched == single
    size = sum(len(line) for line in lines)
    assert batched[1]["split"] == {"splits": (300, size), "original": (1, size + 300)}
    assert handed[1] == single[1]
    assert sorted(handed[0]) == sorted(_split_forks(single[0], handed[0]))


def _split_forks(single: list[tuple], handed: list[tuple]) -> list[tuple]:
    """*single*'s event shapes with its FORK cut as *handed* cuts it: one per part handed on."""
    forks = [s for s in handed if s[0] == "FORK"]
    return [s for s in single if s[0] != "FORK"] + forks


class _Interleaved(Processor):
    """Takes two parents; from each forks a batch between two single children, all dropped."""

    relationships = (Relationship("drop"), Relationship("original"))

    def on_trigger(self, context: Any, session: Any) -> None:
        for number in range(2):
            parent = session.get()
            if parent is None:
                return
            self._child(session, parent, f"{number}-before")
            starts, sizes = np.array([0, 1, 2]), np.array([1, 1, 1])
            if session.takes_batches("drop"):
                made = session.fork_batch(parent, starts, sizes, {"n": f"{number}-batch"}, {})
                session.transfer_batch(made, "drop")
            else:
                for start in starts.tolist():
                    child = session.clone(parent, start, 1)
                    child = session.put_attribute(child, "n", f"{number}-batch")
                    session.transfer(child, "drop")
            self._child(session, parent, f"{number}-after")
            session.transfer(parent, "original")

    @staticmethod
    def _child(session: Any, parent: Any, name: str) -> None:
        child = session.put_attribute(session.clone(parent, 0, 2), "n", name)
        session.transfer(child, "drop")


def _dropped_order(batches: bool) -> tuple[list, int, int]:
    runner = TestRunner(_Interleaved(), batches=batches)
    runner.auto_terminate(["drop", "original"])
    runner.enqueue(b"abc", {"p": "1"})
    runner.enqueue(b"xyz", {"p": "2"})
    runner.trigger_once()
    order = [
        (e.event_type.value, e.details, e.attributes.get("n") or e.attributes["p"], e.file_size)
        for e in runner.provenance_events
    ]
    return order, runner.auto_terminated_count("drop"), runner.batch_use.forked


def test_a_dropped_batch_is_recorded_where_one_by_one_drops_its_flowfiles() -> None:
    """Batches interleaved with single children and a second parent: each batch's DROPs come
    right after those of the FlowFiles the session held when it was made, as one by one."""
    batched, single = _dropped_order(True), _dropped_order(False)
    assert batched[0] == single[0]
    assert batched[1] == single[1] == 10
    assert batched[2] == 6
    assert [n for kind, _, n, _ in single[0] if kind == "DROP"] == [
        "1", "0-before", "0-batch", "0-batch", "0-batch", "0-after",
        "2", "1-before", "1-batch", "1-batch", "1-batch", "1-after",
    ]  # fmt: skip


def test_a_retried_relationship_takes_no_batch() -> None:
    """A relationship the processor retries takes FlowFiles one by one (a retry takes them back
    with their parent); an auto-terminated one takes batches."""
    runner = TestRunner(SplitText(line_split_count=1), batches=True)
    runner.auto_terminate("splits")
    session = runner.create_session()
    assert session.takes_batches("splits")
    assert session.takes_batches("original")
    runner.retry_policy = RetryPolicy("SplitText-1", frozenset({"splits"}), 3, True, 1, 10)
    assert not runner.create_session().takes_batches("splits")


def test_a_batch_forks_from_one_piece_of_a_rope() -> None:
    """Children cut from one piece of a rope point into that piece's claim, offsets shifted."""
    pieces = [ContentClaim(ResourceClaim("c", "1", name), 10, 100) for name in ("a", "b")]
    parent = FlowFile.create(1, 0, {"filename": "f"}).with_content(Rope(pieces))
    batch = session_batches.forked_batch(
        parent,
        np.array([100, 150]),
        np.array([50, 50]),
        {},
        {},
        first_id=2,
        uuids=("00000000-0000-4000-8000-0000", 0),
        now=0,
    )
    assert batch.resource_claim == pieces[1].resource_claim
    assert list(batch.offsets) == [10, 60]
    with pytest.raises(FlowFileHandlingError, match="span several pieces"):
        session_batches.forked_batch(
            parent,
            np.array([90]),
            np.array([20]),
            {},
            {},
            first_id=2,
            uuids=("00000000-0000-4000-8000-0000", 0),
            now=0,
        )
