"""How big content decodes, told before it is decoded: the record viewer's guard.

A few KB of compressed Avro or Parquet can hold gigabytes (one 200 MB string deflates to 200 KB,
zstd does better), and a reader decodes a whole block or row group at once. The viewer first
reads the sizes the formats state, and decompresses, a megabyte at a time and only counting,
what states none, stopping at the bound: content past it is refused with one line.

Bytes alone do not bound what decoding builds: an Avro array of nulls costs no byte per item
(five bytes declare 10^9 items, which fastavro builds as a 8 GB list), and a Parquet list of
nulls costs a few bits of definition levels. So the values the first records hold (array items,
map entries, record fields; Parquet's repeated values) are counted too, against their own bound,
before anything is decoded: Avro's by walking the datums with their schema, a block's item count
charged before its items are walked (a 10^9-item block is refused at once), Parquet's from the
footer's value counts.
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from typing import TYPE_CHECKING, Any

import attrs
import fastavro

from flowcore.errors import FlowcoreError

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = [
    "TooBigToShowError",
    "check_avro",
    "check_avro_values",
    "check_parquet",
    "check_parquet_values",
    "decoded_size",
]

_AVRO_MAGIC = b"Obj\x01"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class TooBigToShowError(FlowcoreError, ValueError):
    """Content whose first records decode past the viewer's bound: refused before decoding."""


def check_parquet(metadata: pq.FileMetaData, count: int, bound: int) -> None:
    """Refuse Parquet whose row groups holding its first *count* records decode past *bound*.

    The footer states each row group's uncompressed size, so nothing is decompressed to tell.
    """
    rows = decoded = 0
    for index in range(metadata.num_row_groups):
        if rows >= count:
            break
        group = metadata.row_group(index)
        rows += group.num_rows
        decoded += group.total_byte_size  # the footer's total uncompressed size
    if decoded > bound:
        msg = (
            f"this Parquet file's first row groups hold {decoded:,} bytes uncompressed; the "
            f"viewer decodes up to {bound:,}: download it to see its records"
        )
        raise TooBigToShowError(msg)


