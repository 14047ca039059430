"""Tests for flowcore.nifi.importing: NiFi's sample flows imported, validated and run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _nifi_json import (
    KeyValueLookup,
    LookupUser,
    SignContent,
    connection,
    download,
    generate_to_log,
    group,
    lookup_service,
    missing_types,
    port,
    processor,
)
from flow_strategies import flows
from hypothesis import given

from flowcore.builder import Flow
from flowcore.definition.component_settings import (
    BackoffMechanism,
    LoadBalanceStrategy,
    Prioritizer,
)
from flowcore.definition.flow import ComponentKind
from flowcore.errors import FlowValidationError, NiFiImportError
from flowcore.nifi.formats import FlowShape
from flowcore.nifi.importing import import_nifi
from flowcore.parameters import Parameter
from flowcore.registry import BUILTIN_SERVICES

TYPES = {"com.example.nifi.SignContent": SignContent}


def _greetings(samples: Path, out: Path, **extra: Any) -> Flow:
    parameters = {
        "output.dir": str(out),
        "signing.key": Parameter("signing.key", sensitive=True, value_from_env="TEST_SIGNING_KEY"),
        **extra,
    }
    return Flow.from_nifi(samples / "download-2x.json", parameters=parameters, type_map=TYPES)


def test_a_2x_download_with_nested_groups_runs_end_to_end(
    samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generate -> Ingest (split, Tagging/Tag with Advanced rules) -> route -> sign -> merge ->
    put: the short lines arrive merged, the long one left through the top port and was dropped."""
    monkeypatch.setenv("TEST_SIGNING_KEY", "s3cret")
    flow = _greetings(samples, tmp_path / "out")
    flow.validate()
    result = flow.run("direct", repository=tmp_path / "repo")
    [written] = (tmp_path / "out").iterdir()
    assert written.read_text() == "hello one\nhello two"
    assert result.transfers["Route"] == {"short": (2, 18), "unmatched": (1, 11)}
    assert result.transfers["Ingest/Tagging/Tag"]["success"][0] == 3


def test_the_2x_download_keeps_names_ids_queues_and_terminations(samples: Path) -> None:
    """Group paths prefix names, ports and funnels are funnels, NiFi's ids are the ids, only
    non-default queue settings are set, and the top output port's FlowFiles are dropped."""
    imported = import_nifi(samples / "download-2x.json", type_map=TYPES, into=Flow)
    flow = imported.flow
    assert imported.shape is FlowShape.DOWNLOAD
    funnels = sorted(c.name for c in flow.components if c.kind is ComponentKind.FUNNEL)
    assert funnels == [
        "Ingest/Tagging/raw", "Ingest/Tagging/tagged", "Ingest/funnel", "Ingest/in", "Ingest/out",
    ]  # fmt: skip
    document = json.loads((samples / "download-2x.json").read_text())
    split = flow.component("Ingest/Split lines")
    nested = document["flowContents"]["processGroups"][0]["processors"][0]
    assert split.id == nested["identifier"]
    durable = {flow.describe(c): c.settings for c in flow.connections if c.settings is not None}
    assert set(durable) == {"Ingest/out -[success]-> Route", "Sign -[success]-> Merge"}
    assert durable["Ingest/out -[success]-> Route"].back_pressure_object_threshold == 5000
    assert durable["Sign -[success]-> Merge"].prioritizers == (Prioritizer.FIRST_IN_FIRST_OUT,)
    assert [c.name for c in flow.connections if c.name] == ["to merge"]
    assert flow.auto_terminated(flow.component("Route")) == {"unmatched"}
    assert flow.auto_terminated(split) == {"original", "failure"}
    tag = flow.resolved_processor(flow.component("Ingest/Tagging/Tag"))
    assert tag.dynamic_properties == {"source": "web"}
    assert [r.name for r in tag.rules] == ["short lines"]
    assert flow.component("Make text").processor.dynamic_properties == {"origin": "nifi"}
    flattened, note = imported.notes
    assert flattened.subject == "process groups 'Ingest', 'Ingest/Tagging'"
    assert "flattened" in flattened.note
    assert note.subject == "output port 'to parent'"


