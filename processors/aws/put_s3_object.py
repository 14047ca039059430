"""PutS3Object: write a FlowFile's content to an S3 object (NiFi's PutS3Object).

Delivery: the object key is deterministic (Object Key, ``${filename}`` by default), so a
FlowFile delivered again after a crash (its session not committed) overwrites the same object
with the same bytes: the bucket holds each object once. A multipart upload is completed in the
task, before the write-ahead log commit (at-least-once toward S3, idempotent by key); its state
is saved locally after each part, so the replayed FlowFile resumes the upload where the crash
left it, and uploads nobody resumes are aborted by the Multipart Upload AgeOff
(:mod:`processors.aws._multipart`).

Resource Transfer Source (NiFi 2): ``File Resource Service`` sends the local file a
StandardFileResourceService names for the FlowFile instead of its content, which is left as
it is (:mod:`processors.file_resource`). The file's size chooses between one PUT and a
multipart upload (NiFi compares the FlowFile's size, which for a FlowFile that only names a
large file would send it in one PUT, past S3's 5 GB limit). The file is sent as found: one
changed while it is sent fails the FlowFile, and a multipart upload of it resumes only if it
is unchanged since the upload began and its parts sent still hash as saved. A single PUT is
hashed first and carries the MD5 (``Content-MD5``): S3 refuses a body rewritten during the PUT
(``BadDigest``), so the old object stays rather than being replaced by torn or new bytes.
"""

from __future__ import annotations

import base64
import tempfile
import time
from typing import Any, ClassVar
from urllib.parse import quote_plus, urlencode

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    DATA_SIZE_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
    create_data_size_bounds_validator,
)
from processors.aws import _multipart, _s3
from processors.aws._multipart import upload_multipart
from processors.aws.fetch_s3_object import _is_s3_error
from processors.file_resource import (
    FILE_RESOURCE_SERVICE,
    RESOURCE_TRANSFER_SOURCE,
    FileChangedError,
    FileResource,
    FileResourceError,
    file_resource,
)

