"""FetchS3Object: replace a FlowFile's content with an S3 object's (NiFi's FetchS3Object)."""

from __future__ import annotations

import posixpath
import time
from typing import Any, ClassVar

from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import FAILURE, SUCCESS
from flowcore.session.process_session import ProcessSession
from processors.aws import _s3

__all__ = ["FetchS3Object"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
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
    el_scope=_FLOWFILE, aliases=("range-start",),
)  # fmt: skip
RANGE_LENGTH = PropertyDescriptor(
    "Range Length", description="The number of bytes to download from the object, starting from "
    "the Range Start. An empty value or a value that extends beyond the end of the object will "
    "read to the end of the object.", el_scope=_FLOWFILE, aliases=("range-length",),
)  # fmt: skip
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
        _s3.BUCKET, _s3.KEY, *_s3.COMMON, VERSION, REQUESTER_PAYS, RANGE_START, RANGE_LENGTH,
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
        "s3.expirationTime": "If the file has an expiration date, this attribute will be set",
        "s3.sseAlgorithm": "The server side encryption algorithm of the object",
        "s3.version": "The version of the S3 object",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._s3 = _s3.S3Client()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fetch one FlowFile's object into its content."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        bucket = context.get_property(self.BUCKET).evaluate_attribute_expressions(flowfile).value
        key = context.get_property(self.KEY).evaluate_attribute_expressions(flowfile).value
        version = context.get_property(VERSION).evaluate_attribute_expressions(flowfile).value
        args: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if version:
            args["VersionId"] = version
        if context.get_property(REQUESTER_PAYS).as_boolean():
            args["RequestPayer"] = "requester"
        start = context.get_property(RANGE_START).evaluate_attribute_expressions(flowfile).value
        length = context.get_property(RANGE_LENGTH).evaluate_attribute_expressions(flowfile).value
        if (start and int(start) > 0) or length:
            first = int(start or 0)
            args["Range"] = f"bytes={first}-{first + int(length) - 1 if length else ''}"
        try:
            client = self._s3.get(context, session, flowfile)
            response = client.get_object(**args)
            body = response["Body"]
            flowfile = session.write(flowfile, iter(lambda: body.read(CHUNK), b""))
        except Exception as error:  # botocore's ClientError, connection and timeout errors
            if not _is_s3_error(error):
                raise
            context.logger.error(
                "Failed to retrieve S3 Object for %s from bucket %s key %s; routing to "
                "failure: %s", flowfile, bucket, key, _s3.describe(error),
            )  # fmt: skip
            flowfile = session.put_all_attributes(flowfile, _s3.error_attributes(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        flowfile = session.put_all_attributes(
            flowfile, _attributes(bucket or "", key or "", response)
        )
        uri = _s3.transit_uri(bucket or "", key or "")
        session.provenance.fetch(
            flowfile, uri, duration_ms=int((time.monotonic() - started) * 1000)
        )
        session.transfer(flowfile, SUCCESS)


def _is_s3_error(error: BaseException) -> bool:
    """Botocore's errors (service, connection, timeout, credentials), not flowcore's."""
    module = type(error).__module__ or ""
    return module.startswith(("botocore", "urllib3", "boto3")) or isinstance(error, OSError)


def _attributes(bucket: str, key: str, response: dict[str, Any]) -> dict[str, str]:
    """NiFi's attributes of a fetched object."""
    out = {"s3.bucket": bucket}
    disposition = response.get("ContentDisposition")
    name = key
    if disposition and disposition != "inline" and not disposition.startswith("attachment; "):
        name = disposition
    out["filename"] = posixpath.basename(name)
    out["path"] = posixpath.dirname(name) or ""
    out["absolute.path"] = name
    if response.get("ContentType"):
        out["mime.type"] = response["ContentType"]
    etag = (response.get("ETag") or "").strip('"')
    if etag:
        out["s3.etag"] = etag
    if response.get("Expiration"):
        out["s3.expirationTime"] = response["Expiration"]
    for name_, value in (response.get("Metadata") or {}).items():
        out[name_] = value
    if response.get("ServerSideEncryption"):
        out["s3.sseAlgorithm"] = response["ServerSideEncryption"]
    if response.get("VersionId") and response["VersionId"] != "null":
        out["s3.version"] = response["VersionId"]
    return out
