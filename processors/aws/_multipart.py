"""PutS3Object's multipart uploads: resumable after a crash, abandoned ones aged off (NiFi's).

As NiFi's PutS3Object, the state of an upload in progress (its upload id, the parts S3 has
acknowledged with their ETags, the position in the content) is saved to a local file after
each part, under ``Temporary Directory Multipart State``, keyed by the processor, bucket, object
key and the FlowFile's uuid. A FlowFile delivered again after a crash (the write-ahead log
replays it with its uuid) finds the state, checks with S3 that the upload still exists, skips
the content already sent and uploads the remaining parts only. The state is removed once the
upload is completed; a state whose upload S3 no longer knows (completed, aborted, aged off)
is dropped and the upload starts anew.

A state is resumed only for the same upload: the same content (the SHA-256 of each part sent,
saved with the part, is checked against the content before resuming: a FlowFile delivered
again with the same uuid but other bytes, after a failure loop that edited it or a replay
that re-read a rewritten file, must not complete an object from two contents), the same object
settings (a digest of CreateMultipartUpload's arguments: content type, metadata, tags, ACL,
encryption, which S3 fixes when the upload is created; for SSE-C the key's MD5, never the key),
and parts S3 still lists with the ETags saved. Otherwise the old upload is aborted and the
content sent anew.

With Resource Transfer Source ``File Resource Service`` the bytes sent are a local file's (a
:class:`~processors.file_resource.FileResource`), not the FlowFile's: the part digests are the
file's, and the settings digest also covers the file's path and identity (size, modification
time, inode), so a file rewritten, replaced or touched between attempts starts the upload over;
a rewrite that keeps the size and falls within the modification time's granularity is caught
by the part digests (a resume re-reads the parts sent). A file that changes while its parts
are sent fails the FlowFile before the upload is completed (nothing mixed is ever made
visible): its identity is checked and the whole file re-read against the part digests (one
more local read of the file), then the upload is aborted and its state removed.

The object itself appears in the bucket whole or not at all (S3 makes it visible on
CompleteMultipartUpload), under a deterministic key: the exactly-once-by-key guarantee of
single PUTs holds. Uploads a crash left behind and nobody resumes (the FlowFile went
elsewhere) are aborted by the age-off: at most once per ``Multipart Upload AgeOff Interval``,
uploads in the bucket initiated more than ``Multipart Upload Max Age Threshold`` ago are
aborted, and local states older than that are removed.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs

from processors.aws._s3 import error_code
from processors.file_resource import FileChangedError, FileResource

__all__ = ["MultipartState", "StateStore", "age_off", "settings_digest", "upload_multipart"]

_LOG = logging.getLogger(__name__)
_PREFIX = "flowcore-s3-multipart-"
#: Items per listing page (S3's maximum for ListParts and ListMultipartUploads).
PAGE_SIZE = 1000


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
        part_digests: the SHA-256 (hex) of each acknowledged part's bytes, in order.
        settings_digest: :func:`settings_digest` of the upload's creation arguments.
    """

    upload_id: str = ""
    position: int = 0
    parts: tuple[tuple[int, str], ...] = attrs.field(default=(), converter=tuple)
    part_size: int = 0
    storage_class: str = "STANDARD"
    content_length: int = 0
    timestamp: int = 0
    owner: str = ""
    part_digests: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    settings_digest: str = ""


