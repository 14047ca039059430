"""NiFi's Record Reader and Record Writer services, and AvroSchemaRegistry, over flowcore.records.

Each service wraps a codec of :mod:`flowcore.records` with NiFi's properties (names, internal
names as aliases, defaults, allowable values, dependencies); ``schema_access`` holds the schema
properties they share and the reader/writer API record processors call. As the processors'
registry, each module is imported when its service is first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from processors._lazy_types import LazyTypes, lazy_module_attributes

if TYPE_CHECKING:
    from flowcore.controller_service import ControllerService

#: The services by NiFi's simple type name (flowcore.registry's BUILTIN_SERVICES adds them).
RECORD_SERVICES: LazyTypes[type[ControllerService]] = LazyTypes(
    {
        "AvroReader": "processors.record_services.avro",
        "AvroRecordSetWriter": "processors.record_services.avro",
        "AvroSchemaRegistry": "processors.record_services.avro",
        "CSVReader": "processors.record_services.csv",
        "CSVRecordSetWriter": "processors.record_services.csv",
        "ConfluentEncodedSchemaReferenceReader": "processors.record_services.confluent",
        "ConfluentEncodedSchemaReferenceWriter": "processors.record_services.confluent",
        "ConfluentSchemaRegistry": "processors.record_services.confluent",
        "FreeFormTextRecordSetWriter": "processors.record_services.text",
        "GrokReader": "processors.record_services.grok",
        "JsonPathReader": "processors.record_services.json_path",
        "JsonRecordSetWriter": "processors.record_services.json",
        "JsonTreeReader": "processors.record_services.json",
        "ParquetReader": "processors.record_services.parquet",
        "ParquetRecordSetWriter": "processors.record_services.parquet",
        "XMLReader": "processors.record_services.xml",
        "XMLRecordSetWriter": "processors.record_services.xml",
    }
)

#: The reader and writer bases, for type checks and subclasses of users' own.
_BASES = LazyTypes(
    {
        "RecordReaderService": "processors.record_services.schema_access",
        "RecordWriterService": "processors.record_services.schema_access",
    }
)

__all__ = ["RECORD_SERVICES", *RECORD_SERVICES, *_BASES]  # noqa: PLE0604 (resolved below)


__getattr__, __dir__ = lazy_module_attributes(__name__, __all__, _BASES, RECORD_SERVICES)
