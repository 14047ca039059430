"""Tests for flowcore.nifi.exporting: flows as NiFi 2.x flow definitions."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import given

from flowcore.builder import Flow
from flowcore.definition.component_settings import RetrySettings
from flowcore.nifi.criteria import criteria_from_xml
from flowcore.nifi.exporting import export_flow, versioned_id
from flowcore.nifi.types import FLOWCORE_BUNDLE
from flowcore.parameters import Parameter, ParameterContext
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import PropertyDescriptor
from flowcore.registry import BUILTIN_SERVICES
from processors import FileSplitter, GetFile, PutFile, RouteOnAttribute, SplitText, UpdateAttribute
from processors.update_attribute import Rule
from tests.flowcore.nifi._nifi_json import KeyValueLookup, LookupUser
from tests.flowcore.nifi.flow_strategies import flows
from tests.flowcore.nifi.nifi_schema import schema_problems
from tests.flowcore.nifi.test_python_source import Local


def sample() -> Flow:
    """GetFile -> SplitText -> UpdateAttribute -> RouteOnAttribute -> funnel -> PutFile."""
    base = ParameterContext("base", "shared", parameters={"root": "/data"})
    context = ParameterContext(
        "sample",
        parameters=[
            Parameter("in", "/data/in"),
            Parameter("token", value_from_env="T", sensitive=True),
        ],
        inherited=[base],
    )
    flow = Flow("sample", parameters=context)
    get = flow.add(GetFile(input_directory="#{in}"), name="get", run_schedule="1 min")
    split = flow.add(SplitText(line_split_count=10), name="split", concurrent_tasks=2)
    tag = flow.add(
        UpdateAttribute(rules=[Rule("big", ["${fileSize:gt(9)}"], {"size": "big"})], source="web"),
        name="tag",
        retry=RetrySettings(["success"], count=3, backoff_mechanism="YIELD_PROCESSOR"),
    )
    route = flow.add(RouteOnAttribute(big="${size:equals('big')}"), name="route", disabled=True)
    funnel = flow.funnel("join")
    put = flow.add(PutFile(directory="out"), name="put", comments="the end")
    flow.connect(get, split)
    flow.connect(split, tag, "splits", prioritizers=["OldestFlowFileFirstPrioritizer"])
    flow.connect(tag, route, flowfile_expiration="1 min", name="tagged")
    flow.connect(route, funnel, ["unmatched", "big"])
    flow.connect(funnel, put)
    flow.connect(put, put, "failure")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, "success")
    return flow


def by_name(document: dict[str, Any], kind: str = "processors") -> dict[str, dict[str, Any]]:
    """The root group's components of *kind* by name."""
    return {c["name"]: c for c in document["flowContents"][kind]}


def test_export_has_only_nifis_fields_and_all_it_requires() -> None:
    """Every key belongs to its NiFi class; every field NiFi's download writes is there."""
    document = export_flow(sample()).document
    assert schema_problems(document) == []
    assert document["flowEncodingVersion"] == "1.0"
    assert document["latest"] is False
    json.dumps(document)  # JSON-ready as it is


@given(flows())
def test_any_flow_exports_to_nifis_schema(flow: Flow) -> None:
    """Random small flows export to documents that fit NiFi's classes."""
    assert schema_problems(flow.to_nifi()) == []


def test_export_is_stable_and_keeps_nifis_ids() -> None:
    """The same flow exports the same document; an id that is a UUID is kept as identifier."""
    assert export_flow(sample()).document == export_flow(sample()).document
    flow = Flow("imported")
    split = flow.add(SplitText(line_split_count=1), name="split")
    get = flow.add(GetFile(input_directory="in"), name="get")
    nifi_id = "0f6c3f2e-0191-1000-a3c1-6f1b2c3d4e5f"
    object.__setattr__(split, "id", nifi_id)  # as import keeps NiFi's identifier
    flow._components = {c.id: c for c in flow.components}
    processors = by_name(export_flow(flow).document)
    assert processors["split"]["identifier"] == nifi_id
    assert processors["get"]["identifier"] == versioned_id("imported", get.id)
    assert uuid.UUID(processors["get"]["identifier"]).version == 3


