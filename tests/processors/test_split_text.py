"""Tests for SplitText: NiFi's test cases, the reference's quirks, zero-copy and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import SplitText
from processors.split_text import plan_block_reads

ORIGINAL = "Header Line #1\nHeader Line #2\n" + "\n".join(f"Line #{i}" for i in range(1, 11))
TEST_INPUT = (
    "HeaderLine1\nLine2SpacesAtEnd  \nLine3\nLine4\n\n\nLine8\nLine9\n\n\n"
    "13\n14\n15    EndofLine15\n16\n" + "\n" * 33 + "LastLine\n"
)


@pytest.fixture
def original_file(tmp_path: Path) -> Path:
    path = tmp_path / "original.txt"
    path.write_text(ORIGINAL)
    return path


def split(content: str | bytes | Path, **properties: object) -> TestRunner:
    runner = TestRunner(SplitText(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def contents(runner: TestRunner) -> list[bytes]:
    return [f.content for f in runner.flowfiles_for("splits")]


def counts(runner: TestRunner) -> tuple[int, int, int]:
    return tuple(len(runner.flowfiles_for(r)) for r in ("splits", "original", "failure"))  # type: ignore[return-value]


def test_last_line_exceeding_the_size_limit_is_its_own_split() -> None:
    """A line too long for Maximum Fragment Size becomes a split of its own."""
    runner = split(
        "Line #1\nLine #2\nLine #3\nLong line exceeding limit",
        header_line_count=0,
        line_split_count=2,
        maximum_fragment_size="20 B",
    )
    assert counts(runner) == (3, 1, 0)
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("fragment.count", "3")
    original.assert_attribute_exists("fragment.identifier")
    # Trimming uses the terminator of the last line read, here the deferred one without '\n'.
    assert contents(runner) == [b"Line #1\nLine #2", b"Line #3\n", b"Long line exceeding limit"]


def test_incomplete_header_goes_to_failure() -> None:
    """Fewer header lines than Header Line Count routes the input to failure alone."""
    runner = split(
        "Header Line #1", header_line_count=2, line_split_count=2, maximum_fragment_size="50 B"
    )
    assert counts(runner) == (0, 0, 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("Header Line #1")


def test_header_longer_than_the_fragment_size_goes_to_failure() -> None:
    """A header that exceeds Maximum Fragment Size routes to failure."""
    runner = split(
        "Header\nline\n", header_line_count=1, line_split_count=1, maximum_fragment_size="3 B"
    )
    assert counts(runner) == (0, 0, 1)


def test_single_character_header_marker(original_file: Path) -> None:
    """Leading lines starting with the marker form the header, counted in fragment.size."""
    runner = split(
        original_file,
        line_split_count=7,
        header_line_marker_characters="H",
        remove_trailing_newlines=False,
    )
    assert counts(runner) == (2, 1, 0)
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "2")
    splits = runner.flowfiles_for("splits")
    assert [(s.attributes["text.line.count"], s.attributes["fragment.size"]) for s in splits] == [
        ("7", "86"),
        ("3", "54"),
    ]
    fragment_id = splits[0].attributes["fragment.identifier"]
    for index, piece in enumerate(splits, start=1):
        piece.assert_attribute_equals("fragment.index", str(index))
        piece.assert_attribute_equals("fragment.identifier", fragment_id)
        piece.assert_attribute_equals("fragment.count", "2")
        piece.assert_attribute_equals("segment.original.filename", "original.txt")


def test_header_count_wins_over_marker(original_file: Path) -> None:
    """With Header Line Count set, the marker is ignored."""
    runner = split(
        original_file,
        header_line_count=1,
        header_line_marker_characters="Head",
        line_split_count=5,
        remove_trailing_newlines=False,
    )
    splits = runner.flowfiles_for("splits")
    assert [(s.attributes["text.line.count"], s.attributes["fragment.size"]) for s in splits] == [
        ("5", "62"),
        ("5", "55"),
        ("1", "23"),
    ]


def test_zero_lines_needs_a_maximum_size() -> None:
    """Line Split Count 0 without Maximum Fragment Size is invalid, naming the property."""
    problems = SplitText(line_split_count=0).validate()
    assert [(p.subject, p.explanation) for p in problems] == [
        ("Maximum Fragment Size", "Property must be specified when Line Split Count is 0")
    ]
    assert not SplitText().is_valid()


def test_multiple_split_directives() -> None:
    """Line count and size limits combine; the header counts toward the size."""
    runner = split(
        "Header Line #1\nHeader Line #2\nLine #1\nLine #2\n"
        "Line #3 This line has additional text added so that it exceeds the maximum fragment size\n"
        "Line #4\nLine #5\nLine #6\nLine #7\nLine #8\nLine #9\nLine #10\n",
        header_line_count=2,
        line_split_count=2,
        maximum_fragment_size="50 B",
        remove_trailing_newlines=False,
    )
    assert [f.size for f in runner.flowfiles_for("splits")] == [46, 119, 46, 46, 46, 39]
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "6")


@pytest.mark.parametrize(
    ("content", "properties"),
    [
        (
            "Header Line #1\nHeaderLine#2\n",
            {"header_line_count": 0, "header_line_marker_characters": "Head"},
        ),
        ("Header Line #1\nHeaderLine #2\n", {"header_line_count": 2}),
        ("Header Line #1", {"header_line_count": 1}),
    ],
)
def test_header_only_input_gives_one_header_split(
    content: str, properties: dict[str, object]
) -> None:
    """Input made only of header lines gives one split of the header, without fragment.count."""
    runner = split(content, line_split_count=2, maximum_fragment_size="50 B", **properties)
    assert counts(runner) == (1, 1, 0)
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "1")
    piece = runner.flowfiles_for("splits")[0]
    piece.assert_content_equals(content.rstrip("\n"))
    piece.assert_attribute_equals("text.line.count", "0")
    piece.assert_attribute_equals("fragment.index", "1")
    piece.assert_attribute_not_exists("fragment.count")


def test_max_size_exceeded(original_file: Path) -> None:
    """Splitting by size alone, with and without a header."""
    runner = split(
        original_file,
        header_line_count=2,
        line_split_count=0,
        maximum_fragment_size="71 B",
        remove_trailing_newlines=False,
    )
    splits = runner.flowfiles_for("splits")
    assert [(s.attributes["text.line.count"], s.attributes["fragment.size"]) for s in splits] == [
        ("5", "70"),
        ("5", "70"),
    ]
    runner = split(
        original_file,
        header_line_count=0,
        line_split_count=0,
        maximum_fragment_size="71 B",
        remove_trailing_newlines=False,
    )
    assert contents(runner) == [
        b"Header Line #1\nHeader Line #2\nLine #1\nLine #2\nLine #3\nLine #4\nLine #5\n",
        b"Line #6\nLine #7\nLine #8\nLine #9\nLine #10",
    ]
    splits = runner.flowfiles_for("splits")
    assert [(s.attributes["text.line.count"], s.attributes["fragment.size"]) for s in splits] == [
        ("7", "70"),
        ("5", "40"),
    ]


@pytest.mark.parametrize("eol", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_every_line_terminator(eol: str) -> None:
    """CR, CRLF and LF inputs split alike; runs of empty lines give header-only splits."""
    body = eol.join(["1", "2", "3", "", "", "", "", "", "", "10", "11", "12", ""])
    runner = split(f"H1{eol}H2{eol}{body}", header_line_count=2, line_split_count=3)
    header = f"H1{eol}H2"
    assert contents(runner) == [
        f"{header}{eol}1{eol}2{eol}3".encode(),
        header.encode(),
        header.encode(),
        f"{header}{eol}10{eol}11{eol}12".encode(),
    ]
    runner = split(body, header_line_count=0, line_split_count=3)
    assert contents(runner) == [f"1{eol}2{eol}3".encode(), f"10{eol}11{eol}12".encode()]
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "2")


def test_missing_header_lines_go_to_failure(original_file: Path) -> None:
    """A 100-line header on a 12-line file routes to failure."""
    runner = split(original_file, header_line_count=100, line_split_count=3)
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_split_without_header(original_file: Path) -> None:
    """Three-line splits without a header drop the trailing newline."""
    runner = split(original_file, header_line_count=0, line_split_count=3)
    assert contents(runner) == [
        b"Header Line #1\nHeader Line #2\nLine #1",
        b"Line #2\nLine #3\nLine #4",
        b"Line #5\nLine #6\nLine #7",
        b"Line #8\nLine #9\nLine #10",
    ]


def test_split_with_two_line_header(original_file: Path) -> None:
    """A two-line header is copied into every split."""
    runner = split(original_file, header_line_count=2, line_split_count=3)
    header = "Header Line #1\nHeader Line #2\n"
    assert contents(runner) == [
        f"{header}Line #1\nLine #2\nLine #3".encode(),
        f"{header}Line #4\nLine #5\nLine #6".encode(),
        f"{header}Line #7\nLine #8\nLine #9".encode(),
        f"{header}Line #10".encode(),
    ]
    runner = split(original_file, header_line_count=2, line_split_count=5)
    assert contents(runner) == [
        f"{header}Line #1\nLine #2\nLine #3\nLine #4\nLine #5".encode(),
        f"{header}Line #6\nLine #7\nLine #8\nLine #9\nLine #10".encode(),
    ]


def test_one_line_splits_skip_empty_lines() -> None:
    """With one line per split and trimming, empty lines give no split."""
    runner = split(TEST_INPUT, header_line_count=0, line_split_count=1)
    assert contents(runner) == [
        b"HeaderLine1",
        b"Line2SpacesAtEnd  ",
        b"Line3",
        b"Line4",
        b"Line8",
        b"Line9",
        b"13",
        b"14",
        b"15    EndofLine15",
        b"16",
        b"LastLine",
    ]


def test_five_line_splits() -> None:
    """Five-line splits trim trailing newlines; all-empty splits are dropped."""
    runner = split(TEST_INPUT, header_line_count=0, line_split_count=5)
    assert contents(runner) == [
        b"HeaderLine1\nLine2SpacesAtEnd  \nLine3\nLine4",
        b"\nLine8\nLine9",
        b"13\n14\n15    EndofLine15\n16",
        b"\n\nLastLine",
    ]


def test_five_line_splits_keeping_newlines() -> None:
    """Without trimming every split is emitted, empty ones included."""
    runner = split(
        TEST_INPUT, header_line_count=0, line_split_count=5, remove_trailing_newlines=False
    )
    assert contents(runner) == [
        b"HeaderLine1\nLine2SpacesAtEnd  \nLine3\nLine4\n\n",
        b"\nLine8\nLine9\n\n\n",
        b"13\n14\n15    EndofLine15\n16\n\n",
        *[b"\n\n\n\n\n"] * 6,
        b"\n\nLastLine\n",
    ]


def test_five_line_splits_with_header() -> None:
    """With a header, every split is emitted; empty ones hold the header alone."""
    kept = split(
        TEST_INPUT, header_line_count=1, line_split_count=5, remove_trailing_newlines=False
    )
    assert contents(kept) == [
        b"HeaderLine1\nLine2SpacesAtEnd  \nLine3\nLine4\n\n\n",
        b"HeaderLine1\nLine8\nLine9\n\n\n13\n",
        b"HeaderLine1\n14\n15    EndofLine15\n16\n\n\n",
        *[b"HeaderLine1\n\n\n\n\n\n"] * 6,
        b"HeaderLine1\n\nLastLine\n",
    ]
    trimmed = split(TEST_INPUT, header_line_count=1, line_split_count=5)
    assert contents(trimmed) == [
        b"HeaderLine1\nLine2SpacesAtEnd  \nLine3\nLine4",
        b"HeaderLine1\nLine8\nLine9\n\n\n13",
        b"HeaderLine1\n14\n15    EndofLine15\n16",
        *[b"HeaderLine1"] * 6,
        b"HeaderLine1\n\nLastLine",
    ]


def test_one_line_splits_with_header() -> None:
    """One-line splits with a header: 47 splits, empty ones holding the header."""
    runner = split(TEST_INPUT, header_line_count=1, line_split_count=1)
    result = contents(runner)
    assert len(result) == 47
    assert result[:13] == [
        b"HeaderLine1\nLine2SpacesAtEnd  ",
        b"HeaderLine1\nLine3",
        b"HeaderLine1\nLine4",
        b"HeaderLine1",
        b"HeaderLine1",
        b"HeaderLine1\nLine8",
        b"HeaderLine1\nLine9",
        b"HeaderLine1",
        b"HeaderLine1",
        b"HeaderLine1\n13",
        b"HeaderLine1\n14",
        b"HeaderLine1\n15    EndofLine15",
        b"HeaderLine1\n16",
    ]
    assert result[13:46] == [b"HeaderLine1"] * 33
    assert result[46] == b"HeaderLine1\nLastLine"


@pytest.mark.parametrize(
    ("content", "properties", "expected"),
    [
        ("H1\nH2\n1\n\n\n", {"header_line_count": 2, "line_split_count": 10}, [b"H1\nH2\n1"]),
        ("1\n2\n\n\n\n", {"header_line_count": 0, "line_split_count": 10}, [b"1\n2"]),
        ("1\n2\n\n\n\n\n\n\n\n", {"header_line_count": 0, "line_split_count": 3}, [b"1\n2"]),
        ("1\n2\n\n\n\n\n\n\n\n", {"header_line_count": 0, "line_split_count": 1}, [b"1", b"2"]),
        (
            "H1\n1\n\n\n\n\n\n\n\n",
            {"header_line_count": 1, "line_split_count": 3},
            [b"H1\n1", b"H1", b"H1"],
        ),
        (
            "H1\n1\n2\n3\n\n\n4\n",
            {"header_line_count": 1, "line_split_count": 3},
            [b"H1\n1\n2\n3", b"H1\n\n\n4"],
        ),
        (
            "1\n2\n3\n\n\n4\n",
            {"header_line_count": 0, "line_split_count": 3},
            [b"1\n2\n3", b"\n\n4"],
        ),
        ("\n\n1\n\n\n\n\n", {"header_line_count": 2, "line_split_count": 3}, [b"\n\n1", b"\n"]),
        (
            "header1\nheader2\nline1 longer than limit\nline2\nline3\n\n\n\n\n",
            {"header_line_count": 2, "line_split_count": 0, "maximum_fragment_size": "30 B"},
            [
                b"header1\nheader2\nline1 longer than limit",
                b"header1\nheader2\nline2\nline3",
                b"header1\nheader2",
            ],
        ),
    ],
    ids=[
        "blank-end-header",
        "blank-end",
        "all-newlines-trimmed",
        "fragment-count-is-actual",
        "consistent-trailing",
        "starts-with-newline-header",
        "starts-with-newline",
        "empty-header-lines",
        "max-size-trimmed",
    ],
)
def test_trailing_newline_rules(
    content: str, properties: dict[str, object], expected: list[bytes]
) -> None:
    """NiFi's trailing-newline cases: trimming, empty splits and header-only splits."""
    runner = split(content, remove_trailing_newlines=True, **properties)
    assert contents(runner) == expected
    for index, piece in enumerate(runner.flowfiles_for("splits"), start=1):
        piece.assert_attribute_equals("fragment.index", str(index))
        piece.assert_attribute_equals("fragment.count", str(len(expected)))


