"""A NiFi flow, in any of NiFi's shapes, made a flowcore flow: ``Flow.from_nifi``.

The phases, in order:

1. read the file into one value whatever its shape (:mod:`flowcore.nifi.formats`);
2. flatten the groups, ports and funnels becoming funnels (:mod:`flowcore.nifi.groups`);
3. check what has no meaning in one Spark application or no equivalent in flowcore: remote
   process groups and their ports, 1.x variables, group settings; ports with remote access
   stay ports of their group (site-to-site is not served: a note says so);
4. make the parameter context (:mod:`flowcore.nifi.contexts`);
5. report every controller service a processor names whose type flowcore lacks, whatever the
   processor's type, then make each processor with its properties and settings
   (:mod:`flowcore.nifi.components`; a type flowcore lacks is reported with every processor of
   it), and each funnel;
6. connect them, with NiFi's queue settings where they differ from NiFi's defaults (a queue
   setting makes a flowcore connection durable, and NiFi writes the defaults on every one);
7. auto-terminate what NiFi auto-terminates, and what left through ports that lead nowhere.

Every problem is gathered on the way and raised once, before anything runs
(:class:`~flowcore.errors.NiFiImportError`); notes say what is kept without effect (cluster
settings) or changed on the way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from flowcore.definition.component_settings import (
    DEFAULT_BACK_PRESSURE_DATA_SIZE,
    DEFAULT_BACK_PRESSURE_OBJECTS,
    Prioritizer,
)
from flowcore.definition.flow import Component, FlowDefinition
from flowcore.errors import FlowDefinitionError
from flowcore.nifi.components import ProcessorMaker, TypeMap, referenced_services, settings_of
from flowcore.nifi.contexts import flow_parameters
from flowcore.nifi.findings import Findings, ImportNote
from flowcore.nifi.formats import FlowShape, NiFiDefinition, read_definition
from flowcore.nifi.groups import Edge, FlatFlow, Key, Node, NodeKind, flatten, prune
from flowcore.nifi.migrations import (
    aws_credentials_service,
    is_aws_processor,
    relationship_name,
)
from flowcore.nifi.services import (
    SERVICES,
    ServiceMapping,
    provided_identifiers,
    stands_with_peers,
    unavailable,
)
from flowcore.nifi.types import NIFI_PROCESSORS, simple_name
from flowcore.parameters import Parameter, ParameterContext
from flowcore.registry import available_processors
from flowcore.units import parse_data_size, parse_time_period
from nifiapi._loader import loaded_processors

__all__ = ["ImportedFlow", "import_nifi"]

F = TypeVar("F", bound=FlowDefinition)
"""The flow class an import builds (``Flow``, from the builder)."""

_DEFAULT_GROUP_SETTINGS = {
    "flowFileConcurrency": ("UNBOUNDED", "FlowFile Concurrency"),
    "flowFileOutboundPolicy": ("STREAM_WHEN_AVAILABLE", "Outbound Policy"),
    "executionEngine": ("INHERITED", "Execution Engine"),
}


@attrs.frozen
class ImportedFlow:
    """An imported flow and what the import has to say about it.

    Attributes:
        flow: the flow, ready to validate and run.
        notes: settings kept without effect, and changes made on the way.
        shape: the shape the flow came in.
    """

    flow: FlowDefinition
    notes: tuple[ImportNote, ...]
    shape: FlowShape


def _check_groups(flat: FlatFlow, findings: Findings) -> None:
    """Group settings: 1.x variables are a problem, the rest notes when not NiFi's default."""
    for group in flat.groups:
        subject = f"process group {group.path or '(top)'}"
        variables = group.data.get("variables") or {}
        if variables:
            findings.problem(
                subject,
                f"defines NiFi 1.x variables ({', '.join(sorted(variables))}), which NiFi 2 "
                "removed and flowcore does not have",
                "turn them into parameters (#{name}) in NiFi 1.x, then export again",
            )
        for field, (default, label) in _DEFAULT_GROUP_SETTINGS.items():
            value = group.data.get(field)
            if value and value != default:
                findings.note(
                    subject,
                    f"{label} {value} is not applied: flowcore runs the group's components as "
                    "it runs any others",
                )