def test_processor_writes_properties_as_configured_with_defaults() -> None:
    """References stay as written, unset properties take their default or null, dynamic flagged."""
    processors = by_name(sample().to_nifi())
    get = processors["get"]
    assert get["type"] == "org.apache.nifi.processors.standard.GetFile"
    assert get["bundle"] == {
        "group": "org.apache.nifi",
        "artifact": "nifi-standard-nar",
        "version": "2.0.0",
    }
    assert get["properties"]["Input Directory"] == "#{in}"
    assert get["properties"]["Keep Source File"] == "false"
    assert get["properties"]["Path Filter"] is None
    assert get["propertyDescriptors"]["Input Directory"]["dynamic"] is False
    tag = processors["tag"]
    assert tag["properties"]["source"] == "web"
    assert tag["propertyDescriptors"]["source"] == {
        "name": "source",
        "displayName": "source",
        "identifiesControllerService": False,
        "sensitive": False,
        "dynamic": True,
    }


def test_processor_settings_use_nifis_names_and_defaults() -> None:
    """Schedule, tasks, state, retry and durations, with NiFi's defaults where flowcore has none."""
    processors = by_name(sample().to_nifi())
    assert processors["get"]["schedulingPeriod"] == "1 min"
    assert processors["split"]["concurrentlySchedulableTaskCount"] == 2
    assert processors["split"]["autoTerminatedRelationships"] == ["failure", "original"]
    assert processors["route"]["scheduledState"] == "DISABLED"
    assert processors["get"]["scheduledState"] == "ENABLED"
    assert processors["put"]["comments"] == "the end"
    assert processors["get"]["penaltyDuration"] == "30 sec"
    assert processors["get"]["yieldDuration"] == "1 sec"
    tag = processors["tag"]
    assert (tag["retryCount"], tag["retriedRelationships"]) == (3, ["success"])
    assert tag["backoffMechanism"] == "YIELD_PROCESSOR"
    assert processors["get"]["retryCount"] == 10


def test_update_attribute_rules_go_to_annotation_data() -> None:
    """Advanced rules become NiFi's criteria XML, which reads back to the same rules."""
    processors = by_name(sample().to_nifi())
    rules, policy = criteria_from_xml(processors["tag"]["annotationData"])
    assert rules == (Rule("big", ["${fileSize:gt(9)}"], {"size": "big"}),)
    assert policy == "USE_CLONE"
    assert "annotationData" not in processors["split"]


def test_connections_carry_ends_relationships_and_queue_settings() -> None:
    """Ends name id, type and group; funnels' exits are NiFi's anonymous relationship."""
    document = sample().to_nifi()
    group_id = document["flowContents"]["identifier"]
    connections = {
        c["name"] or c["source"]["name"] + ">" + c["destination"]["name"]: c
        for c in document["flowContents"]["connections"]
    }
    route_out = connections["route>join"]
    assert route_out["selectedRelationships"] == ["big", "unmatched"]
    assert route_out["destination"]["type"] == "FUNNEL"
    assert route_out["destination"]["groupId"] == group_id
    assert connections["join>put"]["selectedRelationships"] == [""]
    split_out = connections["split>tag"]
    assert split_out["prioritizers"] == [
        "org.apache.nifi.prioritizer.OldestFlowFileFirstPrioritizer"
    ]
    assert split_out["backPressureObjectThreshold"] == 10_000
    assert split_out["backPressureDataSizeThreshold"] == "1 GB"
    assert connections["tagged"]["flowFileExpiration"] == "1 min"
    assert connections["put>put"]["bends"]  # a loop stands out of its box
    funnels = by_name(document, "funnels")
    assert funnels["join"]["componentType"] == "FUNNEL"


def test_parameter_contexts_by_name_with_inheritance_and_no_secrets() -> None:
    """The flow's context and the one it inherits, by name; a sensitive value is null."""
    document = sample().to_nifi()
    assert document["flowContents"]["parameterContextName"] == "sample"
    contexts = document["parameterContexts"]
    assert list(contexts) == ["sample", "base"]
    assert contexts["sample"]["inheritedParameterContexts"] == ["base"]
    token = next(p for p in contexts["sample"]["parameters"] if p["name"] == "token")
    assert token == {
        "name": "token",
        "description": "",
        "sensitive": True,
        "provided": False,
        "value": None,
    }
    assert contexts["base"]["description"] == "shared"


