"""Tests for batches' provenance runs: each event as a session records it for its FlowFile."""

from __future__ import annotations

import numpy as np

from flowcore.flowfile import FlowFile, new_uuids
from flowcore.flowfile_batch.columns import IntColumn
from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._batches import forked_batch
from flowcore.session._runs import auto_terminated_details, run_of
from flowcore.session.host import ComponentInfo
from repositories.memory import MemoryContentRepository

COMPONENT = ComponentInfo("split-1", "SplitText", "split")


def _children() -> tuple:
    content = MemoryContentRepository()
    parent = FlowFile.create(1, 1_000, {"filename": "a.log"}, content=content.write_bytes(b"ab\nc"))
    batch = forked_batch(
        parent,
        np.array([0, 3]),
        np.array([2, 1]),
        {"fragment.count": "2"},
        {"fragment.index": IntColumn(np.array([1, 2]))},
        first_id=10,
        uuids=new_uuids(2),
        now=2_000,
    )
    return parent, batch


def test_a_created_batchs_drops_name_every_attribute_as_updated() -> None:
    """A DROP run of FlowFiles made in the session: no previous attributes or content, every
    attribute updated (its own uuid and column values included), its own content range."""
    _, batch = _children()
    details = auto_terminated_details("splits")
    events = run_of(COMPONENT, ProvenanceEventType.DROP, None, batch, 3_000, details=details)
    events = events.events()
    assert [e.flowfile_uuid for e in events] == [f.uuid for f in batch.flowfiles()]
    assert [dict(e.updated_attributes) for e in events] == [
        dict(f.attributes) for f in batch.flowfiles()
    ]
    assert [(e.file_size, e.content_claim.offset) for e in events] == [(2, 0), (1, 3)]
    assert {(e.details, e.event_time, e.component_name) for e in events} == {
        ("Auto-Terminated by splits Relationship", 3_000, "split")
    }
    assert all(not e.previous_attributes and e.previous_content_claim is None for e in events)


def test_a_taken_batchs_run_names_only_what_changed() -> None:
    """A run of FlowFiles taken as *before*: previous attributes and content are theirs, and
    only the attributes that changed are updated."""
    _, batch = _children()
    changed = batch.with_attributes({"tag": "x"})
    events = run_of(COMPONENT, ProvenanceEventType.ATTRIBUTES_MODIFIED, batch, changed, 3_000)
    events = events.events()
    assert [dict(e.updated_attributes) for e in events] == [{"tag": "x"}, {"tag": "x"}]
    assert [e.previous_attributes["fragment.index"] for e in events] == ["1", "2"]
    assert [e.previous_file_size for e in events] == [2, 1]