def test_line_counts_follow_nifi_quirks() -> None:
    """text.line.count counts non-empty lines, plus a carried-over remainder line."""
    runner = split("1\n2\n3\n\n\n4\n", header_line_count=0, line_split_count=3)
    assert [f.attributes["text.line.count"] for f in runner.flowfiles_for("splits")] == ["3", "1"]


def test_marker_not_matching_the_first_line_loses_nothing() -> None:
    """Unlike NiFi, a marker that matches no leading line keeps every line (no header)."""
    runner = split("abc\ndef\nghi\n", line_split_count=1, header_line_marker_characters="H")
    assert contents(runner) == [b"abc", b"def", b"ghi"]
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "3")


def test_splits_without_header_are_zero_copy_forks(original_file: Path) -> None:
    """Splits without a header slice the input's claim (no bytes copied), under one FORK."""
    runner = TestRunner(SplitText(line_split_count=3))
    queued = runner.enqueue(original_file)
    runner.run()
    claim = queued.flowfile.content
    for piece in runner.flowfiles_for("splits"):
        assert piece.flowfile.content.resource_claim == claim.resource_claim
    (fork,) = runner.provenance_events
    assert fork.event_type is ProvenanceEventType.FORK
    assert fork.flowfile_uuid == queued.uuid
    assert set(fork.child_uuids) == {f.uuid for f in runner.flowfiles_for("splits")}


