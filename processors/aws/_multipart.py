"""PutS3Object's multipart uploads: resumable after a crash, abandoned ones aged off (NiFi's).

As NiFi's PutS3Object, the state of an upload in progress (its upload id, the parts S3 has
acknowledged with their ETags, the position in the content) is saved to a local file after
each part, under ``Temporary Directory Multipart State``, keyed by the processor, bucket, object
key and the FlowFile's uuid. A FlowFile delivered again after a crash (the write-ahead log
replays it with its uuid) finds the state, checks with S3 that the upload still exists, skips
the content already sent and uploads the remaining parts only. The state is removed once the
upload is completed; a state whose upload S3 no longer knows (completed, aborted, aged off)
is dropped and the upload starts anew.

The object itself appears in the bucket whole or not at all (S3 makes it visible on
CompleteMultipartUpload), under a deterministic key: the exactly-once-by-key guarantee of
single PUTs holds. Uploads a crash left behind and nobody resumes (the FlowFile went
elsewhere) are aborted by the age-off: at most once per ``Multipart Upload AgeOff Interval``,
uploads in the bucket initiated more than ``Multipart Upload Max Age Threshold`` ago are
aborted, and local states older than that are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from typing import Any

import attrs

__all__ = ["MultipartState", "StateStore", "age_off", "upload_multipart"]

_LOG = logging.getLogger(__name__)
_PREFIX = "flowcore-s3-multipart-"


@attrs.frozen
class MultipartState:
    """An upload in progress, as NiFi's ``MultipartState`` keeps it.

    Attributes:
        upload_id: S3's id of the multipart upload ("" before it is created).
        position: bytes of the content sent in acknowledged parts.
        parts: (part number, ETag) of each acknowledged part, in order.
        part_size: the part size the upload started with (a resumed upload keeps it).
        storage_class: the object's storage class.
        content_length: the FlowFile's size (a state for other content is not resumed).
        timestamp: epoch millis of the last save (the local age-off reads it).
        owner: the processor the state belongs to (its age-off touches only its own).
    """

    upload_id: str = ""
    position: int = 0
    parts: tuple[tuple[int, str], ...] = attrs.field(default=(), converter=tuple)
    part_size: int = 0
    storage_class: str = "STANDARD"
    content_length: int = 0
    timestamp: int = 0
    owner: str = ""


class StateStore:
    """Multipart states as small JSON files in one directory, one file per upload.

    A file per upload (not NiFi's one properties file per processor) so concurrent tasks,
    in one process or several, never rewrite each other's states; each write is atomic
    (a temporary file renamed over the old one), so a kill leaves the old state or the new.
    """

    def __init__(self, directory: str, owner: str) -> None:
        self.directory = directory
        self.owner = owner

    def path(self, cache_key: str) -> str:
        """The state file of *cache_key* (a digest: keys hold slashes and any character)."""
        digest = hashlib.sha256(f"{self.owner}\0{cache_key}".encode()).hexdigest()[:40]
        return os.path.join(self.directory, f"{_PREFIX}{digest}.json")

    def load(self, cache_key: str) -> MultipartState | None:
        """The saved state, or None (none saved, or unreadable: the upload starts anew)."""
        try:
            with open(self.path(cache_key), encoding="utf-8") as handle:
                raw = json.load(handle)
            raw["parts"] = tuple((int(n), str(e)) for n, e in raw["parts"])
            return MultipartState(**raw)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError) as error:
            _LOG.warning(
                "unreadable multipart state for %s, restarting the upload: %s", cache_key, error
            )
            return None

    def save(self, cache_key: str, state: MultipartState) -> MultipartState:
        """Write *state* (stamped now, with this store's owner) atomically; return it."""
        state = attrs.evolve(state, timestamp=int(time.time() * 1000), owner=self.owner)
        os.makedirs(self.directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(attrs.asdict(state), handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path(cache_key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return state

    def remove(self, cache_key: str) -> None:
        """Forget the state of *cache_key* (done, or no longer known to S3)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path(cache_key))

    def age_off(self, cutoff_ms: int) -> int:
        """Remove this owner's states saved before *cutoff_ms*; how many were removed."""
        removed = 0
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return 0
        for name in names:
            if not (name.startswith(_PREFIX) and name.endswith(".json")):
                continue
            path = os.path.join(self.directory, name)
            try:
                with open(path, encoding="utf-8") as handle:
                    raw = json.load(handle)
                if raw.get("owner") != self.owner or int(raw.get("timestamp", 0)) >= cutoff_ms:
                    continue
                os.unlink(path)
                removed += 1
                _LOG.warning("removed multipart state %s: older than the age-off threshold", name)
            except (OSError, ValueError, TypeError):
                continue
        return removed


def _upload_exists(client: Any, bucket: str, key: str, upload_id: str) -> bool:
    """Whether S3 still has the upload (NiFi lists the bucket's uploads; this asks for the key)."""
    listed = client.list_multipart_uploads(Bucket=bucket, Prefix=key)
    return any(
        u.get("UploadId") == upload_id and u.get("Key") == key for u in listed.get("Uploads", ())
    )


def _resumable(
    client: Any, store: StateStore, cache_key: str, *, bucket: str, key: str, size: int
) -> MultipartState | None:
    state = store.load(cache_key)
    if state is None:
        return None
    if (
        state.upload_id
        and state.content_length == size
        and _upload_exists(client, bucket, key, state.upload_id)
    ):
        _LOG.info(
            "resuming multipart upload %s of s3://%s/%s at byte %d (%d parts sent)",
            state.upload_id, bucket, key, state.position, len(state.parts),
        )  # fmt: skip
        return state
    _LOG.info("multipart state for s3://%s/%s is not in S3 any more: starting anew", bucket, key)
    store.remove(cache_key)
    return None


def upload_multipart(  # noqa: PLR0917 (the upload's parts, as NiFi's)
    client: Any, session: Any, flowfile: Any, bucket: str, key: str, extra: dict[str, Any],
    part_size: int, *, part_extra: dict[str, Any] | None = None,
    store: StateStore | None = None, cache_key: str = "",
) -> dict[str, Any]:  # fmt: skip
    """A multipart upload in parts of *part_size* bytes, one in memory at a time.

    With a *store*, the upload resumes from the state saved under *cache_key* and saves it
    after each part (see the module docstring). Without one, an upload that fails part way is
    aborted. With one, an S3 error leaves the upload and its state for the retry to resume
    (as NiFi); the age-off removes it if no retry comes.

    Returns:
        CompleteMultipartUpload's response, with ``UploadId`` and ``Resumed`` (parts skipped).
    """
    part_extra = part_extra or {}
    size = int(getattr(flowfile, "size", 0) or 0) if flowfile is not None else 0
    state = (
        _resumable(client, store, cache_key, bucket=bucket, key=key, size=size) if store else None
    )
    resumed = len(state.parts) if state else 0
    if state is None:
        created = client.create_multipart_upload(Bucket=bucket, Key=key, **extra)
        state = MultipartState(
            upload_id=created["UploadId"], part_size=part_size, content_length=size,
            storage_class=str(extra.get("StorageClass", "STANDARD")),
        )  # fmt: skip
        if store is not None:
            state = store.save(cache_key, state)
    try:
        state = _send_parts(
            client, session, flowfile, bucket, key, state, part_extra, store, cache_key
        )
        parts = [{"ETag": etag, "PartNumber": number} for number, etag in state.parts]
        result = dict(
            client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=state.upload_id, MultipartUpload={"Parts": parts}
            )
        )
    except BaseException:
        if store is None:
            with contextlib.suppress(Exception):  # the first error is the one to report
                client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=state.upload_id)
        raise
    if store is not None:
        store.remove(cache_key)
    result["UploadId"] = state.upload_id
    result["Resumed"] = resumed
    return result


def _send_parts(  # noqa: PLR0917
    client: Any, session: Any, flowfile: Any, bucket: str, key: str, state: MultipartState,
    part_extra: dict[str, Any], store: StateStore | None, cache_key: str,
) -> MultipartState:  # fmt: skip
    """Upload the parts after *state*'s position; the state after the last one."""
    with session.read(flowfile) as src:
        _skip(src, state.position)
        while True:
            data = _read_exactly(src, state.part_size)
            if not data and state.parts:
                break
            number = len(state.parts) + 1
            done = client.upload_part(
                Bucket=bucket, Key=key, UploadId=state.upload_id, PartNumber=number, Body=data,
                **part_extra,
            )  # fmt: skip
            state = attrs.evolve(
                state,
                position=state.position + len(data),
                parts=(*state.parts, (number, done["ETag"])),
            )
            if store is not None:
                state = store.save(cache_key, state)
            if len(data) < state.part_size:
                break
    return state


def _skip(stream: Any, count: int) -> None:
    """Move past the first *count* bytes (seek when the stream can, else read them)."""
    if count <= 0:
        return
    with contextlib.suppress(AttributeError, OSError, ValueError):
        if stream.seekable():
            stream.seek(count)
            return
    left = count
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        left -= len(chunk)


def _read_exactly(stream: Any, size: int) -> bytes:
    """Up to *size* bytes (fewer only at the end)."""
    pieces, left = [], size
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        pieces.append(chunk)
        left -= len(chunk)
    return b"".join(pieces)


#: When each (owner, bucket) was last aged off in this process (NiFi's lastS3AgeOff).
_LAST_AGE_OFF: dict[tuple[str, str], float] = {}
_AGE_OFF_LOCK = threading.Lock()


def age_off(  # noqa: PLR0917
    client: Any, bucket: str, store: StateStore | None, interval_s: float, max_age_s: float,
    now: float | None = None,
) -> list[str]:  # fmt: skip
    """Abort the bucket's uploads older than *max_age_s*, at most once per *interval_s*.

    Returns the aborted upload ids. Listing refused (AccessDenied: no
    s3:ListBucketMultipartUploads) postpones the next check by the interval, as NiFi.
    """
    now = time.time() if now is None else now
    slot = (store.owner if store else "", bucket)
    with _AGE_OFF_LOCK:
        if now - _LAST_AGE_OFF.get(slot, 0.0) <= interval_s:
            return []
        _LAST_AGE_OFF[slot] = now
    cutoff = now - max_age_s
    aborted: list[str] = []
    try:
        listed = client.list_multipart_uploads(Bucket=bucket)
    except Exception as error:  # botocore's ClientError; the put itself goes on
        _LOG.warning("could not list multipart uploads of bucket %s for age-off: %s", bucket, error)
        return aborted
    for upload in listed.get("Uploads", ()):
        initiated = upload.get("Initiated")
        if initiated is None or initiated.timestamp() >= cutoff:
            continue
        try:
            client.abort_multipart_upload(
                Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
            )
            aborted.append(upload["UploadId"])
            _LOG.info(
                "aborted multipart upload %s of s3://%s/%s initiated %s",
                upload["UploadId"],
                bucket,
                upload["Key"],
                initiated,
            )
        except Exception as error:
            _LOG.info("could not abort multipart upload %s: %s", upload["UploadId"], error)
    if store is not None:
        store.age_off(int(cutoff * 1000))
    return aborted
