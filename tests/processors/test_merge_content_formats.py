"""Tests for MergeContent's Merge Formats: ZIP, TAR, FlowFile Stream v3 and v2, FlowFile Tar
v1 and Avro (with its Metadata Strategy), read back by other tools."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
from pathlib import Path

import fastavro
import pytest

from processors._merge_formats import flowfile_stream_header
from tests.processors._merge_runner import counts, merged, runner_for


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
