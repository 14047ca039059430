"""What one ListenHTTP request body becomes: FlowFiles unpacked from a package, records, content.

NiFi's ``ListenHTTPServlet``: a multipart/form-data body is one FlowFile per part, with
``http.multipart.*`` attributes (HandleHttpRequest's); otherwise a body whose Content-Type is
``application/flowfile-v3`` or ``-v2`` (exactly), or starts with ``application/flowfile``
(v1, the tar format), is a FlowFile package sent by another NiFi (InvokeHTTP, or 1.x's
PostHTTP, with the type MergeContent gives its packages): each packaged FlowFile is one
FlowFile with its attributes, its ``uuid`` kept as the RECEIVE event's source system
identifier (``urn:nifi:<uuid>``); a package that does not unpack is answered 500, as NiFi's
unpackager fails. Otherwise, with a Record Reader, the body's records are written with the
Record Writer (a body that does not parse: 400, nothing kept); otherwise the body is the
content. The ``filename`` header names a FlowFile whose package gave it no filename.

A package is bounded as the body is: its FlowFiles' declared sizes (a tar entry's size, a
Stream package's content lengths) may add up to Max Request Body Size at most, checked before an
entry is read (past it: 413), and a request gives at most :data:`MAX_FLOWFILES_PER_REQUEST`
FlowFiles (past it: 413; every FlowFile of a request is held in memory until its commit). A
FlowFile Tar v1 body gives its first FlowFile only, as NiFi's ``FlowFileUnpackagerV1``, and a
sparse entry in it is refused (500: its holes would be filled in memory).

It runs in the request's thread, before the request is held: a bad body is answered at once.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import attrs

from flowcore.errors import FlowcoreError
from flowcore.records.record_io import RECORD_FAILURES
from flowcore.records.schema import RecordSchema
from flowcore.session.streams import WriteStream, buffered
from processors._unpackers import UnpackError, flowfile_stream_entries, flowfile_tar_entries
from processors.http_server._multipart import MULTIPART, parse_multipart

__all__ = ["ACCEPT_HEADERS", "MAX_FLOWFILES_PER_REQUEST", "Piece", "Refused", "received"]

#: NiFi's StandardFlowFileMediaType values.
FLOWFILE_V3 = "application/flowfile-v3"
FLOWFILE_V2 = "application/flowfile-v2"
FLOWFILE_V1 = "application/flowfile-v1"
FLOWFILE_UNSPECIFIED = "application/flowfile"
#: What ListenHTTP's answer to HEAD tells a NiFi sender it takes (``ListenHTTPServlet.doHead``).
ACCEPT_HEADERS = (
    ("Accept-Encoding", "gzip"),
    (
        "Accept",
        f"{FLOWFILE_V3},{FLOWFILE_V2},{FLOWFILE_V1},{FLOWFILE_UNSPECIFIED},*/*;q=0.8",
    ),
    ("x-nifi-transfer-protocol-version", "3"),
)
#: The most FlowFiles one request gives (a package's, or a multipart body's parts): flowcore's
#: bound, NiFi has none. Every FlowFile of a request is held in memory, in one work item, until
#: its commit; 16 MB of 22-byte FlowFile Stream v3 entries would otherwise be 763,000 of them.
#: It is ListenHTTP's requests per trigger too, and ten times MergeContent's default Maximum
#: Number of Entries: a NiFi sender's merged packages stay well within it.
MAX_FLOWFILES_PER_REQUEST = 10_000
_BAD_REQUEST = 400
_TOO_LARGE = 413
_SERVER_ERROR = 500


class Refused(Exception):
    """The body cannot be taken: the request is answered *status* with *message*."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@attrs.frozen
class Piece:
    """One FlowFile a request gives.

    Attributes:
        content: its bytes.
        attributes: the attributes its package or the request's ``filename`` header gives.
        source_id: the sender's FlowFile identifier (``urn:nifi:<uuid>``), if packaged.
    """

    content: bytes
    attributes: Mapping[str, str]
    source_id: str | None = None


