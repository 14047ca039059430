"""Provenance event files: what a task writes instead of touching the provenance database.

Kept apart from :mod:`repositories.provenance` so a Spark worker running tasks never imports
SQLAlchemy; the driver indexes the files into SQL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path

from flowcore.provenance_events import ProvenanceEvent
from repositories._files import file_stem, write_atomically
from repositories._provenance_caps import MAX_ATTRIBUTE_LENGTH
from repositories._provenance_rows import encode_event_file
from repositories._provenance_runs import EventFolder

__all__ = ["EVENT_SUFFIX", "EventFileWriter"]

EVENT_SUFFIX = ".events"


class EventFileWriter:
    """A task's provenance event file: events turned into rows as they come, written on close.

    Runs of alike events of neighbouring FlowFiles fold into one row each
    (:mod:`repositories._provenance_runs`).

    It satisfies the session's ``ProvenanceEventSink`` protocol, so a session in a Spark task can
    record its events without touching the database; the row building happens here, in the
    task, so the driver only assigns ids when it indexes the file.

    Args:
        directory: the repository's event directory (shared by all executors).
        owner: the task attempt, used in the file name.
        indexed_attributes: attribute names the repository indexes by value.
        max_attribute_length: attribute values are stored cut to this many characters
            (``Settings.provenance_max_attribute_length``).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        owner: str = "",
        indexed_attributes: Collection[str] = (),
        max_attribute_length: int = MAX_ATTRIBUTE_LENGTH,
    ) -> None:
        stem = file_stem(owner, "events")
        self.directory = Path(directory)
        self.name = f"{stem}-{uuid.uuid4().hex}{EVENT_SUFFIX}"
        self.indexed_attributes = tuple(indexed_attributes)
        self._folder = EventFolder(self.indexed_attributes, max_attribute_length)

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Buffer *events*, in order."""
        self._folder.add(events)

    def __len__(self) -> int:
        """How many events it holds."""
        return len(self._folder)

    def close(self, *, sync: bool = True) -> str | None:
        """Write the file (``.part`` then rename); return its name, None when it had no events."""
        records = self._folder.finish()
        if not records:
            return None
        self.directory.mkdir(exist_ok=True)  # its parent gone: the repository was moved
        write_atomically(self.directory / self.name, encode_event_file(records), sync=sync)
        return self.name
