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
The queries themselves are in :mod:`repositories.provenance_queries`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import attrs
import networkx as nx
from sqlalchemy import (
    Engine,
    Table,
    create_engine,
    delete,
    event,
    exc,
    func,
    insert,
    select,
    update,
)

from flowcore.clock import now_ms
from flowcore.errors import ReplayError, RepositoryError
from flowcore.flowfile import FlowFile, new_uuid
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from flowcore.units import parse_data_size, parse_time_period
from repositories._database_faults import named_faults, with_named_faults
from repositories._provenance_caps import MAX_ATTRIBUTE_LENGTH
from repositories._provenance_ids import placed_records, row_ids
from repositories._provenance_rows import ROW_COLUMNS, decode_event_file, event_record
from repositories._provenance_runs import EventFolder, kept_records, row_events
from repositories._provenance_schema import (
    ATTRIBUTES,
    COUNTERS,
    EVENTS,
    FILES,
    LINKS,
    create_or_upgrade,
    upgraded_in_place,
)
from repositories.event_files import EventFileWriter
from repositories.protocols import ContentRepository, FlowFileRepository
from repositories.provenance_queries import (
    MAX_LINEAGE_NODES,
    component_ids,
    get_event,
    lineage_graph,
    search_events,
)
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
PURGE_BATCH = 10_000  # events deleted per statement during retention
INSERT_BATCH = 5_000  # rows per executemany
_FILES_PER_TRANSACTION = 64  # event files indexed per SQL transaction
_NEXT_EVENT_ID = "next_event_id"
_RUN_COUNT = ROW_COLUMNS.index("run_count")
_SIZE = ROW_COLUMNS.index("size_bytes")


def _insert_statement(table: Table, paramstyle: str) -> str:
    """A positional INSERT for *table* in the driver's own parameter style.

    Rows then go to the driver's ``executemany`` as tuples, skipping SQLAlchemy's per-row
    parameter processing (the largest cost of indexing).
    """
    marks = {"qmark": "?", "format": "%s", "pyformat": "%s"}
    if paramstyle not in marks:
        msg = f"provenance indexing needs a qmark or format DB-API driver, not {paramstyle!r}"
        raise RepositoryError(msg)
    names = ", ".join(c.name for c in table.columns)
    values = ", ".join(marks[paramstyle] for _ in table.columns)
    return f"INSERT INTO {table.name} ({names}) VALUES ({values})"


READ_BUSY_TIMEOUT = 10  # seconds a read-only query waits for the writer's lock (seldom held)


def _read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: an indexed file is deleted once the FlowFile log says so, so the index must survive
    # power loss too; commits are per group of event files, so the extra sync is cheap.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.execute("PRAGMA cache_size=-65536")  # 64 MB
    cursor.close()


def _read_only_sqlite_url(path: Path) -> str:
    """A URL opening the SQLite file *path* read-only (SQLite's ``mode=ro`` URI).

    Raises:
        RepositoryError: there is no such file (no run has recorded provenance there).
    """
    if not path.is_file():
        msg = f"no provenance database at {path}: no run has recorded provenance there yet"
        raise RepositoryError(msg)
    query = urlencode({"mode": "ro", "uri": "true", "timeout": READ_BUSY_TIMEOUT})
    return f"sqlite:///file:{quote(str(path.resolve()))}?{query}"


_GROUP_READ = 64  # rows of a group read per query


def _row(conn: Any, event_id: int) -> Mapping[str, Any]:
    """The stored row whose first event is *event_id*."""
    return conn.execute(select(EVENTS).where(EVENTS.c.event_id == event_id)).one()._mapping  # type: ignore[no-any-return]


def _group_rows(conn: Any, event_id: int, group: int) -> list[Mapping[str, Any]]:
    """The rows of *group* from the one at *event_id* on (they follow one another by id)."""
    rows: list[Mapping[str, Any]] = []
    after = event_id - 1
    while True:
        read = conn.execute(
            select(EVENTS)
            .where(EVENTS.c.event_id > after)
            .order_by(EVENTS.c.event_id)
            .limit(_GROUP_READ)
        ).all()
        for row in read:
            if row.event_group != group:
                return rows
            rows.append(row._mapping)
        if len(read) < _GROUP_READ:
            return rows
        after = read[-1].event_id