def _remote_access_note(flat: FlatFlow, node: Node) -> str:
    """What becomes of a port with remote access, which runs as a port of its group."""
    note = (
        "allows remote access (site-to-site), which flowcore does not serve: it runs as a "
        "port of its group"
    )
    if node.kind is NodeKind.INPUT_PORT and not flat.incoming(node.key):
        return f"{note}; nothing else feeds it, so it receives nothing"
    if node.kind is NodeKind.OUTPUT_PORT and not flat.outgoing(node.key):
        return (
            f"{note}; FlowFiles reaching it wait queued before it, durably, as before a funnel "
            "with no outgoing connection"
        )
    return note


def _check_remote(flat: FlatFlow, findings: Findings) -> None:
    """Site-to-site: remote process groups left out, ports with remote access kept as ports.

    A remote process group's port is a problem where FlowFiles cross it (noted and left out
    otherwise); a port with remote access is a port of its group, and a note says site-to-site
    is not served.
    """
    for path, group in flat.remote_groups:
        subject = f"remote process group {group.get('name') or group.get('targetUris')!r}"
        if path:
            subject += f" in {path}"
        findings.note(subject, "sends to or receives from another NiFi instance: left out")
    for node in list(flat.nodes.values()):
        if not node.site_to_site:
            continue
        if node.kind is not NodeKind.REMOTE_PORT:  # a port with remote access, kept
            findings.note(f"{node.kind.value} {node.name!r}", _remote_access_note(flat, node))
            continue
        if flat.incoming(node.key) or flat.outgoing(node.key):
            findings.problem(
                f"{node.kind.value} {node.name!r}",
                "exchanges FlowFiles with other NiFi instances (site-to-site), which flowcore "
                "does not do",
                "read from or write to files, a dataset or a queue the flow can reach instead",
            )
        else:
            findings.note(f"{node.kind.value} {node.name!r}", "site-to-site port: left out")
        del flat.nodes[node.key]
    for path, data, why in flat.dangling:
        label = data.get("name") or data.get("identifier")
        findings.problem(f"connection {label!r} in {path or 'the top group'}", why)


def _unique(wanted: str, taken: set[str]) -> str:
    name, n = wanted, 1
    while name in taken:
        n += 1
        name = f"{wanted}-{n}"
    taken.add(name)
    return name


