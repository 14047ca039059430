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