class SqlProvenanceRepository:
    """Provenance events in SQL: exactly-once indexing, search, lineage, replay, retention.

    Args:
        url: a SQLAlchemy URL, or a path for a SQLite file.
        event_directory: where tasks write event files (default: next to a SQLite file).
        max_storage_time: events older than this are purged (NiFi's ``max.storage.time``).
        max_storage_size: the oldest events are purged while the store is larger.
        indexed_attributes: attribute names searchable by value (NiFi's ``indexed.attributes``);
            ``filename`` is always searchable.
        max_attribute_length: attribute values are stored cut to this many characters
            (NiFi's ``max.attribute.length``), so the store does not grow with their size.
        read_only: query only, beside the run that writes (``flowcore provenance search``
            while a run holds the repository): nothing is created or changed, and a SQLite
            file is opened read-only. Its WAL journal lets readers see every committed
            index transaction while the writer goes on.
    """

    def __init__(
        self,
        url: str | os.PathLike[str],
        *,
        event_directory: str | os.PathLike[str] | None = None,
        max_storage_time: str = DEFAULT_MAX_STORAGE_TIME,
        max_storage_size: str = DEFAULT_MAX_STORAGE_SIZE,
        indexed_attributes: Collection[str] = (),
        max_attribute_length: int = MAX_ATTRIBUTE_LENGTH,
        read_only: bool = False,
    ) -> None:
        text = os.fspath(url)
        self.read_only = read_only
        writable = text  # what an upgrade in place opens (a read-only open may not change it)
        if "://" not in text:
            path = Path(text)
            event_directory = event_directory or path.parent / "events"
            writable = f"sqlite:///{path}"
            if read_only:
                text = _read_only_sqlite_url(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                text = f"sqlite:///{path}"
        self.url = text
        self.event_directory = Path(event_directory or "provenance-events")
        self.max_storage_ms = int(parse_time_period(max_storage_time, "ms"))
        self.max_storage_bytes = int(parse_data_size(max_storage_size, "B"))
        self.indexed_attributes = frozenset(indexed_attributes)
        self.max_attribute_length = max_attribute_length
        self.engine: Engine = create_engine(text)
        if self.engine.dialect.name == "sqlite":
            pragmas = _read_only_pragmas if read_only else _sqlite_pragmas
            event.listen(self.engine, "connect", pragmas)
        try:
            with named_faults(self.engine):  # locked by another program, or a full disk
                if read_only:
                    upgraded_in_place(writable)
                else:
                    create_or_upgrade(self.engine)
                with self.engine.connect() as conn:
                    self._next_id = self._load_next_id(conn)
            self._durable_next_id = self._next_id
        except OSError:
            self.engine.dispose()
            raise
        except exc.DatabaseError as error:
            self.engine.dispose()
            msg = (
                f"the provenance database {self.url} cannot be read "
                f"({str(error.orig or error).splitlines()[0]}); restore it from a backup, or "
                "run `flowcore check --fix` to set it aside and start an empty one that "
                "continues the event id sequence"
            )
            raise RepositoryError(msg) from None
        self._insert_sql = {
            table.name: _insert_statement(table, self.engine.dialect.paramstyle)
            for table in (EVENTS, LINKS, ATTRIBUTES)
        }

    def _load_next_id(self, conn: Any) -> int:
        stored = conn.execute(
            select(COUNTERS.c.value).where(COUNTERS.c.name == _NEXT_EVENT_ID)
        ).scalar()
        if stored is not None:
            return int(stored)
        highest = conn.execute(select(func.max(EVENTS.c.event_id))).scalar()
        next_id = 0 if highest is None else highest + 1
        if self.read_only:
            return next_id
        conn.execute(insert(COUNTERS), {"name": _NEXT_EVENT_ID, "value": next_id})
        conn.commit()
        return next_id

    def writer(self, owner: str = "") -> EventFileWriter:
        """An event file writer for a task attempt."""
        return EventFileWriter(
            self.event_directory, owner, self.indexed_attributes, self.max_attribute_length
        )

    # --- ingest -------------------------------------------------------------------------------

    def _insert_records(self, conn: Any, records: Sequence[Sequence[Any]]) -> int:
        """Insert records (events or runs of them) under new ids; return their events' count."""
        first = self._next_id
        self._next_id = self._insert_at(conn, records, first)
        conn.execute(
            update(COUNTERS).where(COUNTERS.c.name == _NEXT_EVENT_ID).values(value=self._next_id)
        )
        return self._next_id - first

    def _insert_at(self, conn: Any, records: Sequence[Sequence[Any]], first: int) -> int:
        """Insert records with ids from *first* on; return the id after the last.

        A run of ``run_count`` events takes that many ids, so every event keeps an id of its own;
        interleaved runs share theirs (:func:`~repositories._provenance_ids.placed_records`).
        """
        placed, next_id = placed_records(records, first)
        self._insert_placed(conn, placed)
        return next_id

    def _insert_placed(self, conn: Any, placed: Sequence[tuple[int, Sequence[Any]]]) -> None:
        """Insert records, each under the id of its first event."""
        rows, links, attributes = [], [], []
        for event_id, (row, parents, children, pairs) in placed:
            rows.append((event_id, *row))
            if parents:
                links.extend((event_id, key, lo, hi, "p") for key, lo, hi in parents)
            if children:
                links.extend((event_id, key, lo, hi, "c") for key, lo, hi in children)
            if pairs:
                attributes.extend((event_id, name, value) for name, value in pairs)
        for statement, batch in (
            (self._insert_sql[EVENTS.name], rows),
            (self._insert_sql[LINKS.name], links),
            (self._insert_sql[ATTRIBUTES.name], attributes),
        ):
            for start in range(0, len(batch), INSERT_BATCH):
                conn.exec_driver_sql(statement, batch[start : start + INSERT_BATCH])

    @contextlib.contextmanager
    def _inserting(self) -> Iterator[Any]:
        """A transaction that gives event ids.

        The counter is rolled back with it on failure, and becomes :attr:`next_event_id` only
        once the transaction is committed.
        """
        if self.read_only:
            msg = f"the provenance repository {self.url} was opened read-only (beside a run)"
            raise RepositoryError(msg)
        before = self._next_id
        try:
            with self.engine.begin() as conn:
                yield conn
        except BaseException:
            self._next_id = before
            raise
        self._durable_next_id = self._next_id

    @with_named_faults
    def register(self, events: Iterable[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Store events directly (no event file), assigning ids; return them."""
        batch = list(events)
        if not batch:
            return []
        folder = EventFolder(self.indexed_attributes, self.max_attribute_length)
        folder.add(batch)
        with self._inserting() as conn:
            first = self._next_id
            self._insert_records(conn, folder.finish())
        return [attrs.evolve(e, event_id=first + i) for i, e in enumerate(batch)]

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Act as a session's event sink (used when the driver itself runs the session)."""
        self.register(events)

    @with_named_faults
    def index_files(self, names: Iterable[str]) -> int:
        """Index committed event files, each exactly once; return how many events were added.

        A file already recorded as indexed is skipped, so calling this again after a crash
        finishes the work without duplicating events.

        Raises:
            RepositoryError: a named event file is missing or unreadable.
        """
        added = 0
        group: list[str] = []
        for name in dict.fromkeys(names):
            group.append(name)
            if len(group) == _FILES_PER_TRANSACTION:
                added += self._index_group(group)
                group = []
        if group:
            added += self._index_group(group)
        return added

    def _index_group(self, names: list[str]) -> int:
        """Index several files in one transaction (one sync), skipping those already indexed."""
        added = 0
        with self._inserting() as conn:
            done = set(conn.execute(select(FILES.c.name).where(FILES.c.name.in_(names))).scalars())
            for name in names:
                if name in done:
                    continue
                path = self.event_directory / name
                try:
                    records = decode_event_file(path, path.read_bytes())
                except FileNotFoundError:
                    msg = (
                        f"provenance event file {path} named by a committed transaction is missing"
                    )
                    raise RepositoryError(msg) from None
                count = self._insert_records(conn, records)
                conn.execute(
                    insert(FILES),
                    {"name": name, "events": count, "indexed_at": now_ms()},
                )
                added += count
        return added

    def remove_indexed_files(self, names: Iterable[str]) -> None:
        """Delete event files already indexed (after the log has recorded that)."""
        for name in names:
            (self.event_directory / name).unlink(missing_ok=True)

    # --- queries ----------------------------------------------------------------------------

    def get(self, event_id: int) -> ProvenanceEvent:
        """One event.

        Raises:
            KeyError: no event has that id (it may have been purged by retention).
        """
        return get_event(self.engine, event_id)

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
        on the stored attribute maps of the events the other fields select. SQL selects the rows
        (single events or runs) that may hold a match; each event is then checked.
        """
        return search_events(
            self.engine,
            self.indexed_attributes,
            flowfile_uuid=flowfile_uuid,
            event_type=event_type,
            component_id=component_id,
            filename=filename,
            start=start,
            end=end,
            attributes=attributes,
            limit=limit,
        )

    def component_ids(self, component: str) -> list[str]:
        """The component ids events were recorded under for *component*, an id or a name.

        Users know components by the names they gave (``flow.add(..., name="zip")``); events
        record both. An id that events name is returned alone; otherwise every id recorded
        with that name (a flow edited between runs may have given it new ids). Names are not
        indexed, so a name is found by a scan: a lookup for the command line, not for loops.
        """
        return component_ids(self.engine, component)

    def max_event_id(self) -> int:
        """The largest event id, -1 when empty."""
        return self._next_id - 1

    @property
    def next_event_id(self) -> int:
        """The id after the last one the database has committed (kept as a mark in the log).

        Ids an indexing transaction still in progress has given are not counted: the FlowFile
        log may commit the mark at any moment, and a kill before that transaction commits must
        not leave the database behind the mark (it would be refused as replaced at the next
        start).
        """
        return self._durable_next_id

    @with_named_faults
    def continue_ids_from(self, next_id: int) -> None:
        """Never give an id below *next_id* (an empty database after a loss keeps the sequence)."""
        if next_id <= self._next_id:
            return
        self._next_id = self._durable_next_id = next_id
        with self.engine.begin() as conn:
            conn.execute(
                update(COUNTERS).where(COUNTERS.c.name == _NEXT_EVENT_ID).values(value=next_id)
            )

    def count(self) -> int:
        """How many events are stored."""
        total = func.coalesce(func.sum(EVENTS.c.run_count), 0)
        with self.engine.connect() as conn:
            return int(conn.execute(select(total)).scalar() or 0)

    def lineage(self, flowfile_uuid: str, *, max_events: int = MAX_LINEAGE_NODES) -> nx.DiGraph:
        """The lineage around a FlowFile as a graph of FlowFile and event nodes.

        Follows every event naming a FlowFile (as subject, parent or child) to the FlowFiles it
        links, breadth first, stopping at *max_events* events as NiFi bounds lineage queries.
        Edges run parent -> event -> child; an event without parents or children hangs off its
        FlowFile. Event nodes carry ``event_type``, ``time`` and ``component`` (its name, else
        its id), what a picture of the lineage writes on them.
        """
        return lineage_graph(self.engine, flowfile_uuid, max_events=max_events)

    # --- replay -----------------------------------------------------------------------------

    def replay(
        self,
        event_id: int,
        *,
        content: ContentRepository,
        flowfiles: FlowFileRepository,
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

        *queues* names the queues that exist; a mapping also says where each one's FlowFiles
        are enqueued (the engine sends a pipelined connection's to its destination's park
        queue).
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
        if claim is not None and not all(content.exists(c) for c in claim.resource_claims):
            msg = (
                f"Cannot replay event {event_id}: Content is no longer available in Content "
                f"Repository ({claim}); raise the content archive retention to keep it longer"
            )
            raise ReplayError(msg)
        queue_id = original.source_queue_identifier
        if queue_id is None:
            msg = f"Cannot replay event {event_id}: it does not specify the Source FlowFile Queue"
            raise ReplayError(msg)
        target = queues.get(queue_id) if isinstance(queues, Mapping) else queue_id
        if queue_id not in queues or target is None:
            msg = (
                f"Cannot replay event {event_id}: Source FlowFile Queue with ID {queue_id} "
                "no longer exists in the flow"
            )
            raise ReplayError(msg)
        moment = now if now is not None else now_ms()
        base = dict(original.previous_attributes if use_previous else original.attributes)
        for key in ("discard.reason", "alternate.identifier"):
            base.pop(key, None)
        base.update({"flowfile.replay": "true", "flowfile.replay.timestamp": str(moment)})
        (flowfile_id,) = flowfiles.next_flowfile_ids(1)
        replayed = FlowFile.create(flowfile_id, moment, base, uuid=new_uuid(), content=claim)
        replayed = replayed.replace(lineage_start_date=original.lineage_start_date or moment)
        if claim is not None:
            for resource_claim in claim.resource_claims:
                content.increment_claimant_count(resource_claim)
        segment = flowfiles.write_segment(target, [replayed])
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

    def _keep_only(self, conn: Any, row: Mapping[str, Any], kept: Sequence[int]) -> int:
        """Delete the events of the stored run *row* but those at positions *kept*.

        The kept ones stay under their ids; returns how many went.
        """
        self._delete_ids(conn, [row["event_id"]])
        self._insert_placed(conn, kept_records(row, kept, self.indexed_attributes))
        return int(row["run_count"]) - len(kept)

    @with_named_faults
    def purge(self, now: int | None = None) -> int:
        """Delete events older than the storage time, then the oldest while over the size limit.

        Deletes in batches of :data:`PURGE_BATCH`; returns how many events were removed. A run
        loses the events that would go had each been stored alone (:func:`kept_records`).
        """
        moment = now if now is not None else now_ms()
        cutoff = moment - self.max_storage_ms
        removed = 0
        while True:  # by age: one transaction per batch, so readers are never blocked long
            with self.engine.begin() as conn:
                old = select(EVENTS.c.event_id, EVENTS.c.run_count).where(
                    EVENTS.c.last_event_time < cutoff
                )
                rows = conn.execute(old.limit(PURGE_BATCH)).all()
                if not rows:
                    break
                self._delete_ids(conn, [event_id for event_id, _ in rows])
                removed += sum(count for _, count in rows)
        with self.engine.begin() as conn:  # runs with events on both sides of the cutoff
            straddling = select(EVENTS).where(
                EVENTS.c.event_time < cutoff, EVENTS.c.last_event_time >= cutoff
            )
            for row in conn.execute(straddling).all():
                times = [e.event_time for e in row_events(row._mapping)]
                kept = [i for i, time in enumerate(times) if time >= cutoff]
                removed += self._keep_only(conn, row._mapping, kept)
        with self.engine.connect() as conn:
            total = conn.execute(select(func.coalesce(func.sum(EVENTS.c.size_bytes), 0))).scalar()
        excess = int(total or 0) - self.max_storage_bytes
        after = -1
        while excess > 0:  # by size: the oldest events, just enough of them
            with self.engine.begin() as conn:
                oldest = conn.execute(
                    select(
                        EVENTS.c.event_id,
                        EVENTS.c.size_bytes,
                        EVENTS.c.run_count,
                        EVENTS.c.event_group,
                    )
                    .where(EVENTS.c.event_id > after)
                    .order_by(EVENTS.c.event_id)
                    .limit(PURGE_BATCH)
                ).all()
                if not oldest:
                    break
                ids = []
                for event_id, row_size, row_count, group in oldest:
                    size, count, rows = row_size, row_count, None
                    if group is not None:  # rows whose events interleave go together
                        rows = _group_rows(conn, event_id, group)
                        size = sum(r["size_bytes"] for r in rows)
                        count = sum(r["run_count"] for r in rows)
                    if size > excess and count > 1:  # just the oldest events of these
                        if rows is None:
                            rows = [_row(conn, event_id)]
                        removed += self._expire_oldest(conn, rows, excess)
                        excess = 0
                        break
                    ids.extend([event_id] if rows is None else [r["event_id"] for r in rows])
                    removed += count
                    excess -= size
                    if excess <= 0 or rows is not None:  # a group may reach past this batch
                        break
                self._delete_ids(conn, ids)
                after = ids[-1] if ids else after
        return removed

    def _expire_oldest(self, conn: Any, rows: Sequence[Mapping[str, Any]], excess: int) -> int:
        """Delete the oldest events of *rows* (a run, or a group's) until they make up *excess*.

        Each event is counted as stored alone, oldest first by id across the rows; returns how
        many went.
        """
        held = []  # (id, size) of every event
        for row in rows:
            ids = row_ids(row).tolist()
            sizes = [event_record(e, ())[0][_SIZE] for e in row_events(row)]
            held.extend(zip(ids, sizes, strict=True))
        held.sort()
        gone = 0
        while excess > 0:
            excess -= held[gone][1]
            gone += 1
        last = held[gone - 1][0]  # the youngest event that goes
        removed = 0
        for row in rows:
            ids = row_ids(row).tolist()
            kept = [position for position, event_id in enumerate(ids) if event_id > last]
            if len(kept) < len(ids):
                removed += self._keep_only(conn, row, kept)
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