def test_every_unsupported_type_is_reported_at_once(samples: Path) -> None:
    """Without a type map, one error lists each unknown type with every component using it."""
    document = json.loads((samples / "download-2x.json").read_text())
    ingest = document["flowContents"]["processGroups"][0]
    ingest["processors"].append(
        processor("http", "Call API", "ListDatabaseTables", group=ingest["identifier"])
    )
    document["flowContents"]["processors"].append(
        processor("http2", "Call again", "ListDatabaseTables")
    )
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(document)
    lines = str(raised.value).splitlines()
    assert lines[0] == "NiFi flow 'Greetings' (<dict>) cannot run in flowcore (2 problems):"
    assert (
        "com.example.nifi.SignContent: flowcore has no such processor; used by 1 processor: "
        "'Sign'; map it" in lines[1]
    )
    assert (
        "ListDatabaseTables: flowcore has no such processor; used by 2 processors: 'Call again', "
        "'Ingest/Call API'; map it" in (lines[2])
    )
    assert "type_map={'ListDatabaseTables': YourProcessor}" in lines[2]


def test_a_registry_flow_file_runs_end_to_end(samples: Path, tmp_path: Path) -> None:
    """A version as NiFi Registry stores it on disk imports as its snapshot would: the nested
    group flattened, the bound context's parameters used, the order written."""
    out = tmp_path / "out"
    imported = import_nifi(
        samples / "registry-file.snapshot", parameters={"output.dir": str(out)}, into=Flow
    )
    assert imported.shape is FlowShape.REGISTRY_FILE
    flow = imported.flow
    assert flow.name == "Orders"
    names = sorted(c.name for c in flow.components)
    assert names == ["Make order", "Store/Write", "Store/orders in"]
    flow.validate()
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Store/Write"]["success"][0] == 2
    assert sorted(p.read_text() for p in out.iterdir()) == ["order 1", "order 1"]


_SERVICE_FIX = (
    "write a ControllerService for it and register it under the entry point group "
    "'flowcore.services' (docs/services.md), or replace what uses it in NiFi"
)


def test_every_missing_processor_and_service_type_is_in_the_first_error() -> None:
    """Service types come with the processor types, also where only a processor of a missing
    type names the service: each type once, with its count, its components by group path, and
    the fix."""
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(missing_types())
    lines = str(raised.value).splitlines()
    assert lines == [
        "NiFi flow 'Top' (<dict>) cannot run in flowcore (4 problems):",
        "  - processor type org.apache.nifi.processors.standard.CountText: flowcore has no "
        "such processor; used by 1 processor: 'Convert'; map it to a processor class with "
        "type_map={'CountText': YourProcessor} (flowcore run, explain or convert "
        "--type-map MODULE:DICT), or replace it in NiFi",
        "  - processor type org.apache.nifi.processors.standard.ListDatabaseTables: flowcore "
        "has no such processor; used by 2 processors: 'Ingest/Query', 'Ingest/Query 2'; map it "
        "to a processor class with type_map={'ListDatabaseTables': YourProcessor} (flowcore "
        "run, explain or convert --type-map MODULE:DICT), or replace it in NiFi",
        "  - controller service type org.apache.nifi.cef.CEFReader: flowcore has no "
        "equivalent; "
        f"1 service: 'CSV reader' (used by 'Convert', 'Log'); {_SERVICE_FIX}",
        "  - controller service type org.apache.nifi.dbcp.HikariCPConnectionPool: flowcore has no "
        "equivalent; 1 service: 'Ingest/Pool' (used by 'Ingest/Query', 'Ingest/Query 2'); "
        f"{_SERVICE_FIX}",
    ]
    assert len(raised.value.problems) == 4


