"""PutS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

import io
from typing import Any

from flowcore.testing import TestRunner
from processors.aws.put_s3_object import PutS3Object, upload_multipart
from tests.processors.aws.s3_server import configure


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(PutS3Object())
    configure(runner, endpoint, **more)
    return runner


def test_put_object_with_attributes_metadata_and_send_event(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """Content under ${filename}; s3.* attributes, metadata, SEND (NiFi's testPutSinglePart)."""
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Content Type": "text/csv"})
    runner.set_property("userMetaKey", "${meta}")
    runner.enqueue(b"a,b\n1,2\n", {"filename": "d/hello.csv", "meta": "m1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    got = s3.get_object(Bucket=bucket, Key="d/hello.csv")
    assert got["Body"].read() == b"a,b\n1,2\n"
    assert got["Metadata"] == {"usermetakey": "m1"}
    assert got["ContentType"] == "text/csv"
    out.assert_attribute_equals("s3.bucket", bucket)
    out.assert_attribute_equals("s3.key", "d/hello.csv")
    out.assert_attribute_equals("s3.contenttype", "text/csv")
    out.assert_attribute_equals("s3.storeClass", "STANDARD")
    out.assert_attribute_equals("s3.etag", got["ETag"].strip('"'))
    assert "s3.uploadId" not in out.attributes
    events = runner.provenance_events
    assert [e.event_type.name for e in events] == ["SEND"]
    assert events[0].transit_uri == f"s3://{bucket}/d/hello.csv"


def test_object_tags_from_prefixed_attributes(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Object Tags Prefix with Remove Tag Prefix tags the object (NiFi's testObjectTags)."""
    runner = _runner(
        s3_endpoint, Bucket=bucket, **{"Object Tags Prefix": "tagS3", "Remove Tag Prefix": "true"}
    )
    runner.enqueue(b"x", {"filename": "t", "tagS3PII": "true"})
    runner.run()
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [
        {"Key": "PII", "Value": "true"}
    ]


def test_replay_overwrites_the_same_object(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """The same FlowFile put twice (a replay after a crash) leaves one object with its bytes."""
    for _ in range(2):
        runner = _runner(s3_endpoint, Bucket=bucket)
        runner.enqueue(b"once", {"filename": "k"})
        runner.run()
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Key"] for o in listed] == ["k"]


def test_multipart_upload_in_parts(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """upload_multipart sends parts of the given size and completes; s3.uploadId is set."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    data = bytes(range(256)) * (45 * 1024)  # 11.25 MiB: 3 parts of 5 MiB (S3's minimum)
    runner.enqueue(data, {"filename": "big"})

    class _Session:
        def read(self, flowfile: Any) -> Any:
            return io.BytesIO(data)

    from processors.aws import _s3
    from tests.processors.aws.s3_server import client

    result = upload_multipart(client(s3_endpoint), _Session(), None, bucket, "big", {}, 5 << 20)
    assert result["UploadId"]
    got = s3.get_object(Bucket=bucket, Key="big")
    assert got["Body"].read() == data
    assert got["ETag"].strip('"').endswith("-3")
    assert _s3.transit_uri(bucket, "big") == f"s3://{bucket}/big"


def test_multipart_threshold_below_nifi_minimum_is_invalid() -> None:
    """Multipart Threshold and Part Size accept 50 MB to 5 GB, as NiFi's validators."""
    runner = TestRunner(PutS3Object())
    result = runner.set_property("Multipart Threshold", "10 MB")
    assert not result.valid


def test_missing_bucket_fails_with_error_attributes(s3_endpoint: str) -> None:
    """A bucket that does not exist: failure, penalized, s3.errorCode NoSuchBucket."""
    runner = _runner(s3_endpoint, Bucket="no-such-bucket-put")
    runner.enqueue(b"x", {"filename": "k"})
    runner.run()
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_equals("s3.errorCode", "NoSuchBucket")
    assert out.is_penalized(runner.now())


def test_refused_credentials_fail_without_logging_the_secret(
    s3_endpoint: str, bucket: str, caplog: Any
) -> None:
    """moto checking keys (its IAM auth on): InvalidAccessKeyId, 403; the secret never shows."""
    from moto import settings
    from moto.core.responses import ActionAuthenticatorMixin

    from processors.aws.credentials import AWSCredentialsProviderControllerService

    secret = "wrong-secret-value-xyz"
    runner = TestRunner(PutS3Object())
    service = AWSCredentialsProviderControllerService(
        "aws", access_key_id="AKIAUNKNOWN", secret_access_key=secret
    )
    runner.add_service(service)
    runner.set_property("AWS Credentials Provider service", "aws")
    runner.set_property("Endpoint Override URL", s3_endpoint)
    runner.set_property("Bucket", bucket)
    runner.enqueue(b"x", {"filename": "k"})
    before = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # the in-process server checks every request
    ActionAuthenticatorMixin.request_count = 0
    try:
        runner.run()
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = before
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_equals("s3.errorCode", "InvalidAccessKeyId")
    out.assert_attribute_equals("s3.statusCode", "403")
    assert secret not in caplog.text
    assert "InvalidAccessKeyId" in caplog.text
    assert all(secret not in str(v) for v in out.attributes.values())
    assert all(secret not in repr(e) for e in runner.provenance_events)


def test_filename_with_national_characters(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testFilenameWithNationalCharacters: the key keeps its non-ASCII characters."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"x", {"filename": "Iñtërnâtiônàližætiøn.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert s3.get_object(Bucket=bucket, Key="Iñtërnâtiônàližætiøn.txt")["Body"].read() == b"x"
