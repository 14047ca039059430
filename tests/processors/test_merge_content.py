"""Tests for MergeContent: NiFi's scenarios, the binning rules, formats, failures, properties."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
from pathlib import Path

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import MergeContent, SplitText
from processors._merge_formats import flowfile_stream_header

TEXT = {"mime.type": "application/plain-text", "fragment.index": "1"}


def runner_for(**properties: object) -> TestRunner:
    return TestRunner(MergeContent(**properties))


def hello_world(runner: TestRunner) -> None:
    for text in ("Hello", ", ", "World!"):
        runner.enqueue(text, TEXT)


def merged(runner: TestRunner) -> list[bytes]:
    return [f.content for f in runner.flowfiles_for("merged")]


def counts(runner: TestRunner) -> tuple[int, int, int]:
    return tuple(len(runner.flowfiles_for(r)) for r in ("merged", "original", "failure"))  # type: ignore[return-value]


# --- bin packing ---------------------------------------------------------------------------


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


def test_text_delimiters() -> None:
    """Header, demarcator and footer as text wrap and separate the contents."""
    runner = runner_for(delimiter_strategy="Text", header="@", demarcator="#", footer="$")
    hello_world(runner)
    runner.run(2)
    assert merged(runner) == [b"@Hello#, #World!$"]
    runner = runner_for(delimiter_strategy="Text", header="@")
    hello_world(runner)
    runner.run(2)
    assert merged(runner) == [b"@Hello, World!"]


def test_file_delimiters_evaluated_against_the_first_flowfile(tmp_path: Path) -> None:
    """With the Filename strategy, EL picks files whose bytes become the delimiters."""
    for name, body in (("head", "(|)"), ("demarcate", "***"), ("foot", "___")):
        (tmp_path / name).write_text(body)
    runner = runner_for(
        delimiter_strategy="Filename",
        header="${header}",
        demarcator="${demarcator}",
        footer="${footer}",
    )
    attributes = {
        "header": str(tmp_path / "head"),
        "demarcator": str(tmp_path / "demarcate"),
        "footer": str(tmp_path / "foot"),
    }
    for text in ("Hello", ", ", "World!"):
        runner.enqueue(text, attributes)
    runner.run(2)
    assert merged(runner) == [b"(|)Hello***, ***World!___"]


def test_no_delimiters_ignores_delimiter_properties() -> None:
    """'Do Not Use Delimiters' ignores Header, Demarcator and Footer even when set."""
    runner = runner_for(
        delimiter_strategy="Do Not Use Delimiters", header="aHeader", demarcator="; ", footer="x"
    )
    for text in ("First", "Second", "Third"):
        runner.enqueue(text)
    runner.run(2)
    assert merged(runner) == [b"FirstSecondThird"]


def test_delimiter_validation() -> None:
    """Empty text delimiters and missing delimiter files are invalid, each named."""
    empty = MergeContent(delimiter_strategy="Text", header="", demarcator="", footer="").validate()
    assert len(empty) == 3
    assert all("cannot be empty" in str(p) for p in empty)
    missing = "does/not/exist"
    files = MergeContent(
        delimiter_strategy="Filename", header=missing, demarcator=missing, footer=missing
    )
    problems = files.validate()
    assert len(problems) == 3
    assert all(f"is invalid because File {missing} does not exist" in str(p) for p in problems)
    # Delimiters of another format are ignored entirely.
    assert MergeContent(merge_format="TAR", delimiter_strategy="Text", header="").is_valid()


def test_min_max_validation() -> None:
    """Minimums above maximums are invalid with NiFi's messages."""
    problems = [
        str(p)
        for p in MergeContent(minimum_group_size="2 KB", maximum_group_size="1 KB").validate()
    ]
    assert any("Min Size must be less than or equal to Max Size" in p for p in problems)
    problems = [
        str(p)
        for p in MergeContent(minimum_number_of_entries=5, maximum_number_of_entries=2).validate()
    ]
    assert any("Min Entries must be less than or equal to Max Entries" in p for p in problems)
    assert not MergeContent(max_bin_age="500 millis").is_valid()


def test_conflicting_mime_types_give_octet_stream() -> None:
    """Binary concatenation keeps mime.type only when every FlowFile shares it."""
    runner = runner_for()
    hello_world(runner)
    runner.enqueue(b"", {"mime.type": "application/zip"})
    runner.run(2)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_content_equals("Hello, World!")
    bundle.assert_attribute_equals("mime.type", "application/octet-stream")


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


def test_group_id_that_cannot_be_evaluated_goes_to_failure() -> None:
    """A Correlation Attribute Name whose EL fails at run time routes that FlowFile to failure."""
    runner = runner_for(correlation_attribute_name="${bad:matches('(')}")
    runner.enqueue(b"x", {"bad": "v"})
    runner.run(2)
    assert counts(runner) == (0, 0, 1)


