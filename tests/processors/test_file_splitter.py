"""Tests for FileSplitter: blocks, file metadata, throttling, rescans, zero-copy and failures."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.errors import ContentChangedError
from flowcore.flowfile import Rope
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ConvertRecord, FileSplitter, MergeContent, PutFile, UpdateAttribute
from processors._lines import iter_lines
from processors.record_services import CSVReader, JsonRecordSetWriter

_PIECES = st.sampled_from([b"a", b"bcd", b"y" * 70, b"\n", b"\r\n", b"\r", b"\n\n"])
CONTENTS = st.lists(_PIECES, max_size=80).map(b"".join)


def splitter(inputs: Path | str, **properties: object) -> TestRunner:
    return TestRunner(FileSplitter(input_directory=str(inputs), **properties))


def reassemble(blocks: list) -> bytes:
    """MergeContent Defragment over the blocks, as a flow would do it."""
    merge = TestRunner(MergeContent(merge_strategy="Defragment"))
    for block in reversed(blocks):  # any order: Defragment sorts by fragment.index
        merge.enqueue(block.content, dict(block.attributes))
    merge.run()
    (merged,) = merge.flowfiles_for("merged")
    return merged.content


def lines(data: bytes) -> list[bytes]:
    return [data[s.offset : s.offset + s.length] for s in iter_lines(io.BytesIO(data))]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "a.log").write_bytes(b"one\ntwo\nthree\nfour\n")
    (root / "sub" / "b.log").write_bytes(b"x" * 10)
    (root / ".hidden").write_bytes(b"h")
    return root


def test_blocks_and_file_metadata(inputs: Path) -> None:
    """Each file gives one metadata FlowFile and a block FlowFile per block, with NiFi's
    fragment attributes and RECEIVE events."""
    runner = splitter(inputs / "a.log", block_size="8 B")
    runner.run()
    (meta,) = runner.flowfiles_for("files")
    meta.assert_attribute_equals("block.count", "3")
    meta.assert_attribute_equals("block.ids", "0,1,2")
    meta.assert_attribute_equals("file.size", "19")
    meta.assert_attribute_equals("file.path", str(inputs / "a.log"))
    assert meta.size == 0
    blocks = runner.flowfiles_for("blocks")
    assert [b.content for b in blocks] == [b"one\ntwo\nthree\n", b"four\n", b""]
    first = blocks[0]
    first.assert_attribute_equals("filename", "a.log")
    first.assert_attribute_equals("segment.original.filename", "a.log")
    first.assert_attribute_equals("fragment.index", "1")
    first.assert_attribute_equals("fragment.count", "3")
    first.assert_attribute_equals("block.offset", "0")
    first.assert_attribute_equals("block.length", "14")
    first.assert_attribute_equals("block.id", "0")
    identifiers = {b.attributes["fragment.identifier"] for b in blocks}
    assert identifiers == {meta.attributes["fragment.identifier"]}
    receives = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.RECEIVE]
    assert len(receives) == 3
    assert receives[0].transit_uri == (inputs / "a.log").as_uri()


def test_directories_are_scanned_recursively_and_hidden_files_skipped(inputs: Path) -> None:
    """Recursive by default; Recursive false stays in the top directory."""
    runner = splitter(inputs)
    runner.run()
    assert sorted(f.attributes["filename"] for f in runner.flowfiles_for("files")) == [
        "a.log",
        "b.log",
    ]
    (nested,) = [f for f in runner.flowfiles_for("files") if f.attributes["filename"] == "b.log"]
    nested.assert_attribute_equals("path", "sub/")
    flat = splitter(inputs, recursive=False)
    flat.run()
    assert [f.attributes["filename"] for f in flat.flowfiles_for("files")] == ["a.log"]


def test_comma_separated_inputs_mix_files_and_directories(inputs: Path, tmp_path: Path) -> None:
    """Input Directory takes several directories or files."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "c.log").write_bytes(b"c\n")
    runner = splitter(f"{inputs / 'a.log'}, {other}")
    runner.run()
    assert sorted(f.attributes["filename"] for f in runner.flowfiles_for("files")) == [
        "a.log",
        "c.log",
    ]


