"""Effect files: what sinks do outside the repositories, staged by tasks, done after the commit.

A sink's external effect (a file PutFile writes into a user's directory, a line LogAttribute
logs) must happen exactly once per committed FlowFile. A task cannot do it directly: the task
may be an attempt that never commits (killed, failed, superseded), and its replay would do it a
second time. So a task only *stages* effects, in an effect file of its attempt:

1. before it creates a hidden temporary file, the task records it (``stage``) and flushes, so
   the temporary can be found and removed if the attempt never commits;
2. when a session commits, its publications (rename this temporary to that target) and log
   lines are appended;
3. the task fsyncs the file and names it in its result; the driver names it in the stage run's
   write-ahead log transaction;
4. after the transaction is durable, :func:`carry_out` renames and logs, fsyncs the target
   directories, and deletes the effect file. At start-up the effect files the last transactions
   named are carried out again (a rename already done is skipped: it is idempotent), and every
   other effect file is an uncommitted attempt's: :func:`sweep` removes its temporaries.

The format is JSON lines, one record per line, so a torn last line (a task killed mid-write,
never committed) is simply ignored::

    {"stage": "/out/.flowcore-0123456789abcdef.part"}
    {"publish": ["/out/.flowcore-0123456789abcdef.part", "/out/a.txt", true]}
    {"log": ["flowcore.processors.LogAttribute", 20, "message"]}
    {"delete": "/in/a.txt"}                  a source file ingested, deleted after the commit
    {"move": ["/in/a.txt", "/done/a.txt", "Rename", "a-<uuid>.txt"]}   moved after the commit
    {"after_commit": ["<component id>", {"op": "delete", ...}]}   a processor's remote work

After-commit actions (:class:`~flowcore.session.host.AfterCommitAction`: FetchSFTP deleting the
remote file it fetched) are handed back to the caller of :func:`carry_out` (the driver, which
has the processors), after the renames and disposals.
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import errno
import functools
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from flowcore.errors import RepositoryError, StorageFaultError
from flowcore.faults import storage_fault
from flowcore.session.host import AfterCommitAction, Disposal, LogLine, MoveConflict, Publication
from repositories._files import file_stem, fsync_directory
from repositories.disposals import dispose
from repositories.records import Finding

__all__ = [
    "EFFECTS_SUFFIX",
    "FSYNC_EACH_MAX",
    "RETRY_SUFFIX",
    "TARGETS_DIRECTORY",
    "EffectFileError",
    "EffectFileWriter",
    "EffectReport",
    "FileSystemFlush",
    "Outcome",
    "can_sync_whole_file_systems",
    "carry_out",
    "is_temporary_name",
    "publish",
    "read_effects",
    "release_targets",
    "reserve_target",
    "retries",
    "sweep",
    "temporary_name",
]

LOG = logging.getLogger("flowcore.repositories.effects")
#: errno values of a link refused because the file system has no hard links.
_NO_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK})
EFFECTS_SUFFIX = ".effects"
RETRY_SUFFIX = ".retry"  # committed publications a file system refused; tried again later
TARGETS_DIRECTORY = "targets"  # per stage run: which task stages which no-replace target
#: Hidden temporaries: short (a 255-byte target name still fits) and recognisable, so a sweep
#: never removes a file flowcore did not make.
_TEMPORARY = re.compile(r"\.flowcore-[0-9a-f]{16}\.part")


def temporary_name(attempt: str, number: int) -> str:
    """The hidden temporary's name for the *number*-th file an attempt stages (31 characters)."""
    digest = hashlib.blake2b(f"{attempt}\0{number}".encode(), digest_size=8).hexdigest()
    return f".flowcore-{digest}.part"


def is_temporary_name(name: str) -> bool:
    """Whether *name* is one of flowcore's hidden temporaries."""
    return _TEMPORARY.fullmatch(name) is not None


class EffectFileError(RepositoryError):
    """A task could not record its effects; the task fails (it is not the FlowFile's fault)."""


@attrs.frozen
class EffectReport:
    """What :func:`carry_out` did.

    Attributes:
        published: files renamed into place now.
        already: files found already in place (a crash after the rename, before the delete).
        conflicts: targets kept as they were because a file appeared there after the check.
        logged: log lines emitted.
        failed: publications not made (``target: reason``): refused by the file system, or
            waiting behind an earlier refused publication of the same target.
        waiting: the targets of those publications, kept staged in a retry file.
    """

    published: int = 0
    already: int = 0
    conflicts: tuple[str, ...] = ()
    logged: int = 0
    failed: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()

    def __add__(self, other: EffectReport) -> EffectReport:
        return EffectReport(
            self.published + other.published,
            self.already + other.already,
            self.conflicts + other.conflicts,
            self.logged + other.logged,
            self.failed + other.failed,
            self.waiting + other.waiting,
        )


