"""PutS3Object's multipart uploads: local state, resume after a real kill, age-off (moto)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
