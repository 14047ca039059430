"""PutS3Object: write a FlowFile's content to an S3 object (NiFi's PutS3Object).

Delivery: the object key is deterministic (Object Key, ``${filename}`` by default), so a
FlowFile delivered again after a crash (its session not committed) overwrites the same object
with the same bytes: the bucket holds each object once. A multipart upload is completed in the
task, before the write-ahead log commit (at-least-once toward S3, idempotent by key); an upload
a crash left incomplete is aborted by S3's lifecycle or the Multipart Upload AgeOff check.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from typing import Any, ClassVar

from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import FAILURE, SUCCESS
from flowcore.session.process_session import ProcessSession
from flowcore.validators import DATA_SIZE_VALIDATOR, create_data_size_bounds_validator
from processors.aws import _s3
from processors.aws.fetch_s3_object import _is_s3_error

__all__ = ["PutS3Object"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
MIN_PART = 50 * 1024 * 1024  # NiFi's MIN_S3_PART_SIZE
MAX_PUT = 5 * 1024 * 1024 * 1024  # NiFi's MAX_S3_PUTOBJECT_SIZE
#: Content up to this size is sent from memory; larger single PUTs spool to a temporary file.
IN_MEMORY = 8 * 1024 * 1024
_STORAGE_CLASSES = (
    "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
    "GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE",
)  # fmt: skip

CONTENT_TYPE = PropertyDescriptor(
    "Content Type", description="Sets the Content-Type HTTP header indicating the type of "
    "content stored in the associated object.", el_scope=_FLOWFILE,
)  # fmt: skip
CONTENT_DISPOSITION = PropertyDescriptor(
    "Content Disposition", description="Sets the Content-Disposition HTTP header indicating "
    "if the content is intended to be displayed inline or should be downloaded.",
    allowable_values=("inline", "attachment"),
)  # fmt: skip
CACHE_CONTROL = PropertyDescriptor(
    "Cache Control", description="Sets the Cache-Control HTTP header indicating the caching "
    "directives of the associated object.", el_scope=_FLOWFILE,
)  # fmt: skip
STORAGE_CLASS = PropertyDescriptor(
    "Storage Class", required=True, default="STANDARD",
    allowable_values=tuple(AllowableValue(c) for c in _STORAGE_CLASSES),
)  # fmt: skip
MULTIPART_THRESHOLD = PropertyDescriptor(
    "Multipart Threshold", description="Specifies the file size threshold for switch from the "
    "PutS3Object API to the PutS3MultipartUpload API.  Flow files bigger than this limit will "
    "be sent using the stateful multipart process. The valid range is 50MB to 5GB.",
    required=True, default="5 GB", validators=(DATA_SIZE_VALIDATOR,
    create_data_size_bounds_validator(MIN_PART, MAX_PUT)),
)  # fmt: skip
MULTIPART_PART_SIZE = PropertyDescriptor(
    "Multipart Part Size", description="Specifies the part size for use when the PutS3Multipart "
    "Upload API is used. Flow files will be broken into chunks of this size for the upload "
    "process, but the last part sent can be smaller since it is not padded. The valid range "
    "is 50MB to 5GB.", required=True, default="5 GB", validators=(DATA_SIZE_VALIDATOR,
    create_data_size_bounds_validator(MIN_PART, MAX_PUT)),
)  # fmt: skip
AGEOFF_INTERVAL = PropertyDescriptor(
    "Multipart Upload AgeOff Interval", required=True, default="60 min",
    description="Specifies the interval at which existing multipart uploads in AWS S3 will be "
    "evaluated for ageoff.  When processor is triggered it will initiate the ageoff evaluation "
    "if this interval has been exceeded.",
)  # fmt: skip
MAX_AGE = PropertyDescriptor(
    "Multipart Upload Max Age Threshold", required=True, default="7 days",
    description="Specifies the maximum age for existing multipart uploads in AWS S3.  When the "
    "ageoff process occurs, any upload older than this threshold will be aborted.",
)  # fmt: skip
OBJECT_TAGS_PREFIX = PropertyDescriptor(
    "Object Tags Prefix", description="Specifies the prefix which would be scanned against the "
    "incoming FlowFile's attributes and the matching attribute's name and value would be "
    "considered as the outgoing S3 object's Tag name and Tag value respectively.",
    el_scope=_FLOWFILE, aliases=("s3-object-tags-prefix",),
)  # fmt: skip
REMOVE_TAG_PREFIX = PropertyDescriptor(
    "Remove Tag Prefix", description="If set to 'True', the value provided for 'Object Tags "
    "Prefix' will be removed from the attribute(s) and then considered as the Tag name.",
    required=True, default="false", allowable_values=("true", "false"),
    aliases=("s3-object-remove-tags-prefix",),
)  # fmt: skip


class PutS3Object(Processor):
    """Writes the contents of a FlowFile as an S3 Object (NiFi's PutS3Object).

    Content up to Multipart Threshold goes in one PUT (from memory up to 8 MiB, else spooled
    to a temporary file); above it, as a multipart upload in parts of Multipart Part Size (one
    part in memory at a time). Dynamic properties become user metadata. A SEND event names
    ``s3://bucket/key``. Failures go to ``failure``, penalized, with NiFi's s3.* error
    attributes. See the module docstring for the delivery guarantee.
    """

    BUCKET = _s3.BUCKET
    KEY = _s3.KEY
    property_descriptors: ClassVar = (
        _s3.BUCKET, _s3.KEY, CONTENT_TYPE, CONTENT_DISPOSITION, CACHE_CONTROL, STORAGE_CLASS,
        *_s3.COMMON, MULTIPART_THRESHOLD, MULTIPART_PART_SIZE, AGEOFF_INTERVAL, MAX_AGE,
        OBJECT_TAGS_PREFIX, REMOVE_TAG_PREFIX,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS, FAILURE)
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("Amazon", "S3", "AWS", "Archive", "Put")
    writes_attributes: ClassVar = {
        "s3.url": "The URL that can be used to access the S3 object",
        "s3.bucket": "The S3 bucket where the Object was put in S3",
        "s3.key": "The S3 key within where the Object was put in S3",
        "s3.contenttype": "The S3 content type of the S3 Object that put in S3",
        "s3.version": "The version of the S3 Object that was put to S3",
        "s3.exception": "The class name of the exception thrown during processor execution",
        "s3.additionalDetails": "The S3 supplied detail from the failed operation",
        "s3.statusCode": "The HTTP error code (if available) from the failed operation",
        "s3.errorCode": "The S3 moniker of the failed operation",
        "s3.errorMessage": "The S3 exception message from the failed operation",
        "s3.etag": "The ETag of the S3 Object",
        "s3.contentdisposition": "The content disposition of the S3 Object that put in S3",
        "s3.cachecontrol": "The cache-control header of the S3 Object",
        "s3.uploadId": "The uploadId used to upload the Object to S3",
        "s3.expiration": "A human-readable form of the expiration date of the S3 object, if one "
        "is set",
        "s3.sseAlgorithm": "The server side encryption algorithm of the object",
        "s3.usermetadata": "A human-readable form of the User Metadata of the S3 object, if "
        "any was set",
        "s3.storeClass": "The storage class of the object",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Upload one FlowFile's content."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions(flowfile).value
        key = context.get_property(self.KEY).evaluate_attribute_expressions(flowfile).value
        bucket, key = bucket or "", key or ""
        extra = self._extra_args(context, flowfile)
        try:
            client = self._s3.get(context, session, flowfile)
            threshold = int(context.get_property(MULTIPART_THRESHOLD).as_data_size("B") or MAX_PUT)
            part = int(context.get_property(MULTIPART_PART_SIZE).as_data_size("B") or MAX_PUT)
            if flowfile.size <= threshold:
                result = self._put(client, session, flowfile, bucket, key, extra)
            else:
                result = upload_multipart(client, session, flowfile, bucket, key, extra, part)
        except Exception as error:
            if not _is_s3_error(error):
                raise
            context.logger.error(
                "Failed to put %s to Amazon S3 bucket %s key %s; routing to failure: %s",
                flowfile, bucket, key, _s3.describe(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        flowfile = session.put_all_attributes(flowfile, _attributes(bucket, key, extra, result))
        uri = _s3.transit_uri(bucket, key)
        session.provenance.send(flowfile, uri, duration_ms=int((time.monotonic() - started) * 1000))
        session.transfer(flowfile, SUCCESS)

    def _extra_args(self, context: ProcessContext, flowfile: Any) -> dict[str, Any]:
        """The object's headers, storage class, metadata and tags from the properties."""
        extra: dict[str, Any] = {
            "StorageClass": context.get_property(STORAGE_CLASS).value or "STANDARD"
        }
        for descriptor, arg in ((CONTENT_TYPE, "ContentType"), (CACHE_CONTROL, "CacheControl")):
            value = context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value
            if value:
                extra[arg] = value
        if "ContentType" not in extra and flowfile.attributes.get("mime.type"):
            extra["ContentType"] = flowfile.attributes["mime.type"]
        disposition = context.get_property(CONTENT_DISPOSITION).value
        if disposition == "inline":
            extra["ContentDisposition"] = "inline"
        elif disposition == "attachment":
            extra["ContentDisposition"] = (
                f"attachment; filename={flowfile.attributes.get('filename', '')}"
            )
        metadata = {
            name: context.get_property(name).evaluate_attribute_expressions(flowfile).value or ""
            for name in context.dynamic_properties
        }
        if metadata:
            extra["Metadata"] = metadata
        prefix = (
            context.get_property(OBJECT_TAGS_PREFIX).evaluate_attribute_expressions(flowfile).value
        )
        if prefix:
            strip = bool(context.get_property(REMOVE_TAG_PREFIX).as_boolean())
            from urllib.parse import urlencode  # noqa: PLC0415

            tags = {
                (name[len(prefix) :] if strip else name): value
                for name, value in flowfile.attributes.items()
                if name.startswith(prefix)
            }
            if tags:
                extra["Tagging"] = urlencode(tags)
        return extra

    @staticmethod
    def _put(  # noqa: PLR0917 (the upload's six parts)
        client: Any, session: ProcessSession, flowfile: Any, bucket: str, key: str,
        extra: dict[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        """One PUT: from memory when small, else from a spooled temporary file."""
        with (
            tempfile.SpooledTemporaryFile(max_size=IN_MEMORY) as spool,
            session.read(flowfile) as src,
        ):
            while chunk := src.read(1 << 20):
                spool.write(chunk)
            spool.seek(0)
            return dict(client.put_object(Bucket=bucket, Key=key, Body=spool, **extra))


def upload_multipart(  # noqa: PLR0917 (the upload's seven parts)
    client: Any, session: ProcessSession, flowfile: Any, bucket: str, key: str,
    extra: dict[str, Any], part_size: int,
) -> dict[str, Any]:  # fmt: skip
    """A multipart upload in parts of *part_size* bytes, one in memory at a time.

    An upload that fails part way is aborted (no orphan parts are left by a failure; a crash
    can leave one, for S3's lifecycle rules to remove).
    """
    upload = client.create_multipart_upload(Bucket=bucket, Key=key, **extra)
    upload_id = upload["UploadId"]
    parts = []
    try:
        with session.read(flowfile) as src:
            number = 1
            while True:
                data = _read_exactly(src, part_size)
                if not data and parts:
                    break
                done = client.upload_part(
                    Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data
                )
                parts.append({"ETag": done["ETag"], "PartNumber": number})
                number += 1
                if len(data) < part_size:
                    break
        result = dict(
            client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        )
    except BaseException:
        with contextlib.suppress(Exception):  # the first error is the one to report
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        raise
    result["UploadId"] = upload_id
    return result


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


def _attributes(
    bucket: str, key: str, extra: dict[str, Any], result: dict[str, Any]
) -> dict[str, str]:
    """NiFi's attributes of a put object."""
    out = {"s3.bucket": bucket, "s3.key": key, "s3.storeClass": extra["StorageClass"]}
    etag = (result.get("ETag") or "").strip('"')
    if etag:
        out["s3.etag"] = etag
    if result.get("VersionId") and result["VersionId"] != "null":
        out["s3.version"] = result["VersionId"]
    if result.get("UploadId"):
        out["s3.uploadId"] = result["UploadId"]
    if extra.get("ContentType"):
        out["s3.contenttype"] = extra["ContentType"]
    if extra.get("ContentDisposition"):
        out["s3.contentdisposition"] = extra["ContentDisposition"]
    if extra.get("CacheControl"):
        out["s3.cachecontrol"] = extra["CacheControl"]
    if result.get("Expiration"):
        out["s3.expiration"] = result["Expiration"]
    if result.get("ServerSideEncryption"):
        out["s3.sseAlgorithm"] = result["ServerSideEncryption"]
    if extra.get("Metadata"):
        out["s3.usermetadata"] = ", ".join(f"{k}={v}" for k, v in extra["Metadata"].items())
    return out
