"""FetchS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

from typing import Any

from flowcore.testing import TestRunner
from processors.aws.fetch_s3_object import FetchS3Object
from tests.processors.aws.s3_server import SECRET_KEY, configure


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(FetchS3Object())
    configure(runner, endpoint, **more)
    return runner


def test_fetch_object_with_nifi_attributes_and_fetch_event(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """The object becomes the content; s3.* attributes, a FETCH event (NiFi's testGetObject)."""
    s3.put_object(
        Bucket=bucket,
        Key="dir/a.txt",
        Body=b"Some Content",
        ContentType="text/plain",
        Metadata={"userKey1": "userValue1"},
    )
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"", {"filename": "dir/a.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"Some Content")
    out.assert_attribute_equals("s3.bucket", bucket)
    out.assert_attribute_equals("filename", "a.txt")
    out.assert_attribute_equals("path", "dir")
    out.assert_attribute_equals("absolute.path", "dir/a.txt")
    out.assert_attribute_equals("mime.type", "text/plain")
    out.assert_attribute_equals("userkey1", "userValue1")
    assert out.attributes["s3.etag"]
    events = runner.provenance_events
    assert [e.event_type.name for e in events] == ["FETCH", "CONTENT_MODIFIED"]  # NiFi's session
    assert events[0].transit_uri == f"s3://{bucket}/dir/a.txt"


def test_range_reads_part_of_the_object(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Range Start and Range Length fetch that slice only (NiFi's testGetObjectWithRange)."""
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Range Start": "2", "Range Length": "3"})
    runner.enqueue(b"", {"filename": "r"})
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals(b"234")


def test_missing_key_fails_with_error_code(s3_endpoint: str, bucket: str) -> None:
    """A key that does not exist: failure, penalized, s3.errorCode NoSuchKey, status 404."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"x", {"filename": "nope"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_equals("s3.errorCode", "NoSuchKey")
    out.assert_attribute_equals("s3.statusCode", "404")
    assert out.attributes["s3.exception"].startswith("botocore.")
    assert out.is_penalized(runner.now())


def test_missing_bucket_fails(s3_endpoint: str) -> None:
    """A bucket that does not exist: failure with NoSuchBucket."""
    runner = _runner(s3_endpoint, Bucket="no-such-bucket-here")
    runner.enqueue(b"x", {"filename": "k"})
    runner.run()
    runner.flowfiles_for("failure")[0].assert_attribute_equals("s3.errorCode", "NoSuchBucket")


def test_unreachable_endpoint_fails_in_bounded_time(caplog: Any) -> None:
    """A refused connection: failure naming the cause, in bounded time; no secret logged."""
    from tests.processors.aws.s3_server import free_port

    runner = _runner(f"http://127.0.0.1:{free_port()}", Bucket="b")
    runner.set_property("Communications Timeout", "1 sec")
    runner.enqueue(b"x", {"filename": "k"})
    runner.run()
    out = runner.flowfiles_for("failure")[0]
    assert (
        "Connect" in out.attributes["s3.errorMessage"]
        or "connect" in out.attributes["s3.errorMessage"]
    )
    assert SECRET_KEY not in caplog.text


def test_fetch_object_version(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testGetObjectVersion: Version fetches that version; s3.version names it."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = s3.put_object(Bucket=bucket, Key="o", Body=b"first")["VersionId"]
    s3.put_object(Bucket=bucket, Key="o", Body=b"second")
    runner = _runner(s3_endpoint, Bucket=bucket, Version=first)
    runner.enqueue(b"", {"filename": "o"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"first")
    out.assert_attribute_equals("s3.version", first)
