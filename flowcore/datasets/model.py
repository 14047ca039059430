"""The values of a dataset: chunks, their mergeability, and a manifest version.

A dataset is a directory of immutable chunk files plus manifests. A manifest version names the
chunks that make up the dataset, in order; readers read one version, never a mix.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any

import attrs

from flowcore.units import parse_time_period

__all__ = ["Chunk", "Manifest", "Mergeability", "MergeabilityKind"]


class MergeabilityKind(enum.Enum):
    """Whether the maintenance pass may merge a stored chunk (Accumulo's TabletMergeability)."""

    NEVER = "never"
    ALWAYS = "always"
    DELAY = "delay"


@attrs.frozen
class Mergeability:
    """NEVER, ALWAYS, or DELAY: mergeable once the chunk is older than ``delay_ms``.

    Chunks the system writes (PutDataset, merges) are ALWAYS; chunks a user adds default to
    NEVER, as Accumulo treats system and user splits.
    """

    kind: MergeabilityKind
    delay_ms: int = attrs.field(default=0, validator=attrs.validators.ge(0))

    @classmethod
    def after(cls, duration: str | int) -> Mergeability:
        """DELAY by a NiFi time period (``"2 hours"``) or a number of milliseconds."""
        ms = duration if isinstance(duration, int) else int(parse_time_period(duration, "ms"))
        return cls(MergeabilityKind.DELAY, ms)

    def eligible(self, created_ms: int, now_ms: int) -> bool:
        """Whether a chunk created at *created_ms* may be merged at *now_ms*."""
        if self.kind is MergeabilityKind.ALWAYS:
            return True
        if self.kind is MergeabilityKind.NEVER:
            return False
        return now_ms - created_ms >= self.delay_ms

    def to_text(self) -> str:
        """``never``, ``always`` or ``delay:<ms>``."""
        if self.kind is MergeabilityKind.DELAY:
            return f"delay:{self.delay_ms}"
        return self.kind.value

    @classmethod
    def from_text(cls, text: str) -> Mergeability:
        """The inverse of :meth:`to_text`; also ``delay:2 hours``.

        Raises:
            ValueError: not one of the three forms.
        """
        kind, _, delay = text.strip().lower().partition(":")
        if kind == "delay" and delay:
            return cls.after(int(delay) if delay.isdigit() else delay)
        if kind in ("never", "always") and not delay:
            return cls(MergeabilityKind(kind))
        msg = f"mergeability {text!r} is not one of never, always or delay:<duration>"
        raise ValueError(msg)


Mergeability.NEVER = Mergeability(MergeabilityKind.NEVER)  # type: ignore[attr-defined]
Mergeability.ALWAYS = Mergeability(MergeabilityKind.ALWAYS)  # type: ignore[attr-defined]


@attrs.frozen
class Chunk:
    """One immutable chunk file of a dataset.

    Attributes:
        id: the file's name under ``chunks/``.
        size: its bytes.
        records: the FlowFiles written into it.
        created_ms: when it was written (DELAY mergeability counts from here).
        mergeability: whether the maintenance pass may merge it.
        first_key: the smallest key attribute value in it (keyed datasets).
        last_key: the largest.
        operation: the flow run that wrote it (auto-merge counts a run's own small chunks).
    """

    id: str
    size: int
    records: int
    created_ms: int
    mergeability: Mergeability = Mergeability(MergeabilityKind.ALWAYS)
    first_key: str | None = None
    last_key: str | None = None
    operation: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        data: dict[str, Any] = {
            "id": self.id,
            "size": self.size,
            "records": self.records,
            "created_ms": self.created_ms,
            "mergeability": self.mergeability.to_text(),
        }
        if self.first_key is not None:
            data["keys"] = [self.first_key, self.last_key]
        if self.operation is not None:
            data["operation"] = self.operation
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Chunk:
        """The inverse of :meth:`to_json`."""
        keys = data.get("keys") or [None, None]
        return cls(
            id=data["id"],
            size=int(data["size"]),
            records=int(data["records"]),
            created_ms=int(data["created_ms"]),
            mergeability=Mergeability.from_text(data.get("mergeability", "always")),
            first_key=keys[0],
            last_key=keys[1],
            operation=data.get("operation"),
        )


@attrs.frozen
class Manifest:
    """One version of a dataset: its chunks in order.

    Attributes:
        version: increases by one per publication (writes, merges, compactions).
        chunks: the chunks, in dataset order.
        ordered: whether chunk order is meaningful (only neighbours are merged).
        demarcator: the bytes between records, also written between merged chunks.
        created_ms: when the version was made.
    """

    version: int
    chunks: tuple[Chunk, ...] = attrs.field(default=(), converter=tuple)
    ordered: bool = False
    demarcator: bytes = b""
    created_ms: int = 0

    @property
    def size(self) -> int:
        """The dataset's bytes."""
        return sum(c.size for c in self.chunks)

    @property
    def records(self) -> int:
        """The dataset's records (FlowFiles written)."""
        return sum(c.records for c in self.chunks)

    def to_bytes(self) -> bytes:
        """The manifest file's contents (JSON)."""
        body = {
            "version": self.version,
            "ordered": self.ordered,
            "demarcator": self.demarcator.hex(),
            "created_ms": self.created_ms,
            "chunks": [c.to_json() for c in self.chunks],
        }
        return json.dumps(body, indent=1, sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        """The inverse of :meth:`to_bytes`."""
        body = json.loads(data)
        return cls(
            version=int(body["version"]),
            chunks=tuple(Chunk.from_json(c) for c in body["chunks"]),
            ordered=bool(body["ordered"]),
            demarcator=bytes.fromhex(body["demarcator"]),
            created_ms=int(body.get("created_ms", 0)),
        )
