"""Avro bytes written by hand for the viewer's tests: what fastavro will not write (bombs)."""

from __future__ import annotations

import io

import fastavro

#: A record whose one field is an array of nulls: each item costs zero bytes.
NULLS = {
    "type": "record",
    "name": "r",
    "fields": [{"name": "a", "type": {"type": "array", "items": "null"}}],
}


def avro_long(value: int) -> bytes:
    """*value* as Avro writes a long: zigzag, then a varint."""
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def null_bomb(items: int, *, sized: bool = False) -> bytes:
    """An Avro data file whose one record's array declares *items* nulls: a few bytes.

    *sized*: the array block gives its count negated and a byte size, as Avro allows.
    """
    header = io.BytesIO()
    fastavro.writer(header, NULLS, [])
    sync = header.getvalue()[-16:]
    count = avro_long(-items) + avro_long(0) if sized else avro_long(items)
    block = count + avro_long(0)
    return header.getvalue() + avro_long(1) + avro_long(len(block)) + block + sync
