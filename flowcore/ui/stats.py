"""``/api/status``: what the canvas writes on processors and connections.

Read from the run's ``status.json`` (:mod:`flowcore.driver.live_status`), which counts this
run's FlowFiles per processor and relationship and what is queued per connection. NiFi's boxes
show five-minute windows; flowcore's status counts the run, so :func:`status_for_ui`'s numbers
are the run's, and :class:`FiveMinuteWindow` adds NiFi's window beside them. Per processor:
**out** is what it sent to any relationship (a relationship led to several connections counts
each clone, as NiFi does), **in** what its incoming connections carried (each its share of such
a fan-out), **tasks** its stage's runs, **tasks_duration_nanos** the time its tasks ran (its own
share of a fused stage's, as :mod:`flowcore.engine._timing` measures it; ``tasks_duration`` the
same as NiFi writes it, ``HH:MM:SS.mmm``).
Per connection: queued FlowFiles and bytes, and the back-pressure fill NiFi draws (the fuller
of the two thresholds, in percent).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Mapping
from typing import Any

import attrs
import sqlalchemy

from flowcore.clock import now_ms
from flowcore.driver.live_status import task_duration
from flowcore.errors import FlowcoreError
from flowcore.units import parse_data_size

__all__ = ["WINDOW_MS", "FiveMinuteWindow", "status_for_ui"]


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
    nanos = (status.get("tasks_duration_nanos") or {}) if same_flow else {}
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
            "tasks_duration_nanos": int(nanos.get(component["name"], 0)),
            "tasks_duration": task_duration(nanos.get(component["name"], 0)),
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


#: NiFi's statistics window: the last five minutes.
WINDOW_MS = 5 * 60 * 1000
#: How often the window's bytes read and written are summed from provenance again (ms).
REFRESH_MS = 5_000
#: Events of folded runs (many FlowFiles' alike events in one row) unfolded per refresh at
#: most; single events are summed by the database, without limit.
MAX_EVENTS = 200_000
#: Event types whose FlowFile's content the component wrote (its size) ...
WRITES = frozenset({"CREATE", "RECEIVE", "FETCH", "CONTENT_MODIFIED", "JOIN"})
#: ... and read: SEND's and FORK's (the parent split) whole content, CONTENT_MODIFIED's before.
READS = frozenset({"SEND", "FORK"})


@attrs.frozen
class _Snapshot:
    updated: int
    run: tuple[Any, Any]
    counts: Mapping[str, tuple[int, ...]]


def _counts(shown: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    return {
        pid: (
            p["in_count"],
            p["in_bytes"],
            p["out_count"],
            p["out_bytes"],
            p["tasks"],
            p["tasks_duration_nanos"],
        )
        for pid, p in shown["processors"].items()
    }


class FiveMinuteWindow:
    """NiFi's 5-minute statistics (In, Read/Write, Out, Tasks/Time) from the repository's records.

    ``status.json`` counts the run so far; the window is its counts now less its counts five
    minutes ago, from the snapshots this server has seen (each status it serves is one). A run
    that started within the window counts whole; one that ended before it counts nothing; when
    the server has no snapshot from five minutes ago (it started later), the window starts at
    its first snapshot and says so (``start``). Bytes read and written are summed from the
    provenance events of the window: content written by CREATE, RECEIVE, FETCH, JOIN and
    CONTENT_MODIFIED, read by SEND, FORK (the parent split) and CONTENT_MODIFIED (before).
    Task time is the run's ``tasks_duration_nanos`` now less five minutes ago, as counts are.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshots: collections.deque[_Snapshot] = collections.deque()
        self._io: tuple[int, dict[str, list[int]], bool] | None = None

    def _record(self, shown: Mapping[str, Any], now: int) -> None:
        run = shown.get("run") or {}
        snapshot = _Snapshot(shown.get("updated") or 0, (run.get("pid"), run.get("started")), {})
        if not snapshot.updated:
            return
        with self._lock:
            if self._snapshots and self._snapshots[-1].updated == snapshot.updated:
                return
            self._snapshots.append(attrs.evolve(snapshot, counts=_counts(shown)))
            # keep one snapshot older than the window, the baseline
            while len(self._snapshots) > 1 and self._snapshots[1].updated <= now - WINDOW_MS:
                self._snapshots.popleft()

    def _baseline(
        self, shown: Mapping[str, Any], now: int
    ) -> tuple[Mapping[str, tuple[int, ...]] | None, int]:
        """The counts the window subtracts (None: zeros) and when the window starts."""
        cutoff = now - WINDOW_MS
        run = shown.get("run") or {}
        key = (run.get("pid"), run.get("started"))
        ended = run.get("ended")
        if not shown.get("updated") or (ended and ended < cutoff):
            return _counts(shown), cutoff  # nothing happened in the window
        if (run.get("started") or 0) >= cutoff:
            return None, cutoff  # the whole run is in the window
        with self._lock:
            mine = [s for s in self._snapshots if s.run == key]
        before = [s for s in mine if s.updated <= cutoff]
        if before:
            return before[-1].counts, cutoff
        if mine:
            return mine[0].counts, mine[0].updated
        return _counts(shown), now

    def _read_written(self, view: Any, now: int) -> tuple[dict[str, list[int]], bool]:
        """Bytes read and written per component id in the window (refreshed every 5 s)."""
        cached = self._io
        if cached is not None and now - cached[0] < REFRESH_MS:
            return cached[1], cached[2]
        cutoff = now - WINDOW_MS
        totals: dict[str, list[int]] = {}
        truncated = False
        try:
            provenance = view.provenance
        except FlowcoreError:
            return totals, truncated
        from repositories._provenance_runs import row_events  # noqa: PLC0415
        from repositories._provenance_schema import EVENTS  # noqa: PLC0415

        def add(component: str, kind: str, size: int, before: int) -> None:
            entry = totals.setdefault(component, [0, 0])
            if kind in READS:
                entry[0] += size
            elif kind == "CONTENT_MODIFIED":
                entry[0] += before
            if kind in WRITES:
                entry[1] += size

        singles = (
            sqlalchemy.select(
                EVENTS.c.component_id,
                EVENTS.c.event_type,
                sqlalchemy.func.sum(EVENTS.c.file_size),
                sqlalchemy.func.sum(sqlalchemy.func.coalesce(EVENTS.c.previous_file_size, 0)),
            )
            .where(EVENTS.c.run_count == 1, EVENTS.c.event_time >= cutoff)
            .group_by(EVENTS.c.component_id, EVENTS.c.event_type)
        )
        runs = (
            sqlalchemy.select(EVENTS)
            .where(EVENTS.c.run_count > 1, EVENTS.c.last_event_time >= cutoff)
            .order_by(EVENTS.c.event_id.desc())
        )
        unfolded = 0
        with provenance.engine.connect() as connection:
            for component, kind, size, before in connection.execute(singles):
                add(component, kind, int(size or 0), int(before or 0))
            for row in connection.execute(runs):  # runs of alike events, unfolded for sizes
                unfolded += row.run_count
                if unfolded > MAX_EVENTS:
                    truncated = True
                    break
                for event in row_events(row._mapping):
                    if event.event_time >= cutoff:
                        add(
                            event.component_id,
                            event.event_type.value,
                            event.file_size,
                            event.previous_file_size or 0,
                        )
        self._io = (now, totals, truncated)
        return totals, truncated

    def apply(self, shown: dict[str, Any], view: Any, now: int | None = None) -> dict[str, Any]:
        """*shown* (:func:`status_for_ui`'s) with each processor's 5-minute ``window``.

        Also ``five_minutes``: when the window starts and ends, whether it covers all five
        minutes, and whether provenance had more folded events than :data:`MAX_EVENTS`.
        """
        now = now_ms() if now is None else now
        self._record(shown, now)
        baseline, start = self._baseline(shown, now)
        io, truncated = self._read_written(view, now)
        for pid, counts in _counts(shown).items():
            base = (baseline or {}).get(pid, (0,) * len(counts))
            delta = [max(0, a - b) for a, b in zip(counts, base, strict=True)]
            read, written = io.get(pid, [0, 0])
            shown["processors"][pid]["window"] = {
                "in_count": delta[0],
                "in_bytes": delta[1],
                "out_count": delta[2],
                "out_bytes": delta[3],
                "tasks": delta[4],
                "tasks_duration_nanos": delta[5],
                "tasks_duration": task_duration(delta[5]),
                "read_bytes": read,
                "written_bytes": written,
            }
        shown["five_minutes"] = {
            "start": start,
            "end": now,
            "complete": start <= now - WINDOW_MS,
            "truncated": truncated,
        }
        return shown
