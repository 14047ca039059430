"""HTTPS for the HTTP server processors: the TLS handshake, the client's certificate, its names.

ListenHTTP and HandleHttpRequest serve HTTPS when an SSL Context Service is set, as NiFi's
Jetty connectors do: the service's keystore is the server's certificate, its truststore the
authorities client certificates must lead to, and Client Authentication says whether a client
certificate is asked for (WANT) or required (REQUIRED: a handshake without one fails). The
handshake runs in the connection's own thread, so a slow client holds only its thread, and for
:data:`HANDSHAKE_DEADLINE_S` at most (the whole handshake, however slowly its bytes come).

Distinguished names are written as NiFi's ``StandardPrincipalFormatter`` writes them (RFC 1779,
most specific first, ``", "`` between elements: ``CN=client, O=Example, C=US``).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
from typing import Any

from flowcore.errors import ConfigurationError
from flowcore.ssl_context import StandardSSLContextService

__all__ = [
    "HANDLE_CLIENT_AUTH",
    "HANDSHAKE_DEADLINE_S",
    "TlsServerMixin",
    "certificate_attributes",
    "handshake",
    "listen_client_auth",
    "peer_certificate",
    "principal",
    "server_context",
    "warn_http2",
]

log = logging.getLogger(__name__)

#: Seconds a TLS handshake may take in all before its connection is closed. A handshake takes
#: milliseconds; a client that has not finished one in this time is stalled or trickling, and
#: holds a thread (HandleHttpRequest: one of its Maximum Threads) until then.
HANDSHAKE_DEADLINE_S = 10.0

#: HandleHttpRequest's Client Authentication values -> the policy they stand for.
HANDLE_CLIENT_AUTH = {
    "No Authentication": "NONE",
    "Want Authentication": "WANT",
    "Need Authentication": "REQUIRED",
}
# Java's X500Principal.RFC1779 keywords, and the two NiFi's formatter adds (UID, DC)
_KEYWORDS = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.1": "UID",
    "0.9.2342.19200300.100.1.25": "DC",
}


def server_context(
    service: object, client_auth: str, processor: str, property_name: str
) -> ssl.SSLContext:
    """The server context of the SSL Context Service *service*, for *client_auth*.

    Raises:
        ConfigurationError: *service* is not an SSL context service, or its stores cannot be
            used by a server (no keystore, unreadable).
    """
    if not isinstance(service, StandardSSLContextService):
        msg = (
            f"{processor}'s {property_name} names a {type(service).__name__}, not an SSL "
            "context service: name a StandardSSLContextService"
        )
        raise ConfigurationError(msg)
    context = service.create_server_context(client_auth)
    context.set_alpn_protocols(["http/1.1"])  # the standard library's server speaks HTTP/1.1
    return context


def warn_http2(context: Any, protocols: str | None, processor: str) -> None:
    """Say that HTTP Protocols asking for h2 only is served as HTTP/1.1 (a difference)."""
    if protocols == "H2":
        context.logger.warning(
            "%s: HTTP Protocols is h2 only, but flowcore serves HTTP/1.1 (over TLS, ALPN "
            "offers http/1.1): clients must be able to fall back to it",
            processor,
        )


def listen_client_auth(value: str | None, service: StandardSSLContextService) -> str:
    """ListenHTTP's policy: AUTO is REQUIRED with a truststore, NONE without (NiFi's rule)."""
    chosen = value or "AUTO"
    if chosen == "AUTO":
        return "REQUIRED" if service.truststore_filename else "NONE"
    return chosen


class TlsServerMixin:
    """A socketserver whose accepted connections are wrapped in TLS when :attr:`tls` is set.

    The handshake is left to the handler's thread (:func:`handshake`): the accepting loop
    never waits on a client.
    """

    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[Any, Any]:
        """The accepted connection, wrapped (handshake not done yet) when serving HTTPS."""
        connection, address = super().get_request()  # type: ignore[misc]
        if self.tls is None:
            return connection, address
        wrapped = self.tls.wrap_socket(connection, server_side=True, do_handshake_on_connect=False)
        return wrapped, address


def handshake(handler: Any, deadline_s: float) -> bool:
    """Complete the TLS handshake of *handler*'s connection; False (logged) when it fails.

    A plain connection passes at once. A client that shows no certificate where one is
    required, or one the truststore does not lead to, fails here: its connection is closed
    without an HTTP answer, as Jetty closes it. So does a client whose handshake is not done
    within *deadline_s* seconds in all: CPython's ``do_handshake`` takes the socket's timeout
    as the whole handshake's deadline (it does not restart with each byte received), so a
    client trickling its hello holds the connection's thread (a Maximum Threads slot of
    HandleHttpRequest) that long at most. The connection's own timeout is put back after.
    """
    connection = handler.connection
    if not isinstance(connection, ssl.SSLSocket):
        return True
    idle = connection.gettimeout()
    connection.settimeout(deadline_s)
    try:
        connection.do_handshake()
    except (ssl.SSLError, OSError) as error:
        log.info("TLS handshake with %s failed: %s", handler.client_address[0], error)
        handler.close_connection = True
        return False
    connection.settimeout(idle)
    return True


def peer_certificate(handler: Any) -> Any | None:
    """The client's certificate (a ``cryptography`` X.509 certificate), or None."""
    connection = handler.connection
    if not isinstance(connection, ssl.SSLSocket):
        return None
    try:
        der = connection.getpeercert(binary_form=True)
    except (ValueError, OSError):
        return None
    if not der:
        return None
    from cryptography import x509  # noqa: PLC0415 - only HTTPS listeners need it

    return x509.load_der_x509_certificate(der)


