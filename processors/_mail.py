"""PutEmail's two halves apart from the processor: build a MIME message, send it over SMTP.

Both follow what NiFi's PutEmail gets from JavaMail: addresses parsed as
``InternetAddress.parse`` does (lenient: ``test@apache.org <NiFi>`` is a display name and an
address), the Bcc recipients on the envelope only, a multipart/mixed message when the content is
attached, and a connection per message (``Transport.send``), upgraded with STARTTLS when asked
and offered, authenticated when SMTP Auth is on and a username is set and the server offers AUTH.
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email import encoders
from email.charset import Charset
from email.header import Header
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formataddr, formatdate, make_msgid

import attrs

__all__ = [
    "AddressError",
    "MailAddress",
    "SmtpSettings",
    "build_message",
    "parse_addresses",
    "send_message",
]


class AddressError(ValueError):
    """An address list that cannot be parsed (JavaMail's AddressException)."""


@attrs.frozen
class MailAddress:
    """One address of an address list: its display name (may be empty) and the address."""

    personal: str
    address: str

    def formatted(self, charset: str = "utf-8") -> str:
        """The header form: ``"Name" <address>``, or the bare address."""
        if not self.personal:
            return self.address
        return formataddr((self.personal, self.address), charset=charset)


def _split(value: str) -> list[str]:
    """*value* split on the commas outside quotes and angle brackets."""
    items, current, quoted, angled = [], [], False, False
    for char in value:
        if char == '"' and not angled:
            quoted = not quoted
        elif char == "<" and not quoted:
            angled = True
        elif char == ">" and not quoted:
            angled = False
        if char == "," and not quoted and not angled:
            items.append("".join(current))
            current = []
            continue
        current.append(char)
    items.append("".join(current))
    if quoted or angled:
        msg = "an unclosed quote or angle bracket"
        raise AddressError(msg)
    return items


def parse_addresses(value: str) -> list[MailAddress]:
    """Parse a comma-separated address list as JavaMail's lenient ``InternetAddress.parse``.

    Raises:
        AddressError: an item has an unclosed ``<``, text after its ``>``, an empty address,
            or a bare address with spaces in it.
    """
    out = []
    for raw in _split(value):
        item = raw.strip()
        if not item:
            continue
        if "<" in item:
            before, _, rest = item.partition("<")
            address, _, after = rest.partition(">")
            if after.strip() or not address.strip():
                msg = f"cannot read {item!r} as an address"
                raise AddressError(msg)
            personal = before.strip()
            if len(personal) >= 2 and personal[0] == personal[-1] == '"':
                personal = personal[1:-1]
            out.append(MailAddress(personal, address.strip()))
        elif any(c.isspace() for c in item) or '"' in item:
            msg = f"cannot read {item!r} as an address"
            raise AddressError(msg)
        else:
            out.append(MailAddress("", item))
    return out


def _header_value(value: str) -> str | Header:
    """A header value, RFC 2047 encoded when it is not ASCII (JavaMail's ``encodeText``)."""
    return value if value.isascii() else Header(value, "utf-8")


def build_message(
    *,
    from_: Sequence[MailAddress],
    to: Sequence[MailAddress],
    cc: Sequence[MailAddress],
    reply_to: Sequence[MailAddress],
    subject: str,
    headers: Mapping[str, str],
    text: str,
    content_type: str,
    charset: str,
    attachment: tuple[bytes, str, str] | None = None,
) -> MIMEBase:
    """The message to send: the text alone, or with *attachment* (content, mime type, name).

    The text's Content-Type is *content_type* with ``charset`` (NiFi: ``text/plain;
    charset="UTF-8"``); the Bcc recipients are not written (the envelope carries them).
    """
    body_charset = Charset(charset)
    body = MIMEText(text, "plain", body_charset)  # the transfer encoding the charset calls for
    body.replace_header("Content-Type", f'{content_type}; charset="{charset}"')
    if attachment is None:
        message: MIMEBase = body
    else:
        data, mime_type, filename = attachment
        maintype, _, subtype = mime_type.partition("/")
        part = MIMEBase(maintype or "application", subtype or "octet-stream")
        part.set_payload(data)
        encoders.encode_base64(part)
        name: str | tuple[str, str, str] = (
            filename if filename.isascii() else ("utf-8", "", filename)
        )
        part.add_header("Content-Disposition", "attachment", filename=name)
        message = MIMEMultipart("mixed")
        message.attach(body)
        message.attach(part)
    message["From"] = ", ".join(a.formatted() for a in from_)
    if to:
        message["To"] = ", ".join(a.formatted() for a in to)
    if cc:
        message["Cc"] = ", ".join(a.formatted() for a in cc)
    if reply_to:
        message["Reply-To"] = ", ".join(a.formatted() for a in reply_to)
    for key, value in headers.items():
        message[key] = _header_value(value)
    message["Subject"] = _header_value(subject)
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid()
    return message


@attrs.frozen
class SmtpSettings:
    """How to reach and talk to the SMTP server for one message.

    Attributes:
        host: SMTP Hostname.
        port: SMTP Port.
        implicit_tls: try TLS from the first byte (NiFi's default SSLSocketFactory), falling
            back to a plain connection when the server does not speak TLS (JavaMail's
            ``socketFactory.fallback``); a certificate that fails verification is an error,
            never a fallback.
        require_implicit_tls: ``mail.smtp.ssl.enable``: TLS from the first byte, no fallback.
        starttls: SMTP START TLS: upgrade with STARTTLS when the server offers it.
        auth: SMTP Auth: log in when a username is set and the server offers AUTH.
        username: SMTP Username.
        password: SMTP Password.
        timeout: seconds for connecting and for each read (``mail.smtp.timeout``).
        verify: whether the server's certificate and name are checked (``mail.smtp.ssl.trust``
            ``*`` or naming the host turns it off, as JavaMail trusts such hosts).
    """

    host: str
    port: int
    implicit_tls: bool = False
    require_implicit_tls: bool = False
    starttls: bool = False
    auth: bool = True
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    timeout: float = 60.0
    verify: bool = True

    def tls_context(self) -> ssl.SSLContext:
        """The TLS context: the system's CAs, or no checks for a trusted host."""
        context = ssl.create_default_context()
        if not self.verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context


def _connect(settings: SmtpSettings) -> tuple[smtplib.SMTP, bool]:
    """An open connection, in implicit TLS where asked, and whether it fell back to plain.

    NiFi's default socket factory tries TLS and falls back to a plain connection when the
    handshake fails; :func:`send_message` then never sends a password over it.
    """
    if settings.implicit_tls or settings.require_implicit_tls:
        try:
            connection = smtplib.SMTP_SSL(
                settings.host,
                settings.port,
                timeout=settings.timeout,
                context=settings.tls_context(),
            )
        except ssl.SSLCertVerificationError:
            raise
        except (ssl.SSLError, smtplib.SMTPServerDisconnected, ConnectionResetError):
            if settings.require_implicit_tls:
                raise
        else:
            return connection, False
        return smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout), True
    return smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout), False


