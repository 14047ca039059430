"""A real S3 server for the tests: moto's server mode on a free loopback port.

One server per test session (``s3_endpoint``); each test gets its own bucket (``bucket``) so
tests do not see each other's objects. Traffic never leaves loopback.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

ACCESS_KEY = "AKIAFLOWCORETEST0001"
SECRET_KEY = "flowcore-secret-key-never-logged"
REGION = "us-east-1"


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a moto S3 server on loopback, started once for the session."""
    moto_server = pytest.importorskip("moto.server")
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def client(endpoint: str) -> Any:
    """A plain boto3 client on the server (to set up and check objects)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


@pytest.fixture
def s3(s3_endpoint: str) -> Any:
    """A boto3 client on the session's server."""
    return client(s3_endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    """A new empty bucket for one test."""
    name = f"b-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def credentials_service(name: str = "aws") -> Any:
    """AWSCredentialsProviderControllerService with the test key pair."""
    from processors.aws.credentials import AWSCredentialsProviderControllerService

    return AWSCredentialsProviderControllerService(
        name, access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY
    )


def configure(runner: Any, endpoint: str, **more: str) -> None:
    """Point a runner's S3 processor at the server with the test credentials."""
    runner.add_service(credentials_service())
    runner.set_property("AWS Credentials Provider service", "aws")
    runner.set_property("Endpoint Override URL", endpoint)
    runner.set_property("Region", REGION)
    runner.set_property("Communications Timeout", "5 secs")
    for name, value in more.items():
        runner.set_property(name, value)


@pytest.fixture
def api_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every S3 call botocore makes in the test, as (operation, parameters): a spy, the real
    call still goes to the server (moto accepts but does not check some headers: SSE-C,
    Requester Pays)."""
    from botocore.client import BaseClient

    calls: list[tuple[str, dict[str, Any]]] = []
    real = BaseClient._make_api_call

    def spy(self: Any, operation: str, params: dict[str, Any]) -> Any:
        calls.append((operation, dict(params)))
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", spy)
    return calls


def encryption_service(strategy: str, name: str = "enc", **more: str) -> Any:
    """StandardS3EncryptionService with *strategy* (NiFi's name: SSE_S3, SSE_KMS, SSE_C)."""
    from processors.aws.encryption import StandardS3EncryptionService

    return StandardS3EncryptionService(name, encryption_strategy=strategy, **more)
