"""Tests for UnpackContent: NiFi's formats, attributes and fragments; safety; flows."""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
import pyzipper

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, MergeContent, PutFile, UnpackContent, _unpackers
from processors._packaging import flowfile_stream_header, properties_xml
from repositories.repository_set import RepositorySet
from tests.processors.http_server._packages import sparse_package_v1, sparse_tar

FILES = {"folder/cal.txt": b"calendar\n" * 30, "folder/date.txt": b"2024-01-02\n"}


def _tar(files: dict[str, bytes] = FILES, **info: object) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folder = tarfile.TarInfo("folder")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for name, data in files.items():
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode, entry.uname, entry.gname = (
                len(data),
                0o644,
                "jmcarey",
                "mkpasswd",
            )
            entry.mtime = 1_700_000_000
            for key, value in info.items():
                setattr(entry, key, value)
            archive.addfile(entry, io.BytesIO(data))
    return buf.getvalue()


def _zip(files: dict[str, bytes] = FILES) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
            info.external_attr = 0o640 << 16
            info.create_system = 3
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _run(content: bytes, attributes: dict[str, str] | None = None, **properties: object):
    runner = TestRunner(UnpackContent(**properties))
    runner.enqueue(content, {"filename": "data.tar", **(attributes or {})})
    runner.run()
    return runner


def test_properties_are_nifis() -> None:
    """NiFi 2's five properties, defaults, relationships and the legacy internal name."""
    descriptors = UnpackContent().descriptors()
    assert [(d.display_name, d.default) for d in descriptors] == [
        ("Packaging Format", "use mime.type attribute"),
        ("Filename Character Set", "UTF-8"),
        ("File Filter", ".*"),
        ("Password", None),
        ("Allow Stored Entries With Data Descriptor", "false"),
    ]
    assert [v.value for v in UnpackContent.PACKAGING_FORMAT.allowable_values] == [
        "use mime.type attribute",
        "tar",
        "zip",
        "flowfile-stream-v3",
        "flowfile-stream-v2",
        "flowfile-tar-v1",
    ]
    assert UnpackContent.PASSWORD.sensitive
    assert UnpackContent(**{"allow-stored-entries-wdd": "true"}).is_valid()
    TestRunner(UnpackContent(filename_character_set="no-such-charset")).assert_not_valid()
    TestRunner(UnpackContent(file_filter="(")).assert_not_valid()


def test_tar_entries_with_nifis_attributes() -> None:
    """TestUnpackContent.testTar: two files, owner, group, permissions, times, fragments."""
    runner = _run(_tar(), packaging_format="tar")
    runner.assert_transfer_count("success", 2)
    runner.assert_transfer_count("original", 1)
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("fragment.count", "2")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(1_700_000_000))
    for index, (out, (name, data)) in enumerate(
        zip(runner.flowfiles_for("success"), FILES.items(), strict=True), 1
    ):
        out.assert_content_equals(data)
        out.assert_attribute_equals("filename", name.split("/")[1])
        out.assert_attribute_equals("path", "folder/")
        out.assert_attribute_equals("mime.type", "application/octet-stream")
        out.assert_attribute_equals("file.permissions", "rw-r--r--")
        out.assert_attribute_equals("file.owner", "jmcarey")
        out.assert_attribute_equals("file.group", "mkpasswd")
        out.assert_attribute_equals("file.size", str(len(data)))
        out.assert_attribute_equals("file.lastModifiedTime", stamp)
        out.assert_attribute_equals("file.creationTime", stamp)
        out.assert_attribute_equals("fragment.index", str(index))
        out.assert_attribute_equals("fragment.count", "2")
        out.assert_attribute_equals("segment.original.filename", "data")
        out.assert_attribute_equals(
            "fragment.identifier", original.attributes["fragment.identifier"]
        )
    (fork,) = runner.provenance_events
    assert fork.event_type is ProvenanceEventType.FORK
    assert len(fork.child_uuids) == 2


@pytest.mark.parametrize("mime_type", ["application/x-tar", "application/tar", "APPLICATION/X-TAR"])
def test_tar_by_mime_type_with_filter(mime_type: str) -> None:
    """A mime.type equal to or containing 'tar' picks TAR; the File Filter finds on the name."""
    runner = _run(_tar(), {"mime.type": mime_type}, file_filter="^folder/date.txt$")
    runner.assert_transfer_count("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("filename", "date.txt")
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "1")


