"""PutS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

import io
import logging
import time
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


class _SmallParts(PutS3Object):
    """Multipart from 5 MiB in parts of 5 MiB (S3's minimum): NiFi's bounds start at 50 MB."""

    @staticmethod
    def multipart_sizes(context: Any) -> tuple[int, int]:
        del context
        return 5 << 20, 5 << 20


_BIG = bytes(range(256)) * (24 * 1024)  # 6 MiB: parts of 5 MiB and 1 MiB


def _small_parts(endpoint: str, bucket: str) -> TestRunner:
    runner = TestRunner(_SmallParts())
    configure(runner, endpoint, Bucket=bucket)
    return runner


def _uploads(s3: Any, bucket: str) -> list[str]:
    return [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", ())]


def test_multipart_completes_only_after_the_commit(s3: Any, s3_endpoint: str, bucket: str) -> None:
    """The parts go up in the task; the object appears only when the session commits (an
    after-commit action), with the s3.etag the FlowFile was given, and no upload is left."""
    runner = _small_parts(s3_endpoint, bucket)
    runner.enqueue(_BIG, {"filename": "big"})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert len(_uploads(s3, bucket)) == 1
    session.commit()
    out = runner.flowfiles_for("success")[0]
    got = s3.get_object(Bucket=bucket, Key="big")
    assert got["Body"].read() == _BIG
    out.assert_attribute_equals("s3.etag", got["ETag"].strip('"'))
    assert out.attributes["s3.etag"].endswith("-2")
    assert out.attributes["s3.uploadId"]
    assert _uploads(s3, bucket) == []


def test_a_replay_completes_once_and_aborts_the_cut_short_upload(
    s3: Any, s3_endpoint: str, bucket: str, caplog: Any
) -> None:
    """An attempt that never commits leaves its parts; the replay's completion aborts them,
    and completing it again (a start-up after a crash) is harmless."""
    runner = _small_parts(s3_endpoint, bucket)
    runner.enqueue(_BIG, {"filename": "again"})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    session.rollback()  # the attempt that died
    assert len(_uploads(s3, bucket)) == 1
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    actions = [dict(a.payload) for a in session._effects._actions]
    session.commit()
    assert _uploads(s3, bucket) == []
    with caplog.at_level(logging.ERROR):
        runner.processor.run_after_commit_actions(runner.context, actions)
    assert "Failed to complete" not in caplog.text
    assert s3.get_object(Bucket=bucket, Key="again")["Body"].read() == _BIG
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["again"]


def test_age_off_aborts_uploads_older_than_the_max_age(
    s3: Any, s3_endpoint: str, bucket: str
) -> None:
    """NiFi's AgeOff: a put aborts the bucket's uploads older than the Max Age Threshold."""
    s3.create_multipart_upload(Bucket=bucket, Key="stale")
    time.sleep(1.1)
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Multipart Upload Max Age Threshold": "1 sec"})
    runner.enqueue(b"small", {"filename": "small"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert _uploads(s3, bucket) == []
