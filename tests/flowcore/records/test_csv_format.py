"""Tests for NiFi's CSV formats as dialects."""

from __future__ import annotations

import pytest

from flowcore.errors import ConfigurationError
from flowcore.records.csv_format import CSV_FORMATS, dialect_for


def test_predefined_formats_are_commons_csvs() -> None:
    """MySQL is tab-separated with no quote and \\N for null; RFC 4180 ends records with CRLF."""
    mysql = dialect_for("mysql")
    assert (mysql.delimiter, mysql.quote, mysql.escape, mysql.null_string) == (
        "\t",
        None,
        "\\",
        "\\N",
    )
    assert dialect_for("RFC 4180").record_separator == "\r\n"
    assert dialect_for("informix-unload").delimiter == "|"
    assert set(CSV_FORMATS) == {
        "rfc-4180",
        "excel",
        "tdf",
        "mysql",
        "informix-unload",
        "informix-unload-csv",
    }


def test_custom_format_takes_nifis_properties_with_escapes() -> None:
    """Value Separator ``\\t`` is a tab; Record Separator ``\\r\\n`` a CRLF."""
    custom = dialect_for(
        "custom", value_separator="\\t", record_separator="\\r\\n", null_string="NULL"
    )
    assert (custom.delimiter, custom.record_separator, custom.null_string) == ("\t", "\r\n", "NULL")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"value_separator": ";;"}, "Value Separator must be one character"),
        ({"value_separator": ""}, "Value Separator must be one character"),
        ({"quote_mode": "SOME"}, "Quote Mode 'SOME'"),
    ],
)
def test_bad_custom_settings_are_named(kwargs: dict, message: str) -> None:
    """A bad property is refused naming the property."""
    with pytest.raises(ConfigurationError, match=message):
        dialect_for("custom", **kwargs)
    with pytest.raises(ConfigurationError, match="CSV Format 'nope'"):
        dialect_for("nope")
