"""TagS3Object against a real S3 server (moto on loopback)."""

from __future__ import annotations

from typing import Any

from flowcore.testing import TestRunner
from processors.aws.tag_s3_object import TagS3Object
from tests.processors.aws.s3_server import configure


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(TagS3Object())
    configure(runner, endpoint, **more)
    return runner


def test_append_tag_keeps_existing_tags(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Append Tag adds to the tags; s3.tag.* list them (NiFi's testAppendUpdatesTag)."""
    s3.put_object(Bucket=bucket, Key="o", Body=b"x", Tagging="oldTag=oldValue")
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Tag Key": "k1", "Tag Value": "v1"})
    runner.enqueue(b"", {"filename": "o", "s3.tag.stale": "x"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    tags = {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key="o")["TagSet"]}
    assert tags == {"oldTag": "oldValue", "k1": "v1"}
    out.assert_attribute_equals("s3.tag.oldTag", "oldValue")
    out.assert_attribute_equals("s3.tag.k1", "v1")
    assert "s3.tag.stale" not in out.attributes


def test_replace_tags(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Append Tag false replaces the object's tags (NiFi's testReplaceTags)."""
    s3.put_object(Bucket=bucket, Key="o", Body=b"x", Tagging="oldTag=oldValue")
    runner = _runner(
        s3_endpoint, Bucket=bucket, **{"Tag Key": "k1", "Tag Value": "v1", "Append Tag": "false"}
    )
    runner.enqueue(b"", {"filename": "o"})
    runner.run()
    assert s3.get_object_tagging(Bucket=bucket, Key="o")["TagSet"] == [{"Key": "k1", "Value": "v1"}]


def test_tag_missing_object_fails(s3_endpoint: str, bucket: str) -> None:
    """An object that does not exist: failure with s3.errorCode."""
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Tag Key": "k", "Tag Value": "v"})
    runner.enqueue(b"", {"filename": "missing"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].attributes["s3.errorCode"] == "NoSuchKey"


def test_tag_object_version(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testTagObjectVersion: Version ID tags that version, not the latest."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = s3.put_object(Bucket=bucket, Key="o", Body=b"1")["VersionId"]
    s3.put_object(Bucket=bucket, Key="o", Body=b"2")
    runner = _runner(
        s3_endpoint, Bucket=bucket, **{"Tag Key": "k", "Tag Value": "v", "Version ID": first}
    )
    runner.enqueue(b"", {"filename": "o"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    tagged = s3.get_object_tagging(Bucket=bucket, Key="o", VersionId=first)["TagSet"]
    assert tagged == [{"Key": "k", "Value": "v"}]
    assert s3.get_object_tagging(Bucket=bucket, Key="o")["TagSet"] == []


def test_tag_key_and_bucket_evaluated_as_blank(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testTagKeyEvaluatedAsBlank and testBucketEvaluatedAsBlank: failure."""
    s3.put_object(Bucket=bucket, Key="o", Body=b"x")
    for props in (
        {"Bucket": bucket, "Tag Key": "${not.existant.attribute}", "Tag Value": "val"},
        {"Bucket": "${not.existant.attribute}", "Tag Key": "k", "Tag Value": "val"},
    ):
        runner = _runner(s3_endpoint, **props)
        runner.enqueue(b"", {"filename": "o"})
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
    assert s3.get_object_tagging(Bucket=bucket, Key="o")["TagSet"] == []