def test_mapped_processors_leave_each_missing_service_reported_once() -> None:
    """With the processor types mapped, the same service problems remain, each service once
    with all its users (making the processors reports none again)."""
    types = {"CountText": SignContent, "ListDatabaseTables": SignContent}
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(missing_types(), type_map=types)
    lines = str(raised.value).splitlines()
    assert lines[0] == "NiFi flow 'Top' (<dict>) cannot run in flowcore (2 problems):"
    assert "1 service: 'CSV reader' (used by 'Convert', 'Log');" in lines[1]
    assert "1 service: 'Ingest/Pool' (used by 'Ingest/Query', 'Ingest/Query 2');" in lines[2]


def test_a_sensitive_parameter_must_come_from_the_user(samples: Path, tmp_path: Path) -> None:
    """An export holds no sensitive value: validation names the parameter until it is given."""
    flow = Flow.from_nifi(
        samples / "download-2x.json", parameters={"output.dir": str(tmp_path)}, type_map=TYPES
    )
    with pytest.raises(FlowValidationError, match=r"parameter 'signing.key': has no value"):
        flow.validate()


def test_a_1x_download_migrates_its_properties_and_runs(samples: Path, tmp_path: Path) -> None:
    """1.x names (generate-ff-custom-text, canonical-value-lookup-cache-size) are migrated, not
    made attributes; undeclared names are dynamic; retry settings are kept; it runs."""
    flow = Flow.from_nifi(samples / "download-1x.json", parameters={"output.dir": str(tmp_path)})
    flow.validate()
    tag = flow.resolved_processor(flow.component("Tag"))
    assert tag.dynamic_properties == {"greeting.kind": "plain", "written.by": "nifi-1"}
    assert flow.component("Make text").processor.dynamic_properties == {}
    assert flow.component("Make text").processor.configured["Custom Text"] == "a line\n"
    retry = flow.component("Write").retry
    assert retry is not None
    assert (retry.relationships, retry.count) == (("failure",), 3)
    assert all(c.settings is None for c in flow.connections[:3])
    assert [str(n) for n in flow.notes] == [
        "Tag: scheduling strategy EVENT_DRIVEN is TIMER_DRIVEN at '0 sec' in flowcore (as NiFi 2 "
        "migrates it): the processor runs whenever FlowFiles are queued for it"
    ]
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Write"]["success"] == (2, 14)
    assert sorted(p.read_text() for p in tmp_path.glob("*-*")) == ["a line\n", "a line\n"]


def test_a_registry_snapshot_keeps_every_scheduling_and_queue_setting(samples: Path) -> None:
    """Disabled state, retry with its back-off, penalty and yield, tasks, queue settings and load
    balancing (noted) come through; the flow validates."""
    flow = Flow.from_nifi(samples / "registry-snapshot.json")
    flow.validate()
    audit = flow.component("Audit")
    assert audit.disabled
    assert (audit.penalty_duration, audit.yield_duration) == ("45 sec", "2 sec")
    assert audit.retry is not None
    assert audit.retry.backoff_mechanism is BackoffMechanism.YIELD_PROCESSOR
    assert audit.comments == "kept off until audit is approved"
    assert flow.resolved_processor(audit).configured["Log prefix"] == "audit: "
    poll = flow.component("Poll")
    assert (poll.concurrent_tasks, poll.run_schedule) == (2, "30 sec")
    queue = flow.connections[0]
    assert queue.settings is not None
    assert queue.settings.back_pressure_object_threshold == 2000
    assert queue.settings.back_pressure_data_size_threshold == "10 MB"
    assert queue.settings.flowfile_expiration == "5 mins"
    assert queue.settings.prioritizers == (Prioritizer.OLDEST_FLOWFILE_FIRST,)
    assert queue.load_balance_strategy is LoadBalanceStrategy.ROUND_ROBIN
    assert [n.subject for n in flow.notes] == ["Poll", "connection Poll -> Audit"]