def test_flow_without_parameters_has_no_context() -> None:
    """NiFi's download of a group without a context has none."""
    flow = Flow("bare")
    flow.add(SplitText(line_split_count=1), name="split")
    document = flow.to_nifi()
    assert document["parameterContexts"] == {}
    assert "parameterContextName" not in document["flowContents"]


class Secretive(SplitText):
    """SplitText with a sensitive property, to see export leave a literal secret out."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    property_descriptors = (*SplitText.property_descriptors, PASSWORD)
    relationships = (SUCCESS,)


def test_what_nifi_cannot_hold_is_noted() -> None:
    """flowcore's own processors, durable queues, literal secrets, values from the environment."""
    context = ParameterContext("notes", parameters=[Parameter("home", value_from_env="HOME")])
    flow = Flow("notes", parameters=context)
    split = flow.add(FileSplitter(input_directory="in"), name="blocks")
    secret = flow.add(Secretive(line_split_count=1, password="hunter2"), name="secret")
    flow.connect(split, secret, durable=True)
    exported = export_flow(flow)
    notes = " ".join(exported.notes)
    assert "FileSplitter 'blocks' is flowcore's own processor" in notes
    assert "durable=True" in notes
    assert "sensitive property 'Password'" in notes
    assert "environment variable HOME" in notes
    processors = by_name(exported.document)
    assert processors["blocks"]["bundle"] == FLOWCORE_BUNDLE.to_json()
    assert processors["secret"]["properties"]["Password"] is None
    assert "hunter2" not in json.dumps(exported.document)
    assert exported.document["flowContents"]["comments"].startswith("Exported by flowcore.")


def test_plugin_processors_export_under_flowcores_bundle() -> None:
    """A processor NiFi does not know is named under flowcore's package, with a note."""
    flow = Flow("plugin")
    flow.add(Local(), name="mine")
    exported = export_flow(flow)
    assert by_name(exported.document)["mine"]["type"] == "io.flowcore.processors.Local"
    assert exported.notes


def test_ids_are_javas_name_based_uuids() -> None:
    """versioned_id is Java's UUID.nameUUIDFromBytes, as NiFi derives versioned ids."""
    assert versioned_id("test") == "098f6bcd-4621-3373-8ade-4e832627b4f6"


def test_a_map_cache_service_exports_as_nifis_client_and_server() -> None:
    """A MapCacheService becomes NiFi's map cache client (which DetectDuplicate names by
    identifier) and server, paired by port, sized as the service; read back, the flow is the
    same."""
    from flowcore.services import MapCacheService
    from processors import DetectDuplicate, LogAttribute

    flow = Flow("dedupe")
    flow.add_service(MapCacheService("seen", maximum_cache_entries=500, eviction_strategy="LRU"))
    flow.add_service(MapCacheService("other"))
    detect = flow.add(
        DetectDuplicate(distributed_cache_service="seen", cache_entry_identifier="${key}"),
        name="detect",
    )
    log = flow.add(LogAttribute(), name="log")
    flow.connect(detect, log, ["duplicate", "non-duplicate"])
    flow.auto_terminate(detect, "failure")
    flow.auto_terminate(log, "success")
    document = flow.to_nifi()
    assert schema_problems(document) == []
    services = {s["name"]: s for s in document["flowContents"]["controllerServices"]}
    client, server = services["seen"], services["seen server"]
    assert client["type"] == "org.apache.nifi.distributed.cache.client.MapCacheClientService"
    assert server["type"] == "org.apache.nifi.distributed.cache.server.map.MapCacheServer"
    assert client["properties"]["Server Port"] == server["properties"]["Port"]
    assert services["other"]["properties"]["Server Port"] != client["properties"]["Server Port"]
    assert server["properties"]["Maximum Cache Entries"] == "500"
    assert server["properties"]["Eviction Strategy"] == "Least Recently Used"
    processor = by_name(document)["detect"]
    assert processor["properties"]["Distributed Cache Service"] == client["identifier"]
    assert processor["propertyDescriptors"]["Distributed Cache Service"][
        "identifiesControllerService"
    ]
    again = Flow.from_nifi(json.loads(json.dumps(document)))
    assert again.same_as(flow), again.describe_structure()