def principal(name: Any) -> str:
    """*name* (a ``cryptography`` ``x509.Name``) as NiFi's principal formatter writes it."""
    elements = []
    for rdn in reversed(list(name.rdns)):
        parts = []
        for attribute in rdn:
            oid = attribute.oid.dotted_string
            keyword = _KEYWORDS.get(oid, f"OID.{oid}")
            parts.append(f"{keyword}={_quoted(str(attribute.value))}")
        elements.append(" + ".join(parts))
    return ", ".join(elements)


def _quoted(value: str) -> str:
    """RFC 1779: a value with a special character is quoted."""
    if value and not any(c in value for c in ',+=\n<>#;"\\') and value.strip() == value:
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def certificate_attributes(certificate: Any) -> dict[str, str]:
    """NiFi's ``http.subject.dn``, ``http.issuer.dn`` and ``http.certificate.sans.N.*``."""
    from cryptography import x509  # noqa: PLC0415

    attributes = {
        "http.subject.dn": principal(certificate.subject),
        "http.issuer.dn": principal(certificate.issuer),
    }
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return attributes
    for index, general in enumerate(names):
        kind, value = _general_name(general)
        attributes[f"http.certificate.sans.{index}.nameType"] = kind
        attributes[f"http.certificate.sans.{index}.name"] = value
    return attributes


def _general_name(general: Any) -> tuple[str, str]:
    """RFC 3280's name of a general name's type, and its value as NiFi writes it."""
    from cryptography import x509  # noqa: PLC0415

    if isinstance(general, x509.RFC822Name):
        return "rfc822Name", general.value
    if isinstance(general, x509.DNSName):
        return "dNSName", general.value
    if isinstance(general, x509.UniformResourceIdentifier):
        return "uniformResourceIdentifier", general.value
    if isinstance(general, x509.IPAddress):
        address = general.value
        if isinstance(address, ipaddress.IPv6Address):
            return "iPAddress", socket.inet_ntop(socket.AF_INET6, address.packed)
        return "iPAddress", str(address)
    if isinstance(general, x509.DirectoryName):
        return "directoryName", principal(general.value)
    if isinstance(general, x509.RegisteredID):
        return "registeredID", general.value.dotted_string
    return "otherName", str(getattr(general, "value", general))