def test_zip_entries_with_nifis_attributes() -> None:
    """TestUnpackContent.testZip: NONE encryption, size, Unix permissions, times, path."""
    runner = _run(_zip(), {"mime.type": "application/zip", "filename": "data.zip"})
    runner.assert_transfer_count("success", 2)
    stamp = time.strftime(
        "%Y-%m-%dT%H:%M:%S%z", time.localtime(time.mktime((2024, 1, 2, 3, 4, 6, 0, 0, -1)))
    )
    for out, (name, data) in zip(runner.flowfiles_for("success"), FILES.items(), strict=True):
        out.assert_content_equals(data)
        out.assert_attribute_equals("filename", name.split("/")[1])
        out.assert_attribute_equals("path", "folder")  # NiFi's ZIP path has no trailing /
        out.assert_attribute_equals("file.encryptionMethod", "NONE")
        out.assert_attribute_equals("file.permissions", "rw-r-----")
        out.assert_attribute_equals("file.size", str(len(data)))
        out.assert_attribute_equals("file.lastModifiedTime", stamp)
        out.assert_attribute_equals("segment.original.filename", "data")


def test_bad_data_goes_to_failure_with_nothing_unpacked() -> None:
    """testZipHandlesBadData/testTarHandlesBadData: the wrong format fails, no FORK."""
    for content, fmt in ((_tar(), "zip"), (_zip(), "tar"), (b"", "tar")):
        runner = _run(content, packaging_format=fmt)
        runner.assert_all_flowfiles_transferred("failure", 1)
        runner.flowfiles_for("failure")[0].assert_content_equals(content)
        assert all(e.event_type is not ProvenanceEventType.FORK for e in runner.provenance_events)


def test_a_sparse_tar_entry_goes_to_failure_unread() -> None:
    """A GNU sparse entry (a 10 KB archive declaring 1 MiB of holes) is refused, in a TAR and
    in a FlowFile Tar v1 package: nothing unpacked, the input to failure as it came."""
    tar = sparse_tar({"plain.txt": b"plain"}, "holes.bin", 1 << 20)
    for content, fmt in ((tar, "tar"), (sparse_package_v1(1 << 20), "flowfile-tar-v1")):
        runner = _run(content, packaging_format=fmt)
        runner.assert_all_flowfiles_transferred("failure", 1)
        runner.flowfiles_for("failure")[0].assert_content_equals(content)


def test_mime_type_missing_or_other() -> None:
    """No mime.type: failure; an unknown one: success untouched, as NiFi does."""
    _run(_tar()).assert_all_flowfiles_transferred("failure", 1)
    runner = _run(b"text", {"mime.type": "text/plain"})
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(b"text")


def test_a_filter_matching_nothing_is_a_failure() -> None:
    """No entry selected means nothing unpacked: NiFi routes the input to failure."""
    _run(_tar(), packaging_format="tar", file_filter="nope").assert_all_flowfiles_transferred(
        "failure", 1
    )


def test_stored_entries_with_data_descriptor_need_the_property() -> None:
    """A STORED entry with a data descriptor fails unless the property allows it."""

    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: bytes) -> int:
            self.data += b
            return len(b)

    out = Unseekable()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("a.txt", b"hello")
    content = bytes(out.data)
    _run(content, packaging_format="zip").assert_all_flowfiles_transferred("failure", 1)
    allowed = _run(
        content, packaging_format="zip", allow_stored_entries_with_data_descriptor="true"
    )
    allowed.flowfiles_for("success")[0].assert_content_equals(b"hello")


def test_aes_zip_needs_its_password() -> None:
    """testZipEncryptionAes: AES entries read with Password; without it, failure."""
    buf = io.BytesIO()
    with pyzipper.AESZipFile(
        buf, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES
    ) as archive:
        archive.setpassword(b"String")
        archive.writestr("secret.txt", b"org.apache.nifi.util.TestRunner")
    runner = _run(buf.getvalue(), packaging_format="zip", password="String")
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"org.apache.nifi.util.TestRunner")
    out.assert_attribute_equals("file.encryptionMethod", "AES")
    _run(buf.getvalue(), packaging_format="zip").assert_all_flowfiles_transferred("failure", 1)
    _run(buf.getvalue(), packaging_format="zip", password="wrong").assert_all_flowfiles_transferred(
        "failure", 1
    )


