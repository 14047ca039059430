"""Fixtures for the engine's tests: running a flow and describing what it made."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.provenance_events import ProvenanceEvent
from flowcore.settings import Settings
from repositories.repository_set import RepositorySet

#: Uuids, and a merged FlowFile's filename (a nanosecond clock).
_VARIES = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|^\d{10,}$"
)

Outcome = tuple[Counter | list, Counter, dict]


def by_flowfile(events: list[ProvenanceEvent]) -> list[ProvenanceEvent]:
    """*events* (in id order) FlowFile by FlowFile, each FlowFile's in the order recorded.

    Provenance promises each FlowFile its events in causal order, not how different FlowFiles'
    events interleave in one stage run (DESIGN §3). FlowFiles come in the order they were
    made: a FORK's children in its order, at the FORK.
    """
    first: dict[str, int] = {}
    for event in events:
        for uuid in (event.flowfile_uuid, *event.child_uuids):
            first.setdefault(uuid, len(first))
    return sorted(events, key=lambda e: first[e.flowfile_uuid])


def event_shape(event: ProvenanceEvent) -> tuple:
    """An event without what differs between runs: uuids, times, claim places."""

    def plain(attributes: dict) -> tuple:
        kept = {k: _VARIES.sub("<varies>", v) for k, v in attributes.items()}
        if "merge.bin.age" in kept:
            kept["merge.bin.age"] = "<varies>"
        return tuple(sorted(kept.items()))

    return (
        event.event_type.value,
        event.component_name,
        event.file_size,
        event.relationship,
        event.details,
        event.source_queue_identifier is not None,
        plain(dict(event.previous_attributes)),
        plain(dict(event.updated_attributes)),
        event.content_claim is not None,
        event.previous_content_claim is not None,
        event.previous_file_size,
        len(event.parent_uuids),
        len(event.child_uuids),
    )


def run_outcome(
    root: Path, flow: Flow, settings: Settings, source: str = "gen", *, ordered: bool = False
) -> Outcome:
    """Run *flow*; return its events' shapes, the files in ``root/out`` and the transfers.

    The shapes are a multiset, or with *ordered* a list in the order of the events' ids. It
    also checks that each FlowFile was created once and that events are found by uuid.
    """
    result = run_flow(flow, "direct", repository=root / "repo", settings=settings)
    repos = RepositorySet.open(root / "repo")
    try:
        events = repos.provenance.search(limit=1_000_000)
        uuids = [e.flowfile_uuid for e in events if e.event_type.value == "CREATE"]
        assert len(set(uuids)) == len(uuids) == result.count(source, "success")
        for found in events[:: max(1, len(events) // 10)]:  # each is found again by its uuid
            assert found in repos.provenance.search(flowfile_uuid=found.flowfile_uuid)
    finally:
        repos.close()
    out = root / "out"
    contents = Counter(p.read_bytes() for p in out.iterdir()) if out.exists() else Counter()
    if ordered:
        shapes: Counter | list = [event_shape(e) for e in sorted(events, key=_event_id)]
    else:
        shapes = Counter(event_shape(e) for e in events)
    return shapes, contents, dict(result.transfers)


def _event_id(event: ProvenanceEvent) -> int:
    return event.event_id


@pytest.fixture
def outcome() -> Callable[[Path, Flow, Settings], Outcome]:
    """Runs a flow directly and describes its outcome (see :func:`run_outcome`)."""
    return run_outcome
