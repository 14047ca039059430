"""AWSCredentialsProviderControllerService: validation, sessions, secrets kept out of exports."""

from __future__ import annotations

import json
from pathlib import Path

from flowcore.builder import Flow
from flowcore.controller_service import enabled_service
from flowcore.nifi.exporting import export_flow
from processors.aws.credentials import AWSCredentialsProviderControllerService
from processors.aws.put_s3_object import PutS3Object
from tests.processors.aws.s3_server import ACCESS_KEY, SECRET_KEY, credentials_service


def _problems(service: AWSCredentialsProviderControllerService) -> list[str]:
    return [p.explanation or "" for p in service.validate() if not p.valid]


def test_half_a_key_pair_and_two_strategies_are_invalid(tmp_path: Path) -> None:
    """NiFi's checks: both keys or neither; one way to authenticate; a role needs a session name."""
    half = AWSCredentialsProviderControllerService("a", access_key_id="AKIA")
    assert any("both be set" in p for p in _problems(half))
    both = AWSCredentialsProviderControllerService(
        "b", access_key_id="A", secret_access_key="S", use_anonymous_credentials="true"
    )
    assert any("exclusive" in p for p in _problems(both))
    role = AWSCredentialsProviderControllerService("c", assume_role_arn="arn:aws:iam::1:role/r")
    assert any("Session Name" in p for p in _problems(role))
    assert _problems(credentials_service()) == []


def test_credentials_file_in_nifi_format(tmp_path: Path) -> None:
    """A NiFi credentials file (accessKey=, secretKey=) gives the session its keys."""
    path = tmp_path / "aws.properties"
    path.write_text(f"# keys\naccessKey = {ACCESS_KEY}\nsecretKey={SECRET_KEY}\n")
    declared = AWSCredentialsProviderControllerService("f", credentials_file=str(path))
    service = enabled_service("f", {"f": declared})
    keys = service.session("us-east-1").get_credentials()
    assert (keys.access_key, keys.secret_key) == (ACCESS_KEY, SECRET_KEY)


def test_export_leaves_the_secrets_out() -> None:
    """An exported flow names NiFi's types and holds neither key; repr masks them too."""
    flow = Flow("s3-export")
    service = flow.add_service(credentials_service())
    flow.add(PutS3Object(bucket="b", aws_credentials_provider_service="aws"), name="put")
    text = json.dumps(export_flow(flow, use_graphviz=False).document)
    assert "org.apache.nifi.processors.aws.s3.PutS3Object" in text
    assert "AWSCredentialsProviderControllerService" in text
    assert SECRET_KEY not in text
    assert ACCESS_KEY not in text
    assert SECRET_KEY not in repr(service)


def test_nifi_flow_with_s3_and_sftp_round_trips() -> None:
    """Exported, then imported by NiFi's type names: the same processors and service."""
    from processors.sftp.put_sftp import PutSFTP

    flow = Flow("s3-sftp")
    flow.add_service(credentials_service())
    fetch = flow.add(PutS3Object(bucket="b", aws_credentials_provider_service="aws"), name="put")
    sftp = flow.add(PutSFTP(hostname="h", username="u", password="pw-secret"), name="sftp")
    flow.connect(fetch, sftp, "success")
    flow.auto_terminate(fetch, ["failure"])
    flow.auto_terminate(sftp, ["success", "failure", "reject"])
    document = export_flow(flow, use_graphviz=False).document
    assert "pw-secret" not in json.dumps(document)
    back = Flow.from_nifi(document)
    assert [(c.name, type(c.processor).__name__) for c in back.components] == [
        ("put", "PutS3Object"), ("sftp", "PutSFTP"),
    ]  # fmt: skip
    assert isinstance(back.services["aws"], AWSCredentialsProviderControllerService)
