"""Tests for flowcore.nifi.components: one NiFi processor made a configured flowcore one."""

from __future__ import annotations

from typing import Any

from _nifi_json import UPDATE_ATTRIBUTE, SignContent, processor

from flowcore.definition.component_settings import BackoffMechanism, SchedulingStrategy
from flowcore.definition.flow import FlowDefinition
from flowcore.nifi.components import (
    ProcessorMaker,
    processor_class,
    referenced_services,
    settings_of,
)
from flowcore.nifi.findings import Findings
from flowcore.nifi.groups import Node, NodeKind
from flowcore.nifi.services import ServiceMapping, ServiceUse
from flowcore.registry import available_processors
from processors import GenerateFlowFile, LogAttribute, UpdateAttribute

REGISTRY = available_processors()


def _node(data: dict[str, Any], name: str = "G/P") -> Node:
    return Node(("top", data["identifier"]), NodeKind.PROCESSOR, name, data)


def _maker(
    findings: Findings,
    services: dict | None = None,
    external: dict | None = None,
    mappings: dict | None = None,
    type_map: dict | None = None,
) -> ProcessorMaker:
    flow = FlowDefinition("f")
    extra = {} if mappings is None else {"mappings": mappings}
    return ProcessorMaker(
        flow, findings, type_map or {}, REGISTRY, services or {}, external or {}, **extra
    )


def test_types_resolve_through_the_type_map_then_the_registry() -> None:
    """The user's map wins (full or simple name); NiFi's classes find flowcore's processors."""
    standard = "org.apache.nifi.processors.standard.GenerateFlowFile"
    assert processor_class(standard, {}, REGISTRY) is GenerateFlowFile
    assert processor_class(UPDATE_ATTRIBUTE, {}, REGISTRY) is UpdateAttribute
    assert processor_class("io.flowcore.processors.FileSplitter", {}, REGISTRY).__name__ == (
        "FileSplitter"
    )
    assert processor_class("com.example.SignContent", {"SignContent": SignContent}, REGISTRY) is (
        SignContent
    )
    assert processor_class(standard, {standard: LogAttribute}, REGISTRY) is LogAttribute
    assert (
        processor_class("org.apache.nifi.processors.standard.ListDatabaseTables", {}, REGISTRY)
        is None
    )


def test_a_nifi_name_in_another_package_is_another_class() -> None:
    """com.acme.SplitText is not NiFi's SplitText: only the type map can take it."""
    assert processor_class("com.acme.SplitText", {}, REGISTRY) is None


def test_a_processor_under_the_class_name_nifi_gave_it_before_is_that_processor() -> None:
    """NiFi 1.x's JoltTransformJSON lived in the standard NAR's package: it is NiFi 2's."""
    from processors import JoltTransformJSON

    for name in (
        "org.apache.nifi.processors.standard.JoltTransformJSON",
        "org.apache.nifi.processors.jolt.JoltTransformJSON",
    ):
        assert processor_class(name, {}, REGISTRY) is JoltTransformJSON
    assert processor_class("com.acme.JoltTransformJSON", {}, REGISTRY) is None


def test_a_processor_without_a_type_is_a_problem_not_a_missing_type() -> None:
    """No 'type' field: one problem naming the processor, never a type_map hint for '(no type)'."""
    findings = Findings()
    data = processor("p", "P", "GenerateFlowFile")
    del data["type"]
    assert _maker(findings).make(_node(data)) is None
    assert findings.processor_types == {}
    assert [str(p) for p in findings.all_problems()] == [str(p) for p in findings.problems]
    assert "has no type in the flow definition" in str(findings.problems[0])


def test_properties_are_set_null_ones_left_unset() -> None:
    """Declared properties are set by NiFi's name; null leaves the default."""
    findings = Findings()
    data = processor("p", "P", "GenerateFlowFile", {"Batch Size": "3", "Mime Type": None})
    made = _maker(findings).make(_node(data))
    assert findings.problems == []
    assert made.configured == {"Batch Size": "3"}


def test_renamed_1x_properties_are_migrated_not_made_dynamic() -> None:
    """In a 1.x file (no dynamic flags) a renamed property is migrated; others are dynamic."""
    findings = Findings()
    data = processor(
        "u",
        "U",
        "UpdateAttribute",
        {"canonical-value-lookup-cache-size": "50", "kind": "plain"},
        descriptors={
            "canonical-value-lookup-cache-size": {"name": "canonical-value-lookup-cache-size"},
            "kind": {"name": "kind"},
        },
    )
    made = _maker(findings).make(_node(data))
    assert made.dynamic_properties == {"kind": "plain"}
    assert made.effective_value(UpdateAttribute.CANONICAL_VALUE_LOOKUP_CACHE_SIZE) == "50"


