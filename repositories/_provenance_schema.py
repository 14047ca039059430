"""SQL tables of the provenance repository (SQLAlchemy Core), kept apart from the queries.

``provenance_event`` holds one row per event with NiFi's fields, or per *run* of alike events
of neighbouring FlowFiles (:mod:`repositories._provenance_runs`): ids ``event_id`` to
``event_id + run_count - 1``, uuids ``uuid_first`` to ``uuid_last`` under ``uuid_key``, times
``event_time`` to ``last_event_time``, and what varies packed in ``run_data``. The columns users
search are indexed (uuid position, type, component, time, filename). ``provenance_link`` holds
one row per range of parent or child uuids of an event, so lineage is an indexed lookup.
``provenance_attribute`` holds the attributes named in ``indexed_attributes`` (NiFi's
``indexed.attributes``) for attribute search.
``provenance_file`` records each indexed event file, in the same transaction as its events, so a
file is indexed exactly once even if the driver crashes and indexes it again.
``provenance_counter`` keeps the next event id, so ids are never reused even after retention
has deleted every event.
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Engine,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    inspect,
    make_url,
    text,
)
from sqlalchemy.exc import DatabaseError

from repositories._provenance_rows import uuid_position

__all__ = [
    "ATTRIBUTES",
    "COUNTERS",
    "EVENTS",
    "FILES",
    "LINKS",
    "METADATA",
    "add_event_group",
    "create_or_upgrade",
    "upgraded_in_place",
]

METADATA = MetaData()

EVENTS = Table(
    "provenance_event",
    METADATA,
    Column("event_id", BigInteger, primary_key=True, autoincrement=False),
    Column("event_time", BigInteger, nullable=False),
    Column("event_type", String(32), nullable=False),
    Column("flowfile_uuid", String(64), nullable=False),
    Column("component_id", String(255), nullable=False),
    Column("component_type", String(255), nullable=False),
    Column("component_name", String(255)),
    Column("file_size", BigInteger, nullable=False),
    Column("previous_file_size", BigInteger),
    Column("event_duration", BigInteger),
    Column("entry_date", BigInteger),
    Column("lineage_start_date", BigInteger),
    Column("relationship", String(255)),
    Column("details", Text),
    Column("transit_uri", Text),
    Column("source_system_flowfile_identifier", Text),
    Column("alternate_identifier_uri", Text),
    Column("source_queue_identifier", String(255)),
    Column("filename", Text),
    Column("content_claim", Text),  # "container/section/id:offset:length"
    Column("previous_content_claim", Text),
    Column("parent_uuids", Text, nullable=False),  # JSON list
    Column("child_uuids", Text, nullable=False),  # JSON list
    Column("previous_attributes", Text, nullable=False),  # JSON object
    Column("updated_attributes", Text, nullable=False),  # JSON object
    Column("size_bytes", Integer, nullable=False),  # approximate stored size, for retention
    Column("uuid_key", String(64), nullable=False),  # the uuid's bucket (its own uuid if odd)
    Column("uuid_first", BigInteger, nullable=False),  # the uuid's last 8 hex digits, a number
    Column("uuid_last", BigInteger, nullable=False),  # the run's last uuid number
    Column("run_count", Integer, nullable=False),  # events in the row
    Column("last_event_time", BigInteger, nullable=False),  # the run's latest event time
    Column("run_data", LargeBinary),  # what varies in the run, packed (msgpack)
    # the first id of the block of rows whose events interleave (NULL: none does), see
    # repositories._provenance_ids
    Column("event_group", BigInteger),
    Index("ix_provenance_event_position", "uuid_key", "uuid_first"),
    Index("ix_provenance_event_time", "event_time"),
    Index("ix_provenance_event_last_time", "last_event_time"),
    Index("ix_provenance_event_type", "event_type"),
    Index("ix_provenance_event_component", "component_id"),
    Index("ix_provenance_event_filename", "filename"),
)

LINKS = Table(
    "provenance_link",
    METADATA,
    Column("event_id", BigInteger, nullable=False),
    Column("uuid_key", String(64), nullable=False),
    Column("uuid_first", BigInteger, nullable=False),
    Column("uuid_last", BigInteger, nullable=False),
    Column("role", String(1), nullable=False),  # "p" parent, "c" child
    Index("ix_provenance_link_position", "uuid_key", "uuid_first"),
    Index("ix_provenance_link_event", "event_id"),
)

ATTRIBUTES = Table(
    "provenance_attribute",
    METADATA,
    Column("event_id", BigInteger, nullable=False),
    Column("name", String(255), nullable=False),
    Column("value", Text, nullable=False),
    Index("ix_provenance_attribute_name_value", "name", "value"),
    Index("ix_provenance_attribute_event", "event_id"),
)

FILES = Table(
    "provenance_file",
    METADATA,
    Column("name", String(512), primary_key=True),
    Column("events", Integer, nullable=False),
    Column("indexed_at", BigInteger, nullable=False),
)

COUNTERS = Table(
    "provenance_counter",
    METADATA,
    Column("name", String(32), primary_key=True),
    Column("value", BigInteger, nullable=False),
)


_COPY_BATCH = 5_000


def add_event_group(engine: Engine) -> bool:
    """Give a database made before runs could interleave its empty ``event_group`` column.

    What a read-only open does before reading (``flowcore provenance`` on the repository of an
    earlier flowcore): an empty column is what such a database means, and adding it is one
    statement. A database that is not ours to change, or is still of the schema before runs,
    is left as it is; reading it then fails, saying so. Returns whether its events table now
    has this schema's columns.
    """
    inspector = inspect(engine)
    if not inspector.has_table(EVENTS.name):
        return False
    columns = {c["name"] for c in inspector.get_columns(EVENTS.name)}
    if "run_count" not in columns:
        return False
    if "event_group" not in columns:
        with engine.begin() as conn:
            conn.execute(text(f"ALTER TABLE {EVENTS.name} ADD COLUMN event_group BIGINT"))
    return True


#: The databases a reader of this process found of this schema (or brought to it), as
#: :func:`_identity` names them: each is inspected once, not at every read-only open.
_CURRENT: set[tuple[str, tuple[int, int] | None]] = set()


def _identity(url: str) -> tuple[str, tuple[int, int] | None]:
    """*url*, with a SQLite file's device and inode.

    A file put in its place (a backup of an earlier flowcore restored) is then inspected anew.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return url, None
    try:
        info = os.stat(parsed.database)
    except OSError:
        return url, None
    return url, (info.st_dev, info.st_ino)


