"""SQL tables of the provenance repository (SQLAlchemy Core), kept apart from the queries.

``provenance_event`` holds one row per event with NiFi's fields; the columns users search are
indexed (uuid, type, component, time, filename). ``provenance_link`` holds one row per parent or
child uuid of an event, so lineage is an indexed lookup. ``provenance_attribute`` holds the
attributes named in ``indexed_attributes`` (NiFi's ``indexed.attributes``) for attribute search.
``provenance_file`` records each indexed event file, in the same transaction as its events, so a
file is indexed exactly once even if the driver crashes and indexes it again.
``provenance_counter`` keeps the next event id, so ids are never reused even after retention
has deleted every event.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

__all__ = ["ATTRIBUTES", "COUNTERS", "EVENTS", "FILES", "LINKS", "METADATA"]

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
    Index("ix_provenance_event_uuid", "flowfile_uuid"),
    Index("ix_provenance_event_time", "event_time"),
    Index("ix_provenance_event_type", "event_type"),
    Index("ix_provenance_event_component", "component_id"),
    Index("ix_provenance_event_filename", "filename"),
)

LINKS = Table(
    "provenance_link",
    METADATA,
    Column("event_id", BigInteger, nullable=False),
    Column("uuid", String(64), nullable=False),
    Column("role", String(1), nullable=False),  # "p" parent, "c" child
    Index("ix_provenance_link_uuid", "uuid"),
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