def test_a_2x_non_dynamic_property_flowcore_lacks_is_a_problem() -> None:
    """With dynamic: false, a property the processor does not declare is never made dynamic."""
    findings = Findings()
    data = processor(
        "u", "U", "UpdateAttribute", {"Brand New": "1"},
        descriptors={"Brand New": {"name": "Brand New", "dynamic": False}},
    )  # fmt: skip
    assert _maker(findings).make(_node(data)) is None
    [problem] = findings.problems
    assert problem.subject == "G/P"
    assert "sets property 'Brand New', which flowcore's UpdateAttribute does not have" in (
        problem.problem
    )


def test_a_dynamic_property_on_a_processor_without_them_is_a_problem() -> None:
    """dynamic: true on a processor that takes none is reported, naming the processor."""
    findings = Findings()
    data = processor(
        "s", "S", "SplitText", {"Line Split Count": "1", "extra": "x"},
        descriptors={"extra": {"name": "extra", "dynamic": True}},
    )  # fmt: skip
    assert _maker(findings).make(_node(data)) is None
    assert "takes no dynamic properties" in findings.problems[0].problem


def test_an_encrypted_value_is_a_problem() -> None:
    """A value encrypted with an instance's key cannot be read: reported with the fix."""
    findings = Findings()
    data = processor("s", "S", SignContent.__module__ + ".SignContent", {"Signing Key": "enc{AB}"})
    maker = _maker(findings, type_map={"SignContent": SignContent})
    assert maker.make(_node(data)) is None
    assert "encrypted" in findings.problems[0].problem
    assert "--parameter-env" in findings.problems[0].fix


def test_update_attribute_takes_its_advanced_rules() -> None:
    """annotationData becomes UpdateAttribute's rules and FlowFile policy."""
    xml = (
        "<criteria><flowFilePolicy>USE_ORIGINAL</flowFilePolicy><rules><name>r</name>"
        "<actions><attribute>a</attribute><value>1</value></actions></rules></criteria>"
    )
    findings = Findings()
    data = processor("u", "U", "UpdateAttribute", {}, annotationData=xml)
    made = _maker(findings).make(_node(data))
    assert made.flowfile_policy == "USE_ORIGINAL"
    assert [(r.name, dict(r.actions)) for r in made.rules] == [("r", {"a": "1"})]


def test_a_type_map_entry_that_is_no_processor_is_a_problem() -> None:
    """Mapping a type to something that is not a Processor class is reported."""
    findings = Findings()
    maker = _maker(findings, type_map={"Zap": dict})
    assert maker.make(_node(processor("z", "Z", "com.acme.Zap"))) is None
    assert "not a flowcore Processor class" in findings.problems[0].problem


SERVICE = {
    "identifier": "svc-1",
    "name": "Cache client",
    "type": "org.apache.nifi.distributed.cache.client.MapCacheClientService",
    "properties": {"Server Hostname": "localhost"},
}


def _log_using(service_id: str, kind: str = "LogAttribute") -> dict[str, Any]:
    return processor(
        "l", "L", kind, {"Cache": service_id},
        descriptors={"Cache": {"name": "Cache", "identifiesControllerService": True}},
    )  # fmt: skip


def test_a_service_not_wired_yet_is_reported_with_what_it_waits_for() -> None:
    """A known service type without a provider is reported, naming what it waits for."""
    findings = Findings()
    pending = {"MapCacheClientService": ServiceMapping("a cache", waits_for="the cache")}
    maker = _maker(findings, services={"svc-1": ("G", SERVICE)}, mappings=pending)
    maker.make(_node(_log_using("svc-1")))
    why, users = findings.service_types[SERVICE["type"]]
    assert why == "a cache stands in for it once the cache land"
    assert users == ["'Cache client' (used by 'G/P')"]
    assert maker.used == {"svc-1"}


def test_an_unknown_service_type_is_reported() -> None:
    """A service type with no mapping is unsupported, with the processor using it."""
    findings = Findings()
    other = {**SERVICE, "type": "com.acme.ConnectionPool"}
    _maker(findings, services={"svc-1": ("", other)}).make(_node(_log_using("svc-1")))
    assert findings.service_types["com.acme.ConnectionPool"][0] == "flowcore has no equivalent"


def test_a_service_type_is_reported_once_for_all_its_users() -> None:
    """A service the import reported already, or the maker did for an earlier user, is not
    reported again."""
    findings = Findings()
    other = {**SERVICE, "type": "com.acme.ConnectionPool"}
    maker = _maker(findings, services={"svc-1": ("", other), "svc-2": ("", other)})
    maker.reported.add("svc-1")
    maker.make(_node(_log_using("svc-1")))
    assert findings.service_types == {}
    maker.make(_node(_log_using("svc-2"), "A"))
    maker.make(_node(_log_using("svc-2"), "B"))
    assert findings.service_types["com.acme.ConnectionPool"][1] == ["'Cache client' (used by 'A')"]
    assert maker.reported == {"svc-1", "svc-2"}


