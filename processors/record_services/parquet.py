"""ParquetReader and ParquetRecordSetWriter: NiFi's Parquet services over pyarrow.parquet."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, ClassVar

import pyarrow as pa

from flowcore.properties import PropertyDescriptor
from flowcore.records.parquet_codec import (
    ParquetRecordWriter,
    ParquetWriterOptions,
    read_parquet,
)
from flowcore.records.schema import RecordSchema
from flowcore.session.streams import seekable
from processors.record_services._codec_writer import CodecWriterService
from processors.record_services.schema_access import (
    RecordReaderService,
    writer_properties,
)

__all__ = ["ParquetReader", "ParquetRecordSetWriter"]

_BUNDLE = ("org.apache.nifi", "nifi-parquet-nar")


def _flag(display: str, alias: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        display, description=description, allowable_values=("true", "false"), aliases=(alias,)
    )


class ParquetReader(RecordReaderService):
    """Parses Parquet into records (NiFi's ParquetReader): the file's own schema.

    The content is read from a seekable copy (Parquet's footer is at its end): memory up to
    32 MB, a temporary file beyond.
    """

    nifi_types: ClassVar = ("org.apache.nifi.parquet.ParquetReader",)
    nifi_bundle: ClassVar = _BUNDLE
    tags: ClassVar = ("parquet", "parse", "record", "row", "reader")
    property_descriptors: ClassVar = (
        _flag(
            "Avro Read Compatibility",
            "avro-read-compatibility",
            "Specifies the value for 'parquet.avro.compatible' in the underlying Parquet "
            "library (not used by flowcore)",
        ),
        _flag(
            "Avro Add List Element Records",
            "avro-add-list-element-records",
            "Specifies the value for 'parquet.avro.add-list-element-records' (not used by "
            "flowcore)",
        ),
    )

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """pyarrow.parquet, batch by batch."""
        return read_parquet(seekable(stream), schema=schema)


_COMPRESSIONS = ("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW")


class ParquetRecordSetWriter(CodecWriterService):
    """Writes records as one Parquet file (NiFi's ParquetRecordSetWriter); Spark reads it."""

    nifi_types: ClassVar = ("org.apache.nifi.parquet.ParquetRecordSetWriter",)
    options_type: ClassVar = ParquetWriterOptions
    writer_type: ClassVar = ParquetRecordWriter
    nifi_bundle: ClassVar = _BUNDLE
    tags: ClassVar = (
        "parquet",
        "result",
        "set",
        "writer",
        "serializer",
        "record",
        "recordset",
        "row",
    )
    property_descriptors: ClassVar = (
        *writer_properties(),
        PropertyDescriptor(
            "Cache Size",
            default="1000",
            required=True,
            aliases=("cache-size",),
            description="Specifies how many Schemas should be cached",
        ),
        PropertyDescriptor(
            "Compression Type",
            description="The type of compression for the file being written.",
            default="UNCOMPRESSED",
            required=True,
            allowable_values=_COMPRESSIONS,
            aliases=("compression-type",),
        ),
        PropertyDescriptor(
            "Row Group Size",
            description="The row group size (not used: "
            "flowcore bounds row groups by rows and memory)",
            aliases=("row-group-size",),
        ),
        PropertyDescriptor(
            "Page Size", description="The page size (not used by flowcore)", aliases=("page-size",)
        ),
        PropertyDescriptor(
            "Dictionary Page Size",
            description="Not used by flowcore",
            aliases=("dictionary-page-size",),
        ),
        PropertyDescriptor(
            "Max Padding Size", description="Not used by flowcore", aliases=("max-padding-size",)
        ),
        _flag(
            "Enable Dictionary Encoding",
            "enable-dictionary-encoding",
            "Specifies whether dictionary encoding should be enabled",
        ),
        _flag("Enable Validation", "enable-validation", "Not used by flowcore"),
        PropertyDescriptor(
            "Writer Version",
            description="Specifies the version used by Parquet writer",
            allowable_values=("PARQUET_1_0", "PARQUET_2_0"),
            aliases=("writer-version",),
        ),
        _flag(
            "Avro Write Old List Structure", "avro-write-old-list-structure", "Not used by flowcore"
        ),
        _flag(
            "Avro Add List Element Records", "avro-add-list-element-records", "Not used by flowcore"
        ),
        PropertyDescriptor(
            "INT96 Fields", description="Not used by flowcore", aliases=("int96-fields",)
        ),
    )

    def check_options(self, options: ParquetWriterOptions) -> None:
        """A compression flowcore lacks (LZO) fails at enable time, naming the property."""
        options.compression()
