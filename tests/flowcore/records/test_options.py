"""Tests for building codec options from NiFi property values."""

from __future__ import annotations

import pytest

from flowcore.errors import ConfigurationError
from flowcore.records.avro_codec import AvroWriterOptions
from flowcore.records.csv_reader import CsvReaderOptions
from flowcore.records.csv_writer import CsvWriterOptions
from flowcore.records.json_reader import JsonReaderOptions
from flowcore.records.json_writer import JsonWriterOptions
from flowcore.records.options import from_properties, nifi_properties
from flowcore.records.parquet_codec import ParquetWriterOptions


def test_options_are_built_from_nifi_property_text() -> None:
    """Booleans from true/false, unset properties keep NiFi's defaults."""
    options = from_properties(
        CsvReaderOptions,
        {"CSV Format": "rfc-4180", "Treat First Line as Header": "true", "Null String": None},
    )
    assert options == CsvReaderOptions(csv_format="rfc-4180", first_line_is_header=True)
    writer = from_properties(JsonWriterOptions, {"Output Grouping": "output-oneline"})
    assert writer.output_grouping == "output-oneline"


def test_every_options_class_names_nifis_properties() -> None:
    """Each codec's options list the NiFi properties they carry."""
    assert "Value Separator" in nifi_properties(CsvReaderOptions)
    assert "Include Header Line" in nifi_properties(CsvWriterOptions)
    assert "Starting Field Strategy" in nifi_properties(JsonReaderOptions)
    assert "Suppress Null Values" in nifi_properties(JsonWriterOptions)
    assert "Schema Write Strategy" in nifi_properties(AvroWriterOptions)
    assert "Compression Type" in nifi_properties(ParquetWriterOptions)


def test_bad_property_values_name_the_property() -> None:
    """An unknown property, a non-boolean and a value outside the allowable ones are refused."""
    with pytest.raises(ConfigurationError, match="no property 'Nope'"):
        from_properties(CsvReaderOptions, {"Nope": "x"})
    with pytest.raises(ConfigurationError, match="Trim Fields must be true or false"):
        from_properties(CsvReaderOptions, {"Trim Fields": "yes"})
    with pytest.raises(ConfigurationError, match="'Output Grouping' must be in"):
        from_properties(JsonWriterOptions, {"Output Grouping": "nope"})
