"""Tests for MergeContent's bin packing: NiFi's scenarios, thresholds and their merge.reason,
Max Bin Age, eviction, correlation, bin termination, and FlowFiles binning cannot place."""

from __future__ import annotations

from flowcore.testing import TestRunner
from tests.processors._merge_runner import counts, hello_world, merged, runner_for


def test_simple_concatenation_after_two_triggers() -> None:
    """Queued FlowFiles are binned on the first trigger and merged on the second."""
    runner = runner_for(max_bin_age="1 sec")
    hello_world(runner)
    runner.run(2)
    runner.assert_queue_empty()
    assert counts(runner) == (1, 3, 0)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_content_equals("Hello, World!")
    bundle.assert_attribute_equals("mime.type", "application/plain-text")
    bundle.assert_attribute_equals("merge.count", "3")
    bundle.assert_attribute_equals("merge.reason", "MIN_THRESHOLDS_REACHED")
    bundle.assert_attribute_exists("merge.bin.age")
    for original in runner.flowfiles_for("original"):
        original.assert_attribute_equals("merge.uuid", bundle.uuid)


def test_one_trigger_is_not_enough_with_default_entries() -> None:
    """With the defaults, one trigger bins but does not merge; stopping returns the FlowFiles."""
    runner = runner_for()
    hello_world(runner)
    runner.run()
    assert counts(runner) == (0, 0, 0)
    assert runner.queue_size() == 3


def test_flowfile_larger_than_the_bin_is_merged_alone() -> None:
    """A FlowFile over Maximum Group Size becomes its own bundle with reason UNSET."""
    runner = runner_for(
        minimum_number_of_entries=2,
        maximum_number_of_entries=2,
        minimum_group_size="1 KB",
        maximum_group_size="5 KB",
    )
    runner.enqueue(bytes(1026))
    runner.enqueue(bytes(6 * 1024))
    runner.run(2)
    assert counts(runner) == (1, 1, 0)
    bundle = runner.flowfiles_for("merged")[0]
    assert bundle.size == 6 * 1024
    bundle.assert_attribute_equals("merge.reason", "UNSET")
    assert runner.flowfiles_for("original")[0].attributes["merge.uuid"] == bundle.uuid
    runner.assert_queue_not_empty()


def test_waits_for_minimum_size() -> None:
    """Below Minimum Group Size nothing is merged."""
    runner = runner_for(minimum_group_size="20 KB")
    hello_world(runner)
    runner.run()
    assert counts(runner) == (0, 0, 0)


def test_max_entries_merges_in_one_trigger() -> None:
    """A bin that reaches Maximum Number of Entries is full at once."""
    runner = runner_for(minimum_number_of_entries=3, maximum_number_of_entries=3)
    hello_world(runner)
    runner.run()
    assert counts(runner) == (1, 3, 0)
    runner.flowfiles_for("merged")[0].assert_attribute_equals(
        "merge.reason", "MAX_ENTRIES_THRESHOLD_REACHED"
    )


def test_max_size_reason() -> None:
    """A bin that reaches Maximum Group Size is merged with MAX_BYTES_THRESHOLD_REACHED."""
    runner = runner_for(minimum_group_size="2 B", maximum_group_size="2 B")
    runner.enqueue(b"a")
    runner.enqueue(b"b")
    runner.run()
    runner.flowfiles_for("merged")[0].assert_attribute_equals(
        "merge.reason", "MAX_BYTES_THRESHOLD_REACHED"
    )


def test_correlation_attribute_separates_bins() -> None:
    """FlowFiles share a bin only with the same correlation value."""
    runner = runner_for(
        correlation_attribute_name="attr", maximum_number_of_entries=3, max_bin_age="1 min"
    )
    for text, value in (("A Man ", "b"), ("A Plan ", "b"), ("A Canal ", "c"), ("Panama", "b")):
        runner.enqueue(text, {"attr": value})
    runner.run(2)
    by_value = {f.attributes["attr"]: f.content for f in runner.flowfiles_for("merged")}
    assert by_value == {"b": b"A Man A Plan Panama", "c": b"A Canal "}


def test_max_bin_age_on_the_harness_clock() -> None:
    """A bin older than Max Bin Age is merged with reason TIMEOUT; the clock is the harness's."""
    runner = runner_for(
        max_bin_age="2 sec", minimum_number_of_entries=500, maximum_number_of_entries=500
    )
    for _ in range(50):
        runner.enqueue(b"x")
    runner.run(5, stop_on_finish=False)
    assert counts(runner) == (0, 0, 0)
    runner.advance_time(3)
    runner.run()
    assert counts(runner) == (1, 50, 0)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_attribute_equals("merge.reason", "TIMEOUT")
    assert int(bundle.attributes["merge.bin.age"]) >= 3000


