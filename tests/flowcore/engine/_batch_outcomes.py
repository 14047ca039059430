"""What the test_batches_*.py modules compare: a flow's outcome (event shapes, written files,
transfers) run on batches and one by one, and docs/writing-processors.md's batch form example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._member import TaskMember
from flowcore.expression import compile_expression, evaluate_column
from flowcore.processor import BatchRoute, Processor
from flowcore.processor.relationship import Relationship
from flowcore.provenance_events import ProvenanceEventType
from flowcore.settings import Settings
from processors import RouteOnAttribute, UpdateAttribute
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import by_flowfile, event_shape

SETTINGS = Settings(
    sync=False, parallelism=1, unbounded_source_batches=3, driver_run_max_flowfiles=0
)


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
    events = by_flowfile(_one_fork_per_parent(sorted(events, key=lambda e: e.event_id)))
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
