"""``/api/status``: what the canvas writes on processors and connections.

Read from the run's ``status.json`` (:mod:`flowcore.driver.live_status`), which counts this
run's FlowFiles per processor and relationship and what is queued per connection. NiFi's boxes
show five-minute windows; flowcore's status counts the run, so the numbers here are the run's
(the UI says "this run"). Per processor: **out** is what it sent to any relationship (a
relationship led to several connections counts each clone, as NiFi does), **in** what its
incoming connections carried (each its share of such a fan-out), **tasks** its stage's runs.
Per connection: queued FlowFiles and bytes, and the back-pressure fill NiFi draws (the fuller
of the two thresholds, in percent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowcore.units import parse_data_size

__all__ = ["status_for_ui"]


def _pair(value: Any) -> tuple[int, int]:
    try:
        count, size = value
        return int(count), int(size)
    except (TypeError, ValueError):
        return 0, 0


def _fill(queued: tuple[int, int], objects: int | None, data_size: str | None) -> float:
    """Percent of the back-pressure thresholds reached: the fuller of the two (NiFi's bar)."""
    fills = [0.0]
    if objects and objects > 0:
        fills.append(100.0 * queued[0] / objects)
    if data_size:
        try:
            limit = parse_data_size(data_size, "B")
        except ValueError:
            limit = 0
        if limit > 0:
            fills.append(100.0 * queued[1] / limit)
    return round(min(max(fills), 100.0), 1)


def status_for_ui(flow: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """Status per processor and connection of *flow* (its ``/api/flow`` document)."""
    transfers = status.get("transfers") or {}
    stages = status.get("stages") or {}
    live = bool(status.get("live"))
    same_flow = status.get("flow") in (None, flow["name"])
    names = {c["id"]: c["name"] for c in flow["components"]}
    queued = {}
    for entry in status.get("connections") or ():
        queued[entry.get("id")] = entry
    connections = {}
    received: dict[str, list[int]] = {}
    # A relationship led to several connections sends each a clone: split its count evenly.
    fan_out: dict[tuple[str, str], int] = {}
    for connection in flow["connections"]:
        for relationship in connection["relationships"]:
            key = (connection["source"], relationship)
            fan_out[key] = fan_out.get(key, 0) + 1
    for connection in flow["connections"]:
        entry = queued.get(connection["id"], {}) if same_flow else {}
        mine = transfers.get(names.get(connection["source"], ""), {}) if same_flow else {}
        carried = [
            tuple(v // fan_out[(connection["source"], r)] for v in _pair(mine.get(r)))
            for r in connection["relationships"]
        ]
        count, size = sum(c for c, _ in carried), sum(s for _, s in carried)
        into = received.setdefault(connection["destination"], [0, 0])
        into[0] += count
        into[1] += size
        pair = (int(entry.get("flowfiles", 0)), int(entry.get("bytes", 0)))
        pressure = entry.get("back_pressure") or {}
        connections[connection["id"]] = {
            "queued_count": pair[0],
            "queued_bytes": pair[1],
            "penalized": int(entry.get("penalized", 0)),
            "in_bins": int(entry.get("in_bins", 0)),
            "carried_count": count,
            "carried_bytes": size,
            "back_pressure_fill": _fill(
                pair,
                connection["back_pressure_object_threshold"],
                connection["back_pressure_data_size_threshold"],
            ),
            "over_back_pressure": bool(pressure.get("over")),
        }
    processors = {}
    for component in flow["components"]:
        mine = transfers.get(component["name"], {}) if same_flow else {}
        sent = [_pair(v) for v in mine.values()]
        stage = stages.get(component.get("stage") or "", {}) if same_flow else {}
        state = component["state"]
        if live and state == "STOPPED":
            state = "RUNNING"
        into = received.get(component["id"], [0, 0])
        processors[component["id"]] = {
            "state": state,
            "in_count": into[0],
            "in_bytes": into[1],
            "out_count": sum(c for c, _ in sent),
            "out_bytes": sum(s for _, s in sent),
            "tasks": int(stage.get("runs", 0)),
            "relationships": {r: list(_pair(v)) for r, v in mine.items()},
        }
    run = status.get("run") or {}
    return {
        "flow": status.get("flow"),
        "live": live,
        "holder": status.get("holder"),
        "updated": status.get("updated"),
        "run": run,
        "micro_batch": status.get("micro_batch") or {},
        "window": "this run",
        "processors": processors,
        "connections": connections,
        "stages": stages,
    }
