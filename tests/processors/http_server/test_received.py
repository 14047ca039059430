"""Tests for what a ListenHTTP body becomes: FlowFile packages, records, multipart parts."""

from __future__ import annotations

import pytest

from flowcore.controller_service import ServiceContext
from processors._packaging import flowfile_stream_header
from processors.http_server import _received
from processors.http_server._received import MAX_FLOWFILES_PER_REQUEST, Piece, Refused, received
from processors.record_services.csv import CSVRecordSetWriter
from processors.record_services.json import JsonTreeReader
from tests.processors.http_server._packages import package_v1, package_v3, sparse_package_v1

LIMIT = 16 << 20  # Max Request Body Size's default
FLOWFILE_V1 = "application/flowfile-v1"
FLOWFILE_V3 = "application/flowfile-v3"


def _records() -> tuple[object, object]:
    reader, writer = JsonTreeReader("reader"), CSVRecordSetWriter("writer")
    return reader.enable(ServiceContext(reader)), writer.enable(ServiceContext(writer))


def test_a_plain_body_is_one_flowfile_named_by_the_filename_header() -> None:
    """NiFi: the ``filename`` header names the FlowFile; other bodies are content as sent."""
    assert received(b"abc", {"filename": "a.txt"}, None, limit=LIMIT) == [
        Piece(b"abc", {"filename": "a.txt"})
    ]
    assert received(b"abc", {}, None, limit=LIMIT) == [Piece(b"abc", {})]


@pytest.mark.parametrize(
    ("content_type", "magic"),
    [("application/flowfile-v3", True), ("application/flowfile-v2", False)],
)
def test_a_flowfile_stream_package_unpacks_with_attributes_and_source_ids(
    content_type: str, magic: bool
) -> None:
    """v3 and v2: each packaged FlowFile with its attributes; its uuid is the source system
    FlowFile identifier (``urn:nifi:``), not an attribute; the header's filename fills in."""
    body = package_v3(
        ({"uuid": "u-1", "filename": "one", "k": "v"}, b"first"),
        ({"uuid": "u-2", "filename": " "}, b""),
        magic=magic,
    )
    pieces = received(body, {"Content-Type": content_type, "filename": "sent"}, None, limit=LIMIT)
    assert pieces == [
        Piece(b"first", {"filename": "one", "k": "v"}, "urn:nifi:u-1"),
        Piece(b"", {"filename": "sent"}, "urn:nifi:u-2"),
    ]


def test_a_flowfile_tar_v1_package_unpacks() -> None:
    """application/flowfile (any type starting so): NiFi's v1 unpackager, a tar."""
    body = package_v1({"uuid": "u-9", "path": "./"}, b"tarred")
    (piece,) = received(body, {"Content-Type": "application/flowfile"}, None, limit=LIMIT)
    assert piece == Piece(b"tarred", {"path": "./"}, "urn:nifi:u-9")


def test_package_types_are_matched_as_nifi_matches_them() -> None:
    """v3 and v2 only as the whole Content-Type (NiFi's equals): with a parameter the type
    still starts with application/flowfile, so NiFi's v1 (tar) unpackager takes it and fails;
    another type is content as sent."""
    body = package_v3(({"uuid": "u"}, b"x"))
    with pytest.raises(Refused):
        received(body, {"Content-Type": "application/flowfile-v3; q=1"}, None, limit=LIMIT)
    (piece,) = received(body, {"Content-Type": "application/octet-stream"}, None, limit=LIMIT)
    assert piece == Piece(body, {})


def test_a_broken_package_is_500_as_nifis_unpackager_fails() -> None:
    """A package cut short, or an empty one, is refused (500) and nothing is kept."""
    body = package_v3(({"uuid": "u"}, b"content"))[:-3]
    with pytest.raises(Refused) as cut:
        received(body, {"Content-Type": "application/flowfile-v3"}, None, limit=LIMIT)
    assert cut.value.status == 500
    with pytest.raises(Refused) as empty:
        received(b"", {"Content-Type": "application/flowfile-v3"}, None, limit=LIMIT)
    assert empty.value.status == 500


def test_records_are_written_with_the_record_writer() -> None:
    """NiFi's testPOSTRequestsReceivedWithRecordReader: the reader's records, the writer's
    format."""
    body = b'[{"id":1,"name":"rec1","code":101},{"id":2,"name":"rec2","code":102}]'
    (piece,) = received(body, {}, _records(), limit=LIMIT)
    assert piece.content == b"id,name,code\n1,rec1,101\n2,rec2,102\n"


def test_records_that_do_not_parse_are_400() -> None:
    """NiFi's testReturn400WhenInvalidPOSTRequestSentWithRecordReader: 400, nothing kept."""
    with pytest.raises(Refused) as refused:
        received(b'[{"id":1},{"id":', {}, _records(), limit=LIMIT)
    assert refused.value.status == 400
    assert refused.value.message.startswith("Could not process record")


