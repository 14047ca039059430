"""StandardSSLContextService: key and trust stores a flow declares once and processors name.

NiFi's ``StandardSSLContextService`` holds a keystore (the client's certificate and key) and a
truststore (the certificates a server's chain must lead to), and hands a Java ``SSLContext`` to
the processors naming it (InvokeHTTP's ``SSL Context Service``). flowcore's service is the same
configuration as a frozen value, declared on the flow (``flow.add_service(...)``), shipped to
the tasks that use it, and turned into a Python :class:`ssl.SSLContext` there by
:meth:`StandardSSLContextService.create_context`.

Store types: ``PEM`` (a certificate chain and a private key in one file, or a CA bundle) and
``PKCS12`` (read with the ``cryptography`` package). Java's own ``JKS`` (and ``BCFKS``) formats
cannot be read from Python: such a store is refused with one line naming the ``keytool``
command that converts it, whether its type says so or its bytes do (JKS's magic number).

Passwords never show: the value's ``repr`` masks them, and an exported flow leaves them out
(they are sensitive properties, as in NiFi).
"""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path

import attrs

from flowcore.controller_service import ControllerService
from flowcore.errors import ConfigurationError
from flowcore.parameters import MASK
from flowcore.properties import AllowableValue, PropertyDescriptor

__all__ = ["STORE_TYPES", "TLS_PROTOCOLS", "StandardSSLContextService"]