def test_blocks_threshold_throttles_each_trigger_and_nothing_repeats(inputs: Path) -> None:
    """At most Blocks Threshold blocks per trigger; the state carries the rest over."""
    runner = splitter(inputs / "sub" / "b.log", block_size="2 B", blocks_threshold=2)
    runner.run(4)
    per_trigger = [f.attributes["fragment.index"] for f in runner.flowfiles_for("blocks")]
    assert per_trigger == ["1", "2", "3", "4", "5"]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("blocks", 0)


def test_changed_files_are_split_again_after_the_scan_interval(inputs: Path) -> None:
    """A file whose size or mtime changed is a new version with a new fragment.identifier;
    unchanged files are not listed again."""
    runner = splitter(inputs, scan_interval="10 sec")
    runner.run()
    old = runner.flowfiles_for("files")
    runner.clear_transfer_state()
    (inputs / "a.log").write_bytes(b"changed\n")
    runner.run()
    runner.assert_transfer_count("files", 0)  # not scanned yet
    runner.advance_time(11)
    runner.run()
    (meta,) = runner.flowfiles_for("files")
    meta.assert_attribute_equals("filename", "a.log")
    assert meta.attributes["fragment.identifier"] not in {
        f.attributes["fragment.identifier"] for f in old
    }
    (block,) = runner.flowfiles_for("blocks")
    assert block.content == b"changed\n"


def test_content_is_zero_copy_and_a_later_change_is_refused(inputs: Path) -> None:
    """Blocks point into the original file; once it changes, reading fails loudly."""
    runner = splitter(inputs / "a.log", block_size="8 B")
    runner.run()
    (first, *_) = runner.flowfiles_for("blocks")
    claim = first.flowfile.content
    assert claim is not None
    assert claim.resource_claim.is_external
    assert claim.resource_claim.id == str(inputs / "a.log")
    assert first.content == b"one\ntwo\nthree\n"
    (inputs / "a.log").write_bytes(b"ONE\nTWO\nTHREE\nFOUR\n")
    os.utime(inputs / "a.log", ns=(1, 1))
    with pytest.raises(ContentChangedError, match="changed after it was listed"):
        _ = first.content


def test_copy_into_repository_survives_changes(inputs: Path) -> None:
    """With Copy Into Repository the blocks are copies, readable after the file changed."""
    runner = splitter(inputs / "a.log", block_size="8 B", copy_into_repository=True)
    runner.run()
    (inputs / "a.log").unlink()
    assert [b.content for b in runner.flowfiles_for("blocks")] == [
        b"one\ntwo\nthree\n",
        b"four\n",
        b"",
    ]


def test_a_file_changed_before_its_block_is_split_goes_to_failure(inputs: Path) -> None:
    """Blocks listed before a change go to failure, without content, saying why."""
    runner = splitter(inputs / "a.log", block_size="8 B")
    processor = runner.processor
    listing = processor.list_work(runner.context, {})
    (inputs / "a.log").write_bytes(b"shorter\n")
    session = runner.create_session()
    for item in listing.items:
        processor.read_work(runner.context, session, item)
    session.commit()
    failed = runner.flowfiles_for("failure")
    assert [f.attributes["fragment.index"] for f in failed] == ["1", "2", "3"]
    assert "changed after it was listed" in failed[0].attributes["block.failure.reason"]
    assert all(f.size == 0 for f in failed)
    runner.assert_transfer_count("blocks", 0)


def test_fixed_length_and_raw_readers(tmp_path: Path) -> None:
    """Fixed Length keeps records of N bytes whole; None cuts raw blocks."""
    path = tmp_path / "records.bin"
    path.write_bytes(bytes(range(10)))
    fixed = splitter(path, block_size="4 B", record_reader="Fixed Length", record_length="3 B")
    fixed.run()
    assert [len(b.content) for b in fixed.flowfiles_for("blocks")] == [6, 3, 1]
    raw = splitter(path, block_size="4 B", record_reader="None")
    raw.run()
    assert [len(b.content) for b in raw.flowfiles_for("blocks")] == [4, 4, 2]