@pytest.mark.spark
def test_an_instance_flow_runs_on_spark(samples: Path, tmp_path: Path) -> None:
    """flow.json.gz (no descriptors, contexts as a list, a site-to-site root port) runs on Spark:
    three generated records merged into one file."""
    flow = Flow.from_nifi(samples / "flow.json.gz", parameters={"output.dir": str(tmp_path / "o")})
    flow.validate()
    stamp = flow.resolved_processor(flow.component("Pipeline/Stamp"))
    assert stamp.dynamic_properties == {"stage": "raw"}
    result = flow.run("spark", repository=tmp_path / "repo")
    [written] = (tmp_path / "o").iterdir()
    assert re.fullmatch(r"(id=\d+\n){3}", written.read_text())
    assert result.transfers["Pipeline/Bundle"]["merged"][0] == 1


def test_an_instance_flows_notes_say_what_was_left_out(samples: Path) -> None:
    """The flattened group, the unconnected site-to-site port, the stopped processor and the
    unused service are noted."""
    flow = Flow.from_nifi(samples / "flow.json.gz")
    assert [n.subject for n in flow.notes] == [
        "process group 'Pipeline'",
        "input port 'From edge'",
        "Pipeline/Store",
        "controller service 'Cache server' (MapCacheServer)",
    ]


def test_what_flowcore_cannot_run_is_reported_in_one_error() -> None:
    """1.x variables, a connected remote process group port and a dangling connection: all at
    once."""
    gen = processor("gen", "Generate", "GenerateFlowFile")
    remote = {
        "identifier": "rpg",
        "name": "Edge",
        "targetUris": "https://edge:8443/nifi",
        "inputPorts": [{"identifier": "s2s", "name": "To edge"}],
        "outputPorts": [],
    }
    root = group(
        "top",
        "Old",
        variables={"dir": "/tmp"},
        processors=[gen],
        remoteProcessGroups=[remote],
        connections=[
            connection(
                "c1", ("gen", "PROCESSOR", "top"), ("s2s", "REMOTE_INPUT_PORT", "rpg"), ["success"]
            ),
            connection(
                "c2", ("gen", "PROCESSOR", "top"), ("gone", "PROCESSOR", "top"), ["success"]
            ),
        ],
    )
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(download(root))
    subjects = [p.subject for p in raised.value.problems]
    assert subjects == [
        "process group (top)",
        "remote process group port 'To edge'",
        "connection 'c2' in the top group",
    ]


def test_names_are_made_unique_and_ids_kept(tmp_path: Path) -> None:
    """NiFi allows two components of one name; flowcore numbers the second."""
    document = generate_to_log()
    document["flowContents"]["processors"][1]["name"] = "Generate"
    flow = Flow.from_nifi(document)
    assert [(c.id, c.name) for c in flow.components] == [("gen", "Generate"), ("log", "Generate-2")]
    assert flow.connections[0].id == "c1"


def test_group_settings_without_effect_are_noted() -> None:
    """A group's FlowFile Concurrency is not applied, and a note says so."""
    document = generate_to_log()
    document["flowContents"]["flowFileConcurrency"] = "SINGLE_FLOWFILE_PER_NODE"
    [note] = Flow.from_nifi(document).notes
    assert note.subject == "process group (top)"
    assert "FlowFile Concurrency SINGLE_FLOWFILE_PER_NODE is not applied" in note.note


def test_an_unknown_prioritizer_is_a_problem() -> None:
    """Prioritizers are NiFi's four standard ones; another is reported."""
    document = generate_to_log()
    document["flowContents"]["connections"][0]["prioritizers"] = ["com.acme.RandomPrioritizer"]
    with pytest.raises(NiFiImportError, match="prioritizer RandomPrioritizer"):
        Flow.from_nifi(document)


@given(flows())
def test_a_flow_exported_to_nifi_and_read_back_is_the_same_flow(flow: Flow) -> None:
    """from_nifi(to_nifi(flow)) has the same structure: components, settings, connections,
    terminations, rules and the parameter context (issue 20's round trip)."""
    document = json.loads(json.dumps(flow.to_nifi()))
    back = Flow.from_nifi(document)
    assert back.describe_structure() == flow.describe_structure()


