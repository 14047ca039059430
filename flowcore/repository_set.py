"""The durable repositories of a run, opened together and recovered at start (DESIGN §7-8).

Layout under the repository directory (``.flowcore/`` next to the flow by default)::

    flowfile/     the write-ahead log: journals, checkpoint, queue segments
    content/      claim files (one container)
    provenance/   provenance.db (SQLite) and events/ (task event files awaiting indexing)
    effects/      sinks' external effects staged by tasks, carried out after the commit
    status.json   queues and bulletins after the last commit (read by ``flowcore status``)
    bulletins.jsonl
    lock          held by the running controller

Recovery order: the log (which names the truth), then content claimant counts rebuilt from it
(unclaimed files of crashed attempts archived or removed), then provenance files the log
committed but the index had not taken, then event files no commit names (orphans).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import RepositoryError
from flowcore.locks import try_lock
from flowcore.settings import Settings
from flowcore.stage_plan import Bulletin, RepositoryPaths
from repositories._files import write_atomically
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.provenance import SqlProvenanceRepository
from repositories.records import Finding

__all__ = ["MAX_BULLETINS", "RepositorySet", "read_bulletins", "read_status"]

MAX_BULLETINS = 1_000  # kept in bulletins.jsonl (NiFi's board keeps the last few per component)
STATUS_FILE = "status.json"
EFFECTS_DIRECTORY = "effects"  # sinks' staged external effects (repositories/effects.py)
BULLETIN_FILE = "bulletins.jsonl"


@attrs.define
class RepositorySet:
    """The FlowFile log, content and provenance repositories of one repository directory.

    Use :meth:`open`; it takes an exclusive lock, so two runs never share a repository.
    """

    directory: Path
    flowfiles: WriteAheadFlowFileRepository
    content: FileContentRepository
    provenance: SqlProvenanceRepository
    recovery: list[Finding]
    _lock_file: Any = None

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        settings: Settings | None = None,
        *,
        provenance_url: str | None = None,
    ) -> RepositorySet:
        """Open (creating when missing) and recover the repositories under *directory*.

        Raises:
            RepositoryError: another process is running on this repository, or recovery found
                damage it must not repair silently.
        """
        settings = settings or Settings()
        root = Path(directory).resolve()
        lock = try_lock(root / "lock")  # held for the run's lifetime
        if lock is None:
            msg = (
                f"repository {root} is in use by another flowcore run; wait for it to finish "
                "or pass a different --repository"
            )
            raise RepositoryError(msg) from None
        try:
            flowfiles = WriteAheadFlowFileRepository(root / "flowfile", sync=settings.sync)
            content = FileContentRepository(root / "content")
            findings = content.recover(flowfiles.referenced_claims())
            database = provenance_url or str(root / "provenance" / "provenance.db")
            provenance = SqlProvenanceRepository(
                database,
                event_directory=root / "provenance" / "events",
                max_storage_time=settings.provenance_max_storage_time,
                max_storage_size=settings.provenance_max_storage_size,
                indexed_attributes=settings.provenance_indexed_attributes,
            )
            pending = list(flowfiles.pending_provenance)
            if pending:
                provenance.index_files(pending)
                flowfiles.mark_provenance_indexed(pending)
                provenance.remove_indexed_files(pending)
            findings.extend(_sweep_event_files(provenance.event_directory))
        except BaseException:
            lock.close()
            raise
        return cls(root, flowfiles, content, provenance, findings, lock)

    @property
    def paths(self) -> RepositoryPaths:
        """Where tasks write."""
        return RepositoryPaths(
            content=tuple(str(p) for p in self.content.containers.values()),
            segments=str(self.flowfiles.segment_dir),
            events=str(self.provenance.event_directory),
            effects=str(self.directory / EFFECTS_DIRECTORY),
        )

    def write_status(self, status: dict[str, Any]) -> None:
        """Replace ``status.json`` (atomically) for ``flowcore status``."""
        text = json.dumps(status, indent=1, sort_keys=True)
        write_atomically(self.directory / STATUS_FILE, text.encode(), sync=False)

    def add_bulletins(self, bulletins: Sequence[Bulletin]) -> None:
        """Append bulletins, keeping the last :data:`MAX_BULLETINS`."""
        if not bulletins:
            return
        path = self.directory / BULLETIN_FILE
        kept = read_bulletins(self.directory)[-(MAX_BULLETINS - len(bulletins)) :]
        kept.extend(bulletins)
        lines = [json.dumps(attrs.asdict(b)) + "\n" for b in kept[-MAX_BULLETINS:]]
        write_atomically(path, "".join(lines).encode(), sync=False)

    def close(self) -> None:
        """Checkpoint the log and release the lock.

        The lock is released whatever fails: a full disk may refuse the checkpoint, and the
        next run recovers from the journal instead.
        """
        try:
            try:
                self.flowfiles.checkpoint()
            finally:
                try:
                    self.flowfiles.close()
                finally:
                    self.provenance.close()
        finally:
            if self._lock_file is not None:
                self._lock_file.close()
                self._lock_file = None


def _sweep_event_files(directory: Path) -> list[Finding]:
    """Remove event files of task attempts that never committed.

    Every committed file has been indexed and removed by now, so what is left is orphaned.
    """
    findings = []
    if not directory.is_dir():
        return findings
    for path in sorted(directory.iterdir()):
        if path.is_file():
            path.unlink(missing_ok=True)
            findings.append(
                Finding("provenance", path.name, "event file of an uncommitted task", fixed=True)
            )
    return findings


def read_status(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The status the last commit left, or None when the repository never ran."""
    path = Path(directory) / STATUS_FILE
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def read_bulletins(directory: str | os.PathLike[str]) -> list[Bulletin]:
    """Recorded bulletins, oldest first."""
    path = Path(directory) / BULLETIN_FILE
    bulletins = []
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().splitlines():
            if line.strip():
                bulletins.append(Bulletin(**json.loads(line)))
    return bulletins