def test_flowcore_only_properties_stay_out_of_nifis_processors() -> None:
    """MergeContent's Zero Copy is flowcore's: NiFi would refuse a processor carrying it, so the
    export leaves it out, with a note when it was set."""
    from flowcore.nifi.exporting import export_flow
    from processors import MergeContent

    flow = Flow("merge")
    plain = flow.add(MergeContent(), name="plain")
    ropes = flow.add(MergeContent(zero_copy="true"), name="ropes")
    for merge in (plain, ropes):
        flow.auto_terminate(merge, ["merged", "original", "failure"])
    exported = export_flow(flow, use_graphviz=False)
    processors = by_name(exported.document)
    assert "Zero Copy" not in processors["plain"]["properties"]
    assert "Zero Copy" not in processors["ropes"]["propertyDescriptors"]
    assert [n for n in exported.notes if "Zero Copy" in n and "ropes" in n]
    assert not [n for n in exported.notes if "plain" in n]


def test_flowcore_only_properties_stay_out_of_nifis_services(tmp_path: Any) -> None:
    """StandardFileResourceService's Base Directory is flowcore's: left out of the export, noted."""
    from processors.file_resource import StandardFileResourceService

    flow = Flow("files")
    flow.add_service(StandardFileResourceService("plain"))
    flow.add_service(StandardFileResourceService("confined", base_directory=str(tmp_path)))
    exported = export_flow(flow, use_graphviz=False)
    services = {s["name"]: s for s in exported.document["flowContents"]["controllerServices"]}
    for name in ("plain", "confined"):
        assert "Base Directory" not in services[name]["properties"]
        assert "Base Directory" not in services[name]["propertyDescriptors"]
    assert [n for n in exported.notes if "'Base Directory' of service 'confined'" in n]
    assert not [n for n in exported.notes if "'plain'" in n]


def test_allowed_values_are_written_as_nifi_stores_them() -> None:
    """A value given by the name NiFi shows (ListFile's "Tracking Timestamps") is exported as
    the value NiFi stores and validates ("timestamps")."""
    from processors import ListFile

    flow = Flow("list")
    listing = flow.add(
        ListFile(input_directory="/tmp", listing_strategy="Tracking Timestamps"), name="list"
    )
    flow.auto_terminate(listing, "success")
    assert by_name(flow.to_nifi())["list"]["properties"]["listing-strategy"] == "timestamps"


def test_any_service_exports_under_its_nifi_type_without_its_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registered service is written with its NiFi type, bundle and properties by NiFi's
    names; a service it names is named by identifier; a sensitive value is left out (noted);
    read back, the flow is the same."""
    monkeypatch.setitem(BUILTIN_SERVICES, "KeyValueLookup", KeyValueLookup)
    flow = Flow("lookups")
    back = flow.add_service(KeyValueLookup("back", token="hunter2", b="2"))
    front = flow.add_service(KeyValueLookup("front", fallback_lookup=back, a="1"))
    user = flow.add(LookupUser(lookup_service=front), name="user")
    flow.auto_terminate(user, "success")
    exported = export_flow(flow)
    document = exported.document
    assert schema_problems(document) == []
    assert "hunter2" not in json.dumps(document)
    assert any("'Token' of service 'back' is left out" in note for note in exported.notes)
    services = {s["name"]: s for s in document["flowContents"]["controllerServices"]}
    assert services["front"]["type"] == "org.apache.nifi.lookup.SimpleKeyValueLookupService"
    assert services["front"]["bundle"]["artifact"] == "nifi-lookup-services-nar"
    assert services["front"]["properties"] == {
        "Fallback Lookup": services["back"]["identifier"],
        "Token": None,
        "a": "1",
    }
    assert services["front"]["controllerServiceApis"][0]["type"] == (
        "org.apache.nifi.lookup.StringLookupService"
    )
    assert (
        by_name(document)["user"]["properties"]["Lookup Service"]
        == (services["front"]["identifier"])
    )
    again = Flow.from_nifi(json.loads(json.dumps(document)), type_map={"LookupUser": LookupUser})
    assert again.same_as(flow), again.describe_structure()
    assert again.services["front"].raw_configured == {"Fallback Lookup": "back", "a": "1"}
    rewritten = export_flow(again).document["flowContents"]["controllerServices"]
    assert {s["name"]: s["identifier"] for s in rewritten} == {  # NiFi's ids kept
        name: s["identifier"] for name, s in services.items()
    }