#: Store types flowcore reads, and those it names a conversion for.
STORE_TYPES = ("PEM", "PKCS12")
_JAVA_ONLY = ("JKS", "BCFKS")
#: JKS files begin with this magic number (``0xFEEDFEED``).
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
#: NiFi's ``TLS Protocol`` values flowcore maps onto :class:`ssl.TLSVersion` bounds.
TLS_PROTOCOLS = {
    "TLS": (ssl.TLSVersion.TLSv1_2, None),
    "SSL": (ssl.TLSVersion.TLSv1_2, None),
    "TLSv1.2": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
    "TLSv1.3": (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
}


#: Field metadata of a secret: a Python export of the flow leaves it out.
_SECRET = {"sensitive": True}


def _store_type(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    upper = value.strip().upper()
    return "PKCS12" if upper in ("P12", "PKCS#12") else upper


def _check_name(instance: object, attribute: attrs.Attribute, value: str) -> None:
    del instance, attribute
    if not isinstance(value, str) or not value.strip():
        msg = f"a service needs a non-empty name (got {value!r})"
        raise ConfigurationError(msg)


def _conversion(path: str, kind: str) -> str:
    stem = Path(path).with_suffix(".p12")
    return (
        f"{kind} {path!r} is a Java JKS store, which flowcore cannot read; convert it to "
        f"PKCS12: keytool -importkeystore -srckeystore {path} -srcstoretype JKS "
        f"-destkeystore {stem} -deststoretype PKCS12"
    )


def _descriptor(display: str, name: str | None = None, **more: object) -> PropertyDescriptor:
    return PropertyDescriptor(display, name or display, **more)  # type: ignore[arg-type]


_STORE_TYPE_VALUES = tuple(AllowableValue(t) for t in ("PEM", "PKCS12", "JKS", "BCFKS"))
#: NiFi's StandardSSLContextService properties (display name, internal name), as it lists them.
SSL_PROPERTIES = (
    _descriptor("Keystore Filename"),
    _descriptor("Keystore Password", sensitive=True),
    _descriptor("Key Password", "key-password", sensitive=True),
    _descriptor("Keystore Type", allowable_values=_STORE_TYPE_VALUES),
    _descriptor("Truststore Filename"),
    _descriptor("Truststore Password", sensitive=True),
    _descriptor("Truststore Type", allowable_values=_STORE_TYPE_VALUES),
    _descriptor(
        "TLS Protocol",
        "SSL Protocol",
        default="TLS",
        allowable_values=tuple(AllowableValue(p) for p in TLS_PROTOCOLS),
    ),
)
#: The keyword each of :data:`SSL_PROPERTIES` maps to, by internal name.
_KEYWORDS = {
    "Keystore Filename": "keystore_filename",
    "Keystore Password": "keystore_password",
    "key-password": "key_password",
    "Keystore Type": "keystore_type",
    "Truststore Filename": "truststore_filename",
    "Truststore Password": "truststore_password",
    "Truststore Type": "truststore_type",
    "SSL Protocol": "tls_protocol",
}


@attrs.frozen(repr=False)
class StandardSSLContextService(ControllerService):
    """Key and trust stores for TLS, named by processors (NiFi's StandardSSLContextService).

    Args:
        name: how processors' ``SSL Context Service`` property refers to it.
        keystore_filename: NiFi's ``Keystore Filename``: the client certificate and key.
        keystore_password: ``Keystore Password`` (sensitive).
        key_password: ``Key Password`` (sensitive; defaults to the keystore password).
        keystore_type: ``Keystore Type``: ``PEM`` or ``PKCS12``.
        truststore_filename: ``Truststore Filename``: the certificates servers are checked
            against (without one: the platform's default authorities, as NiFi does).
        truststore_password: ``Truststore Password`` (sensitive).
        truststore_type: ``Truststore Type``: ``PEM`` or ``PKCS12``.
        tls_protocol: ``TLS Protocol``: ``TLS`` (the default: 1.2 or newer), ``TLSv1.2`` or
            ``TLSv1.3``.

    Raises:
        ConfigurationError: a value is out of range, or neither store is given (NiFi's "Either
            the keystore and/or truststore must be populated").
    """

    name: str = attrs.field(validator=_check_name)
    keystore_filename: str | None = None
    keystore_password: str | None = attrs.field(default=None, metadata=_SECRET)
    key_password: str | None = attrs.field(default=None, metadata=_SECRET)
    keystore_type: str | None = attrs.field(default=None, converter=_store_type)
    truststore_filename: str | None = None
    truststore_password: str | None = attrs.field(default=None, metadata=_SECRET)
    truststore_type: str | None = attrs.field(default=None, converter=_store_type)
    tls_protocol: str = "TLS"

    #: NiFi's types this service stands for (what ``Flow.from_nifi`` maps onto it).
    NIFI_TYPES = (
        "org.apache.nifi.ssl.StandardSSLContextService",
        "org.apache.nifi.ssl.StandardRestrictedSSLContextService",
    )
    #: NiFi's property names (internal) -> the keyword each maps to.
    NIFI_PROPERTIES = {
        "Keystore Filename": "keystore_filename",
        "Keystore Password": "keystore_password",
        "key-password": "key_password",
        "Key Password": "key_password",
        "Keystore Type": "keystore_type",
        "Truststore Filename": "truststore_filename",
        "Truststore Password": "truststore_password",
        "Truststore Type": "truststore_type",
        "SSL Protocol": "tls_protocol",
        "TLS Protocol": "tls_protocol",
    }
    #: The keywords holding secrets: masked in ``repr``, never exported or logged.
    SENSITIVE = ("keystore_password", "key_password", "truststore_password")
    nifi_types = NIFI_TYPES
    implements = ("SSLContextService", "SSLContextProvider", "RestrictedSSLContextService")
    property_descriptors = SSL_PROPERTIES
    tags = ("ssl", "tls", "keystore", "truststore", "certificate")

    @property
    def raw_configured(self) -> dict[str, str]:
        """Its settings as NiFi's properties, by internal name.

        Secrets included: never write them (exports and listings leave sensitive ones out).
        """
        found = {}
        for name, keyword in _KEYWORDS.items():
            value = getattr(self, keyword)
            if value is not None:
                found[name] = str.__str__(value) if isinstance(value, str) else str(value)
        return found

    def renamed(self, name: str) -> StandardSSLContextService:
        """This service under another name."""
        return attrs.evolve(self, name=name)

    def __attrs_post_init__(self) -> None:
        if not self.keystore_filename and not self.truststore_filename:
            msg = (
                f"SSL context service {self.name!r} has neither a keystore nor a truststore: "
                "give keystore_filename and/or truststore_filename"
            )
            raise ConfigurationError(msg)
        for kind in ("keystore", "truststore"):
            declared = getattr(self, f"{kind}_type")
            allowed = (*STORE_TYPES, *_JAVA_ONLY)
            if declared is not None and declared not in allowed:
                msg = f"{kind}_type {declared!r} of service {self.name!r} is not one of {allowed!r}"
                raise ConfigurationError(msg)
        for kind in ("keystore", "truststore"):  # Java's formats are refused at once
            path = getattr(self, f"{kind}_filename")
            if path and (getattr(self, f"{kind}_type") in _JAVA_ONLY or _is_jks(path)):
                self._store_kind(path, getattr(self, f"{kind}_type"), kind)
        if self.tls_protocol not in TLS_PROTOCOLS:
            msg = (
                f"tls_protocol {self.tls_protocol!r} of service {self.name!r} is not one of "
                f"{sorted(TLS_PROTOCOLS)!r}"
            )
            raise ConfigurationError(msg)

    def __repr__(self) -> str:
        shown = []
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if value is None:
                continue
            shown.append(f"{field.name}={MASK if field.name in self.SENSITIVE else value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    @property
    def state_key(self) -> str:
        """The component id a service's state would live under (this one keeps none)."""
        return f"service:{self.name}"

    @classmethod
    def from_nifi(cls, name: str, properties: dict[str, str | None]) -> StandardSSLContextService:
        """The service for a NiFi ``StandardSSLContextService``'s *properties* (by NiFi name)."""
        values = {
            cls.NIFI_PROPERTIES[key]: value
            for key, value in properties.items()
            if key in cls.NIFI_PROPERTIES and value not in (None, "")
        }
        return cls(name, **values)

    def fingerprint(self) -> str:
        """Its settings apart from its name and secrets (what a repository records)."""
        return (
            f"{type(self).__name__}/{self.keystore_filename}/{self.keystore_type}/"
            f"{self.truststore_filename}/{self.truststore_type}/{self.tls_protocol}"
        )

    # --- the context ------------------------------------------------------------------------

    def create_context(self) -> ssl.SSLContext:
        """A client :class:`ssl.SSLContext` over the stores (NiFi's ``createContext``).

        Hostnames are checked and certificates required, as Java's defaults do.

        Raises:
            ConfigurationError: a store cannot be read (missing, wrong password, JKS), in one
                line naming the store and the fix.
        """
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        low, high = TLS_PROTOCOLS[self.tls_protocol]
        context.minimum_version = low
        if high is not None:
            context.maximum_version = high
        if self.truststore_filename:
            self._load_trust(context)
        else:
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        if self.keystore_filename:
            self._load_keys(context)
        return context

    def create_server_context(self, client_auth: str = "NONE") -> ssl.SSLContext:
        """A server :class:`ssl.SSLContext`: the keystore's certificate, clients checked.

        A server shows its own certificate, so the keystore is required; the truststore holds
        the authorities client certificates must lead to (the platform's without one).

        Args:
            client_auth: ``NONE`` (no certificate asked), ``WANT`` (asked, checked when
                shown) or ``REQUIRED`` (a handshake without a valid one fails), Jetty's
                ``wantClientAuth``/``needClientAuth`` as NiFi's listeners set them.

        Raises:
            ConfigurationError: no keystore, or a store cannot be read.
        """
        if not self.keystore_filename:
            msg = (
                f"SSL context service {self.name!r} has no keystore: a server needs its "
                "certificate and key (give keystore_filename)"
            )
            raise ConfigurationError(msg)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        low, high = TLS_PROTOCOLS[self.tls_protocol]
        context.minimum_version = low
        if high is not None:
            context.maximum_version = high
        self._load_keys(context)
        if client_auth != "NONE":
            if self.truststore_filename:
                self._load_trust(context)
            else:
                context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
            context.verify_mode = (
                ssl.CERT_REQUIRED if client_auth == "REQUIRED" else ssl.CERT_OPTIONAL
            )
        return context

    def _store_kind(self, path: str, declared: str | None, kind: str) -> str:
        """The store's type, refusing Java's formats in one line."""
        if declared == "JKS":
            raise ConfigurationError(_conversion(path, kind))
        if declared == "BCFKS":
            msg = (
                f"{kind} {path!r} is a BCFKS store, which flowcore cannot read; convert it to "
                f"PKCS12: keytool -importkeystore -srckeystore {path} -srcstoretype BCFKS "
                f"-destkeystore {Path(path).with_suffix('.p12')} -deststoretype PKCS12"
            )
            raise ConfigurationError(msg)
        try:
            with open(path, "rb") as handle:
                head = handle.read(8192)  # a PEM bundle may open with comments (certifi's)
        except OSError as error:
            msg = f"{kind} {path!r} of service {self.name!r} cannot be read: {error.strerror}"
            raise ConfigurationError(msg) from None
        if head[:4] == _JKS_MAGIC:
            raise ConfigurationError(_conversion(path, kind))
        if declared is not None:
            return declared
        return "PEM" if b"-----BEGIN " in head else "PKCS12"

    def _load_trust(self, context: ssl.SSLContext) -> None:
        path = str(self.truststore_filename)
        kind = self._store_kind(path, self.truststore_type, "truststore")
        try:
            if kind == "PEM":
                context.load_verify_locations(cafile=path)
                return
            _, certificate, others = _read_pkcs12(path, self.truststore_password, "truststore")
            pem = b"".join(_pem(c) for c in [certificate, *others] if c is not None)
            if not pem:
                msg = f"truststore {path!r} of service {self.name!r} holds no certificate"
                raise ConfigurationError(msg)
            context.load_verify_locations(cadata=pem.decode("ascii"))
        except ssl.SSLError as error:
            msg = f"truststore {path!r} of service {self.name!r} is not usable: {error.reason}"
            raise ConfigurationError(msg) from None

    def _load_keys(self, context: ssl.SSLContext) -> None:
        path = str(self.keystore_filename)
        kind = self._store_kind(path, self.keystore_type, "keystore")
        password = self.key_password or self.keystore_password
        try:
            if kind == "PEM":
                # A callable, never None: with None OpenSSL asks a terminal for the pass phrase
                # (a run would wait on it); with no password an encrypted key just fails.
                context.load_cert_chain(path, password=lambda: password or "")
                return
            key, certificate, others = _read_pkcs12(path, self.keystore_password, "keystore")
            if key is None or certificate is None:
                msg = f"keystore {path!r} of service {self.name!r} holds no private key entry"
                raise ConfigurationError(msg)
            _load_chain_in_memory(context, key, [certificate, *others])
        except (ssl.SSLError, OSError) as error:
            if not password:
                msg = (
                    f"keystore {path!r} of service {self.name!r} could not be read without a "
                    "password: give its Key Password or Keystore Password (NiFi leaves sensitive "
                    "values out of its exports: --parameter or --parameter-env)"
                )
            else:
                why = getattr(error, "reason", None) or error.strerror or error
                msg = (
                    f"keystore {path!r} of service {self.name!r} is not usable ({why}): "
                    "check its Key Password"
                )
            raise ConfigurationError(msg) from None


def _is_jks(path: str) -> bool:
    """Whether *path* is a JKS file (False when it cannot be read here: checked at use)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == _JKS_MAGIC
    except OSError:
        return False


def _pem(certificate: object) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding  # noqa: PLC0415

    return certificate.public_bytes(Encoding.PEM)  # type: ignore[attr-defined]


def _read_pkcs12(path: str, password: str | None, kind: str) -> tuple[object, object, list]:
    """The key, certificate and other certificates of a PKCS12 file.

    ``cryptography`` is imported here: only flows with a PKCS12 store need it.
    """
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: PLC0415
    except ImportError:  # pragma: no cover - a core dependency
        msg = f"reading the PKCS12 {kind} {path!r} needs the cryptography package"
        raise ConfigurationError(msg) from None
    data = Path(path).read_bytes()
    secret = password.encode() if password else None
    try:
        key, certificate, others = pkcs12.load_key_and_certificates(data, secret)
    except ValueError:
        if secret is None:
            msg = (
                f"{kind} {path!r} cannot be opened as PKCS12 without a password: give its "
                "password (NiFi leaves sensitive values out of its exports: --parameter or "
                "--parameter-env), or check that it is a PKCS12 file"
            )
        else:
            msg = (
                f"{kind} {path!r} cannot be opened as PKCS12: the password is wrong or it is "
                "not a PKCS12 file (PEM stores need the type PEM)"
            )
        raise ConfigurationError(msg) from None
    return key, certificate, list(others)


def _load_chain_in_memory(context: ssl.SSLContext, key: object, chain: list) -> None:
    """Load a key and chain into *context*; :mod:`ssl` takes files only, so a private one.

    The PEM goes to a file only its owner can read, in a fresh directory, removed at once.
    """
    from cryptography.hazmat.primitives.serialization import (  # noqa: PLC0415
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())  # type: ignore[attr-defined]
    pem += b"".join(_pem(c) for c in chain if c is not None)
    with tempfile.TemporaryDirectory(prefix="flowcore-tls-") as directory:
        target = Path(directory) / "chain.pem"
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
        context.load_cert_chain(target)
