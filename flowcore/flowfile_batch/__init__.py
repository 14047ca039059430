"""FlowFile batches: many FlowFiles held as columns, the unit FlowFiles travel in.

A Python object per FlowFile, a session record per FlowFile and a provenance event per FlowFile
cost far more than the work itself when FlowFiles are small: a split line, a generated record.
A :class:`FlowFileBatch` holds N FlowFiles as arrays and columns instead: ids, uuid numbers under
one 28-character uuid prefix, content as offsets and sizes into one resource claim, the attributes
every FlowFile shares once, and per-FlowFile attributes as :mod:`~flowcore.flowfile_batch.columns`.
Cutting, taking by a mask, grouping by a column and encoding to a queue segment or to provenance
runs make no object per FlowFile. Processors with a batch form work on it whole (SplitText makes
its splits as one, UpdateAttribute evaluates Expression Language over columns, RouteOnAttribute
routes by masks, MergeContent bins by a column). Anywhere a batch is not understood it is
*materialized*: :meth:`FlowFileBatch.flowfiles` gives exactly the FlowFiles the one-by-one path
would have made.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import attrs
import numpy as np

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim, sequence_uuid
from flowcore.flowfile_batch.columns import (
    Column,
    IntColumn,
    TextColumn,
    column_from_wire,
    concat_columns,
    constant_column,
)

__all__ = ["BatchMaker", "FlowFileBatch"]

_INT64 = np.dtype("<i8")


def _array(values: Any) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=_INT64)
    if array.base is None and array.flags.writeable:
        array.flags.writeable = False
    return array


_ARRAY_EQ = attrs.cmp_using(eq=np.array_equal)


def _columns_equal(left: Mapping[str, Column], right: Mapping[str, Column]) -> bool:
    if left.keys() != right.keys():
        return False
    return all(
        len(left[n]) == len(right[n]) and bool(np.all(left[n].equals(right[n]))) for n in left
    )


@attrs.frozen
class FlowFileBatch:
    """N FlowFiles as columns.

    FlowFile *i* has id ``ids[i]``, uuid ``uuid_key`` followed by ``uuid_numbers[i]`` as 8 hex
    digits, the shared ``attributes`` plus its value in each of ``columns`` (a None value: no
    such attribute) plus the ``uuid_named`` attributes set to its uuid, content ``sizes[i]``
    bytes at ``offsets[i]`` of ``resource_claim`` (none when the size is 0), lineage start index
    ``lineage_start_indices[i]`` and queue date index ``queue_date_indices[i]``; the dates are
    every FlowFile's.
    """

    ids: np.ndarray = attrs.field(converter=_array, eq=_ARRAY_EQ, repr=False)
    uuid_key: str  # the 28 characters before the counting digits
    uuid_numbers: np.ndarray = attrs.field(converter=_array, eq=_ARRAY_EQ, repr=False)
    attributes: Attributes
    uuid_named: tuple[str, ...]
    resource_claim: ResourceClaim | None
    offsets: np.ndarray = attrs.field(converter=_array, eq=_ARRAY_EQ, repr=False)
    sizes: np.ndarray = attrs.field(converter=_array, eq=_ARRAY_EQ, repr=False)
    entry_date: int
    lineage_start_date: int
    lineage_start_indices: np.ndarray = attrs.field(converter=_array, eq=_ARRAY_EQ, repr=False)
    queue_date: int = 0
    queue_date_indices: np.ndarray = attrs.field(
        default=None,
        converter=lambda v: None if v is None else _array(v),  # type: ignore[misc]
        eq=_ARRAY_EQ,
        repr=False,
    )
    columns: Mapping[str, Column] = attrs.field(
        factory=dict, eq=attrs.cmp_using(eq=_columns_equal), repr=lambda c: repr(sorted(c))
    )

    def __attrs_post_init__(self) -> None:
        if self.queue_date_indices is None:
            object.__setattr__(self, "queue_date_indices", _array(np.zeros(len(self.ids))))

    @classmethod
    def alike(
        cls,
        *,
        count: int,
        first_id: int,
        uuid_key: str,
        uuid_first: int,
        attributes: Attributes,
        uuid_named: tuple[str, ...],
        resource_claim: ResourceClaim | None,
        offset: int,
        stride: int,
        size: int,
        entry_date: int,
        lineage_start_date: int,
        queue_date: int = 0,
        queue_date_index: int = 0,
    ) -> FlowFileBatch:
        """*count* FlowFiles that differ only by position (a generator's).

        Ids, uuids, lineage start indices and queue positions count up from the first ones;
        contents lie at equal steps (*stride*) through one claim.
        """
        steps = np.arange(count, dtype=_INT64)
        return cls(
            ids=first_id + steps,
            uuid_key=uuid_key,
            uuid_numbers=uuid_first + steps,
            attributes=attributes,
            uuid_named=uuid_named,
            resource_claim=resource_claim,
            offsets=offset + steps * stride,
            sizes=np.full(count, size, dtype=_INT64),
            entry_date=entry_date,
            lineage_start_date=lineage_start_date,
            lineage_start_indices=first_id + steps,
            queue_date=queue_date,
            queue_date_indices=queue_date_index + steps,
        )

    # --- what it holds -----------------------------------------------------------------------

    @property
    def count(self) -> int:
        """How many FlowFiles."""
        return len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def bytes(self) -> int:
        """The FlowFiles' total size."""
        return int(self.sizes.sum())

    def uuid(self, index: int) -> str:
        """FlowFile *index*'s uuid."""
        return sequence_uuid(self.uuid_key, int(self.uuid_numbers[index]))

    def content(self, index: int) -> ContentClaim | None:
        """FlowFile *index*'s content claim."""
        size = int(self.sizes[index])
        if self.resource_claim is None or size == 0:
            return None
        return ContentClaim(self.resource_claim, int(self.offsets[index]), size)

    def column(self, name: str) -> Column | None:
        """Attribute *name* of every FlowFile as a column; None when no FlowFile has it."""
        if name in self.columns:
            return self.columns[name]
        if name == "uuid" or name in self.uuid_named:
            return TextColumn(np.arange(self.count), tuple(self.uuids()))
        value = self.attributes.get(name)
        return None if value is None else constant_column(value, self.count)

    def uuids(self) -> list[str]:
        """Every FlowFile's uuid, in order."""
        key = self.uuid_key
        return [f"{key}{n:08x}" for n in self.uuid_numbers.tolist()]

    def uuid_bytes(self) -> bytes:
        """Every FlowFile's uuid as ASCII, back to back: ``"".join(self.uuids()).encode()``.

        Made from the numbers with numpy, without a string per FlowFile (a bundle's default
        name digests every uuid of a bin).
        """
        numbers = self.uuid_numbers
        if not len(numbers) or int(numbers.max()) >> 32 or int(numbers.min()) < 0:
            return "".join(self.uuids()).encode()  # not eight hex digits each
        shifts = np.arange(28, -1, -4, dtype=np.uint64)
        nibbles = (numbers.astype(np.uint64)[:, None] >> shifts) & np.uint64(0xF)
        key = np.frombuffer(self.uuid_key.encode(), dtype=np.uint8)
        rows = np.empty((len(numbers), len(key) + 8), dtype=np.uint8)
        rows[:, : len(key)] = key
        rows[:, len(key) :] = _HEX_DIGITS[nibbles.astype(np.intp)]
        return rows.tobytes()

    def varies(self, name: str) -> bool:
        """Whether attribute *name* can differ between the FlowFiles."""
        return name in self.columns or name in self.uuid_named or name == "uuid"

    def flowfile(self, index: int) -> FlowFile:
        """FlowFile *index*, as the one-by-one path makes it."""
        return self._make(index, self.uuid(index), self._row_attributes(index))

    def _row_attributes(self, index: int) -> dict[str, str]:
        values = {}
        for name, column in self.columns.items():
            value = column.value(index)
            if value is not None:
                values[name] = value
        return values

    def _make(self, index: int, uuid: str, own: Mapping[str, str]) -> FlowFile:
        flowfile = object.__new__(FlowFile)
        setter = object.__setattr__
        attributes = {**dict.fromkeys(self.uuid_named, uuid), **self.attributes._data, **own}
        attributes["uuid"] = uuid
        size = int(self.sizes[index])
        content = None
        if self.resource_claim is not None and size:
            content = ContentClaim(self.resource_claim, int(self.offsets[index]), size)
        setter(flowfile, "id", int(self.ids[index]))
        setter(flowfile, "uuid", uuid)
        setter(flowfile, "attributes", Attributes._trusted(attributes))
        setter(flowfile, "content", content)
        setter(flowfile, "size", size)
        setter(flowfile, "entry_date", self.entry_date)
        setter(flowfile, "lineage_start_date", self.lineage_start_date)
        setter(flowfile, "lineage_start_index", int(self.lineage_start_indices[index]))
        setter(flowfile, "queue_date", self.queue_date)
        setter(flowfile, "queue_date_index", int(self.queue_date_indices[index]))
        setter(flowfile, "penalty_expiration", 0)
        return flowfile

    def flowfiles(self) -> list[FlowFile]:
        """Every FlowFile, in order.

        Built field by field, as :meth:`FlowFile.replace` does, since a batch's values were
        checked when it was made (a batch read from a queue becomes its FlowFiles here).
        """
        if not self.count:
            return []
        uuids = self.uuids()
        columns = [(name, column.values()) for name, column in self.columns.items()]
        made = []
        for index, uuid in enumerate(uuids):
            own = {name: values[index] for name, values in columns if values[index] is not None}
            made.append(self._make(index, uuid, own))  # type: ignore[arg-type]
        return made

    def __iter__(self) -> Iterator[FlowFile]:
        return iter(self.flowfiles())

    def claim_counts(self) -> dict[ResourceClaim, int]:
        """How many FlowFiles reference each resource claim."""
        if self.resource_claim is None:
            return {}
        holding = int(np.count_nonzero(self.sizes))
        return {self.resource_claim: holding} if holding else {}

    def back_to_back(self) -> bool:
        """Whether the contents lie one after the other in the claim, in order."""
        if self.count < 2:
            return True
        return bool(np.array_equal(self.offsets[1:], self.offsets[:-1] + self.sizes[:-1]))

    # --- new batches from this one ------------------------------------------------------------

    def cut(self, start: int, stop: int) -> FlowFileBatch:
        """FlowFiles ``start .. stop-1`` as a batch of their own."""
        stop = min(stop, self.count)
        return self._rows(
            slice(start, stop), {n: c.cut(start, stop) for n, c in self.columns.items()}
        )

    def take(self, indices: np.ndarray | Sequence[int]) -> FlowFileBatch:
        """The FlowFiles at *indices*, in that order."""
        picked = np.asarray(indices, dtype=_INT64)
        return self._rows(picked, {n: c.take(picked) for n, c in self.columns.items()})

    @classmethod
    def interleaved(
        cls, parts: Sequence[FlowFileBatch], rows: Sequence[np.ndarray]
    ) -> FlowFileBatch | None:
        """The FlowFiles of *parts* as one batch, in the order of their *rows*.

        Part *p*'s FlowFile *i* was row ``rows[p][i]`` of one input batch; the parts are the
        routes a batch form cut it into. An attribute shared by all parts with one value stays
        shared; any other becomes a column. None when the parts are not of one batch (other
        uuid keys, claims or dates), so they cannot be one.
        """
        first = parts[0]
        same = (
            "uuid_key",
            "resource_claim",
            "uuid_named",
            "entry_date",
            "lineage_start_date",
            "queue_date",
        )
        if any(getattr(p, name) != getattr(first, name) for p in parts[1:] for name in same):
            return None
        order = np.argsort(np.concatenate(rows), kind="stable")

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])[order]

        names = dict.fromkeys(n for p in parts for n in (*p.attributes, *p.columns))
        shared: dict[str, str] = {}
        columns: dict[str, Column] = {}
        for name in names:
            values = {p.attributes.get(name) for p in parts if name not in p.columns}
            if (
                len(values) == 1
                and None not in values
                and not any(name in p.columns for p in parts)
            ):
                shared[name] = values.pop()  # type: ignore[assignment]
                continue
            pieces = [
                p.columns[name]
                if name in p.columns
                else constant_column(p.attributes.get(name), p.count)
                for p in parts
            ]
            columns[name] = concat_columns(pieces).take(order)
        return cls(
            ids=joined("ids"),
            uuid_key=first.uuid_key,
            uuid_numbers=joined("uuid_numbers"),
            attributes=Attributes(shared),
            uuid_named=first.uuid_named,
            resource_claim=first.resource_claim,
            offsets=joined("offsets"),
            sizes=joined("sizes"),
            entry_date=first.entry_date,
            lineage_start_date=first.lineage_start_date,
            lineage_start_indices=joined("lineage_start_indices"),
            queue_date=first.queue_date,
            queue_date_indices=joined("queue_date_indices"),
            columns=columns,
        )

    def where(self, mask: np.ndarray) -> FlowFileBatch:
        """The FlowFiles where *mask* is true, in order."""
        return self.take(np.flatnonzero(mask))

    def _rows(self, rows: Any, columns: dict[str, Column]) -> FlowFileBatch:
        return attrs.evolve(
            self,
            ids=self.ids[rows],
            uuid_numbers=self.uuid_numbers[rows],
            offsets=self.offsets[rows],
            sizes=self.sizes[rows],
            lineage_start_indices=self.lineage_start_indices[rows],
            queue_date_indices=self.queue_date_indices[rows],
            columns=columns,
        )

    def with_attributes(self, changes: Mapping[str, str]) -> FlowFileBatch:
        """Every FlowFile with *changes* applied; ``uuid`` cannot change and is ignored."""
        updates = {k: v for k, v in changes.items() if k != "uuid"}
        named = tuple(n for n in self.uuid_named if n not in updates)
        columns = {n: c for n, c in self.columns.items() if n not in updates}
        return attrs.evolve(
            self, attributes=self.attributes.updated(updates), uuid_named=named, columns=columns
        )

    def with_columns(self, changes: Mapping[str, Column]) -> FlowFileBatch:
        """Each FlowFile with its value of each of *changes* (None: the attribute removed)."""
        updates = {k: v for k, v in changes.items() if k != "uuid"}
        for name, column in updates.items():
            if len(column) != self.count:
                msg = f"column {name!r} has {len(column)} values for {self.count} FlowFiles"
                raise ValueError(msg)
        shared = self.attributes.without(updates)
        named = tuple(n for n in self.uuid_named if n not in updates)
        return attrs.evolve(
            self, attributes=shared, uuid_named=named, columns={**self.columns, **updates}
        )

    def without_attributes(self, names: Sequence[str]) -> FlowFileBatch:
        """Every FlowFile without the attributes *names* (``uuid`` stays)."""
        doomed = set(names) - {"uuid"}
        return attrs.evolve(
            self,
            attributes=self.attributes.without(doomed),
            uuid_named=tuple(n for n in self.uuid_named if n not in doomed),
            columns={n: c for n, c in self.columns.items() if n not in doomed},
        )

    def queued(self, queue_date: int, queue_date_index: int) -> FlowFileBatch:
        """The batch as enqueued at *queue_date*, its FlowFiles numbered from the index given."""
        return attrs.evolve(
            self,
            queue_date=queue_date,
            queue_date_indices=queue_date_index + np.arange(self.count, dtype=_INT64),
        )

    # --- stored form ----------------------------------------------------------------------------

    def to_wire(self) -> list[Any]:
        """The batch as one segment record: scalars, array bytes and columns."""
        rc = self.resource_claim
        return [
            self.uuid_key,
            self.attributes._data,
            list(self.uuid_named),
            None if rc is None else [rc.container, rc.section, rc.id],
            self.entry_date,
            self.lineage_start_date,
            self.queue_date,
            [
                a.tobytes()
                for a in (
                    self.ids,
                    self.uuid_numbers,
                    self.offsets,
                    self.sizes,
                    self.lineage_start_indices,
                    self.queue_date_indices,
                )
            ],
            {name: column.to_wire() for name, column in self.columns.items()},
        ]

    @classmethod
    def from_wire(cls, wire: Sequence[Any]) -> FlowFileBatch:
        """The inverse of :meth:`to_wire`."""
        key, shared, named, rc, entry, lineage, queued, arrays, columns = wire
        ids, numbers, offsets, sizes, lineage_indices, queue_indices = (
            np.frombuffer(a, dtype=_INT64) for a in arrays
        )
        return cls(
            ids=ids,
            uuid_key=key,
            uuid_numbers=numbers,
            attributes=Attributes._trusted(dict(shared)),
            uuid_named=tuple(named),
            resource_claim=None if rc is None else ResourceClaim(*rc),
            offsets=offsets,
            sizes=sizes,
            entry_date=entry,
            lineage_start_date=lineage,
            lineage_start_indices=lineage_indices,
            queue_date=queued,
            queue_date_indices=queue_indices,
            columns={name: column_from_wire(c) for name, c in columns.items()},
        )


