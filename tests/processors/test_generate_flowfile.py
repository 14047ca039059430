"""Tests for GenerateFlowFile."""

from __future__ import annotations

from flowcore import ProvenanceEventType
from flowcore.processor.kinds import WorkItem
from flowcore.testing import TestRunner
from processors import GenerateFlowFile


def test_batches_of_random_data() -> None:
    """Batch Size FlowFiles of File Size bytes; shared content unless unique; CREATE events."""
    runner = TestRunner(GenerateFlowFile(file_size="16 B", batch_size=3))
    runner.run()
    contents = [f.content for f in runner.flowfiles_for("success")]
    assert len(contents) == 3
    assert all(len(c) == 16 for c in contents)
    assert len(set(contents)) == 1
    assert {e.event_type for e in runner.provenance_events} == {ProvenanceEventType.CREATE}
    unique = TestRunner(
        GenerateFlowFile(
            file_size="16 B", batch_size=3, unique_flowfiles=True, data_format="Binary"
        )
    )
    unique.run()
    assert len({f.content for f in unique.flowfiles_for("success")}) == 3


def test_custom_text_charset_attributes_and_mime_type() -> None:
    """Custom Text (with EL) in the Character Set; dynamic properties become attributes."""
    runner = TestRunner(
        GenerateFlowFile(
            custom_text="héllo ${literal('x'):toUpper()}",
            character_set="ISO-8859-1",
            mime_type="text/plain",
            **{"source": "${literal('gen')}"},
        )
    )
    runner.run(2)
    outs = runner.flowfiles_for("success")
    assert [o.content for o in outs] == ["héllo X".encode("latin-1")] * 2
    outs[0].assert_attribute_equals("source", "gen")
    outs[0].assert_attribute_equals("mime.type", "text/plain")


def test_empty_by_default_and_invalid_values() -> None:
    """The default File Size 0B gives empty FlowFiles; bad sizes and charsets are invalid."""
    runner = TestRunner(GenerateFlowFile)
    runner.run()
    assert runner.flowfiles_for("success")[0].content == b""
    assert not GenerateFlowFile(file_size="ten").is_valid()
    assert not GenerateFlowFile(character_set="nope").is_valid()


def test_a_trigger_is_made_as_one_batch_shared_or_unique() -> None:
    """Same content and plain attributes: one range repeated; unique contents: all written at
    once, each FlowFile its own bytes; nextInt() in several expressions, or several triggers
    offered at once: declined (one by one, or one trigger at a time)."""

    class Maker:
        def create(self, count, attributes, content):  # type: ignore[no-untyped-def]
            return (count, dict(attributes), content)

        def create_each(self, count, attributes, size, contents):  # type: ignore[no-untyped-def]
            return [(count, dict(attributes), size, b"".join(contents))]

    item = WorkItem("batch", {"count": 4})
    plain = GenerateFlowFile(custom_text="hi", mime_type="text/plain", kind="x")
    made = plain.read_work_batches(TestRunner(plain).context, [item], Maker())  # type: ignore[arg-type]
    assert made == [("success", (4, {"kind": "x", "mime.type": "text/plain"}, b"hi"))]
    assert plain.read_work_batches(TestRunner(plain).context, [item, item], Maker()) is None  # type: ignore[arg-type]
    unique = GenerateFlowFile(unique_flowfiles=True, file_size="8 B", data_format="Binary")
    [(_, (count, _, size, data))] = unique.read_work_batches(  # type: ignore[misc]
        TestRunner(unique).context,
        [item],
        Maker(),  # type: ignore[arg-type]
    )
    assert (count, size, len(data)) == (4, 8, 32)
    assert len({data[i : i + 8] for i in range(0, 32, 8)}) == 4
    counting = GenerateFlowFile(a="${nextInt()}", b="${nextInt()}")
    assert counting.read_work_batches(TestRunner(counting).context, [item], Maker()) is None  # type: ignore[arg-type]
