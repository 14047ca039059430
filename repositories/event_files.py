"""Provenance event files: what a task writes instead of touching the provenance database.

Kept apart from :mod:`repositories.provenance` so a Spark worker running tasks never imports
SQLAlchemy; the driver indexes the files into SQL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from flowcore.provenance import ProvenanceEvent
from repositories._files import file_stem, write_atomically
from repositories._provenance_rows import encode_event_file, event_record

__all__ = ["EVENT_SUFFIX", "EventFileWriter"]

EVENT_SUFFIX = ".events"


class EventFileWriter:
    """A task's provenance event file: events turned into rows as they come, written on close.

    It satisfies the session's ``ProvenanceEventSink`` protocol, so a session in a Spark task can
    record its events without touching the database; the row building happens here, in the
    task, so the driver only assigns ids when it indexes the file.

    Args:
        directory: the repository's event directory (shared by all executors).
        owner: the task attempt, used in the file name.
        indexed_attributes: attribute names the repository indexes by value.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        owner: str = "",
        indexed_attributes: Collection[str] = (),
    ) -> None:
        stem = file_stem(owner, "events")
        self.directory = Path(directory)
        self.name = f"{stem}-{uuid.uuid4().hex}{EVENT_SUFFIX}"
        self.indexed_attributes = tuple(indexed_attributes)
        self._records: list[list[Any]] = []

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Buffer *events*, in order."""
        indexed = self.indexed_attributes
        self._records.extend(event_record(e, indexed) for e in events)

    def __len__(self) -> int:
        return len(self._records)

    def close(self, *, sync: bool = True) -> str | None:
        """Write the file (``.part`` then rename); return its name, None when it had no events."""
        if not self._records:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.directory / self.name, encode_event_file(self._records), sync=sync)
        self._records = []
        return self.name
