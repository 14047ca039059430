"""FetchS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from flowcore.builder import Flow
from flowcore.errors import ConfigurationError, FlowValidationError
from flowcore.testing import TestRunner
from processors.aws import _s3
from processors.aws.fetch_s3_object import FetchS3Object
from tests.processors.aws.s3_server import (
    SECRET_KEY,
    configure,
    credentials_service,
    encryption_service,
)


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(FetchS3Object())
    configure(runner, endpoint, **more)
    return runner


def test_fetch_object_with_nifi_attributes_and_fetch_event(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """The object becomes the content; NiFi's attributes, a FETCH event (NiFi's testGetObject)."""
    put = s3.put_object(
        Bucket=bucket,
        Key="test-key",
        Body=b"Some Content",
        ContentType="text/plain",
        ContentDisposition="key/path/to/file.txt",
        ServerSideEncryption="AES256",
        ChecksumAlgorithm="CRC32",
        Metadata={"userKey1": "userValue1", "userKey2": "userValue2"},
    )
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"", {"filename": "test-key"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"Some Content")
    out.assert_attribute_equals("s3.bucket", bucket)
    out.assert_attribute_equals("filename", "file.txt")
    out.assert_attribute_equals("path", "key/path/to")
    out.assert_attribute_equals("absolute.path", "key/path/to/file.txt")
    out.assert_attribute_equals("mime.type", "text/plain")
    out.assert_attribute_equals("hash.value", put["ChecksumCRC32"])
    out.assert_attribute_equals("hash.algorithm", "CRC32")
    out.assert_attribute_equals("s3.etag", put["ETag"].strip('"'))
    out.assert_attribute_equals("userkey1", "userValue1")
    out.assert_attribute_equals("userkey2", "userValue2")
    out.assert_attribute_equals("s3.sseAlgorithm", "AES256")
    out.assert_attribute_equals("s3.encryptionStrategy", "SSE_S3")
    out.assert_attribute_equals("s3.url", f"{s3_endpoint}/{bucket}/test-key")
    events = runner.provenance_events
    assert [e.event_type.name for e in events] == ["FETCH", "CONTENT_MODIFIED"]  # NiFi's session
    assert events[0].transit_uri == f"s3://{bucket}/test-key"


def test_without_content_disposition_the_filename_stays(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """No Content-Disposition: filename, path untouched (NiFi's testContentDispositionNull)."""
    s3.put_object(Bucket=bucket, Key="dir/a.txt", Body=b"x")
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"", {"filename": "dir/a.txt"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("filename", "dir/a.txt")
    assert out.attributes.get("path") != "dir"  # the harness's own path, not the key's
    assert "absolute.path" not in out.attributes
    assert "s3.contentdisposition" not in out.attributes


def test_requester_pays_and_version_reach_the_request(
    s3_endpoint: str, s3: Any, bucket: str, api_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """NiFi's testGetObjectWithRequesterPays and testGetObjectVersion: GetObject's arguments."""
    s3.put_object(Bucket=bucket, Key="test-key", Body=b"abc")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Requester Pays": "true"})
    runner.enqueue(b"", {"filename": "test-key"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    get = [params for op, params in api_calls if op == "GetObject"][-1]
    assert get["RequestPayer"] == "requester"
    assert "VersionId" not in get
    assert "Range" not in get  # the whole object: no Range header (a 0-byte object has none)


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


def test_range_as_nifi_data_sizes_and_open_ended(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Range Start '2 B' alone reads to the end; a bad size fails naming the property."""
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Range Start": "${start}"})
    runner.enqueue(b"", {"filename": "r", "start": "2 B"})
    runner.enqueue(b"", {"filename": "r", "start": "two"})
    runner.run(2)
    runner.flowfiles_for("success")[0].assert_content_equals(b"23456789")
    failed = runner.flowfiles_for("failure")[0]
    assert "Range Start 'two' is not a data size" in failed.attributes["s3.errorMessage"]
    assert not _runner(s3_endpoint, **{"Range Length": "x"}).is_valid()


def test_zero_byte_object_with_range_start_zero(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi sends no Range for start 0: an empty object fetches (a Range would be a 416)."""
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Range Start": "0 B"})
    runner.enqueue(b"old", {"filename": "empty"})
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals(b"")


def test_server_side_customer_key_round_trip(
    s3_endpoint: str, bucket: str, api_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """ITFetchS3Object testSimpleGetEncrypted: SSE-C's key goes with the PUT and the GET."""
    import base64

    from processors.aws.put_s3_object import PutS3Object

    key = bytes(range(32))
    material = base64.b64encode(key).decode()
    put = TestRunner(PutS3Object())
    configure(put, s3_endpoint, Bucket=bucket, **{"Encryption Service": "enc"})
    put.add_service(encryption_service("SSE_C", key_material=material))
    put.enqueue(b"secret content", {"filename": "enc.txt"})
    put.run()
    put.flowfiles_for("success")[0].assert_attribute_equals("s3.encryptionStrategy", "SSE_C")
    fetch = _runner(s3_endpoint, Bucket=bucket, **{"Encryption Service": "enc"})
    fetch.add_service(encryption_service("SSE_C", key_material=material))
    fetch.enqueue(b"", {"filename": "enc.txt"})
    fetch.run()
    out = fetch.flowfiles_for("success")[0]
    out.assert_content_equals(b"secret content")
    out.assert_attribute_equals("s3.encryptionStrategy", "SSE_C")
    sent = {op: params for op, params in api_calls if op in {"PutObject", "GetObject"}}
    for op in ("PutObject", "GetObject"):
        assert sent[op]["SSECustomerAlgorithm"] == "AES256"
        assert sent[op]["SSECustomerKey"] == key
    assert material not in repr(fetch.controller_service("enc"))


def test_server_side_s3_service_is_refused_for_fetching(s3_endpoint: str, bucket: str) -> None:
    """NiFi's customValidate: SSE-S3/KMS services are for PutS3Object (S3 decrypts by itself)."""
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Encryption Service": "enc"})
    runner.add_service(encryption_service("SSE_S3"))
    runner.enqueue(b"", {"filename": "k"})
    with pytest.raises(ConfigurationError, match="not a valid encryption strategy for fetching"):
        runner.run()


def test_flow_validation_refuses_server_side_s3_and_kms_services() -> None:
    """The flow is refused before it runs (no FlowFile retried); SSE-C passes that check."""
    kms = "arn:aws:kms:us-east-1:123456789012:key/flowcore"
    key = base64.b64encode(bytes(32)).decode()
    found = {}
    for strategy, more in (("SSE_S3", {}), ("SSE_KMS", {"kms_key_id": kms}),
                           ("SSE_C", {"key_material": key})):  # fmt: skip
        flow = Flow(f"fetch-{strategy.lower()}")
        flow.add_service(credentials_service())
        flow.add_service(encryption_service(strategy, **more))
        fetch = flow.add(
            FetchS3Object(bucket="b", aws_credentials_provider_service="aws",
                          encryption_service="enc"), name="fetch",
        )  # fmt: skip
        flow.auto_terminate(fetch, ["success", "failure"])
        with pytest.raises(FlowValidationError) as raised:
            flow.validate()  # FetchS3Object has no input here: at least that problem
        found[strategy] = [p for p in raised.value.problems if "Encryption Service" in p.problem]
    assert "Server-side S3 is not a valid encryption strategy" in found["SSE_S3"][0].problem
    assert "Server-side KMS is not a valid encryption strategy" in found["SSE_KMS"][0].problem
    assert found["SSE_S3"][0].fix == "remove the Encryption Service from FetchS3Object"
    assert found["SSE_C"] == []


def test_range_length_must_be_at_least_one_byte(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's bounds (1 byte and up): '0 B' is invalid, and so is 0 from an attribute."""
    for refused in ("0", "0 B"):
        problems = _runner(s3_endpoint, **{"Range Length": refused}).validation_problems()
        assert "at least 1 byte" in str(problems[0])
    assert _runner(s3_endpoint, **{"Range Length": "1 B"}).is_valid()
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Range Length": "${length}"})
    runner.enqueue(b"", {"filename": "r", "length": "0"})
    runner.run()
    failed = runner.flowfiles_for("failure")[0]
    assert "Range Length '0' must be at least 1 byte" in failed.attributes["s3.errorMessage"]


def test_expiration_header_parsed_as_nifi() -> None:
    """NiFi's testGetObject: s3.expirationTime in epoch millis and s3.expirationTimeRuleId."""
    header = 'expiry-date="Fri, 23 Dec 2012 00:00:00 GMT", rule-id="testExpirationRuleId"'
    assert _s3.expiration_attributes(header) == {
        "s3.expirationTime": "1356220800000",
        "s3.expirationTimeRuleId": "testExpirationRuleId",
    }
    assert _s3.expiration_attributes("garbage") == {}
    assert _s3.expiration_attributes(None) == {}
