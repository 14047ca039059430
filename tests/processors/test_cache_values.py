"""Tests for processors._cache_values: any bytes round-trip through the cache's text."""

from __future__ import annotations

from processors._cache_values import from_bytes, to_bytes


def test_any_bytes_round_trip() -> None:
    """Every byte value, UTF-8 or not, comes back as it went in."""
    data = bytes(range(256)) + "café ✓".encode()
    assert to_bytes(from_bytes(data)) == data


def test_utf8_is_plain_text() -> None:
    """UTF-8 content is cached as its text (what Wait, Notify and DetectDuplicate store)."""
    assert from_bytes("naïve".encode()) == "naïve"
    assert to_bytes('{"counts":{}}') == b'{"counts":{}}'
