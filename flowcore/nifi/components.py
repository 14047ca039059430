"""One NiFi processor (``VersionedProcessor``) made a configured flowcore processor.

The type is looked up in the user's ``type_map`` (full or simple NiFi name), then in the
processor registry by simple name (flowcore registers NiFi's processors under NiFi's simple
names; :mod:`flowcore.nifi.types` holds the NiFi class each stands for). Properties are set by
NiFi's name, renamed where NiFi renamed them (:mod:`flowcore.nifi.migrations`). A property the
processor does not declare is a dynamic property when the file flags it so (NiFi 2.x), or when
the file does not say (NiFi 1.x, ``flow.json.gz``) and the processor takes dynamic properties;
otherwise it is a problem. Unset properties (``null``) stay unset. Properties naming a
controller service are resolved through :mod:`flowcore.nifi.services`.

The scheduling settings (:class:`Settings`) are read here too, for ``Flow.add``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import attrs

from flowcore.definition.component_settings import (
    DEFAULT_MAX_BACKOFF_PERIOD,
    DEFAULT_RETRY_COUNT,
    DEFAULT_RUN_SCHEDULE,
    RetrySettings,
    SchedulingStrategy,
)
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import FlowcoreError
from flowcore.nifi.criteria import criteria_from_xml
from flowcore.nifi.findings import Findings
from flowcore.nifi.groups import Node
from flowcore.nifi.migrations import is_removed, known_name
from flowcore.nifi.services import SERVICES, ServiceMapping, ServiceUse, unavailable
from flowcore.nifi.types import FLOWCORE_PACKAGE, FORMER_TYPES, NIFI_PROCESSORS, simple_name
from flowcore.processor.base import Processor
from flowcore.units import parse_time_period

__all__ = ["ProcessorMaker", "Settings", "TypeMap", "referenced_services", "settings_of"]

#: The user's processor classes by NiFi type (full or simple name).
TypeMap = Mapping[str, type[Processor]]

#: NiFi's default Penalty and Yield Durations: left to the engine (None) when a flow has them.
_NIFI_PENALTY = "30 sec"
_NIFI_YIELD = "1 sec"
_ENCRYPTED = "enc{"


def referenced_services(data: Mapping[str, Any], held: Mapping[str, Any]) -> dict[str, str]:
    """The services in *held* that the component *data* (its JSON) names: property -> identifier.

    A property names a service by the service's identifier, whether or not a descriptor says
    so (an instance's flow has no descriptors); a reference to a service outside the flow is
    not among these (:meth:`ProcessorMaker.make` reports it).
    """
    found = {}
    for name, value in (data.get("properties") or {}).items():
        if value is not None and str(value) in held:
            found[str(name)] = str(value)
    return found


def processor_class(
    nifi_type: str, type_map: TypeMap, registry: Mapping[str, type[Processor]]
) -> type[Processor] | None:
    """The flowcore class for *nifi_type*, or None when there is none.

    A NiFi name flowcore knows (``SplitText``) under another package is another class, and is
    only taken through *type_map*.
    """
    simple = simple_name(nifi_type)
    for key in (nifi_type, simple):
        if key in type_map:
            return type_map[key]
    renamed = next((name for name, old in FORMER_TYPES.items() if nifi_type in old), None)
    if renamed is not None and renamed != simple:  # NiFi renamed it (ConsumeKafka_2_6)
        return registry.get(renamed)
    known = NIFI_PROCESSORS.get(simple)
    ours = nifi_type.startswith(f"{FLOWCORE_PACKAGE}.")
    former = nifi_type in FORMER_TYPES.get(simple, ())
    if known is not None and known.type != nifi_type and not (ours or former):
        return None
    return registry.get(simple)


@attrs.frozen
class Settings:
    """A processor's scheduling settings, as ``Flow.add`` takes them."""

    concurrent_tasks: int = 1
    run_schedule: str = DEFAULT_RUN_SCHEDULE
    scheduling_strategy: SchedulingStrategy = SchedulingStrategy.TIMER_DRIVEN
    penalty_duration: str | None = None
    yield_duration: str | None = None
    disabled: bool = False
    retry: RetrySettings | None = None
    comments: str = ""


def _period(value: Any, default: str) -> str | None:
    """*value* when it differs from NiFi's *default* (None: the engine's default applies)."""
    if value is None:
        return None
    try:
        same = parse_time_period(str(value)) == parse_time_period(default)
    except ValueError:
        return str(value)  # validation reports it, naming the processor
    return None if same else str(value)


def _strategy(data: Mapping[str, Any], name: str, findings: Findings) -> tuple[str, str]:
    """The scheduling strategy and Run Schedule, EVENT_DRIVEN read as NiFi 2 reads it."""
    strategy = str(data.get("schedulingStrategy") or "TIMER_DRIVEN")
    period = str(data.get("schedulingPeriod") or DEFAULT_RUN_SCHEDULE)
    if strategy in ("EVENT_DRIVEN", "PRIMARY_NODE_ONLY"):
        findings.note(
            name,
            f"scheduling strategy {strategy} is TIMER_DRIVEN at '0 sec' in flowcore (as NiFi 2 "
            "migrates it): the processor runs whenever FlowFiles are queued for it",
        )
        return "TIMER_DRIVEN", DEFAULT_RUN_SCHEDULE
    return strategy, period


def _retry(data: Mapping[str, Any]) -> RetrySettings | None:
    relationships = sorted(map(str, data.get("retriedRelationships") or ()))
    if not relationships:
        return None
    count = data.get("retryCount")
    return RetrySettings(
        relationships,
        count=DEFAULT_RETRY_COUNT if count is None else int(count),
        backoff_mechanism=data.get("backoffMechanism") or "PENALIZE_FLOWFILE",
        max_backoff_period=data.get("maxBackoffPeriod") or DEFAULT_MAX_BACKOFF_PERIOD,
    )


def settings_of(node: Node, findings: Findings, *, stopped_runs: bool) -> Settings | None:
    """*node*'s scheduling settings, or None when they cannot be read (a problem says why).

    Args:
        node: the processor.
        findings: where problems and notes go.
        stopped_runs: whether ``scheduledState`` ENABLED means a stopped processor (an
            instance's ``flow.json.gz``), to note that flowcore runs it.
    """
    data, name = node.data, node.name
    strategy, period = _strategy(data, name, findings)
    state = str(data.get("scheduledState") or "ENABLED")
    if stopped_runs and state == "ENABLED":
        findings.note(name, "is stopped in the NiFi instance; flowcore runs it")
    if data.get("executionNode") == "PRIMARY":
        findings.note(
            name,
            "runs on the primary node only in a NiFi cluster; flowcore lists sources once, "
            "on the driver, which is the same",
        )
    try:
        return Settings(
            concurrent_tasks=int(data.get("concurrentlySchedulableTaskCount") or 1),
            run_schedule=period,
            scheduling_strategy=SchedulingStrategy(strategy),
            penalty_duration=_period(data.get("penaltyDuration"), _NIFI_PENALTY),
            yield_duration=_period(data.get("yieldDuration"), _NIFI_YIELD),
            disabled=state == "DISABLED",
            retry=_retry(data),
            comments=str(data.get("comments") or ""),
        )
    except (ValueError, TypeError) as error:  # an unknown strategy, a count that is no number
        findings.problem(name, f"has scheduling settings flowcore cannot read: {error}")
        return None


@attrs.define
class ProcessorMaker:
    """Makes the processors of one flow, recording problems in *findings*.

    Attributes:
        flow: the flow being built (services are declared on it).
        findings: where problems and notes go.
        type_map: the user's classes by NiFi type.
        registry: flowcore's processors by name.
        services: every controller service the file holds, by identifier (path, JSON).
        external: services the flow references but does not hold, by identifier.
        mappings: what flowcore provides for each service type.
    """

    flow: FlowDefinition
    findings: Findings
    type_map: TypeMap
    registry: Mapping[str, type[Processor]]
    services: Mapping[str, tuple[str, Mapping[str, Any]]]
    external: Mapping[str, Mapping[str, Any]]
    mappings: Mapping[str, ServiceMapping] = SERVICES
    #: Service identifiers some processor uses.
    used: set[str] = attrs.Factory(set)
    #: Services whose type is reported as one flowcore lacks, by identifier: the import reports
    #: every such service before making processors (their users all named at once), and a
    #: service reported is not reported again by each user.
    reported: set[str] = attrs.Factory(set)
    #: What each service wired so far stands as, by identifier.
    _provided: dict[str, str] = attrs.Factory(dict)

    def make(self, node: Node) -> Processor | None:
        """The configured processor for *node*, or None (a problem or unsupported type noted)."""
        nifi_type = str(node.data.get("type") or "")
        if not nifi_type:
            self.findings.problem(
                node.name,
                "the processor has no type in the flow definition",
                "export the flow again from NiFi, or give the processor its 'type'",
            )
            return None
        cls = processor_class(nifi_type, self.type_map, self.registry)
        if cls is None:
            self.findings.unsupported_processor(nifi_type, node.name)
            return None
        if not (inspect.isclass(cls) and issubclass(cls, Processor)):
            self.findings.problem(
                node.name,
                f"type_map maps {nifi_type} to {cls!r}, which is not a flowcore Processor class",
            )
            return None
        try:
            processor = cls(**self._advanced(node, cls))
        except FlowcoreError as error:
            self.findings.problem(node.name, str(error))
            return None
        problems_before = len(self.findings.problems)
        for name, value in (node.data.get("properties") or {}).items():
            self._set(node, processor, str(name), value)
        return processor if len(self.findings.problems) == problems_before else None

    def _advanced(self, node: Node, cls: type[Processor]) -> dict[str, Any]:
        """UpdateAttribute's Advanced rules, as its constructor takes them."""
        text = node.data.get("annotationData")
        if not text:
            return {}
        takes_rules = "rules" in inspect.signature(cls).parameters
        if not takes_rules:
            self.findings.note(node.name, f"its annotation data is ignored ({cls.__name__})")
            return {}
        try:
            rules, policy = criteria_from_xml(str(text))
        except FlowcoreError as error:
            self.findings.problem(node.name, str(error))
            return {}
        return {"rules": rules, "flowfile_policy": policy}

    def _set(self, node: Node, processor: Processor, name: str, value: Any) -> None:
        if value is None:
            return  # unset in NiFi: the default applies
        nifi_type = simple_name(str(node.data.get("type") or ""))
        descriptor = (node.data.get("propertyDescriptors") or {}).get(name) or {}
        if is_removed(nifi_type, name):
            self.findings.note(node.name, f"property {name!r} is gone in NiFi 2 and left out")
            return
        text = str(value)
        if descriptor.get("identifiesControllerService") or text in self.services:
            service_value = self._service(node, name, text)
            if service_value is None:
                return
            text = service_value
        elif text.startswith(_ENCRYPTED) and text.endswith("}"):
            self.findings.problem(
                node.name,
                f"property {name!r} holds a value encrypted with its NiFi instance's key",
                "make it reference a sensitive parameter (#{name}) and give that with "
                "--parameter-env, or set it in NiFi and export a flow definition",
            )
            return
        self._set_text(node, processor, nifi_type, name, text, dynamic=descriptor.get("dynamic"))

    def _set_text(
        self,
        node: Node,
        processor: Processor,
        nifi_type: str,
        name: str,
        text: str,
        *,
        dynamic: bool | None,
    ) -> None:
        def declares(candidate: str) -> bool:
            found = processor.resolve_descriptor(candidate)
            return found is not None and not found.dynamic

        known = known_name(nifi_type, name, declares)
        kind = type(processor).__name__
        if known is not None:
            processor.set_property(known, text)
        elif processor.supports_dynamic_properties and dynamic is not False:
            processor.set_property(name, text)
        elif dynamic:
            self.findings.problem(
                node.name,
                f"has dynamic property {name!r}, but flowcore's {kind} takes no dynamic properties",
            )
        else:
            hint = processor.unknown_property_message(name).partition("; ")[2]
            self.findings.problem(
                node.name,
                f"sets property {name!r}, which flowcore's {kind} does not have",
                f"{hint + '; ' if hint else ''}remove it in NiFi, or map the type to your own "
                "processor with type_map",
            )

    def _service(self, node: Node, name: str, identifier: str) -> str | None:
        """The value a property naming service *identifier* takes, or None (reported)."""
        held = self.services.get(identifier)
        if held is None:
            external = self.external.get(identifier) or {}
            label = external.get("name") or identifier
            self.findings.problem(
                node.name,
                f"property {name!r} names controller service {label!r}, which the flow does "
                "not hold (it lives outside the exported group)",
                "export the group that holds the service, or replace the processor",
            )
            return None
        self.used.add(identifier)
        if identifier in self._provided:
            return self._provided[identifier]
        path, data = held
        nifi_type = str(data.get("type") or "")
        service_name = str(data.get("name") or identifier)
        user = f"{service_name!r} (used by {node.name!r})"
        mapping = self.mappings.get(simple_name(nifi_type))
        if mapping is None or mapping.provide is None:
            if identifier not in self.reported:
                self.reported.add(identifier)
                why = str(unavailable(mapping))
                self.findings.unsupported_service(nifi_type or "(no type)", why, user)
            return None
        use = ServiceUse(
            identifier,
            f"{path}/{service_name}" if path else service_name,
            nifi_type,
            data.get("properties") or {},
            (node.name,),
            tuple(peer for key, (_, peer) in self.services.items() if key != identifier),
        )
        try:
            self._provided[identifier] = mapping.provide(self.flow, use)
        except FlowcoreError as error:
            self.findings.problem(node.name, str(error))
            return None
        return self._provided[identifier]
