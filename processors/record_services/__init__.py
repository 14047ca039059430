"""NiFi's Record Reader and Record Writer services, and AvroSchemaRegistry, over flowcore.records.

Each service wraps a codec of :mod:`flowcore.records` with NiFi's properties (names, internal
names as aliases, defaults, allowable values, dependencies); ``schema_access`` holds the schema
properties they share and the reader/writer API record processors call.
"""

from processors.record_services.avro import AvroReader, AvroRecordSetWriter, AvroSchemaRegistry
from processors.record_services.confluent import (
    ConfluentEncodedSchemaReferenceReader,
    ConfluentEncodedSchemaReferenceWriter,
    ConfluentSchemaRegistry,
)
from processors.record_services.csv import CSVReader, CSVRecordSetWriter
from processors.record_services.grok import GrokReader
from processors.record_services.json import JsonRecordSetWriter, JsonTreeReader
from processors.record_services.json_path import JsonPathReader
from processors.record_services.parquet import ParquetReader, ParquetRecordSetWriter
from processors.record_services.schema_access import RecordReaderService, RecordWriterService
from processors.record_services.text import FreeFormTextRecordSetWriter
from processors.record_services.xml import XMLReader, XMLRecordSetWriter

__all__ = [
    "RECORD_SERVICES",
    "AvroReader",
    "AvroRecordSetWriter",
    "AvroSchemaRegistry",
    "CSVReader",
    "CSVRecordSetWriter",
    "ConfluentEncodedSchemaReferenceReader",
    "ConfluentEncodedSchemaReferenceWriter",
    "ConfluentSchemaRegistry",
    "FreeFormTextRecordSetWriter",
    "GrokReader",
    "JsonPathReader",
    "JsonRecordSetWriter",
    "JsonTreeReader",
    "ParquetReader",
    "ParquetRecordSetWriter",
    "RecordReaderService",
    "RecordWriterService",
    "XMLReader",
    "XMLRecordSetWriter",
]

#: The services by NiFi's simple type name (flowcore.registry's BUILTIN_SERVICES adds them).
RECORD_SERVICES = {
    cls.__name__: cls
    for cls in (
        JsonTreeReader,
        CSVReader,
        AvroReader,
        ParquetReader,
        JsonRecordSetWriter,
        CSVRecordSetWriter,
        AvroRecordSetWriter,
        ParquetRecordSetWriter,
        FreeFormTextRecordSetWriter,
        AvroSchemaRegistry,
        JsonPathReader,
        XMLReader,
        XMLRecordSetWriter,
        GrokReader,
        ConfluentSchemaRegistry,
        ConfluentEncodedSchemaReferenceReader,
        ConfluentEncodedSchemaReferenceWriter,
    )
}
