"""Tests for the order of a member's batch events: where the one-by-one sessions put each."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.engine._event_order import DROPPED, RECORDED, REPORTED, SessionOrder
from flowcore.flowfile import Attributes, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.provenance_events import InterleavedRuns, ProvenanceEventRun, ProvenanceEventType
from flowcore.session._runs import run_of
from flowcore.session.host import ComponentInfo

COMPONENT = ComponentInfo("step-1", "Step", "step")
KINDS = {
    REPORTED: ProvenanceEventType.SEND,
    RECORDED: ProvenanceEventType.ATTRIBUTES_MODIFIED,
    DROPPED: ProvenanceEventType.DROP,
}


def _batch(count: int, *, shuffled: bool = False) -> FlowFileBatch:
    """*count* FlowFiles of consecutive uuids (in a random order of them when *shuffled*)."""
    key, first = new_uuids(count)
    batch = FlowFileBatch.alike(
        count=count,
        first_id=0,
        uuid_key=key,
        uuid_first=first,
        attributes=Attributes({"filename": "a"}),
        uuid_named=(),
        resource_claim=None,
        offset=0,
        stride=0,
        size=0,
        entry_date=1,
        lineage_start_date=1,
    )
    return batch.take(np.random.default_rng(count).permutation(count)) if shuffled else batch


def _run(batch: FlowFileBatch, part: int, rows: np.ndarray | None = None) -> ProvenanceEventRun:
    taken = batch if rows is None else batch.take(rows)
    return run_of(COMPONENT, KINDS[part], batch, taken, 5)


def _flat(events: list) -> list[tuple[str, str]]:
    """(type, uuid) of each event, in the order the repository numbers them."""
    return [(e.event_type.value, e.flowfile_uuid) for item in events for e in item.events()]


def _one_by_one(
    batches: list[FlowFileBatch],
    runs: list[tuple[int, int, np.ndarray | None]],
    per_session: int,
    filled: int = 0,
) -> list[tuple[str, str]]:
    """What sessions of *per_session* FlowFiles record: by session, part, FlowFile, run."""
    keyed = []
    offsets = np.cumsum([0, *(b.count for b in batches)])
    for rank, (number, part, rows) in enumerate(runs):
        batch = batches[number]
        for row in range(batch.count) if rows is None else rows.tolist():
            flowfile = int(offsets[number]) + row
            session = (flowfile + filled) // per_session
            uuid = batch.flowfile(row).uuid
            keyed.append(((session, part, flowfile, rank), (KINDS[part].value, uuid)))
    return [event for _, event in sorted(keyed)]


def _recorded(
    batches: list[FlowFileBatch],
    runs: list[tuple[int, int, np.ndarray | None]],
    per_session: int,
    filled: int = 0,
) -> tuple[list, int]:
    order = SessionOrder(per_session, filled)
    for number, batch in enumerate(batches):
        order.start(batch)
        for run_batch, part, rows in runs:
            if run_batch == number:
                order.add([_run(batch, part, rows)], part)
    return order.close()


def test_a_session_per_flowfile_interleaves_sends_and_drops() -> None:
    """PutFile's SEND and DROP of each FlowFile come together, as two strided runs."""
    batch = _batch(4)
    events, filled = _recorded([batch], [(0, REPORTED, None), (0, DROPPED, None)], 1)
    (group,) = events
    assert isinstance(group, InterleavedRuns)
    assert [p.tolist() for p in group.positions] == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert [kind for kind, _ in _flat(events)] == ["SEND", "DROP"] * 4
    assert filled == 0


def test_run_duration_sessions_take_each_kind_in_turn_per_thousand_flowfiles() -> None:
    """2,500 FlowFiles in sessions of 1,000: ATTRIBUTES_MODIFIED then DROP per session."""
    batch = _batch(2_500)
    runs = [(0, RECORDED, None), (0, DROPPED, None)]
    events, filled = _recorded([batch], runs, 1_000)
    kinds = [kind for kind, _ in _flat(events)]
    expected = []
    for size in (1_000, 1_000, 500):
        expected += ["ATTRIBUTES_MODIFIED"] * size + ["DROP"] * size
    assert kinds == expected
    assert filled == 500


