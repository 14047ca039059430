"""What the S3 processors share: NiFi's common properties, the client, failure attributes.

The client is made in the task from the processor's properties and the credentials service, and
cached by its configuration (not shipped: clients do not pickle). Every call has a bounded
timeout (Communications Timeout, connect and read) and at most two attempts.
"""

from __future__ import annotations

import re
import threading
from datetime import datetime
from typing import Any
from urllib.parse import quote

from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import NON_EMPTY_VALIDATOR, TIME_PERIOD_VALIDATOR, URL_VALIDATOR
from processors.aws.credentials import INTERFACE, require_boto3

__all__ = [
    "BUCKET",
    "BUCKET_NO_DEFAULT",
    "COMMON",
    "CREDENTIALS",
    "ENCRYPTION_SERVICE",
    "ENDPOINT",
    "KEY",
    "REGION",
    "RegionAttributeMissing",
    "S3Client",
    "encryption_attributes",
    "error_attributes",
    "error_code",
    "expiration_attributes",
    "resource_url",
    "transit_uri",
]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
_ATTRIBUTE_REGION = AllowableValue(
    "attribute-defined-region", "Use 's3.region' Attribute",
    "Uses 's3.region' FlowFile attribute as region.",
)  # fmt: skip
_REGIONS = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "eu-west-1", "eu-west-2",
    "eu-west-3", "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1", "ap-south-1",
    "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-southeast-1", "ap-southeast-2",
    "sa-east-1", "me-south-1", "af-south-1", "us-gov-west-1", "us-gov-east-1", "cn-north-1",
)  # fmt: skip