def test_a_multipart_body_is_one_flowfile_per_part() -> None:
    """NiFi's testMultipartFormDataRequest: parts in order, http.multipart.* attributes."""
    body = (
        b'--b\r\nContent-Disposition: form-data; name="p1"\r\n\r\nv1\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file1"; filename="a.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\nHello World\r\n--b--\r\n"
    )
    pieces = received(body, {"Content-Type": "multipart/form-data; boundary=b"}, None, limit=LIMIT)
    assert [p.content for p in pieces] == [b"v1", b"Hello World"]
    first, second = (p.attributes for p in pieces)
    assert first["http.multipart.name"] == "p1"
    assert first["http.multipart.fragments.sequence.number"] == "1"
    assert first["http.multipart.fragments.total.number"] == "2"
    assert second["http.multipart.filename"] == "a.txt"
    assert second["http.multipart.content.type"] == "text/plain"
    assert second["http.multipart.size"] == "11"
    assert second["http.headers.multipart.Content-Type"] == "text/plain"  # as NiFi's test


def test_a_sparse_tar_v1_entry_is_refused_before_its_holes_are_filled() -> None:
    """A 10 KB package whose content entry is GNU sparse: refused (500), whether it declares
    more than the body limit or less, and its holes are never filled in memory."""
    for declared in (64 << 20, 1 << 20):
        with pytest.raises(Refused) as refused:
            received(sparse_package_v1(declared), {"Content-Type": FLOWFILE_V1}, None, limit=LIMIT)
        assert refused.value.status == 500
        assert "sparse" in refused.value.message


def test_a_tar_v1_body_gives_its_first_flowfile_only() -> None:
    """NiFi's FlowFileUnpackagerV1 reads one FlowFile; a second tar after it is ignored."""
    body = package_v1({"uuid": "u-1"}, b"one") + package_v1({"uuid": "u-2"}, b"two")
    assert received(body, {"Content-Type": FLOWFILE_V1}, None, limit=LIMIT) == [
        Piece(b"one", {}, "urn:nifi:u-1")
    ]


def test_declared_sizes_past_the_body_limit_are_413_before_they_are_read() -> None:
    """The entries' declared sizes together stay within Max Request Body Size: past it 413,
    also for a length of 2**62 that no body holds (it is checked, never allocated)."""
    body = package_v3(({"uuid": "a"}, b"123456"), ({"uuid": "b"}, b"123456"))
    assert len(received(body, {"Content-Type": FLOWFILE_V3}, None, limit=12)) == 2
    with pytest.raises(Refused) as past:
        received(body, {"Content-Type": FLOWFILE_V3}, None, limit=11)
    assert (past.value.status, "declare more than 11 bytes" in past.value.message) == (413, True)
    huge = flowfile_stream_header({"uuid": "c"}, 1 << 62, magic=True) + b"x"
    with pytest.raises(Refused) as declared:
        received(huge, {"Content-Type": FLOWFILE_V3}, None, limit=LIMIT)
    assert declared.value.status == 413
    tar = package_v1({"uuid": "d"}, b"x" * 100)
    with pytest.raises(Refused) as tarred:
        received(tar, {"Content-Type": FLOWFILE_V1}, None, limit=99)
    assert tarred.value.status == 413


def test_a_package_of_too_many_flowfiles_is_413() -> None:
    """At most MAX_FLOWFILES_PER_REQUEST FlowFiles from one request; one more: 413."""
    entry = package_v3(({"a": ""}, b""))
    most = received(
        entry * MAX_FLOWFILES_PER_REQUEST, {"Content-Type": FLOWFILE_V3}, None, limit=LIMIT
    )
    assert len(most) == MAX_FLOWFILES_PER_REQUEST
    with pytest.raises(Refused) as refused:
        received(
            entry * (MAX_FLOWFILES_PER_REQUEST + 1),
            {"Content-Type": FLOWFILE_V3},
            None,
            limit=LIMIT,
        )
    assert refused.value.status == 413
    assert f"more than {MAX_FLOWFILES_PER_REQUEST} FlowFiles" in refused.value.message


def test_a_multipart_body_of_too_many_parts_is_413(monkeypatch: pytest.MonkeyPatch) -> None:
    """The FlowFile bound covers a multipart body's parts too (here lowered to 1)."""
    monkeypatch.setattr(_received, "MAX_FLOWFILES_PER_REQUEST", 1)
    part = b'--b\r\nContent-Disposition: form-data; name="p"\r\n\r\nv\r\n'
    headers = {"Content-Type": "multipart/form-data; boundary=b"}
    assert len(received(part + b"--b--\r\n", headers, None, limit=LIMIT)) == 1
    with pytest.raises(Refused) as refused:
        received(part * 2 + b"--b--\r\n", headers, None, limit=LIMIT)
    assert refused.value.status == 413