CACHE_CLIENT = {
    "identifier": "client",
    "name": "Dedupe cache",
    "type": "org.apache.nifi.distributed.cache.client.MapCacheClientService",
    "properties": {"Server Hostname": "localhost", "Server Port": "4557"},
}
CACHE_SERVER = {
    "identifier": "server",
    "name": "Cache server",
    "type": "org.apache.nifi.distributed.cache.server.map.MapCacheServer",
    "properties": {
        "Port": "4557",
        "Maximum Cache Entries": "50",
        "Eviction Strategy": "First In, First Out",
    },
}


def test_detect_duplicate_runs_on_a_local_cache_for_nifis_map_cache(tmp_path: Path) -> None:
    """DetectDuplicate's map cache client becomes a local cache sized as its server; three
    FlowFiles of one key give one non-duplicate and two duplicates."""
    gen = processor("gen", "Generate", "GenerateFlowFile", {"Batch Size": "3", "Custom Text": "x"})
    dedupe = processor(
        "dedupe", "Dedupe", "DetectDuplicate",
        {"Cache Entry Identifier": "same", "Distributed Cache Service": "client"},
        descriptors={"Distributed Cache Service": {"name": "Distributed Cache Service",
                                                   "identifiesControllerService": True}},
        autoTerminatedRelationships=["duplicate", "non-duplicate", "failure"],
    )  # fmt: skip
    link = connection(
        "c1", ("gen", "PROCESSOR", "top"), ("dedupe", "PROCESSOR", "top"), ["success"]
    )
    root = group(
        "top", "Dedupe", processors=[gen, dedupe], connections=[link],
        controllerServices=[CACHE_CLIENT, CACHE_SERVER],
    )  # fmt: skip
    flow = Flow.from_nifi(download(root))
    assert flow.notes == ()
    cache = flow.services["Dedupe cache"]
    assert cache.maximum_cache_entries == 50
    assert flow.component("Dedupe").processor.configured["Distributed Cache Service"] == (
        "Dedupe cache"
    )
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Dedupe"] == {"duplicate": (2, 2), "non-duplicate": (1, 1)}


def test_a_disabled_port_holds_flowfiles_before_it(tmp_path: Path) -> None:
    """A port NiFi holds DISABLED becomes a disabled funnel: FlowFiles wait queued before it,
    as they do in NiFi, and the run says so."""
    import gzip

    example = Path(__file__).resolve().parents[3] / "examples" / "nifi_flow.json"
    document = json.loads(example.read_text())
    parse = document["flowContents"]["processGroups"][0]
    parse["outputPorts"][0]["scheduledState"] = "DISABLED"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "o.jsonl.gz").write_bytes(
        gzip.compress(b'{"id": "o-1", "status": "new", "amount": 5}\n')
    )
    directories = {
        "input.directory": str(tmp_path / "in"),
        "output.directory": str(tmp_path / "out"),
    }
    flow = Flow.from_nifi(document, parameters=directories)
    assert flow.component("Parse orders/orders").disabled
    assert not flow.component("Parse orders/lines").disabled
    result = flow.run(runner="direct", repository=tmp_path / "repo")
    assert result.disabled
    assert not (tmp_path / "out").exists()


def _remote_access_ports() -> dict[str, Any]:
    """Ports with remote access: the top group's 'From edge' (nothing feeds it) into Log, its
    'To edge' (no way out) after Generate, and Inner's 'in', fed by Generate, into Inner/Count."""
    gen = processor("gen", "Generate", "GenerateFlowFile", {"Custom Text": "hi"})
    log = processor("log", "Log", "LogAttribute", autoTerminatedRelationships=["success"])
    count = processor("count", "Count", "LogAttribute", group="inner",
                      autoTerminatedRelationships=["success"])  # fmt: skip
    entry = port("from", "From edge", "INPUT_PORT", allowRemoteAccess=True)
    exit_ = port("to", "To edge", "OUTPUT_PORT", allowRemoteAccess=True)
    inner_in = port("in", "in", "INPUT_PORT", group="inner", allowRemoteAccess=True)
    inner = group(
        "inner", "Inner", processors=[count], inputPorts=[inner_in], groupIdentifier="top",
        connections=[connection("c4", ("in", "INPUT_PORT", "inner"),
                                ("count", "PROCESSOR", "inner"), [], group="inner")],
    )  # fmt: skip
    links = [
        connection("c1", ("from", "INPUT_PORT", "top"), ("log", "PROCESSOR", "top"), []),
        connection("c2", ("gen", "PROCESSOR", "top"), ("to", "OUTPUT_PORT", "top"), ["success"]),
        connection("c3", ("gen", "PROCESSOR", "top"), ("in", "INPUT_PORT", "inner"), ["success"]),
    ]
    top = group("top", "Top", processors=[gen, log], inputPorts=[entry], outputPorts=[exit_],
                processGroups=[inner], connections=links)  # fmt: skip
    return download(top)


