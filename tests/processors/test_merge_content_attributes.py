"""Tests for what a MergeContent bundle carries: attributes by Attribute Strategy, mime.type,
and the JOIN naming its originals."""

from __future__ import annotations

from flowcore import ProvenanceEventType
from tests.processors._merge_runner import hello_world, runner_for


def test_conflicting_mime_types_give_octet_stream() -> None:
    """Binary concatenation keeps mime.type only when every FlowFile shares it."""
    runner = runner_for()
    hello_world(runner)
    runner.enqueue(b"", {"mime.type": "application/zip"})
    runner.run(2)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_content_equals("Hello, World!")
    bundle.assert_attribute_equals("mime.type", "application/octet-stream")


def test_attribute_strategies() -> None:
    """Common keeps equal shared attributes; Unique keeps all but conflicting ones; uuid is new."""
    first = {"abc": "xyz", "xyz": "123", "hello": "good-bye"}
    second = {"abc": "xyz", "xyz": "321", "world": "aaa"}
    for strategy, present, absent in (
        ("Keep Only Common Attributes", {"abc": "xyz"}, ["hello", "world", "xyz"]),
        (
            "Keep All Unique Attributes",
            {"abc": "xyz", "hello": "good-bye", "world": "aaa"},
            ["xyz"],
        ),
    ):
        runner = runner_for(
            attribute_strategy=strategy, maximum_group_size="2 B", minimum_group_size="2 B"
        )
        runner.enqueue(b"a", first)
        runner.enqueue(b"b", second)
        runner.run()
        bundle = runner.flowfiles_for("merged")[0]
        for key, value in present.items():
            bundle.assert_attribute_equals(key, value)
        for key in absent:
            bundle.assert_attribute_not_exists(key)
        uuids = {f.uuid for f in runner.flowfiles_for("original")} | {bundle.uuid}
        assert len(uuids) == 3


def test_join_event_per_bundle() -> None:
    """Each bundle records one JOIN naming every original as a parent."""
    runner = runner_for()
    hello_world(runner)
    runner.run(2)
    joins = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.JOIN]
    assert len(joins) == 1
    assert set(joins[0].parent_uuids) == {f.uuid for f in runner.flowfiles_for("original")}
