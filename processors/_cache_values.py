"""How bytes live in the map cache, whose entries are text.

NiFi's map cache holds bytes; flowcore's :class:`~flowcore.services.MapCache` holds strings (its
entries are a component state). PutDistributedMapCache stores content as UTF-8 text, with bytes
that are not UTF-8 kept as lone surrogates (``surrogateescape``), and FetchDistributedMapCache
encodes them back the same way: any content round-trips byte for byte, and the text that Wait,
Notify and DetectDuplicate store reads back as its UTF-8 bytes, as NiFi's serializers write it.
The write-ahead log packs state strings with ``surrogateescape`` too, so such entries persist.
"""

from __future__ import annotations

__all__ = ["from_bytes", "to_bytes"]


def from_bytes(data: bytes) -> str:
    """The cache text for *data* (reversible for any bytes)."""
    return data.decode("utf-8", "surrogateescape")


def to_bytes(text: str) -> bytes:
    """The bytes a cache text stands for (the inverse of :func:`from_bytes`)."""
    return text.encode("utf-8", "surrogateescape")
