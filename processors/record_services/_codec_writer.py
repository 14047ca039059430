"""The shared base of the Record Writers that are one flowcore codec each.

CSVRecordSetWriter, JsonRecordSetWriter, ParquetRecordSetWriter and XMLRecordSetWriter differ
only in their codec: each builds the codec's options from its properties once when enabled
(a bad value fails there, naming the property) and opens the codec's writer per FlowFile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Any, ClassVar

from flowcore.controller_service import ServiceContext
from flowcore.records.record_io import RecordWriter
from flowcore.records.schema import RecordSchema
from processors.record_services._options import options_from
from processors.record_services.schema_access import RecordWriterService

__all__ = ["CodecWriterService"]


class CodecWriterService(RecordWriterService):
    """A Record Writer whose format is one codec (``options_type`` and ``writer_type``).

    Subclasses set ``options_type`` (the codec's options class, whose fields name NiFi's
    properties) and ``writer_type`` (called as ``writer_type(stream, schema, options)``);
    they override :meth:`check_options` to refuse options at enable time, and
    :meth:`options_per_flowfile` when a property's Expression Language reads FlowFile
    attributes (the options are then built for each FlowFile).
    """

    options_type: ClassVar[type]
    writer_type: ClassVar[Callable[..., RecordWriter]]

    def on_enabled(self, context: ServiceContext) -> None:
        """Build the codec's options once (a value the codec refuses fails here)."""
        super().on_enabled(context)
        self._options = options_from(self, self.options_type)
        self.check_options(self._options)
        self._per_flowfile = self.options_per_flowfile()

    def check_options(self, options: Any) -> None:
        """Refuse *options* the codec would refuse only when writing (default: none)."""
        del options

    def options_per_flowfile(self) -> bool:
        """Whether the options depend on each FlowFile's attributes (default: no)."""
        return False

    def open_writer(
        self, stream: IO[bytes], schema: RecordSchema, attributes: Mapping[str, str]
    ) -> RecordWriter:
        """The codec's writer, with this FlowFile's options when they depend on it."""
        options = self._options
        if self._per_flowfile:
            options = options_from(self, self.options_type, attributes)
        return self.writer_type(stream, schema, options)
