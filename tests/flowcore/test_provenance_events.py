"""Tests for the provenance event model."""

from __future__ import annotations

import pickle

import numpy as np

from flowcore.provenance_events import (
    InterleavedRuns,
    ProvenanceEvent,
    ProvenanceEventRun,
    ProvenanceEventType,
)


def test_event_types_are_nifis() -> None:
    """Every NiFi event type exists, in nifi-api order."""
    assert [t.value for t in ProvenanceEventType] == [
        "CREATE",
        "RECEIVE",
        "FETCH",
        "SEND",
        "UPLOAD",
        "REMOTE_INVOCATION",
        "DOWNLOAD",
        "DROP",
        "EXPIRE",
        "FORK",
        "JOIN",
        "CLONE",
        "CONTENT_MODIFIED",
        "ATTRIBUTES_MODIFIED",
        "ROUTE",
        "ADDINFO",
        "REPLAY",
        "UNKNOWN",
    ]


def test_attributes_overlay_updated_on_previous() -> None:
    """An event's attributes are the previous ones overlaid with the updated ones."""
    event = ProvenanceEvent(
        ProvenanceEventType.ATTRIBUTES_MODIFIED,
        "u",
        "c",
        "UpdateAttribute",
        0,
        previous_attributes={"filename": "a", "k": "1"},
        updated_attributes={"k": "2"},
    )
    assert event.attributes == {"filename": "a", "k": "2"}
    assert event.filename == "a"
    assert pickle.loads(pickle.dumps(event)) == event
    assert str(event) == "ATTRIBUTES_MODIFIED u by UpdateAttribute[c]"


def test_interleaved_runs_give_their_events_in_the_groups_order() -> None:
    """A SEND run and a DROP run of three FlowFiles, interleaved: SEND, DROP per FlowFile."""
    uuid = "0123abcd-0000-4000-8000-000000000000"
    runs = tuple(
        ProvenanceEventRun(ProvenanceEvent(kind, uuid, "put-1", "PutFile", 5), np.arange(3))
        for kind in (ProvenanceEventType.SEND, ProvenanceEventType.DROP)
    )
    group = InterleavedRuns(runs, (np.array([0, 2, 4]), np.array([1, 3, 5])))
    assert group.count == 6
    assert [(e.event_type.value, e.flowfile_uuid[-1]) for e in group.events()] == [
        ("SEND", "0"),
        ("DROP", "0"),
        ("SEND", "1"),
        ("DROP", "1"),
        ("SEND", "2"),
        ("DROP", "2"),
    ]