BUCKET = PropertyDescriptor(
    "Bucket", description="The S3 Bucket to interact with", required=True, default="${s3.bucket}",
    validators=(NON_EMPTY_VALIDATOR,), el_scope=_FLOWFILE,
)  # fmt: skip
BUCKET_NO_DEFAULT = PropertyDescriptor(
    "Bucket", description="The S3 Bucket to interact with", required=True,
    validators=(NON_EMPTY_VALIDATOR,), el_scope=ExpressionLanguageScope.ENVIRONMENT,
)  # fmt: skip
KEY = PropertyDescriptor(
    "Object Key", description="The S3 Object Key to use. This is analogous to a filename for "
    "traditional file systems.", required=True, default="${filename}",
    validators=(NON_EMPTY_VALIDATOR,), el_scope=_FLOWFILE,
)  # fmt: skip
REGION = PropertyDescriptor(
    "Region", description="The AWS Region to connect to.", required=True, default="us-west-2",
    allowable_values=(*(AllowableValue(r) for r in _REGIONS), _ATTRIBUTE_REGION),
)  # fmt: skip
CREDENTIALS = PropertyDescriptor(
    "AWS Credentials Provider service", "AWS Credentials Provider service",
    description="The Controller Service that is used to obtain AWS credentials provider",
    required=True, identifies_service=INTERFACE,
)  # fmt: skip
TIMEOUT = PropertyDescriptor(
    "Communications Timeout", required=True, default="30 secs",
    validators=(TIME_PERIOD_VALIDATOR,),
)  # fmt: skip
SSL_CONTEXT = PropertyDescriptor(
    "SSL Context Service", description="Specifies an optional SSL Context Service that, if "
    "provided, will be used to create connections", identifies_service="SSLContextService",
)  # fmt: skip
ENDPOINT = PropertyDescriptor(
    "Endpoint Override URL", description="Endpoint URL to use instead of the AWS default "
    "including scheme, host, port, and path. The AWS libraries select an endpoint URL based on "
    "the AWS region, but this property overrides the selected endpoint URL, allowing use with "
    "other S3-compatible endpoints.", validators=(URL_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)  # fmt: skip
SIGNER = PropertyDescriptor(
    "Signer Override", description="The AWS S3 library uses Signature Version 4 by default but "
    "this property allows you to specify the Version 2 signer to support older S3-compatible "
    "services.", default="Default Signature",
    allowable_values=("Default Signature", "AWSS3V4SignerType", "S3SignerType"),
)  # fmt: skip
PATH_STYLE = PropertyDescriptor(
    "Use Path Style Access", description="Path-style access can be enforced by setting this "
    "property to true.", required=True, default="false", allowable_values=("true", "false"),
    aliases=("use-path-style-access",),
)  # fmt: skip

ENCRYPTION_SERVICE = PropertyDescriptor(
    "Encryption Service", description="Specifies the Encryption Service Controller used to "
    "configure requests. FetchS3Object: Only needs to be configured in case of Server-side "
    "Customer Key encryption.", identifies_service="AmazonS3EncryptionService",
    aliases=("encryption-service",),
)  # fmt: skip

#: The connection properties every S3 processor has, after its own.
COMMON = (REGION, CREDENTIALS, TIMEOUT, SSL_CONTEXT, ENDPOINT, SIGNER, PATH_STYLE)
_SIGNATURES = {"Default Signature": None, "AWSS3V4SignerType": "s3v4", "S3SignerType": "s3"}


class RegionAttributeMissing(ConfigurationError):
    """Region is Use 's3.region' Attribute and a FlowFile has none.

    That FlowFile fails (NiFi routes a client it cannot make to failure); the processor goes on.
    """


def transit_uri(bucket: str, key: str = "") -> str:
    """NiFi-style transit URI of an object (``s3://bucket/key``)."""
    return f"s3://{bucket}/{key}"


class S3Client:
    """A processor's S3 clients, one per region, made in the task on first use."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Ship empty: a client is made where it is used."""
        return {"_clients": {}}

    def get(self, context: Any, session: Any, flowfile: Any = None) -> Any:
        """The boto3 S3 client for the processor's properties (and *flowfile*'s region).

        *session* is whatever gives the enabled services by name (``controller_service``):
        a task's session, or a source's listing context on the driver.
        """
        region = context.get_property(REGION).value or "us-west-2"
        if region == _ATTRIBUTE_REGION.value:
            region = (flowfile.attributes.get("s3.region") if flowfile is not None else None) or ""
            if not region:
                msg = "Region is Use 's3.region' Attribute but the FlowFile has no s3.region"
                raise RegionAttributeMissing(msg)
        client = self._clients.get(region)
        if client is None:
            client = self._clients[region] = self._make(context, session, region)
        return client

    @staticmethod
    def region(context: Any) -> str:
        """The Region property's value (as the listing reports it in ``s3.region``)."""
        return context.get_property(REGION).value or "us-west-2"

    @staticmethod
    def _make(context: Any, session: Any, region: str) -> Any:
        require_boto3()
        from botocore import UNSIGNED  # noqa: PLC0415
        from botocore.config import Config  # noqa: PLC0415

        service = session.controller_service(context.get_property(CREDENTIALS).value)
        timeout = context.get_property(TIMEOUT).as_time_period("s") or 30
        signature = _SIGNATURES.get(context.get_property(SIGNER).value or "Default Signature")
        if service.anonymous:
            signature = UNSIGNED
        addressing = "path" if context.get_property(PATH_STYLE).as_boolean() else "auto"
        endpoint = context.get_property(ENDPOINT).evaluate_attribute_expressions().value
        verify: Any = None
        ssl_name = context.get_property(SSL_CONTEXT).value
        if ssl_name:
            ssl_service = session.controller_service(ssl_name)
            verify = getattr(ssl_service, "truststore_filename", None) or None
        key = (service.fingerprint(), region, timeout, str(signature), addressing, endpoint, verify)
        with _LOCK:
            client = _PROCESS_CLIENTS.get(key)
            if client is None:
                config = Config(
                    connect_timeout=timeout,
                    read_timeout=timeout,
                    retries={"max_attempts": 2, "mode": "standard"},
                    signature_version=signature,
                    s3={"addressing_style": addressing},
                )
                client = service.session(region).client(
                    "s3", endpoint_url=endpoint or None, config=config, verify=verify
                )
                _PROCESS_CLIENTS[key] = client
        return client


#: Clients by configuration, shared by the tasks of a process (boto3 clients are thread-safe;
#: making one costs far more than a small request).
_PROCESS_CLIENTS: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.Lock()


def error_code(error: BaseException) -> str:
    """S3's error code of a botocore ClientError ("" for other errors, or one without a code)."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return ""
    code = response.get("Error", {}).get("Code")
    return str(code) if code else ""


def error_attributes(error: BaseException) -> dict[str, str]:
    """NiFi's failure attributes for an S3 error (s3.exception, s3.errorCode, ...)."""
    out = {"s3.exception": f"{type(error).__module__}.{type(error).__name__}"}
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        err = response.get("Error", {})
        meta = response.get("ResponseMetadata", {})
        if code := error_code(error):
            out["s3.errorCode"] = code
        out["s3.errorMessage"] = str(err.get("Message") or error)
        if meta.get("HTTPStatusCode"):
            out["s3.statusCode"] = str(meta["HTTPStatusCode"])
        if meta.get("HostId"):
            out["s3.additionalDetails"] = f"HostId: {meta['HostId']}"
    else:
        out["s3.errorMessage"] = str(error)
    return out


def describe(error: BaseException) -> str:
    """One line naming S3 and the cause, for logs and bulletins (no secrets: none are in it)."""
    attrs_ = error_attributes(error)
    code = attrs_.get("s3.errorCode")
    return f"S3 {code + ': ' if code else ''}{attrs_['s3.errorMessage']}"


_EXPIRATION = re.compile(r'expiry-date="([^"]*)"(?:,\s*rule-id="([^"]*)")?')


def expiration_attributes(header: str | None) -> dict[str, str]:
    """NiFi's ``s3.expirationTime`` (epoch millis) and ``s3.expirationTimeRuleId``.

    S3's ``x-amz-expiration`` header reads ``expiry-date="Fri, 23 Dec 2012 00:00:00 GMT",
    rule-id="r1"``; a header that does not parse gives no attributes (as NiFi's parser).
    """
    found = _EXPIRATION.search(header or "")
    if found is None:
        return {}
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    try:
        when: datetime = parsedate_to_datetime(found.group(1))
    except (TypeError, ValueError):
        return {}
    out = {"s3.expirationTime": str(int(when.timestamp() * 1000))}
    if found.group(2) is not None:
        out["s3.expirationTimeRuleId"] = found.group(2)
    return out


def encryption_attributes(response: dict[str, Any], service: Any = None) -> dict[str, str]:
    """NiFi's ``s3.encryptionStrategy`` and ``s3.sseAlgorithm`` from a response.

    As NiFi's ``setEncryptionAttributes``: the server's answer first (AES256: SSE_S3, aws:kms:
    SSE_KMS, a customer algorithm: SSE_C), else the configured service's strategy.
    """
    sse = response.get("ServerSideEncryption")
    if sse == "AES256":
        return {"s3.encryptionStrategy": "SSE_S3", "s3.sseAlgorithm": sse}
    if sse in {"aws:kms", "aws:kms:dsse"}:
        return {"s3.encryptionStrategy": "SSE_KMS", "s3.sseAlgorithm": sse}
    if response.get("SSECustomerAlgorithm"):
        return {"s3.encryptionStrategy": "SSE_C"}
    if service is not None:
        return {"s3.encryptionStrategy": service.strategy_name}
    return {}


def resource_url(client: Any, bucket: str, key: str) -> str:
    """The object's URL as NiFi's ``s3.url`` (the endpoint's path-style URL of the object)."""
    endpoint = str(client.meta.endpoint_url).rstrip("/")
    return f"{endpoint}/{bucket}/{quote(key, safe='/~')}"