def test_splits_with_header_are_written() -> None:
    """Splits with a header get new content: header plus a copied range."""
    runner = TestRunner(SplitText(line_split_count=1, header_line_count=1))
    queued = runner.enqueue("h\na\nb\n")
    runner.run()
    splits = runner.flowfiles_for("splits")
    assert [s.content for s in splits] == [b"h\na", b"h\nb"]
    assert all(
        s.flowfile.content.resource_claim != queued.flowfile.content.resource_claim for s in splits
    )
    assert [e.event_type for e in runner.provenance_events] == [ProvenanceEventType.FORK]


def test_empty_and_binary_inputs() -> None:
    """Empty content gives no split; non-UTF-8 bytes split as bytes."""
    runner = split(b"", line_split_count=1)
    assert counts(runner) == (0, 1, 0)
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "0")
    runner = split(b"\xff\xfe\n\x00\x81", line_split_count=1)
    assert contents(runner) == [b"\xff\xfe", b"\x00\x81"]


def test_huge_line_is_one_split() -> None:
    """A line far longer than the read chunk is one split, sliced without copying."""
    line = b"x" * (3 * (1 << 20) + 5)
    runner = split(line + b"\nshort\n", line_split_count=1)
    assert [len(c) for c in contents(runner)] == [len(line), 5]