def test_oldest_bin_is_evicted_when_the_manager_is_full() -> None:
    """Creating one bin more than Maximum Number of Bins evicts the oldest (BIN_MANAGER_FULL)."""
    runner = runner_for(
        max_bin_age="1 day",
        maximum_number_of_bins=50,
        minimum_number_of_entries=10,
        maximum_number_of_entries=10,
        correlation_attribute_name="correlationId",
    )
    for i in range(49):
        for _ in range(5):
            runner.enqueue(b"", {"correlationId": str(i)})
    runner.run()
    runner.assert_queue_not_empty()
    assert counts(runner) == (0, 0, 0)
    runner.run(1, stop_on_finish=False)
    runner.enqueue(b"")
    runner.enqueue(b"", {"correlationId": "abc"})
    runner.run()
    assert counts(runner) == (1, 5, 0)
    runner.flowfiles_for("merged")[0].assert_attribute_equals("merge.reason", "BIN_MANAGER_FULL")


def test_leaves_a_small_bin_unmerged() -> None:
    """Full bins merge; the partial one returns to the queue on stop."""
    runner = runner_for(
        minimum_number_of_entries=5, maximum_number_of_entries=5, maximum_number_of_bins=3
    )
    for i in range(17):
        runner.enqueue(f"{i}\n")
    runner.run(5)
    assert counts(runner) == (3, 15, 0)
    assert runner.queue_size() == 2


TERMINATION = {"termination": "true"}


def termination_runner(strategy: str) -> TestRunner:
    runner = runner_for(
        minimum_number_of_entries=10,
        maximum_number_of_entries=25,
        maximum_number_of_bins=3,
        bin_termination_check="${termination:equals('true')}",
        flowfile_insertion_strategy=strategy,
    )
    index = 0
    for _ in range(3):
        for i in range(6):
            runner.enqueue(f"{index}\n", TERMINATION if i == 5 else {})
            index += 1
    return runner


def lines(*numbers: int) -> bytes:
    return "".join(f"{n}\n" for n in numbers).encode()


def test_termination_first_in_new_bin() -> None:
    """'First in New Bin' closes the open bin and starts a new one with the terminating FlowFile."""
    runner = termination_runner("First in New Bin")
    runner.run(2)
    assert merged(runner) == [
        lines(0, 1, 2, 3, 4),
        lines(5, 6, 7, 8, 9, 10),
        lines(11, 12, 13, 14, 15, 16),
    ]
    runner.assert_transfer_count("original", 17)
    assert {f.attributes["merge.reason"] for f in runner.flowfiles_for("merged")} == {
        "BIN_TERMINATION_SIGNAL"
    }


def test_termination_last_in_bin() -> None:
    """'Last in Bin' adds the terminating FlowFile and closes its bin."""
    runner = termination_runner("Last in Bin")
    runner.run(2)
    assert merged(runner) == [
        lines(0, 1, 2, 3, 4, 5),
        lines(6, 7, 8, 9, 10, 11),
        lines(12, 13, 14, 15, 16, 17),
    ]
    runner.assert_transfer_count("original", 18)


def test_termination_isolated() -> None:
    """'Isolated' closes the open bin and merges the terminating FlowFile alone."""
    runner = termination_runner("Isolated")
    runner.run(2)
    assert merged(runner) == [
        lines(0, 1, 2, 3, 4),
        lines(5),
        lines(6, 7, 8, 9, 10),
        lines(11),
        lines(12, 13, 14, 15, 16),
        lines(17),
    ]


def test_termination_with_correlation() -> None:
    """Termination acts within the FlowFile's correlation group."""
    runner = runner_for(
        minimum_number_of_entries=10,
        maximum_number_of_entries=25,
        maximum_number_of_bins=3,
        bin_termination_check="${termination:equals('true')}",
        flowfile_insertion_strategy="First in New Bin",
        correlation_attribute_name="correlation",
    )
    one, two = {"correlation": "1"}, {"correlation": "2"}
    stop = {"termination": "true", "correlation": "1"}
    for text, attributes in (
        ("0\n", one),
        ("1\n", one),
        ("2\n", two),
        ("3\n", stop),
        ("4\n", stop),
    ):
        runner.enqueue(text, attributes)
    for i in range(10):
        runner.enqueue(f"{i}\n", two)
    runner.run(2)
    assert merged(runner) == [b"0\n1\n", b"3\n", b"2\n" + lines(*range(10))]
    runner.assert_transfer_count("original", 14)


def test_group_id_that_cannot_be_evaluated_goes_to_failure() -> None:
    """A Correlation Attribute Name whose EL fails at run time routes that FlowFile to failure."""
    runner = runner_for(correlation_attribute_name="${bad:matches('(')}")
    runner.enqueue(b"x", {"bad": "v"})
    runner.run(2)
    assert counts(runner) == (0, 0, 1)


def test_one_group_only_when_binning_without_a_correlation_attribute() -> None:
    """Bin packing without Correlation Attribute Name is one group; a name or Defragment is not."""
    alone = runner_for()
    assert alone.processor.single_group(alone.context)
    keyed = runner_for(correlation_attribute_name="customer")
    assert not keyed.processor.single_group(keyed.context)
    pieces = runner_for(merge_strategy="Defragment")
    assert not pieces.processor.single_group(pieces.context)