def test_cp437_names() -> None:
    """Filename Character Set decodes names a ZIP does not flag as UTF-8 (Cp437)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        info = zipfile.ZipInfo("x")
        archive.writestr(info, b"1")
    raw = buf.getvalue().replace(b"x", "\u00e4".encode("cp437"))  # the name, in both headers
    runner = _run(raw, packaging_format="zip", filename_character_set="Cp437")
    runner.flowfiles_for("success")[0].assert_attribute_equals("filename", "\u00e4")


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_entry_names_cannot_escape(fmt: str) -> None:
    """../ and absolute names become relative path and filename: PutFile stays inside."""
    files = {"../../etc/passwd": b"x", "/abs/evil.sh": b"y", "a\\..\\..\\b.txt": b"z"}
    content = _tar(files) if fmt == "tar" else _zip(files)
    runner = _run(content, packaging_format=fmt)
    places = [
        (f.attributes["path"], f.attributes["filename"]) for f in runner.flowfiles_for("success")
    ]
    slash = "/" if fmt == "tar" else ""
    assert places == [(f"etc{slash}", "passwd"), (f"abs{slash}", "evil.sh"), ("/", "b.txt")]


def test_zip_bombs_are_refused() -> None:
    """Overlapping entries and a declared size past the expansion limit go to failure."""
    one = _zip({"a.txt": b"x" * 1000})
    # a second central directory entry pointing at the first entry's data: overlap
    start = one.rindex(b"PK\x01\x02")
    end = one.rindex(b"PK\x05\x06")
    central = one[start:end]
    record = bytearray(one[end:])
    record[8:10] = record[10:12] = (2).to_bytes(2, "little")
    record[12:16] = (2 * len(central)).to_bytes(4, "little")
    doubled = one[:start] + central + central + bytes(record)
    assert len(zipfile.ZipFile(io.BytesIO(doubled)).infolist()) == 2
    _run(doubled, packaging_format="zip").assert_all_flowfiles_transferred("failure", 1)
    declared = bytearray(one)  # the central directory claims 3 GB for the 1000 bytes
    declared[start + 24 : start + 28] = (3 << 30).to_bytes(4, "little")
    runner = _run(bytes(declared), packaging_format="zip")
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_flowfile_stream_v3_restores_attributes() -> None:
    """testFlowFileStreamV3: each FlowFile back with its attributes, a new uuid, fragments."""
    package = b"".join(
        flowfile_stream_header(
            {"filename": name, "uuid": "u-1", "path": "p/"}, len(data), magic=True
        )
        + data
        for name, data in FILES.items()
    )
    runner = _run(package, {"filename": "data.flowfilev3"}, packaging_format="flowfile-stream-v3")
    outs = runner.flowfiles_for("success")
    assert [f.content for f in outs] == list(FILES.values())
    assert [f.attributes["filename"] for f in outs] == list(FILES)
    assert all(f.attributes["uuid"] != "u-1" for f in outs)
    for index, out in enumerate(outs, 1):
        out.assert_attribute_equals("mime.type", "application/octet-stream")
        out.assert_attribute_equals("fragment.index", str(index))
        out.assert_attribute_equals("fragment.count", "2")
        out.assert_attribute_equals("segment.original.filename", "data.flowfilev3")
    for cut in (package[:5], package[:-3], b"NiFiFF3\0\0"):
        _run(cut, packaging_format="flowfile-stream-v3").assert_all_flowfiles_transferred(
            "failure", 1
        )


def test_flowfile_stream_v2_and_tar_v1() -> None:
    """The deprecated v2 stream and Tar v1 package read back (every Tar v1 FlowFile)."""
    v2 = b"".join(
        flowfile_stream_header({"filename": n}, len(d), magic=False) + d for n, d in FILES.items()
    )
    runner = _run(v2, packaging_format="flowfile-stream-v2")
    assert [f.content for f in runner.flowfiles_for("success")] == list(FILES.values())
    buf = io.BytesIO()
    for name, data in FILES.items():
        with tarfile.open(fileobj=buf, mode="w") as archive:
            xml = properties_xml({"filename": name, "k": "<&>"})
            for entry, body in (("flowfile.attributes", xml), ("flowfile.content", data)):
                info = tarfile.TarInfo(entry)
                info.size = len(body)
                archive.addfile(info, io.BytesIO(body))
    runner = _run(buf.getvalue(), {"mime.type": "application/flowfile-v1"})
    outs = runner.flowfiles_for("success")
    assert [f.content for f in outs] == list(FILES.values())
    outs[0].assert_attribute_equals("k", "<&>")


def test_packaged_fragment_identifiers_are_kept() -> None:
    """testFlowFileStreamPreservesExistingFragmentAttributes: MergeContent v3, then unpack."""
    merge = TestRunner(
        MergeContent(
            merge_format="FlowFile Stream, v3",
            minimum_number_of_entries=2,
            maximum_number_of_entries=2,
        )
    )
    common = {
        "fragment.identifier": "existing-fragment-id",
        "fragment.count": "2",
        "segment.original.filename": "original-archive",
    }
    merge.enqueue(b"Hello ", {**common, "fragment.index": "1"})
    merge.enqueue(b"World", {**common, "fragment.index": "2"})
    merge.run()
    packed = merge.flowfiles_for("merged")[0]
    runner = _run(packed.content, dict(packed.attributes))
    outs = runner.flowfiles_for("success")
    assert [f.content for f in outs] == [b"Hello ", b"World"]
    for index, out in enumerate(outs, 1):
        out.assert_attribute_equals("fragment.identifier", "existing-fragment-id")
        out.assert_attribute_equals("segment.original.filename", "original-archive")
        out.assert_attribute_equals("fragment.index", str(index))


@pytest.mark.parametrize("fmt", ["TAR", "ZIP", "FlowFile Stream, v3", "FlowFile Tar, v1"])
def test_merge_content_then_unpack_content_round_trip(fmt: str) -> None:
    """MergeContent's bundle unpacks to the same contents, names and (packages) attributes."""
    merge = TestRunner(
        MergeContent(merge_format=fmt, minimum_number_of_entries=3, maximum_number_of_entries=3)
    )
    inputs = [(f"f{i}.txt", f"content {i}\n".encode() * (i + 1)) for i in range(3)]
    for name, data in inputs:
        merge.enqueue(data, {"filename": name, "colour": "blue"})
    merge.run()
    bundle = merge.flowfiles_for("merged")[0]
    runner = _run(bundle.content, dict(bundle.attributes))
    outs = runner.flowfiles_for("success")
    assert [(f.attributes["filename"], f.content) for f in outs] == inputs
    if fmt.startswith("FlowFile"):
        assert all(f.attributes["colour"] == "blue" for f in outs)