# --- defragment ---------------------------------------------------------------------------


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


@given(
    st.lists(st.binary(max_size=30), min_size=1, max_size=12),
    st.binary(max_size=4),
    st.binary(max_size=4),
    st.binary(max_size=4),
)
def test_concatenation_length_is_inputs_plus_delimiters(
    parts: list[bytes], header: bytes, demarcator: bytes, footer: bytes
) -> None:
    """Binary concatenation output length = sum of inputs + header + footer + (n-1) demarcators."""
    texts = {}
    for name, value in (("header", header), ("demarcator", demarcator), ("footer", footer)):
        if value:
            texts[name] = value.decode("latin-1")
    runner = runner_for(
        delimiter_strategy="Text",
        maximum_number_of_entries=len(parts),
        minimum_number_of_entries=len(parts),
        **texts,
    )
    for part in parts:
        runner.enqueue(part)
    runner.run()
    (bundle,) = merged(runner)
    expected = sum(len(p) for p in parts) + sum(
        len(t.encode()) for k, t in texts.items() if k != "demarcator"
    )
    expected += (len(parts) - 1) * len(texts.get("demarcator", "").encode())
    assert len(bundle) == expected


# --- formats -------------------------------------------------------------------------------


def test_zip_entries_and_duplicate_names() -> None:
    """ZIP holds one entry per FlowFile; a duplicate name sends a clone to failure."""
    runner = runner_for(merge_format="ZIP")
    for name, text in (("a.txt", "Hello"), ("b.txt", ", "), ("c.txt", "World!")):
        runner.enqueue(text, {"filename": name})
    runner.run(2)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_attribute_equals("mime.type", "application/zip")
    assert bundle.attributes["filename"].endswith(".zip")
    archive = zipfile.ZipFile(io.BytesIO(bundle.content))
    assert [(n, archive.read(n)) for n in archive.namelist()] == [
        ("a.txt", b"Hello"),
        ("b.txt", b", "),
        ("c.txt", b"World!"),
    ]
    duplicates = runner_for(merge_format="ZIP")
    for text in ("Hello", ", ", "World!"):
        duplicates.enqueue(text, {"filename": "duplicate-filename.txt"})
    duplicates.run(2)
    assert counts(duplicates) == (1, 3, 2)


def test_zip_keep_path_and_compression_levels() -> None:
    """Keep Path prefixes entry names; every compression level produces a readable archive."""
    for level in ("0", "9"):
        runner = runner_for(merge_format="ZIP", keep_path=True, compression_level=level)
        runner.enqueue("x" * 1000, {"filename": "f.txt", "path": "./dir"})
        runner.run(2)
        archive = zipfile.ZipFile(io.BytesIO(merged(runner)[0]))
        assert archive.namelist() == ["dir/f.txt"]
        assert archive.read("dir/f.txt") == b"x" * 1000


def test_tar_long_names_permissions_and_mtime() -> None:
    """TAR keeps names over 100 characters, applies tar.permissions (decimal) and mtime."""
    long_name = "AReallyLong" + "g" * 100 + "FileName"
    runner = runner_for(merge_format="TAR", tar_modified_time="${when}")
    runner.enqueue(
        "Hello",
        {"filename": "AShortFileName", "tar.permissions": "493", "when": "2024-01-01T00:00:00Z"},
    )
    runner.enqueue(", ", {"filename": long_name, "tar.permissions": "bogus"})
    runner.run(2)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_attribute_equals("mime.type", "application/tar")
    with tarfile.open(fileobj=io.BytesIO(bundle.content)) as archive:
        members = archive.getmembers()
        assert [m.name for m in members] == ["AShortFileName", long_name]
        assert members[0].mode == 493
        assert members[0].mtime == 1704067200
        assert members[1].mode == 0o644
        assert archive.extractfile(members[0]).read() == b"Hello"


def test_flowfile_stream_v3_and_v2_bytes() -> None:
    """Stream v3 is NiFiFF3 + attributes + length + content per FlowFile; v2 lacks the magic."""
    for fmt, magic, mime in (
        ("FlowFile Stream, v3", True, "application/flowfile-v3"),
        ("FlowFile Stream, v2", False, "application/flowfile-v2"),
    ):
        runner = runner_for(
            merge_format=fmt, minimum_number_of_entries=2, maximum_number_of_entries=2
        )
        first = runner.enqueue("abc", {"path": "folder"})
        second = runner.enqueue("de", {"path": "folder"})
        runner.run()
        bundle = runner.flowfiles_for("merged")[0]
        bundle.assert_attribute_equals("mime.type", mime)
        assert bundle.attributes["filename"].endswith(".pkg")
        expected = (
            flowfile_stream_header(first.attributes, 3, magic=magic)
            + b"abc"
            + flowfile_stream_header(second.attributes, 2, magic=magic)
            + b"de"
        )
        assert bundle.content == expected