class StateStore:
    """Multipart states as small JSON files in one directory, one file per upload.

    A file per upload (not NiFi's one properties file per processor) so concurrent tasks,
    in one process or several, never rewrite each other's states; each write is atomic
    (a temporary file renamed over the old one), so a kill leaves the old state or the new,
    and perhaps the temporary file, which the age-off removes.
    """

    def __init__(self, directory: str, owner: str) -> None:
        self.directory = directory
        self.owner = owner

    def path(self, cache_key: str) -> str:
        """The state file of *cache_key* (a digest: keys hold slashes and any character)."""
        digest = hashlib.sha256(f"{self.owner}\0{cache_key}".encode()).hexdigest()[:40]
        return os.path.join(self.directory, f"{_PREFIX}{digest}.json")

    @property
    def tmp_prefix(self) -> str:
        """The name prefix of this owner's temporary files.

        The directory may be the system's temporary directory: the age-off must know its own
        files from other programs'.
        """
        tag = hashlib.sha256(self.owner.encode()).hexdigest()[:16]
        return f".{_PREFIX}tmp-{tag}-"

    def load(self, cache_key: str) -> MultipartState | None:
        """The saved state, or None (none saved, or unreadable: the upload starts anew)."""
        try:
            with open(self.path(cache_key), encoding="utf-8") as handle:
                raw = json.load(handle)
            raw["parts"] = tuple((int(n), str(e)) for n, e in raw["parts"])
            raw["part_digests"] = tuple(str(d) for d in raw.get("part_digests", ()))
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
        fd, tmp = tempfile.mkstemp(prefix=self.tmp_prefix, dir=self.directory)
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
        """Remove this owner's states saved before *cutoff_ms*; how many were removed.

        Its temporary files a kill during a save left behind, last written before then, go too.
        """
        removed = 0
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return 0
        for name in names:
            path = os.path.join(self.directory, name)
            if name.startswith((self.tmp_prefix, ".tmp-")):
                removed += self._age_off_tmp(name, path, cutoff_ms)
                continue
            if not (name.startswith(_PREFIX) and name.endswith(".json")):
                continue
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

    def _age_off_tmp(self, name: str, path: str, cutoff_ms: int) -> int:
        """Remove one temporary file of this owner if written before *cutoff_ms* (1), else 0.

        Files of earlier versions (``.tmp-*``, no owner in the name) are this owner's only
        when their text names it: the directory may be shared with other programs.
        """
        try:
            if os.stat(path).st_mtime * 1000 >= cutoff_ms:
                return 0
            if not name.startswith(self.tmp_prefix):
                with open(path, encoding="utf-8", errors="replace") as handle:
                    if f'"owner": {json.dumps(self.owner)}' not in handle.read(1 << 16):
                        return 0
            os.unlink(path)
        except OSError:
            return 0
        _LOG.warning("removed temporary multipart state %s left by an interrupted save", name)
        return 1