def test_invalid_sizes_are_rejected(inputs: Path) -> None:
    """Block Size must be positive; Fixed Length needs a Record Length."""
    splitter(inputs, block_size="0 B").assert_not_valid()
    splitter(inputs, record_reader="Fixed Length").assert_not_valid()
    splitter(inputs, record_reader="Fixed Length", record_length="0 B").assert_not_valid()
    splitter(inputs, record_reader="Fixed Length", record_length="8 B").assert_valid()


@given(data=CONTENTS, block_size=st.integers(1, 64))
def test_defragment_returns_the_exact_bytes_and_each_line_once(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block_size: int
) -> None:
    """FileSplitter -> MergeContent Defragment gives the file back byte for byte, for lines
    longer than a block, \\r\\n, lone \\r and no final newline; every line is in one block."""
    path = tmp_path_factory.mktemp("split") / "random.txt"
    path.write_bytes(data)
    runner = splitter(path, block_size=f"{block_size} B", blocks_threshold=10_000)
    runner.run()
    blocks = runner.flowfiles_for("blocks")
    assert [line for b in blocks for line in lines(b.content)] == lines(data)
    assert reassemble(blocks) == data


def test_a_block_whose_read_failed_is_listed_again_first(inputs: Path) -> None:
    """requeue_work puts a failed block back: the next listing hands it out before the file's
    next blocks, and no block is skipped or listed twice."""
    runner = splitter(inputs / "a.log", block_size="8 B", blocks_threshold=2)
    processor = runner.processor
    first = processor.list_work(runner.context, {})
    assert [i.key.rsplit("#", 1)[1] for i in first.items] == ["1", "2"]
    state = processor.requeue_work(first.state, [first.items[1]], {})
    second = processor.list_work(runner.context, state)
    assert [i.key.rsplit("#", 1)[1] for i in second.items] == ["2", "3"]
    third = processor.list_work(runner.context, second.state)
    assert [i.key.rsplit("#", 1)[1] for i in third.items] == []


def test_every_input_must_exist(inputs: Path, tmp_path: Path) -> None:
    """Each comma-separated input must be a file or a directory at validation (NiFi's rule for a
    directory a source reads), named by its absolute path; Expression Language is not checked."""
    splitter(f"{inputs}, {tmp_path / 'nope'}").assert_not_valid()
    problems = [str(p) for p in splitter(f"{inputs},{tmp_path / 'nope'}").validation_problems()]
    assert len(problems) == 1
    assert f"Directory {tmp_path / 'nope'} does not exist" in problems[0]
    splitter("${NOT_SET_AT_VALIDATION}").assert_valid()
    one_file = next(p for p in inputs.rglob("*") if p.is_file())
    splitter(f"{one_file}").assert_valid()


def test_header_lines_start_every_block_zero_copy(tmp_path: Path) -> None:
    """With Header Line Count, a block after the first is the header then its own lines: a
    rope of two ranges of the file, no bytes copied; block.offset and block.length name its
    own range."""
    path = tmp_path / "a.csv"
    path.write_bytes(b"id,name\n1,a\n2,b\n3,c\n4,d")
    runner = splitter(path, block_size="9 B", header_line_count=1)
    runner.run()
    blocks = runner.flowfiles_for("blocks")
    assert [b.content for b in blocks] == [
        b"id,name\n1,a\n",
        b"id,name\n2,b\n3,c\n",
        b"id,name\n4,d",
    ]
    assert [b.attributes["block.offset"] for b in blocks] == ["0", "12", "20"]
    assert [b.attributes["block.length"] for b in blocks] == ["12", "8", "3"]
    assert [b.attributes["block.header.length"] for b in blocks] == ["0", "8", "8"]
    rope = blocks[1].flowfile.content
    assert isinstance(rope, Rope)
    assert all(p.resource_claim.is_external for p in rope.pieces)


