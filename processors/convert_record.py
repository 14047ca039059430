"""ConvertRecord: records read with a Record Reader, written back with a Record Writer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.records.record_io import (
    INCLUDE_ZERO_RECORD_FLOWFILES,
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    convert,
    route_failure,
    services,
)
from flowcore.session.process_session import ProcessSession

__all__ = ["ConvertRecord"]

REL_SUCCESS = Relationship(
    "success", "FlowFiles that are successfully transformed will be routed to this relationship"
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile cannot be transformed from the configured input format to the configured "
    "output format, the unchanged FlowFile will be routed to this relationship",
)


class ConvertRecord(Processor):
    """Converts records from one data format to another (NiFi's ConvertRecord).

    The Record Reader parses the content and the Record Writer writes it, batch by batch from
    the old content to the new (memory bounded by a batch, whatever the content's size). The
    FlowFile gets ``record.count``, ``mime.type`` and the writer's schema attributes and goes to
    ``success`` (CONTENT_MODIFIED); with Include Zero Record FlowFiles false, one with no records
    is dropped. A record that does not parse or fit its schema sends the FlowFile, its content
    unchanged, to ``failure`` with ``record.error.message`` naming the record and field.
    """

    property_descriptors: ClassVar = (RECORD_READER, RECORD_WRITER, INCLUDE_ZERO_RECORD_FLOWFILES)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    tags: ClassVar = (
        "convert",
        "record",
        "generic",
        "schema",
        "json",
        "csv",
        "avro",
        "log",
        "logs",
        "freeform",
        "text",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer",
        "record.count": "The number of records in the FlowFile",
        "record.error.message": "This attribute provides on failure the error message "
        "encountered by the Reader or Writer.",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Convert one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        try:
            updated, written, count = convert(session, flowfile, reader, writer)
        except RECORD_FAILURES as error:
            route_failure(context, session, flowfile, error, REL_FAILURE)
            return
        include_zero = context.get_property(INCLUDE_ZERO_RECORD_FLOWFILES).as_boolean()
        if count == 0 and not include_zero:
            session.remove(updated)
            return
        updated = session.put_all_attributes(updated, written)
        session.transfer(updated, REL_SUCCESS)
        session.adjust_counter("Records Processed", count)
        context.logger.info("Successfully converted %d records for %s", count, updated)