#: ASCII hex digits, indexed by a nibble's value
_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


class BatchMaker(Protocol):
    """What a source's ``read_work_batches`` is given.

    See :meth:`~flowcore.processor.kinds.SourceProcessor.read_work_batches`.
    """

    def create(
        self, count: int, attributes: Mapping[str, str], content: bytes | None
    ) -> FlowFileBatch:
        """*count* new FlowFiles, each with *content* (None or empty: none).

        *attributes* go over the defaults ``filename`` (the uuid) and ``path`` (``./``). The
        batch the source returns gets its CREATE events, as one run.
        """
        ...

    def create_each(
        self, count: int, attributes: Mapping[str, str], size: int, contents: Iterable[bytes]
    ) -> list[FlowFileBatch]:
        """:meth:`create`, each FlowFile with *size* bytes of its own.

        *contents* are the FlowFiles' bytes back to back (*count* times *size*), in chunks of
        any length: a generator of unique FlowFiles writes them without holding them all. They
        come as one batch per content claim (a claim holds at most the content repository's
        maximum appendable size): return them all.
        """
        ...

    def write(self, content: Any) -> ContentClaim | None:
        """Write one FlowFile's content (bytes, byte chunks or a callback given a stream).

        As ``session.write`` writes it: consecutive contents pack into the task's appendable
        claims. Returns its claim, None when empty; pass it to :meth:`create_rows`.
        """
        ...

    def reference(
        self, path: Any, offset: int, length: int, fingerprint: str
    ) -> ContentClaim | None:
        """A byte range of a file as content, not copied (``session.import_by_reference``).

        Raises ``ContentChangedError`` when the file is no longer the version *fingerprint*
        (``size:mtime_ns:inode``) names.
        """
        ...

    def create_rows(
        self, contents: Sequence[ContentClaim | None], attributes: Sequence[Mapping[str, str]]
    ) -> list[FlowFileBatch]:
        """New FlowFiles, FlowFile *i* with content ``contents[i]`` and ``attributes[i]``.

        Attributes over the defaults ``filename`` (the uuid) and ``path`` (``./``); they come
        as one batch per resource claim, in order: return them all.
        """
        ...

    def create_spans(self, claim: Any, sizes: Any, attributes: Mapping[str, str]) -> FlowFileBatch:
        """New FlowFiles whose contents lie back to back in one written *claim* (one batch).

        FlowFile *i* holds the next ``sizes[i]`` bytes (none when 0): many small contents
        written at once with :meth:`write`, without a ``ContentClaim`` each. Every FlowFile
        has *attributes* (over ``filename`` and ``path``); add columns to the batch returned.
        """
        ...

    def report_receive(
        self,
        batch: FlowFileBatch,
        transit_uri: str | Sequence[str],
        *,
        details: str | Sequence[str | None] | None = None,
        durations_ms: Sequence[int] | None = None,
    ) -> None:
        """``session.provenance.receive`` for each FlowFile of a made *batch* (no CREATE then).

        *transit_uri* and *details* are one value, or one per FlowFile; *durations_ms* one per
        FlowFile.
        """
        ...

    def delete_after_commit(self, path: Any) -> None:
        """Delete the source file *path* once the commit is durable (``import_from``'s way)."""
        ...

    def unread(self, item: Any, error: Exception) -> None:
        """Work item *item* could not be read: it is listed and read again later.

        A full disk or read-only repository behind *error* raises it again (the run stops).
        """
        ...

    def controller_service(self, name: str) -> object:
        """The enabled controller service *name*, as ``ProcessContext.controller_service``."""
        ...


__all__ += ["Column", "IntColumn", "TextColumn"]