@attrs.define
class _Builder:
    """Builds one flow from the flattened graph."""

    flow: FlowDefinition
    flat: FlatFlow
    findings: Findings
    maker: ProcessorMaker
    stopped_runs: bool
    made: dict[Key, Component] = attrs.Factory(dict)
    names: set[str] = attrs.Factory(set)
    ids: set[str] = attrs.Factory(set)

    def _id(self, identifier: str) -> str | None:
        """NiFi's identifier as the flowcore id, unless another component already has it."""
        if identifier in self.ids:
            return None
        self.ids.add(identifier)
        return identifier

    def components(self) -> None:
        for node in self.flat.nodes.values():
            name = _unique(node.name, self.names)
            if node.kind is NodeKind.PROCESSOR:
                self._processor(node, name)
            elif node.kind.passes_through:
                # A disabled port holds FlowFiles queued before it, as a disabled funnel does.
                disabled = node.data.get("scheduledState") == "DISABLED"
                self.made[node.key] = self.flow.funnel(
                    name, id=self._id(node.identifier), disabled=disabled
                )

    def _processor(self, node: Node, name: str) -> None:
        settings = settings_of(node, self.findings, stopped_runs=self.stopped_runs)
        processor = self.maker.make(node)
        if processor is None or settings is None:
            return
        try:
            chosen = attrs.asdict(settings, recurse=False)
            identifier = self._id(node.identifier)
            self.made[node.key] = self.flow.add(processor, name, id=identifier, **chosen)
        except FlowDefinitionError as error:
            self.findings.problem(node.name, str(error))

    def connections(self) -> None:
        for edge in self.flat.edges:
            source = self.made.get(edge.source)
            destination = self.made.get(edge.destination)
            if source is None or destination is None:
                continue  # an end that could not be made is reported already
            self._connect(edge, source, destination)

    def _connect(self, edge: Edge, source: Component, destination: Component) -> None:
        data = edge.data
        from_processor = self.flat.nodes[edge.source].kind is NodeKind.PROCESSOR
        nifi_type = str(self.flat.nodes[edge.source].data.get("type") or "")
        relationships = sorted(
            relationship_name(nifi_type, str(r)) for r in data.get("selectedRelationships") or ()
        )
        label = f"connection {source.name} -> {destination.name}"
        queue = _queue_settings(data, label, self.findings)
        if queue is None:
            return
        balance = str(data.get("loadBalanceStrategy") or "DO_NOT_LOAD_BALANCE")
        if balance != "DO_NOT_LOAD_BALANCE":
            self.findings.note(
                label,
                f"load balance strategy {balance} spreads a queue over a NiFi cluster's nodes; "
                "kept, without effect in one Spark application",
            )
        try:
            self.flow.connect(
                source,
                destination,
                relationships if from_processor else None,
                name=str(data.get("name") or ""),
                load_balance_strategy=balance,
                partitioning_attribute=str(data.get("partitioningAttribute") or ""),
                id=self._id(str(data.get("identifier") or "")) if data.get("identifier") else None,
                **queue,
            )
        except FlowDefinitionError as error:
            self.findings.problem(label, str(error))

    def terminations(self, extra: Mapping[Key, frozenset[str]]) -> None:
        for key, component in self.made.items():
            node = self.flat.nodes[key]
            if node.kind is not NodeKind.PROCESSOR:
                continue
            nifi_type = str(node.data.get("type") or "")
            names = {
                relationship_name(nifi_type, str(n))
                for n in node.data.get("autoTerminatedRelationships") or ()
            }
            carried = {r for c in self.flow.outgoing(component) for r in c.relationships}
            names |= set(extra.get(key, frozenset())) - carried
            if names:
                self.flow.auto_terminate(component, sorted(names))


def _queue_settings(data: Mapping[str, Any], label: str, findings: Findings) -> dict | None:
    """The connection's queue settings that differ from NiFi's defaults (None: a problem)."""
    given: dict[str, Any] = {}
    objects = data.get("backPressureObjectThreshold")
    if objects is not None and int(objects) != DEFAULT_BACK_PRESSURE_OBJECTS:
        given["back_pressure_object_threshold"] = int(objects)
    size = data.get("backPressureDataSizeThreshold")
    if size and not _same(parse_data_size, size, DEFAULT_BACK_PRESSURE_DATA_SIZE):
        given["back_pressure_data_size_threshold"] = str(size)
    expiration = data.get("flowFileExpiration")
    if expiration and not _same(parse_time_period, expiration, "0 sec"):
        given["flowfile_expiration"] = str(expiration)
    prioritizers = [simple_name(str(p)) for p in data.get("prioritizers") or ()]
    known = {p.value for p in Prioritizer}
    unknown = [p for p in prioritizers if p not in known]
    if unknown:
        findings.problem(
            label,
            f"uses prioritizer {', '.join(unknown)}, which flowcore does not have",
            f"use one of {', '.join(sorted(known))}",
        )
        return None
    if prioritizers:
        given["prioritizers"] = prioritizers
    compression = data.get("loadBalanceCompression")
    if compression and compression != "DO_NOT_COMPRESS":
        findings.note(label, f"load balance compression {compression} has no effect here")
    return given


def _same(parse: Any, value: Any, default: str) -> bool:
    """Whether *value* means NiFi's *default* (an unreadable one is kept for validation)."""
    try:
        return bool(parse(str(value)) == parse(default))
    except ValueError:
        return False