def test_flowfile_stream_header_layout() -> None:
    """Field lengths are 2-byte big-endian, or FF FF plus 4 bytes from 65535 up."""
    header = flowfile_stream_header({"k": "v"}, 5, magic=True)
    assert header == b"NiFiFF3" + b"\x00\x01" + b"\x00\x01k" + b"\x00\x01v" + struct.pack(">q", 5)
    big = flowfile_stream_header({"k": "x" * 70000}, 0, magic=False)
    assert big[2:7] == b"\x00\x01k\xff\xff"
    assert big[7:11] == struct.pack(">I", 70000)


def test_flowfile_tar_v1() -> None:
    """FlowFile Tar v1 writes a tar of attributes and content per FlowFile."""
    runner = runner_for(
        merge_format="FlowFile Tar, v1", minimum_number_of_entries=1, maximum_number_of_entries=1
    )
    runner.enqueue("body", {"k": "v & w"})
    runner.run()
    with tarfile.open(fileobj=io.BytesIO(merged(runner)[0])) as archive:
        assert archive.getnames() == ["flowfile.attributes", "flowfile.content"]
        xml = archive.extractfile("flowfile.attributes").read()
        assert b'<entry key="k">v &amp; w</entry>' in xml
        assert archive.extractfile("flowfile.content").read() == b"body"


SCHEMA = {
    "type": "record",
    "name": "User",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "favorite_number", "type": ["int", "null"]},
    ],
}
PLACE = {"type": "record", "name": "Place", "fields": [{"name": "name", "type": "string"}]}


def avro(
    records: list[dict], schema: dict = SCHEMA, metadata: dict[str, str] | None = None
) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, metadata=metadata or {})
    return out.getvalue()


def avro_names(data: bytes) -> list[str]:
    return [r["name"] for r in fastavro.reader(io.BytesIO(data))]


def test_avro_concatenation() -> None:
    """Avro files with one schema merge record by record."""
    runner = runner_for(
        merge_format="Avro", minimum_number_of_entries=3, maximum_number_of_entries=3
    )
    for name in ("Alyssa", "Ben", "John"):
        runner.enqueue(avro([{"name": name, "favorite_number": 1}]))
    runner.run()
    runner.assert_queue_empty()
    assert counts(runner) == (1, 3, 0)
    bundle = runner.flowfiles_for("merged")[0]
    bundle.assert_attribute_equals("mime.type", "application/avro-binary")
    assert avro_names(bundle.content) == ["Alyssa", "Ben", "John"]


def test_avro_different_schema_is_not_merged() -> None:
    """A file with another schema goes to failure (as a clone) and still to original."""
    runner = runner_for(
        merge_format="Avro", minimum_number_of_entries=3, maximum_number_of_entries=3
    )
    runner.enqueue(avro([{"name": "Alyssa", "favorite_number": 256}]))
    runner.enqueue(avro([{"name": "Some Place"}], PLACE))
    runner.enqueue(avro([{"name": "John", "favorite_number": 5}]))
    runner.run()
    assert counts(runner) == (1, 3, 1)
    assert avro_names(merged(runner)[0]) == ["Alyssa", "John"]
    assert avro_names(runner.flowfiles_for("failure")[0].content) == ["Some Place"]


@pytest.mark.parametrize(
    ("strategy", "merged_names", "failures"),
    [
        ("Do Not Merge Uncommon Metadata", ["Alyssa"], 2),
        ("Ignore Metadata", ["Alyssa", "Ben", "John"], 0),
        ("Use First Metadata", ["Alyssa", "Ben", "John"], 0),
        ("Keep Only Common Metadata", ["Alyssa", "John"], 1),
    ],
)
def test_avro_metadata_strategies(strategy: str, merged_names: list[str], failures: int) -> None:
    """Each Metadata Strategy compares metadata as NiFi documents."""
    runner = runner_for(
        merge_format="Avro",
        minimum_number_of_entries=3,
        maximum_number_of_entries=3,
        metadata_strategy=strategy,
    )
    runner.enqueue(
        avro([{"name": "Alyssa", "favorite_number": 256}], metadata={"test_metadata1": "Test 1"})
    )
    runner.enqueue(
        avro([{"name": "Ben", "favorite_number": 7}], metadata={"test_metadata1": "Test 2"})
    )
    runner.enqueue(
        avro(
            [{"name": "John", "favorite_number": 5}],
            metadata={"test_metadata1": "Test 1", "test_metadata2": "Test"},
        )
    )
    runner.run()
    assert avro_names(merged(runner)[0]) == merged_names
    runner.assert_transfer_count("failure", failures)
    runner.assert_transfer_count("original", 3)


