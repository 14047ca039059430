"""NiFi's packaging formats both ways, shared by MergeContent (packs) and UnpackContent (unpacks).

One copy of each byte layout, so what MergeContent writes UnpackContent reads:

- FlowFile Stream v3 (NiFi's ``FlowFilePackagerV3``/``FlowFileUnpackagerV3``): per FlowFile the
  magic ``NiFiFF3``, the attribute count, each key and value (UTF-8), the content length as a
  signed 8-byte big-endian integer, then the content. A count or string length below 65,535 is
  two big-endian bytes; from 65,535 up it is ``FF FF`` and four big-endian bytes. v2 is the
  same without the magic. A package is FlowFiles back to back.
- FlowFile Tar v1: per FlowFile a tar of ``flowfile.attributes`` (Java's properties XML) and
  ``flowfile.content``.
- Archive entry names made safe (:func:`contained`), for TAR/ZIP entries written and read.

Readers never trust a length field with memory: a string or content is read in chunks of at
most :data:`CHUNK` bytes, so a header claiming 2 GiB costs no more than the bytes that follow it.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO
from xml.etree import ElementTree

import attrs

__all__ = [
    "CHUNK",
    "MAGIC_V3",
    "Bounded",
    "PackagedFlowFile",
    "PackagingError",
    "contained",
    "flowfile_stream_header",
    "properties_xml",
    "read_flowfile_stream",
    "read_properties_xml",
]

CHUNK = 1 << 20  # bytes read at a time
MAGIC_V3 = b"NiFiFF3"
_MAX_2_BYTES = 65535


class PackagingError(ValueError):
    """The bytes are not in the packaging format they were read as (the message says where)."""


class Bounded:
    """At most *size* bytes of a shared stream: one entry's content.

    Reading it never reads past the entry, so the next entry starts where it ends;
    :meth:`skip` reads what the consumer left.
    """

    def __init__(self, stream: Any, size: int) -> None:
        self._stream = stream
        self.left = size

    def read(self, size: int = -1) -> bytes:
        wanted = self.left if size is None or size < 0 else min(size, self.left)
        data = self._stream.read(wanted) if wanted else b""
        self.left -= len(data)
        return data

    def skip(self) -> None:
        """Read what is left of the entry, in chunks (its bytes are not kept)."""
        while self.left and self.read(CHUNK):
            pass

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        """Nothing to close: the shared stream stays open for the next entry."""


# --- FlowFile Stream v3 and v2 ---------------------------------------------------------------


def _field_length(length: int) -> bytes:
    if length < _MAX_2_BYTES:
        return struct.pack(">H", length)
    return b"\xff\xff" + struct.pack(">I", length)


def _packed_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _field_length(len(data)) + data


#: Attribute names repeat in every header of a bundle: each is packed once.
_packed_name = functools.lru_cache(maxsize=4096)(_packed_string)


def flowfile_stream_header(attributes: Mapping[str, str], size: int, *, magic: bool) -> bytes:
    """The bytes NiFi's FlowFilePackagerV3 (or V2 without the magic) writes before content.

    The attributes go in name order: NiFi writes its map's hash order, which no reader depends
    on; name order makes the bytes a function of the attributes alone.
    """
    parts = [MAGIC_V3 if magic else b"", _field_length(len(attributes))]
    for key in sorted(attributes):
        parts.append(_packed_name(key))
        parts.append(_packed_string(attributes[key]))
    parts.append(size.to_bytes(8, "big", signed=True))
    return b"".join(parts)


@attrs.frozen
class PackagedFlowFile:
    """One FlowFile read from a package: its attributes and its content, still to be read.

    Attributes:
        attributes: the packaged attributes (``uuid`` included, as packed).
        size: the content's length in bytes.
        content: the content; read it before asking the package for the next FlowFile.
    """

    attributes: dict[str, str]
    size: int
    content: Bounded


def _exactly(stream: Any, size: int, what: str) -> bytes:
    """*size* bytes, read in chunks; :class:`PackagingError` when the stream ends first."""
    parts = []
    left = size
    while left:
        data = stream.read(min(left, CHUNK))
        if not data:
            msg = f"the package ends inside {what} ({size - left} of {size} bytes)"
            raise PackagingError(msg)
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def _read_length(stream: Any, what: str, *, first: bytes = b"") -> int:
    head = first + _exactly(stream, 2 - len(first), what)
    if head == b"\xff\xff":
        return struct.unpack(">I", _exactly(stream, 4, what))[0]
    return struct.unpack(">H", head)[0]


def _read_string(stream: Any, what: str) -> str:
    data = _exactly(stream, _read_length(stream, what), what)
    return data.decode("utf-8", "replace")  # Java's new String(bytes, UTF_8) replaces too


def read_flowfile_stream(stream: BinaryIO, *, version: int) -> Iterator[PackagedFlowFile]:
    """The FlowFiles of a FlowFile Stream package (v3 or v2), one after the other.

    Each one's content must be read (or left: it is skipped) before the next is asked for.
    An empty package yields nothing.

    Raises:
        PackagingError: the bytes are not a package of this version, or end inside one.
    """
    index = 0
    while True:
        first = stream.read(len(MAGIC_V3) if version == 3 else 1)
        if not first:
            return
        index += 1
        what = f"the header of packaged FlowFile {index}"
        if version == 3:
            if first != MAGIC_V3:
                msg = f"not in FlowFile-v3 format: packaged FlowFile {index} lacks 'NiFiFF3'"
                raise PackagingError(msg)
            count = _read_length(stream, what)
        else:
            count = _read_length(stream, what, first=first)
        if count == 0:
            msg = f"packaged FlowFile {index} has no attributes (FlowFiles cannot have none)"
            raise PackagingError(msg)
        attributes = {}
        for _ in range(count):
            key = _read_string(stream, what)
            attributes[key] = _read_string(stream, what)
        size = int.from_bytes(_exactly(stream, 8, what), "big", signed=True)
        if size < 0:
            msg = f"packaged FlowFile {index} declares a negative content length ({size})"
            raise PackagingError(msg)
        content = Bounded(stream, size)
        yield PackagedFlowFile(attributes, size, content)
        content.skip()
        if content.left:
            msg = f"the package ends inside the content of packaged FlowFile {index}"
            raise PackagingError(msg)


# --- FlowFile Tar v1 ---------------------------------------------------------------------------


def properties_xml(attributes: Mapping[str, str]) -> bytes:
    """Java's ``Properties.storeToXML`` of *attributes*, in name order (FlowFile Tar v1)."""

    def escape(text: str) -> str:
        return (
            text.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&quot;")
            .replace("'", "&apos;")
        )

    entries = "".join(
        f'\n  <entry key="{escape(k)}">{escape(v)}</entry>' for k, v in sorted(attributes.items())
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE properties\n'
        '  SYSTEM "http://java.sun.com/dtd/properties.dtd">\n'
        f"<properties>{entries}\n</properties>"
    ).encode()