def send_message(
    settings: SmtpSettings, envelope_from: str, recipients: Sequence[str], message: bytes
) -> None:
    """Send one message over a connection of its own.

    Raises:
        smtplib.SMTPException: the server refused a step (or every recipient).
        OSError: the server cannot be reached, or the connection broke (``ssl.SSLError``,
            ``TimeoutError`` included).
    """
    connection, fell_back = _connect(settings)
    try:
        connection.ehlo_or_helo_if_needed()
        encrypted = isinstance(connection, smtplib.SMTP_SSL)
        if settings.starttls and not encrypted and connection.has_extn("starttls"):
            connection.starttls(context=settings.tls_context())
            connection.ehlo()
            encrypted = True
        if settings.auth and settings.username and connection.has_extn("auth"):
            if fell_back and not encrypted:
                # A broken TLS handshake (which anyone on the path can cause) must not turn
                # into the password sent in the clear.
                msg = (
                    f"{settings.host}:{settings.port} did not complete TLS and offers no "
                    "STARTTLS: the password is not sent over a plain connection"
                )
                raise smtplib.SMTPException(msg)
            connection.login(settings.username, settings.password or "")
        connection.sendmail(envelope_from, list(recipients), message)
    finally:
        try:
            connection.quit()
        except (smtplib.SMTPException, OSError):
            connection.close()
