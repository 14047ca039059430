"""Tests for the provenance event model."""

from __future__ import annotations

import pickle

from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType


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