def test_unpack_in_a_flow_then_put_file(tmp_path: Path) -> None:
    """GetFile -> UnpackContent -> PutFile to ${path}: the tree is rebuilt, FORK recorded."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "data.tar").write_bytes(_tar({**FILES, "../escape.txt": b"e"}))
    flow = Flow("unpack")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    unpack = flow.add(UnpackContent(packaging_format="tar"), name="unpack")
    put = flow.add(PutFile(directory=str(tmp_path / "out") + "/${path}"), name="put")
    flow.connect(get, unpack)
    flow.connect(unpack, put, "success")
    flow.auto_terminate(unpack, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("unpack", "success") == 3
    assert result.count("put", "success") == 3
    for name, data in FILES.items():
        assert (tmp_path / "out" / name).read_bytes() == data
    assert (tmp_path / "out" / "escape.txt").read_bytes() == b"e"
    assert not (tmp_path / "escape.txt").exists()
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        forks = [
            e
            for e in repos.provenance.search(limit=100)
            if e.component_name == "unpack" and e.event_type is ProvenanceEventType.FORK
        ]
    finally:
        repos.close()
    assert len(forks) == 1
    assert len(forks[0].child_uuids) == 3


def test_a_password_on_foreign_or_damaged_bytes_fails_not_stuck() -> None:
    """With a Password (pyzipper), bytes that are not a ZIP, a cut ZIP and a ZIP whose data or
    directory is damaged each go to failure with the reason; nothing escapes as an error."""
    buf = io.BytesIO()
    with pyzipper.AESZipFile(
        buf, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES
    ) as archive:
        archive.setpassword(b"pw")
        archive.writestr("a.txt", b"hello" * 50)
    good = buf.getvalue()
    bad_data = bytearray(good)
    bad_data[60] ^= 0xFF  # inside the entry: its HMAC or CRC fails while it is read
    bad_directory = bytearray(good)
    start = good.rindex(b"PK\x01\x02")
    bad_directory[start : start + 4] = b"XXXX"
    for content in (b"not a zip at all", good[:-10], bytes(bad_data), bytes(bad_directory)):
        runner = _run(content, packaging_format="zip", password="pw")
        runner.assert_all_flowfiles_transferred("failure", 1)
        runner.flowfiles_for("failure")[0].assert_content_equals(content)
    _run(good, packaging_format="zip", password="pw").assert_transfer_count("success", 1)


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_more_entries_than_the_bound_fail_with_nothing_unpacked(
    fmt: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MAX_ENTRIES (lowered to 2 here) the archive goes to failure, saying so, unpacked
    into nothing; at the bound it unpacks."""
    monkeypatch.setattr(_unpackers, "MAX_ENTRIES", 2)
    files = {"a.txt": b"a", "b.txt": b"b", "c.txt": b"c"}
    three = _tar(files) if fmt == "tar" else _zip(files)
    runner = _run(three, packaging_format=fmt)
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert all(e.event_type is not ProvenanceEventType.FORK for e in runner.provenance_events)
    assert "holds more than 2 entries" in caplog.text
    two = (
        _tar(dict(list(files.items())[:2])) if fmt == "tar" else _zip(dict(list(files.items())[:2]))
    )
    _run(two, packaging_format=fmt).assert_transfer_count("success", 2)
