"""SplitRecord: one FlowFile per so many records of the input, as NiFi's SplitRecord."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import pyarrow as pa

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    services,
    write_records,
)
from flowcore.session.process_session import ProcessSession
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR

__all__ = ["SplitRecord"]

FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

REL_SPLITS = Relationship(
    "splits",
    "The individual 'segments' of the original FlowFile will be routed to this relationship.",
)
REL_ORIGINAL = Relationship(
    "original",
    "Upon successfully splitting an input FlowFile, the original FlowFile will be sent to this "
    "relationship.",
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile cannot be transformed from the configured input format to the configured "
    "output format, the unchanged FlowFile will be routed to this relationship.",
)


def chunks(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """The records of *batches* as tables of *size* records (the last may hold fewer)."""
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        start = 0
        while start < batch.num_rows:
            take = min(size - held, batch.num_rows - start)
            pending.append(batch.slice(start, take))
            held += take
            start += take
            if held == size:
                yield pa.Table.from_batches(pending)
                pending, held = [], 0
    if held:
        yield pa.Table.from_batches(pending)


class SplitRecord(Processor):
    """Splits a FlowFile's records into FlowFiles of at most "Records Per Split" records each.

    Each split is written by the Record Writer and gets ``record.count``, ``mime.type`` (and
    the writer's attributes), ``fragment.identifier``, ``fragment.index`` (from 0),
    ``fragment.count`` and ``segment.original.filename``; the original gets
    ``fragment.identifier`` and ``fragment.count`` and goes to ``original``; the splits are its
    children (FORK). A record that does not parse sends the original to ``failure`` and makes
    no split. Memory: one split's records at a time, read and written as a stream.
    """

    RECORDS_PER_SPLIT = PropertyDescriptor(
        "Records Per Split",
        description="Specifies how many records should be written to each 'split' or "
        "'segment' FlowFile",
        required=True,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    property_descriptors: ClassVar = (RECORD_READER, RECORD_WRITER, RECORDS_PER_SPLIT)
    relationships: ClassVar = (REL_SPLITS, REL_ORIGINAL, REL_FAILURE)
    tags: ClassVar = (
        "split",
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
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer "
        "for the FlowFiles routed to the 'splits' Relationship.",
        "record.count": "The number of records in the FlowFile. This is added to FlowFiles that "
        "are routed to the 'splits' Relationship.",
        FRAGMENT_ID: "All split FlowFiles produced from the same parent FlowFile will have the "
        "same randomly generated UUID added for this attribute",
        FRAGMENT_INDEX: "A one-up number that indicates the ordering of the split FlowFiles that "
        "were created from a single parent FlowFile",
        FRAGMENT_COUNT: "The number of split FlowFiles generated from the parent FlowFile",
        SEGMENT_ORIGINAL_FILENAME: "The filename of the parent FlowFile",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Split one FlowFile."""
        original = session.get()
        if original is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        per_split = (
            context.get_property(self.RECORDS_PER_SPLIT)
            .evaluate_attribute_expressions(original)
            .as_integer()
        )
        fragment_id = session.identifier_for(original, FRAGMENT_ID)
        filename = original.attributes.get("filename", "")
        splits = []
        try:
            with read_records(session, original, reader) as records:
                for index, table in enumerate(chunks(records, per_split or 1)):
                    child, written = write_records(
                        session,
                        session.create(original),
                        writer,
                        table.schema,
                        [table],
                        attributes=original.attributes,
                    )
                    attributes = {
                        "record.count": str(table.num_rows),
                        **written,
                        FRAGMENT_INDEX: str(index),
                        FRAGMENT_ID: fragment_id,
                        SEGMENT_ORIGINAL_FILENAME: filename,
                    }
                    splits.append(session.put_all_attributes(child, attributes))
        except RECORD_FAILURES as error:
            context.logger.error("Failed to split %s: %s", original, error)
            session.remove(splits)
            session.transfer(original, REL_FAILURE)
            return
        count = {FRAGMENT_COUNT: str(len(splits))}
        for split in splits:
            session.transfer(session.put_all_attributes(split, count), REL_SPLITS)
        original = session.put_all_attributes(original, {FRAGMENT_ID: fragment_id, **count})
        session.transfer(original, REL_ORIGINAL)
        context.logger.info("Successfully split %s into %d FlowFiles", original, len(splits))
