"""Multipart/form-data bodies cut into their parts, as NiFi's servlets see them (Jetty's parts).

HandleHttpRequest and ListenHTTP both make one FlowFile per part, with NiFi's
``http.multipart.*`` and ``http.headers.multipart.*`` attributes.
"""

from __future__ import annotations

import email.parser
import email.policy
from collections.abc import Mapping

import attrs

__all__ = ["MULTIPART", "Part", "parse_multipart"]

MULTIPART = "multipart/form-data"


@attrs.frozen
class Part:
    """One part of a multipart/form-data body.

    Attributes:
        content: its bytes.
        attributes: its ``http.multipart.*`` and ``http.headers.multipart.*`` attributes.
        name: its form field name.
        is_file: whether it was sent as a file (a filename): not a form parameter then.
    """

    content: bytes
    attributes: Mapping[str, str]
    name: str | None
    is_file: bool


def parse_multipart(content_type: str, body: bytes, *, lower: bool = True) -> list[Part]:
    """The parts of the multipart/form-data *body* sent with *content_type*.

    *lower*: the part headers' names in ``http.headers.multipart.*`` are lower case (what
    NiFi's HandleHttpRequest tests find), or as sent (what NiFi's TestListenHTTP finds).

    Raises:
        ValueError: the body is not a well-formed multipart body.
    """
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not message.is_multipart() or message.defects:
        msg = f"the multipart body cannot be parsed: {message.defects or 'no parts'}"
        raise ValueError(msg)
    found = list(message.iter_parts())
    parts: list[Part] = []
    for index, part in enumerate(found):
        payload = part.get_payload(decode=True)
        content = payload if isinstance(payload, bytes) else b""
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        attributes = {
            f"http.headers.multipart.{k.lower() if lower else k}": str(v) for k, v in part.items()
        }
        attributes["http.multipart.size"] = str(len(content))
        if part.get("Content-Type") is not None:
            attributes["http.multipart.content.type"] = part.get_content_type()
        if name is not None:
            attributes["http.multipart.name"] = str(name)
        if filename is not None:
            attributes["http.multipart.filename"] = filename
        attributes["http.multipart.fragments.sequence.number"] = str(index + 1)
        attributes["http.multipart.fragments.total.number"] = str(len(found))
        parts.append(
            Part(content, attributes, None if name is None else str(name), filename is not None)
        )
    return parts
