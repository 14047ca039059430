"""PutS3Object's multipart uploads: local state, resume after a real kill, age-off (moto)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import botocore.exceptions
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.aws import _multipart
from processors.aws._multipart import MultipartState, StateStore, upload_multipart
from tests.processors.aws import multipart_child as child
from tests.processors.aws.s3_server import client

ROOT = Path(__file__).resolve().parents[3]


@settings(max_examples=25, deadline=None)
@given(
    upload_id=st.text(min_size=1, max_size=60),
    parts=st.lists(st.text(min_size=1, max_size=40), max_size=5),
    cache_key=st.text(min_size=1, max_size=80),
)
def test_state_round_trips(
    tmp_path_factory: Any, upload_id: str, parts: list[str], cache_key: str
) -> None:
    """NiFi's testStateToString / testStatePersistsETags: what is saved loads back the same."""
    store = StateStore(str(tmp_path_factory.mktemp("state")), "owner")
    state = MultipartState(
        upload_id=upload_id, position=7, parts=[(n + 1, e) for n, e in enumerate(parts)],
        part_size=5 << 20, storage_class="STANDARD_IA", content_length=99,
    )  # fmt: skip
    saved = store.save(cache_key, state)
    assert store.load(cache_key) == saved
    assert saved.owner == "owner"
    assert saved.timestamp > 0


def test_state_remove_corrupt_and_local_age_off(tmp_path: Path) -> None:
    """NiFi's testStateRemove and the local age-off: only this owner's old states go."""
    store, other = StateStore(str(tmp_path), "mine"), StateStore(str(tmp_path), "theirs")
    store.save("a", MultipartState(upload_id="1"))
    store.remove("a")
    assert store.load("a") is None
    store.remove("a")  # twice: no error
    Path(store.path("bad")).write_text("{not json")
    assert store.load("bad") is None  # unreadable: the upload starts anew
    store.save("old", MultipartState(upload_id="2"))
    other.save("old", MultipartState(upload_id="3"))
    assert store.age_off(cutoff_ms=2**62) == 1
    assert store.load("old") is None
    assert other.load("old") is not None


def test_resume_after_kill_uploads_only_the_rest(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path, api_calls: list[Any]
) -> None:
    """Killed (SIGKILL) before part 3, the retry sends part 3 only; the object lands whole."""
    content = tmp_path / "content"
    data = os.urandom(3 << 20) * 4  # 12 MiB: parts of 5, 5 and 2 MiB
    content.write_bytes(data)
    state_dir = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.processors.aws.multipart_child", s3_endpoint, bucket,
         "big", str(state_dir), str(content)],
        cwd=ROOT, env=env, timeout=120, capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == -9, done.stderr.decode()[-2000:]
    store = StateStore(str(state_dir), child.OWNER)
    saved = store.load(child.CACHE_KEY)
    assert saved is not None
    assert [n for n, _ in saved.parts] == [1, 2]
    assert saved.position == 2 * child.PART
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)  # nothing visible yet
    result = upload_multipart(
        client(s3_endpoint), child.FileSession(str(content)), child.Content(len(data)), bucket,
        "big", {}, child.PART, store=store, cache_key=child.CACHE_KEY,
    )  # fmt: skip
    assert result["Resumed"] == 2
    assert [p["PartNumber"] for op, p in api_calls if op == "UploadPart"] == [3]
    assert result["UploadId"] == saved.upload_id
    assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == data
    assert store.load(child.CACHE_KEY) is None
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_state_of_an_upload_s3_forgot_starts_anew(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path
) -> None:
    """A saved upload that S3 no longer has (aborted, aged off): dropped, a new upload."""
    store = StateStore(str(tmp_path), "o")
    aborted = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=aborted)
    size = 64 << 10
    store.save("c", MultipartState(upload_id=aborted, part_size=5 << 20, content_length=size))
    path = tmp_path / "content"
    path.write_bytes(os.urandom(size))
    result = upload_multipart(
        client(s3_endpoint), child.FileSession(str(path)), child.Content(size), bucket, "k",
        {}, 5 << 20, store=store, cache_key="c",
    )  # fmt: skip
    assert result["Resumed"] == 0
    assert result["UploadId"] != aborted
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == path.read_bytes()