def test_a_block_with_no_line_of_its_own_is_empty_even_with_a_header(tmp_path: Path) -> None:
    """A header longer than a block leaves the first block all header; a long line leaves
    blocks with no line of their own, which carry nothing, not even the header."""
    path = tmp_path / "a.csv"
    path.write_bytes(b"a,b,c,d\n" + b"x" * 30 + b"\n1\n")
    runner = splitter(path, block_size="4 B", header_line_count=1, blocks_threshold=100)
    runner.run()
    contents = [b.content for b in runner.flowfiles_for("blocks")]
    assert contents[0] == b"a,b,c,d\n"
    assert contents[1] == b"a,b,c,d\n" + b"x" * 30 + b"\n"
    assert contents[-1] == b""
    assert contents.count(b"a,b,c,d\n1\n") == 1
    assert set(contents[2:]) == {b"", b"a,b,c,d\n1\n"}


def test_header_line_count_applies_to_the_lines_reader_only(inputs: Path) -> None:
    """Header Line Count must be a non-negative integer, and is ignored by the other readers."""
    splitter(inputs, header_line_count="-1").assert_not_valid()
    splitter(inputs, header_line_count="x").assert_not_valid()
    raw = splitter(inputs / "a.log", block_size="8 B", record_reader="None", header_line_count=1)
    raw.run()
    assert [b.content for b in raw.flowfiles_for("blocks")] == [
        b"one\ntwo\n",
        b"three\nfo",
        b"ur\n",
    ]


@given(
    data=CONTENTS,
    block_size=st.integers(1, 64),
    headers=st.integers(0, 3),
    copy=st.booleans(),
)
def test_with_header_lines_every_record_is_in_exactly_one_block(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block_size: int, headers: int, copy: bool
) -> None:
    """Whatever the block size, header count and line ends (\n, \r\n, lone \r, no final
    one), each block with content starts with the header and the lines after it are the
    file's records, each once; zero-copy and copied blocks are alike."""
    path = tmp_path_factory.mktemp("header") / "random.csv"
    path.write_bytes(data)
    runner = splitter(
        path,
        block_size=f"{block_size} B",
        blocks_threshold=10_000,
        header_line_count=headers,
        copy_into_repository=str(copy).lower(),
    )
    runner.run()
    header = b"".join(lines(data)[:headers])
    records = []
    for block in runner.flowfiles_for("blocks"):
        if not block.content:
            continue
        assert block.content.startswith(header)
        records.extend(lines(block.content[len(header) :]))
    assert records == lines(data)[headers:]


def test_a_csv_file_converts_block_by_block_with_every_record_once(tmp_path: Path) -> None:
    """FileSplitter (header) -> ConvertRecord (CSV -> JSON) -> PutFile on the direct runner
    writes one part file per block, and the parts hold each record of the file once."""
    (tmp_path / "in").mkdir()
    rows = [f"{i},name {i},{i / 4}" for i in range(1, 1001)]
    (tmp_path / "in" / "big.csv").write_text("id,name,amount\r\n" + "\r\n".join(rows))
    flow = Flow("csv-blocks")
    flow.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    flow.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    split = flow.add(
        FileSplitter(input_directory=str(tmp_path / "in"), block_size="2 KB", header_line_count=1),
        name="split",
    )
    convert = flow.add(
        ConvertRecord(record_reader="reader", record_writer="writer"), name="convert"
    )
    name = flow.add(UpdateAttribute(filename="part-${fragment.index}.json"), name="name")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(split, convert, "blocks")
    flow.connect(convert, name, "success")
    flow.connect(name, put)
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(convert, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    result = flow.run("direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    parts = sorted((tmp_path / "out").iterdir())
    assert len(parts) == result.count("split", "blocks") > 1
    assert result.count("convert", "failure") == 0
    records = [json.loads(line) for part in parts for line in part.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == list(range(1, 1001))
    assert {r["name"] for r in records} == {f"name {i}" for i in range(1, 1001)}
