"""Tests for PutEmail against a real SMTP server on loopback (aiosmtpd), NiFi's cases."""

from __future__ import annotations

import email
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from email.header import decode_header, make_header
from email.message import Message

import attrs
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import PutEmail


@attrs.define
class Received:
    """One message as the server got it: envelope and parsed message."""

    mail_from: str
    rcpt_tos: list[str]
    message: Message


@attrs.define
class Inbox:
    """What the test server received, and the logins it accepted."""

    messages: list[Received] = attrs.field(factory=list)
    logins: list[tuple[str, str]] = attrs.field(factory=list)

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        parsed = email.message_from_bytes(envelope.original_content or envelope.content)
        self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), parsed))
        return "250 Message accepted for delivery"

    def authenticate(self, server, session, envelope, mechanism, auth_data):  # type: ignore[no-untyped-def]
        if isinstance(auth_data, LoginPassword):
            login = (auth_data.login.decode(), auth_data.password.decode())
            if login == ("nifi", "s3cret"):
                self.logins.append(login)
                return AuthResult(success=True)
        return AuthResult(success=False, handled=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on loopback (AUTH offered without TLS), stopped after the test."""
    inbox = Inbox()
    port = _free_port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=inbox.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def runner_for(port: int, **properties: object) -> TestRunner:
    base = {
        "smtp_hostname": "127.0.0.1",
        "smtp_port": str(port),
        "smtp_x_mailer_header": "TestingNiFi",
        "from": "test@apache.org,from@apache.org",
        "to": "recipient@apache.org,another@apache.org",
    }
    return TestRunner(PutEmail(**{**base, **properties}))


def text_of(message: Message) -> str:
    part = message.get_payload(0) if message.is_multipart() else message
    assert isinstance(part, Message)
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode(part.get_content_charset() or "utf-8")


def decoded(value: str) -> str:
    return str(make_header(decode_header(value)))


def test_outgoing_message(smtp: tuple[Inbox, int]) -> None:
    """From, To, X-Mailer, text; a SEND to mailto:<first recipient> (testOutgoingMessage)."""
    inbox, port = smtp
    runner = runner_for(
        port, to="recipient@apache.org", message="Message Body", **{"from": "test@apache.org"}
    )
    runner.enqueue(b"Some Text")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (got,) = inbox.messages
    assert got.mail_from == "test@apache.org"
    assert got.rcpt_tos == ["recipient@apache.org"]
    assert got.message["From"] == "test@apache.org"
    assert got.message["To"] == "recipient@apache.org"
    assert got.message["X-Mailer"] == "TestingNiFi"
    assert got.message["Subject"] == "Message from NiFi"
    assert got.message["Cc"] is None
    assert got.message["Bcc"] is None
    assert got.message.get_content_type() == "text/plain"
    assert text_of(got.message) == "Message Body"
    (send,) = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.SEND]
    assert send.transit_uri == "mailto:recipient@apache.org"


def test_optional_properties_from_attributes(smtp: tuple[Inbox, int]) -> None:
    """EL addresses, Reply-To, CC, BCC on the envelope only, attribute headers, non-ASCII."""
    inbox, port = smtp
    runner = runner_for(
        port,
        smtp_x_mailer_header="TestingNíFiNonASCII",
        message="${message}",
        to="${to}",
        bcc="${bcc}",
        cc="${cc}",
        reply_to="${reply-to}",
        attributes_to_send_as_headers_regular_expression="Precedence.*",
        **{"from": "${from}"},
    )
    runner.enqueue(
        b"Some Text",
        {
            "from": "test@apache.org <NiFi>",
            "message": "the message body",
            "to": "to@apache.org",
            "bcc": "bcc@apache.org",
            "cc": "cc@apache.org",
            "reply-to": "replytome@apache.org",
            "Precedence": "bulk",
            "PrecedenceEncodeDecodeTest": "búlk",
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (got,) = inbox.messages
    message = got.message
    assert message["From"] == '"test@apache.org" <NiFi>'
    assert got.mail_from == "NiFi"
    assert got.rcpt_tos == ["to@apache.org", "cc@apache.org", "bcc@apache.org"]
    assert message["Cc"] == "cc@apache.org"
    assert message["Bcc"] is None
    assert message["Reply-To"] == "replytome@apache.org"
    assert message["Precedence"] == "bulk"
    assert decoded(message["PrecedenceEncodeDecodeTest"]) == "búlk"
    assert decoded(message["X-Mailer"]) == "TestingNíFiNonASCII"
    assert text_of(message) == "the message body"


def test_invalid_or_empty_from_fails_without_sending(smtp: tuple[Inbox, int]) -> None:
    """An unparsable or empty From sends nothing and routes to failure (testInvalidAddress)."""
    inbox, port = smtp
    for sender in ("test@apache.org <invalid", "${MISSING_PROPERTY}"):
        runner = runner_for(port, message="Message Body", **{"from": sender})
        runner.enqueue(b"Some Text")
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        assert runner.queue_size() == 0
    assert inbox.messages == []


def test_attachment(smtp: tuple[Inbox, int]) -> None:
    """Attach File: multipart/mixed, text then the content named by filename (non-ASCII)."""
    inbox, port = smtp
    runner = runner_for(port, message="Message Body", attach_file="true", content_type="text/html")
    name = "test한的ほ\u0443\u0301.pdf"  # NiFi's test name, with a Cyrillic u and an accent
    runner.enqueue(b"Some text", {"filename": name, "mime.type": "application/pdf"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    message = inbox.messages[0].message
    assert message.get_content_type() == "multipart/mixed"
    body, attached = message.get_payload()
    assert body.get_content_type() == "text/html"
    assert text_of(message) == "Message Body"
    assert attached.get_content_type() == "application/pdf"
    assert attached.get_filename() == name
    assert attached.get_payload(decode=True) == b"Some text"


def test_content_as_message_and_all_recipients(smtp: tuple[Inbox, int]) -> None:
    """FlowFile Content as Message (EL) replaces Message; several From/To/CC/BCC addresses."""
    inbox, port = smtp
    runner = runner_for(
        port,
        message="${body}",
        cc="recipientcc@apache.org,anothercc@apache.org",
        bcc="recipientbcc@apache.org,anotherbcc@apache.org",
        flowfile_content_as_message="${sendContent}",
    )
    runner.enqueue(b"Some Text", {"sendContent": "true", "body": "Message Body"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    got = inbox.messages[0]
    assert text_of(got.message) == "Some Text"
    assert got.message["From"] == "test@apache.org, from@apache.org"
    assert got.message["To"] == "recipient@apache.org, another@apache.org"
    assert got.rcpt_tos == [
        "recipient@apache.org",
        "another@apache.org",
        "recipientcc@apache.org",
        "anothercc@apache.org",
        "recipientbcc@apache.org",
        "anotherbcc@apache.org",
    ]


def test_include_all_attributes(smtp: tuple[Inbox, int]) -> None:
    """Include All Attributes In Message appends NiFi's metadata block to the text."""
    inbox, port = smtp
    runner = runner_for(port, message="hi", include_all_attributes_in_message="true")
    runner.enqueue(b"abc", {"colour": "blue"})
    runner.run()
    text = text_of(inbox.messages[0].message)
    assert text.startswith("hi\n\n--------------------------------------------------\n")
    assert "\nStandard FlowFile Metadata:" in text
    assert "\n\tfileSize = '3'" in text
    assert "\n\tcolour = 'blue'" in text


def test_login_when_auth_and_username(smtp: tuple[Inbox, int]) -> None:
    """SMTP Auth with a username logs in on a plain connection asked for; a wrong password ends
    in failure, nothing sent."""
    inbox, port = smtp
    plain = {"smtp_socket_factory": "javax.net.SocketFactory"}
    runner = runner_for(port, message="m", smtp_username="nifi", smtp_password="s3cret", **plain)
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert inbox.logins == [("nifi", "s3cret")]
    runner = runner_for(port, message="m", smtp_username="nifi", smtp_password="wrong", **plain)
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert len(inbox.messages) == 1


def test_a_tls_handshake_that_fails_never_sends_the_password(smtp: tuple[Inbox, int]) -> None:
    """NiFi's default socket factory tries TLS and falls back to plain; with no STARTTLS then,
    the password is not sent in the clear: failure, no login, nothing sent. Without a password
    the fallback still delivers, as NiFi's does."""
    inbox, port = smtp
    runner = runner_for(port, message="m", smtp_username="nifi", smtp_password="s3cret")
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert inbox.logins == []
    assert inbox.messages == []
    runner = runner_for(port, message="m")
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)


