"""The durable repositories of a run, opened together and recovered at start (DESIGN §7-8).

Layout under the repository directory (``.flowcore/`` next to the flow by default)::

    flowfile/     the write-ahead log: journals, checkpoint, queue segments
    content/      claim files (one container)
    provenance/   provenance.db (SQLite) and events/ (task event files awaiting indexing)
    effects/      sinks' external effects staged by tasks, carried out after the commit
    status.json   queues and bulletins after the last commit (read by ``flowcore status``)
    bulletins.jsonl
    lock          held by the running controller

Readers beside a live run (``flowcore status``, provenance search, show and lineage, ``check``
without ``--fix``) take no lock: they ask who holds it (:func:`live_run`), read ``status.json``,
query the provenance index read-only (SQLite's WAL journal lets them read while the run writes)
and recover the FlowFile log in memory only.

Recovery order: the log (which names the truth), then content claimant counts rebuilt from it
(unclaimed files of crashed attempts archived or removed), then provenance files the log
committed but the index had not taken, then event files no commit names (orphans).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.settings import Settings
from repositories._content_check import claim_references
from repositories._files import write_atomically
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.locks import holds, lock_holder, try_lock
from repositories.provenance import SqlProvenanceRepository
from repositories.records import Bulletin, Finding, RepositoryPaths, Transaction

__all__ = [
    "MAX_BULLETINS",
    "PROVENANCE_STATE",
    "REPOSITORY_ID_KEY",
    "RepositoryReader",
    "RepositorySet",
    "check_repositories",
    "live_run",
    "open_for_queries",
    "provenance_mark",
    "read_bulletins",
    "read_status",
]

LOG = logging.getLogger("flowcore.repositories")
PROVENANCE_STATE = "$provenance"  # the log's record of the next provenance event id
MAX_BULLETINS = 1_000  # kept in bulletins.jsonl (NiFi's board keeps the last few per component)
STATUS_FILE = "status.json"
LOCK_FILE = "lock"
LIVE_CHECK_ATTEMPTS = 2  # read-only passes beside a live run; a finding must be in each
EFFECTS_DIRECTORY = "effects"  # sinks' staged external effects (repositories/effects.py)
BULLETIN_FILE = "bulletins.jsonl"
#: The write-ahead log state entry holding the repository's random id (no component id can
#: be it: names never hold NUL).
REPOSITORY_ID_KEY = "\x00repository"


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
    #: Bulletins come from the driver's thread and from after-commit workers.
    _bulletin_lock: Any = attrs.field(factory=threading.Lock, init=False, repr=False)
    _repository_id: str | None = attrs.field(default=None, init=False, repr=False)
    #: The first use claims the id: the driver's thread and after-commit workers may race.
    _id_lock: Any = attrs.field(factory=threading.Lock, init=False, repr=False)

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        settings: Settings | None = None,
        *,
        provenance_url: str | None = None,
        accept_loss: bool = False,
    ) -> RepositorySet:
        """Open (creating when missing) and recover the repositories under *directory*.

        A start tells a new repository from a damaged one: state files that are missing or
        unreadable refuse the start, naming the file and the fix, before anything on disk
        changes. *accept_loss* (``flowcore check --fix``) goes on instead, reporting what is
        given up as findings.

        Raises:
            RepositoryError: another process is running on this repository, or recovery found
                damage it must not repair silently.
        """
        settings = settings or Settings()
        root = Path(directory).resolve()
        lock = try_lock(root / LOCK_FILE)  # held for the run's lifetime
        if lock is None:
            msg = (
                f"repository {root} is in use by another flowcore run; wait for it to finish "
                "or pass a different --repository"
            )
            raise RepositoryError(msg) from None
        try:
            findings = _log_gone(root, accept_loss=accept_loss)
            flowfiles = WriteAheadFlowFileRepository(
                root / "flowfile", sync=settings.sync, accept_loss=accept_loss
            )
            findings += [Finding("flowfile", "", loss, fixed=True) for loss in flowfiles.losses]
            mark = provenance_mark(flowfiles)
            database = provenance_url or str(root / "provenance" / "provenance.db")
            findings += _provenance_database(database, mark, accept_loss=accept_loss)
            content = FileContentRepository(
                root / "content",
                max_appendable_size=settings.content_claim_max_appendable_bytes,
            )
            findings += content.recover(flowfiles.referenced_claims())
            provenance = SqlProvenanceRepository(
                database,
                event_directory=root / "provenance" / "events",
                max_storage_time=settings.provenance_max_storage_time,
                max_storage_size=settings.provenance_max_storage_size,
                indexed_attributes=settings.provenance_indexed_attributes,
                max_attribute_length=settings.provenance_max_attribute_length,
            )
            if provenance.next_event_id < mark:
                if not accept_loss:
                    provenance.close()
                    msg = (
                        f"the provenance database {database} gives event ids from "
                        f"{provenance.next_event_id}, but this repository has recorded ids up to "
                        f"{mark - 1}: it was replaced or reset. Restore it, or run `flowcore "
                        "check --fix` to continue the id sequence from there"
                    )
                    raise RepositoryError(msg)
                provenance.continue_ids_from(mark)
                findings.append(
                    Finding("provenance", database, f"event ids continue from {mark}", fixed=True)
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
    def repository_id(self) -> str:
        """This repository's random id, made on first use and kept while it stays in place.

        What flowcore leaves in an outside system on a repository's behalf (PostgreSQL's
        prepared transactions) carries it, so that a start-up sweep touches only its own: two
        flows, or two copies of one flow on two repositories, may share a database. A path or
        a flow name would not do: a repository can move, and two can run the same flow.

        The id is kept with the directory's path and identity (device and inode): a start in
        another directory (a copy, ``cp -r``; a move across file systems; a restore from a
        backup into another path) makes a new one, since the directory it came from may still
        run under the old id and commit what this one would take for its own strays. The old id
        is remembered (:attr:`former_repository_ids`), never used for new work. The same path
        keeps the id whatever the inode (a restore in place, a remount); a rename within the
        file system keeps the inode, so the id. See :func:`_same_directory` and docs/sql.md.

        Claimed under a lock: two threads asking at once would each commit an id of their own.
        """
        with self._id_lock:
            if self._repository_id is None:
                self._repository_id = self._claim_repository_id()
            return self._repository_id

    @property
    def former_repository_ids(self) -> tuple[str, ...]:
        """The ids this repository had in the directories it was copied or moved from.

        Oldest first: its pending work may still name them, a sweep must not (see
        :attr:`repository_id`).
        """
        self.repository_id  # noqa: B018 - claims the id in this directory first
        former = json.loads(self.flowfiles.state(REPOSITORY_ID_KEY).get("former", "[]"))
        return tuple(str(entry["id"]) for entry in former)

    def _claim_repository_id(self) -> str:
        """The id for this directory: the recorded one, or a new one in another directory.

        The record then names the old one as former (with the path it was recorded at).
        """
        recorded = dict(self.flowfiles.state(REPOSITORY_ID_KEY))
        here = os.stat(self.directory)
        identity = {
            "device": str(here.st_dev),
            "inode": str(here.st_ino),
            "path": str(self.directory),
        }
        held = recorded.get("id")
        if held and _same_directory(recorded, identity):
            # renamed, remounted, restored in place: the record follows
            if any(recorded.get(k) != v for k, v in identity.items()):
                self.flowfiles.commit(Transaction(state={REPOSITORY_ID_KEY: recorded | identity}))
            return held
        former = json.loads(recorded.get("former", "[]"))
        made = uuid.uuid4().hex[:16]
        if held:
            former.append({"id": held, "path": recorded.get("path", "")})
            LOG.warning(
                "the repository %s was copied or moved from %s: it takes a new id, %s in place "
                "of %s, so that what it sweeps in outside systems (PostgreSQL's prepared "
                "transactions) is never the other directory's; work the old id left pending "
                "is still carried out (docs/sql.md)",
                self.directory, recorded.get("path") or "another directory", made, held,
            )  # fmt: skip
        entry = {"id": made, **identity, "former": json.dumps(former)}
        self.flowfiles.commit(Transaction(state={REPOSITORY_ID_KEY: entry}))
        return made

    @property
    def paths(self) -> RepositoryPaths:
        """Where tasks write."""
        return RepositoryPaths(
            content=tuple(str(p) for p in self.content.containers.values()),
            segments=str(self.flowfiles.segment_dir),
            events=str(self.provenance.event_directory),
            effects=str(self.directory / EFFECTS_DIRECTORY),
            repository_id=self.repository_id,
        )

    def write_status(self, status: dict[str, Any]) -> None:
        """Replace ``status.json`` (atomically) for ``flowcore status``.

        orjson: a live run rewrites it at every stage run, where the standard encoder took
        most of the time.
        """
        text = orjson.dumps(status, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        write_atomically(self.directory / STATUS_FILE, text, sync=False)

    def add_bulletins(self, bulletins: Sequence[Bulletin]) -> None:
        """Append bulletins, keeping the last :data:`MAX_BULLETINS`."""
        if not bulletins:
            return
        path = self.directory / BULLETIN_FILE
        with self._bulletin_lock:
            kept = read_bulletins(self.directory)[-(MAX_BULLETINS - len(bulletins)) :]
            kept.extend(bulletins)
            lines = [json.dumps(attrs.asdict(b)) + "\n" for b in kept[-MAX_BULLETINS:]]
            write_atomically(path, "".join(lines).encode(), sync=False)

    def _record_provenance_mark(self) -> None:
        """Keep the next provenance event id with the queues (see :data:`PROVENANCE_STATE`)."""
        mark = str(self.provenance.next_event_id)
        if not self.flowfiles.accepting:
            return  # the run is stopping over a failed write: the next start records it
        if self.flowfiles.state(PROVENANCE_STATE).get("next_event_id") != mark:
            self.flowfiles.commit(Transaction(state={PROVENANCE_STATE: {"next_event_id": mark}}))

    def check_in_place(self) -> None:
        """Refuse to go on when the repository directory was moved or deleted under the run.

        Its files are then elsewhere, or gone: a run going on would write a new, partial
        repository at the old path.

        Raises:
            RepositoryError: the directory's lock file is no longer the one this run holds.
        """
        if self._lock_file is not None and not holds(self._lock_file, self.directory / LOCK_FILE):
            msg = (
                f"the repository {self.directory} was moved or deleted while this run used it; "
                "the run stopped without writing there again. Everything it committed is in "
                "the repository where it is now: run again with --repository naming that place"
            )
            raise RepositoryError(msg)

    def close(self) -> None:
        """Checkpoint the log and release the lock.

        The lock is released whatever fails: a full disk may refuse the checkpoint, and the
        next run recovers from the journal instead. A repository moved or deleted under the
        run is not checkpointed (that would make files at the old path): the journal it took
        along holds every commit.

        Raises:
            RepositoryError: the repository was moved or deleted (see :meth:`check_in_place`).
        """
        try:
            try:
                self.check_in_place()
                self._record_provenance_mark()
                self.flowfiles.checkpoint()
            finally:
                try:
                    self.flowfiles.close()
                finally:
                    try:
                        self.provenance.close()
                    finally:
                        self.content.close()
        finally:
            if self._lock_file is not None:
                self._lock_file.close()
                self._lock_file = None


@attrs.define
class RepositoryReader:
    """The provenance repository opened read-only beside the run that holds the repository.

    Attributes:
        directory: the repository directory.
        provenance: its provenance index, read-only (queries see what the run has indexed).
        holder: the process id of the run holding the repository (0: held, pid unknown).
    """

    directory: Path
    provenance: SqlProvenanceRepository
    holder: int

    def close(self) -> None:
        """Release the database connections."""
        self.provenance.close()


def live_run(directory: str | os.PathLike[str]) -> int | None:
    """The process id of the run holding the repository under *directory*, or None.

    Asking takes no lock (see :func:`~repositories.locks.lock_holder`); 0 means a run holds
    it but the system cannot say which.
    """
    return lock_holder(Path(directory).resolve() / LOCK_FILE)


def open_for_queries(
    directory: str | os.PathLike[str],
    settings: Settings | None = None,
    *,
    provenance_url: str | None = None,
) -> RepositorySet | RepositoryReader:
    """The repositories for provenance queries, or their index read-only beside a live run.

    When no run holds the repository it is opened as usual; otherwise the provenance index is
    opened read-only beside the run.

    Opened as usual, a repository is recovered first (provenance a crashed run committed but
    did not index is indexed); beside a live run the run itself has done that.

    Raises:
        RepositoryError: there is no repository at *directory* (a directory without one is
            refused, never made one), or it is damaged.
    """
    settings = settings or Settings()
    root = Path(directory).resolve()
    if not root.is_dir():
        msg = f"repository {root} does not exist; pass --repository DIR"
        raise RepositoryError(msg)
    if not (root / "flowfile").is_dir():  # a query never makes a repository where none is
        msg = f"{root} holds no flowcore repository (no flowfile/ there); pass --repository DIR"
        raise RepositoryError(msg)
    holder = live_run(root)
    if holder is None:
        try:
            return RepositorySet.open(root, settings, provenance_url=provenance_url)
        except RepositoryError:
            holder = live_run(root)
            if holder is None:
                raise  # damaged, not busy
    provenance = SqlProvenanceRepository(
        provenance_url or root / "provenance" / "provenance.db",
        event_directory=root / "provenance" / "events",
        indexed_attributes=settings.provenance_indexed_attributes,
        read_only=True,
    )
    return RepositoryReader(root, provenance, holder)


def _same_directory(recorded: dict[str, str], identity: dict[str, str]) -> bool:
    """Whether the directory *identity* describes is the one the id was *recorded* in.

    The same path: the same directory, whatever its inode and device. A directory restored in
    place from a backup (the most common restore) has another inode, and so do directories on
    file systems whose inode numbers change across mounts (CIFS with ``noserverino``, some
    FUSE); a new id there would leave the old id's prepared transactions to no one, holding
    their rows' locks. The original cannot be running: it was replaced in place (and a run
    whose directory is replaced under it stops, see :meth:`RepositorySet.check_in_place`);
    two hosts mounting copies at one path are refused by the advisory lock
    (``processors.sql.prepared.hold_repository_lock``).

    Another path with the same device and inode: the directory renamed or moved within its file
    system, the same one, unless a repository holding the same id now sits at the recorded
    path (the original set aside and a backup restored in its place): the one at the path
    keeps the id, and this one yields. A fresh repository started at the old path has an id of
    its own and takes nothing from this one: were this one to yield, no one would hold the
    id, and its prepared transactions would hold their rows' locks for good. Another path and
    inode: a copy. No identity recorded (a repository from before identities were kept):
    taken as the same.
    """
    if "inode" not in recorded or recorded.get("path") == identity["path"]:
        return True
    if (recorded.get("device"), recorded["inode"]) != (identity["device"], identity["inode"]):
        return False
    return not _replaced_at(recorded.get("path", ""), recorded.get("id", ""), identity)


def _replaced_at(path: str, held: str, identity: dict[str, str]) -> bool:
    """Whether another directory than *identity*'s, holding the id *held*, stands at *path*.

    That is a backup restored in place, or a copy put back at the path. Its id is read from
    its FlowFile log, read-only (it may be running). A log that cannot be read is taken as
    holding the id: yielding costs a new id, two holders of one id would roll back each
    other's prepared transactions.
    """
    if not path:
        return False
    try:
        there = os.stat(path)
    except OSError:
        return False  # moved away, nothing in its place
    if (str(there.st_dev), str(there.st_ino)) == (identity["device"], identity["inode"]):
        return False  # the same directory (a bind mount, a symlink)
    log = Path(path, "flowfile")
    if not log.is_dir():
        return False
    try:
        flowfiles = WriteAheadFlowFileRepository(log, read_only=True)
    except (OSError, ValueError, KeyError, TypeError):  # damaged, or changed under the read
        LOG.warning("cannot read the repository id recorded in %s; taken as %s", log, held)
        return True
    try:
        return flowfiles.state(REPOSITORY_ID_KEY).get("id") == held
    finally:
        flowfiles.close()


def _log_gone(root: Path, *, accept_loss: bool) -> list[Finding]:
    """Refuse a repository whose whole FlowFile log is gone while content or provenance remain.

    That is not a new repository: starting one would drop every queue in silence.
    """
    log = root / "flowfile"
    if (log / "checkpoint").exists() or any((log / "journals").glob("*.journal")):
        return []
    content = root / "content"
    claims = any(p.is_file() for p in content.glob("*/*")) if content.is_dir() else False
    database = root / "provenance" / "provenance.db"
    events = database.exists() and database.stat().st_size > 0
    if not (claims or events):
        return []
    held = " and ".join(
        what for what, present in (("content", claims), ("provenance", events)) if present
    )
    problem = f"{log} has no checkpoint and no journal, but the repository holds {held}"
    if not accept_loss:
        msg = (
            f"{problem}: the FlowFile log was deleted, and its queues would be lost. Restore "
            "it from a backup, or run `flowcore check --fix` to start a new log (what the "
            "old one queued is dropped)"
        )
        raise WalCorruptionError(msg)
    return [Finding("flowfile", str(log), f"{problem}; started a new log", fixed=True)]


def provenance_mark(flowfiles: WriteAheadFlowFileRepository) -> int:
    """The next provenance event id the FlowFile repository has recorded (0: none yet)."""
    return int(flowfiles.state(PROVENANCE_STATE).get("next_event_id", "0"))


def _provenance_database(database: str, mark: int, *, accept_loss: bool) -> list[Finding]:
    """Refuse to start over a missing or unreadable SQLite provenance database.

    A repository that has recorded events must find its database; ``check --fix`` sets an
    unreadable one aside instead. Checked before anything is created.
    """
    if "://" in database:
        return []  # a server database: its own errors say what is wrong
    path = Path(database)
    problem = None
    if not path.exists() and mark > 0:
        problem = "is missing"
    elif path.exists() and path.stat().st_size > 0:
        with open(path, "rb") as head:
            if head.read(16) != b"SQLite format 3\x00":
                problem = "is not a SQLite database (damaged)"
    if problem is None:
        return []
    if not accept_loss:
        msg = (
            f"the provenance database {path} {problem}, but this repository has recorded "
            f"events (ids up to {mark - 1}); restore it, or run `flowcore check --fix` to start "
            "an empty one that continues the event id sequence"
        )
        raise RepositoryError(msg)
    if path.exists():
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        os.replace(path, aside)
        return [Finding("provenance", str(path), f"{problem}; moved to {aside.name}", fixed=True)]
    return [Finding("provenance", str(path), f"{problem}; started an empty one", fixed=True)]


def check_repositories(
    directory: str | os.PathLike[str],
    *,
    fix: bool = False,
    provenance_url: str | None = None,
) -> list[Finding]:
    """``flowcore check``: every problem of the repositories under *directory*.

    Without *fix* nothing on disk changes: the FlowFile log is recovered in memory only, the
    content and provenance stores are only read. With *fix*, the repositories are opened
    accepting any loss (reported as findings) and each repairs what it can: orphans are
    removed, damaged segments quarantined, a damaged provenance database set aside.

    Raises:
        RepositoryError: there is no repository at *directory*.
    """
    root = Path(directory).resolve()
    if not (root / "flowfile").is_dir() and not (root / "content").is_dir():
        msg = f"no flowcore repository at {root}; pass the directory a run used (--repository)"
        raise RepositoryError(msg)
    holder = live_run(root)
    if holder is not None and fix:
        msg = (
            f"cannot repair repository {root} while a run (pid {holder}) holds it; stop the "
            "run first (without --fix, check reads it beside the run)"
        )
        raise RepositoryError(msg)
    if holder is not None:
        return _inspect_beside_run(root, provenance_url)
    if fix:
        repos = RepositorySet.open(root, provenance_url=provenance_url, accept_loss=True)
        try:
            findings = list(repos.recovery)
            findings += repos.flowfiles.check(fix=True)
            references = claim_references(repos.flowfiles)  # names the queues of damaged claims
            findings += repos.content.check(fix=True, references=references)
            findings += repos.provenance.check(fix=True)
        finally:
            repos.close()
        return findings
    return _inspect(root, provenance_url)


def _inspect_beside_run(root: Path, provenance_url: str | None) -> list[Finding]:
    """:func:`_inspect` while a run changes the repository: only what every pass finds.

    A pass may read the log just before a commit and the files just after it (a segment
    consumed, a claim released): such a finding is gone at the next pass, a real one stays.
    Files nothing references yet are not judged: the run swept every orphan when it started,
    so they are its micro-batch in progress.
    """
    kept: list[Finding] | None = None
    for _ in range(LIVE_CHECK_ATTEMPTS):
        found = _inspect(root, provenance_url, judge_orphans=False)
        kept = found if kept is None else [f for f in kept if f in found]
        if not kept:
            break
    return kept or []


def _inspect(
    root: Path, provenance_url: str | None, *, judge_orphans: bool = True
) -> list[Finding]:
    """The read-only half of :func:`check_repositories`.

    Without *judge_orphans* (beside a live run), segment and content files nothing references
    are left out: they are the running micro-batch's.
    """
    try:
        _log_gone(root, accept_loss=False)
        flowfiles = WriteAheadFlowFileRepository(root / "flowfile", read_only=True)
    except (WalCorruptionError, RepositoryError) as error:
        return [Finding("flowfile", str(root / "flowfile"), str(error))]
    findings = flowfiles.check(fix=False)
    if not judge_orphans:
        # Queued segments' findings name "queue/segment"; files of none name their path.
        findings = [f for f in findings if Path(f.location).parent != flowfiles.segment_dir]
    mark = provenance_mark(flowfiles)
    database = provenance_url or str(root / "provenance" / "provenance.db")
    try:
        _provenance_database(database, mark, accept_loss=False)
    except RepositoryError as error:
        findings.append(Finding("provenance", database, str(error)))
    claims = flowfiles.referenced_claims()
    content_dir = root / "content"
    if content_dir.is_dir():
        # Every block of every claimed file verified against its checksum; nothing written.
        content = FileContentRepository(content_dir)
        try:
            found = content.check(fix=False, references=claim_references(flowfiles))
        finally:
            content.close()
        if not judge_orphans:
            unclaimed = {str(claim) for claim in content.resource_claims()} - {
                str(claim) for claim in claims
            }
            found = [f for f in found if f.location not in unclaimed]
        findings += found
    elif claims:
        findings.append(
            Finding("content", str(content_dir), "missing, but FlowFiles point into it")
        )
    return findings


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
