"""ListS3 against a real S3 server (moto on loopback)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from flowcore.builder import Flow
from flowcore.driver.controller import run_flow
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors.aws import list_s3
from processors.aws.list_s3 import ListS3
from tests.processors.aws.s3_server import REGION, SECRET_KEY, configure, credentials_service


def _runner(endpoint: str, **more: str) -> TestRunner:
    runner = TestRunner(ListS3())
    configure(runner, endpoint, **more)
    return runner


def test_list_objects_with_nifi_attributes_and_state(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """One FlowFile per object with s3.* attributes; NiFi's state keys (NiFi's testList)."""
    for key in ("a", "b/c", "d"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"12345")
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    out = runner.flowfiles_for("success")
    assert sorted(f.attributes["filename"] for f in out) == ["a", "b/c", "d"]
    first = out[0]
    first.assert_attribute_equals("s3.bucket", bucket)
    first.assert_attribute_equals("s3.region", REGION)
    first.assert_attribute_equals("s3.length", "5")
    first.assert_attribute_equals("s3.storeClass", "STANDARD")
    first.assert_attribute_equals("s3.isLatest", "true")
    assert first.attributes["s3.etag"]
    state = runner.get_state().values
    newest = max(int(f.attributes["s3.lastModified"]) for f in out)
    assert state["currentTimestamp"] == str(newest)
    assert {v for k, v in state.items() if k.startswith("key-")} == {
        f.attributes["filename"] for f in out if int(f.attributes["s3.lastModified"]) == newest
    }


def test_second_listing_emits_only_new_objects(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Listed objects are not listed again; a new one (even of the same second) is."""
    s3.put_object(Bucket=bucket, Key="one", Body=b"1")
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.run()
    runner.run()
    assert len(runner.flowfiles_for("success")) == 1
    s3.put_object(Bucket=bucket, Key="two", Body=b"2")
    runner.run()
    names = [f.attributes["filename"] for f in runner.flowfiles_for("success")]
    assert names == ["one", "two"]


def test_prefix_and_min_age(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Prefix filters keys; Minimum Object Age holds back objects younger than it."""
    s3.put_object(Bucket=bucket, Key="in/x", Body=b"1")
    s3.put_object(Bucket=bucket, Key="out/y", Body=b"1")
    runner = _runner(s3_endpoint, Bucket=bucket, Prefix="in/")
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["in/x"]
    young = _runner(s3_endpoint, Bucket=bucket, **{"Minimum Object Age": "1 hour"})
    young.run()
    assert young.flowfiles_for("success") == []


def test_versions_tags_and_user_metadata(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Use Versions lists each version with s3.version; tags and metadata become attributes."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=bucket, Key="v", Body=b"1", Tagging="t=1", Metadata={"m": "x"})
    s3.put_object(Bucket=bucket, Key="v", Body=b"22", Tagging="t=2", Metadata={"m": "y"})
    runner = _runner(
        s3_endpoint, Bucket=bucket,
        **{"Use Versions": "true", "Write Object Tags": "true", "Write User Metadata": "true"},
    )  # fmt: skip
    runner.run()
    out = sorted(runner.flowfiles_for("success"), key=lambda f: f.attributes["s3.length"])
    assert [f.attributes["s3.isLatest"] for f in out] == ["false", "true"]
    assert all(f.attributes["s3.version"] for f in out)
    assert [f.attributes["s3.tag.t"] for f in out] == ["1", "2"]
    assert [f.attributes["s3.user.metadata.m"] for f in out] == ["x", "y"]


def test_tracking_entities_needs_a_state_cache() -> None:
    """Tracking Entities without Entity Tracking State Cache: invalid, naming the property."""
    runner = TestRunner(ListS3(bucket="b", listing_strategy="entities"))
    problems = [p.explanation for p in runner.processor.validate() if not p.valid]
    assert any("'Entity Tracking State Cache' is required" in p for p in problems)


def test_missing_bucket_raises_a_clear_error(s3_endpoint: str) -> None:
    """A bucket that does not exist: the listing fails naming S3's NoSuchBucket."""
    runner = _runner(s3_endpoint, Bucket="no-such-bucket-list")
    with pytest.raises(Exception, match="NoSuchBucket"):
        runner.run()


def _run_listing(tmp_path: Path, endpoint: str, bucket: str) -> Any:
    """A batch run (direct runner) of a flow listing *bucket* at *endpoint*."""
    flow = Flow("list-s3")
    flow.add_service(credentials_service())
    listing = ListS3(
        bucket=bucket,
        aws_credentials_provider_service="aws",
        endpoint_override_url=endpoint,
        region=REGION,
        communications_timeout="2 secs",
    )
    flow.auto_terminate(flow.add(listing, name="List archive"), "success")
    settings = Settings(sync=False, parallelism=1)
    return run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)


