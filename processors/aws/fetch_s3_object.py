"""FetchS3Object: replace a FlowFile's content with an S3 object's (NiFi's FetchS3Object)."""

from __future__ import annotations

import time
from typing import Any, ClassVar
from urllib.parse import unquote_plus

from flowcore.errors import ConfigurationError
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.units import parse_data_size
from flowcore.validators import Validator
from processors.aws import _s3

__all__ = ["FetchS3Object"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES


def _byte_count(value: str) -> str | None:
    """NiFi's data size (``5 KB``, ``0 B``), or a plain count of bytes (``100``)."""
    if value.strip().isdigit():
        return None
    try:
        parse_data_size(value)
    except ValueError:
        return "it must be a number of bytes or a data size such as '100', '10 KB' or '0 B'"
    return None


def _positive_byte_count(value: str) -> str | None:
    """A byte count or data size of at least one byte (NiFi's bounds 1 to Long.MAX_VALUE)."""
    why = _byte_count(value)
    if why is not None:
        return why
    text = value.strip()
    if (int(text) if text.isdigit() else parse_data_size(text)) < 1:
        return "it must be at least 1 byte (leave it empty to read to the end of the object)"
    return None


#: Module-level checks (not lambdas): descriptors holding them stay picklable.
BYTES_VALIDATOR = Validator("DATA_SIZE_VALIDATOR", _byte_count)
POSITIVE_BYTES_VALIDATOR = Validator("DATA_SIZE[1..]", _positive_byte_count)
VERSION = PropertyDescriptor(
    "Version", description="The Version of the Object to download", el_scope=_FLOWFILE,
)  # fmt: skip
REQUESTER_PAYS = PropertyDescriptor(
    "Requester Pays", description="If true, indicates that the requester consents to pay any "
    "charges associated with retrieving objects from the S3 bucket.", required=True,
    default="false", allowable_values=("true", "false"), aliases=("requester-pays",),
)  # fmt: skip
RANGE_START = PropertyDescriptor(
    "Range Start", description="The byte position at which to start reading from the object. "
    "An empty value or a value of zero will start reading at the beginning of the object.",
    el_scope=_FLOWFILE, aliases=("range-start",), validators=(BYTES_VALIDATOR,),
)  # fmt: skip
RANGE_LENGTH = PropertyDescriptor(
    "Range Length", description="The number of bytes to download from the object, starting from "
    "the Range Start. An empty value or a value that extends beyond the end of the object will "
    "read to the end of the object.", el_scope=_FLOWFILE, aliases=("range-length",),
    validators=(POSITIVE_BYTES_VALIDATOR,),
)  # fmt: skip
#: Encryption strategies S3 decrypts by itself on GET (FetchS3Object refuses their services).
_AUTO_DECRYPTED = frozenset({"SSE_S3", "SSE_KMS"})
#: Bytes read from the object per write (content is streamed, never held whole).
CHUNK = 1 << 20


class FetchS3Object(Processor):
    """Retrieves the contents of an S3 Object and writes it to the content of a FlowFile.

    The content streams from S3 into the content repository in 1 MiB chunks. A FETCH event with
    the object's ``s3://bucket/key`` URI is reported. An S3 error (no such bucket or key,
    refused credentials) or an unreachable endpoint sends the FlowFile to ``failure``,
    penalized, with ``s3.exception``, ``s3.errorCode``, ``s3.errorMessage`` and
    ``s3.statusCode`` (NiFi's attributes).
    """

    BUCKET = _s3.BUCKET
    KEY = _s3.KEY
    property_descriptors: ClassVar = (
        _s3.BUCKET, _s3.KEY, *_s3.COMMON, VERSION, _s3.ENCRYPTION_SERVICE, REQUESTER_PAYS,
        RANGE_START, RANGE_LENGTH,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("Amazon", "S3", "AWS", "Get", "Fetch")
    writes_attributes: ClassVar = {
        "s3.bucket": "The name of the S3 bucket",
        "path": "The path of the file",
        "absolute.path": "The path of the file",
        "filename": "The name of the file",
        "hash.value": "The MD5 sum of the file",
        "hash.algorithm": "MD5",
        "mime.type": "If S3 provides the content type/MIME type, this attribute will hold that "
        "file",
        "s3.etag": "The ETag that can be used to see if the file has changed",
        "s3.exception": "The class name of the exception thrown during processor execution",
        "s3.additionalDetails": "The S3 supplied detail from the failed operation",
        "s3.statusCode": "The HTTP error code (if available) from the failed operation",
        "s3.errorCode": "The S3 moniker of the failed operation",
        "s3.errorMessage": "The S3 exception message from the failed operation",
        "s3.expirationTime": "If the file has an expiration date, this attribute will be set, "
        "containing the milliseconds since epoch in UTC time",
        "s3.expirationTimeRuleId": "The ID of the rule that dictates this object's expiration time",
        "s3.sseAlgorithm": "The server side encryption algorithm of the object",
        "s3.version": "The version of the S3 object",
        "s3.encryptionStrategy": "The name of the encryption strategy that was used to store "
        "the S3 object (if it is encrypted)",
        "s3.url": "The URL that can be used to access the S3 object",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def service_problems(
        self, descriptor: PropertyDescriptor, service: Any
    ) -> list[tuple[str, str]]:
        """NiFi's customValidate: a Server-side S3 or KMS service is refused (flow validation).

        S3 decrypts such objects by itself on GET; only Server-side Customer Key needs one.
        """
        strategy = getattr(service, "strategy_name", None)
        if descriptor.name != _s3.ENCRYPTION_SERVICE.name or strategy not in _AUTO_DECRYPTED:
            return []
        shown = service.strategy_display_name
        why = (
            f"{shown} is not a valid encryption strategy for fetching objects. Decryption will "
            f"be handled automatically during the fetch of S3 objects encrypted with {shown}"
        )
        return [(why, "remove the Encryption Service from FetchS3Object")]

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fetch one FlowFile's object into its content."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions(flowfile).value
        key = context.get_property(self.KEY).evaluate_attribute_expressions(flowfile).value
        service = _encryption_service(context, session)
        try:
            args = _get_args(context, flowfile, bucket or "", key or "", service)
            client = self._s3.get(context, session, flowfile)
            response = client.get_object(**args)
            body = response["Body"]
            flowfile = session.write(flowfile, iter(lambda: body.read(CHUNK), b""))
        except Exception as error:  # botocore's ClientError, connection and timeout errors
            if not (_is_s3_error(error) or isinstance(error, BadRange)):
                raise
            context.logger.error(
                "Failed to retrieve S3 Object for %s from bucket %s key %s; routing to "
                "failure: %s", flowfile, bucket, key,
                _s3.describe(error) if _is_s3_error(error) else str(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        attributes = _attributes(bucket or "", key or "", response, service)
        attributes["s3.url"] = _s3.resource_url(client, bucket or "", key or "")
        flowfile = session.put_all_attributes(flowfile, attributes)
        uri = _s3.transit_uri(bucket or "", key or "")
        session.provenance.fetch(
            flowfile, uri, duration_ms=int((time.monotonic() - started) * 1000)
        )
        session.transfer(flowfile, SUCCESS)


def _is_s3_error(error: BaseException) -> bool:
    """Botocore's errors (service, connection, timeout, credentials), a missing s3.region."""
    module = type(error).__module__ or ""
    if isinstance(error, _s3.RegionAttributeMissing | OSError):
        return True
    return module.startswith(("botocore", "urllib3", "boto3"))


class BadRange(ValueError):
    """Range Start or Range Length, evaluated against a FlowFile, is not a data size."""


def _encryption_service(context: ProcessContext, session: ProcessSession) -> Any:
    """The Encryption Service, which fetching needs for Server-side Customer Key only.

    Raises:
        ConfigurationError: a Server-side S3 or KMS service (S3 decrypts those by itself), as
            NiFi's validation refuses it.
    """
    name = context.get_property(_s3.ENCRYPTION_SERVICE).value
    service = session.controller_service(name) if name else None
    if service is not None and service.strategy_name in _AUTO_DECRYPTED:
        msg = (
            f"FetchS3Object's Encryption Service {name!r} uses {service.strategy_display_name}, "
            "which is not a valid encryption strategy for fetching objects: S3 decrypts such "
            "objects by itself; remove the Encryption Service from FetchS3Object"
        )
        raise ConfigurationError(msg)
    return service


def _get_args(
    context: ProcessContext, flowfile: Any, bucket: str, key: str, service: Any
) -> dict[str, Any]:
    """GetObject's arguments: version, requester pays, NiFi's byte range, SSE-C's key.

    Raises:
        BadRange: Range Start or Range Length evaluates to something not a data size.
    """
    value_of = lambda d: context.get_property(d).evaluate_attribute_expressions(flowfile)  # noqa: E731
    args: dict[str, Any] = {"Bucket": bucket, "Key": key, "ChecksumMode": "ENABLED"}
    if version := value_of(VERSION).value:
        args["VersionId"] = version
    if context.get_property(REQUESTER_PAYS).as_boolean():
        args["RequestPayer"] = "requester"
    start = _data_size(value_of(RANGE_START), RANGE_START.name) or 0
    length = _data_size(value_of(RANGE_LENGTH), RANGE_LENGTH.name)
    if length is not None and length < 1:
        msg = f"Range Length {value_of(RANGE_LENGTH).value!r} must be at least 1 byte"
        raise BadRange(msg)
    # As NiFi: no Range header for "from 0 to the end" (a zero-byte object has no byte 0).
    if length is not None:
        args["Range"] = f"bytes={start}-{start + length - 1}"
    elif start > 0:
        args["Range"] = f"bytes={start}-"
    if service is not None:
        args.update(service.get_args())
    return args


def _data_size(value: Any, name: str) -> int | None:
    """A range property in bytes (NiFi's data size: ``100``, ``5 KB``), None when unset."""
    if not (value.value or "").strip():
        return None
    text = value.value.strip()
    if text.isdigit():
        return int(text)
    try:
        size = value.as_data_size("B")
    except Exception as error:
        msg = f"{name} {text!r} is not a data size (such as 100 or 5 KB): {error}"
        raise BadRange(msg) from None
    if size is None:
        msg = f"{name} {text!r} is not a data size (such as 100 or 5 KB)"
        raise BadRange(msg)
    return int(size)


_CHECKSUMS = (
    ("ChecksumCRC32", "CRC32"), ("ChecksumCRC32C", "CRC32C"),
    ("ChecksumCRC64NVME", "CRC64NVME"), ("ChecksumSHA256", "SHA256"), ("ChecksumSHA1", "SHA1"),
)  # fmt: skip


def _attributes(bucket: str, key: str, response: dict[str, Any], service: Any) -> dict[str, str]:
    """NiFi's attributes of a fetched object."""
    out = {"s3.bucket": bucket}
    raw_disposition = response.get("ContentDisposition")
    if raw_disposition is not None:
        # NiFi: inline or an attachment keep the key's name; else the disposition is the name
        # (PutS3Object writes the URL-encoded filename there by default).
        disposition = unquote_plus(raw_disposition)
        if disposition == "inline" or disposition.startswith("attachment; filename="):
            out.update(_path_attributes(key))
        else:
            out.update(_path_attributes(disposition))
    for field, algorithm in _CHECKSUMS:
        if response.get(field):
            out["hash.value"], out["hash.algorithm"] = response[field], algorithm
            break
    if response.get("ContentType"):
        out["mime.type"] = response["ContentType"]
    etag = (response.get("ETag") or "").strip('"')
    if etag:
        out["s3.etag"] = etag
    out.update(_s3.expiration_attributes(response.get("Expiration")))
    for name_, value in (response.get("Metadata") or {}).items():
        out[name_] = value
    out.update(_s3.encryption_attributes(response, service))
    if response.get("VersionId") and response["VersionId"] != "null":
        out["s3.version"] = response["VersionId"]
    return out


def _path_attributes(name: str) -> dict[str, str]:
    """NiFi's ``setFilePathAttributes``: path and absolute.path only when *name* has a slash."""
    slash = name.rfind("/")
    if -1 < slash < len(name) - 1:
        return {"path": name[:slash], "absolute.path": name, "filename": name[slash + 1 :]}
    return {"filename": name}