@given(
    st.lists(
        st.tuples(st.text(alphabet="ab é", max_size=8), st.sampled_from(["\n", "\r\n", "\r"])),
        max_size=30,
    ),
    st.booleans(),
    st.integers(1, 7),
)
def test_splits_concatenate_back_to_the_input(lines: list, final_newline: bool, count: int) -> None:
    """Without a header or trimming, the splits in fragment order are exactly the input."""
    text = "".join(body + eol for body, eol in lines)
    if lines and not final_newline:
        text = text[: -len(lines[-1][1])]
    data = text.encode("utf-8")
    runner = split(data, line_split_count=count, remove_trailing_newlines=False)
    splits = sorted(
        runner.flowfiles_for("splits"), key=lambda f: int(f.attributes["fragment.index"])
    )
    assert b"".join(s.content for s in splits) == data
    assert all(s.attributes["fragment.count"] == str(len(splits)) for s in splits)


def test_carried_over_line_counts_toward_the_first_split() -> None:
    """As in NiFi, the line read past a marker header starts the first split and still lets one
    more line in before the count is checked."""
    runner = split("H1\nabc\ndef\nghi\n", line_split_count=1, header_line_marker_characters="H")
    assert contents(runner) == [b"H1\nabc\ndef", b"H1\nghi"]
    assert [f.attributes["text.line.count"] for f in runner.flowfiles_for("splits")] == ["2", "1"]