def test_ports_with_remote_access_run_as_ports_of_their_group(tmp_path: Path) -> None:
    """Nothing reaches 'From edge' (Log is valid and gets nothing), FlowFiles wait before 'To
    edge', Inner's port passes them on; one note per port says site-to-site is not served."""
    flow = Flow.from_nifi(_remote_access_ports())
    remote = {n.subject: n.note for n in flow.notes if "site-to-site" in n.note}
    assert remote == {
        "input port 'From edge'": "allows remote access (site-to-site), which flowcore does not "
        "serve: it runs as a port of its group; nothing else feeds it, so it receives nothing",
        "output port 'To edge'": "allows remote access (site-to-site), which flowcore does not "
        "serve: it runs as a port of its group; FlowFiles reaching it wait queued before it, "
        "durably, as before a funnel with no outgoing connection",
        "input port 'Inner/in'": "allows remote access (site-to-site), which flowcore does not "
        "serve: it runs as a port of its group",
    }
    assert flow.stopped == {}
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Inner/Count"] == {"success": (1, 2)}
    assert "Log" not in result.transfers
    assert result.waiting_before_funnels() == {"To edge": (1, 2)}
    assert result.finished


def _dedupe_in(group_id: str) -> dict[str, Any]:
    return processor(
        f"dedupe-{group_id}", "Dedupe", "DetectDuplicate",
        {"Cache Entry Identifier": "same", "Distributed Cache Service": "client"},
        group=group_id,
        autoTerminatedRelationships=["duplicate", "non-duplicate", "failure"],
    )  # fmt: skip


def test_a_processor_uses_the_services_of_the_groups_above_it() -> None:
    """A service of the top group serves a processor of a child group (NiFi's scope)."""
    child = group("child", "Child", processors=[_dedupe_in("child")], groupIdentifier="top")
    root = group(
        "top", "Top", processGroups=[child], controllerServices=[CACHE_CLIENT, CACHE_SERVER]
    )
    flow = Flow.from_nifi(download(root))
    assert flow.component("Child/Dedupe").processor.configured["Distributed Cache Service"] == (
        "Dedupe cache"
    )


def test_a_service_outside_a_processors_scope_is_a_problem_naming_both() -> None:
    """A processor naming a service of a sibling group fails the import, naming its group."""
    user = group("a", "A", processors=[_dedupe_in("a")], groupIdentifier="top")
    holder = group("b", "B", groupIdentifier="top", controllerServices=[CACHE_CLIENT, CACHE_SERVER])
    with pytest.raises(NiFiImportError) as raised:
        Flow.from_nifi(download(group("top", "Top", processGroups=[user, holder])))
    assert (
        "A/Dedupe: property 'Distributed Cache Service' names controller service 'Dedupe cache' "
        "of process group 'B', which is outside its scope (a component may use the services of "
        "its own group 'A' and the groups above it); move the service to a group above every "
        "component that uses it"
    ) in str(raised.value)


