"""Test helper: a CA, a server certificate for loopback and client certificates, as PEM files.

Made with the ``cryptography`` package (EC keys: quick to generate), written under a directory
the test gives. Subjects are given most specific first, as NiFi prints them.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import attrs
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

_NAMES = {"CN": NameOID.COMMON_NAME, "O": NameOID.ORGANIZATION_NAME, "C": NameOID.COUNTRY_NAME}


@attrs.frozen
class Pki:
    """The files a TLS test uses.

    Attributes:
        ca: the authority's certificate (PEM): clients' and servers' truststore.
        server: the server's certificate and key (PEM, one file): the listener's keystore.
        client: a client certificate and key signed by *ca* (``client`` and ``key`` files).
        stranger: a client certificate and key signed by another authority.
    """

    ca: Path
    server: Path
    client: tuple[Path, Path]
    stranger: tuple[Path, Path]


def _name(text: str) -> x509.Name:
    """``CN=a, O=b, C=US`` (most specific first) as an X.509 name (least specific first)."""
    pairs = [part.split("=", 1) for part in text.split(", ")]
    return x509.Name([x509.NameAttribute(_NAMES[k], v) for k, v in reversed(pairs)])


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: str,
    signer: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    names: list[x509.GeneralName] | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
        builder = builder.add_extension(usage, critical=True)
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()),
            critical=False,
        )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_pki(directory: Path) -> Pki:
    """A CA, a server certificate for 127.0.0.1 and localhost, and two client certificates."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, other_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca_name, other_name = "CN=Test CA, O=Flowcore, C=US", "CN=Other CA, O=Elsewhere, C=US"
    ca = _certificate(ca_name, ca_key, ca_name, ca_key, ca=True)
    # the stranger's authority is nowhere trusted: its own certificate is never needed
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate(
        "CN=localhost, O=Flowcore, C=US",
        server_key,
        ca_name,
        ca_key,
        names=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    (directory / "ca.pem").write_bytes(_pem(ca))
    (directory / "server.pem").write_bytes(_key_pem(server_key) + _pem(server) + _pem(ca))
    files = []
    for stem, subject, issuer, signer, sans in (
        (
            "client",
            "CN=client, O=Flowcore, C=US",
            ca_name,
            ca_key,
            [x509.RFC822Name("client@example.com"), x509.DNSName("client.example.com")],
        ),
        ("stranger", "CN=stranger, O=Elsewhere, C=US", other_name, other_key, None),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = _certificate(subject, key, issuer, signer, names=sans)
        (directory / f"{stem}.pem").write_bytes(_pem(certificate))
        (directory / f"{stem}.key").write_bytes(_key_pem(key))
        files.append((directory / f"{stem}.pem", directory / f"{stem}.key"))
    return Pki(directory / "ca.pem", directory / "server.pem", files[0], files[1])
