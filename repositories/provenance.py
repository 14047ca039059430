"""The SQL provenance repository: event files from tasks, indexed into SQL by the driver.

Tasks append events to files of their own (:class:`EventFileWriter`, msgpack, written under a
``.part`` name then renamed); the driver commits the file names in its write-ahead log
transaction and then calls :meth:`SqlProvenanceRepository.index_files`. Indexing records each file
in the same SQL transaction as its events, so a crash between commit and indexing is finished at
start-up without losing or duplicating an event.

SQLite (a file, WAL mode, tuned pragmas) is the default; any SQLAlchemy URL works, e.g.
``postgresql+psycopg://user@host/flowcore`` for shared or large deployments. Search covers NiFi's
indexed fields (FlowFile uuid, filename, event type, component, time range) and the attributes
listed in ``indexed_attributes``; lineage is returned as a networkx graph, bounded as NiFi bounds
it; retention deletes by age (30 days) and size (10 GB), NiFi's shipped defaults.
"""

from __future__ import annotations

import itertools
import json
import os
import time
import uuid as uuid_module
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import networkx as nx
from sqlalchemy import Engine, create_engine, delete, event, func, insert, select, union, update

from flowcore.errors import ReplayError, RepositoryError, WalCorruptionError
from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim, new_uuid
from flowcore.provenance import ProvenanceEvent, ProvenanceEventType
from flowcore.units import parse_data_size, parse_time_period
from repositories._provenance_schema import ATTRIBUTES, COUNTERS, EVENTS, FILES, LINKS, METADATA
from repositories._wal_codec import pack, unpack
from repositories.records import Finding, Transaction

__all__ = [
    "DEFAULT_MAX_STORAGE_SIZE",
    "DEFAULT_MAX_STORAGE_TIME",
    "MAX_LINEAGE_NODES",
    "EventFileWriter",
    "SqlProvenanceRepository",
]

DEFAULT_MAX_STORAGE_TIME = "30 days"  # nifi.provenance.repository.max.storage.time (shipped)
DEFAULT_MAX_STORAGE_SIZE = "10 GB"  # nifi.provenance.repository.max.storage.size (shipped)
MAX_LINEAGE_NODES = 1000  # events per lineage computation (NiFi's MAX_LINEAGE_NODES)
PURGE_BATCH = 10_000  # events deleted per statement during retention
INSERT_BATCH = 5_000  # rows per executemany
_LINEAGE_BATCH = 500  # FlowFile uuids looked up per lineage query
_EVENT_SUFFIX = ".events"
_NEXT_EVENT_ID = "next_event_id"


def _claim_text(claim: ContentClaim | None) -> str | None:
    if claim is None:
        return None
    rc = claim.resource_claim
    return f"{rc.container}/{rc.section}/{rc.id}:{claim.offset}:{claim.length}"


def _claim_from_text(text: str | None) -> ContentClaim | None:
    if not text:
        return None
    path, offset, length = text.rsplit(":", 2)
    container, section, claim_id = path.split("/", 2)
    return ContentClaim(ResourceClaim(container, section, claim_id), int(offset), int(length))


def _to_wire(event: ProvenanceEvent) -> dict[str, Any]:
    data = attrs.asdict(event, recurse=False)
    data["event_type"] = event.event_type.value
    data["previous_attributes"] = dict(event.previous_attributes)
    data["updated_attributes"] = dict(event.updated_attributes)
    data["parent_uuids"] = list(event.parent_uuids)
    data["child_uuids"] = list(event.child_uuids)
    data["content_claim"] = _claim_text(event.content_claim)
    data["previous_content_claim"] = _claim_text(event.previous_content_claim)
    return data


def _from_wire(data: Mapping[str, Any]) -> ProvenanceEvent:
    fields = dict(data)
    fields["event_type"] = ProvenanceEventType(fields["event_type"])
    fields["content_claim"] = _claim_from_text(fields.get("content_claim"))
    fields["previous_content_claim"] = _claim_from_text(fields.get("previous_content_claim"))
    return ProvenanceEvent(**fields)