class EffectFileWriter:
    """The effect file of one task attempt, opened on first use.

    Args:
        directory: the repository's effect directory.
        attempt: the task attempt (names the file).
    """

    def __init__(self, directory: str | os.PathLike[str], attempt: str) -> None:
        self.directory = Path(directory)
        self.attempt = attempt
        self.path = self.directory / f"{file_stem(attempt, 'task')}{EFFECTS_SUFFIX}"
        self._out: IO[str] | None = None
        self._staged = 0
        self._directories: set[str] = set()  # where temporaries were staged

    def _append(self, record: dict[str, Any]) -> None:
        try:
            if self._out is None:
                self.directory.mkdir(exist_ok=True)  # under the repository: never made again
                self._out = open(self.path, "a", encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
            self._out.write(json.dumps(record, ensure_ascii=True) + "\n")
            self._out.flush()  # a kill -9 keeps what was flushed: the sweep must see it all
        except OSError as error:
            # The repository's failure, not the sink's: the sink must not route on it.
            if storage_fault(error):
                msg = f"cannot write the effect file {self.path}: {error.strerror or error}"
                raise StorageFaultError(error.errno, msg, str(self.path)) from error
            msg = f"cannot write the effect file {self.path}: {error.strerror or error}"
            raise EffectFileError(error.errno, msg, str(self.path)) from error

    def stage(self, target_directory: str | os.PathLike[str]) -> Path:
        """Record, then return, a new hidden temporary in *target_directory*."""
        name = temporary_name(self.attempt, self._staged)
        self._staged += 1
        temporary = Path(target_directory) / name
        self._directories.add(str(target_directory))
        self._append({"stage": os.fsdecode(temporary)})
        return temporary

    def commit(
        self,
        publications: Sequence[Publication],
        logs: Sequence[LogLine],
        disposals: Sequence[Disposal] = (),
        actions: Sequence[AfterCommitAction] = (),
    ) -> None:
        """A session committed: record its publications, lines, disposals and actions."""
        for p in publications:
            self._append({"publish": [p.temporary, p.target, p.replace]})
        for line in logs:
            self._append({"log": [line.logger, line.level, line.message]})
        for d in disposals:
            if d.target is None:
                self._append({"delete": d.source, "version": d.fingerprint})
            else:
                move = [d.source, d.target, d.conflict.value, d.alternative]
                self._append({"move": move, "version": d.fingerprint})
        for action in actions:
            self._append({"after_commit": [action.component_id, dict(action.payload)]})

    def close(self, *, sync: bool = True) -> str | None:
        """Make the staged files, then this file, durable; its path (None: nothing staged).

        Sinks write their temporaries without an fsync each: before the transaction names
        them, every file system they are on is synced once (``syncfs``), so a power cut after
        the commit cannot publish a file whose bytes were lost.
        """
        if self._out is None:
            return None
        if sync:
            _sync_file_systems(self._directories)
            os.fsync(self._out.fileno())
        self._out.close()
        self._out = None
        if sync:  # the file's name too: the transaction will name it
            fsync_directory(self.directory)
        return str(self.path)


def _sync_file_systems(directories: Iterable[str]) -> None:
    """Flush every file system holding one of *directories* (Linux ``syncfs``, once each).

    Elsewhere (no ``syncfs``), each staged file in them is fsynced instead.
    """
    syncfs = _syncfs()
    opened = _open_one_per_file_system(sorted(directories))
    try:
        for directory, fd in opened:
            if syncfs is not None and syncfs(fd) == 0:
                continue
            for entry in os.scandir(directory):
                if is_temporary_name(entry.name):
                    _fsync_path(entry.path)
    finally:
        for _, fd in opened:
            os.close(fd)


def _fsync_path(path: str | os.PathLike[str]) -> None:
    """Make one file's bytes durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@functools.cache
def can_sync_whole_file_systems() -> bool:
    """Whether :class:`FileSystemFlush` can work here.

    Linux's ``syncfs`` reports writeback errors (since the directory was opened) from 5.8 on;
    before that it reports none, so files must be fsynced one by one to notice a lost write.
    """
    if _syncfs() is None:
        return False
    release = os.uname().release.split("-")[0].split(".")
    try:
        return (int(release[0]), int(release[1])) >= (5, 8)
    except (IndexError, ValueError):
        return False


#: Files a :class:`FileSystemFlush` fsyncs one by one; beyond, one ``syncfs`` is cheaper.
FSYNC_EACH_MAX = 32


class FileSystemFlush:
    """Files written without an fsync each, made durable together later.

    A task opens its segment, event and content directories when it starts, writes its files
    there without an fsync each (:meth:`add` names them), and flushes them all before it
    returns: the commit will name every one, so each must be durable whatever disk it is on
    (content on another disk than the queues was left to chance before, issue 31). A few files
    are fsynced one by one, with the directories that name them: ``syncfs`` would also write
    back everything else the file system holds unwritten, which costs more. Hundreds of files
    (a task of a million small FlowFiles) take one ``syncfs`` per file system instead of
    hundreds of fsyncs; the directories were opened first, so an error in writing back any of
    them since is reported to that flush, whoever else syncs meanwhile. Where ``syncfs`` cannot
    report lost writes (:func:`can_sync_whole_file_systems`), files are always fsynced one by
    one.

    Args:
        directories: where the files will be, or the roots they are under (one per file
            system is kept open; missing ones are created).
    """

    def __init__(self, directories: Iterable[str | os.PathLike[str]]) -> None:
        self._files: list[str | os.PathLike[str]] = []
        directories = list(directories)
        for directory in directories:
            Path(directory).mkdir(parents=True, exist_ok=True)
        self._opened = _open_one_per_file_system(directories)

    def add(self, path: str | os.PathLike[str]) -> None:
        """Note a file written in one of the directories, to be flushed."""
        self._files.append(path)

    def flush(self) -> None:
        """Make the files added durable (and their names).

        Raises:
            OSError: the file system reports a write it lost.
        """
        if not self._files:
            return
        if len(self._files) <= FSYNC_EACH_MAX or not can_sync_whole_file_systems():
            for path in self._files:
                _fsync_path(path)
            for directory in dict.fromkeys(Path(p).parent for p in self._files):
                fsync_directory(directory)  # the creations and renames that named them
        else:
            syncfs = _syncfs()
            for directory, fd in self._opened:
                if syncfs(fd) != 0:
                    error = ctypes.get_errno()
                    raise OSError(error, os.strerror(error), str(directory))
        self._files = []

    def close(self) -> None:
        """Close the directories."""
        for _, fd in self._opened:
            os.close(fd)
        self._opened = []


def _open_one_per_file_system(
    directories: Iterable[str | os.PathLike[str]],
) -> list[tuple[str | os.PathLike[str], int]]:
    """The first of *directories* on each file system, opened; missing ones are skipped.

    The caller closes them.
    """
    opened: list[tuple[str | os.PathLike[str], int]] = []
    devices: set[int] = set()
    for directory in directories:
        try:
            fd = os.open(directory, os.O_RDONLY)
        except FileNotFoundError:
            continue
        device = os.fstat(fd).st_dev
        if device in devices:
            os.close(fd)
            continue
        devices.add(device)
        opened.append((directory, fd))
    return opened


@functools.cache
def _syncfs() -> Any:
    """Libc's ``syncfs``, or None where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return None


@attrs.frozen
class _Effects:
    staged: tuple[str, ...]
    publications: tuple[Publication, ...]
    logs: tuple[LogLine, ...]
    disposals: tuple[Disposal, ...] = ()
    actions: tuple[AfterCommitAction, ...] = ()


def read_effects(path: str | os.PathLike[str]) -> _Effects:
    """An effect file's records; a torn or unreadable last line ends it."""
    staged: list[str] = []
    publications: list[Publication] = []
    logs: list[LogLine] = []
    disposals: list[Disposal] = []
    actions: list[AfterCommitAction] = []
    with open(path, encoding="utf-8", errors="surrogateescape") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                break
            if "stage" in record:
                staged.append(record["stage"])
            elif "publish" in record:
                temporary, target, replace = record["publish"]
                publications.append(Publication(temporary, target, bool(replace)))
            elif "log" in record:
                logs.append(LogLine(*record["log"]))
            elif "delete" in record:
                disposals.append(Disposal(record["delete"], fingerprint=record.get("version")))
            elif "move" in record:
                source, target, conflict, alternative = record["move"]
                disposals.append(
                    Disposal(
                        source, target, MoveConflict(conflict), alternative, record.get("version")
                    )
                )
            elif "after_commit" in record:
                component_id, payload = record["after_commit"]
                actions.append(AfterCommitAction(component_id, payload))
    return _Effects(
        tuple(staged), tuple(publications), tuple(logs), tuple(disposals), tuple(actions)
    )


class Outcome(enum.Enum):
    """What publishing one staged file did."""

    PUBLISHED = "published"  # renamed into place now
    ALREADY = "already"  # found in place: done before a crash
    CONFLICT = "conflict"  # a file appeared at the target and may not be replaced: kept


def publish(publication: Publication) -> Outcome:
    """Rename one staged file into place; what happened."""
    temporary, target = Path(publication.temporary), Path(publication.target)
    if not temporary.exists():
        return Outcome.ALREADY  # done before a crash
    if publication.replace:
        os.replace(temporary, target)
        return Outcome.PUBLISHED
    try:
        os.link(temporary, target)  # never overwrites: the conflict was decided in the task
    except FileExistsError:
        if not os.path.samefile(temporary, target):
            temporary.unlink()
            return Outcome.CONFLICT
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
        # A file system without hard links (vfat, many SMB and FUSE mounts): check, then
        # rename, as NiFi's PutFile does (a file appearing in between is overwritten).
        if target.exists():
            temporary.unlink()
            return Outcome.CONFLICT
        os.rename(temporary, target)
        return Outcome.PUBLISHED
    temporary.unlink()
    return Outcome.PUBLISHED


def carry_out(
    path: str | os.PathLike[str],
    blocked: Iterable[str] = (),
    act: Callable[[Sequence[AfterCommitAction]], None] | None = None,
) -> EffectReport:
    """Do what a committed effect file stages, then delete it (idempotent; a missing file is done).

    Renames come first, in the order the tasks' sessions committed them; the target
    directories are fsynced before the effect file goes, so a crash never forgets a rename
    it had not made durable. Source deletions and moves (:mod:`repositories.disposals`) and log
    lines follow.

    A rename the file system refuses is kept staged in a retry file (:func:`retries`) that
    the driver carries out again before every later effect file, and at the next start. So
    that an older file never lands over a newer one, a publication whose target is in
    *blocked* (targets of earlier publications still waiting) waits behind it, in the same
    retry file. Deletions and log lines never wait for a rename.

    The processors' after-commit actions go to *act* (the driver's, which reaches the
    processors) after the disposals; without one they are left undone, with an error.
    """
    try:
        effects = read_effects(path)
    except FileNotFoundError:
        return EffectReport()
    published = already = 0
    conflicts: list[str] = []
    failed: list[str] = []
    waiting: list[Publication] = []
    held = set(blocked)
    directories = set()
    for publication in effects.publications:
        if publication.target in held:
            waiting.append(publication)
            failed.append(f"{publication.target}: waits for an earlier publication of it")
            continue
        try:
            outcome = publish(publication)
        except OSError as error:
            waiting.append(publication)
            held.add(publication.target)
            failed.append(f"{publication.target}: {error.strerror or error}")
            continue
        published += outcome is Outcome.PUBLISHED
        already += outcome is Outcome.ALREADY
        if outcome is Outcome.CONFLICT:
            conflicts.append(publication.target)
            LOG.warning(
                "%s appeared after the FlowFile for it was committed; kept it and dropped the "
                "staged copy (Conflict Resolution Strategy is not 'replace')",
                publication.target,
            )
        directories.add(Path(publication.target).parent)
    for directory in sorted(directories):
        fsync_directory(directory)
    if waiting:
        retry = _keep_for_retry(Path(path), waiting)
        for problem in failed:
            LOG.error("could not publish %s; kept staged in %s, tried again later", problem, retry)
    changed = set()
    for disposal in effects.disposals:  # ingested source files (GetFile, FetchFile)
        try:
            dispose(disposal)
        except OSError as error:  # never stop a start over it: the FlowFile is committed
            LOG.warning(
                "could not %s the ingested source %s (%s); do it by hand",
                "delete" if disposal.target is None else f"move to {disposal.target}",
                disposal.source,
                error.strerror or error,
            )
            continue
        changed.add(Path(disposal.source).parent)
        if disposal.target is not None:
            changed.add(Path(disposal.target).parent)
    for directory in sorted(changed):  # a power cut must not bring an ingested file back
        with contextlib.suppress(FileNotFoundError):
            fsync_directory(directory)
    if effects.actions:
        if act is not None:
            act(effects.actions)
        else:
            LOG.error("%d after-commit action(s) in %s have nobody to carry them out",
                      len(effects.actions), path)  # fmt: skip
    for line in effects.logs:
        logging.getLogger(line.logger).log(line.level, "%s", line.message)
    if not waiting or Path(path).suffix != RETRY_SUFFIX:
        Path(path).unlink(missing_ok=True)
    return EffectReport(
        published,
        already,
        tuple(conflicts),
        len(effects.logs),
        tuple(failed),
        tuple(p.target for p in waiting),
    )


def _keep_for_retry(path: Path, waiting: Sequence[Publication]) -> Path:
    """Write the publications still *waiting* to a retry file, atomically; its path.

    A retry file being carried out again is rewritten in place (it keeps its place in the
    order); an effect file's waiting publications get a new retry file after every other,
    named by a sequence number so :func:`retries` lists them in the order they failed.
    """
    if path.suffix == RETRY_SUFFIX:
        retry = path
    else:
        prefixes = [p.name.split("-", 1)[0] for p in _retry_files(path.parent)]
        number = max((int(n) for n in prefixes if n.isdigit()), default=0) + 1
        retry = path.parent / f"{number:012d}-{path.stem}{RETRY_SUFFIX}"
    partial = retry.with_name(retry.name + ".partial")
    with open(partial, "w", encoding="utf-8", errors="surrogateescape") as out:
        for p in waiting:
            out.write(json.dumps({"publish": [p.temporary, p.target, p.replace]}) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, retry)
    fsync_directory(path.parent)
    return retry


def _retry_files(directory: Path) -> list[Path]:
    """Retry files in the order their publications failed (older unnumbered ones first)."""
    if not directory.is_dir():
        return []

    def order(p: Path) -> tuple[int, str]:
        prefix = p.name.split("-", 1)[0]
        return (int(prefix) if prefix.isdigit() else -1, p.name)

    return sorted(directory.glob(f"*{RETRY_SUFFIX}"), key=order)


def reserve_target(directory: str | os.PathLike[str], run: str, target: str, task: int) -> bool:
    """Take *target* for *task* among the tasks of stage run *run*; False if another has it.

    A task checks its target against the disk and its own staged files, but tasks of one
    stage run execute side by side: two of them could both find a name free, both stage it,
    and the second rename would find the first's file after its FlowFile was committed as
    sent. So a sink that must not replace a file reserves the name first, with an exclusive
    create that every task of the run sees (the repository is on a path all executors reach).
    A reservation held by the same task index is a retry of that task (Spark reruns a failed
    attempt) and is taken over. The run's reservations are removed after its commit
    (:func:`release_targets`); what a crash leaves goes at the next start.
    """
    root = Path(directory) / TARGETS_DIRECTORY / run
    path = root / hashlib.blake2b(os.fsencode(target), digest_size=16).hexdigest()
    owner = str(task)
    for _ in range(2):
        try:
            os.symlink(owner, path)  # atomic, and it carries its owner: no half-written state
        except FileExistsError:
            try:
                return os.readlink(path) == owner
            except FileNotFoundError:
                continue  # released in between: try again
        except FileNotFoundError:
            root.mkdir(parents=True, exist_ok=True)
            continue
        except OSError as error:
            msg = f"cannot reserve {target} in {root}: {error.strerror or error}"
            if storage_fault(error):
                raise StorageFaultError(error.errno, msg, str(path)) from error
            raise EffectFileError(error.errno, msg, str(path)) from error
        return True
    return False


def release_targets(directory: str | os.PathLike[str], run: str | None = None) -> None:
    """Remove the reservations of stage run *run* (None: of every run; at start-up)."""
    root = Path(directory) / TARGETS_DIRECTORY
    shutil.rmtree(root / run if run else root, ignore_errors=True)
    with contextlib.suppress(OSError):  # leave nothing behind once no run holds a name
        root.rmdir()


def retries(directory: str | os.PathLike[str]) -> list[str]:
    """Committed publications a file system refused, as retry files, oldest first."""
    return [str(p) for p in _retry_files(Path(directory))]


def sweep(directory: str | os.PathLike[str], keep: Iterable[str] = ()) -> list[Finding]:
    """Remove effect files of attempts that never committed, and the temporaries they staged.

    Only files named like flowcore's temporaries are removed, so a damaged effect file cannot
    make the sweep delete anything else.
    """
    root = Path(directory)
    if not root.is_dir():
        return []
    kept = {Path(p).name for p in keep}
    findings = []
    for path in sorted(root.glob(f"*{EFFECTS_SUFFIX}")):
        if path.name in kept:
            continue
        with contextlib.suppress(FileNotFoundError):
            effects = read_effects(path)
            removed = 0
            for staged in effects.staged:
                candidate = Path(staged)
                if is_temporary_name(candidate.name) and candidate.is_file():
                    candidate.unlink(missing_ok=True)
                    removed += 1
            path.unlink(missing_ok=True)
            findings.append(
                Finding(
                    "effects",
                    path.name,
                    f"effects of an uncommitted task; removed {removed} temporary file(s)",
                    fixed=True,
                )
            )
    return findings
