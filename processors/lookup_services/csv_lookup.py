"""CSVRecordLookupService: a reloadable CSV file whose rows are looked up by one column."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError, RecordError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.csv_format import QUOTE_ALL, QUOTE_MINIMAL, QUOTE_NON_NUMERIC, QUOTE_NONE
from flowcore.records.csv_reader import CsvReaderOptions
from flowcore.records.values import batch_rows
from flowcore.validators import BOOLEAN_VALIDATOR, NON_EMPTY_VALIDATOR
from processors.lookup_services.base import KEY, LookupFailureError, RecordLookupService
from processors.record_services import csv as csv_services

__all__ = ["CSVRecordLookupService"]

#: How often a lookup checks whether the file changed (NiFi's SynchronousFileWatcher).
RELOAD_CHECK_INTERVAL = 30.0  # seconds

DEFAULT_FORMAT = "default"
RFC4180 = "RFC4180"

CSV_FILE = PropertyDescriptor(
    "CSV File",
    description="Path to a CSV File in which the key value pairs can be looked up.",
    required=True,
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("csv-file",),
)
CSV_FORMAT = PropertyDescriptor(
    "CSV Format",
    name="csv-format",
    description='Specifies which "format" the CSV data is in, or specifies if custom formatting '
    "should be used.",
    required=True,
    default=DEFAULT_FORMAT,
    allowable_values=(
        *csv_services.CSV_FORMAT.allowable_values,
        AllowableValue(DEFAULT_FORMAT, "Default Format"),
        AllowableValue(RFC4180, RFC4180),
    ),
)
CHARSET = PropertyDescriptor(
    "Character Set",
    description="The Character Encoding that is used to decode the CSV file.",
    required=True,
    default="UTF-8",
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
)
LOOKUP_KEY_COLUMN = PropertyDescriptor(
    "Lookup Key Column",
    description="The field in the CSV file that will serve as the lookup key. This is the field "
    "that will be matched against the property specified in the lookup processor.",
    required=True,
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("lookup-key-column",),
)
IGNORE_DUPLICATES = PropertyDescriptor(
    "Ignore Duplicates",
    description="Ignore duplicate keys for records in the CSV file.",
    required=True,
    default="true",
    allowable_values=("true", "false"),
    validators=(BOOLEAN_VALIDATOR,),
    aliases=("ignore-duplicates",),
)
QUOTE_MODE = PropertyDescriptor(
    "Quote Mode",
    description="Specifies how fields should be quoted when they are written",
    required=True,
    default=QUOTE_MINIMAL,
    allowable_values=(
        AllowableValue(QUOTE_ALL, "Quote All Values"),
        AllowableValue(QUOTE_MINIMAL, "Quote Minimal"),
        AllowableValue(QUOTE_NON_NUMERIC, "Quote Non-Numeric Values"),
        AllowableValue(QUOTE_NONE, "Do Not Quote Values"),
    ),
)


def _always(descriptor: PropertyDescriptor) -> PropertyDescriptor:
    """A CSV option that applies whatever the format (the lookup's formats read them all)."""
    return attrs.evolve(descriptor, dependencies=())


class CSVRecordLookupService(RecordLookupService):
    """A reloadable CSV file-based lookup service (NiFi's CSVRecordLookupService).

    When the lookup key is found in the CSV file, the other columns are returned as a record,
    every field a string; the first line is the header. The file is read when the service is
    enabled and again, on a lookup, when its modification time changed (checked at most every
    30 seconds, as NiFi's file watcher). An empty key fails enabling; a repeated key does
    unless Ignore Duplicates (then the last row wins, as NiFi's map keeps it).
    """

    nifi_types: ClassVar = ("org.apache.nifi.lookup.CSVRecordLookupService",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-lookup-services-nar")
    property_descriptors: ClassVar = (
        CSV_FILE,
        CSV_FORMAT,
        CHARSET,
        LOOKUP_KEY_COLUMN,
        IGNORE_DUPLICATES,
        _always(csv_services.VALUE_SEPARATOR),
        _always(csv_services.QUOTE_CHARACTER),
        QUOTE_MODE,
        _always(csv_services.COMMENT_MARKER),
        _always(csv_services.ESCAPE_CHARACTER),
        _always(csv_services.TRIM_FIELDS),
    )
    tags: ClassVar = ("lookup", "cache", "enrich", "join", "csv", "reloadable", "key", "value")

    def on_enabled(self, context: ServiceContext) -> None:
        """Read the file (NiFi's ``onEnabled`` and ``loadCache``)."""
        self.csv_file = context.get_property(CSV_FILE).value or ""
        self.key_column = context.get_property(LOOKUP_KEY_COLUMN).value or ""
        self.ignore_duplicates = context.get_property(IGNORE_DUPLICATES).as_boolean()
        csv_format = context.get_property(CSV_FORMAT).value or DEFAULT_FORMAT
        custom = csv_format in (DEFAULT_FORMAT, csv_services.CUSTOM)
        value = {d.name: context.get_property(d).value for d in self.property_descriptors}
        self.options = CsvReaderOptions(
            csv_format="rfc-4180" if csv_format == RFC4180 else "custom" if custom else csv_format,
            value_separator=value["Value Separator"] or ",",
            quote_character=value["Quote Character"] or '"',
            escape_character=value["Escape Character"],
            comment_marker=value["Comment Marker"],
            trim_fields=(value["Trim Fields"] or "true").lower() == "true",
            first_line_is_header=True,
            character_set=context.get_property(CHARSET).value or "UTF-8",
        )
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self.cache: dict[str, dict[str, str | None]] | None = None
        self._load()

    def on_disabled(self) -> None:
        """Forget the rows (NiFi's ``onDisabled``)."""
        self.cache = None

    @property
    def is_caching(self) -> bool:
        """Whether the rows are held (NiFi's ``isCaching``, for tests)."""
        return self.cache is not None

    def _load(self) -> None:
        """Read every row into a dict by its key (the other columns as strings)."""
        try:
            modified = os.stat(self.csv_file).st_mtime_ns
            with open(self.csv_file, "rb") as stream:
                batches = csv_services._all_strings(stream, self.options)
                cache: dict[str, dict[str, str | None]] = {}
                for batch in batches:
                    if self.key_column not in batch.schema.names:
                        msg = (
                            f"Lookup Key Column {self.key_column!r} is not a column of "
                            f"{self.csv_file} (its header names {batch.schema.names!r})"
                        )
                        raise ConfigurationError(msg)
                    for row in batch_rows(batch):
                        key = row.pop(self.key_column)
                        if key is None or not str(key).strip():
                            msg = f"Empty lookup key encountered in: {self.csv_file}"
                            raise ConfigurationError(msg)
                        if key in cache and not self.ignore_duplicates:
                            msg = f"Duplicate lookup key encountered: {key} in {self.csv_file}"
                            raise ConfigurationError(msg)
                        cache[key] = row
        except OSError as error:
            msg = f"CSV File {self.csv_file!r} cannot be read: {error.strerror or error}"
            raise ConfigurationError(msg) from None
        except RecordError as error:
            msg = f"CSV File {self.csv_file!r} is not valid CSV: {error}"
            raise ConfigurationError(msg) from None
        self._modified = modified
        self.cache = cache

    def _reload_if_changed(self) -> None:
        """Read the file again when it changed (checked every RELOAD_CHECK_INTERVAL)."""
        now = time.monotonic()
        if now - self._checked < RELOAD_CHECK_INTERVAL:
            return
        with self._lock:
            self._checked = now
            try:
                modified = os.stat(self.csv_file).st_mtime_ns
            except OSError as error:
                msg = f"CSV File {self.csv_file!r} cannot be read: {error.strerror or error}"
                raise LookupFailureError(msg) from None
            if modified != self._modified:
                try:
                    self._load()
                except ConfigurationError as error:
                    raise LookupFailureError(str(error)) from None

    def lookup(
        self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None
    ) -> dict[str, str | None] | None:
        """The row whose key column is the ``key`` coordinate, without that column, or None.

        Raises:
            LookupFailureError: the file changed and cannot be read again.
        """
        del context
        if not coordinates or coordinates.get(KEY) is None:
            return None
        key = str(coordinates[KEY])
        if not key.strip():
            return None
        self._reload_if_changed()
        found = (self.cache or {}).get(key)
        return None if found is None else dict(found)
