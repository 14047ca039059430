"""Tests for StandardSSLContextService: PEM and PKCS12 stores in TLS handshakes, JKS refused."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from flowcore import Flow
from flowcore.errors import ConfigurationError
from flowcore.nifi.python_source import flow_to_python
from flowcore.ssl_context import StandardSSLContextService

_PEM = serialization.Encoding.PEM


def _issue(
    common_name: str, directory: Path
) -> tuple[Path, ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed certificate for 127.0.0.1 with its key, both in one PEM file."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{common_name}.pem"
    path.write_bytes(
        key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        + certificate.public_bytes(_PEM)
    )
    return path, key, certificate


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A server and a client identity as PEM files, the client's also as PKCS12."""
    directory = tmp_path_factory.mktemp("pki")
    server, _, _ = _issue("server", directory)
    client, key, certificate = _issue("client", directory)
    p12 = directory / "client.p12"
    p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"client", key, certificate, None, serialization.BestAvailableEncryption(b"secret")
        )
    )
    return {"server": server, "client": client, "client.p12": p12}


def _handshake(pki: dict[str, Path], client_context: ssl.SSLContext) -> str:
    """A mutual-TLS handshake with a loopback server; the client subject the server saw."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(pki["server"])
    server_context.load_verify_locations(pki["client"])
    server_context.verify_mode = ssl.CERT_REQUIRED
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[str] = []

    def accept() -> None:
        connection, _ = listener.accept()
        try:
            with server_context.wrap_socket(connection, server_side=True) as tls:
                seen.append(dict(x[0] for x in tls.getpeercert()["subject"])["commonName"])
                tls.sendall(b"ok")
        except (ssl.SSLError, OSError):
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        client_context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.recv(2) == b"ok"
    thread.join(5)
    listener.close()
    return seen[0]


def test_pem_keystore_and_truststore_do_mutual_tls(pki: dict[str, Path]) -> None:
    """A PEM keystore (key + chain) and a PEM truststore complete a mutual-TLS handshake."""
    service = StandardSSLContextService(
        "tls",
        keystore_filename=str(pki["client"]),
        keystore_type="PEM",
        truststore_filename=str(pki["server"]),
        truststore_type="PEM",
    )
    assert _handshake(pki, service.create_context()) == "client"


def test_pkcs12_keystore_does_mutual_tls(pki: dict[str, Path]) -> None:
    """A password-protected PKCS12 keystore gives the client certificate."""
    service = StandardSSLContextService(
        "tls",
        keystore_filename=str(pki["client.p12"]),
        keystore_password="secret",
        keystore_type="PKCS12",
        truststore_filename=str(pki["server"]),
    )
    assert _handshake(pki, service.create_context()) == "client"


def test_wrong_pkcs12_password_is_one_line(pki: dict[str, Path]) -> None:
    """A wrong password is a one-line ConfigurationError naming the store."""
    service = StandardSSLContextService(
        "tls", keystore_filename=str(pki["client.p12"]), keystore_password="nope"
    )
    with pytest.raises(ConfigurationError, match="password is wrong") as caught:
        service.create_context()
    assert "\n" not in str(caught.value)


def test_a_store_without_its_password_is_one_line_and_never_asks(
    pki: dict[str, Path], tmp_path: Path
) -> None:
    """An encrypted PEM key or a PKCS12 store without a password (NiFi exports leave it out)
    is one line saying so: OpenSSL never asks a terminal for a pass phrase."""
    key = ec.generate_private_key(ec.SECP256R1())
    encrypted = tmp_path / "encrypted.pem"
    encrypted.write_bytes(
        key.private_bytes(
            _PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
        + pki["client"].read_bytes().split(b"-----END PRIVATE KEY-----\n")[1]
    )
    stores = [(encrypted, "PEM"), (pki["client.p12"], "PKCS12")]
    for path, kind in stores:
        service = StandardSSLContextService("tls", keystore_filename=str(path), keystore_type=kind)
        with pytest.raises(ConfigurationError, match="without a password") as caught:
            service.create_context()
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("declared", ["JKS", "PKCS12", None])
def test_jks_store_is_refused_with_the_conversion(tmp_path: Path, declared: str | None) -> None:
    """A JKS store (by type or by its magic number) names keytool's conversion to PKCS12."""
    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    with pytest.raises(ConfigurationError) as caught:  # refused when the service is made
        StandardSSLContextService("tls", truststore_filename=str(jks), truststore_type=declared)
    message = str(caught.value)
    assert "\n" not in message
    assert f"keytool -importkeystore -srckeystore {jks}" in message
    assert "-deststoretype PKCS12" in message