def test_age_off_skips_recent_uploads_and_refused_listing(s3: Any, bucket: str) -> None:
    """Uploads younger than the Max Age stay; a listing S3 refuses does not fail the put."""
    kept = s3.create_multipart_upload(Bucket=bucket, Key="young")["UploadId"]
    # moto dates uploads 2010: "now" one day later keeps it with a 7-day threshold.
    initiated = s3.list_multipart_uploads(Bucket=bucket)["Uploads"][0]["Initiated"].timestamp()
    got = _multipart.age_off(s3, bucket, None, 0, 7 * 86400, now=initiated + 86400)
    assert got == []
    assert [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket)["Uploads"]] == [kept]
    assert _multipart.age_off(s3, "no-such-bucket-ageoff", None, 0, 1, now=initiated + 10) == []


def test_multipart_with_each_server_side_strategy(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path, api_calls: list[Any]
) -> None:
    """ITPutS3Object testEncryptionServiceWith(S3|KMS|C)...UsingMultipartUpload."""
    from flowcore.controller_service import enabled_service
    from tests.processors.aws.s3_server import encryption_service

    key = bytes(range(32))
    kms = "arn:aws:kms:us-east-1:123456789012:key/flowcore"
    path = tmp_path / "content"
    path.write_bytes(os.urandom(64 << 10))  # one (last) part: S3's 5 MiB minimum does not apply
    for strategy, more in (
        ("SSE_S3", {}), ("SSE_KMS", {"kms_key_id": kms}),
        ("SSE_C", {"key_material": base64.b64encode(key).decode()}),
    ):  # fmt: skip
        declared = encryption_service(strategy, **more)
        service = enabled_service("enc", {"enc": declared})
        upload_multipart(
            client(s3_endpoint), child.FileSession(str(path)), child.Content(64 << 10), bucket,
            strategy, service.put_args(), 5 << 20, part_extra=service.part_args(),
        )  # fmt: skip
        args = {"Bucket": bucket, "Key": strategy, **service.get_args()}
        assert s3.get_object(**args)["Body"].read() == path.read_bytes()
    created = {p["Key"]: p for op, p in api_calls if op == "CreateMultipartUpload"}
    assert created["SSE_S3"]["ServerSideEncryption"] == "AES256"
    assert created["SSE_KMS"]["SSEKMSKeyId"] == kms
    assert created["SSE_C"]["SSECustomerKey"] == key
    parts = [p for op, p in api_calls if op == "UploadPart"]
    assert [p.get("SSECustomerKey") for p in parts] == [None, None, key]
    head = s3.head_object(Bucket=bucket, Key="SSE_KMS")
    assert head["ServerSideEncryption"] == "aws:kms"


def _fail_part(s3_client: Any, number: int, code: str = "SlowDown") -> Any:
    """*s3_client* whose UploadPart of part *number* fails with S3 error *code*."""
    real = s3_client.upload_part

    def upload_part(**params: Any) -> Any:
        if params["PartNumber"] == number:
            error = {"Error": {"Code": code, "Message": "refused by the test"}}
            raise botocore.exceptions.ClientError(error, "UploadPart")
        return real(**params)

    s3_client.upload_part = upload_part
    return s3_client


def _first_attempt(  # noqa: PLR0917
    endpoint: str, path: Path, bucket: str, store: StateStore, extra: dict[str, Any],
    part_extra: dict[str, Any] | None = None,
) -> MultipartState:  # fmt: skip
    """Send *path* until its part 2 fails (as PutS3Object: to failure, the state kept)."""
    size = path.stat().st_size
    with pytest.raises(botocore.exceptions.ClientError):
        upload_multipart(
            _fail_part(client(endpoint), 2), child.FileSession(str(path)), child.Content(size),
            bucket, "k", extra, child.PART, part_extra=part_extra, store=store, cache_key="c",
        )  # fmt: skip
    saved = store.load("c")
    assert saved is not None
    assert len(saved.parts) == 1
    return saved


