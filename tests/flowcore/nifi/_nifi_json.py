"""Small builders of NiFi's versioned flow JSON, for tests that need a flow the samples lack."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from flowcore.controller_service import ControllerService
from flowcore.processor.kinds import FlowFileTransform, TransformResult
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import PropertyDescriptor

STANDARD = "org.apache.nifi.processors.standard."
UPDATE_ATTRIBUTE = "org.apache.nifi.processors.attributes.UpdateAttribute"


def processor(
    identifier: str,
    name: str,
    kind: str,
    properties: dict[str, Any] | None = None,
    *,
    group: str = "top",
    descriptors: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A VersionedProcessor (*kind*: a simple name of a standard processor, or a full type)."""
    full = (
        kind
        if "." in kind
        else (UPDATE_ATTRIBUTE if kind == "UpdateAttribute" else STANDARD + kind)
    )
    return {
        "identifier": identifier,
        "name": name,
        "type": full,
        "bundle": {"group": "org.apache.nifi", "artifact": "nifi-standard-nar", "version": "2.0.0"},
        "properties": properties or {},
        "propertyDescriptors": descriptors if descriptors is not None else {},
        "schedulingPeriod": "0 sec",
        "schedulingStrategy": "TIMER_DRIVEN",
        "concurrentlySchedulableTaskCount": 1,
        "autoTerminatedRelationships": [],
        "scheduledState": "ENABLED",
        "componentType": "PROCESSOR",
        "groupIdentifier": group,
        **fields,
    }


def port(identifier: str, name: str, kind: str, *, group: str = "top", **fields: Any) -> dict:
    """A VersionedPort: *kind* INPUT_PORT or OUTPUT_PORT."""
    return {"identifier": identifier, "name": name, "type": kind, "componentType": kind,
            "groupIdentifier": group, **fields}  # fmt: skip


def funnel(identifier: str, *, group: str = "top") -> dict[str, Any]:
    """A VersionedFunnel."""
    return {"identifier": identifier, "componentType": "FUNNEL", "groupIdentifier": group}


def connection(
    identifier: str,
    source: tuple[str, str, str],
    destination: tuple[str, str, str],
    relationships: list[str],
    *,
    group: str = "top",
    **fields: Any,
) -> dict[str, Any]:
    """A VersionedConnection; each end is (id, type, groupId), as NiFi writes it."""

    def end(value: tuple[str, str, str]) -> dict[str, str]:
        return {"id": value[0], "type": value[1], "groupId": value[2]}

    return {
        "identifier": identifier,
        "name": "",
        "source": end(source),
        "destination": end(destination),
        "selectedRelationships": relationships,
        "backPressureObjectThreshold": 10000,
        "backPressureDataSizeThreshold": "1 GB",
        "flowFileExpiration": "0 sec",
        "prioritizers": [],
        "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE",
        "componentType": "CONNECTION",
        "groupIdentifier": group,
        **fields,
    }


def group(identifier: str, name: str, **members: Any) -> dict[str, Any]:
    """A VersionedProcessGroup holding *members* (processors=[...], connections=[...] ...)."""
    return {"identifier": identifier, "name": name, "componentType": "PROCESS_GROUP", **members}


