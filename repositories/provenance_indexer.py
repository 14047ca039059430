"""Indexing committed provenance event files off the commit path.

The write-ahead log names every event file a commit produced, so indexing them can lag without
risk: after a crash, start-up indexes whatever the log says is pending. The controller hands
each commit's files to a :class:`ProvenanceIndexer`, whose thread indexes them while the next
micro-batch runs (NiFi's provenance, too, becomes searchable shortly after a commit), and
records them as indexed in its next transaction. A bounded backlog keeps the event files on disk
from piling up when indexing is slower than the flow.

The same thread applies the repository's retention (``max_storage_time`` and
``max_storage_size``) when it starts and then every minute, between indexing batches, as NiFi's
provenance maintenance does: only this thread writes to the repository while a run lasts.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence

from repositories.provenance import SqlProvenanceRepository

__all__ = ["MAINTENANCE_FREQUENCY_S", "MAX_BACKLOG", "ProvenanceIndexer"]

#: Commits whose event files may wait for indexing before a commit waits for the indexer.
MAX_BACKLOG = 8
#: How often retention runs (NiFi's ``nifi.provenance.repository.maintenance.frequency``).
MAINTENANCE_FREQUENCY_S = 60.0


class ProvenanceIndexer:
    """A background thread indexing event files in commit order.

    Args:
        provenance: the repository to index into (only this thread writes to it meanwhile).
        max_backlog: commits whose files may wait; :meth:`submit` blocks beyond it.
        maintenance_frequency: seconds between two applications of the retention.

    Attributes:
        events: events indexed so far.
        purged: events removed by retention so far.
    """

    def __init__(
        self,
        provenance: SqlProvenanceRepository,
        max_backlog: int = MAX_BACKLOG,
        maintenance_frequency: float = MAINTENANCE_FREQUENCY_S,
    ) -> None:
        self._provenance = provenance
        self._frequency = maintenance_frequency
        self._work: queue.Queue[list[str] | None] = queue.Queue()
        self._slots = threading.Semaphore(max_backlog)
        self._lock = threading.Lock()
        self._indexed: list[str] = []
        self._error: BaseException | None = None
        self.events = 0
        self.purged = 0
        self._thread = threading.Thread(
            target=self._run, name="flowcore-provenance-indexer", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        try:
            self._maintain()
            due = time.monotonic() + self._frequency
            while True:
                try:
                    files = self._work.get(timeout=max(0.0, due - time.monotonic()))
                except queue.Empty:
                    pass  # time for maintenance
                else:
                    if files is None:
                        return
                    self._index(files)
                if time.monotonic() >= due:
                    self._maintain()
                    due = time.monotonic() + self._frequency
        except BaseException as error:
            self._error = error
            self._slots.release()  # a submit waiting for a slot sees the error

    def _index(self, files: list[str]) -> None:
        added = self._provenance.index_files(files)
        with self._lock:
            self._indexed.extend(files)
            self.events += added
        self._slots.release()

    def _maintain(self) -> None:
        self.purged += self._provenance.purge()

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def submit(self, files: Sequence[str]) -> None:
        """Queue a commit's event files (waits while the backlog is full).

        Raises:
            RepositoryError: indexing an earlier batch failed (the files stay pending in the
                log and are indexed at the next start).
        """
        self._check()
        self._slots.acquire()
        self._check()
        self._work.put(list(files))

    def take_indexed(self) -> list[str]:
        """Files indexed since the last call: the next log transaction records them."""
        with self._lock:
            done, self._indexed = self._indexed, []
        return done

    def close(self) -> list[str]:
        """Finish the backlog and stop; return the files indexed but not yet taken.

        Raises:
            RepositoryError: indexing failed.
        """
        self._work.put(None)
        self._thread.join()
        self._check()
        return self.take_indexed()
