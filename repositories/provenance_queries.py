"""Queries of the SQL provenance repository: one event, search, component ids and lineage.

:class:`~repositories.provenance.SqlProvenanceRepository` answers its queries with these
functions of its engine. They are apart from it because reading the index is a concept of its
own, distinct from filling it (exactly-once indexing), replay and retention: rows may hold runs
of alike events (:mod:`repositories._provenance_runs`), so each query selects the rows that may
hold a match in SQL and then unfolds and checks their events. Lineage follows FlowFiles through
events breadth first, bounded as NiFi bounds it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
from sqlalchemy import Engine, Table, and_, or_, select

from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._provenance_ids import row_ids
from repositories._provenance_rows import uuid_at, uuid_position
from repositories._provenance_runs import events_by_id, row_events, run_positions
from repositories._provenance_schema import ATTRIBUTES, EVENTS, LINKS

__all__ = ["MAX_LINEAGE_NODES", "component_ids", "get_event", "lineage_graph", "search_events"]

MAX_LINEAGE_NODES = 1000  # events per lineage computation (NiFi's MAX_LINEAGE_NODES)
_LINEAGE_BATCH = 500  # FlowFile uuids looked up per lineage query


def _covers(table: Table, key: str, low: int, high: int) -> Any:
    """Rows of *table* whose uuid range under *key* overlaps ``low..high``."""
    return and_(table.c.uuid_key == key, table.c.uuid_first <= high, table.c.uuid_last >= low)


def _lineage_entry(found: ProvenanceEvent) -> tuple[str, int, str, list[str], list[str], str]:
    return (
        found.event_type.value,
        found.event_time,
        found.flowfile_uuid,
        list(found.parent_uuids),
        list(found.child_uuids),
        found.component_name or found.component_id,
    )


def get_event(engine: Engine, event_id: int) -> ProvenanceEvent:
    """One event.

    Raises:
        KeyError: no event has that id (it may have been purged by retention).
    """
    with engine.connect() as conn:
        row = conn.execute(
            select(EVENTS)
            .where(EVENTS.c.event_id <= event_id)
            .order_by(EVENTS.c.event_id.desc())
            .limit(1)
        ).first()
        candidates = [] if row is None else [row]
        if row is not None and row.event_group is not None:
            # Rows whose events interleave: the one holding the id starts between the group's
            # first id and it (the group's block of ids is its rows' alone).
            candidates += conn.execute(
                select(EVENTS)
                .where(EVENTS.c.event_id >= row.event_group, EVENTS.c.event_id < row.event_id)
                .order_by(EVENTS.c.event_id.desc())
            ).all()
    for candidate in candidates:
        mapping = candidate._mapping
        if candidate.event_group is None:  # consecutive ids
            if event_id < candidate.event_id + candidate.run_count:
                return row_events(mapping, [event_id - candidate.event_id])[0]
            continue
        ids = row_ids(mapping)
        position = int(np.searchsorted(ids, event_id))
        if position < len(ids) and ids[position] == event_id:
            return row_events(mapping, [position])[0]
    msg = f"no provenance event with id {event_id}"
    raise KeyError(msg)


def search_events(
    engine: Engine,
    indexed_attributes: Collection[str],
    *,
    flowfile_uuid: str | None = None,
    event_type: ProvenanceEventType | str | None = None,
    component_id: str | None = None,
    filename: str | None = None,
    start: int | None = None,
    end: int | None = None,
    attributes: Mapping[str, str] | None = None,
    limit: int = 1000,
) -> list[ProvenanceEvent]:
    """Events matching every given field, oldest first.

    Attributes in ``indexed_attributes`` are searched through the index; others are matched
    on the stored attribute maps of the events the other fields select. SQL selects the rows
    (single events or runs) that may hold a match; each event is then checked.
    """
    query = select(EVENTS)
    number: int | None = None  # the FlowFile's place in a run, when searching by uuid
    if flowfile_uuid is not None:
        key, number = uuid_position(flowfile_uuid)
        query = query.where(_covers(EVENTS, key, number, number))
    if event_type is not None:
        kind = (
            event_type.value
            if isinstance(event_type, ProvenanceEventType)
            else ProvenanceEventType(event_type).value
        )
        query = query.where(EVENTS.c.event_type == kind)
    if component_id is not None:
        query = query.where(EVENTS.c.component_id == component_id)
    if filename is not None:  # a run's filenames may be its uuids
        key, named = uuid_position(filename)
        in_run = and_(EVENTS.c.run_count > 1, _covers(EVENTS, key, named, named))
        query = query.where(or_(EVENTS.c.filename == filename, in_run))
    if start is not None:
        query = query.where(EVENTS.c.last_event_time >= start)
    if end is not None:
        query = query.where(EVENTS.c.event_time <= end)
    unindexed = {}
    for name, value in (attributes or {}).items():
        if name in indexed_attributes:
            matching = select(ATTRIBUTES.c.event_id).where(
                ATTRIBUTES.c.name == name, ATTRIBUTES.c.value == value
            )
            query = query.where(EVENTS.c.event_id.in_(matching))
        else:
            unindexed[name] = value
    query = query.order_by(EVENTS.c.event_id)

    def matches(found: ProvenanceEvent) -> bool:
        return (
            (flowfile_uuid is None or found.flowfile_uuid == flowfile_uuid)
            and (filename is None or found.filename == filename)
            and (start is None or found.event_time >= start)
            and (end is None or found.event_time <= end)
            and all(found.attributes.get(k) == v for k, v in unindexed.items())
        )

    def positions(row: Mapping[str, Any]) -> list[int] | None:
        return None if number is None else run_positions(row, [number])

    result: list[ProvenanceEvent] = []
    if limit <= 0:
        return result
    with engine.connect() as conn:
        # Read as they come, no SQL limit: a row's events may come after the next rows' (ids
        # of interleaved runs), and every row the query selects may match none of its events.
        rows = conn.execution_options(stream_results=True).execute(query)
        for found in events_by_id(rows, positions):
            if matches(found):
                result.append(found)
                if len(result) >= limit:
                    break
    return result


def component_ids(engine: Engine, component: str) -> list[str]:
    """The component ids events were recorded under for *component*, an id or a name.

    Users know components by the names they gave (``flow.add(..., name="zip")``); events
    record both. An id that events name is returned alone; otherwise every id recorded
    with that name (a flow edited between runs may have given it new ids). Names are not
    indexed, so a name is found by a scan: a lookup for the command line, not for loops.
    """
    with engine.connect() as conn:
        by_id = select(EVENTS.c.event_id).where(EVENTS.c.component_id == component).limit(1)
        if conn.execute(by_id).first() is not None:
            return [component]
        by_name = (
            select(EVENTS.c.component_id)
            .where(EVENTS.c.component_name == component)
            .distinct()
            .order_by(EVENTS.c.component_id)
        )
        return [row.component_id for row in conn.execute(by_name)]


def _lineage_events(
    conn: Any, uuids: Sequence[str]
) -> dict[int, tuple[str, int, str, list[str], list[str], str]]:
    """Every event naming one of *uuids* (as subject, parent or child), by id.

    Each is ``(type, time, subject uuid, parent uuids, child uuids, component name)``.
    """
    wanted: dict[str, list[int]] = defaultdict(list)
    for text in uuids:
        key, number = uuid_position(text)
        wanted[key].append(number)
    found: dict[int, tuple[str, int, str, list[str], list[str], str]] = {}
    linked: dict[int, list[str]] = defaultdict(list)  # event id -> uuids it may link
    for table in (EVENTS, LINKS):
        where = or_(*(_covers(table, k, min(ns), max(ns)) for k, ns in wanted.items()))
        for row in conn.execute(select(table).where(where)):
            numbers = [n for n in wanted[row.uuid_key] if row.uuid_first <= n <= row.uuid_last]
            if not numbers:
                continue
            if table is LINKS:
                linked[row.event_id].extend(uuid_at(row.uuid_key, n) for n in numbers)
                continue
            offsets = run_positions(row._mapping, numbers)
            for subject in row_events(row._mapping, offsets):
                found[subject.event_id] = _lineage_entry(subject)
    maybe = set(linked) - set(found)
    if maybe:
        for row in conn.execute(select(EVENTS).where(EVENTS.c.event_id.in_(maybe))):
            event = row_events(row._mapping, [0])[0]
            named = (event.parent_uuids, event.child_uuids)
            # a link range may cover uuids the event does not name (a strided run's gaps)
            if any(u in uuids for u in linked[row.event_id] for uuids in named):
                found[row.event_id] = _lineage_entry(event)
    return found


def lineage_graph(
    engine: Engine, flowfile_uuid: str, *, max_events: int = MAX_LINEAGE_NODES
) -> nx.DiGraph:
    """The lineage around a FlowFile as a graph of FlowFile and event nodes.

    Follows every event naming a FlowFile (as subject, parent or child) to the FlowFiles it
    links, breadth first, stopping at *max_events* events as NiFi bounds lineage queries.
    Edges run parent -> event -> child; an event without parents or children hangs off its
    FlowFile. Event nodes carry ``event_type``, ``time`` and ``component`` (its name, else
    its id), what a picture of the lineage writes on them.
    """
    graph = nx.DiGraph()
    seen_flowfiles: set[str] = set()
    seen_events: set[int] = set()
    frontier: dict[str, None] = {flowfile_uuid: None}
    with engine.connect() as conn:
        while frontier and len(seen_events) < max_events:
            batch = list(itertools.islice(frontier, _LINEAGE_BATCH))
            for uuid in batch:
                del frontier[uuid]
            seen_flowfiles.update(batch)
            graph.add_nodes_from(batch, kind="flowfile")
            found = _lineage_events(conn, batch)
            new = sorted(set(found) - seen_events)[: max_events - len(seen_events)]
            for event_id in new:
                kind, moment, subject, parents, children, component = found[event_id]
                seen_events.add(event_id)
                node = f"event:{event_id}"
                graph.add_node(
                    node, kind="event", event_type=kind, time=moment, component=component
                )
                linked = [subject, *parents, *children]
                graph.add_nodes_from((u for u in linked if u not in graph), kind="flowfile")
                if parents or children:
                    graph.add_edges_from((p, node) for p in parents)
                    graph.add_edges_from((node, c) for c in children)
                else:
                    graph.add_edge(subject, node)
                for uuid in linked:
                    if uuid not in seen_flowfiles:
                        frontier[uuid] = None
    return graph
