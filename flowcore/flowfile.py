"""The FlowFile model: immutable attributes plus a pointer to content.

A FlowFile never holds its bytes. It holds a :class:`ContentClaim`, a byte range of a
:class:`ResourceClaim` (one file in the content repository). Many FlowFiles share one resource
claim, and a split can point at a sub-range of its parent's claim without copying. An *external*
resource claim names a file outside the repository (zero-copy ingestion), guarded by a
fingerprint of its size, modification time and inode. Every change
makes a new value (``attrs.evolve``), so a FlowFile can be shipped to Spark, cached or compared
safely.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "CORE_ATTRIBUTES",
    "EXTERNAL_CONTAINER",
    "UUID_PREFIX_LENGTH",
    "UUID_SEQUENCE_BITS",
    "Attributes",
    "Content",
    "ContentClaim",
    "CountedUuids",
    "FlowFile",
    "ResourceClaim",
    "Rope",
    "content_of",
    "new_uuid",
    "new_uuids",
    "sequence_uuid",
    "uuid_in_sequence",
]

#: Attributes every FlowFile carries; a session never removes them (NiFi's REQUIRED_ATTRIBUTES).
CORE_ATTRIBUTES: frozenset[str] = frozenset({"filename", "path", "uuid"})
#: The container name of external resource claims: files the repository reads but never owns.
EXTERNAL_CONTAINER = "external"


#: Low bits of a uuid that count FlowFiles under one random prefix (the last 8 hex digits).
UUID_SEQUENCE_BITS = 32
#: Characters of a uuid before its counted digits.
UUID_PREFIX_LENGTH = 28
_COUNTED_DIGITS = re.compile(r"[0-9a-f]{8}")


def sequence_uuid(prefix: str, number: int) -> str:
    """The uuid numbered *number* under *prefix* (its first :data:`UUID_PREFIX_LENGTH` chars)."""
    return f"{prefix}{number:08x}"


def uuid_in_sequence(text: str) -> tuple[str, int] | None:
    """``(prefix, number)`` of a uuid in the canonical lowercase form; None for any other text."""
    digits = text[UUID_PREFIX_LENGTH:]
    if len(text) != UUID_PREFIX_LENGTH + 8 or not _COUNTED_DIGITS.fullmatch(digits):
        return None
    return text[:UUID_PREFIX_LENGTH], int(digits, 16)


class CountedUuids(Sequence[str]):
    """Uuids given as runs of counted uuids ``(prefix, first number, count, step)``, in order.

    A merge of 10,000 FlowFiles has 10,000 parents; made as batches, their uuids are a few
    runs: consecutive (step 1) when a bin takes a whole split batch, or every eighth (step 8)
    when a bin takes one group of eight. This sequence reads like a tuple of the uuids (and
    equals one), but is stored, and written to provenance, as the runs, without a string per
    uuid. A run may be given as ``(prefix, first, count)``: step 1.
    """

    __slots__ = ("_length", "runs")

    def __init__(self, runs: Iterable[tuple[str, int, int] | tuple[str, int, int, int]]) -> None:
        merged: list[tuple[str, int, int, int]] = []
        for run in runs:
            prefix, first, count = run[0], run[1], run[2]
            step = run[3] if len(run) > 3 and count > 1 else 1  # type: ignore[misc]
            if not count:
                continue
            if merged and merged[-1][0] == prefix:
                _, start, held, stride = merged[-1]
                gap = first - (start + (held - 1) * stride)
                if gap and (held == 1 or gap == stride) and (count == 1 or gap == step):
                    merged[-1] = (prefix, start, held + count, gap)
                    continue
            merged.append((prefix, first, count, step))
        self.runs: tuple[tuple[str, int, int, int], ...] = tuple(merged)
        self._length = sum(run[2] for run in merged)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[str]:
        for prefix, first, count, step in self.runs:
            for number in range(first, first + count * step, step):
                yield sequence_uuid(prefix, number)

    def __contains__(self, value: object) -> bool:
        position = uuid_in_sequence(value) if isinstance(value, str) else None
        if position is None:
            return False
        prefix, number = position
        for run_prefix, first, count, step in self.runs:
            if run_prefix == prefix:
                place, off = divmod(number - first, step)
                if not off and 0 <= place < count:
                    return True
        return False

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        for prefix, first, count, step in self.runs:
            if index < count:
                return sequence_uuid(prefix, first + index * step)
            index -= count
        raise IndexError(index)  # pragma: no cover - the length says otherwise

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CountedUuids):  # runs made in other orders may hold the same
            return self.runs == other.runs or (
                self._length == other._length and tuple(self) == tuple(other)
            )
        if isinstance(other, (tuple, list)):
            return len(other) == self._length and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"CountedUuids({list(self.runs)!r})"


class _UuidSequence:
    """Consecutive type-4 uuids: a random 90-bit prefix, then a 32-bit counter.

    Every uuid is still a valid RFC 4122 version-4 uuid, and prefixes are random enough that
    two processes never share one; but the FlowFiles a task creates get neighbouring uuids, so
    the provenance repository can store and search a run of their events as a range instead of
    a row per FlowFile. A forked process (a Spark Python worker) starts a prefix of its own.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self.reseed()

    def reseed(self) -> None:
        """Start a new random prefix."""
        self._state = (self._prefix(), itertools.count())

    @staticmethod
    def _prefix() -> str:
        h = os.urandom(12).hex()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def __call__(self) -> str:
        prefix, counter = self._state  # one read: a prefix and the counter that goes with it
        number = next(counter)
        if number >> UUID_SEQUENCE_BITS:
            self.reseed()
            return self()
        return sequence_uuid(prefix, number)

    def take(self, count: int) -> tuple[str, int]:
        """Reserve *count* consecutive uuids: the shared 28-character start and the first number.

        They get a prefix of their own, so no other thread's uuids can fall among them.
        """
        if count >> UUID_SEQUENCE_BITS:
            msg = f"at most {1 << UUID_SEQUENCE_BITS} uuids are reserved at once, not {count}"
            raise ValueError(msg)
        return self._prefix(), 0