def _migrate_aws_credentials(flat: FlatFlow, findings: Findings) -> None:
    """NiFi 2's migration of 1.x AWS processors' Access Key / Secret Key into a service.

    NiFi 2's AWS processors take credentials only from an AWSCredentialsProviderControllerService;
    its migrateProperties makes one from a 1.x processor's keys (or credentials file, or
    anonymous), in the processor's group, and names it. The import does the same, noting it.
    """
    paths = {str(g.data.get("identifier") or ""): g.path for g in flat.groups}
    for key, node in list(flat.nodes.items()):
        if node.kind is not NodeKind.PROCESSOR or not is_aws_processor(
            str(node.data.get("type") or "")
        ):
            continue
        migrated = aws_credentials_service(
            node.identifier, node.name, node.data.get("properties") or {}
        )
        if migrated is None:
            continue
        properties, service = migrated
        flat.nodes[key] = attrs.evolve(node, data={**node.data, "properties": properties})
        if service:
            flat.services.append((paths.get(key[0], ""), service))
            given = ", ".join(service["properties"])
            findings.note(
                f"processor {node.name!r}",
                f"its NiFi 1.x credentials ({given}) moved to a new "
                f"AWSCredentialsProviderControllerService {service['name']!r} it names, as "
                "NiFi 2's migration does (flowcore takes AWS credentials only from that service)",
            )


def _services_by_id(
    flat: FlatFlow, definition: NiFiDefinition
) -> dict[str, tuple[str, Mapping[str, Any]]]:
    held = [*flat.services, *(("", s) for s in definition.controller_services)]
    return {str(s.get("identifier")): (path, s) for path, s in held if s.get("identifier")}


def _in_scope(user_path: str, service_path: str) -> bool:
    """Whether a component of group *user_path* may use a service of group *service_path*.

    NiFi's scope: the services of the component's own group and of every group above it.
    """
    return not service_path or user_path == service_path or user_path.startswith(f"{service_path}/")


def _report_out_of_scope(
    flat: FlatFlow, services: Mapping[str, tuple[str, Mapping[str, Any]]], findings: Findings
) -> None:
    """Report each reference to a service outside the referring component's scope.

    A processor, or a service, may use the services of its own process group and of the
    groups above it, as in NiFi; a reference to a service of another branch (a sibling group,
    a child group) would not resolve in NiFi either.
    """
    paths = {str(g.data.get("identifier") or ""): g.path for g in flat.groups}
    referrers: list[tuple[str, str, Mapping[str, Any]]] = [
        (node.name, paths.get(node.key[0], ""), node.data)
        for node in flat.nodes.values()
        if node.kind is NodeKind.PROCESSOR
    ]
    for path, data in services.values():
        name = str(data.get("name") or data.get("identifier"))
        referrers.append((f"controller service {f'{path}/{name}' if path else name!r}", path, data))
    for subject, path, data in referrers:
        for prop, identifier in referenced_services(data, services).items():
            service_path, service = services[identifier]
            if _in_scope(path, service_path):
                continue
            label = str(service.get("name") or identifier)
            findings.problem(
                subject,
                f"property {prop!r} names controller service {label!r} of process group "
                f"{service_path!r}, which is outside its scope (a component may use the "
                f"services of its own group{f' {path!r}' if path else ''} and the groups above it)",
                "move the service to a group above every component that uses it",
            )


def _report_missing_services(
    flat: FlatFlow,
    services: Mapping[str, tuple[str, Mapping[str, Any]]],
    mappings: Mapping[str, ServiceMapping],
    findings: Findings,
) -> tuple[set[str], set[str]]:
    """Report every service a processor names whose type flowcore lacks, with all its users.

    Done before any processor is made, over every processor whatever its type: a processor of
    a type flowcore lacks is never configured, so its services would otherwise surface only
    once it is mapped, in a second round of errors.

    Returns:
        The services some processor names, and those reported, by identifier.
    """
    users: dict[str, list[str]] = {}
    for node in flat.nodes.values():
        if node.kind is NodeKind.PROCESSOR:
            for identifier in dict.fromkeys(referenced_services(node.data, services).values()):
                users.setdefault(identifier, []).append(repr(node.name))
    reported = set()
    for identifier, names in users.items():
        path, data = services[identifier]
        nifi_type = str(data.get("type") or "")
        why = unavailable(mappings.get(simple_name(nifi_type)))
        if why is None:
            continue
        name = str(data.get("name") or identifier)
        label = f"{path}/{name}" if path else name
        findings.unsupported_service(
            nifi_type or "(no type)", why, f"{label!r} (used by {', '.join(names)})"
        )
        reported.add(identifier)
    return set(users), reported