def test_a_service_needs_a_store() -> None:
    """Neither keystore nor truststore: refused as NiFi refuses it."""
    with pytest.raises(ConfigurationError, match="neither a keystore nor a truststore"):
        StandardSSLContextService("tls")


def test_secrets_never_show(pki: dict[str, Path]) -> None:
    """Passwords are masked in repr and left out of a flow written back as Python."""
    service = StandardSSLContextService(
        "tls", keystore_filename=str(pki["client.p12"]), keystore_password="secret"
    )
    assert "secret" not in repr(service)
    flow = Flow("tls")
    flow.add_service(service)
    source = flow_to_python(flow)
    assert "StandardSSLContextService" in source
    assert "secret" not in source


def test_from_nifi_reads_nifi_property_names() -> None:
    """NiFi's names (key-password, SSL Protocol) map onto the service's fields."""
    service = StandardSSLContextService.from_nifi(
        "tls",
        {
            "Keystore Filename": "/k.p12",
            "Keystore Password": "a",
            "key-password": "b",
            "Keystore Type": "PKCS12",
            "Truststore Filename": None,
            "SSL Protocol": "TLSv1.3",
        },
    )
    assert service.key_password == "b"
    assert service.tls_protocol == "TLSv1.3"
    assert service.truststore_filename is None


def test_parameters_in_store_settings_are_bound_and_survive_pickling(
    pki: dict[str, Path],
) -> None:
    """``#{...}`` in the store paths and password reach the context, on the driver and in a
    pickled copy (as Spark ships it), and a PEM bundle opening with comments is read as PEM."""
    import pickle

    bundle = pki["server"].with_name("bundle.pem")
    bundle.write_bytes(b"# Issuer: test\n" + pki["server"].read_bytes())
    flow = Flow("tls", parameters={"keys": str(pki["client"]), "trust": str(bundle)})
    flow.add_service(
        StandardSSLContextService(
            "tls", keystore_filename="#{keys}", keystore_type="PEM", truststore_filename="#{trust}"
        )
    )
    bound = flow.resolved_service("tls")
    shipped = pickle.loads(pickle.dumps(bound))
    assert _handshake(pki, shipped.create_context()) == "client"


@pytest.mark.parametrize(
    ("policy", "mode"),
    [("NONE", ssl.CERT_NONE), ("WANT", ssl.CERT_OPTIONAL), ("REQUIRED", ssl.CERT_REQUIRED)],
)
def test_a_server_context_asks_for_client_certificates_by_policy(
    pki: dict[str, Path], policy: str, mode: ssl.VerifyMode
) -> None:
    """create_server_context: the keystore is the server's identity; NONE asks no client
    certificate, WANT asks and checks one shown, REQUIRED refuses a handshake without one."""
    service = StandardSSLContextService(
        "tls", keystore_filename=str(pki["server"]), truststore_filename=str(pki["client"])
    )
    context = service.create_server_context(policy)
    assert context.verify_mode == mode
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def test_a_server_without_a_keystore_is_refused_in_one_line(pki: dict[str, Path]) -> None:
    """A truststore-only service cannot serve: the message names the service and the fix."""
    service = StandardSSLContextService("trust-only", truststore_filename=str(pki["server"]))
    with pytest.raises(ConfigurationError, match="'trust-only' has no keystore"):
        service.create_server_context("NONE")