def test_spilling_gives_identical_splits() -> None:
    """With the session spilling every few FlowFiles, the splits and counts are unchanged."""
    expected = split(TEST_INPUT, header_line_count=1, line_split_count=1)
    runner = TestRunner(SplitText(header_line_count=1, line_split_count=1))
    runner.spill_threshold = 5
    runner.enqueue(TEST_INPUT)
    runner.run()
    assert contents(runner) == contents(expected)
    assert [f.attributes["fragment.index"] for f in runner.flowfiles_for("splits")] == [
        str(i) for i in range(1, 48)
    ]
    assert {f.attributes["fragment.count"] for f in runner.flowfiles_for("splits")} == {"47"}


@pytest.mark.parametrize("kwargs", [{"header_line_count": 1}, {}])
def test_more_splits_than_are_remembered_read_the_input_again(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict
) -> None:
    """Splits beyond what the counting pass keeps are found by a second read: same splits."""
    expected = split(TEST_INPUT, line_split_count=1, **kwargs)
    monkeypatch.setattr("processors.split_text._REMEMBERED_SPLITS", 3)
    runner = split(TEST_INPUT, line_split_count=1, **kwargs)
    assert contents(runner) == contents(expected)
    keys = ("text.line.count", "fragment.size", "fragment.index", "fragment.count")

    def described(result: TestRunner) -> list[list[str]]:
        return [[f.attributes[k] for k in keys] for f in result.flowfiles_for("splits")]

    assert described(runner) == described(expected)


def _emitted_before(data: bytes, at: int, lines: int) -> int:
    """Splits of *lines* lines the one-task split emits from ``data[:at]`` (trailing trimmed)."""
    runner = TestRunner(SplitText(line_split_count=lines))
    runner.enqueue(data[:at])
    runner.run()
    return len(runner.flowfiles_for("splits"))


@pytest.mark.parametrize("lines", [1, 3])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_plan_block_reads_cuts_at_split_boundaries(
    tmp_path: Path, lines: int, ending: bytes
) -> None:
    """Blocks start where a split starts, each knowing the splits emitted before it."""
    rows = [b"" if i % 5 == 0 else b"row %d" % i for i in range(200)]
    data = b"".join(row + ending for row in rows)
    path = tmp_path / "f.log"
    path.write_bytes(data)
    planned = plan_block_reads(str(path), len(data), 4, SplitText(line_split_count=lines))
    assert planned is not None
    blocks, count = planned.blocks, planned.count
    assert planned.lf_only == (ending == b"\n")
    assert len(blocks) == 4
    assert blocks[0][0] == 0
    assert blocks[-1][1] == len(data)
    starts = {0}
    at = 0
    for index, row in enumerate(rows, 1):
        at += len(row) + len(ending)
        if index % lines == 0:
            starts.add(at)
    for (start, end, before), following in zip(blocks, [*blocks[1:], (len(data),)], strict=True):
        assert start in starts
        assert end == following[0]
        assert before == _emitted_before(data, start, lines)
    assert count == _emitted_before(data, len(data), lines)


def test_plan_block_reads_leaves_one_long_line_whole(tmp_path: Path) -> None:
    """A file that is one line (longer than any block) has no second block: None."""
    path = tmp_path / "f.log"
    path.write_bytes(b"x" * 10_000 + b"\n")
    assert plan_block_reads(str(path), 10_001, 4, SplitText(line_split_count=1)) is None