_VARIANT = "89ab"  # RFC 4122 variant: the top two bits of the clock sequence are 10
_SEQUENCE = _UuidSequence()
os.register_at_fork(after_in_child=_SEQUENCE.reseed)


def new_uuids(count: int) -> tuple[str, int]:
    """Reserve *count* consecutive uuids (for a FlowFile batch): their start and first number.

    Uuid *i* is the start followed by ``first + i`` as 8 hex digits.
    """
    return _SEQUENCE.take(count)


def new_uuid() -> str:
    """Return a type-4 UUID string, the form NiFi gives FlowFiles.

    Uuids made in one process share a random prefix and count up in their last 8 hex digits
    (see :class:`_UuidSequence`); they are as unique as :func:`uuid.uuid4`'s.
    """
    return _SEQUENCE()


class Attributes(Mapping[str, str]):
    """An immutable, hashable, picklable ``str -> str`` mapping.

    ``types.MappingProxyType`` cannot be pickled, and Spark pickles every FlowFile it ships, so
    attributes get this small dedicated type. Keys keep insertion order, as NiFi's attribute maps
    do when printed.
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        items = dict(data)
        for key, value in items.items():
            if not isinstance(key, str) or not isinstance(value, str):
                msg = (
                    f"attribute {key!r} must map a str to a str (got {type(key).__name__} -> "
                    f"{type(value).__name__} {value!r}); convert the value with str() first"
                )
                raise TypeError(msg)
        self._data = items
        self._hash: int | None = None

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # Direct dict-backed versions of the Mapping mixins: attributes are read on every step.
    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        """The value of *key*, or *default*."""
        return self._data.get(key, default)

    def keys(self) -> Any:
        """A view of the names."""
        return self._data.keys()

    def items(self) -> Any:
        """A view of the (name, value) pairs."""
        return self._data.items()

    def values(self) -> Any:
        """A view of the values."""
        return self._data.values()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attributes):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Attributes({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Attributes, (self._data,))

    @classmethod
    def _trusted(cls, data: dict[str, str]) -> Attributes:
        """Wrap a dict already known to map str to str (no per-item checks)."""
        instance = object.__new__(cls)
        instance._data = data
        instance._hash = None
        return instance

    def updated(self, changes: Mapping[str, str]) -> Attributes:
        """Return a copy with *changes* applied (new keys appended, existing keys replaced)."""
        for key, value in changes.items():
            if not isinstance(key, str) or not isinstance(value, str):
                return Attributes({**self._data, **changes})  # raises the descriptive TypeError
        return Attributes._trusted({**self._data, **changes})

    def without(self, keys: Iterable[str]) -> Attributes:
        """Return a copy without *keys* (missing keys are ignored)."""
        drop = set(keys)
        return Attributes._trusted({k: v for k, v in self._data.items() if k not in drop})


def _to_attributes(value: Mapping[str, str] | Iterable[tuple[str, str]]) -> Attributes:
    return value if isinstance(value, Attributes) else Attributes(value)


@attrs.frozen(cache_hash=True)  # hashed per FlowFile when segments are written
class ResourceClaim:
    """One file in the content repository, shared by many FlowFiles.

    Attributes:
        container: the container (one directory per disk) that holds the file.
        section: the sub-directory inside the container (NiFi uses 1024 per container).
        id: the file's name inside its section, unique in the repository.
        loss_tolerant: whether losing the file on a crash is acceptable (NiFi's flag).
    """

    container: str
    section: str
    id: str
    loss_tolerant: bool = False

    @classmethod
    def external(cls, path: str, fingerprint: str) -> ResourceClaim:
        """A claim on a file outside the repository, valid while *fingerprint* still matches.

        Args:
            path: the file's absolute path (every executor must see it at the same path).
            fingerprint: ``size:mtime_ns:inode`` when the file was listed.
        """
        return cls(EXTERNAL_CONTAINER, fingerprint, path)

    @property
    def is_external(self) -> bool:
        """Whether the claim names an outside file (never archived or deleted)."""
        return self.container == EXTERNAL_CONTAINER

    def __str__(self) -> str:
        return f"{self.container}/{self.section}/{self.id}"


@attrs.frozen
class ContentClaim:
    """A byte range ``[offset, offset + length)`` of a resource claim.

    Slicing a claim is how splits and partial clones share content without copying.
    """

    resource_claim: ResourceClaim
    offset: int = attrs.field(validator=attrs.validators.ge(0))
    length: int = attrs.field(validator=attrs.validators.ge(0))

    def slice(self, offset: int, length: int) -> ContentClaim:
        """Return the sub-range starting *offset* bytes into this claim.

        Raises:
            ValueError: the sub-range does not fit inside this claim.
        """
        if offset < 0 or length < 0 or offset + length > self.length:
            msg = (
                f"cannot slice {length} bytes at offset {offset} out of a {self.length}-byte "
                f"claim on {self.resource_claim}; the range must lie inside the claim"
            )
            raise ValueError(msg)
        return ContentClaim(self.resource_claim, self.offset + offset, length)

    @property
    def pieces(self) -> tuple[ContentClaim, ...]:
        """The claim ranges the content is made of: this one (a :class:`Rope` has several)."""
        return (self,)

    @property
    def resource_claims(self) -> tuple[ResourceClaim, ...]:
        """The resource claims the content keeps alive, one per piece."""
        return (self.resource_claim,)

    def __str__(self) -> str:
        return f"{self.resource_claim}[{self.offset}:{self.offset + self.length}]"


def _at_least_two(_instance: Rope, _attribute: Any, pieces: tuple[ContentClaim, ...]) -> None:
    if len(pieces) < 2 or any(p.length == 0 for p in pieces):
        msg = (
            f"a rope needs two or more non-empty pieces, not {len(pieces)}; build content from "
            "pieces with content_of(), which returns a plain claim or None when that is enough"
        )
        raise ValueError(msg)


@attrs.frozen(cache_hash=True)
class Rope:
    """Content made of ranges of several claims, read one after another (zero-copy merges).

    MergeContent with Zero Copy builds one instead of copying its inputs; slicing a rope (a
    split) gives a shorter rope or a plain claim. Every piece keeps its resource claim alive.

    Attributes:
        pieces: the claim ranges, in order; two or more, none empty.
        length: the total length in bytes.
    """

    pieces: tuple[ContentClaim, ...] = attrs.field(converter=tuple, validator=_at_least_two)
    length: int = attrs.field(init=False)

    @length.default
    def _total(self) -> int:
        return sum(p.length for p in self.pieces)

    @property
    def resource_claims(self) -> tuple[ResourceClaim, ...]:
        """The resource claims the content keeps alive, one per piece."""
        return tuple(p.resource_claim for p in self.pieces)

    def slice(self, offset: int, length: int) -> ContentClaim | Rope | None:
        """The sub-range starting *offset* bytes in: a plain claim when it lies in one piece.

        Raises:
            ValueError: the sub-range does not fit inside the rope.
        """
        if offset < 0 or length < 0 or offset + length > self.length:
            msg = (
                f"cannot slice {length} bytes at offset {offset} out of a {self.length}-byte "
                f"rope of {len(self.pieces)} pieces; the range must lie inside it"
            )
            raise ValueError(msg)
        taken: list[ContentClaim] = []
        start, end = offset, offset + length
        at = 0
        for piece in self.pieces:
            piece_end = at + piece.length
            if piece_end > start and at < end:
                lo = max(start, at) - at
                hi = min(end, piece_end) - at
                taken.append(piece.slice(lo, hi - lo))
            if piece_end >= end:
                break
            at = piece_end
        return content_of(taken)

    def __str__(self) -> str:
        return " + ".join(str(p) for p in self.pieces)


#: What a FlowFile's content points at: one claim range, or a rope of them.
Content = ContentClaim | Rope


def content_of(pieces: Iterable[ContentClaim]) -> ContentClaim | Rope | None:
    """Content made of *pieces* in order: empty ones dropped, touching ranges joined.

    Returns ``None`` for no bytes, a plain :class:`ContentClaim` for one range, else a
    :class:`Rope`. Joining makes a defragmented file, whose blocks were consecutive ranges of
    one file, a single claim again.
    """
    joined: list[ContentClaim] = []
    for piece in pieces:
        if piece.length == 0:
            continue
        if joined:
            last = joined[-1]
            if (
                last.resource_claim == piece.resource_claim
                and last.offset + last.length == piece.offset
            ):
                joined[-1] = ContentClaim(
                    last.resource_claim, last.offset, last.length + piece.length
                )
                continue
        joined.append(piece)
    if not joined:
        return None
    return joined[0] if len(joined) == 1 else Rope(tuple(joined))


def _check_core_attributes(instance: FlowFile, _attribute: Any, value: Attributes) -> None:
    if "filename" in value and "path" in value and value.get("uuid") == instance.uuid:
        return  # the common case, checked without building sets
    missing = CORE_ATTRIBUTES.difference(value)
    if missing:
        msg = (
            f"FlowFile {instance.uuid!r} lacks core attributes {sorted(missing)!r}; create "
            "FlowFiles with FlowFile.create() or a ProcessSession, which set them"
        )
        raise ValueError(msg)
    if value["uuid"] != instance.uuid:
        msg = (
            f"FlowFile {instance.uuid!r} has a 'uuid' attribute of {value['uuid']!r}; the "
            "attribute must equal the FlowFile's uuid and cannot be changed"
        )
        raise ValueError(msg)


@attrs.frozen
class FlowFile:
    """One unit of data in a flow: immutable attributes and a pointer to content.

    Dates are epoch milliseconds, as in NiFi. ``content`` is ``None`` for an empty FlowFile.

    Attributes:
        id: the repository sequence number; the key of a FlowFile inside a session.
        uuid: the FlowFile's identity in provenance; equals ``attributes["uuid"]``.
        attributes: the attribute map, always holding ``filename``, ``path`` and ``uuid``.
        content: the content claim (or rope of claims), ``None`` when the FlowFile has no content.
        size: the content's length in bytes.
        entry_date: when this FlowFile entered the flow.
        lineage_start_date: when the oldest ancestor of this FlowFile entered the flow.
        lineage_start_index: tie-breaker for equal lineage start dates.
        queue_date: when the FlowFile was last enqueued.
        queue_date_index: tie-breaker for equal queue dates (FIFO order).
        penalty_expiration: until when the FlowFile is penalized (0 when not penalized).
    """

    id: int
    uuid: str
    attributes: Attributes = attrs.field(converter=_to_attributes, validator=_check_core_attributes)
    content: Content | None = None
    size: int = 0
    entry_date: int = 0
    lineage_start_date: int = 0
    lineage_start_index: int = 0
    queue_date: int = 0
    queue_date_index: int = 0
    penalty_expiration: int = 0

    @classmethod
    def create(
        cls,
        id: int,
        now: int,
        attributes: Mapping[str, str] | None = None,
        *,
        uuid: str | None = None,
        content: Content | None = None,
    ) -> FlowFile:
        """Return a new FlowFile with NiFi's core attributes filled in.

        ``filename`` defaults to the uuid and ``path`` to ``./`` (NiFi's ``session.create()``);
        *attributes* override both, but never ``uuid``.
        """
        flowfile_uuid = uuid or new_uuid()
        attrs_map = {"filename": flowfile_uuid, "path": "./", **(attributes or {})}
        attrs_map["uuid"] = flowfile_uuid
        return cls(
            id=id,
            uuid=flowfile_uuid,
            attributes=attrs_map,
            content=content,
            size=content.length if content is not None else 0,
            entry_date=now,
            lineage_start_date=now,
            lineage_start_index=id,
            queue_date=now,
        )

    @property
    def filename(self) -> str:
        """The ``filename`` attribute."""
        return self.attributes["filename"]

    def get(self, name: str, default: str | None = None) -> str | None:
        """Return attribute *name*, or *default* when absent."""
        return self.attributes.get(name, default)

    def replace(self, **changes: Any) -> FlowFile:
        """Return a copy with *changes*, like ``attrs.evolve`` but without re-validating.

        Sessions copy FlowFiles on every change, so this skips the validators when the
        attributes are not replaced (they were checked when this value was built) and checks
        only the core attributes when they are.
        """
        copy = object.__new__(FlowFile)
        setter = object.__setattr__
        get = changes.get
        setter(copy, "id", get("id", self.id))
        setter(copy, "uuid", get("uuid", self.uuid))
        setter(copy, "attributes", _to_attributes(get("attributes", self.attributes)))
        setter(copy, "content", get("content", self.content))
        setter(copy, "size", get("size", self.size))
        setter(copy, "entry_date", get("entry_date", self.entry_date))
        setter(copy, "lineage_start_date", get("lineage_start_date", self.lineage_start_date))
        setter(copy, "lineage_start_index", get("lineage_start_index", self.lineage_start_index))
        setter(copy, "queue_date", get("queue_date", self.queue_date))
        setter(copy, "queue_date_index", get("queue_date_index", self.queue_date_index))
        setter(copy, "penalty_expiration", get("penalty_expiration", self.penalty_expiration))
        if "attributes" in changes or "uuid" in changes:
            _check_core_attributes(copy, None, copy.attributes)
        return copy

    def with_attributes(self, changes: Mapping[str, str] | None = None, **kw: str) -> FlowFile:
        """Return a copy with attributes changed; ``uuid`` cannot be changed and is ignored."""
        merged = {**(changes or {}), **kw}
        merged.pop("uuid", None)
        return self.replace(attributes=self.attributes.updated(merged))

    def without_attributes(self, *names: str) -> FlowFile:
        """Return a copy without *names*; core attributes are kept (NiFi ignores such removals)."""
        return self.replace(attributes=self.attributes.without(set(names) - CORE_ATTRIBUTES))

    def with_content(self, claim: Content | None) -> FlowFile:
        """Return a copy pointing at *claim* (``None`` for empty content)."""
        return self.replace(content=claim, size=claim.length if claim is not None else 0)

    def is_penalized(self, now: int) -> bool:
        """Whether the FlowFile is still penalized at time *now* (epoch ms)."""
        return self.penalty_expiration > now

    def __str__(self) -> str:
        return (
            f"FlowFile[id={self.id}, uuid={self.uuid}, filename={self.filename}, size={self.size}]"
        )


# FlowFile.replace sets every field by hand for speed; this guards against a field being added
# without updating it.
assert [f.name for f in attrs.fields(FlowFile)] == [
    "id",
    "uuid",
    "attributes",
    "content",
    "size",
    "entry_date",
    "lineage_start_date",
    "lineage_start_index",
    "queue_date",
    "queue_date_index",
    "penalty_expiration",
], "update FlowFile.replace when FlowFile's fields change"