def _long(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint long at *pos* (Avro's), and the position after it."""
    shift = value = 0
    while True:
        byte = data[pos]  # IndexError past the end: a header or block cut off
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise IndexError(pos)


def check_avro(data: bytes, count: int, bound: int) -> None:
    """Refuse an Avro data file whose blocks holding its first *count* records decode past *bound*.

    The container's blocks are walked without decoding them: each states its byte size, and its
    decompressed size is read from the codec's own header or by decompressing up to the bound
    (never past it). Bare datums are not compressed, and a damaged header is left to fastavro.
    """
    if not data.startswith(_AVRO_MAGIC):
        return
    try:
        pos, codec = 4, b"null"
        while True:  # the header's metadata map, in blocks
            entries, pos = _long(data, pos)
            if entries == 0:
                break
            if entries < 0:
                entries = -entries
                _, pos = _long(data, pos)
            for _ in range(entries):
                length, pos = _long(data, pos)
                key, pos = data[pos : pos + length], pos + length
                length, pos = _long(data, pos)
                if key == b"avro.codec":
                    codec = data[pos : pos + length]
                pos += length
        pos += 16  # the sync marker
        decoded = records = 0
        while records < count and pos < len(data):
            entries, pos = _long(data, pos)
            length, pos = _long(data, pos)
            block = data[pos : pos + length]
            if len(block) < length:
                return  # cut off by the viewer's window: not read
            decoded += decoded_size(codec.decode(errors="replace"), block, bound - decoded)
            if decoded > bound:
                msg = (
                    f"this Avro content's first records decode to more than {bound:,} "
                    f"bytes (its {codec.decode(errors='replace')} block at byte {pos:,} holds "
                    "more); the viewer does not decompress it: download the content"
                )
                raise TooBigToShowError(msg)
            records += entries
            pos += length + 16
    except IndexError:
        return  # a header or block cut off: fastavro reads what precedes it or says what broke


def decoded_size(codec: str, block: bytes, room: int) -> int:
    """*block*'s decompressed size, or more than *room* when it exceeds it (not decompressed).

    Args:
        codec: the block's Avro codec name (``avro.codec``).
        block: the compressed block as the container holds it.
        room: the bytes it may decode to; past them decompressing stops.
    """
    limit = max(room, 0) + 1
    try:
        if codec == "null":
            return len(block)
        if codec == "deflate":
            inflater = zlib.decompressobj(-15)
            size, chunk = 0, inflater.decompress(block, _STEP)
            while chunk:  # a megabyte at a time, counted and dropped
                size += len(chunk)
                if size >= limit or inflater.eof:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, _STEP)
            return size
        if codec in ("bzip2", "xz"):
            decompressor = bz2.BZ2Decompressor() if codec == "bzip2" else lzma.LZMADecompressor()
            size, chunk = 0, decompressor.decompress(block, _STEP)
            while chunk:
                size += len(chunk)
                if size >= limit or decompressor.eof:
                    break
                chunk = decompressor.decompress(b"", _STEP)
            return size
        if codec == "snappy":  # a raw snappy block starts with its length, as a varint
            return _uvarint(block)
        if codec == "lz4":  # lz4.block stores the length first, 4 bytes little-endian
            return int.from_bytes(block[:4], "little")
        if codec == "zstandard":
            return _zstd_size(block, limit)
    except (zlib.error, lzma.LZMAError, OSError, EOFError):
        return 0  # not decompressible: fastavro says so when it reads the block
    return limit  # a codec the viewer cannot bound


#: Bytes decompressed at a time while a block's size is counted.
_STEP = 1 << 20


def _uvarint(data: bytes) -> int:
    shift = value = 0
    for byte in data[:10]:
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
    return 0


def _zstd_size(block: bytes, unknown: int) -> int:
    """A zstd frame's content size from its header (*unknown* when the frame omits it)."""
    if block[:4] != _ZSTD_MAGIC or len(block) < 6:
        return 0
    descriptor = block[4]
    single = descriptor >> 5 & 1
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (single, 2, 4, 8)[descriptor >> 6]
    if not width:
        return unknown
    size = int.from_bytes(block[pos : pos + width], "little")
    return size + 256 if width == 2 else size


# --- values: what decoding builds, counted before it is built ----------------------------------


def check_parquet_values(metadata: pq.FileMetaData, count: int, bound: int) -> None:
    """Refuse Parquet whose row groups holding its first *count* records repeat past *bound*.

    A list or map column (a repetition level above 0) holds any number of values per row, and
    nulls in it cost a few bits: the footer's value count of each such column chunk is charged
    whole (where in the group its values lie is not told). Flat columns hold one value per row,
    and only the rows read are decoded: they are bounded by *count*.
    """
    repeated = [
        index
        for index in range(metadata.num_columns)
        if metadata.schema.column(index).max_repetition_level > 0
    ]
    rows = values = 0
    for group_index in range(metadata.num_row_groups):
        if rows >= count:
            break
        group = metadata.row_group(group_index)
        rows += group.num_rows
        values += sum(group.column(index).num_values for index in repeated)
    if values > bound:
        msg = (
            f"this Parquet file's first row groups hold {values:,} list and map values; the "
            f"viewer decodes up to {bound:,}: download it to see its records"
        )
        raise TooBigToShowError(msg)


def check_avro_values(
    data: bytes, count: int, bound: int, schema: dict[str, Any] | None = None
) -> None:
    """Refuse Avro whose first *count* records hold more than *bound* values.

    Every array item, map entry and record field counts one, whatever its bytes: an item of
    ``null`` (or of an empty record) costs no byte, so bytes do not bound them. The datums are
    walked with their writer's schema, without building them; an array or map block's count is
    charged before its items are walked, and items of a constant width are skipped in one step.
    Call it after :func:`check_avro`: a container's blocks are decompressed to be walked.
    Damaged or cut-off content stops the walk silently (fastavro says what broke).

    Args:
        data: an Avro data file (``Obj`` header), or bare datums when *schema* is given.
        count: the records the viewer reads.
        bound: the values they may hold.
        schema: the bare datums' schema (the ``avro.schema`` attribute, parsed JSON).

    Raises:
        TooBigToShowError: the records hold more than *bound* values.
    """
    walker = _Walker(bound)
    try:
        if data.startswith(_AVRO_MAGIC):
            reader = fastavro.block_reader(io.BytesIO(data))
            root = walker.compile(reader.writer_schema)
            left = count
            for block in reader:
                body = block.bytes_.getvalue()
                pos = 0
                for _ in range(min(left, block.num_records)):
                    pos = walker.skip(root, body, pos)
                    if pos > len(body):
                        return  # damaged: fastavro says so
                left -= block.num_records
                if left <= 0:
                    break
        elif schema is not None:
            root = walker.compile(schema)
            pos = 0
            for _ in range(count):
                if pos >= len(data):
                    break
                pos = walker.skip(root, data, pos)
    except _TooManyValuesError:
        msg = (
            f"this Avro content's first records hold more than {bound:,} values (array items, "
            "map entries and fields); the viewer does not decode them: download the content"
        )
        raise TooBigToShowError(msg) from None
    except RecursionError:
        msg = "this Avro content's first records nest too deep for the viewer: download the content"
        raise TooBigToShowError(msg) from None
    except Exception:  # damaged or cut off: fastavro reads what precedes it, or says what broke
        return


class _TooManyValuesError(Exception):
    """The walk charged more values than its bound (caught in this module)."""


@attrs.define
class _Node:
    """An Avro schema compiled for the walk.

    Not frozen: a named type's node is made before its fields are compiled, so a recursive
    record can point at it, and is filled in after.

    Attributes:
        kind: ``null``, ``varint`` (int, long, enum), ``fixed`` (boolean, float, double,
            fixed), ``bytes`` (bytes, string), ``record``, ``array``, ``map``, ``union``.
        size: a fixed kind's bytes.
        children: a record's fields, an array's or map's items, a union's branches.
        width: the bytes every datum takes when constant (None when it varies).
        values: the values every datum holds when constant (a record's fields).
    """

    kind: str
    size: int = 0
    children: list[_Node] = attrs.Factory(list)
    width: int | None = None
    values: int = 0


_FIXED = {"boolean": 1, "float": 4, "double": 8}
_VARINT = frozenset({"int", "long", "enum"})


class _Walker:
    """Walks Avro datums as fastavro would decode them, counting values, building none."""

    def __init__(self, bound: int) -> None:
        self.left = bound
        self._named: dict[str, _Node] = {}

    def compile(self, schema: Any) -> _Node:
        """*schema* (any Avro schema JSON) as a walkable tree, named types resolved."""
        named: dict[str, Any] = {}
        parsed = fastavro.parse_schema(schema, named_schemas=named)
        self._named = {}
        for name in named:  # placeholders first: records may recurse
            self._named[name] = _Node("record")
        for name, definition in named.items():
            filled = self._compile(definition, named, set())
            node = self._named[name]
            node.kind, node.size, node.children = filled.kind, filled.size, filled.children
            node.width, node.values = filled.width, filled.values
        return self._compile(parsed, named, set())

    def _compile(self, schema: Any, named: dict[str, Any], seen: set[str]) -> _Node:
        if isinstance(schema, str):
            if schema in named:
                return self._named[schema]
            return _primitive(schema)
        if isinstance(schema, list):
            return _Node("union", children=[self._compile(s, named, seen) for s in schema])
        kind = schema["type"]
        if kind in {"record", "error"}:
            name = schema["name"]
            if name in seen:
                return self._named[name]  # a recursive record: not constant
            fields = [self._compile(f["type"], named, seen | {name}) for f in schema["fields"]]
            node = _Node("record", children=fields, values=len(fields))
            if all(f.width is not None for f in fields):
                node.width = sum(f.width or 0 for f in fields)
                node.values += sum(f.values for f in fields)
            return node
        if kind in {"array", "map"}:
            item = self._compile(schema["items" if kind == "array" else "values"], named, seen)
            return _Node(kind, children=[item])
        if kind == "fixed":
            return _Node("fixed", size=schema["size"], width=schema["size"])
        if kind == "enum":
            return _Node("varint")
        return self._compile(kind, named, seen)  # {"type": "long", "logicalType": ...}

    def charge(self, values: int) -> None:
        self.left -= values
        if self.left < 0:
            raise _TooManyValuesError

    def skip(self, node: _Node, data: bytes, pos: int) -> int:
        """The position after the datum of *node* at *pos*, its values charged."""
        kind = node.kind
        if node.width is not None:
            self.charge(node.values)
            return pos + node.width
        if kind == "varint":
            while data[pos] & 0x80:
                pos += 1
            return pos + 1
        if kind == "bytes":
            length, pos = _long(data, pos)
            if length < 0 or pos + length > len(data):
                raise IndexError(pos)
            return pos + length
        if kind == "record":
            self.charge(len(node.children))
            for child in node.children:
                pos = self.skip(child, data, pos)
            return pos
        if kind == "union":
            branch, pos = _long(data, pos)
            return self.skip(node.children[branch], data, pos)
        return self._blocks(node, data, pos)

    def _blocks(self, node: _Node, data: bytes, pos: int) -> int:
        """An array's or map's blocks: each block's count charged before its items are walked."""
        item = node.children[0]
        keyed = node.kind == "map"
        while True:
            items, pos = _long(data, pos)
            if items == 0:
                return pos
            if items < 0:
                items = -items
                _, pos = _long(data, pos)  # the block's byte size
            self.charge(items)
            if item.width is not None and not keyed:
                self.charge(items * item.values)
                pos += items * item.width
                if pos > len(data):
                    raise IndexError(pos)
                continue
            for _ in range(items):
                if keyed:
                    length, pos = _long(data, pos)
                    pos += length
                pos = self.skip(item, data, pos)


def _primitive(name: str) -> _Node:
    if name == "null":
        return _Node("fixed", width=0)
    if name in _FIXED:
        return _Node("fixed", size=_FIXED[name], width=_FIXED[name])
    if name in _VARINT:
        return _Node("varint")
    if name in ("bytes", "string"):
        return _Node("bytes")
    msg = f"not an Avro type: {name!r}"
    raise ValueError(msg)