def test_a_registered_service_type_is_imported_with_the_services_it_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A service type registered in flowcore maps by its NiFi type, properties by NiFi's names;
    a service it names is declared too (not noted as unused), the property holding its name."""
    monkeypatch.setitem(BUILTIN_SERVICES, "KeyValueLookup", KeyValueLookup)
    front = lookup_service("front", "Front", {"Fallback Lookup": "back", "a": "#{code}"})
    back = lookup_service("back", "Back", {"b": "2", "Token": None})
    aside = lookup_service("aside", "Aside", {})
    user = processor("user", "User", "com.example.LookupUser", {"Lookup Service": "front"},
                     autoTerminatedRelationships=["success"])  # fmt: skip
    root = group("top", "Top", processors=[user], controllerServices=[front, back, aside])
    flow = Flow.from_nifi(download(root), type_map={"LookupUser": LookupUser})
    assert [str(note) for note in flow.notes] == [
        "controller service 'Aside' (SimpleKeyValueLookupService): is used by no processor: "
        "left out"
    ]
    assert sorted(flow.services) == ["Back", "Front"]
    assert flow.services["Front"].raw_configured == {"Fallback Lookup": "Back", "a": "#{code}"}
    assert flow.component("User").processor.configured["Lookup Service"] == "Front"
    assert flow.service_ids == {"Front": "front", "Back": "back"}  # an export writes them


def test_services_naming_each_other_in_a_cycle_fail_the_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two registered services naming each other are one problem naming the cycle."""
    monkeypatch.setitem(BUILTIN_SERVICES, "KeyValueLookup", KeyValueLookup)
    front = lookup_service("front", "Front", {"Fallback Lookup": "back"})
    back = lookup_service("back", "Back", {"Fallback Lookup": "front"})
    user = processor("user", "User", "com.example.LookupUser", {"Lookup Service": "front"},
                     autoTerminatedRelationships=["success"])  # fmt: skip
    root = group("top", "Top", processors=[user], controllerServices=[front, back])
    with pytest.raises(NiFiImportError, match="name each other in a cycle"):
        Flow.from_nifi(download(root), type_map={"LookupUser": LookupUser})


_PUT_S3 = "org.apache.nifi.processors.aws.s3.PutS3Object"


def _put_s3(properties: dict[str, Any]) -> dict[str, Any]:
    base = {"Bucket": "b", "Region": "us-east-1", "AWS Credentials Provider service": None}
    return processor(
        "p1", "Put", _PUT_S3, {**base, **properties},
        autoTerminatedRelationships=["success", "failure"],
    )  # fmt: skip


def test_a_1x_aws_processors_keys_become_a_credentials_service() -> None:
    """A NiFi 1.x PutS3Object's Access Key / Secret Key become a new
    AWSCredentialsProviderControllerService it names (NiFi 2's migrateProperties), noted."""
    keys = {"Access Key": "AKIA1", "Secret Key": "s3cr3t", "Credentials File": None}
    imported = import_nifi(download(group("top", "Top", processors=[_put_s3(keys)])))
    flow = imported.flow
    (name,) = flow.services
    service = flow.services[name]
    assert type(service).__name__ == "AWSCredentialsProviderControllerService"
    assert service.get_property("Access Key ID").value == "AKIA1"
    assert service.get_property("Secret Key").value == "s3cr3t"
    (put,) = flow.components
    assert put.processor.configured["AWS Credentials Provider service"] == name
    assert "Access Key" not in put.processor.configured
    (note,) = imported.notes
    assert "AWSCredentialsProviderControllerService" in note.note
    assert "(Access Key, Secret Key)" in note.note


def test_a_1x_aws_processor_without_keys_gets_anonymous_credentials() -> None:
    """With neither keys nor a credentials file (1.x's anonymous access), the new service has
    anonymous credentials, as NiFi 2's migration makes it; a 2.x processor is left alone."""
    props = {"Access Key": None, "Secret Key": None}
    imported = import_nifi(download(group("top", "Top", processors=[_put_s3(props)])))
    (service,) = imported.flow.services.values()
    assert service.get_property("anonymous-credentials").value == "true"
    untouched = import_nifi(download(group("top", "Top", processors=[_put_s3({})])))
    assert not untouched.flow.services
