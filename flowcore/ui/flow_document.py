"""The flow as the UI's canvas draws it: ``/api/flow``'s document.

Processors with their type, properties (sensitive ones masked as NiFi shows them: "Sensitive
value set"), scheduling, relationships, run state and validation problems; funnels; connections
with their queue settings and whether they are durable; flowcore's stages; and every
component's position. Positions are NiFi's own for an imported NiFi flow that has them
(components of nested groups offset by their groups' positions) unless two boxes would then
overlap (a flattened nested group), otherwise Graphviz's layout of NiFi-sized boxes
(:func:`flowcore.nifi.layout.layout`): no layout is computed here. flowcore's flows are flat;
the process groups of an imported flow live on in the components' names
(``Ingest/Split lines``), and the document lists them from there.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flowcore.compiler.stages import CompiledFlow, compile_flow
from flowcore.flow import Component, ComponentKind, FlowDefinition
from flowcore.nifi.layout import FUNNEL_SIZE, PROCESSOR_SIZE, Position, layout
from flowcore.processor import ProcessorKind
from flowcore.validation import problems_of

__all__ = ["SENSITIVE_VALUE_SET", "flow_document", "nifi_positions", "recorded_document"]

#: What NiFi's UI shows for a sensitive property that has a value.
SENSITIVE_VALUE_SET = "Sensitive value set"


def _properties(component: Component) -> list[dict[str, Any]]:
    """Every property with its value, sensitive values masked (never sent to the browser)."""
    processor = component.processor
    if processor is None:
        return []
    configured = processor.raw_configured
    rows = []
    seen = set()
    for descriptor in processor.descriptors():
        seen.add(descriptor.name)
        value = configured.get(descriptor.name)
        shown = value if value is not None else descriptor.default
        if descriptor.sensitive:
            shown = SENSITIVE_VALUE_SET if value is not None else None
        rows.append(
            {
                "name": descriptor.display_name,
                "value": shown,
                "default": None if descriptor.sensitive else descriptor.default,
                "sensitive": descriptor.sensitive,
                "required": descriptor.required,
                "description": descriptor.description,
                "dynamic": False,
            }
        )
    for name, value in configured.items():
        if name in seen:
            continue
        dynamic = processor.get_dynamic_property_descriptor(name)
        sensitive = dynamic is not None and dynamic.sensitive
        rows.append(
            {
                "name": name,
                "value": SENSITIVE_VALUE_SET if sensitive else value,
                "default": None,
                "sensitive": sensitive,
                "required": False,
                "description": "A user-defined property",
                "dynamic": True,
            }
        )
    return rows


def _group_of(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _component(
    flow: FlowDefinition,
    compiled: CompiledFlow | None,
    component: Component,
    problems: Mapping[str, list[str]],
    position: Position,
) -> dict[str, Any]:
    funnel = component.kind is ComponentKind.FUNNEL
    width, height = FUNNEL_SIZE if funnel else PROCESSOR_SIZE
    source = component.processor is not None and component.processor.kind is ProcessorKind.SOURCE
    invalid = problems.get(str(component), [])
    if component.disabled:
        state = "DISABLED"
    elif invalid:
        state = "INVALID"
    else:
        state = "STOPPED"  # the live status says RUNNING while a run runs (api.py)
    connected = {r for c in flow.outgoing(component) for r in c.relationships}
    terminated = flow.terminated(component)
    return {
        "id": component.id,
        "name": component.name,
        "kind": "funnel" if funnel else "processor",
        "type": component.type_name,
        "group": _group_of(component.name),
        "source": source,
        "state": state,
        "validation_errors": invalid,
        "dead_end": flow.is_dead_end(component),
        "stage": compiled.stage_of(component).id if compiled is not None else None,
        "position": {"x": position.x, "y": position.y},
        "size": {"width": width, "height": height},
        "properties": _properties(component),
        "scheduling": {
            "scheduling_strategy": component.scheduling_strategy.value,
            "run_schedule": component.run_schedule,
            "concurrent_tasks": component.concurrent_tasks,
            "penalty_duration": component.penalty_duration,
            "yield_duration": component.yield_duration,
        },
        "relationships": [
            {
                "name": name,
                "auto_terminate": name in terminated and name not in connected,
                "connected": name in connected,
            }
            for name in component.relationship_names()
        ],
        "comments": component.comments,
    }


def flow_document(
    flow: FlowDefinition, positions: Mapping[str, Position] | None = None
) -> dict[str, Any]:
    """``/api/flow`` for *flow*: components, connections, stages, groups and positions.

    Args:
        flow: the flow (as it runs: an imported flow's invalid processors disabled).
        positions: NiFi's positions by component id; missing ones are laid out by Graphviz.
    """
    problems: dict[str, list[str]] = {}
    for problem in problems_of(flow):
        problems.setdefault(problem.subject, []).append(problem.problem)
    try:
        compiled: CompiledFlow | None = compile_flow(flow, validate=False)
    except Exception:  # a graph the compiler cannot cut: drawn without stages
        compiled = None
    placed = dict(positions or {})
    if any(c.id not in placed for c in flow.components) or _overlapping(flow, placed):
        placed = layout(flow)
    components = [_component(flow, compiled, c, problems, placed[c.id]) for c in flow.components]
    connections = []
    for connection in flow.connections:
        settings = connection.queue_settings
        durable = compiled is not None and connection.id in compiled.durable
        connections.append(
            {
                "id": connection.id,
                "name": connection.name,
                "source": connection.source,
                "destination": connection.destination,
                "relationships": list(connection.relationships),
                "durable": durable,
                "durable_reasons": (
                    [r.name.lower() for r in compiled.durable[connection.id]] if durable else []
                ),
                "back_pressure_object_threshold": settings.back_pressure_object_threshold,
                "back_pressure_data_size_threshold": settings.back_pressure_data_size_threshold,
                "flowfile_expiration": settings.flowfile_expiration,
                "prioritizers": [p.value for p in settings.prioritizers],
                "load_balance_strategy": connection.load_balance_strategy.value,
            }
        )
    groups = sorted({c["group"] for c in components if c["group"]})
    stages = (
        [
            {"id": s.id, "members": list(s.members), "inputs": list(s.inputs)}
            for s in compiled.stages
        ]
        if compiled is not None
        else []
    )
    return {
        "name": flow.name,
        "read_only": False,
        "process_groups": [{"id": g, "name": g.rsplit("/", 1)[-1], "path": g} for g in groups],
        "components": components,
        "connections": connections,
        "stages": stages,
        "problems": [str(p) for p in problems_of(flow)] if problems else [],
    }


def recorded_document(record: Any) -> dict[str, Any]:
    """``/api/flow`` from the flow record a repository keeps, when no flow file is given.

    The record names components, their types and connections, nothing more: the UI shows
    them read-only, without properties, in one column in the recorded order.
    """
    components = []
    for index, (component_id, (name, type_name, _)) in enumerate(record.components.items()):
        components.append(
            {
                "id": component_id,
                "name": name,
                "kind": "funnel" if type_name == "Funnel" else "processor",
                "type": type_name,
                "group": _group_of(name),
                "source": False,
                "state": "STOPPED",
                "validation_errors": [],
                "dead_end": False,
                "stage": None,
                "position": {"x": 0.0, "y": index * 240.0},
                "size": dict(zip(("width", "height"), PROCESSOR_SIZE, strict=True)),
                "properties": [],
                "scheduling": {},
                "relationships": [],
                "comments": "",
            }
        )
    connections = [
        {
            "id": connection_id,
            "name": "",
            "source": source,
            "destination": destination,
            "relationships": list(relationships),
            "durable": True,
            "durable_reasons": [],
            "back_pressure_object_threshold": None,
            "back_pressure_data_size_threshold": None,
            "flowfile_expiration": None,
            "prioritizers": [],
            "load_balance_strategy": None,
        }
        for connection_id, (source, relationships, destination) in record.connections.items()
    ]
    return {
        "name": record.flow,
        "read_only": True,
        "process_groups": [],
        "components": components,
        "connections": connections,
        "stages": [],
        "problems": [],
    }


def _overlapping(flow: FlowDefinition, placed: Mapping[str, Position]) -> bool:
    """Whether two boxes overlap.

    A flattened nested group's components land on the canvas around its group's box, where
    NiFi draws only the group; Graphviz places them instead.
    """
    boxes = []
    for component in flow.components:
        funnel = component.kind is ComponentKind.FUNNEL
        width, height = FUNNEL_SIZE if funnel else PROCESSOR_SIZE
        where = placed[component.id]
        boxes.append((where.x, where.y, where.x + width, where.y + height))
    boxes.sort()
    for index, (_, y0, x1, y1) in enumerate(boxes):
        for u0, v0, _, v1 in boxes[index + 1 :]:
            if u0 >= x1:
                break  # sorted by left edge: no later box reaches this one
            if v0 < y1 and y0 < v1:
                return True
    return False


def _walk(group: Mapping[str, Any], dx: float, dy: float, found: dict[str, Position]) -> None:
    fields = ("processors", "funnels", "inputPorts", "outputPorts")
    for field in fields:
        for item in group.get(field) or ():
            where = item.get("position") or {}
            if "identifier" in item and "x" in where:
                found[str(item["identifier"])] = Position(where["x"] + dx, where["y"] + dy)
    for child in group.get("processGroups") or ():
        where = child.get("position") or {}
        _walk(child, dx + where.get("x", 0.0), dy + where.get("y", 0.0), found)


def nifi_positions(path: str | Path) -> dict[str, Position]:
    """NiFi's canvas positions in a NiFi flow definition (``.json``, ``.json.gz``), by id.

    Components of a nested group are offset by the positions of the groups around them, so
    the flattened flow keeps NiFi's arrangement. A file that cannot be read gives none.
    """
    file = Path(path)
    try:
        raw = file.read_bytes()
        if file.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        document = json.loads(raw)
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    contents = document.get("flowContents") or document.get("rootGroup") or document
    found: dict[str, Position] = {}
    if isinstance(contents, dict):
        _walk(contents, 0.0, 0.0, found)
    return found