def upgraded_in_place(url: str) -> None:
    """Add what a reader needs to a database of an earlier flowcore (:func:`add_event_group`).

    Once per database in a process: read-only opens and the Spark reader's plans of a database
    already found of this schema skip the inspection. Through a connection of its own: a
    read-only one may not change the database. One that cannot be changed is left for the
    reading to report.
    """
    known = _identity(url)
    if known in _CURRENT:
        return
    engine = create_engine(url)
    try:
        if add_event_group(engine):
            _CURRENT.add(known)
    except DatabaseError:
        pass
    finally:
        engine.dispose()


def create_or_upgrade(engine: Engine) -> None:
    """Create the tables, or bring a database of an earlier schema to this one.

    A database made before runs existed has one row per event and per link uuid; they are
    copied into the new tables as runs and ranges of one, so no event is lost and every id
    stays. One made before runs could interleave gets the ``event_group`` column, empty: its
    rows each hold consecutive ids, as they did.
    """
    inspector = inspect(engine)
    columns = (
        {c["name"] for c in inspector.get_columns(EVENTS.name)}
        if inspector.has_table(EVENTS.name)
        else set()
    )
    old = bool(columns) and "run_count" not in columns
    if not old:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                # pysqlite opens no transaction before DDL: each CREATE committed (and synced
                # its journal) alone, ~15 syncs, most of a new repository's start
                conn.exec_driver_sql("BEGIN")
            METADATA.create_all(conn)
            conn.commit()
        if columns and "event_group" not in columns:
            with engine.begin() as conn:
                conn.execute(text(f"ALTER TABLE {EVENTS.name} ADD COLUMN event_group BIGINT"))
        return
    with engine.begin() as conn:
        for table in (EVENTS, LINKS):
            for index in inspector.get_indexes(table.name):  # index names are database-wide
                conn.execute(text(f"DROP INDEX {index['name']}"))
            conn.execute(text(f"ALTER TABLE {table.name} RENAME TO {table.name}_v1"))
        METADATA.create_all(conn)
        _copy(conn, EVENTS, _event_row)
        _copy(conn, LINKS, _link_row)
        for table in (EVENTS, LINKS):
            conn.execute(text(f"DROP TABLE {table.name}_v1"))


def _copy(conn: Any, table: Table, convert: Any) -> None:
    rows = conn.execute(text(f"SELECT * FROM {table.name}_v1")).mappings()
    while batch := rows.fetchmany(_COPY_BATCH):
        conn.execute(table.insert(), [convert(dict(row)) for row in batch])


def _event_row(row: dict[str, Any]) -> dict[str, Any]:
    key, number = uuid_position(row["flowfile_uuid"])
    return {
        **row,
        "uuid_key": key,
        "uuid_first": number,
        "uuid_last": number,
        "run_count": 1,
        "last_event_time": row["event_time"],
        "run_data": None,
        "event_group": None,
    }


def _link_row(row: dict[str, Any]) -> dict[str, Any]:
    key, number = uuid_position(row.pop("uuid"))
    return {**row, "uuid_key": key, "uuid_first": number, "uuid_last": number}