def test_unreachable_server_fails() -> None:
    """No server listening: failure, and the processor yields (testExceptionWhenSending)."""
    runner = runner_for(_free_port(), message="m")
    runner.enqueue(b"x")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_validation() -> None:
    """A recipient is required; mail.smtp.* dynamic properties only, never a mapped one."""
    base = {"smtp_hostname": "h", "from": "a@b.c"}
    TestRunner(PutEmail(**base)).assert_not_valid()
    TestRunner(PutEmail(**base, bcc="x@y.z")).assert_valid()
    ok = {"mail.smtp.timeout": "5000", "mail.smtps.timeout": "5000"}
    TestRunner(PutEmail(**base, to="x@y.z", **ok)).assert_valid()
    TestRunner(PutEmail(**base, to="x@y.z", **{"mail.": "v"})).assert_not_valid()
    TestRunner(PutEmail(**base, to="x@y.z", **{"mail.smtp.user": "u"})).assert_not_valid()
    TestRunner(PutEmail(**base, to="x@y.z", input_character_set="NOT A CHARSET")).assert_not_valid()
    oauth = PutEmail(**base, to="x@y.z", authorization_mode="oauth-based-authorization-mode")
    TestRunner(oauth).assert_not_valid()
    legacy = PutEmail(**base, to="x@y.z", **{"SMTP TLS": "true", "input-character-set": "UTF-8"})
    assert legacy.effective_value(PutEmail.SMTP_TLS) == "true"
    assert PutEmail.SMTP_PASSWORD.sensitive


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
    ]
    command += ["-nodes", "-days", "1", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        [*command, "-subj", "/CN=127.0.0.1"],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def _serve(inbox: Inbox, **tls: object) -> tuple[Controller, int]:
    port = _free_port()
    controller = Controller(
        inbox, hostname="127.0.0.1", port=port, authenticator=inbox.authenticate, **tls
    )
    controller.start()
    return controller, port


def test_starttls(certificate: ssl.SSLContext) -> None:
    """SMTP START TLS upgrades before logging in; an untrusted certificate is a failure, and a
    server requiring STARTTLS refuses a client that does not use it."""
    inbox = Inbox()
    controller, port = _serve(inbox, tls_context=certificate, require_starttls=True)
    try:
        login = {"smtp_username": "nifi", "smtp_password": "s3cret", "message": "m"}
        runner = runner_for(port, smtp_start_tls="true", **login, **{"mail.smtp.ssl.trust": "*"})
        runner.enqueue(b"x")
        runner.run()
        runner.assert_all_flowfiles_transferred("success", 1)
        assert inbox.logins == [("nifi", "s3cret")]
        for properties in ({"smtp_start_tls": "true"}, {"smtp_start_tls": "false"}):
            runner = runner_for(port, **login, **properties)
            runner.enqueue(b"x")
            runner.run()
            runner.assert_all_flowfiles_transferred("failure", 1)
    finally:
        controller.stop()
    assert len(inbox.messages) == 1


def test_implicit_tls(certificate: ssl.SSLContext) -> None:
    """The default SSL socket factory speaks TLS from the first byte to a port that wants it."""
    inbox = Inbox()
    port = _free_port()
    controller = Controller(
        inbox, hostname="127.0.0.1", port=port, ssl_context=certificate, auth_require_tls=False
    )
    controller.start()
    try:
        runner = runner_for(port, message="over TLS", **{"mail.smtp.ssl.trust": "127.0.0.1"})
        runner.enqueue(b"x")
        runner.run()
        runner.assert_all_flowfiles_transferred("success", 1)
    finally:
        controller.stop()
    assert text_of(inbox.messages[0].message) == "over TLS"
