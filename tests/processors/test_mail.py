"""Tests for processors._mail: JavaMail's lenient address lists and the MIME message built."""

from __future__ import annotations

import email
from email.header import decode_header, make_header

import pytest

from processors._mail import AddressError, MailAddress, build_message, parse_addresses


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a@b.c", [MailAddress("", "a@b.c")]),
        ("a@b.c, d@e.f", [MailAddress("", "a@b.c"), MailAddress("", "d@e.f")]),
        ("test@apache.org <NiFi>", [MailAddress("test@apache.org", "NiFi")]),
        ('"Doe, Jane" <jane@x.org>,bob@x.org', [
            MailAddress("Doe, Jane", "jane@x.org"), MailAddress("", "bob@x.org"),
        ]),
        (" , a@b.c ,", [MailAddress("", "a@b.c")]),
    ],
)  # fmt: skip
def test_lenient_address_lists(text: str, expected: list[MailAddress]) -> None:
    """Names, quoted commas, bare addresses and empty items read as InternetAddress.parse."""
    assert parse_addresses(text) == expected


@pytest.mark.parametrize("text", ["test@apache.org <invalid", "a b@c.d", "<>", 'x "y', "a <b> c"])
def test_unreadable_addresses(text: str) -> None:
    """An unclosed bracket or quote, spaces in a bare address, an empty one: AddressError."""
    with pytest.raises(AddressError):
        parse_addresses(text)


def test_message_headers_and_bcc() -> None:
    """From, To, Cc, Reply-To and headers are written, non-ASCII encoded; no Bcc header exists."""
    message = build_message(
        from_=[MailAddress("Jöhn", "j@x.org")],
        to=[MailAddress("", "t@x.org")],
        cc=[],
        reply_to=[MailAddress("", "r@x.org")],
        subject="Grüße",
        headers={"X-Mailer": "NiFi"},
        text="body é",
        content_type="text/html",
        charset="UTF-8",
    )
    parsed = email.message_from_bytes(message.as_bytes())
    assert str(make_header(decode_header(parsed["Subject"]))) == "Grüße"
    assert parsed["To"] == "t@x.org"
    assert parsed["Reply-To"] == "r@x.org"
    assert "Cc" not in parsed
    assert "Bcc" not in parsed
    assert parsed["Message-ID"]
    assert parsed.get_content_type() == "text/html"
    assert parsed.get_payload(decode=True).decode("utf-8") == "body é"
    assert "j@x.org" in parsed["From"]
