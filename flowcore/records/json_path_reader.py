"""NiFi's JsonPathReader as a codec: each JSON record's fields taken by JsonPath expressions.

The content is read as JsonTreeReader reads it (one object, an array of objects, or objects one
after another, streamed). Each record is then the values of the configured paths, one field per
path (NiFi's ``JsonPathRowRecordReader``):

- a path that finds nothing gives null, or the field's default (Jayway's
  ``PathNotFoundException``); a path that fails on a record is a RecordError naming it;
- a field the schema does not have is dropped, a schema field no path names is null;
- the values are coerced to the schema's types (NiFi's ``DataTypeUtils.convertType``): a JSON
  array to an ARRAY, an object to a RECORD, text to a number or a date...

The schema is given, or inferred as NiFi infers it: from the whole JSON records (its
``JsonSchemaInference`` over the content), not from the paths' results, so with an inferred
schema a path field keeps a value only when the records have a top-level field of its name.

This layer does not know JsonPath's syntax: the caller passes each field's path compiled into a
function of the record (``processors/_jsonpath.py`` compiles Jayway's paths), which raises
:class:`LookupError` when the path finds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

import attrs
import pyarrow as pa

from flowcore.records._batches import Parsed, batches_of, record_error
from flowcore.records.inference import infer_record_schema
from flowcore.records.json_reader import JsonReaderOptions, json_records
from flowcore.records.options import nifi
from flowcore.records.schema import RecordSchema
from flowcore.records.values import TemporalFormats

__all__ = ["JsonPathReaderOptions", "PathFunction", "read_json_path"]

#: A compiled path: the value it selects in a record; LookupError when nothing is there.
PathFunction = Callable[[Any], Any]


@attrs.frozen
class JsonPathReaderOptions:
    """JsonPathReader's properties (NiFi's names in the field docs), with NiFi's defaults.

    Attributes:
        date_format: "Date Format" (Java pattern; None: ``yyyy-MM-dd``).
        time_format: "Time Format" (None: ``HH:mm:ss``).
        timestamp_format: "Timestamp Format" (None: ``yyyy-MM-dd HH:mm:ss`` or epoch millis).
        batch_size: records per Arrow batch (memory bound; not a NiFi property).
        inference_sample: records schema inference reads (not a NiFi property).
    """

    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)
    batch_size: int = 8192
    inference_sample: int = 10_000

    @property
    def temporal(self) -> TemporalFormats:
        """The three formats as one value."""
        return TemporalFormats(self.date_format, self.time_format, self.timestamp_format)


def read_json_path(
    stream: IO[bytes],
    paths: Mapping[str, PathFunction],
    options: JsonPathReaderOptions = JsonPathReaderOptions(),
    schema: RecordSchema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the path values of each JSON record in *stream*, under *schema*.

    With no schema, one is inferred from the first ``options.inference_sample`` whole records.

    Raises:
        RecordError: a record is not JSON, not an object, or a value does not fit the schema
            (the batches of the records before it were yielded first).
    """
    documents = json_records(stream, JsonReaderOptions())
    if schema is None:
        head: list[Parsed] = []
        for item in documents:
            head.append(item)
            if len(head) >= options.inference_sample:
                break
        schema = infer_record_schema([value for _, _, value in head], options.temporal)
        documents = _chain(head, documents)
    return batches_of(
        _extracted(documents, paths, schema),
        schema,
        options.temporal,
        options.batch_size,
        options.inference_sample,
    )


def _chain(head: list[Parsed], rest: Iterator[Parsed]) -> Iterator[Parsed]:
    yield from head
    yield from rest


def _extracted(
    documents: Iterator[Parsed], paths: Mapping[str, PathFunction], schema: RecordSchema
) -> Iterator[Parsed]:
    """Each record as the values of the paths whose field the schema has."""
    names = set(schema.names)
    wanted = [(name, path) for name, path in paths.items() if name in names]
    for number, line, document in documents:
        values: dict[str, Any] = {}
        for name, path in wanted:
            try:
                values[name] = path(document)
            except LookupError:
                continue  # null, or the field's default (NiFi's convert of a null)
            except ValueError as exc:
                raise record_error(number, line, name, str(exc)) from None
        yield number, line, values
