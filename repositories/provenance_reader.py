"""Read-only access to a provenance database, for readers outside a run.

Spark's ``flowcore-provenance`` source (:mod:`flowcore.runners.spark_sources`) reads events on
its executors, perhaps while a run is indexing more: it opens the database without creating or
upgrading anything (:class:`~repositories.provenance.SqlProvenanceRepository` would) and reads
events by id range. Each stored row, one event or a run of alike events, belongs to the range
its first id falls in, so ranges that tile the ids give every event exactly once. SQLite in WAL
mode lets these reads go on beside the run's writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import create_engine, func, select

from flowcore.errors import RepositoryError
from flowcore.provenance_events import ProvenanceEvent
from repositories._provenance_rows import claim_text
from repositories._provenance_runs import events_by_id
from repositories._provenance_schema import EVENTS, upgraded_in_place

__all__ = ["claim_texts", "event_id_range", "provenance_url", "read_events"]

_DATABASE = Path("provenance") / "provenance.db"  # under a repository directory


def provenance_url(location: str | os.PathLike[str]) -> str:
    """The SQLAlchemy URL of the provenance database of *location*.

    Args:
        location: a repository directory (``.flowcore``: its ``provenance/provenance.db``), a
            SQLite file, or a SQLAlchemy URL (``postgresql+psycopg://...``) as the run used.

    Raises:
        RepositoryError: a path with no provenance database.
    """
    text = os.fspath(location)
    if "://" in text:
        return text
    path = Path(text)
    database = path / _DATABASE if path.is_dir() else path
    if not database.is_file():
        msg = (
            f"{path} has no provenance database ({database} is missing); give the repository "
            "directory a flow ran with (its --repository, .flowcore next to the flow by default)"
        )
        raise RepositoryError(msg)
    return f"sqlite:///{database.resolve()}"


def event_id_range(url: str) -> tuple[int, int]:
    """``(first, past_last)``: the first ids of the stored rows lie in ``first..past_last - 1``.

    ``(0, 0)`` when there is no event. Run once, on the driver, before the ranges are read: a
    repository of an earlier flowcore gets what the readers need here, not in every task.
    """
    upgraded_in_place(url)
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            low, high = conn.execute(
                select(func.min(EVENTS.c.event_id), func.max(EVENTS.c.event_id))
            ).one()
    finally:
        engine.dispose()
    return (0, 0) if low is None else (int(low), int(high) + 1)


def read_events(url: str, low: int, high: int) -> Iterator[ProvenanceEvent]:
    """The events of the rows whose first id is in ``low..high - 1``, in id order."""
    engine = create_engine(url)
    query = (
        select(EVENTS)
        .where(EVENTS.c.event_id >= low, EVENTS.c.event_id < high)
        .order_by(EVENTS.c.event_id)
    )
    try:
        with engine.connect() as conn:
            rows = conn.execution_options(stream_results=True).execute(query)
            yield from events_by_id(rows, lambda _: None)  # interleaved runs' too
    finally:
        engine.dispose()


def claim_texts(event: ProvenanceEvent) -> tuple[str | None, str | None]:
    """The event's content claim and previous one, as SQL stores them.

    That is ``container/section/id:offset:length``; a rope as a JSON list of those.
    """
    return claim_text(event.content_claim), claim_text(event.previous_content_claim)
