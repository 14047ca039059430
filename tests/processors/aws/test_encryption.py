"""StandardS3EncryptionService: NiFi's key checks, secrets kept out of exports, 1.x imports."""

from __future__ import annotations

import base64
import json

from flowcore.builder import Flow
from flowcore.nifi.exporting import export_flow
from processors.aws.encryption import StandardS3EncryptionService
from processors.aws.put_s3_object import PutS3Object
from tests.processors.aws.s3_server import credentials_service, encryption_service

KEY = base64.b64encode(bytes(range(32))).decode()


def test_encryption_service_validation() -> None:
    """NiFi's key checks (TestServerSideCEncryptionStrategyKeyValidation); client-side refused."""

    def problems(**props: str) -> list[str]:
        service = StandardS3EncryptionService("e", **props)
        return [p.explanation or "" for p in service.validate() if not p.valid]

    sse_c = {"encryption_strategy": "SSE_C"}
    assert problems(**sse_c, key_material=base64.b64encode(bytes(32)).decode()) == []
    assert "not in Base64" in problems(**sse_c, key_material="!!not base64!!")[0]
    assert (
        "not a Base64 encoded AES-256 key"
        in problems(**sse_c, key_material=base64.b64encode(bytes(16)).decode())[0]
    )
    assert "empty" in problems(**sse_c)[0]
    assert "KMS Key ID" in problems(encryption_strategy="SSE_KMS")[0]
    assert "AWS S3 Encryption Client" in problems(encryption_strategy="CSE_KMS")[0]
    assert problems(encryption_strategy="SSE_S3") == []


def test_export_names_nifis_service_without_the_key() -> None:
    """Exported under NiFi's type with the strategy; the Key Material never; import restores."""
    flow = Flow("s3-enc")
    flow.add_service(credentials_service())
    flow.add_service(encryption_service("SSE_C", key_material=KEY))
    put = flow.add(
        PutS3Object(bucket="b", aws_credentials_provider_service="aws", encryption_service="enc"),
        name="put",
    )
    flow.auto_terminate(put, ["success", "failure"])
    document = export_flow(flow, use_graphviz=False).document
    text = json.dumps(document)
    assert "org.apache.nifi.processors.aws.s3.encryption.StandardS3EncryptionService" in text
    assert KEY not in text
    back = Flow.from_nifi(document)
    service = back.services["enc"]
    assert isinstance(service, StandardS3EncryptionService)
    assert service.strategy_name == "SSE_C"


def test_nifi_1x_put_properties_import() -> None:
    """NiFi 1.x names import; Owner and Expiration Time Rule dropped (not user metadata)."""
    flow = Flow("s3-1x")
    flow.add_service(credentials_service())
    put = flow.add(PutS3Object(bucket="b", aws_credentials_provider_service="aws"), name="put")
    flow.auto_terminate(put, ["success", "failure"])
    document = export_flow(flow, use_graphviz=False).document
    properties = document["flowContents"]["processors"][0]["properties"]
    del properties["Server Side Encryption"], properties["Canned ACL"]
    properties.update({
        "server-side-encryption": "AES256", "canned-acl": "PublicRead", "Owner": "someone",
        "Write Permission User List": "w1", "Expiration Time Rule": "rule-1",
    })  # fmt: skip
    back = Flow.from_nifi(document).components[0].processor
    configured = back.raw_configured
    assert configured["Server Side Encryption"] == "AES256"
    assert configured["Canned ACL"] == "PublicRead"
    for dropped in ("Owner", "Write Permission User List", "Expiration Time Rule"):
        assert dropped not in configured


def test_nifi_1x_service_imports_as_nifi_2_migrates_it() -> None:
    """NiFi's migrateProperties: 1.x's key value by strategy, KMS Region dropped."""
    flow = Flow("s3-enc-1x")
    flow.add_service(credentials_service())
    for name in ("kms", "sse-c", "s3"):
        flow.add_service(encryption_service("SSE_S3", name=name))
    for name in ("kms", "sse-c", "s3"):
        put = flow.add(
            PutS3Object(
                bucket="b", aws_credentials_provider_service="aws", encryption_service=name
            ),
            name=f"put-{name}",
        )
        flow.auto_terminate(put, ["success", "failure"])
    document = export_flow(flow, use_graphviz=False).document
    kms = "arn:aws:kms:us-east-1:123456789012:key/flowcore"
    as_1x = {
        "kms": {"encryption-strategy": "SSE_KMS", "key-id-or-key-material": kms,
                "kms-region": "us-west-2"},
        "sse-c": {"encryption-strategy": "SSE_C", "Key ID or Key Material": KEY,
                  "KMS Region": "us-east-1"},
        "s3": {"encryption-strategy": "SSE_S3", "key-id-or-key-material": None,
               "kms-region": "us-west-2"},
    }  # fmt: skip
    for service in document["flowContents"]["controllerServices"]:
        if service["name"] in as_1x:
            service["properties"] = as_1x[service["name"]]
    services = Flow.from_nifi(document).services
    assert services["kms"].raw_configured == {"Encryption Strategy": "SSE_KMS", "KMS Key ID": kms}
    assert services["sse-c"].raw_configured == {"Encryption Strategy": "SSE_C", "Key Material": KEY}
    assert services["s3"].raw_configured == {"Encryption Strategy": "SSE_S3"}
    for service in services.values():
        assert service.validate() == ()