def read_properties_xml(data: bytes) -> dict[str, str]:
    """The attributes of a ``flowfile.attributes`` entry (Java's ``Properties.loadFromXML``).

    The parser fetches no external DTD and bounds entity expansion (expat's own limits).

    Raises:
        PackagingError: the bytes are not a properties XML document.
    """
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as ex:
        msg = f"flowfile.attributes is not a properties XML document: {ex}"
        raise PackagingError(msg) from None
    if root.tag != "properties":
        msg = f"flowfile.attributes has the root <{root.tag}>, not <properties>"
        raise PackagingError(msg)
    return {e.get("key", ""): e.text or "" for e in root.iter("entry")}


# --- archive entry names ----------------------------------------------------------------------


def contained(name: str) -> str:
    r"""*name* as a relative path that stays inside the directory it is extracted into.

    ``\`` counts as a separator, absolute names and drive letters become relative, ``.`` and
    empty segments go, ``..`` climbs only within the name (never above it), NUL bytes become
    ``_``. The result may be empty (a name of only ``/``, ``.`` or ``..``).
    """
    kept: list[str] = []
    for part in name.replace("\\", "/").replace("\0", "_").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if kept:
                kept.pop()
            continue
        kept.append(part)
    if kept and len(kept[0]) >= 2 and kept[0][1] == ":" and kept[0][0].isalpha():
        kept[0] = kept[0][0] + kept[0][2:]  # a drive ("C:", "C:x") is a name, not a root
    return "/".join(kept)
