"""DeleteS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

from typing import Any

from flowcore.testing import TestRunner
from processors.aws.delete_s3_object import DeleteS3Object
from tests.processors.aws.s3_server import configure


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(DeleteS3Object())
    configure(runner, endpoint, **more)
    return runner


def test_delete_object(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """The object is gone; success, a REMOTE_INVOCATION event (NiFi's testDeleteObjectSimple)."""
    s3.put_object(Bucket=bucket, Key="delete-me", Body=b"x")
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"", {"filename": "delete-me"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert [e.event_type.name for e in runner.provenance_events] == ["REMOTE_INVOCATION"]


def test_delete_missing_key_succeeds(s3_endpoint: str, bucket: str) -> None:
    """S3 deletes are idempotent: a key already gone succeeds (a replay is harmless)."""
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.enqueue(b"", {"filename": "never-there"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)


def test_delete_from_missing_bucket_fails(s3_endpoint: str) -> None:
    """A missing bucket: failure with s3.errorCode (NiFi's testDeleteObjectS3Exception)."""
    runner = _runner(s3_endpoint, Bucket="no-such-bucket-del")
    runner.enqueue(b"", {"filename": "k"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_equals("s3.errorCode", "NoSuchBucket")


def test_delete_version(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testDeleteVersionSimple: Version deletes that version only."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = s3.put_object(Bucket=bucket, Key="o", Body=b"1")["VersionId"]
    second = s3.put_object(Bucket=bucket, Key="o", Body=b"2")["VersionId"]
    runner = TestRunner(DeleteS3Object())
    configure(runner, s3_endpoint, Bucket=bucket, Version="${v}")
    runner.enqueue(b"", {"filename": "o", "v": first})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [v["VersionId"] for v in versions] == [second]


def test_delete_in_folder_leaves_the_rest(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """ITDeleteS3Object testDeleteFolder: that key goes, its siblings stay; 'Object deleted'."""
    for key in ("folder/delete-me", "folder/keep-me"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Object Key": "folder/${name}"})
    runner.enqueue(b"", {"name": "delete-me"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Key"] for o in listed] == ["folder/keep-me"]
    event = runner.provenance_events[0]
    assert (event.details, event.transit_uri) == (
        "Object deleted",
        f"s3://{bucket}/folder/delete-me",
    )


def test_region_from_flowfile_attribute(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testDeleteObjectSimpleRegionFromFlowFileAttribute: Region from s3.region."""
    s3.put_object(Bucket=bucket, Key="r", Body=b"x")
    runner = _runner(s3_endpoint, Bucket=bucket, Region="attribute-defined-region")
    runner.enqueue(b"", {"filename": "r", "s3.region": "us-east-1"})
    runner.enqueue(b"", {"filename": "r"})
    runner.run(2)
    runner.assert_transfer_count("success", 1)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
