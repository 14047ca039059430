"""FreeFormTextRecordSetWriter: one line of text per record from the "Text" property."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.expression import compile_expression
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.record_io import RecordWriter
from flowcore.records.schema import RecordSchema
from flowcore.records.text_writer import write_text
from flowcore.validators import NON_EMPTY_VALIDATOR
from processors.record_services.schema_access import RecordWriterService

__all__ = ["FreeFormTextRecordSetWriter"]


class FreeFormTextRecordSetWriter(RecordWriterService):
    """Writes each record as the "Text" property evaluated over its fields (NiFi's).

    The Expression Language sees each field's value as text (numbers as Java prints them) and,
    under them, the FlowFile's attributes; each result is followed by a newline.
    """

    nifi_types: ClassVar = ("org.apache.nifi.text.FreeFormTextRecordSetWriter",)
    tags: ClassVar = (
        "text",
        "freeform",
        "expression",
        "language",
        "el",
        "record",
        "recordset",
        "resultset",
        "writer",
        "serialize",
    )
    property_descriptors: ClassVar = (
        PropertyDescriptor(
            "Text",
            description="The text to use when writing the results. This property will evaluate "
            "the Expression Language using any of the fields available in a Record.",
            required=True,
            validators=(NON_EMPTY_VALIDATOR,),
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        ),
        PropertyDescriptor(
            "Character Set",
            description="The Character set to use when writing the data to the FlowFile",
            default="UTF-8",
            required=True,
        ),
    )

    def on_enabled(self, context: ServiceContext) -> None:
        """Compile the Text once; records bind it."""
        del context
        self._strategy = None
        self._registry = None
        self._expression = compile_expression(self.get_property("Text").value or "")
        self._charset = self.get_property("Character Set").value or "UTF-8"

    def schema_attributes(
        self, schema: RecordSchema, attributes: Mapping[str, str]
    ) -> dict[str, str]:
        """None: NiFi's FreeFormText writes no schema."""
        return {}

    def open_writer(
        self, stream: IO[bytes], schema: RecordSchema, attributes: Mapping[str, str]
    ) -> RecordWriter:
        """A writer evaluating the Text per record."""
        return _TextWriter(self, stream, dict(attributes))


class _TextWriter:
    def __init__(
        self, service: FreeFormTextRecordSetWriter, stream: IO[bytes], variables: dict[str, str]
    ) -> None:
        self._service = service
        self._stream = stream
        self._variables = variables
        self._count = 0

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        batches = batch.to_batches() if isinstance(batch, pa.Table) else [batch]
        expression = self._service._expression
        written = write_text(
            batches,
            self._stream,
            expression.evaluate,
            variables=self._variables,
            character_set=self._service._charset,
        )
        self._count += int(written["record.count"])

    def finish(self) -> dict[str, str]:
        return {"record.count": str(self._count), "mime.type": "text/plain"}
