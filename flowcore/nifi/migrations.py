"""Property names NiFi changed between 1.x and 2.x, so a flow from either version imports.

NiFi 2.x renamed many properties from internal names (``canonical-value-lookup-cache-size``) to
their display names (``Cache Value Lookup Cache Size``), and migrates a 1.x flow as it loads it:
each processor's ``migrateProperties`` calls ``config.renameProperty(old, new)`` or
``config.removeProperty(name)``. :data:`RENAMED` and :data:`REMOVED` copy those calls for the
processors flowcore has (and those it is gaining), from NiFi's sources (``main``, 2.x).

The table is read both ways: a 1.x name is found under its 2.x name, and a 2.x name under a
1.x name when flowcore's processor still declares that one. This matters most for processors
that take dynamic properties (UpdateAttribute, GenerateFlowFile): without it a renamed property
would become a dynamic one, an attribute named ``canonical-value-lookup-cache-size``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "REMOVED",
    "RENAMED",
    "aws_credentials_service",
    "is_aws_processor",
    "is_removed",
    "known_name",
]

#: NiFi's ListedEntityTracker renames, shared by ListFile and the other listing processors.
_ENTITY_TRACKING = {
    "et-state-cache": "Entity Tracking State Cache",
    "et-time-window": "Entity Tracking Time Window",
    "et-initial-listing-target": "Entity Tracking Initial Listing Target",
    "et-node-identifier": "Entity Tracking Node Identifier",
}

#: ``migrateProperties`` renames by processor (NiFi's simple type name): old name -> 2.x name.
RENAMED: Mapping[str, Mapping[str, str]] = {
    "AttributesToJSON": {"attributes-to-json-regex": "Attributes Regular Expression"},
    "CryptographicHashContent": {
        "fail_when_empty": "Fail When Content Empty",
        "hash_algorithm": "Hash Algorithm",
    },
    "ExtractText": {
        "extract-text-enable-repeating-capture-group": "Enable Repeating Capture Group",
        "Enable repeating capture group": "Enable Repeating Capture Group",
        "extract-text-enable-named-groups": "Enable Named Groups",
        "Enable named group support": "Enable Named Groups",
    },
    "FetchFile": {
        "Log level when file not found": "File not Found Log Level",
        "Log level when permission denied": "Permission Denied Log Level",
    },
    "GenerateFlowFile": {
        "generate-ff-custom-text": "Custom Text",
        "character-set": "Character Set",
        "mime-type": "Mime Type",
    },
    "InvokeHTTP": {
        "Read Timeout": "Socket Read Timeout",
        "Remote URL": "HTTP URL",
        "disable-http2": "HTTP/2 Disabled",
        "idle-timeout": "Socket Idle Timeout",
        "max-idle-connections": "Socket Idle Connections",
        "oauth2-access-token-provider": "Request OAuth2 Access Token Provider",
        "Basic Authentication Username": "Request Username",
        "Basic Authentication Password": "Request Password",
        "Digest Authentication": "Request Digest Authentication Enabled",
        'Penalize on "No Retry"': "Request Failure Penalization Enabled",
        "send-message-body": "Request Body Enabled",
        "form-body-form-name": "Request Multipart Form-Data Name",
        "set-form-filename": "Request Multipart Form-Data Filename Enabled",
        "Use Chunked Encoding": "Request Chunked Transfer-Encoding Enabled",
        "Content-Encoding": "Request Content-Encoding",
        "Content-Type": "Request Content-Type",
        "Include Date Header": "Request Date Header Enabled",
        "Attributes to Send": "Request Header Attributes Pattern",
        "Useragent": "Request User-Agent",
        "Put Response Body In Attribute": "Response Body Attribute Name",
        "Max Length To Put In Attribute": "Response Body Attribute Size",
        "ignore-response-content": "Response Body Ignored",
        "use-etag": "Response Cache Enabled",
        "etag-max-cache-size": "Response Cache Size",
        "cookie-strategy": "Response Cookie Strategy",
        "Always Output Response": "Response Generation Required",
        "flow-file-naming-strategy": "Response FlowFile Naming Strategy",
        "Add Response Headers to Request": "Response Header Request Attributes Enabled",
        "Follow Redirects": "Response Redirects Enabled",
    },
    "ListFile": {
        "target-system-timestamp-precision": "Target System Timestamp Precision",
        "listing-strategy": "Listing Strategy",
        "record-writer": "Record Writer",
        "track-performance": "Track Performance",
        "max-performance-metrics": "Maximum Number of Files to Track",
        "max-operation-time": "Max Disk Operation Time",
        "max-listing-time": "Max Directory Listing Time",
        **_ENTITY_TRACKING,
    },
    "LogAttribute": {
        "attributes-to-log-regex": "Attributes to Log Regular Expression",
        "attributes-to-ignore-regex": "Attributes to Ignore Regular Expression",
        "character-set": "Character Set",
        "Log prefix": "Log Prefix",
    },
    "MergeContent": {
        "Maximum number of Bins": "Maximum Number of Bins",  # BinFiles
        "mergecontent-metadata-strategy": "Metadata Strategy",
        "Header File": "Header",
        "Footer File": "Footer",
        "Demarcator File": "Demarcator",
    },
    "ReplaceText": {"Regular Expression": "Search Value"},
    "UnpackContent": {"allow-stored-entries-wdd": "Allow Stored Entries With Data Descriptor"},
    "UpdateAttribute": {"canonical-value-lookup-cache-size": "Cache Value Lookup Cache Size"},
}

#: ``migrateProperties`` removals: properties NiFi 2.x drops (and so does the import).
REMOVED: Mapping[str, frozenset[str]] = {
    # AbstractListProcessor: listing state lives in the processor's own state since 1.x.
    "ListFile": frozenset({"Distributed Cache Service"}),
    # NiFi 2 removed ListenHTTP's rate limit (its migrateProperties logs a warning).
    "ListenHTTP": frozenset({"Max Data to Receive per Second"}),
    # PutS3Object's migrateProperties (NiFi 2 removes these; kept, PutS3Object would send
    # them as user metadata, its dynamic properties).
    "PutS3Object": frozenset({"Owner", "Write Permission User List", "Expiration Time Rule"}),
}


def _same_property(nifi_type: str, name: str) -> Iterator[str]:
    """Every other name NiFi gave the property *name* of *nifi_type*: its 2.x name first."""
    renames = RENAMED.get(nifi_type, {})
    current = renames.get(name, name)
    if current != name:
        yield current
    for old, new in renames.items():
        if new == current and old != name:
            yield old


def known_name(nifi_type: str, name: str, declares: Callable[[str], bool]) -> str | None:
    """The name under which flowcore's processor declares NiFi's property *name*, or None.

    Args:
        nifi_type: the processor's NiFi simple type name (``UpdateAttribute``).
        name: the property's name in the flow.
        declares: whether the processor declares a (non-dynamic) property by a name.
    """
    if declares(name):
        return name
    return next((other for other in _same_property(nifi_type, name) if declares(other)), None)


def is_removed(nifi_type: str, name: str) -> bool:
    """Whether NiFi 2.x removes property *name* of *nifi_type* when it migrates a flow."""
    return name in REMOVED.get(nifi_type, frozenset())


#: Relationships a 1.x processor names otherwise than the 2.x processor it imports as, by the
#: 1.x simple type name: old name -> 2.x name (connections and auto-termination follow).
RENAMED_RELATIONSHIPS: Mapping[str, Mapping[str, str]] = {
    # ConsumeKafkaRecord_2_6's REL_PARSE_FAILURE; NiFi 2's ConsumeKafka says "parse failure"
    "ConsumeKafkaRecord_2_6": {"parse.failure": "parse failure"},
}


def relationship_name(nifi_type: str, name: str) -> str:
    """The 2.x name of relationship *name* of a processor of NiFi type *nifi_type*."""
    return RENAMED_RELATIONSHIPS.get(nifi_type.rpartition(".")[2], {}).get(name, name)


#: NiFi 1.x AWS processors' own credential properties, which NiFi 2's migrateProperties
#: (AbstractAwsProcessor's migrateAuthenticationProperties) moves into a new service.
_AWS_PACKAGE = "org.apache.nifi.processors.aws."
_AWS_CREDENTIALS_SERVICE = (
    "org.apache.nifi.processors.aws.credentials.provider.service."
    "AWSCredentialsProviderControllerService"
)
_AWS_SERVICE_PROPERTY = "AWS Credentials Provider service"
_AWS_OBSOLETE = ("Access Key", "Secret Key", "Credentials File")


def aws_credentials_service(
    identifier: str, name: str, properties: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """NiFi 2's migration of a 1.x AWS processor's credentials: its properties, and the service.

    When the processor names no AWS Credentials Provider service, its ``Access Key`` and
    ``Secret Key`` (else its ``Credentials File``, else anonymous credentials, 1.x's default)
    become a new AWSCredentialsProviderControllerService the processor names; the three
    properties are removed either way. None for a processor with none of them (a 2.x one).

    Args:
        identifier: the processor's NiFi identifier (the service's is made from it).
        name: the processor's name (the service is named after it).
        properties: the processor's properties.
    """
    if not any(key in properties for key in _AWS_OBSOLETE):
        return None
    kept = {k: v for k, v in properties.items() if k not in _AWS_OBSOLETE}
    if kept.get(_AWS_SERVICE_PROPERTY):
        return kept, {}
    access, secret = properties.get("Access Key"), properties.get("Secret Key")
    if access and secret:
        settings: dict[str, Any] = {"Access Key": access, "Secret Key": secret}
    elif properties.get("Credentials File"):
        settings = {"Credentials File": properties["Credentials File"]}
    else:
        settings = {"anonymous-credentials": "true"}
    service_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"flowcore:aws-credentials:{identifier}"))
    kept[_AWS_SERVICE_PROPERTY] = service_id
    service = {
        "identifier": service_id,
        "name": f"{name} AWS credentials",
        "type": _AWS_CREDENTIALS_SERVICE,
        "properties": settings,
    }
    return kept, service


def is_aws_processor(nifi_type: str) -> bool:
    """Whether *nifi_type* (a full NiFi type name) is one of NiFi's AWS processors."""
    return nifi_type.startswith(_AWS_PACKAGE)