def settings_digest(
    extra: Mapping[str, Any], part_extra: Mapping[str, Any], file: FileResource | None = None
) -> str:
    """A digest of an upload's CreateMultipartUpload and UploadPart arguments (and its file).

    S3 fixes the object's settings (content type, metadata, tags, ACL, encryption) when the
    upload is created: resuming under other settings would complete an object with the first
    attempt's. SSE-C's key enters as its MD5 (as S3 is sent it), never itself. With a *file*
    source, its path and identity enter too: a file changed since the upload began starts over.
    """
    shown: dict[str, Any] = {}
    if file is not None:
        shown["source.file"] = [file.path, *file.identity]
    for prefix, args in (("create", extra), ("part", part_extra)):
        for name, value in args.items():
            shown[f"{prefix}.{name}"] = _shown(name, value)
    text = json.dumps(shown, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _shown(name: str, value: Any) -> Any:
    """An argument as the settings digest takes it: SSE-C's key as its MD5, bytes as hex."""
    if name == "SSECustomerKey":
        raw = value if isinstance(value, bytes) else str(value).encode()
        return "md5:" + hashlib.md5(raw, usedforsecurity=False).hexdigest()
    return value.hex() if isinstance(value, bytes) else value


def _listed_parts(client: Any, bucket: str, key: str, upload_id: str) -> dict[int, str] | None:
    """The parts S3 holds for the upload (number -> ETag); None when S3 does not know it.

    ListParts asks for the upload itself (NiFi lists the bucket's uploads, and one listing
    page holds 1000 only), and gives the ETags to check against the saved state.
    """
    parts: dict[int, str] = {}
    try:
        pages = client.get_paginator("list_parts").paginate(
            Bucket=bucket, Key=key, UploadId=upload_id, PaginationConfig={"PageSize": PAGE_SIZE}
        )
        for page in pages:
            for part in page.get("Parts", ()):
                parts[int(part["PartNumber"])] = str(part.get("ETag", "")).strip('"')
    except Exception as error:  # botocore's errors: the upload starts anew
        if error_code(error) not in {"NoSuchUpload", "404"}:
            _LOG.warning(
                "could not list the parts of multipart upload %s of s3://%s/%s: %s",
                upload_id, bucket, key, error,
            )  # fmt: skip
        return None
    return parts


def _abort_quietly(client: Any, bucket: str, key: str, upload_id: str) -> None:
    """Abort an upload that will not be resumed (an error leaves it to the age-off)."""
    try:
        client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except Exception as error:
        if error_code(error) not in {"NoSuchUpload", "404"}:
            _LOG.info("could not abort multipart upload %s: %s", upload_id, error)


def _digest(stream: Any, count: int) -> tuple[str, int]:
    """The SHA-256 (hex) of the next *count* bytes of *stream* and how many there were."""
    digest, left = hashlib.sha256(), count
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    return digest.hexdigest(), count - left


def _open(session: Any, flowfile: Any, file: FileResource | None) -> Any:
    """The bytes to send: the file's when there is one, else the FlowFile's content."""
    return file.open() if file is not None else session.read(flowfile)


def _same_content(
    session: Any, flowfile: Any, state: MultipartState, file: FileResource | None = None
) -> bool:
    """Whether the content starts with the parts *state* sent (each part's SHA-256)."""
    sent = 0
    with _open(session, flowfile, file) as src:
        for expected in state.part_digests:
            digest, count = _digest(src, state.part_size)
            if digest != expected:
                return False
            sent += count
    return sent == state.position


_GONE = "S3 no longer has the upload"


def _why_not_resumable(  # noqa: PLR0917 (the upload and what it is checked against)
    client: Any, session: Any, flowfile: Any, state: MultipartState, bucket: str, key: str,
    size: int, settings: str, file: FileResource | None = None,
) -> str | None:  # fmt: skip
    """Why *state* cannot be resumed, None when it can (the cheap checks first)."""
    if not state.upload_id:
        return "it has no upload id"
    if state.content_length != size:
        return f"the content is {size} bytes, the upload's {state.content_length}"
    if state.settings_digest != settings:
        return "the object's settings (type, metadata, tags, ACL, encryption) or file changed"
    if len(state.part_digests) != len(state.parts):
        return "it holds no digest of the content sent"
    listed = _listed_parts(client, bucket, key, state.upload_id)
    if listed is None:
        return _GONE
    if any(listed.get(number) != etag.strip('"') for number, etag in state.parts):
        return "S3 lists other parts than the state saved"
    if not _same_content(session, flowfile, state, file):
        return "the content differs from the bytes already sent"
    return None


def _resumable(  # noqa: PLR0917
    client: Any, session: Any, flowfile: Any, store: StateStore, cache_key: str, bucket: str,
    key: str, size: int, settings: str, file: FileResource | None = None,
) -> MultipartState | None:  # fmt: skip
    """The saved state if it can be resumed; else None, its upload aborted, its state gone."""
    state = store.load(cache_key)
    if state is None:
        return None
    why = _why_not_resumable(client, session, flowfile, state, bucket, key, size, settings, file)
    if why is None:
        _LOG.info(
            "resuming multipart upload %s of s3://%s/%s at byte %d (%d parts sent)",
            state.upload_id, bucket, key, state.position, len(state.parts),
        )  # fmt: skip
        return state
    _LOG.info("multipart state for s3://%s/%s not resumed (%s): starting anew", bucket, key, why)
    if state.upload_id and why != _GONE:
        _abort_quietly(client, bucket, key, state.upload_id)
    store.remove(cache_key)
    return None


def upload_multipart(  # noqa: PLR0917 (the upload's parts, as NiFi's)
    client: Any, session: Any, flowfile: Any, bucket: str, key: str, extra: dict[str, Any],
    part_size: int, *, part_extra: dict[str, Any] | None = None,
    store: StateStore | None = None, cache_key: str = "", file: FileResource | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A multipart upload in parts of *part_size* bytes, one in memory at a time.

    With a *store*, the upload resumes from the state saved under *cache_key* when the state
    is for the same content and settings, and saves it after each part (see the module
    docstring). Without one, an upload that fails part way is aborted. With one, an S3 error
    leaves the upload and its state for the retry to resume (as NiFi); the age-off removes it
    if no retry comes. With a *file*, its bytes are sent instead of the FlowFile's content;
    a file changed while sent aborts the upload before it is completed.

    Raises:
        FileChangedError: *file* changed (or went) since it was found.

    Returns:
        CompleteMultipartUpload's response, with ``UploadId`` and ``Resumed`` (parts skipped).
    """
    part_extra = part_extra or {}
    if file is not None:
        size = file.size
    else:
        size = int(getattr(flowfile, "size", 0) or 0) if flowfile is not None else 0
    settings = settings_digest(extra, part_extra, file)
    state = (
        _resumable(client, session, flowfile, store, cache_key, bucket, key, size, settings, file)
        if store
        else None
    )
    resumed = len(state.parts) if state else 0
    if state is None:
        created = client.create_multipart_upload(Bucket=bucket, Key=key, **extra)
        state = MultipartState(
            upload_id=created["UploadId"], part_size=part_size, content_length=size,
            storage_class=str(extra.get("StorageClass", "STANDARD")), settings_digest=settings,
        )  # fmt: skip
        if store is not None:
            state = store.save(cache_key, state)
    try:
        state = _send_parts(
            client, session, flowfile, bucket, key, state, part_extra, store, cache_key, file
        )
        if file is not None:  # before S3 makes the object visible
            file.check_unchanged()
            if not _same_content(session, flowfile, state, file):  # same size and mtime
                raise FileChangedError(file.changed_message())
        parts = [{"ETag": etag, "PartNumber": number} for number, etag in state.parts]
        result = dict(
            client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=state.upload_id, MultipartUpload={"Parts": parts}
            )
        )
    except FileChangedError:
        _abort_quietly(client, bucket, key, state.upload_id)
        if store is not None:
            store.remove(cache_key)
        raise
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
    file: FileResource | None = None,
) -> MultipartState:  # fmt: skip
    """Upload the parts after *state*'s position; the state after the last one."""
    with _open(session, flowfile, file) as src:
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
                part_digests=(*state.part_digests, hashlib.sha256(data).hexdigest()),
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


def _server_time(response: Mapping[str, Any]) -> float | None:
    """S3's clock: the response's ``Date`` header as epoch seconds (None when absent)."""
    date = response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    try:
        return email.utils.parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError):
        return None


def _all_uploads(client: Any, bucket: str) -> tuple[list[dict[str, Any]], float | None]:
    """Every upload in progress in the bucket (all listing pages), and S3's clock."""
    uploads: list[dict[str, Any]] = []
    server_now = None
    for page in client.get_paginator("list_multipart_uploads").paginate(
        Bucket=bucket, PaginationConfig={"PageSize": PAGE_SIZE}
    ):
        if server_now is None:
            server_now = _server_time(page)
        uploads.extend(page.get("Uploads", ()))
    return uploads, server_now


def age_off(  # noqa: PLR0917
    client: Any, bucket: str, store: StateStore | None, interval_s: float, max_age_s: float,
    now: float | None = None,
) -> list[str]:  # fmt: skip
    """Abort the bucket's uploads older than *max_age_s*, at most once per *interval_s*.

    An upload's age is measured on S3's clock (the listing's ``Date`` header; *now* when
    given), which dated the upload: a skewed local clock neither keeps nor aborts uploads
    early. Local states and temporary files are aged on the local clock that stamped them.

    Returns the aborted upload ids. Listing refused (AccessDenied: no
    s3:ListBucketMultipartUploads) postpones the next check by the interval, as NiFi.
    """
    local_now = time.time() if now is None else now
    slot = (store.owner if store else "", bucket)
    with _AGE_OFF_LOCK:
        if local_now - _LAST_AGE_OFF.get(slot, 0.0) <= interval_s:
            return []
        _LAST_AGE_OFF[slot] = local_now
    if store is not None:
        store.age_off(int((local_now - max_age_s) * 1000))
    aborted: list[str] = []
    try:
        uploads, server_now = _all_uploads(client, bucket)
    except Exception as error:  # botocore's ClientError; the put itself goes on
        _LOG.warning("could not list multipart uploads of bucket %s for age-off: %s", bucket, error)
        return aborted
    cutoff = (now if now is not None else server_now or local_now) - max_age_s
    for upload in uploads:
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
                upload["UploadId"], bucket, upload["Key"], initiated,
            )  # fmt: skip
        except Exception as error:
            _LOG.info("could not abort multipart upload %s: %s", upload["UploadId"], error)
    return aborted