def download(root: dict[str, Any], contexts: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2.x "Download flow definition" document around *root*."""
    return {
        "flowContents": root,
        "externalControllerServices": {},
        "parameterContexts": contexts or {},
        "flowEncodingVersion": "1.0",
    }


def generate_to_log(**log_fields: Any) -> dict[str, Any]:
    """GenerateFlowFile -> LogAttribute (success auto-terminated), as a download."""
    gen = processor("gen", "Generate", "GenerateFlowFile", {"Custom Text": "x"})
    log = processor("log", "Log", "LogAttribute", autoTerminatedRelationships=["success"],
                    **log_fields)  # fmt: skip
    link = connection("c1", ("gen", "PROCESSOR", "top"), ("log", "PROCESSOR", "top"), ["success"])
    return download(group("top", "Top", processors=[gen, log], connections=[link]))


class SignContent(FlowFileTransform):
    """Writes a signature of each FlowFile's content made with a secret key (a user's class)."""

    KEY = PropertyDescriptor(
        "Signing Key", description="the secret key", required=True, sensitive=True
    )
    property_descriptors: ClassVar = (KEY,)
    relationships: ClassVar = (SUCCESS,)

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        """Sign the content with the key."""
        key = context.get_property(self.KEY).value
        digest = hashlib.sha256(key.encode() + flowfile.read()).hexdigest()[:8]
        return TransformResult(attributes={"signature": digest})


def service(identifier: str, name: str, kind: str, *, group: str = "top") -> dict[str, Any]:
    """A VersionedControllerService of the full type *kind*."""
    return {
        "identifier": identifier,
        "name": name,
        "type": kind,
        "bundle": {"group": "org.apache.nifi", "artifact": "nifi-standard-nar", "version": "2.0.0"},
        "properties": {},
        "propertyDescriptors": {},
        "componentType": "CONTROLLER_SERVICE",
        "groupIdentifier": group,
    }


def missing_types() -> dict[str, Any]:
    """A download using two processor types and two service types flowcore lacks: CountText
    (reading with a CEFReader that LogAttribute names too) at the top, and two ListDatabaseTables in
    group Ingest using its DBCPConnectionPool; a service no processor names stands aside."""
    uses = {"name": "Record Reader", "identifiesControllerService": True}
    convert = processor("convert", "Convert", "CountText", {"Record Reader": "csv"},
                        descriptors={"Record Reader": uses})  # fmt: skip
    log = processor("log", "Log", "LogAttribute", {"Record Reader": "csv"})
    pooled = {"Database Connection Pooling Service": "pool"}
    queries = [
        processor(f"q{n}", name, "ListDatabaseTables", pooled, group="ingest")
        for n, name in enumerate(["Query", "Query 2"])
    ]
    ingest = group(
        "ingest", "Ingest", processors=queries, groupIdentifier="top",
        controllerServices=[service("pool", "Pool", "org.apache.nifi.dbcp.HikariCPConnectionPool",
                                    group="ingest")],
    )  # fmt: skip
    top = group(
        "top", "Top", processors=[convert, log], processGroups=[ingest],
        controllerServices=[service("csv", "CSV reader", "org.apache.nifi.cef.CEFReader"),
                            service("aside", "Aside", "com.acme.Unused")],
    )  # fmt: skip
    return download(top)


def with_invalid_processors(*, fixed: bool = False) -> dict[str, Any]:
    """Generate ("a\\nb") feeding Log and three processors NiFi finds invalid: Split (SplitText
    without its required Line Split Count), Tag (UpdateAttribute with a broken expression) and
    Route (RouteOnAttribute with 'unmatched' neither connected nor auto-terminated); Split's
    splits go to Log. *fixed*: the three corrected and Generate disabled, so a run only takes
    what an earlier one left queued."""
    gen = processor("gen", "Generate", "GenerateFlowFile", {"Custom Text": "a\nb"},
                    scheduledState="DISABLED" if fixed else "ENABLED")  # fmt: skip
    split = processor("split", "Split", "SplitText", {"Line Split Count": "1" if fixed else None},
                      autoTerminatedRelationships=["original", "failure"])  # fmt: skip
    tag = processor("tag", "Tag", "UpdateAttribute",
                    {"day": "${now():format('yyyy')}" if fixed else "${now():format(}"},
                    autoTerminatedRelationships=["success"])  # fmt: skip
    route = processor("route", "Route", "RouteOnAttribute",
                      autoTerminatedRelationships=["unmatched"] if fixed else [])  # fmt: skip
    log = processor("log", "Log", "LogAttribute", autoTerminatedRelationships=["success"])

    def end(identifier: str) -> tuple[str, str, str]:
        return (identifier, "PROCESSOR", "top")

    links = [
        connection(f"to-{target}", end("gen"), end(target), ["success"])
        for target in ("split", "tag", "route", "log")
    ]
    links.append(connection("splits", end("split"), end("log"), ["splits"]))
    return download(group("top", "Top", processors=[gen, split, tag, route, log],
                          connections=links))  # fmt: skip


class KeyValueLookup(ControllerService):
    """A user's lookup service standing for a NiFi type (registered in tests that import it)."""

    implements = ("org.apache.nifi.lookup.StringLookupService", "LookupService")
    nifi_types = ("org.apache.nifi.lookup.SimpleKeyValueLookupService",)
    nifi_bundle = ("org.apache.nifi", "nifi-lookup-services-nar")
    supports_dynamic_properties = True
    FALLBACK = PropertyDescriptor("Fallback Lookup", identifies_service="LookupService")
    TOKEN = PropertyDescriptor("Token", sensitive=True)
    property_descriptors: ClassVar = (FALLBACK, TOKEN)


def lookup_service(
    identifier: str, name: str, properties: dict[str, Any], *, group: str = "top"
) -> dict[str, Any]:
    """A VersionedControllerService of KeyValueLookup's NiFi type."""
    data = service(identifier, name, KeyValueLookup.nifi_types[0], group=group)
    data["properties"] = properties
    return data


class LookupUser(FlowFileTransform):
    """A user's processor naming a lookup service (mapped with type_map in tests)."""

    SERVICE = PropertyDescriptor(
        "Lookup Service", required=True, identifies_service="StringLookupService"
    )
    property_descriptors: ClassVar = (SERVICE,)
    relationships: ClassVar = (SUCCESS,)

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        """Pass the FlowFile on."""
        return TransformResult()
