"""PutS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

import io
import os
from typing import Any, ClassVar

import attrs
import pytest

from flowcore.testing import TestRunner
from flowcore.validators import DATA_SIZE_VALIDATOR
from processors.aws.put_s3_object import (
    MULTIPART_PART_SIZE,
    MULTIPART_THRESHOLD,
    PutS3Object,
    upload_multipart,
)
from tests.processors.aws.s3_server import configure, encryption_service


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
    runner = TestRunner(_SmallPartsPut())
    configure(
        runner,
        s3_endpoint,
        Bucket=bucket,
        **{"Object Tags Prefix": "tagS3", "Remove Tag Prefix": "true"},
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


def test_storage_classes(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testStorageClasses: the object has the class; s3.storeClass names it."""
    classes = ("STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "GLACIER_IR")
    for storage_class in classes:
        runner = _runner(s3_endpoint, Bucket=bucket, **{"Storage Class": storage_class})
        runner.enqueue(b"x", {"filename": storage_class})
        runner.run()
        out = runner.flowfiles_for("success")[0]
        out.assert_attribute_equals("s3.storeClass", storage_class)
        head = s3.head_object(Bucket=bucket, Key=storage_class)
        assert head.get("StorageClass", "STANDARD") == storage_class


def test_content_headers_and_their_attributes(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """ITPutS3Object testContentType, testCacheControl, testContentDispositionInline/Attachment."""
    cases = (
        ({"Content Type": "text/plain", "Content Disposition": "inline"}, "inline"),
        ({"Cache Control": "no-cache", "Content Disposition": "attachment"},
         'attachment; filename="hello+w%C3%B6rld.txt"'),
    )  # fmt: skip
    for number, (props, disposition) in enumerate(cases):
        runner = _runner(s3_endpoint, Bucket=bucket, **props)
        runner.set_property("Object Key", f"k{number}")
        runner.enqueue(b"x", {"filename": "hello wörld.txt"})
        runner.run()
        out = runner.flowfiles_for("success")[0]
        head = s3.head_object(Bucket=bucket, Key=f"k{number}")
        assert head["ContentDisposition"] == disposition
        out.assert_attribute_equals("s3.contentdisposition", disposition)
        if "Content Type" in props:
            out.assert_attribute_equals("s3.contenttype", "text/plain")
            assert head["ContentType"] == "text/plain"
        else:
            out.assert_attribute_equals("s3.cachecontrol", "no-cache")
            assert head["CacheControl"] == "no-cache"
        out.assert_attribute_equals("s3.apimethod", "putobject")
        out.assert_attribute_equals("s3.url", f"{s3_endpoint}/{bucket}/k{number}")


def test_content_disposition_unset_is_the_encoded_filename(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """ITPutS3Object testContentDispositionNull: the URL-encoded filename, read back by Fetch."""
    from processors.aws.fetch_s3_object import FetchS3Object

    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"x", {"filename": "folder/a b.txt"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    assert "s3.contentdisposition" not in out.attributes
    assert s3.head_object(Bucket=bucket, Key="folder/a b.txt")["ContentDisposition"] == (
        "folder%2Fa+b.txt"
    )
    fetch = TestRunner(FetchS3Object())
    configure(fetch, s3_endpoint, Bucket=bucket)
    fetch.enqueue(b"", {"filename": "folder/a b.txt"})
    fetch.run()
    got = fetch.flowfiles_for("success")[0]
    got.assert_attribute_equals("filename", "a b.txt")
    got.assert_attribute_equals("path", "folder")


def test_grantee_lists_set_the_object_acl(
    s3_endpoint: str, s3: Any, bucket: str, api_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """ITPutS3Object testPermissions: id=/emailAddress= grants; they win over the Canned ACL."""
    runner = _runner(
        s3_endpoint, Bucket=bucket,
        **{"FullControl User List": "28545acd76c35c7e", "Read Permission User List": "${readers}",
           "Canned ACL": "PublicRead"},
    )  # fmt: skip
    runner.enqueue(b"x", {"filename": "folder/4.txt", "readers": "r1, a@example.com"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    put = [p for op, p in api_calls if op == "PutObject"][-1]
    assert put["GrantFullControl"] == "id=28545acd76c35c7e"
    assert put["GrantRead"] == "id=r1,emailAddress=a@example.com"
    assert "ACL" not in put
    grants = s3.get_object_acl(Bucket=bucket, Key="folder/4.txt")["Grants"]
    got = {(g["Grantee"].get("ID"), g["Permission"]) for g in grants}
    assert {("28545acd76c35c7e", "FULL_CONTROL"), ("r1", "READ")} <= got  # moto keeps the first


def test_canned_acl_from_attribute_and_a_bad_one(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Canned ACL defaults to ${s3.permissions.cannedacl}; an unknown name fails naming it."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"x", {"filename": "pub", "s3.permissions.cannedacl": "PublicRead"})
    runner.enqueue(b"x", {"filename": "bad", "s3.permissions.cannedacl": "Everyone"})
    runner.run(2)
    grants = s3.get_object_acl(Bucket=bucket, Key="pub")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("AllUsers") for g in grants)
    failed = runner.flowfiles_for("failure")[0]
    assert "Canned ACL 'Everyone' is not one of" in failed.attributes["s3.errorMessage"]
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="bad")


def test_encryption_service_strategies(
    s3_endpoint: str, s3: Any, bucket: str, api_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """ITPutS3Object testEncryptionServiceWithServerSide(S3|KMS)...; 1.x AES256 acts as SSE_S3."""
    kms = "arn:aws:kms:us-east-1:123456789012:key/flowcore"
    cases = (
        ("s3", {"Encryption Service": "enc"}, encryption_service("SSE_S3"), "AES256", "SSE_S3"),
        ("kms", {"Encryption Service": "enc"}, encryption_service("SSE_KMS", kms_key_id=kms),
         "aws:kms", "SSE_KMS"),
        ("v1", {"Server Side Encryption": "AES256"}, None, "AES256", "SSE_S3"),
    )  # fmt: skip
    for key, props, service, algorithm, strategy in cases:
        runner = _runner(s3_endpoint, Bucket=bucket, **props)
        if service is not None:
            runner.add_service(service)
        runner.enqueue(b"x", {"filename": key})
        runner.run()
        out = runner.flowfiles_for("success")[0]
        out.assert_attribute_equals("s3.sseAlgorithm", algorithm)
        out.assert_attribute_equals("s3.encryptionStrategy", strategy)
        assert s3.head_object(Bucket=bucket, Key=key)["ServerSideEncryption"] == algorithm
    put = next(p for op, p in api_calls if op == "PutObject" and p["Key"] == "kms")
    assert put["SSEKMSKeyId"] == kms


def test_server_side_encryption_and_service_are_exclusive() -> None:
    """NiFi 1.x's Server Side Encryption with NiFi 2's Encryption Service is invalid."""
    runner = TestRunner(PutS3Object())
    runner.set_property("Server Side Encryption", "AES256")
    runner.set_property("Encryption Service", "enc")
    assert any("exclusive" in str(p) for p in runner.validation_problems())


def test_user_metadata_attribute_as_nifi(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """ITPutS3Object testMetaData: s3.usermetadata lists name=value lines (NiFi's newline)."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.set_property("TEST-PROP-1", "TESTING-1-2-3")
    runner.set_property("TEST-PROP-2", "${p2}")
    runner.enqueue(b"x", {"filename": "m", "p2": "TESTING-4-5-6"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals(
        "s3.usermetadata", "TEST-PROP-1=TESTING-1-2-3\nTEST-PROP-2=TESTING-4-5-6"
    )
    assert s3.head_object(Bucket=bucket, Key="m")["Metadata"] == {
        "test-prop-1": "TESTING-1-2-3", "test-prop-2": "TESTING-4-5-6",
    }  # fmt: skip


def test_age_off_aborts_old_uploads_once_per_interval(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any
) -> None:
    """Multipart Upload AgeOff aborts uploads past the Max Age, once per AgeOff Interval."""
    from processors.aws import _multipart

    s3.create_multipart_upload(Bucket=bucket, Key="abandoned")  # moto dates it 2010
    props = {"Temporary Directory Multipart State": str(tmp_path)}
    runner = _runner(s3_endpoint, Bucket=bucket, **props)
    store = PutS3Object._state_store(runner.context)
    store.save("stale", _multipart.MultipartState(upload_id="gone"))
    fresh = store.path("stale")
    import os

    os.utime(fresh)
    runner.enqueue(b"x", {"filename": "k"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert store.load("stale") is not None  # saved just now: younger than 7 days
    again = s3.create_multipart_upload(Bucket=bucket, Key="abandoned")["UploadId"]
    runner.enqueue(b"x", {"filename": "k2"})
    runner.run()  # within the interval: not checked again
    listed = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [u["UploadId"] for u in listed] == [again]


def test_persistence_directory_and_cache_key(tmp_path: Any) -> None:
    """NiFi's testPersistenceFileLocation* and testBuildCacheKeyIncludesFlowFileUUID."""
    import tempfile

    runner = TestRunner(PutS3Object())
    assert PutS3Object._state_store(runner.context).directory == tempfile.gettempdir()
    paths = set()
    for directory in (str(tmp_path), str(tmp_path) + "/"):
        runner.set_property("Temporary Directory Multipart State", directory)
        store = PutS3Object._state_store(runner.context)
        paths.add(os.path.dirname(os.path.normpath(store.path("p/b/k/uuid-1"))))
    assert paths == {str(tmp_path)}
    assert store.path("p/b/k/uuid-1") != store.path("p/b/k/uuid-2")


class _SmallPartsPut(PutS3Object):
    """PutS3Object with S3's 5 MiB part minimum (NiFi's is 50 MB): the test sends 12 MiB."""

    property_descriptors: ClassVar = tuple(
        attrs.evolve(d, validators=(DATA_SIZE_VALIDATOR,))
        if d.name in {MULTIPART_THRESHOLD.name, MULTIPART_PART_SIZE.name}
        else d
        for d in PutS3Object.property_descriptors
    )


def test_processor_resumes_multipart_upload_after_a_crash(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task that dies before part 3 leaves its FlowFile queued; the retry sends part 3 only."""
    from botocore.client import BaseClient

    parts: list[int] = []
    real = BaseClient._make_api_call

    def crash_before_part_3(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "UploadPart":
            parts.append(params["PartNumber"])
            if params["PartNumber"] == 3 and parts.count(3) == 1:
                msg = "the task dies here"
                raise RuntimeError(msg)
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", crash_before_part_3)
    runner = TestRunner(_SmallPartsPut())
    configure(
        runner, s3_endpoint, Bucket=bucket, **{
            "Multipart Threshold": "5 MB", "Multipart Part Size": "5 MB",
            "Multipart Upload Max Age Threshold": "36500 days",  # moto dates uploads 2010
            "Temporary Directory Multipart State": str(tmp_path),
        },
    )  # fmt: skip
    data = os.urandom(3 << 20) * 4  # 12 MiB: parts of 5, 5 and 2 MiB
    runner.enqueue(data, {"filename": "big"})
    with pytest.raises(RuntimeError, match="dies here"):
        runner.run()
    created = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert len(created) == 1  # not aged off, not aborted: kept for the retry
    runner.advance_time(3600)  # past the penalty of the rolled-back FlowFile
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    assert parts == [1, 2, 3, 3]  # the retry sent part 3 only
    out.assert_attribute_equals("s3.uploadId", created[0]["UploadId"])
    out.assert_attribute_equals("s3.apimethod", "multipartupload")
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == data
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert not [p for p in os.listdir(tmp_path) if "multipart" in p]


def _file_source(runner: TestRunner, path_expression: str = "${file.path}") -> None:
    """Resource Transfer Source: File Resource Service, naming a StandardFileResourceService."""
    from processors.file_resource import StandardFileResourceService

    runner.add_service(StandardFileResourceService("files", file_path=path_expression))
    runner.set_property("Resource Transfer Source", "FILE_RESOURCE_SERVICE")
    runner.set_property("File Resource Service", "files")


def test_put_from_local_file(s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any) -> None:
    """The file's bytes are sent, the FlowFile's content untouched (NiFi's testPutFromLocalFile)."""
    local = tmp_path / "local.bin"
    local.write_bytes(b"the local file's bytes")
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner)
    runner.enqueue(b"listing entry", {"filename": "local.bin", "file.path": str(local)})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"listing entry")
    got = s3.get_object(Bucket=bucket, Key="local.bin")
    assert got["Body"].read() == b"the local file's bytes"
    out.assert_attribute_equals("s3.etag", got["ETag"].strip('"'))
    out.assert_attribute_equals("s3.apimethod", "putobject")
    assert [(e.event_type.name, e.transit_uri) for e in runner.provenance_events] == [
        ("SEND", f"s3://{bucket}/local.bin")
    ]


def test_put_from_nonexistent_local_file_fails(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any
) -> None:
    """A missing file: failure, penalized, NiFi's message (testPutFromNonExistentLocalFile)."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner)
    gone = tmp_path / "gone.bin"
    runner.enqueue(b"x", {"filename": "gone.bin", "file.path": str(gone)})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_equals(
        "s3.errorMessage", f"Path does not exist or it is not a file: {gone}"
    )
    out.assert_attribute_equals("s3.exception", "processors.file_resource.FileResourceError")
    assert out.is_penalized(runner.now())
    assert s3.list_objects_v2(Bucket=bucket).get("Contents", []) == []
    assert "SEND" not in [e.event_type.name for e in runner.provenance_events]


def test_file_resource_service_required_only_for_file_source() -> None:
    """File Resource Service is required when, and only when, the source is that service."""
    runner = _runner("http://127.0.0.1:9", Bucket="b")  # validation only: never called
    runner.assert_valid()
    runner.set_property("Resource Transfer Source", "FILE_RESOURCE_SERVICE")
    assert [p.subject for p in runner.validation_problems()] == ["File Resource Service"]
    _file_source(runner)
    runner.assert_valid()
    assert not runner.set_property("Resource Transfer Source", "LOCAL_FILE").valid


def _multipart_file_runner(s3_endpoint: str, bucket: str, state_dir: Any) -> TestRunner:
    runner = TestRunner(_SmallPartsPut())
    configure(
        runner, s3_endpoint, Bucket=bucket, **{
            "Multipart Threshold": "5 MB", "Multipart Part Size": "5 MB",
            "Multipart Upload Max Age Threshold": "36500 days",  # moto dates uploads 2010
            "Temporary Directory Multipart State": str(state_dir),
        },
    )  # fmt: skip
    _file_source(runner)
    return runner


def _crash_part(monkeypatch: pytest.MonkeyPatch, number: int, then: Any = None) -> list[int]:
    """UploadPart numbers sent; the first part *number* dies (after *then*, if given)."""
    from botocore.client import BaseClient

    parts: list[int] = []
    real = BaseClient._make_api_call

    def crash(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "UploadPart":
            parts.append(params["PartNumber"])
            if params["PartNumber"] == number and parts.count(number) == 1:
                if then is None:
                    msg = "the task dies here"
                    raise RuntimeError(msg)
                then()
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", crash)
    return parts


def test_multipart_from_local_file_resumes_or_starts_over(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's size picks multipart; a crash resumes on the same file, restarts on a new one."""
    local = tmp_path / "big.bin"
    first = os.urandom(3 << 20) * 4  # 12 MiB: parts of 5, 5 and 2 MiB
    local.write_bytes(first)
    parts = _crash_part(monkeypatch, 3)
    runner = _multipart_file_runner(s3_endpoint, bucket, tmp_path / "state")
    runner.enqueue(b"small", {"filename": "big", "file.path": str(local)})
    with pytest.raises(RuntimeError, match="dies here"):
        runner.run()
    upload = s3.list_multipart_uploads(Bucket=bucket)["Uploads"][0]["UploadId"]
    runner.advance_time(3600)
    runner.run()  # the same file: part 3 only
    runner.assert_all_flowfiles_transferred("success", 1)
    assert parts == [1, 2, 3, 3]
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("s3.uploadId", upload)
    out.assert_content_equals(b"small")
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == first

    parts.clear()
    runner.clear_transfer_state()
    runner.enqueue(b"small", {"filename": "big", "file.path": str(local)})
    with pytest.raises(RuntimeError, match="dies here"):
        runner.run()
    second = first[: 10 << 20] + os.urandom(2 << 20)  # parts 1 and 2 alike, the file rewritten
    local.write_bytes(second)
    runner.advance_time(3600)
    runner.run()  # another file: starts over, the old upload aborted
    runner.assert_all_flowfiles_transferred("success", 1)
    assert parts == [1, 2, 3, 1, 2, 3]
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == second
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_file_changed_while_sent_fails_before_the_object_appears(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file appended to between parts: failure, the upload aborted, no object, no state."""
    local = tmp_path / "growing.bin"
    local.write_bytes(os.urandom(6 << 20))

    def append() -> None:
        with open(local, "ab") as handle:
            handle.write(b"more")

    _crash_part(monkeypatch, 2, then=append)
    runner = _multipart_file_runner(s3_endpoint, bucket, tmp_path / "state")
    runner.enqueue(b"x", {"filename": "growing", "file.path": str(local)})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["s3.errorMessage"]
    assert message.startswith(f"File changed while it was being sent: {local}")
    assert s3.list_objects_v2(Bucket=bucket).get("Contents", []) == []
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert os.listdir(tmp_path / "state") == []


def test_file_changed_during_a_single_put_fails(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file rewritten while its one PUT is sent: failure naming it (the retry sends it anew)."""
    from botocore.client import BaseClient

    local = tmp_path / "small.bin"
    local.write_bytes(b"first")
    real = BaseClient._make_api_call

    def rewrite_during_put(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "PutObject":
            local.write_bytes(b"second!")
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", rewrite_during_put)
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner)
    runner.enqueue(b"x", {"filename": "small", "file.path": str(local)})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["s3.errorMessage"]
    assert message.startswith(f"File changed while it was being sent: {local}")


def _rewrite_keeping_mtime(path: Any, data: bytes) -> None:
    """Rewrite *path* in place, its modification time as before (a coarse-clock filesystem)."""
    found = os.stat(path)
    path.write_bytes(data)
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns))


def test_same_size_rewrite_during_a_single_put_fails(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PUT carries the file's MD5 as found; a same-size rewrite during it fails the FlowFile."""
    from botocore.client import BaseClient

    local = tmp_path / "small.bin"
    local.write_bytes(b"first")
    sent: list[dict[str, Any]] = []
    real = BaseClient._make_api_call

    def rewrite_during_put(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "PutObject":
            sent.append(params)
            _rewrite_keeping_mtime(local, b"FIRST")  # size, mtime, inode as found
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", rewrite_during_put)
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner)
    runner.enqueue(b"x", {"filename": "small", "file.path": str(local)})
    runner.run()
    # S3 refuses the body (BadDigest) and keeps the old object; moto does not check
    # Content-MD5, so the ETag check catches it after the fact.
    assert sent[0]["ContentMD5"] == "iwTV43ddKY54RV78XKQE1Q=="  # MD5 of b"first"
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["s3.errorMessage"]
    assert message.startswith(f"File changed while it was being sent: {local}")


def test_bad_digest_leaves_the_old_object_and_fails(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3's BadDigest (a body other than the file hashed) is a changed file: failure, no retry."""
    from botocore.client import BaseClient

    local = tmp_path / "small.bin"
    local.write_bytes(b"first")
    s3.put_object(Bucket=bucket, Key="small", Body=b"previous")
    real = BaseClient._make_api_call

    def wrong_digest(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if operation == "PutObject":  # what S3 answers a body rewritten during the PUT
            from botocore.exceptions import ClientError

            error = {"Error": {"Code": "BadDigest", "Message": "The Content-MD5 you specified"}}
            raise ClientError(error, "PutObject")
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", wrong_digest)
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner)
    runner.enqueue(b"x", {"filename": "small", "file.path": str(local)})
    runner.run()
    monkeypatch.undo()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["s3.errorMessage"]
    assert message.startswith(f"File changed while it was being sent: {local}")
    assert s3.get_object(Bucket=bucket, Key="small")["Body"].read() == b"previous"


def test_same_size_rewrite_between_parts_aborts_the_upload(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parts from two versions of a file (size and mtime kept) are never completed."""
    local = tmp_path / "big.bin"
    first = os.urandom(5 << 20) + b"tail"
    local.write_bytes(first)
    _crash_part(monkeypatch, 2, then=lambda: _rewrite_keeping_mtime(local, os.urandom(len(first))))
    runner = _multipart_file_runner(s3_endpoint, bucket, tmp_path / "state")
    runner.enqueue(b"small", {"filename": "big", "file.path": str(local)})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_resume_compares_part_digests_of_a_same_size_rewrite(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file rewritten between attempts keeping size, mtime and inode: the upload starts over."""
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(5 << 20) + b"tail")
    parts = _crash_part(monkeypatch, 2)
    runner = _multipart_file_runner(s3_endpoint, bucket, tmp_path / "state")
    runner.enqueue(b"small", {"filename": "big", "file.path": str(local)})
    with pytest.raises(RuntimeError, match="dies here"):
        runner.run()
    second = os.urandom(5 << 20) + b"tail"
    _rewrite_keeping_mtime(local, second)
    runner.advance_time(3600)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert parts == [1, 2, 1, 2]
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == second


def test_filename_climbing_out_of_absolute_path_fails(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Any
) -> None:
    """filename=../../etc/hostname under the default File Path: failure, nothing sent."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    _file_source(runner, "${absolute.path}/${filename}")
    climb = "../" * 8 + "etc/hostname"
    runner.enqueue(b"x", {"filename": climb, "absolute.path": str(tmp_path)})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["s3.errorMessage"]
    assert message.startswith("Evaluated path has a '..' segment: ")
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


def test_a_directory_bucket_gets_no_content_md5_and_no_etag_check(tmp_path: Any) -> None:
    """S3 Express directory buckets (`--x-s3`) refuse Content-MD5 and their ETag is no MD5:
    a single PUT from a file sends none there and does not judge the ETag; another bucket
    gets both (moto cannot serve a directory bucket: boto3 opens a CreateSession first)."""
    from processors.aws.put_s3_object import PutS3Object
    from processors.file_resource import FileChangedError, FileResource

    local = tmp_path / "small.bin"
    local.write_bytes(b"first")
    sent: list[dict[str, Any]] = []

    class Recording:
        def put_object(self, **params: Any) -> dict[str, Any]:
            sent.append(params)
            return {"ETag": '"0123456789abcdef0123456789abcdef"'}

    resource = FileResource.of(str(local))
    express = "flowcore-express--usw2-az1--x-s3"
    PutS3Object._put(Recording(), None, None, express, "k", {}, resource)  # type: ignore[arg-type]
    assert "ContentMD5" not in sent[0]
    with pytest.raises(FileChangedError):
        PutS3Object._put(Recording(), None, None, "plain", "k", {}, resource)  # type: ignore[arg-type]
    assert sent[1]["ContentMD5"] == "iwTV43ddKY54RV78XKQE1Q=="  # MD5 of b"first"