def test_a_batch_whose_events_stay_together_keeps_its_runs() -> None:
    """Within one session each kind's run is whole: the runs go on as they are, in order."""
    batch = _batch(10)
    sends, drops = _run(batch, REPORTED), _run(batch, DROPPED)
    order = SessionOrder(1_000)
    order.start(batch)
    order.add([sends], REPORTED)
    order.add([drops], DROPPED)
    assert order.close() == ([sends, drops], 10)


def test_routes_come_in_input_order_and_their_drops_after() -> None:
    """Every FlowFile's ROUTE in input order, whichever route, then the dropped route's DROPs."""
    batch = _batch(9)
    low = np.array([0, 3, 6])
    unmatched = np.array([1, 2, 4, 5, 7, 8])
    runs = [(0, REPORTED, low), (0, REPORTED, unmatched), (0, DROPPED, unmatched)]
    events, _ = _recorded([batch], runs, 1_000)
    assert _flat(events) == _one_by_one([batch], runs, 1_000)
    routes, drops = events  # the DROPs follow every ROUTE: their run goes on as it is
    assert [p.tolist() for p in routes.positions] == [low.tolist(), unmatched.tolist()]
    assert isinstance(drops, ProvenanceEventRun)
    assert drops.count == 6


def test_a_session_goes_on_across_batches_and_drains() -> None:
    """Batches of 300 and 400 after 900 FlowFiles of an earlier drain: the session open ends
    after the first 100 of them."""
    batches = [_batch(300), _batch(400)]
    runs = [(0, RECORDED, None), (0, DROPPED, None), (1, RECORDED, None), (1, DROPPED, None)]
    events, filled = _recorded(batches, runs, 1_000, filled=900)
    assert _flat(events) == _one_by_one(batches, runs, 1_000, filled=900)
    assert filled == 600


def test_runs_whose_flowfiles_are_not_in_input_order_are_cut_where_they_fall_back() -> None:
    """A run listing FlowFiles out of order is cut into pieces whose events rise."""
    batch = _batch(6)
    rows = np.array([3, 4, 5, 0, 1, 2])
    runs = [(0, REPORTED, rows), (0, DROPPED, None)]
    events, _ = _recorded([batch], runs, 1)
    assert _flat(events) == _one_by_one([batch], runs, 1)
    for item in events:
        for places in item.positions if isinstance(item, InterleavedRuns) else ():
            assert (np.diff(places) > 0).all()


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(1, 40), min_size=1, max_size=3),
    per_session=st.sampled_from([1, 3, 7, 1_000]),
    filled=st.integers(0, 10),
    shuffled=st.booleans(),
    data=st.data(),
)
def test_every_event_lands_where_one_by_one_sessions_record_it(
    counts: list[int], per_session: int, filled: int, shuffled: bool, data: st.DataObject
) -> None:
    """Any batches, runs of any parts over all or any subsets of their FlowFiles, any session
    size: the events in the order of a session model."""
    batches = [_batch(n, shuffled=shuffled) for n in counts]
    runs: list[tuple[int, int, np.ndarray | None]] = []
    for number, batch in enumerate(batches):
        for part in sorted(data.draw(st.lists(st.sampled_from([0, 1, 2]), max_size=4))):
            every = st.just([True] * batch.count)  # a run of every FlowFile: the common case
            rows = data.draw(
                every | st.lists(st.booleans(), min_size=batch.count, max_size=batch.count)
            )
            if any(rows):  # a batch form's runs hold at least one event
                runs.append((number, part, np.flatnonzero(rows)))
    events, left = _recorded(batches, runs, per_session, filled)
    assert _flat(events) == _one_by_one(batches, runs, per_session, filled)
    assert left == (filled % per_session + sum(counts)) % per_session
    for item in events:
        if isinstance(item, InterleavedRuns):
            places = np.sort(np.concatenate(item.positions))
            assert places.tolist() == list(range(item.count))


@pytest.mark.parametrize("per_session", [1, 1_000])
def test_no_run_no_events(per_session: int) -> None:
    """A drain that took no batch whole records nothing and leaves its session as it was."""
    assert SessionOrder(per_session, 3).close() == ([], 3 % per_session)