def test_same_uuid_with_other_content_of_the_same_size_starts_anew(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path
) -> None:
    """Review: a retry whose content changed (same size) must not complete a mixed object."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_bytes(b"A" * (child.PART + 1000))
    second.write_bytes(b"B" * (child.PART + 1000))
    store = StateStore(str(tmp_path / "state"), "o")
    old = _first_attempt(s3_endpoint, first, bucket, store, {})
    result = upload_multipart(
        client(s3_endpoint), child.FileSession(str(second)), child.Content(child.PART + 1000),
        bucket, "k", {}, child.PART, store=store, cache_key="c",
    )  # fmt: skip
    assert result["Resumed"] == 0
    assert result["UploadId"] != old.upload_id
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == second.read_bytes()
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # old aborted


def test_resume_under_changed_settings_starts_anew(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path
) -> None:
    """Review: a retry with another type or encryption does not keep the first attempt's."""
    path = tmp_path / "c"
    path.write_bytes(os.urandom(child.PART + 10))
    store = StateStore(str(tmp_path / "state"), "o")
    _first_attempt(s3_endpoint, path, bucket, store, {"ContentType": "text/plain"})
    now = {"ContentType": "application/json", "ServerSideEncryption": "AES256"}
    result = upload_multipart(
        client(s3_endpoint), child.FileSession(str(path)), child.Content(child.PART + 10),
        bucket, "k", now, child.PART, store=store, cache_key="c",
    )  # fmt: skip
    assert result["Resumed"] == 0
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ContentType"] == "application/json"
    assert head["ServerSideEncryption"] == "AES256"
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_settings_digest_keeps_the_sse_c_key_out_of_the_state(
    s3_endpoint: str, bucket: str, tmp_path: Path
) -> None:
    """Another SSE-C key is other settings; the state holds a digest, never the key."""
    key, other = bytes(range(32)), bytes(range(1, 33))
    sse_c = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}
    assert _multipart.settings_digest(sse_c, sse_c) == _multipart.settings_digest(sse_c, sse_c)
    moved = {**sse_c, "SSECustomerKey": other}
    assert _multipart.settings_digest(sse_c, sse_c) != _multipart.settings_digest(moved, moved)
    path = tmp_path / "c"
    path.write_bytes(os.urandom(child.PART + 10))
    store = StateStore(str(tmp_path / "state"), "o")
    _first_attempt(s3_endpoint, path, bucket, store, sse_c, part_extra=sse_c)
    text = Path(store.path("c")).read_bytes()
    for shown in (key, key.hex().encode(), base64.b64encode(key)):
        assert shown not in text


def test_resume_checks_the_parts_s3_lists_page_by_page(
    s3_endpoint: str, s3: Any, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ListParts, read page by page, must hold the saved ETags; an ETag S3 lacks: anew."""
    monkeypatch.setattr(_multipart, "PAGE_SIZE", 1)
    path = tmp_path / "c"
    path.write_bytes(os.urandom(2 * child.PART + 10))
    store = StateStore(str(tmp_path / "state"), "o")
    size = path.stat().st_size
    with pytest.raises(botocore.exceptions.ClientError):
        upload_multipart(
            _fail_part(client(s3_endpoint), 3), child.FileSession(str(path)), child.Content(size),
            bucket, "k", {}, child.PART, store=store, cache_key="c",
        )  # fmt: skip
    saved = store.load("c")
    assert saved is not None
    store.save("c", attrs.evolve(saved, parts=(saved.parts[0], (2, '"not-the-etag"'))))
    result = upload_multipart(
        client(s3_endpoint), child.FileSession(str(path)), child.Content(size), bucket, "k",
        {}, child.PART, store=store, cache_key="c",
    )  # fmt: skip
    assert result["Resumed"] == 0
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    with pytest.raises(botocore.exceptions.ClientError):
        upload_multipart(
            _fail_part(client(s3_endpoint), 3), child.FileSession(str(path)), child.Content(size),
            bucket, "k2", {}, child.PART, store=store, cache_key="c2",
        )  # fmt: skip
    resumed = upload_multipart(
        client(s3_endpoint), child.FileSession(str(path)), child.Content(size), bucket, "k2",
        {}, child.PART, store=store, cache_key="c2",
    )  # fmt: skip
    assert resumed["Resumed"] == 2  # both saved parts found over two ListParts pages
    assert s3.get_object(Bucket=bucket, Key="k2")["Body"].read() == path.read_bytes()


def test_age_off_uses_s3_clock_and_removes_interrupted_saves(
    s3: Any, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3's Date is "now" despite a skewed local clock; a kill's temporary files of ours go."""
    s3.create_multipart_upload(Bucket=bucket, Key="old")  # moto dates it 2010
    initiated = s3.list_multipart_uploads(Bucket=bucket)["Uploads"][0]["Initiated"].timestamp()
    monkeypatch.setattr(_multipart, "time", SimpleNamespace(time=lambda: initiated + 86400))
    store = StateStore(str(tmp_path), "mine")
    ours = tmp_path / f"{store.tmp_prefix}x"
    legacy_ours = tmp_path / ".tmp-legacy1"
    legacy_theirs = tmp_path / ".tmp-legacy2"
    ours.write_text('{"upload_id": "1", "po')
    legacy_ours.write_text(json.dumps({"upload_id": "2", "owner": "mine"}))
    legacy_theirs.write_text("another program's file")
    for path in (ours, legacy_ours, legacy_theirs):
        os.utime(path, (initiated - 30 * 86400, initiated - 30 * 86400))
    assert _multipart.age_off(s3, bucket, store, 0, 7 * 86400) != []
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [legacy_theirs.name]
