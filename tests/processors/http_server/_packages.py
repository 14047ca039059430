"""Test helper: FlowFile packages as a NiFi sender posts them (FlowFile Stream v3/v2, Tar v1)."""

from __future__ import annotations

import io
import tarfile

from processors._packaging import flowfile_stream_header, properties_xml


def package_v3(*flowfiles: tuple[dict[str, str], bytes], magic: bool = True) -> bytes:
    """FlowFiles packed as NiFi's FlowFilePackagerV3 packs them (v2 without *magic*)."""
    return b"".join(
        flowfile_stream_header(attributes, len(content), magic=magic) + content
        for attributes, content in flowfiles
    )


def package_v1(attributes: dict[str, str], content: bytes) -> bytes:
    """One FlowFile packed as NiFi's FlowFilePackagerV1 (a tar of attributes and content)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in (
            ("flowfile.attributes", properties_xml(attributes)),
            ("flowfile.content", content),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def sparse_member(name: str, declared: int) -> bytes:
    """A GNU sparse tar entry *name* declaring *declared* bytes but holding one block of them.

    ``tarfile`` cannot write one: the header is patched (its sparse map, one 512-byte block at
    the end, and its real size) and its checksum made again.
    """
    info = tarfile.TarInfo(name)
    info.size = 512  # the bytes the entry holds
    info.type = tarfile.GNUTYPE_SPARSE
    header = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    header[386:398] = b"%011o\0" % (declared - 512)  # the block's offset in the file
    header[398:410] = b"%011o\0" % 512  # its length
    header[482] = 0  # no extended sparse headers
    header[483:495] = b"%011o\0" % declared  # the file's real size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header[:512])
    return bytes(header) + b"z" * 512


def sparse_tar(files: dict[str, bytes], name: str, declared: int) -> bytes:
    """A tar of *files*, then the sparse entry *name* declaring *declared* bytes."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for file, data in files.items():
            info = tarfile.TarInfo(file)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        archive.fileobj.write(sparse_member(name, declared))  # type: ignore[union-attr]
        archive.offset += 1024  # the header and its one block, so that close() pads after them
    return out.getvalue()


def sparse_package_v1(declared: int) -> bytes:
    """A FlowFile Tar v1 package whose ``flowfile.content`` is a sparse entry of *declared*."""
    attributes = properties_xml({"filename": "sparse"})
    return sparse_tar({"flowfile.attributes": attributes}, "flowfile.content", declared)