def test_services_are_named_by_identifier_with_or_without_a_descriptor() -> None:
    """A property holding a held service's identifier names it; other values do not."""
    data = processor("p", "P", "LogAttribute", {"A": "svc-1", "B": "svc-9", "C": None, "D": "x"})
    assert referenced_services(data, {"svc-1": SERVICE, "x2": SERVICE}) == {"A": "svc-1"}


def test_a_service_outside_the_flow_is_reported_by_name() -> None:
    """A reference to an external service names it and says where it lives."""
    findings = Findings()
    external = {"svc-9": {"identifier": "svc-9", "name": "Shared pool"}}
    _maker(findings, external=external).make(_node(_log_using("svc-9")))
    assert "names controller service 'Shared pool'" in findings.problems[0].problem


def test_a_wired_service_gives_the_property_what_provide_returns() -> None:
    """A mapping with provide declares its stand-in once and the property takes its value."""
    calls: list[ServiceUse] = []

    def provide(flow: FlowDefinition, use: ServiceUse) -> str:
        calls.append(use)
        return "local-cache"

    findings = Findings()
    maker = _maker(
        findings,
        services={"svc-1": ("G", SERVICE)},
        mappings={"MapCacheClientService": ServiceMapping("a test cache", provide)},
    )
    first = maker.make(_node(_log_using("svc-1", "UpdateAttribute")))
    second = maker.make(_node(_log_using("svc-1", "UpdateAttribute"), "G/Q"))
    assert first.dynamic_properties == second.dynamic_properties == {"Cache": "local-cache"}
    assert [(c.name, c.users) for c in calls] == [("G/Cache client", ("G/P",))]
    assert findings.problems == []


def test_settings_read_nifis_scheduling_retry_and_state() -> None:
    """Run schedule, tasks, penalty/yield (defaults left to the engine), retry, disabled."""
    findings = Findings()
    data = processor(
        "p", "P", "LogAttribute",
        schedulingPeriod="5 sec", concurrentlySchedulableTaskCount=3, penaltyDuration="30 sec",
        yieldDuration="2 sec", scheduledState="DISABLED", retryCount=4,
        retriedRelationships=["success"], backoffMechanism="YIELD_PROCESSOR",
        maxBackoffPeriod="1 min", comments="hi",
    )  # fmt: skip
    settings = settings_of(_node(data), findings, stopped_runs=False)
    assert settings is not None
    assert (settings.run_schedule, settings.concurrent_tasks) == ("5 sec", 3)
    assert (settings.penalty_duration, settings.yield_duration) == (None, "2 sec")
    assert settings.disabled
    assert settings.retry is not None
    assert settings.retry.relationships == ("success",)
    assert (settings.retry.count, settings.retry.max_backoff_period) == (4, "1 min")
    assert settings.retry.backoff_mechanism is BackoffMechanism.YIELD_PROCESSOR
    assert settings.comments == "hi"
    assert findings.notes == []


def test_event_driven_cron_and_primary_node_are_read_or_noted() -> None:
    """EVENT_DRIVEN becomes timer driven (noted); CRON is kept; PRIMARY and stopped are noted."""
    findings = Findings()
    event = processor("e", "E", "LogAttribute", schedulingStrategy="EVENT_DRIVEN")
    cron = processor(
        "c", "C", "GenerateFlowFile", schedulingStrategy="CRON_DRIVEN",
        schedulingPeriod="0 0 * * * ?", executionNode="PRIMARY",
    )  # fmt: skip
    timer = settings_of(_node(event), findings, stopped_runs=False)
    cron_settings = settings_of(_node(cron), findings, stopped_runs=True)
    assert timer is not None
    assert timer.scheduling_strategy is SchedulingStrategy.TIMER_DRIVEN
    assert cron_settings is not None
    assert cron_settings.scheduling_strategy is SchedulingStrategy.CRON_DRIVEN
    assert cron_settings.run_schedule == "0 0 * * * ?"
    notes = [n.note for n in findings.notes]
    assert "EVENT_DRIVEN is TIMER_DRIVEN" in notes[0]
    assert "stopped in the NiFi instance" in notes[1]
    assert "primary node" in notes[2]


def test_an_unknown_strategy_is_a_problem() -> None:
    """A scheduling strategy flowcore does not know is reported, naming the processor."""
    findings = Findings()
    data = processor("p", "P", "LogAttribute", schedulingStrategy="WHENEVER")
    assert settings_of(_node(data), findings, stopped_runs=False) is None
    assert "WHENEVER" in findings.problems[0].problem
