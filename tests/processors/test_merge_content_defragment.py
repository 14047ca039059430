"""Tests for MergeContent's Defragment strategy: fragments reassembled in order, bad or
incomplete ones to failure, and SplitText then Defragment giving back the input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.testing import TestRunner
from processors import SplitText
from tests.processors._merge_runner import counts, merged, runner_for


def fragments(
    runner: TestRunner,
    texts: list[str],
    identifier: str = "1",
    count: int | None = None,
    order: list[int] | None = None,
) -> None:
    for index in order or list(range(1, len(texts) + 1)):
        attributes = {"fragment.identifier": identifier, "fragment.index": str(index)}
        if count is not None:
            attributes["fragment.count"] = str(count)
        runner.enqueue(texts[index - 1], attributes)


PALINDROME = ["A Man ", "A Plan ", "A Canal ", "Panama"]


def test_defragment_in_index_order() -> None:
    """Fragments are reassembled by fragment.index whatever their arrival order."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 min")
    fragments(runner, PALINDROME, count=4, order=[1, 3, 4, 2])
    runner.run()
    assert merged(runner) == [b"A Man A Plan A Canal Panama"]
    bundle = runner.flowfiles_for("merged")[0]
    for original in runner.flowfiles_for("original"):
        original.assert_attribute_equals("merge.uuid", bundle.uuid)


@pytest.mark.parametrize("count_on", [4, 2], ids=["last", "middle"])
def test_defragment_count_on_one_fragment(count_on: int) -> None:
    """One fragment carrying fragment.count is enough."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 min")
    for index, text in enumerate(PALINDROME, start=1):
        attributes = {"fragment.identifier": "1", "fragment.index": str(index)}
        if index == count_on:
            attributes["fragment.count"] = "4"
        runner.enqueue(text, attributes)
    runner.run()
    assert merged(runner) == [b"A Man A Plan A Canal Panama"]


def test_defragment_different_counts_fail_the_bin() -> None:
    """Fragments disagreeing on fragment.count all go to failure."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 min")
    runner.enqueue("1", {"fragment.identifier": "f", "fragment.index": "1", "fragment.count": "2"})
    runner.enqueue("2", {"fragment.identifier": "f", "fragment.index": "2", "fragment.count": "3"})
    runner.enqueue("3", {"fragment.identifier": "f", "fragment.index": "3"})
    runner.run()
    assert counts(runner) == (0, 0, 3)


def test_defragment_duplicate_fragment_times_out_to_failure() -> None:
    """A duplicate index starts another bin; it times out incomplete and goes to failure."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 sec")
    fragments(runner, PALINDROME, count=4)
    runner.enqueue(
        "A Plan ", {"fragment.identifier": "1", "fragment.index": "2", "fragment.count": "4"}
    )
    runner.run(1, stop_on_finish=False)
    assert merged(runner) == [b"A Man A Plan A Canal Panama"]
    runner.clear_transfer_state()
    runner.advance_time(1.1)
    runner.run()
    assert counts(runner) == (0, 0, 1)


def test_defragment_ignores_entry_limits_and_too_few_time_out() -> None:
    """Entry limits do not apply when defragmenting; an incomplete bin fails after Max Bin Age."""
    runner = runner_for(merge_strategy="Defragment", maximum_number_of_entries=3)
    fragments(runner, PALINDROME, count=4)
    runner.run()
    assert merged(runner) == [b"A Man A Plan A Canal Panama"]
    runner = runner_for(merge_strategy="Defragment", max_bin_age="2 secs")
    fragments(runner, PALINDROME, count=5)
    runner.run(1, stop_on_finish=False)
    runner.advance_time(3)
    runner.run(1)
    assert counts(runner) == (0, 0, 4)


def test_defragment_mingled_segments_and_multiple_triggers() -> None:
    """Interleaved fragment groups reassemble separately, even across triggers."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 min")
    first = {"fragment.identifier": "1", "fragment.count": "4"}
    second = {"fragment.identifier": "TWO", "fragment.count": "3"}
    for text, base, index in (
        ("A Man ", first, 1),
        ("A Plan ", first, 2),
        ("No x ", second, 1),
        ("in ", second, 2),
        ("Nixon", second, 3),
        ("A Canal ", first, 3),
        ("Panama", first, 4),
    ):
        runner.enqueue(text, {**base, "fragment.index": str(index)})
    runner.run(1)
    assert merged(runner) == [b"A Man A Plan A Canal Panama", b"No x in Nixon"]
    runner = runner_for(merge_strategy="Defragment")
    for index, text in enumerate(PALINDROME, start=1):
        runner.enqueue(
            text, {"fragment.identifier": "1", "fragment.count": "4", "fragment.index": str(index)}
        )
        runner.run()
    assert merged(runner) == [b"A Man A Plan A Canal Panama"]


def test_defragment_names_the_result_and_drops_fragment_attributes() -> None:
    """The bundle takes segment.original.filename as its name and loses the fragment attributes."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 min")
    for index, text in enumerate(["Hello ", "World"], start=1):
        runner.enqueue(
            text,
            {
                "fragment.identifier": "1",
                "fragment.count": "2",
                "fragment.index": str(index),
                "segment.original.filename": "original",
            },
        )
    runner.run()
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_content_equals("Hello World")
    bundle.assert_attribute_equals("filename", "original")
    for key in (
        "fragment.identifier",
        "fragment.index",
        "fragment.count",
        "segment.original.filename",
    ):
        bundle.assert_attribute_not_exists(key)


@pytest.mark.parametrize(
    ("attributes", "why"),
    [
        ({"fragment.identifier": "1", "fragment.index": "x", "fragment.count": "1"}, "index"),
        ({"fragment.identifier": "1", "fragment.index": "1", "fragment.count": "one"}, "count"),
        ({"fragment.identifier": "1", "fragment.index": "1"}, "no count"),
        ({"fragment.identifier": "1", "fragment.count": "1"}, "missing index"),
    ],
)
def test_defragment_bad_attributes_fail(attributes: dict[str, str], why: str) -> None:
    """Malformed or missing fragment attributes send the FlowFile to failure, never lose it."""
    runner = runner_for(merge_strategy="Defragment", max_bin_age="1 sec")
    runner.enqueue(b"data", attributes)
    runner.run(1, stop_on_finish=False)
    runner.advance_time(2)
    runner.run()
    assert counts(runner) == (0, 0, 1), why


@given(
    st.text(alphabet="ab\n\r", max_size=120),
    st.integers(1, 6),
    st.randoms(use_true_random=False),
)
def test_split_then_defragment_gives_back_the_input(text: str, count: int, rng) -> None:  # type: ignore[no-untyped-def]
    """SplitText (no trimming) then MergeContent Defragment returns the exact input bytes."""
    data = text.encode()
    splitter = TestRunner(SplitText(line_split_count=count, remove_trailing_newlines=False))
    splitter.enqueue(data, {"filename": "in.txt"})
    splitter.run()
    pieces = splitter.flowfiles_for("splits")
    if not pieces:
        assert data == b""
        return
    rng.shuffle(pieces)
    merger = runner_for(merge_strategy="Defragment")
    for piece in pieces:
        merger.enqueue(piece.content, dict(piece.attributes))
    merger.run()
    assert merged(merger) == [data]
    merger.flowfiles_for("merged")[0].assert_attribute_equals("filename", "in.txt")