__all__ = ["PutS3Object", "upload_multipart"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
MIN_PART = 50 * 1024 * 1024  # NiFi's MIN_S3_PART_SIZE
MAX_PUT = 5 * 1024 * 1024 * 1024  # NiFi's MAX_S3_PUTOBJECT_SIZE
#: Content up to this size is sent from memory; larger single PUTs spool to a temporary file.
IN_MEMORY = 8 * 1024 * 1024
_STORAGE_CLASSES = (
    "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
    "GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE",
)  # fmt: skip
#: NiFi's Canned ACL names (AWS SDK v1's) -> S3's x-amz-acl values; S3's own values pass too.
CANNED_ACLS = {
    "Private": "private", "PublicRead": "public-read", "PublicReadWrite": "public-read-write",
    "AuthenticatedRead": "authenticated-read", "BucketOwnerRead": "bucket-owner-read",
    "BucketOwnerFullControl": "bucket-owner-full-control", "AwsExecRead": "aws-exec-read",
}  # fmt: skip
_TMPDIR = "${java.io.tmpdir}"

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
    validators=(TIME_PERIOD_VALIDATOR,),
    description="Specifies the interval at which existing multipart uploads in AWS S3 will be "
    "evaluated for ageoff.  When processor is triggered it will initiate the ageoff evaluation "
    "if this interval has been exceeded.",
)  # fmt: skip
MAX_AGE = PropertyDescriptor(
    "Multipart Upload Max Age Threshold", required=True, default="7 days",
    validators=(TIME_PERIOD_VALIDATOR,),
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


MULTIPART_TEMP_DIR = PropertyDescriptor(
    "Temporary Directory Multipart State", description="Directory in which, for multipart "
    "uploads, the processor will locally save the state tracking the upload ID and parts "
    "uploaded which must both be provided to complete the upload.", required=True,
    default=_TMPDIR, el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("s3-temporary-directory-multipart",),
)  # fmt: skip


def _grantees(display: str, attribute: str, who: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        display, description=f"A comma-separated list of Amazon User ID's or E-mail addresses "
        f"that specifies who should have {who} for an object", default=f"${{{attribute}}}",
        el_scope=_FLOWFILE,
    )  # fmt: skip


FULL_CONTROL_USER_LIST = _grantees(
    "FullControl User List", "s3.permissions.full.users", "Full Control"
)
READ_USER_LIST = _grantees("Read Permission User List", "s3.permissions.read.users", "Read Access")
READ_ACL_LIST = _grantees(
    "Read ACL User List", "s3.permissions.readacl.users",
    "permissions to read the Access Control List",
)  # fmt: skip
WRITE_ACL_LIST = _grantees(
    "Write ACL User List", "s3.permissions.writeacl.users",
    "permissions to change the Access Control List",
)  # fmt: skip
CANNED_ACL = PropertyDescriptor(
    "Canned ACL", description="Amazon Canned ACL for an object, one of: BucketOwnerFullControl, "
    "BucketOwnerRead, AuthenticatedRead, PublicReadWrite, PublicRead, Private; will be ignored "
    "if any other ACL/permission/owner property is specified",
    default="${s3.permissions.cannedacl}", el_scope=_FLOWFILE, aliases=("canned-acl",),
)  # fmt: skip
#: NiFi 1.x's property (NiFi 2 migrates AES256 to an Encryption Service with SSE_S3; a flow
#: exported with it loads in NiFi 2 through that migration).
SERVER_SIDE_ENCRYPTION = PropertyDescriptor(
    "Server Side Encryption", description="NiFi 1.x: specifies the algorithm used for server "
    "side encryption (NiFi 2: an Encryption Service with Server-side S3).", required=True,
    default="None", allowable_values=("None", "AES256"), aliases=("server-side-encryption",),
)  # fmt: skip
USE_CHUNKED_ENCODING = PropertyDescriptor(
    "Use Chunked Encoding", description="Enables / disables chunked encoding for upload "
    "requests. boto3 sends every upload with its length, so both values behave alike here.",
    default="true", allowable_values=("true", "false"), aliases=("use-chunked-encoding",),
)  # fmt: skip
#: (property, boto3 argument) of the grantee lists.
_GRANTS = (
    (FULL_CONTROL_USER_LIST, "GrantFullControl"), (READ_USER_LIST, "GrantRead"),
    (READ_ACL_LIST, "GrantReadACP"), (WRITE_ACL_LIST, "GrantWriteACP"),
)  # fmt: skip


class BadFlowFileSetting(ValueError):
    """A property evaluated against a FlowFile gives a value S3 cannot take (to failure)."""


class PutS3Object(Processor):
    """Writes the contents of a FlowFile as an S3 Object (NiFi's PutS3Object).

    Content up to Multipart Threshold goes in one PUT (from memory up to 8 MiB, else spooled
    to a temporary file; a File Resource Service's file is sent from the file); above it, as
    a multipart upload in parts of Multipart Part Size (one part in memory at a time). Dynamic
    properties become user metadata. A SEND event names ``s3://bucket/key``. Failures go to
    ``failure``, penalized, with NiFi's s3.* error attributes. See the module docstring for
    the delivery guarantee.
    """

    BUCKET = _s3.BUCKET
    KEY = _s3.KEY
    property_descriptors: ClassVar = (
        _s3.BUCKET, _s3.KEY, RESOURCE_TRANSFER_SOURCE, FILE_RESOURCE_SERVICE, STORAGE_CLASS,
        _s3.ENCRYPTION_SERVICE, SERVER_SIDE_ENCRYPTION, CONTENT_TYPE, CONTENT_DISPOSITION,
        CACHE_CONTROL, OBJECT_TAGS_PREFIX, REMOVE_TAG_PREFIX,
        FULL_CONTROL_USER_LIST, READ_USER_LIST, READ_ACL_LIST, WRITE_ACL_LIST, CANNED_ACL,
        *_s3.COMMON, MULTIPART_THRESHOLD, MULTIPART_PART_SIZE, AGEOFF_INTERVAL, MAX_AGE,
        MULTIPART_TEMP_DIR, USE_CHUNKED_ENCODING,
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
        "s3.expirationTime": "If the S3 object has been assigned an expiration time, this "
        "attribute will be set, containing the milliseconds since epoch in UTC time",
        "s3.expirationTimeRuleId": "If the S3 object has been assigned an expiration time, this "
        "attribute will be set, containing the ID of the rule that dictates this object's "
        "expiration time",
        "s3.sseAlgorithm": "The server side encryption algorithm of the object",
        "s3.usermetadata": "A human-readable form of the User Metadata of the S3 object, if "
        "any was set",
        "s3.storeClass": "The storage class of the object",
        "s3.encryptionStrategy": "The name of the encryption strategy, if any was set",
        "s3.apimethod": "putobject or multipartupload: how the object was sent",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def custom_validate(self, values: Any) -> list[ValidationResult]:
        """NiFi 1.x's Server Side Encryption and NiFi 2's Encryption Service are exclusive."""
        both = values.get(SERVER_SIDE_ENCRYPTION.name) == "AES256" and values.get(
            _s3.ENCRYPTION_SERVICE.name
        )
        if not both:
            return []
        why = (
            "Server Side Encryption (NiFi 1.x) and Encryption Service are exclusive: set the "
            "service's Encryption Strategy to Server-side S3 and Server Side Encryption to None"
        )
        return [ValidationResult(SERVER_SIDE_ENCRYPTION.name, None, False, why)]

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Upload one FlowFile's content."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions(flowfile).value
        key = context.get_property(self.KEY).evaluate_attribute_expressions(flowfile).value
        bucket, key = bucket or "", key or ""
        service = self._encryption_service(context, session)
        try:
            resource = file_resource(context, session, flowfile)
            size = resource.size if resource is not None else flowfile.size
            extra = self._extra_args(context, flowfile, service)
            client = self._s3.get(context, session, flowfile)
            threshold = int(context.get_property(MULTIPART_THRESHOLD).as_data_size("B") or MAX_PUT)
            store = self._state_store(context)
            _multipart.age_off(
                client, bucket, store,
                context.get_property(AGEOFF_INTERVAL).as_time_period("s") or 3600,
                context.get_property(MAX_AGE).as_time_period("s") or 7 * 86400,
            )  # fmt: skip
            if size <= threshold:
                result = self._put(client, session, flowfile, bucket, key, extra, resource)
                result["_method"] = "putobject"
            else:
                part = int(context.get_property(MULTIPART_PART_SIZE).as_data_size("B") or MAX_PUT)
                cache_key = f"{context.component.id}/{bucket}/{key}/{flowfile.uuid}"
                result = upload_multipart(
                    client, session, flowfile, bucket, key, _request_args(extra), part,
                    part_extra=service.part_args() if service is not None else {},
                    store=store, cache_key=cache_key, file=resource,
                )  # fmt: skip
                result["_method"] = "multipartupload"
        except Exception as error:
            if not (
                _is_s3_error(error) or isinstance(error, BadFlowFileSetting | FileResourceError)
            ):
                raise
            context.logger.error(
                "Failed to put %s to Amazon S3 bucket %s key %s; routing to failure: %s",
                flowfile, bucket, key,
                _s3.describe(error) if _is_s3_error(error) else str(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        attributes = _attributes(bucket, key, extra, result, service)
        attributes["s3.url"] = _s3.resource_url(client, bucket, key)
        flowfile = session.put_all_attributes(flowfile, attributes)
        uri = _s3.transit_uri(bucket, key)
        session.provenance.send(flowfile, uri, duration_ms=int((time.monotonic() - started) * 1000))
        session.transfer(flowfile, SUCCESS)

    @staticmethod
    def _encryption_service(context: ProcessContext, session: ProcessSession) -> Any:
        name = context.get_property(_s3.ENCRYPTION_SERVICE).value
        return session.controller_service(name) if name else None

    @staticmethod
    def _state_store(context: ProcessContext) -> _multipart.StateStore:
        """Where multipart states are saved (NiFi's ``${java.io.tmpdir}``: the system's)."""
        raw = context.get_property(MULTIPART_TEMP_DIR).value or ""
        directory = (
            tempfile.gettempdir()
            if raw.strip() in {"", _TMPDIR}
            else context.get_property(MULTIPART_TEMP_DIR).evaluate_attribute_expressions().value
        ) or tempfile.gettempdir()
        component = context.component
        return _multipart.StateStore(directory, f"{component.repository_id}/{component.id}")

    def _extra_args(self, context: ProcessContext, flowfile: Any, service: Any) -> dict[str, Any]:
        """The object's headers, storage class, ACL, encryption, metadata and tags."""
        value_of = lambda d: context.get_property(d).evaluate_attribute_expressions(flowfile).value  # noqa: E731
        extra: dict[str, Any] = {
            "StorageClass": context.get_property(STORAGE_CLASS).value or "STANDARD"
        }
        for descriptor, arg in ((CONTENT_TYPE, "ContentType"), (CACHE_CONTROL, "CacheControl")):
            if value := value_of(descriptor):
                extra[arg] = value
        if "ContentType" not in extra and flowfile.attributes.get("mime.type"):
            extra["ContentType"] = flowfile.attributes["mime.type"]
        # NiFi: the URL-encoded filename, or inline, or attachment; filename="<encoded>".
        filename = _url_encode(flowfile.attributes.get("filename", ""))
        disposition = context.get_property(CONTENT_DISPOSITION).value
        if disposition == "inline":
            extra["ContentDisposition"] = "inline"
        elif disposition == "attachment":
            extra["ContentDisposition"] = f'attachment; filename="{filename}"'
        elif filename:
            extra["ContentDisposition"] = filename
            extra["_disposition_default"] = True
        metadata = {name: value_of(name) or "" for name in context.dynamic_properties}
        if metadata:
            extra["Metadata"] = metadata
        extra.update(_acl_args(value_of))
        if service is not None:
            extra.update(service.put_args())
        elif context.get_property(SERVER_SIDE_ENCRYPTION).value == "AES256":
            extra["ServerSideEncryption"] = "AES256"
        prefix = value_of(OBJECT_TAGS_PREFIX)
        if prefix:
            strip = bool(context.get_property(REMOVE_TAG_PREFIX).as_boolean())
            tags = {
                (name[len(prefix) :] if strip else name): value
                for name, value in flowfile.attributes.items()
                if name.startswith(prefix)
            }
            if tags:
                extra["Tagging"] = urlencode(tags)
        return extra

    @staticmethod
    def _put(  # noqa: PLR0917 (the upload's parts)
        client: Any, session: ProcessSession, flowfile: Any, bucket: str, key: str,
        extra: dict[str, Any], resource: FileResource | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """One PUT: from memory when small, else from a spooled temporary file, or the file.

        The file is hashed first and the PUT carries its MD5, so S3 refuses (``BadDigest``) a
        body that differs from the file as found: one rewritten during the PUT leaves the
        object as it was.

        Raises:
            FileChangedError: the file changed while it was sent (the retry sends it again).
        """
        if resource is not None:
            md5 = resource.content_md5()
            args = _request_args(extra)
            directory_bucket = bucket.endswith(DIRECTORY_BUCKET_SUFFIX)
            if not directory_bucket:  # S3 Express takes no MD5, and its ETag is none
                args = {**args, "ContentMD5": md5}
            with resource.open() as src:
                try:
                    result = dict(client.put_object(Bucket=bucket, Key=key, Body=src, **args))
                except Exception as error:
                    if _s3.error_code(error) == "BadDigest":
                        raise FileChangedError(resource.changed_message()) from error
                    raise
            resource.check_unchanged()
            if not directory_bucket:
                _check_etag(resource, result, md5)
            return result
        with (
            tempfile.SpooledTemporaryFile(max_size=IN_MEMORY) as spool,
            session.read(flowfile) as src,
        ):
            while chunk := src.read(1 << 20):
                spool.write(chunk)
            spool.seek(0)
            args = _request_args(extra)
            return dict(client.put_object(Bucket=bucket, Key=key, Body=spool, **args))


#: S3 Express One Zone's directory buckets end so; they refuse Content-MD5 (checksums only)
#: and their ETags are not the content's MD5.
DIRECTORY_BUCKET_SUFFIX = "--x-s3"


def _check_etag(resource: FileResource, result: dict[str, Any], md5: str) -> None:
    """Raise when the object's ETag shows S3 stored other bytes than the file's as hashed.

    S3 itself refuses such a PUT (``Content-MD5``); a store that does not check it (moto,
    some S3-compatible servers) is caught here, after the fact: the FlowFile still fails. The
    ETag is the content's MD5 only for unencrypted and SSE-S3 objects (as S3 answers, so a
    bucket's default SSE-KMS counts), so only those are checked.

    Raises:
        FileChangedError: the ETag is an MD5 other than the file's.
    """
    if result.get("SSECustomerAlgorithm") or result.get("ServerSideEncryption") not in {
        None,
        "AES256",
    }:
        return
    etag = str(result.get("ETag") or "").strip('"').lower()
    expected = base64.b64decode(md5).hex()
    if len(etag) == len(expected) and etag != expected:
        msg = (
            f"{resource.changed_message()} (the store did not check Content-MD5: the object "
            f"now holds other bytes, ETag {etag})"
        )
        raise FileChangedError(msg)


def _url_encode(text: str) -> str:
    """Java's ``URLEncoder.encode(text, UTF_8)``, as NiFi encodes the filename."""
    return quote_plus(text, safe="*").replace("~", "%7E")


def _request_args(extra: dict[str, Any]) -> dict[str, Any]:
    """*extra* without the processor's private notes (keys starting with ``_``)."""
    return {k: v for k, v in extra.items() if not k.startswith("_")}


def _acl_args(value_of: Any) -> dict[str, str]:
    """NiFi's grants (``id=`` or ``emailAddress=`` per user), else its Canned ACL.

    Raises:
        BadFlowFileSetting: Canned ACL evaluates to a name S3 does not have.
    """
    grants: dict[str, str] = {}
    for descriptor, arg in _GRANTS:
        users = [u.strip() for u in (value_of(descriptor) or "").split(",") if u.strip()]
        if users:
            grants[arg] = ",".join(f"emailAddress={u}" if "@" in u else f"id={u}" for u in users)
    if grants:
        return grants
    canned = (value_of(CANNED_ACL) or "").strip()
    if not canned:
        return {}
    acl = CANNED_ACLS.get(canned) or (canned if canned in CANNED_ACLS.values() else None)
    if acl is None:
        msg = (
            f"Canned ACL {canned!r} is not one of {', '.join(CANNED_ACLS)} "
            "(or S3's own names such as public-read)"
        )
        raise BadFlowFileSetting(msg)
    return {"ACL": acl}


def _attributes(
    bucket: str, key: str, extra: dict[str, Any], result: dict[str, Any], service: Any
) -> dict[str, str]:
    """NiFi's attributes of a put object."""
    out = {
        "s3.bucket": bucket, "s3.key": key, "s3.storeClass": extra["StorageClass"],
        "s3.apimethod": result["_method"],
    }  # fmt: skip
    etag = (result.get("ETag") or "").strip('"')
    if etag:
        out["s3.etag"] = etag
    if result.get("VersionId") and result["VersionId"] != "null":
        out["s3.version"] = result["VersionId"]
    if result.get("UploadId"):
        out["s3.uploadId"] = result["UploadId"]
    if extra.get("ContentType"):
        out["s3.contenttype"] = extra["ContentType"]
    if extra.get("ContentDisposition") and not extra.get("_disposition_default"):
        out["s3.contentdisposition"] = extra["ContentDisposition"]
    if extra.get("CacheControl"):
        out["s3.cachecontrol"] = extra["CacheControl"]
    out.update(_s3.expiration_attributes(result.get("Expiration")))
    answer = dict(result)
    if not answer.get("ServerSideEncryption") and extra.get("ServerSideEncryption"):
        answer["ServerSideEncryption"] = extra["ServerSideEncryption"]  # multipart: as created
    if extra.get("SSECustomerAlgorithm"):
        answer.setdefault("SSECustomerAlgorithm", extra["SSECustomerAlgorithm"])
    out.update(_s3.encryption_attributes(answer, service))
    if extra.get("Metadata"):
        out["s3.usermetadata"] = "\n".join(f"{k}={v}" for k, v in extra["Metadata"].items())
    return out