@pytest.mark.parametrize(
    ("where", "reason"),
    [("bucket", "NoSuchBucket"), ("endpoint", "EndpointConnectionError")],
)
def test_a_failing_listing_ends_a_run_in_one_line(
    tmp_path: Path, s3_endpoint: str, where: str, reason: str
) -> None:
    """A missing bucket or an endpoint nothing listens on: one line naming ListS3 and S3's
    reason, an ERROR bulletin, no secret; the run ends (flowcore run exits 2)."""
    endpoint = "http://127.0.0.1:1" if where == "endpoint" else s3_endpoint
    result = _run_listing(tmp_path, endpoint, "no-such-bucket-run")
    (line,) = result.list_failed.values()
    assert line.startswith("ListS3 'List archive' could not list: ")
    assert reason in line
    assert line.endswith("fix its properties (or what they name) and run again")
    assert SECRET_KEY not in line
    assert any(b.level == "ERROR" and reason in b.message for b in result.bulletins)


def _three(s3: Any, bucket: str) -> None:
    for key in ("a", "b/c", "d/e"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"12345")


def test_simple_list_with_delimiter(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testSimpleListWithDelimiter: Delimiter '/' lists the top level's objects only."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket, Delimiter="/")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("filename", "a")


def test_list_version2_with_prefix(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testListVersion2 and testSimpleListWithPrefix: List Objects V2 lists as V1;
    Prefix 'b/' keeps b/c only."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket, **{"List Type": "2"})
    runner.run()
    names = [f.attributes["filename"] for f in runner.flowfiles_for("success")]
    assert names == ["a", "b/c", "d/e"]
    runner = _runner(s3_endpoint, Bucket=bucket, Prefix="b/", **{"List Type": "2"})
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["b/c"]


def test_simple_list_with_prefix_and_versions(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testSimpleListWithPrefixAndVersions: Use Versions with Prefix 'b/' lists b/c."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket, Prefix="b/", **{"Use Versions": "true"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("filename", "b/c")


def test_no_tracking_lists_every_time(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testNoTrackingList: No Tracking lists every object on each run, keeps no
    currentTimestamp."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket, **{"Listing Strategy": "none"})
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [f.attributes["filename"] for f in outs] == ["a", "b/c", "d/e"]
    outs[0].assert_attribute_equals("s3.bucket", bucket)
    outs[0].assert_attribute_equals("s3.region", REGION)
    runner.clear_transfer_state()
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    assert "currentTimestamp" not in runner.get_state().values


def test_list_objects_nothing_new(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testListObjectsNothingNew: objects at the state's timestamp and keys are not
    listed again."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.run()
    state = dict(runner.get_state().values)
    fresh = _runner(s3_endpoint, Bucket=bucket)
    fresh.set_state(state)
    fresh.run()
    fresh.assert_transfer_count("success", 0)


def test_reset_timestamp_tracking_when_prefix_modified(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """NiFi's testResetTimestampTrackingWhenPrefixModified: a new Prefix lists from scratch
    (here past a state whose timestamp is later than every object)."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket, Prefix="b/")
    runner.set_state({"currentTimestamp": str(2**42), "key-0": "b/c"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property("Prefix", "d/")
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["d/e"]


def test_list_with_records(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testListWithRecords: with a Record Writer one FlowFile lists all objects."""
    from processors.record_services.csv import CSVRecordSetWriter

    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "3")


def test_list_with_records_has_nifi_schema(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testListWithRecords: the records carry RecordObjectWriter's fields, in order,
    with s3.region and the writer's mime.type."""
    from processors.record_services.json import JsonRecordSetWriter

    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("s3.region", REGION)
    out.assert_attribute_equals("mime.type", "application/json")
    records = json.loads(out.content)
    assert [r["key"] for r in records] == ["a", "b/c", "d/e"]
    assert list(records[0]) == [
        "key", "bucket", "owner", "etag", "lastModified", "size", "storageClass", "latest",
        "versionId", "tags", "userMetadata",
    ]  # fmt: skip
    assert records[0]["bucket"] == bucket
    assert records[0]["size"] == 5
    assert records[0]["latest"] is True
    assert records[0]["versionId"] is None
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)  # state committed with the records


def test_records_with_tags_and_user_metadata(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Write Object Tags / Write User Metadata fill the records' tags and userMetadata maps."""
    from processors.record_services.json import JsonRecordSetWriter

    s3.put_object(Bucket=bucket, Key="t", Body=b"1", Tagging="k=v", Metadata={"m": "x"})
    runner = _runner(
        s3_endpoint, Bucket=bucket, **{"Write Object Tags": "true", "Write User Metadata": "true"}
    )
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    (record,) = json.loads(runner.flowfiles_for("success")[0].content)
    assert record["tags"] == {"k": "v"}
    assert record["userMetadata"] == {"m": "x"}


@pytest.mark.parametrize("name", ["Bucket", "Region"])
def test_reset_timestamp_tracking_when_bucket_or_region_modified(
    s3_endpoint: str, s3: Any, bucket: str, name: str
) -> None:
    """NiFi's testResetTimestampTrackingWhen{Bucket,Region}Modified: the state recorded for
    another listing is dropped (flowcore keeps state across runs, NiFi clears it on change)."""
    _three(s3, bucket)
    other = f"{bucket}-other"
    s3.create_bucket(Bucket=other)
    s3.put_object(Bucket=other, Key="b/x", Body=b"1")
    runner = _runner(s3_endpoint, Bucket=bucket, Prefix="b/")
    runner.run()
    runner.set_state({**runner.get_state().values, "currentTimestamp": str(2**42)})
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property(name, other if name == "Bucket" else "eu-central-1")
    runner.run()
    expected = "b/x" if name == "Bucket" else "b/c"
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == [expected]


def test_reset_timestamp_tracking_when_strategy_modified(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """NiFi's testResetTimestampTrackingWhenStrategyModified: No Tracking clears the state."""
    _three(s3, bucket)
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.run()
    assert "currentTimestamp" in runner.get_state().values
    runner.set_property("Listing Strategy", "none")
    runner.run()
    assert dict(runner.get_state().values) == {}


def _tracking(endpoint: str, bucket: str, **more: str) -> tuple[TestRunner, Any]:
    runner = _runner(endpoint, Bucket=bucket, **{"Listing Strategy": "entities"}, **more)
    cache = runner.add_service(MapCacheService("listed"))
    runner.set_property("Entity Tracking State Cache", "listed")
    return runner, cache


def test_tracking_entities_lists_new_and_changed_objects(
    s3_endpoint: str, s3: Any, bucket: str
) -> None:
    """Tracking Entities: each object once; again when its size changes, even at an older
    time than the newest listed (what Tracking Timestamps misses)."""
    _three(s3, bucket)
    runner, cache = _tracking(s3_endpoint, bucket)
    runner.run()
    assert sorted(f.attributes["filename"] for f in runner.flowfiles_for("success")) == [
        "a", "b/c", "d/e",
    ]  # fmt: skip
    (key,) = cache.to_state()
    assert key.startswith("ListedEntities::")
    tracked = json.loads(cache.get(key))["entities"]
    assert tracked["a_null"]["size"] == 5
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    listing = runner.processor.list_work(runner.context, runner.state)
    assert listing.items == ()  # as the last committed listing: no work (no micro-batch)
    s3.put_object(Bucket=bucket, Key="b/c", Body=b"123456789")
    listing = runner.processor.list_work(runner.context, runner.state)
    assert [i.flowfiles for i in listing.items] == [None]  # the task emits only what is new
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["b/c"]


@pytest.mark.parametrize("name", ["Prefix", "Bucket", "Region", "Listing Strategy"])
def test_reset_entity_tracking_when_identifying_property_modified(
    s3_endpoint: str, s3: Any, bucket: str, name: str
) -> None:
    """NiFi's testResetEntityTrackingWhen{Prefix,Bucket,Region,Strategy}Modified: the tracked
    entities are forgotten (NiFi removes the cache key): listed again from scratch."""
    _three(s3, bucket)
    runner, cache = _tracking(s3_endpoint, bucket)
    runner.run()
    runner.clear_transfer_state()
    if name == "Prefix":
        runner.set_property("Prefix", "d/")
    elif name == "Bucket":
        s3.create_bucket(Bucket=f"{bucket}-other")
        s3.put_object(Bucket=f"{bucket}-other", Key="d/e", Body=b"1")
        runner.set_property("Bucket", f"{bucket}-other")
    elif name == "Region":
        runner.set_property("Region", "eu-central-1")
    else:  # a run with No Tracking in between: NiFi clears the tracked entities
        runner.set_property("Listing Strategy", "none")
        runner.run()
        runner.clear_transfer_state()
        runner.set_property("Listing Strategy", "entities")
    runner.run()
    expected = ["d/e"] if name in {"Prefix", "Bucket"} else ["a", "b/c", "d/e"]
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == expected
    if name == "Prefix":
        (value,) = cache.to_state().values()
        assert list(json.loads(value.split(" ", 4)[4])["entities"]) == ["d/e_null"]


def test_tracking_entities_with_records(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """Tracking Entities with a Record Writer: one FlowFile of the new objects' records."""
    from processors.record_services.json import JsonRecordSetWriter

    _three(s3, bucket)
    runner, _ = _tracking(s3_endpoint, bucket)
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "3")
    s3.put_object(Bucket=bucket, Key="f", Body=b"1")
    runner.clear_transfer_state()
    runner.run()
    assert [r["key"] for r in json.loads(runner.flowfiles_for("success")[0].content)] == ["f"]


@pytest.mark.parametrize(
    "more",
    [{}, {"Delimiter": "/"}, {"List Type": "2"}, {"Use Versions": "true"}],
    ids=["v1", "v1-delimiter", "v2", "versions"],
)
def test_pagination_lists_every_page(
    s3_endpoint: str,
    s3: Any,
    bucket: str,
    *,
    monkeypatch: pytest.MonkeyPatch,
    api_calls: list[tuple[str, dict[str, Any]]],
    more: dict[str, str],
) -> None:
    """NiFi's testListV1Pagination*: pages of 2 keys (markers, continuation tokens, version
    markers followed): 3 list requests of 2 keys list all 5 objects."""
    monkeypatch.setattr(list_s3, "PAGE_KEYS", 2)
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"key-{i:04}", Body=b"1")
    runner = _runner(s3_endpoint, Bucket=bucket, **more)
    api_calls.clear()
    runner.run()
    names = sorted(f.attributes["filename"] for f in runner.flowfiles_for("success"))
    assert names == [f"key-{i:04}" for i in range(5)]
    operation = {"List Type": "ListObjectsV2", "Use Versions": "ListObjectVersions"}.get(
        next(iter(more), ""), "ListObjects"
    )
    pages = [(op, p.get("MaxKeys")) for op, p in api_calls if op.startswith("List")]
    assert pages == [(operation, 2)] * 3


def test_tracking_entities_initial_listing_over_items_lists_every_item(
    s3_endpoint: str, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All Available over a first listing of three work items (2 objects each) lists the
    objects of every item though all are older than the window; the next listing none."""
    monkeypatch.setattr(list_s3, "ITEM_OBJECTS", 2)
    for i in range(6):
        s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"1")

    class _Later:  # five hours on: every object is outside the 3 h window
        @staticmethod
        def time() -> float:
            return time.time() + 5 * 3600

    monkeypatch.setattr(list_s3, "time", _Later)
    runner, _ = _tracking(s3_endpoint, bucket)
    runner.run()
    got = sorted(f.attributes["filename"] for f in runner.flowfiles_for("success"))
    assert got == [f"k{i}" for i in range(6)]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_records_owner_is_the_owner_id(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's RecordObjectWriter writes owner().id(), not the display name."""
    from processors.record_services.json import JsonRecordSetWriter

    s3.put_object(Bucket=bucket, Key="a", Body=b"1")
    owner = s3.list_objects(Bucket=bucket)["Contents"][0]["Owner"]
    assert owner["ID"] != owner.get("DisplayName")
    runner = _runner(s3_endpoint, Bucket=bucket)
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    (record,) = json.loads(runner.flowfiles_for("success")[0].content)
    assert record["owner"] == owner["ID"]


def test_list_with_requester_pays(s3_endpoint: str, s3: Any, bucket: str) -> None:
    """NiFi's testListWithRequesterPays and testListVersion2WithRequesterPays: the listing
    asks as the requester (V1 and V2) and lists as without; _invalid: not with Use Versions."""
    _three(s3, bucket)
    for list_type in ("1", "2"):
        runner = _runner(
            s3_endpoint, Bucket=bucket, **{"Requester Pays": "true", "List Type": list_type}
        )
        runner.run()
        names = [f.attributes["filename"] for f in runner.flowfiles_for("success")]
        assert names == ["a", "b/c", "d/e"]
    invalid = ListS3(bucket="b", requester_pays="true", use_versions="true")
    problems = [p.explanation for p in invalid.validate() if not p.valid]
    assert any(
        "'Requester Pays' cannot be used when listing object versions" in p for p in problems
    )


def test_migration_names_resolve() -> None:
    """NiFi's testMigration: ListS3's 1.x property names reach the 2.x properties."""
    renamed = {
        "listing-strategy": "Listing Strategy", "delimiter": "Delimiter", "prefix": "Prefix",
        "use-versions": "Use Versions", "list-type": "List Type", "min-age": "Minimum Object Age",
        "max-age": "Maximum Object Age", "write-s3-object-tags": "Write Object Tags",
        "requester-pays": "Requester Pays", "write-s3-user-metadata": "Write User Metadata",
        "record-writer": "Record Writer", "et-state-cache": "Entity Tracking State Cache",
        "et-time-window": "Entity Tracking Time Window",
        "et-initial-listing-target": "Entity Tracking Initial Listing Target",
    }  # fmt: skip
    processor = ListS3(bucket="b")
    for old, new in renamed.items():
        descriptor = processor.resolve_descriptor(old)
        assert descriptor is not None, old
        assert descriptor.display_name == new
