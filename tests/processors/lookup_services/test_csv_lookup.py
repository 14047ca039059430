"""Tests for CSVRecordLookupService, ported from NiFi's TestCSVRecordLookupService."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from processors.lookup_services import CSVRecordLookupService, LookupFailureError, csv_lookup

TEST_CSV = (
    '"key","value","created_at"\n'
    '"property.1","this is property 1","2017-04-01"\n'
    '"property.2","this is property 2","2017-04-02"\n'
)


def enabled(path: Path, **properties: str) -> CSVRecordLookupService:
    """The service over *path*, enabled."""
    settings = {"csv_format": "RFC4180", "lookup_key_column": "key", **properties}
    service = CSVRecordLookupService("csv", csv_file=str(path), **settings)
    assert service.validate() == ()
    return service.enable(ServiceContext(service))  # type: ignore[return-value]


def test_simple_csv_record_lookup_service(tmp_path: Path) -> None:
    """NiFi's testSimpleCsvRecordLookupService: rows by key, the other columns as strings."""
    path = tmp_path / "test.csv"
    path.write_text(TEST_CSV)
    service = enabled(path)
    assert service.lookup({"key": "property.1"}) == {
        "value": "this is property 1",
        "created_at": "2017-04-01",
    }
    assert service.lookup({"key": "property.2"})["value"] == "this is property 2"
    assert service.lookup({"key": "property.3"}) is None


def test_csv_record_lookup_service_with_charset(tmp_path: Path) -> None:
    """NiFi's testSimpleCsvRecordLookupServiceWithCharset: the file decoded in Character Set."""
    path = tmp_path / "latin.csv"
    path.write_bytes("key,value\nproperty.1,this is property \u00e9\n".encode("iso-8859-1"))
    service = enabled(path, character_set="ISO-8859-1")
    assert service.lookup({"key": "property.1"}) == {"value": "this is property \u00e9"}


def test_custom_separator_quoted_escaped(tmp_path: Path) -> None:
    """NiFi's testCsvRecordLookupServiceWithCustomSeparatorQuotedEscaped."""
    path = tmp_path / "sep.csv"
    path.write_text('key|value\n# a comment\n"my_key"|"my_value with an escaped %|."\n')
    service = enabled(
        path,
        csv_format="custom",
        value_separator="|",
        quote_character='"',
        escape_character="%",
        comment_marker="#",
        quote_mode="ALL",
    )
    assert service.lookup({"key": "my_key"}) == {"value": "my_value with an escaped |."}


def test_cache_is_cleared_when_disabled(tmp_path: Path) -> None:
    """NiFi's testCacheIsClearedWhenDisableService."""
    path = tmp_path / "test.csv"
    path.write_text(TEST_CSV)
    service = enabled(path)
    assert service.is_caching
    service.on_disabled()
    assert not service.is_caching


def test_duplicate_keys(tmp_path: Path) -> None:
    """Ignore Duplicates keeps the last row; false fails enabling, naming the key."""
    path = tmp_path / "dup.csv"
    path.write_text("key,value\na,1\na,2\n")
    assert enabled(path, csv_format="default").lookup({"key": "a"}) == {"value": "2"}
    with pytest.raises(ConfigurationError, match="Duplicate lookup key encountered: a"):
        enabled(path, csv_format="default", ignore_duplicates="false")


def test_empty_key_and_unknown_column_fail_enabling(tmp_path: Path) -> None:
    """An empty key, or a key column the header lacks, is a clear enabling error."""
    path = tmp_path / "bad.csv"
    path.write_text("key,value\n,1\n")
    with pytest.raises(ConfigurationError, match="Empty lookup key"):
        enabled(path)
    with pytest.raises(ConfigurationError, match="'nope' is not a column"):
        enabled(path, lookup_key_column="nope")
    with pytest.raises(ConfigurationError, match="cannot be read"):
        enabled(tmp_path / "missing.csv")


def test_reloads_when_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed file is read again on a lookup (NiFi's file watcher), a vanished one fails."""
    monkeypatch.setattr(csv_lookup, "RELOAD_CHECK_INTERVAL", 0.0)
    path = tmp_path / "test.csv"
    path.write_text(TEST_CSV)
    service = enabled(path)
    path.write_text('"key","value","created_at"\n"property.3","three","2017-04-03"\n')
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert service.lookup({"key": "property.3"}) == {"value": "three", "created_at": "2017-04-03"}
    assert service.lookup({"key": "property.1"}) is None
    path.unlink()
    with pytest.raises(LookupFailureError, match="cannot be read"):
        service.lookup({"key": "property.3"})