class EventFileWriter:
    """A task's provenance event file: events appended in memory, written once on close.

    It satisfies the session's ``ProvenanceEventSink`` protocol, so a session in a Spark task can
    write its events without touching the database.
    """

    def __init__(self, directory: str | os.PathLike[str], owner: str = "") -> None:
        stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in owner) or "events"
        self.directory = Path(directory)
        self.name = f"{stem}-{uuid_module.uuid4().hex}{_EVENT_SUFFIX}"
        self._events: list[dict[str, Any]] = []

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Buffer *events*, in order."""
        self._events.extend(_to_wire(e) for e in events)

    def __len__(self) -> int:
        return len(self._events)

    def close(self, *, sync: bool = True) -> str | None:
        """Write the file; return its name (None when there were no events)."""
        if not self._events:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / self.name
        partial = final.with_name(final.name + ".part")
        with open(partial, "wb") as out:
            out.write(pack(self._events))
            out.flush()
            if sync:
                os.fsync(out.fileno())
        os.replace(partial, final)
        self._events = []
        return self.name


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.execute("PRAGMA cache_size=-65536")  # 64 MB
    cursor.close()


class SqlProvenanceRepository:
    """Provenance events in SQL: exactly-once indexing, search, lineage, replay, retention.

    Args:
        url: a SQLAlchemy URL, or a path for a SQLite file.
        event_directory: where tasks write event files (default: next to a SQLite file).
        max_storage_time: events older than this are purged (NiFi's ``max.storage.time``).
        max_storage_size: the oldest events are purged while the store is larger.
        indexed_attributes: attribute names searchable by value (NiFi's ``indexed.attributes``);
            ``filename`` is always searchable.
    """

    def __init__(
        self,
        url: str | os.PathLike[str],
        *,
        event_directory: str | os.PathLike[str] | None = None,
        max_storage_time: str = DEFAULT_MAX_STORAGE_TIME,
        max_storage_size: str = DEFAULT_MAX_STORAGE_SIZE,
        indexed_attributes: Collection[str] = (),
    ) -> None:
        text = os.fspath(url)
        if "://" not in text:
            path = Path(text)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = f"sqlite:///{path}"
            event_directory = event_directory or path.parent / "events"
        self.url = text
        self.event_directory = Path(event_directory or "provenance-events")
        self.max_storage_ms = int(parse_time_period(max_storage_time, "ms"))
        self.max_storage_bytes = int(parse_data_size(max_storage_size, "B"))
        self.indexed_attributes = frozenset(indexed_attributes)
        self.engine: Engine = create_engine(text)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        METADATA.create_all(self.engine)
        with self.engine.connect() as conn:
            self._next_id = self._load_next_id(conn)

    @staticmethod
    def _load_next_id(conn: Any) -> int:
        stored = conn.execute(
            select(COUNTERS.c.value).where(COUNTERS.c.name == _NEXT_EVENT_ID)
        ).scalar()
        if stored is not None:
            return int(stored)
        highest = conn.execute(select(func.max(EVENTS.c.event_id))).scalar()
        next_id = 0 if highest is None else highest + 1
        conn.execute(insert(COUNTERS), {"name": _NEXT_EVENT_ID, "value": next_id})
        conn.commit()
        return next_id

    def writer(self, owner: str = "") -> EventFileWriter:
        """An event file writer for a task attempt."""
        return EventFileWriter(self.event_directory, owner)

    # --- ingest -------------------------------------------------------------------------------

    def _rows(
        self, events: Sequence[ProvenanceEvent], first_id: int
    ) -> tuple[list[dict], list[dict], list[dict]]:
        rows, links, attributes = [], [], []
        for offset, e in enumerate(events):
            event_id = first_id + offset
            previous = json.dumps(dict(e.previous_attributes), separators=(",", ":"))
            updated = json.dumps(dict(e.updated_attributes), separators=(",", ":"))
            rows.append(
                {
                    "event_id": event_id,
                    "event_time": e.event_time,
                    "event_type": e.event_type.value,
                    "flowfile_uuid": e.flowfile_uuid,
                    "component_id": e.component_id,
                    "component_type": e.component_type,
                    "component_name": e.component_name,
                    "file_size": e.file_size,
                    "previous_file_size": e.previous_file_size,
                    "event_duration": e.event_duration,
                    "entry_date": e.entry_date,
                    "lineage_start_date": e.lineage_start_date,
                    "relationship": e.relationship,
                    "details": e.details,
                    "transit_uri": e.transit_uri,
                    "source_system_flowfile_identifier": e.source_system_flowfile_identifier,
                    "alternate_identifier_uri": e.alternate_identifier_uri,
                    "source_queue_identifier": e.source_queue_identifier,
                    "filename": e.filename,
                    "content_claim": _claim_text(e.content_claim),
                    "previous_content_claim": _claim_text(e.previous_content_claim),
                    "parent_uuids": json.dumps(list(e.parent_uuids)),
                    "child_uuids": json.dumps(list(e.child_uuids)),
                    "previous_attributes": previous,
                    "updated_attributes": updated,
                    "size_bytes": 200 + len(previous) + len(updated),
                }
            )
            links.extend({"event_id": event_id, "uuid": u, "role": "p"} for u in e.parent_uuids)
            links.extend({"event_id": event_id, "uuid": u, "role": "c"} for u in e.child_uuids)
            if self.indexed_attributes:
                current = e.attributes
                attributes.extend(
                    {"event_id": event_id, "name": name, "value": current[name]}
                    for name in self.indexed_attributes
                    if name in current
                )
        return rows, links, attributes

    def _insert(self, conn: Any, events: Sequence[ProvenanceEvent]) -> list[ProvenanceEvent]:
        first = self._next_id
        rows, links, attributes = self._rows(events, first)
        for table, batch in ((EVENTS, rows), (LINKS, links), (ATTRIBUTES, attributes)):
            for start in range(0, len(batch), INSERT_BATCH):
                conn.execute(insert(table), batch[start : start + INSERT_BATCH])
        self._next_id = first + len(events)
        conn.execute(
            update(COUNTERS).where(COUNTERS.c.name == _NEXT_EVENT_ID).values(value=self._next_id)
        )
        return [attrs.evolve(e, event_id=first + i) for i, e in enumerate(events)]

    def register(self, events: Iterable[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Store events directly (no event file), assigning ids; return them."""
        batch = list(events)
        if not batch:
            return []
        with self.engine.begin() as conn:
            return self._insert(conn, batch)

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Act as a session's event sink (used when the driver itself runs the session)."""
        self.register(events)

    def index_files(self, names: Iterable[str]) -> int:
        """Index committed event files, each exactly once; return how many events were added.

        A file already recorded as indexed is skipped, so calling this again after a crash
        finishes the work without duplicating events.

        Raises:
            RepositoryError: a named event file is missing or unreadable.
        """
        added = 0
        for name in names:
            with self.engine.begin() as conn:
                if conn.execute(select(FILES.c.name).where(FILES.c.name == name)).first():
                    continue
                path = self.event_directory / name
                try:
                    wires = unpack(path.read_bytes())
                except FileNotFoundError:
                    msg = (
                        f"provenance event file {path} named by a committed transaction is missing"
                    )
                    raise RepositoryError(msg) from None
                except ValueError as ex:
                    msg = f"provenance event file {path} is damaged: {ex}"
                    raise WalCorruptionError(msg) from None
                events = [_from_wire(w) for w in wires]
                self._insert(conn, events)
                conn.execute(
                    insert(FILES),
                    {
                        "name": name,
                        "events": len(events),
                        "indexed_at": time.time_ns() // 1_000_000,
                    },
                )
                added += len(events)
        return added

    def remove_indexed_files(self, names: Iterable[str]) -> None:
        """Delete event files already indexed (after the log has recorded that)."""
        for name in names:
            (self.event_directory / name).unlink(missing_ok=True)

    # --- queries ----------------------------------------------------------------------------

    @staticmethod
    def _event(row: Any) -> ProvenanceEvent:
        m = row._mapping
        return ProvenanceEvent(
            event_type=ProvenanceEventType(m["event_type"]),
            flowfile_uuid=m["flowfile_uuid"],
            component_id=m["component_id"],
            component_type=m["component_type"],
            event_time=m["event_time"],
            file_size=m["file_size"],
            component_name=m["component_name"] or "",
            event_id=m["event_id"],
            event_duration=m["event_duration"] if m["event_duration"] is not None else -1,
            entry_date=m["entry_date"] or 0,
            lineage_start_date=m["lineage_start_date"] or 0,
            parent_uuids=tuple(json.loads(m["parent_uuids"])),
            child_uuids=tuple(json.loads(m["child_uuids"])),
            relationship=m["relationship"],
            details=m["details"],
            transit_uri=m["transit_uri"],
            source_system_flowfile_identifier=m["source_system_flowfile_identifier"],
            alternate_identifier_uri=m["alternate_identifier_uri"],
            source_queue_identifier=m["source_queue_identifier"],
            previous_attributes=json.loads(m["previous_attributes"]),
            updated_attributes=json.loads(m["updated_attributes"]),
            previous_content_claim=_claim_from_text(m["previous_content_claim"]),
            content_claim=_claim_from_text(m["content_claim"]),
            previous_file_size=m["previous_file_size"],
        )

    def get(self, event_id: int) -> ProvenanceEvent:
        """One event.

        Raises:
            KeyError: no event has that id (it may have been purged by retention).
        """
        with self.engine.connect() as conn:
            row = conn.execute(select(EVENTS).where(EVENTS.c.event_id == event_id)).first()
        if row is None:
            msg = f"no provenance event with id {event_id}"
            raise KeyError(msg)
        return self._event(row)

    def search(
        self,
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
        on the stored attribute maps of the events the other fields select.
        """
        query = select(EVENTS)
        if flowfile_uuid is not None:
            query = query.where(EVENTS.c.flowfile_uuid == flowfile_uuid)
        if event_type is not None:
            kind = (
                event_type.value
                if isinstance(event_type, ProvenanceEventType)
                else ProvenanceEventType(event_type).value
            )
            query = query.where(EVENTS.c.event_type == kind)
        if component_id is not None:
            query = query.where(EVENTS.c.component_id == component_id)
        if filename is not None:
            query = query.where(EVENTS.c.filename == filename)
        if start is not None:
            query = query.where(EVENTS.c.event_time >= start)
        if end is not None:
            query = query.where(EVENTS.c.event_time <= end)
        unindexed = {}
        for name, value in (attributes or {}).items():
            if name in self.indexed_attributes:
                matching = select(ATTRIBUTES.c.event_id).where(
                    ATTRIBUTES.c.name == name, ATTRIBUTES.c.value == value
                )
                query = query.where(EVENTS.c.event_id.in_(matching))
            else:
                unindexed[name] = value
        query = query.order_by(EVENTS.c.event_id)
        if not unindexed:
            query = query.limit(limit)
        found = []
        with self.engine.connect() as conn:
            for row in conn.execute(query):
                event_ = self._event(row)
                if unindexed and any(event_.attributes.get(k) != v for k, v in unindexed.items()):
                    continue
                found.append(event_)
                if len(found) >= limit:
                    break
        return found

    def max_event_id(self) -> int:
        """The largest event id, -1 when empty."""
        return self._next_id - 1

    def count(self) -> int:
        """How many events are stored."""
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(EVENTS)).scalar() or 0

    def lineage(self, flowfile_uuid: str, *, max_events: int = MAX_LINEAGE_NODES) -> nx.DiGraph:
        """The lineage around a FlowFile as a graph of FlowFile and event nodes.

        Follows every event naming a FlowFile (as subject, parent or child) to the FlowFiles it
        links, breadth first, stopping at *max_events* events as NiFi bounds lineage queries.
        Edges run parent -> event -> child; an event without parents or children hangs off its
        FlowFile.
        """
        graph = nx.DiGraph()
        seen_flowfiles: set[str] = set()
        seen_events: set[int] = set()
        frontier: dict[str, None] = {flowfile_uuid: None}
        columns = (
            EVENTS.c.event_id,
            EVENTS.c.event_type,
            EVENTS.c.event_time,
            EVENTS.c.flowfile_uuid,
            EVENTS.c.parent_uuids,
            EVENTS.c.child_uuids,
        )
        with self.engine.connect() as conn:
            while frontier and len(seen_events) < max_events:
                batch = list(itertools.islice(frontier, _LINEAGE_BATCH))
                for uuid in batch:
                    del frontier[uuid]
                seen_flowfiles.update(batch)
                graph.add_nodes_from(batch, kind="flowfile")
                related = union(
                    select(EVENTS.c.event_id).where(EVENTS.c.flowfile_uuid.in_(batch)),
                    select(LINKS.c.event_id).where(LINKS.c.uuid.in_(batch)),
                ).subquery()
                query = select(*columns).where(EVENTS.c.event_id.in_(select(related.c.event_id)))
                if seen_events:
                    query = query.where(EVENTS.c.event_id.not_in(seen_events))
                query = query.order_by(EVENTS.c.event_id).limit(max_events - len(seen_events))
                for event_id, kind, moment, subject, parents_json, children_json in conn.execute(
                    query
                ):
                    seen_events.add(event_id)
                    parents, children = json.loads(parents_json), json.loads(children_json)
                    node = f"event:{event_id}"
                    graph.add_node(node, kind="event", event_type=kind, time=moment)
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

    # --- replay -----------------------------------------------------------------------------

    def replay(
        self,
        event_id: int,
        *,
        content: Any,
        flowfiles: Any,
        queues: Collection[str],
        component_id: str = "flowcore",
        now: int | None = None,
    ) -> FlowFile:
        """Replay an event: a new FlowFile with its content, enqueued where it came from.

        Follows NiFi's ``FlowController.replayFlowFile``: the content and attributes from before
        the event (or after it when the event has no previous claim), ``flowfile.replay`` set,
        a REPLAY event linking the original to the copy, and the same refusals.

        Raises:
            ReplayError: the event is a JOIN, its content is gone, it has no source queue, or
                that queue no longer exists.
        """
        original = self.get(event_id)
        if original.event_type is ProvenanceEventType.JOIN:
            msg = (
                f"Cannot replay event {event_id}: events created from multiple parents (JOIN) "
                "cannot be replayed; replay one of its parents' events instead"
            )
            raise ReplayError(msg)
        use_previous = original.previous_content_claim is not None
        claim = original.previous_content_claim if use_previous else original.content_claim
        if claim is not None and not content.exists(claim.resource_claim):
            msg = (
                f"Cannot replay event {event_id}: Content is no longer available in Content "
                f"Repository ({claim}); raise the content archive retention to keep it longer"
            )
            raise ReplayError(msg)
        queue_id = original.source_queue_identifier
        if queue_id is None:
            msg = f"Cannot replay event {event_id}: it does not specify the Source FlowFile Queue"
            raise ReplayError(msg)
        if queue_id not in queues:
            msg = (
                f"Cannot replay event {event_id}: Source FlowFile Queue with ID {queue_id} "
                "no longer exists in the flow"
            )
            raise ReplayError(msg)
        moment = now if now is not None else time.time_ns() // 1_000_000
        base = dict(original.previous_attributes if use_previous else original.attributes)
        for key in ("discard.reason", "alternate.identifier"):
            base.pop(key, None)
        base.update({"flowfile.replay": "true", "flowfile.replay.timestamp": str(moment)})
        (flowfile_id,) = flowfiles.next_flowfile_ids(1)
        replayed = FlowFile.create(flowfile_id, moment, base, uuid=new_uuid(), content=claim)
        replayed = replayed.replace(lineage_start_date=original.lineage_start_date or moment)
        if claim is not None:
            content.increment_claimant_count(claim.resource_claim)
        segment = flowfiles.write_segment(queue_id, [replayed], owner="replay")
        flowfiles.commit(Transaction(enqueued=[segment]))
        self.register(
            [
                ProvenanceEvent(
                    event_type=ProvenanceEventType.REPLAY,
                    flowfile_uuid=replayed.uuid,
                    component_id=component_id,
                    component_type="flowcore",
                    event_time=moment,
                    file_size=replayed.size,
                    parent_uuids=(original.flowfile_uuid,),
                    child_uuids=(replayed.uuid,),
                    updated_attributes=replayed.attributes,
                    content_claim=claim,
                    source_queue_identifier=queue_id,
                    lineage_start_date=replayed.lineage_start_date,
                )
            ]
        )
        return replayed

    # --- retention and checks ---------------------------------------------------------------

    def _delete_ids(self, conn: Any, ids: Sequence[int]) -> None:
        for table in (LINKS, ATTRIBUTES):
            conn.execute(delete(table).where(table.c.event_id.in_(ids)))
        conn.execute(delete(EVENTS).where(EVENTS.c.event_id.in_(ids)))

    def purge(self, now: int | None = None) -> int:
        """Delete events older than the storage time, then the oldest while over the size limit.

        Deletes in batches of :data:`PURGE_BATCH`; returns how many events were removed.
        """
        moment = now if now is not None else time.time_ns() // 1_000_000
        cutoff = moment - self.max_storage_ms
        removed = 0
        while True:  # by age: one transaction per batch, so readers are never blocked long
            with self.engine.begin() as conn:
                old = select(EVENTS.c.event_id).where(EVENTS.c.event_time < cutoff)
                ids = list(conn.execute(old.limit(PURGE_BATCH)).scalars())
                if not ids:
                    break
                self._delete_ids(conn, ids)
                removed += len(ids)
        with self.engine.connect() as conn:
            total = conn.execute(select(func.coalesce(func.sum(EVENTS.c.size_bytes), 0))).scalar()
        excess = int(total or 0) - self.max_storage_bytes
        after = -1
        while excess > 0:  # by size: the oldest events, just enough of them
            with self.engine.begin() as conn:
                oldest = conn.execute(
                    select(EVENTS.c.event_id, EVENTS.c.size_bytes)
                    .where(EVENTS.c.event_id > after)
                    .order_by(EVENTS.c.event_id)
                    .limit(PURGE_BATCH)
                ).all()
                if not oldest:
                    break
                ids = []
                for event_id, size in oldest:
                    ids.append(event_id)
                    excess -= size
                    if excess <= 0:
                        break
                self._delete_ids(conn, ids)
                removed += len(ids)
                after = ids[-1]
        return removed

    def check(self, *, fix: bool = False) -> list[Finding]:
        """Report event files on disk that were indexed (removable) or never committed (orphans)."""
        findings = []
        if not self.event_directory.exists():
            return findings
        with self.engine.connect() as conn:
            indexed = {r[0] for r in conn.execute(select(FILES.c.name))}
        for path in sorted(self.event_directory.iterdir()):
            if path.name.endswith(".part"):
                if fix:
                    path.unlink(missing_ok=True)
                findings.append(
                    Finding("provenance", str(path), "half-written event file", fixed=fix)
                )
            elif path.name in indexed:
                if fix:
                    path.unlink(missing_ok=True)
                findings.append(
                    Finding("provenance", str(path), "event file already indexed", fixed=fix)
                )
        return findings

    def close(self) -> None:
        """Release database connections."""
        self.engine.dispose()