def test_avro_garbage_fails_the_bin() -> None:
    """Content that is not Avro sends the whole bin to failure."""
    runner = runner_for(
        merge_format="Avro", minimum_number_of_entries=2, maximum_number_of_entries=2
    )
    runner.enqueue(avro([{"name": "ok", "favorite_number": 1}]))
    runner.enqueue(b"not avro at all")
    runner.run()
    assert counts(runner) == (0, 0, 2)


def test_legacy_property_names_are_accepted() -> None:
    """NiFi 1.x internal names still configure the renamed properties."""
    processor = MergeContent(
        **{"Maximum number of Bins": "7", "mergecontent-metadata-strategy": "Ignore Metadata"}
    )
    assert processor.configured == {
        "Maximum Number of Bins": "7",
        "Metadata Strategy": "Ignore Metadata",
    }


@pytest.mark.parametrize(("fmt", "command"), [("TAR", ["tar", "-xOf"]), ("ZIP", ["unzip", "-p"])])
def test_archives_are_readable_by_gnu_tools(fmt: str, command: list[str], tmp_path: Path) -> None:
    """GNU tar and unzip read the archives, long names included."""
    import shutil
    import subprocess

    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    runner = runner_for(merge_format=fmt, keep_path=True)
    runner.enqueue("hello ", {"filename": "x" * 130, "path": "a/b"})
    runner.enqueue("world", {"filename": "y.txt"})
    runner.run(2)
    archive = tmp_path / "bundle"
    archive.write_bytes(merged(runner)[0])
    result = subprocess.run([*command, str(archive)], capture_output=True, check=True)
    assert result.stdout == b"hello world"


# --- zero copy ------------------------------------------------------------------------------


@given(
    contents=st.lists(st.binary(max_size=20), min_size=1, max_size=6),
    delimiters=st.fixed_dictionaries(
        {},
        optional={
            "header": st.text("ab", min_size=1),
            "footer": st.text("c", min_size=1),
            "demarcator": st.text("|\n", min_size=1),
        },
    ),
)
def test_zero_copy_reads_exactly_like_a_copy(contents: list[bytes], delimiters: dict) -> None:
    """With Zero Copy the merged FlowFile is a rope of the inputs and reads byte for byte as
    the copying merge does, delimiters included."""
    results = []
    for zero_copy in (False, True):
        runner = runner_for(
            zero_copy=zero_copy,
            delimiter_strategy="Text",
            minimum_number_of_entries=len(contents),
            maximum_number_of_entries=len(contents),
            **delimiters,
        )
        for data in contents:
            runner.enqueue(data)
        runner.run()
        (bundle,) = runner.flowfiles_for("merged")
        results.append(bundle.content)
    assert results[0] == results[1]


def test_zero_copy_through_a_flow_writes_no_content(tmp_path: Path) -> None:
    """FileSplitter blocks -> MergeContent (Zero Copy) -> SplitText -> PutFile on the engine:
    the merge is a rope over the input files, the splits are slices of it, and the content
    repository stays empty while the output lines are all there."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from processors import FileSplitter, PutFile, UpdateAttribute

    (tmp_path / "in").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "in" / f"{name}.txt").write_text("".join(f"{name}{i}\n" for i in range(30)))
    flow = Flow("zero-copy")
    split_files = flow.add(
        FileSplitter(input_directory=str(tmp_path / "in"), block_size="40 B"), name="blocks"
    )
    merge = flow.add(MergeContent(zero_copy=True, minimum_number_of_entries=1_000), name="m")
    lines = flow.add(SplitText(line_split_count=7, remove_trailing_newlines=False), name="lines")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(split_files, merge, "blocks")
    flow.connect(merge, lines, "merged")
    name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
    flow.connect(lines, name, "splits")
    flow.connect(name, put)
    flow.auto_terminate(split_files, ["files", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(lines, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo")
    assert result.count("lines", "splits") > 10
    written = [p for p in (tmp_path / "repo" / "content").rglob("*") if p.is_file()]
    assert written == []
    out = b"".join(p.read_bytes() for p in (tmp_path / "out").iterdir())
    expected = b"".join(p.read_bytes() for p in (tmp_path / "in").iterdir())
    assert sorted(out.splitlines()) == sorted(expected.splitlines())


def test_one_group_only_when_binning_without_a_correlation_attribute() -> None:
    """Bin packing without Correlation Attribute Name is one group; a name or Defragment is not."""
    alone = runner_for()
    assert alone.processor.single_group(alone.context)
    keyed = runner_for(correlation_attribute_name="customer")
    assert not keyed.processor.single_group(keyed.context)
    pieces = runner_for(merge_strategy="Defragment")
    assert not pieces.processor.single_group(pieces.context)
