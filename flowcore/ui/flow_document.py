"""The flow as the UI's canvas draws it: ``/api/flow``'s document.

Processors with their type, properties (sensitive ones masked as NiFi shows them: "Sensitive
value set"), scheduling, relationships, run state and validation problems; funnels; connections
with their queue settings and whether they are durable; flowcore's stages; and every
component's position. flowcore's flows are flat (an imported flow's groups live on in the
components' names, ``Ingest/Split lines``), but the canvas shows NiFi's groups one at a time:
for a NiFi flow definition each component and connection names its group (``group``, "" for
the root) and ``process_groups`` lists the groups' tree (:mod:`flowcore.ui.nifi_groups`).
Positions are then NiFi's own, in each group's coordinates, unless one is missing or two boxes
of a group overlap; otherwise, and for Python flows, Graphviz's layout of NiFi-sized boxes
(:func:`flowcore.nifi.layout.layout`): no layout is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowcore.compiler.stages import CompiledFlow, compile_flow
from flowcore.definition.flow import Component, ComponentKind, FlowDefinition
from flowcore.definition.validation import problems_of
from flowcore.nifi.layout import FUNNEL_SIZE, PROCESSOR_SIZE, Position, layout
from flowcore.processor.base import ProcessorKind
from flowcore.ui.nifi_groups import GroupLayout

__all__ = ["PORT_SIZE", "SENSITIVE_VALUE_SET", "flow_document", "recorded_document"]

#: NiFi's input and output port boxes, px.
PORT_SIZE = (240.0, 48.0)

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


def _kind(component: Component, groups: GroupLayout | None) -> str:
    """``processor``, ``funnel``, ``input_port`` or ``output_port`` (ports run as funnels)."""
    if component.kind is not ComponentKind.FUNNEL:
        return "processor"
    nifi = groups.kinds.get(component.id, "FUNNEL") if groups is not None else "FUNNEL"
    return {"INPUT_PORT": "input_port", "OUTPUT_PORT": "output_port"}.get(nifi, "funnel")


def _size(kind: str) -> tuple[float, float]:
    return {"processor": PROCESSOR_SIZE, "funnel": FUNNEL_SIZE}.get(kind, PORT_SIZE)


def _group(identifier: str, groups: GroupLayout | None) -> str:
    """The group holding *identifier* ("" for the root, and for every part of a flat flow)."""
    if groups is None:
        return ""
    found = groups.group_of.get(identifier, groups.root)
    return "" if found == groups.root else found


def _component(
    flow: FlowDefinition,
    compiled: CompiledFlow | None,
    component: Component,
    problems: Mapping[str, list[str]],
    position: Position,
    *,
    groups: GroupLayout | None,
) -> dict[str, Any]:
    kind = _kind(component, groups)
    width, height = _size(kind)
    source = flow.kind_of(component) is ProcessorKind.SOURCE
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
        "kind": kind,
        "type": component.type_name,
        "group": _group(component.id, groups),
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
    flow: FlowDefinition,
    positions: Mapping[str, Position] | None = None,
    groups: GroupLayout | None = None,
) -> dict[str, Any]:
    """``/api/flow`` for *flow*: components, connections, stages, groups and positions.

    Args:
        flow: the flow (as it runs: an imported flow's invalid processors disabled).
        positions: positions by component id (with *groups*: in each group's coordinates);
            when one is missing or two boxes of a group overlap, Graphviz lays out them all.
        groups: a NiFi flow definition's groups (None: a flat flow, one canvas).
    """
    if positions is None and groups is not None:
        positions = groups.positions
    problems: dict[str, list[str]] = {}
    for problem in problems_of(flow):
        problems.setdefault(problem.subject, []).append(problem.problem)
    try:
        compiled: CompiledFlow | None = compile_flow(flow, validate=False)
    except Exception:  # a graph the compiler cannot cut: drawn without stages
        compiled = None
    placed = dict(positions or {})
    laid_out = any(c.id not in placed for c in flow.components) or _overlapping(
        flow, placed, groups
    )
    if laid_out:
        placed = layout(flow)
    components = [
        _component(flow, compiled, c, problems, placed[c.id], groups=groups)
        for c in flow.components
    ]
    connections = []
    for connection in flow.connections:
        settings = connection.queue_settings
        durable = compiled is not None and connection.id in compiled.durable
        connections.append(
            {
                "id": connection.id,
                "group": _group(connection.id, groups),
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
        "process_groups": _process_groups(components, groups, laid_out=laid_out),
        "components": components,
        "connections": connections,
        "stages": stages,
        "problems": [str(p) for p in problems_of(flow)] if problems else [],
    }


def _process_groups(
    components: list[dict[str, Any]], groups: GroupLayout | None, *, laid_out: bool
) -> list[dict[str, Any]]:
    """The groups below the root, each with its box's position in its parent's canvas.

    NiFi's own position when the canvas keeps NiFi's positions; otherwise (laid out by
    Graphviz, or a group without one) the top-left of the components it holds, at any depth.
    """
    if groups is None:
        return []
    parent = {g["id"]: g["parent"] for g in groups.groups}
    inside: dict[str, list[dict[str, float]]] = {}
    for component in components:
        group = component["group"]
        while group and group in parent:
            inside.setdefault(group, []).append(component["position"])
            group = parent[group]
    found = []
    for group in groups.groups:
        where = None if laid_out else group["position"]
        if where is None:
            members = inside.get(group["id"]) or [{"x": 0.0, "y": 0.0}]
            where = {"x": min(p["x"] for p in members), "y": min(p["y"] for p in members)}
        found.append(
            {
                "id": group["id"],
                "name": group["name"],
                "parent": "" if group["parent"] == groups.root else group["parent"],
                "position": where,
                "size": {"width": PROCESSOR_SIZE[0] + 32, "height": PROCESSOR_SIZE[1] + 48},
            }
        )
    return found


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
                "group": "",
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
            "group": "",
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


def _overlapping(
    flow: FlowDefinition, placed: Mapping[str, Position], groups: GroupLayout | None
) -> bool:
    """Whether two boxes of one group's canvas overlap (then Graphviz places them all)."""
    by_group: dict[str, list[tuple[float, float, float, float]]] = {}
    for component in flow.components:
        width, height = _size(_kind(component, groups))
        where = placed[component.id]
        box = (where.x, where.y, where.x + width, where.y + height)
        by_group.setdefault(_group(component.id, groups), []).append(box)
    return any(_overlap(boxes) for boxes in by_group.values())


def _overlap(boxes: list[tuple[float, float, float, float]]) -> bool:
    boxes.sort()
    for index, (_, y0, x1, y1) in enumerate(boxes):
        for u0, v0, _, v1 in boxes[index + 1 :]:
            if u0 >= x1:
                break  # sorted by left edge: no later box reaches this one
            if v0 < y1 and y0 < v1:
                return True
    return False
