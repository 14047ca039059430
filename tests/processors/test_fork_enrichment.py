"""Tests for ForkEnrichment (NiFi's processor: an 'original' and an 'enrichment' copy)."""

from __future__ import annotations

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import ForkEnrichment


def test_fork_marks_the_flowfile_and_its_clone() -> None:
    """The FlowFile to original, its clone to enrichment, one group id, their roles."""
    runner = TestRunner(ForkEnrichment())
    runner.enqueue(b"hello", {"k": "v"})
    runner.run()
    runner.assert_transfer_count("original", 1)
    runner.assert_transfer_count("enrichment", 1)
    original = runner.flowfiles_for("original")[0]
    enrichment = runner.flowfiles_for("enrichment")[0]
    original.assert_attribute_equals("enrichment.role", "ORIGINAL")
    enrichment.assert_attribute_equals("enrichment.role", "ENRICHMENT")
    group = original.attributes["enrichment.group.id"]
    assert len(group) == 36
    enrichment.assert_attribute_equals("enrichment.group.id", group)
    enrichment.assert_attribute_equals("k", "v")
    enrichment.assert_content_equals("hello")
    assert original.uuid != enrichment.uuid
    assert any(e.event_type is ProvenanceEventType.CLONE for e in runner.provenance_events)


def test_each_flowfile_gets_its_own_group() -> None:
    """Two FlowFiles forked get two group ids."""
    runner = TestRunner(ForkEnrichment())
    runner.enqueue(b"a")
    runner.enqueue(b"b")
    runner.run(2)
    groups = {f.attributes["enrichment.group.id"] for f in runner.flowfiles_for("original")}
    assert len(groups) == 2


def test_nifi_relationships() -> None:
    """NiFi's relationships, no properties."""
    assert ForkEnrichment().relationship_names() == ("original", "enrichment")
    assert ForkEnrichment.property_descriptors == ()