def received(
    body: bytes, headers: Mapping[str, str], records: tuple[Any, Any] | None, *, limit: int
) -> list[Piece]:
    """The FlowFiles of a request with *body* and *headers*.

    Args:
        body: the request's body (inflated when it was gzipped).
        headers: the request's headers.
        records: the Record Reader and Record Writer, or None.
        limit: Max Request Body Size, bytes: what a package's FlowFiles may declare in all.

    Raises:
        Refused: a package that does not unpack (500), that declares more than *limit* bytes
            or holds more than :data:`MAX_FLOWFILES_PER_REQUEST` FlowFiles (413), or records
            that do not parse (400), or a reader that cannot find its schema (500): NiFi's
            ListenHttpException.
    """
    content_type = headers.get("Content-Type")
    if content_type and MULTIPART in content_type:  # NiFi: one FlowFile per part
        try:
            parts = parse_multipart(content_type, body, lower=False)
        except ValueError as error:
            raise Refused(_SERVER_ERROR, str(error)) from None
        _check_count(len(parts), "multipart/form-data body")
        return [Piece(p.content, dict(p.attributes)) for p in parts]
    filename = headers.get("filename")
    pieces = _unpacked(body, content_type, limit)
    if pieces is None:
        content = body if records is None else _converted(body, *records)
        return [Piece(content, {"filename": filename} if filename else {})]
    out = []
    for attributes, content in pieces:
        if not (attributes.get("filename") or "").strip() and filename and filename.strip():
            attributes["filename"] = filename
        uuid = attributes.pop("uuid", None)
        out.append(Piece(content, attributes, None if uuid is None else f"urn:nifi:{uuid}"))
    return out


def _unpacked(
    body: bytes, content_type: str | None, limit: int
) -> list[tuple[dict[str, str], bytes]] | None:
    """The packaged FlowFiles, or None when the body is not a package (NiFi's unpackager).

    Each entry's declared size is counted before its content is read: the entries' total
    stays within *limit* and their number within :data:`MAX_FLOWFILES_PER_REQUEST`.
    """
    stream = io.BytesIO(body)
    if content_type == FLOWFILE_V3:
        entries = flowfile_stream_entries(stream, 3)
    elif content_type == FLOWFILE_V2:
        entries = flowfile_stream_entries(stream, 2)
    elif content_type is not None and content_type.startswith(FLOWFILE_UNSPECIFIED):
        entries = flowfile_tar_entries(stream, first_only=True)  # NiFi: one FlowFile
    else:
        return None
    found: list[tuple[dict[str, str], bytes]] = []
    declared = 0
    try:
        for entry in entries:
            _check_count(len(found) + 1, f"{content_type} body")
            declared += entry.size or 0
            if declared > limit:
                msg = (
                    f"Payload Too Large: the {content_type} body's FlowFiles declare more than "
                    f"{limit} bytes of content (Max Request Body Size)"
                )
                raise Refused(_TOO_LARGE, msg)
            found.append((dict(entry.attributes), entry.content.read() if entry.content else b""))
    except UnpackError as error:  # NiFi: the unpackager's IOException, answered 500
        raise Refused(_SERVER_ERROR, f"{content_type} body cannot be unpacked: {error}") from None
    finally:
        entries.close()
    if not found:  # NiFi's unpackager reads one FlowFile at least: it fails on an empty body
        raise Refused(_SERVER_ERROR, f"{content_type} body holds no FlowFile")
    return found


def _check_count(count: int, what: str) -> None:
    """Refuse (413) a request giving more than :data:`MAX_FLOWFILES_PER_REQUEST` FlowFiles."""
    if count > MAX_FLOWFILES_PER_REQUEST:
        msg = (
            f"Payload Too Large: the {what} gives more than {MAX_FLOWFILES_PER_REQUEST} FlowFiles, "
            "the most flowcore takes from one request (each is held in memory until its "
            "commit): send smaller packages"
        )
        raise Refused(_TOO_LARGE, msg)


def _converted(body: bytes, reader: Any, writer: Any) -> bytes:
    """*body*'s records written with *writer* (NiFi's ``processRecord``)."""
    out = io.BytesIO()
    try:
        configured = reader.configured_schema({})
        record_writer = None
        target = WriteStream(out)
        for batch in reader.create_reader({}, buffered(io.BytesIO(body))):
            if record_writer is None:
                record_writer = writer.create_writer(batch.schema, {}, target)
            record_writer.write(batch)
        if record_writer is None:
            record_writer = writer.create_writer(configured or RecordSchema(()), {}, target)
        record_writer.finish()
    except RECORD_FAILURES as error:
        raise Refused(_BAD_REQUEST, f"Could not process record: {error}") from None
    except FlowcoreError as error:
        raise Refused(_SERVER_ERROR, f"Could not find schema: {error}") from None
    return out.getvalue()