def _note_unused_services(
    services: Mapping[str, tuple[str, Mapping[str, Any]]],
    used: set[str],
    mappings: Mapping[str, ServiceMapping],
    findings: Findings,
) -> None:
    """Note the services no processor uses.

    A service of the same mapping as a used one (a map cache server, whose client a processor
    uses) stands with it and is not noted.
    """

    def mapping_of(identifier: str) -> ServiceMapping | None:
        return mappings.get(simple_name(str(services[identifier][1].get("type") or "")))

    in_use = {
        id(mapping_of(identifier))
        for identifier in used
        if stands_with_peers(mapping_of(identifier))
    }
    for identifier, (path, data) in services.items():
        if identifier in used or id(mapping_of(identifier)) in in_use:
            continue
        name = str(data.get("name") or identifier)
        kind = simple_name(str(data.get("type") or ""))
        findings.note(
            f"controller service {f'{path}/{name}' if path else name!r} ({kind})",
            "is used by no processor: left out",
        )


def _python_processors() -> dict[str, Any]:
    """The NiFi Python processors loaded, but for those named as a NiFi processor flowcore has."""
    return {n: c for n, c in loaded_processors().items() if n not in NIFI_PROCESSORS}


def import_nifi(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    parameters: ParameterContext | Mapping[str, str | Parameter] | None = None,
    type_map: TypeMap | None = None,
    into: type[F] = FlowDefinition,  # type: ignore[assignment]
    services: Mapping[str, ServiceMapping] = SERVICES,
) -> ImportedFlow:
    """Make a flow of *into* from a NiFi flow definition; see :meth:`flowcore.Flow.from_nifi`.

    Args:
        source: a ``.json`` / ``.json.gz`` path, or the parsed JSON.
        parameters: values that win over the file's parameter contexts.
        type_map: the user's processor classes by NiFi type (full or simple name); the NiFi
            Python processors loaded (``nifiapi._loader.register``) come after it.
        into: the flow class to build.
        services: what flowcore provides for each controller service type.

    Raises:
        NiFiFormatError: the source is not a NiFi flow, or is malformed.
        NiFiImportError: the flow uses what flowcore cannot run; every problem listed.
    """
    definition = read_definition(source)
    flat = flatten(definition.root, root_ports_remote=definition.shape is FlowShape.INSTANCE_FLOW)
    findings = Findings()
    nested = [g.path for g in flat.groups if g.path]
    if nested:
        findings.note(
            f"process group{'s' if len(nested) > 1 else ''} {', '.join(map(repr, nested))}",
            "flattened into one flow: components keep the group path in their names and ports "
            "became funnels (an export writes one group)",
        )
    _check_groups(flat, findings)
    _check_remote(flat, findings)
    pruned = prune(flat)
    for subject, note in pruned.notes:
        findings.note(subject, note)
    imported = flow_parameters(
        definition.name, definition.parameter_contexts, flat.groups, parameters
    )
    findings.problems.extend(imported.problems)
    for subject, note in imported.notes:
        findings.note(subject, note)
    flow = into(definition.name, parameters=imported.context)
    _migrate_aws_credentials(flat, findings)
    held = _services_by_id(flat, definition)
    _report_out_of_scope(flat, held, findings)
    named, reported = _report_missing_services(flat, held, services, findings)
    maker = ProcessorMaker(
        flow,
        findings,
        # NiFi 2 Python processors (bundle python-extensions) are named by class name; one
        # named as a NiFi Java processor flowcore has would take that type's place: left out
        {**_python_processors(), **(type_map or {})},
        available_processors(),
        held,
        definition.external_services,
        services,
        reported=reported,
    )
    builder = _Builder(
        flow, flat, findings, maker, stopped_runs=definition.shape is FlowShape.INSTANCE_FLOW
    )
    builder.components()
    builder.connections()
    builder.terminations(pruned.terminate)
    used = maker.used | named | provided_identifiers(flow)
    _note_unused_services(held, used, services, findings)
    findings.raise_if_any(definition.name, definition.source)
    return ImportedFlow(flow, tuple(findings.notes), definition.shape)
