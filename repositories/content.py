"""The file content repository: content as byte ranges of append-only files on disk.

Layout, as NiFi's FileSystemRepository: ``<container>/<section>/<claim id>`` with 1024 sections
per container and containers used round-robin (one per disk). Each writer (one per session or
task attempt, named by its owner) appends consecutive small contents to one resource claim file
until it reaches the max appendable size, then starts another; a claim file is only ever written
by the writer that created it, so Spark executors can write to a shared path without locks. A
*named* claim (:meth:`FileContentRepository.named_claim`) holds one content whose name every task
knows before it is written: the blocks of a large file read by parallel tasks, one claim each,
which together form the file's rope (a retried task writes its block again under the same name).
Reads open the claim file and seek to the range. External claims (zero-copy ingestion) name files
outside the containers: they are read in place after a fingerprint check and never archived,
removed or reported as unclaimed (:mod:`flowcore.session.external_files`).

Integrity: a writer checksums each claim file in 64 KiB blocks (CRC32C) as it writes and appends
the checksums as a footer when it retires the file, before any commit can reference it (its name
ends with :data:`SEALED_SUFFIX`). A reader verifies the blocks its range touches and raises
:class:`~flowcore.errors.ContentCorruptionError` for a mismatch, a range past the file's data, or
a sealed file without a valid footer (cut short); the engine then routes the FlowFile to its
processor's ``failure``. :meth:`FileContentRepository.check` verifies every block of every
claimed file. Files written before checksums existed are read unverified and reported by
``check`` until ``check --fix`` records their checksums; a claim still being appended to is
read unverified by the task writing it (its footer does not exist yet).

Claimant counts live in memory and are rebuilt from the FlowFile repository at start-up
(:meth:`FileContentRepository.recover`, which also archives or removes files nothing claims: the
output of sessions or task attempts that never committed). The driver decrements a count only
after the FlowFile repository has durably stopped referencing the claim; a claim at zero is then
archived or destroyed by :meth:`FileContentRepository.cleanup`. The archive keeps content for
replay and is aged off as NiFi does: older than the max retention period (3 hours), or oldest
first while the disk is fuller than the max usage percentage (90%).

The repository class is here; its parts by concept are apart: the footers read per claim file
version (:mod:`repositories._claim_footers`, where :data:`SEALED_SUFFIX` is defined), the read
descriptors kept open (:mod:`repositories._read_descriptors`) and the archive's age-off
(:mod:`repositories._content_archive`). Their public names stay importable from here.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from flowcore.clock import now_ms
from flowcore.errors import (
    ContentChangedError,
    ContentCorruptionError,
    ContentNotFoundError,
    RepositoryError,
)
from flowcore.flowfile import Content, ContentClaim, ResourceClaim, Rope
from flowcore.session import external_files
from flowcore.session.external_files import matches, open_external
from flowcore.units import parse_time_period
from repositories._claim_checksums import BlockSummer
from repositories._claim_footers import SEALED_SUFFIX, FooterCache
from repositories._claim_reader import (
    BlockVerifier,
    FileIdentity,
    RangeReader,
    VerifiedBlocks,
    damaged,
    file_identity,
)
from repositories._claim_writer import FileWriter
from repositories._content_archive import (
    ARCHIVE,
    ARCHIVE_CLEANUP_FREQUENCY_MS,
    DEFAULT_ARCHIVE_MAX_RETENTION,
    DEFAULT_ARCHIVE_MAX_USAGE,
    archived,
    created_ms,
    expire,
    percentage,
)
from repositories._content_check import (
    ClaimReferences,
    claim_references,
    referenced_by,
    seal,
    verify_file,
)
from repositories._files import file_stem
from repositories._read_descriptors import ReadDescriptors
from repositories._rope_stream import open_rope
from repositories.records import Finding

__all__ = [
    "ARCHIVE_CLEANUP_FREQUENCY_MS",
    "DEFAULT_ARCHIVE_MAX_RETENTION",
    "DEFAULT_ARCHIVE_MAX_USAGE",
    "DEFAULT_MAX_APPENDABLE_SIZE",
    "SEALED_SUFFIX",
    "SECTIONS_PER_CONTAINER",
    "FileContentRepository",
    "claim_references",
]

DEFAULT_MAX_APPENDABLE_SIZE = 1024 * 1024  # bytes per claim file before a new one starts
SECTIONS_PER_CONTAINER = 1024  # sub-directories per container, as NiFi


class FileContentRepository:
    """Content stored in claim files under one or more container directories.

    Args:
        containers: directories, one per disk; a single path is one container named
            ``default``.
        max_appendable_size: bytes after which a claim file is no longer appended to. Small
            values free disk sooner (a claim file lives as long as its last claimant); large
            values mean fewer files. NiFi ships 50 KB; flowcore defaults to 1 MB because Spark
            tasks write many small FlowFiles per task and file count costs more on shared
            storage.
        always_sync: fsync each claim file when its writer retires it.
        archive: move unclaimed content to ``<section>/archive/`` (kept for replay) instead of
            deleting it at once (NiFi's ``archive.enabled``, on by default).
        archive_max_retention: archived content older than this is deleted.
        archive_max_usage: while a container's disk is fuller than this, its oldest archived
            content is deleted (down to 2 points below, as NiFi). A new claim avoids a
            container above this mark plus 2 points while another container has room.
        disk_usage: ``shutil.disk_usage``-like function (replaceable in tests).
    """

    def __init__(
        self,
        containers: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        max_appendable_size: int = DEFAULT_MAX_APPENDABLE_SIZE,
        always_sync: bool = False,
        archive: bool = True,
        archive_max_retention: str = DEFAULT_ARCHIVE_MAX_RETENTION,
        archive_max_usage: str = DEFAULT_ARCHIVE_MAX_USAGE,
        disk_usage: Callable[[Path], tuple[int, int, int]] = shutil.disk_usage,  # type: ignore[assignment]
    ) -> None:
        if isinstance(containers, str | os.PathLike):
            containers = [containers]
        self.containers = {
            f"c{index}" if len(containers) > 1 else "default": Path(path)
            for index, path in enumerate(containers)
        }
        for path in self.containers.values():
            path.mkdir(parents=True, exist_ok=True)
        self.max_appendable_size = max_appendable_size
        self.always_sync = always_sync
        self._counts: dict[ResourceClaim, int] = {}
        # Claims being written, with their open file once a writer has one. A writer's bytes
        # stay buffered until someone reads the claim: a flush per FlowFile cost a fifth of
        # writing a small one.
        self._writable: dict[ResourceClaim, BinaryIO | None] = {}
        self._next = itertools.count()
        self._round_robin = itertools.cycle(sorted(self.containers))
        self._lock = threading.Lock()
        self.archive = archive
        self.archive_max_retention_ms = int(parse_time_period(archive_max_retention, "ms"))
        self.archive_max_usage = percentage(archive_max_usage, "archive_max_usage")
        self._disk_usage = disk_usage
        self._destructable: set[ResourceClaim] = set()
        self._sections: set[tuple[str, str]] = set()  # section directories known to exist
        self._readers = ReadDescriptors()
        self._footers = FooterCache()
        self._verified = VerifiedBlocks()
        self._pressure: dict[str, tuple[float, bool]] = {}  # container -> (measured at, verdict)

    def new_claim(self, owner: str) -> ResourceClaim:
        """A new claim file for *owner*'s writer to append to (being written until retired)."""
        with self._lock:
            n = next(self._next)
        container = self._choose_container()
        section = str(n % SECTIONS_PER_CONTAINER)
        stem = file_stem(owner, "session")
        # The millisecond prefix doubles as the claim's creation time (archive age-off).
        claim = ResourceClaim(
            container,
            section,
            f"{now_ms()}-{stem}-{uuid.uuid4().hex[:12]}{SEALED_SUFFIX}",
        )
        directory = (container, section)
        if directory not in self._sections:  # mkdir is a slow metadata operation: once each
            self.path_of(claim).parent.mkdir(exist_ok=True)  # in a container made at start
            self._sections.add(directory)
        self._writable[claim] = None
        return claim

    def named_claim(self, name: str) -> ResourceClaim:
        """The claim a file named *name* is written as (``FileWriter.open_named_stream``).

        Its container and section follow from the name alone, so every task (and the driver)
        names the same claim without asking anyone. *name* must begin with the creation time in
        epoch milliseconds and a ``-`` (the archive ages content off by it) and be unique.
        """
        digest = zlib.crc32(name.encode("utf-8"))
        containers = sorted(self.containers)
        return ResourceClaim(
            containers[digest % len(containers)],
            str(digest % SECTIONS_PER_CONTAINER),
            f"{name}{SEALED_SUFFIX}",
        )

    def _choose_container(self) -> str:
        """The next container round-robin, skipping one over the archive back-pressure mark.

        When every container is over it, the chosen one's archive is aged off at once instead
        of blocking the writer as NiFi does (a Spark task cannot wait for a cleanup thread).
        """
        for _ in range(len(self.containers)):
            with self._lock:
                container = next(self._round_robin)
            if not self._under_back_pressure(container):
                return container
        self._expire_archive(container, now_ms())
        self._pressure.pop(container, None)
        return container

    def _usage(self, container: str) -> float:
        total, used, _free = self._disk_usage(self.containers[container])
        return used / total if total else 0.0

    def _under_back_pressure(self, container: str) -> bool:
        """Whether a container is over the back-pressure mark with archived content to free.

        Re-measured at most once a second per container (NiFi: once a minute): the archive scan
        lists every section directory.
        """
        if not self.archive:
            return False
        now = time.monotonic()
        checked = self._pressure.get(container)
        if checked is not None and now - checked[0] < 1.0:
            return checked[1]
        verdict = self._usage(container) >= self.archive_max_usage + 0.02 and any(
            self._archived(container)
        )
        self._pressure[container] = (now, verdict)
        return verdict

    def archive_path_of(self, claim: ResourceClaim) -> Path:
        """Where a claim file goes when it is archived."""
        return self.path_of(claim).parent / ARCHIVE / claim.id

    def _located(self, claim: ResourceClaim) -> Path | None:
        """The live or archived file of a claim, None when it is gone."""
        if claim.is_external:
            return Path(claim.id) if matches(claim) else None
        live = self.path_of(claim)
        if live.exists():
            return live
        archived = live.parent / ARCHIVE / claim.id
        return archived if archived.exists() else None

    def path_of(self, claim: ResourceClaim) -> Path:
        """The file holding a resource claim.

        Raises:
            RepositoryError: the claim names a container this repository does not have.
        """
        if claim.is_external:
            return Path(claim.id)
        root = self.containers.get(claim.container)
        if root is None:
            msg = (
                f"resource claim {claim} names unknown container {claim.container!r}; "
                f"known: {sorted(self.containers)!r}"
            )
            raise RepositoryError(msg)
        return root / claim.section / claim.id

    def writer(self, owner: str = "") -> FileWriter:
        """A writer whose files are named after *owner* (a task attempt id)."""
        return FileWriter(self, owner)

    def _descriptor(self, claim: ResourceClaim) -> int:
        """A private duplicate of the kept read descriptor of a claim file (LRU of 64)."""
        fd = self._readers.duplicate(claim)
        if fd is not None:
            return self._checked(claim, fd)
        if claim.is_external:
            fd = open_external(claim)
        else:
            path = self._located(claim) or self.path_of(claim)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                msg = f"content of {claim} is no longer in the content repository ({path} is gone)"
                raise ContentNotFoundError(msg) from None
        return self._readers.keep(claim, fd)

    def _checked(self, claim: ResourceClaim, fd: int) -> int:
        """*fd* itself, unless it is an external file rewritten in place since it was opened."""
        if not claim.is_external:
            return fd
        try:
            return external_files.checked(claim, fd)
        except ContentChangedError:
            self._forget_reader(claim)
            raise

    def close(self) -> None:
        """Close the cached read descriptors (a process may open many repositories in its life).

        Descriptors are plain numbers: dropping the repository would not close them, and a
        long-lived process (``flowcore serve``, a Spark worker running task after task, a
        notebook) would run out. The repository stays usable: a later read opens afresh.
        """
        self._readers.close()

    def _forget_reader(self, claim: ResourceClaim) -> None:
        self._readers.forget(claim)

    def open(self, claim: Content) -> BinaryIO:
        """A stream over exactly the claim's bytes (from the archive when it was archived).

        Over a sealed claim file every block the range touches is verified against the
        file's checksums before its bytes are returned; a claim still being written by this
        repository's writers is read as it is (its checksums are not written yet).

        Raises:
            ContentNotFoundError: the claim file is gone, or an outside file changed.
            ContentCorruptionError: the range lies past the data the file holds, its footer is
                missing or damaged, or (while reading) a block does not match its checksum.
        """
        if isinstance(claim, Rope):
            return open_rope(claim, self.open)
        resource = claim.resource_claim
        self._flush(resource)
        fd = self._descriptor(resource)
        try:
            return self._range_reader(claim, fd)  # type: ignore[return-value]
        except BaseException:
            os.close(fd)
            raise

    def _range_reader(self, claim: ContentClaim, fd: int) -> RangeReader:
        resource = claim.resource_claim
        info = os.fstat(fd)
        end = claim.offset + claim.length
        if resource.is_external or resource in self._writable:
            if end > info.st_size:
                msg = f"content {claim} extends past the end of its file ({info.st_size} bytes)"
                raise ContentNotFoundError(msg)
            return RangeReader(fd, claim.offset, claim.length)
        identity = file_identity(resource, info)
        checksums = self._footers.footer_of(identity, fd, self._path_for_message)
        length = info.st_size if checksums is None else checksums.data_length
        if end > length:
            holds = "holds" if checksums is None else "records in its footer"
            raise damaged(
                resource,
                self._path_for_message(resource),
                f"a FlowFile's content is bytes {claim.offset} to {end - 1}, but the file "
                f"{holds} {length} bytes of data: it was cut short",
                length,
                None,
            )
        if checksums is None:  # written before checksums: read unverified, check reports it
            return RangeReader(fd, claim.offset, claim.length)
        verifier = BlockVerifier(
            identity, lambda: self._path_for_message(resource), checksums, self._verified
        )
        return RangeReader(fd, claim.offset, claim.length, verifier)

    def _path_for_message(self, resource: ResourceClaim) -> Path:
        return self._located(resource) or self.path_of(resource)

    def _flush(self, resource_claim: ResourceClaim) -> None:
        """Hand a writer's buffered bytes of *resource_claim* to the OS before reading it."""
        file = self._writable.get(resource_claim)
        if file is not None:
            file.flush()

    def read(self, claim: Content) -> bytes:
        """The claim's bytes."""
        with self.open(claim) as stream:
            return stream.read()

    def export(self, claim: Content, out: BinaryIO) -> int:
        """Copy the claim's bytes into the open file *out*, verified; returns the bytes copied.

        A claim range is copied by the kernel once its blocks are verified (NiFi's
        ``exportTo``), so exporting large contents costs one copy; a rope piece by piece.

        Raises:
            ContentNotFoundError, ContentCorruptionError: as :meth:`open`.
        """
        copied = 0
        for piece in claim.pieces if isinstance(claim, Rope) else (claim,):
            with self.open(piece) as stream:
                copied += stream.copy_to(out)  # type: ignore[attr-defined]
        return copied

    def writing(self, claim: ResourceClaim, file: BinaryIO) -> None:
        """A writer opened *claim*'s *file*: its buffered bytes are flushed before a read."""
        self._writable[claim] = file

    def retired(
        self,
        claim: ResourceClaim,
        identity: FileIdentity | None = None,
        summer: BlockSummer | None = None,
    ) -> None:
        """A writer retired *claim*'s file, sealed with *summer*'s checksums.

        They are of the very bytes written: no reader here reads them back to check them.
        """
        self._writable.pop(claim, None)
        if identity is None or summer is None:
            return
        checksums = summer.checksums()
        self._footers.remember(identity, checksums)
        self._verified.add_file(identity, len(checksums.crcs))

    def size_of(self, resource_claim: ResourceClaim) -> int | None:
        """The bytes of data in a claim's file (None when it is gone), for the rope policy.

        The checksum footer is not counted; a damaged file counts as its whole size.
        """
        if resource_claim.is_external:
            return int(resource_claim.section.split(":", 1)[0])
        self._flush(resource_claim)
        try:
            fd = self._descriptor(resource_claim)
        except ContentNotFoundError:
            return None
        try:
            info = os.fstat(fd)
            if resource_claim in self._writable:
                return info.st_size
            identity = file_identity(resource_claim, info)
            checksums = self._footers.footer_of(identity, fd, self._path_for_message)
        except ContentCorruptionError:
            return info.st_size
        finally:
            os.close(fd)
        return info.st_size if checksums is None else checksums.data_length

    def exists(self, resource_claim: ResourceClaim) -> bool:
        """Whether the claim's content is still readable, live or archived."""
        return self._located(resource_claim) is not None

    def increment_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Add claimants; a claim waiting for destruction is kept again (a replay revives it)."""
        with self._lock:
            self._counts[resource_claim] = self._counts.get(resource_claim, 0) + delta
            self._destructable.discard(resource_claim)
            return self._counts[resource_claim]

    def decrement_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Remove claimants, never below zero; at zero the claim awaits :meth:`cleanup`.

        Call it only once the FlowFile repository has durably stopped referencing the claim
        (after the commit that dropped or replaced the FlowFiles), as NiFi does.
        """
        with self._lock:
            count = max(0, self._counts.get(resource_claim, 0) - delta)
            self._counts[resource_claim] = count
            if count == 0 and not resource_claim.is_external:
                self._destructable.add(resource_claim)
            return count

    def release_unclaimed(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Claims a committed task wrote: those no FlowFile references await :meth:`cleanup`.

        A task's claim file can hold only the bytes of sessions that rolled back, or content
        its FlowFiles replaced before they left; nothing else would ever release it.
        """
        with self._lock:
            for claim in resource_claims:
                if self._counts.get(claim, 0) == 0 and not claim.is_external:
                    self._destructable.add(claim)

    def claimant_count(self, resource_claim: ResourceClaim) -> int:
        """Current claimant count."""
        return self._counts.get(resource_claim, 0)

    def remove(self, resource_claim: ResourceClaim) -> bool:
        """Delete an unclaimed claim file no writer appends to (never an external file)."""
        if resource_claim.is_external:
            return False
        with self._lock:
            if self._counts.get(resource_claim, 0) > 0 or resource_claim in self._writable:
                return False
            self._counts.pop(resource_claim, None)
            self._destructable.discard(resource_claim)
        self._forget_reader(resource_claim)
        try:
            self.path_of(resource_claim).unlink()
        except FileNotFoundError:
            return False
        return True

    def _archive_or_remove(self, claim: ResourceClaim) -> None:
        self._forget_reader(claim)
        live = self.path_of(claim)
        if self.archive:
            target = live.parent / ARCHIVE / claim.id
            target.parent.mkdir(exist_ok=True)
            with contextlib.suppress(FileNotFoundError):  # already gone: nothing to keep
                os.replace(live, target)
            self._pressure.pop(claim.container, None)  # the archive is no longer empty
        else:
            live.unlink(missing_ok=True)

    def cleanup(self, now: int | None = None, *, expire_archive: bool = True) -> int:
        """Archive or destroy claims nobody claims any more, then age off the archive.

        Run by the driver after each durable FlowFile repository commit. Aging off the archive
        walks every section, so a caller committing often passes *expire_archive* only every
        :data:`ARCHIVE_CLEANUP_FREQUENCY_MS` (NiFi's ``archive.cleanup.frequency``). Returns
        how many claims left the live area.
        """
        with self._lock:
            ready = [
                c
                for c in self._destructable
                if self._counts.get(c, 0) == 0 and c not in self._writable
            ]
            self._destructable.difference_update(ready)
            for claim in ready:
                self._counts.pop(claim, None)
        for claim in ready:
            self._archive_or_remove(claim)
        if expire_archive:
            moment = now if now is not None else now_ms()
            for container in self.containers:
                self._expire_archive(container, moment)
        return len(ready)

    def _archived(self, container: str) -> Iterable[tuple[int, Path]]:
        return archived(self.containers[container])

    def _delete_archived(self, container: str, path: Path) -> None:
        self._forget_reader(ResourceClaim(container, path.parent.parent.name, path.name))
        path.unlink(missing_ok=True)

    def _expire_archive(self, container: str, now: int) -> int:
        """Delete archived files past retention, then the oldest while the disk is too full."""
        return expire(
            self._archived(container),
            now,
            retention_ms=self.archive_max_retention_ms,
            max_usage=self.archive_max_usage,
            usage=lambda: self._usage(container),
            delete=lambda path: self._delete_archived(container, path),
        )

    def recover(self, claimant_counts: Mapping[ResourceClaim, int]) -> list[Finding]:
        """Start-up: adopt the claimant counts rebuilt from the FlowFile repository.

        Then every live claim file nothing claims is archived or removed (NiFi's "unknown
        file" cleanup): the output of sessions or task attempts that never committed.

        Returns what was cleaned up and any claimed content that is missing (that cannot be
        repaired here: the FlowFile repository must route or drop those FlowFiles).
        """
        with self._lock:
            self._counts = {c: n for c, n in claimant_counts.items() if n > 0}
            self._destructable.clear()
        action = "archived" if self.archive else "removed"
        findings = []
        for claim in self._unclaimed():
            self._archive_or_remove(claim)
            findings.append(Finding("content", str(claim), f"unclaimed file {action}", fixed=True))
        return findings + self._missing()

    def sweep_orphans(self, created_before: int) -> list[Finding]:
        """Archive or remove unclaimed live files created before *created_before* (epoch ms).

        Run by the driver after commits to clear the output of failed or duplicate task
        attempts. Pass the start of the oldest task attempt that has not committed yet, less a
        margin for clock skew between machines, so the output of running tasks is never touched.
        """
        findings = []
        for claim in self._unclaimed():
            if created_ms(claim.id, self.path_of(claim)) < created_before:
                self._archive_or_remove(claim)
                findings.append(
                    Finding("content", str(claim), "orphan of an uncommitted task", fixed=True)
                )
        return findings

    def resource_claims(self) -> Iterable[ResourceClaim]:
        """Every live claim file on disk (archived ones excluded)."""
        for container, root in sorted(self.containers.items()):
            for section in sorted(root.iterdir(), key=lambda p: p.name):
                if section.is_dir() and section.name.isdigit():
                    for path in sorted(section.iterdir()):
                        if path.is_file():
                            yield ResourceClaim(container, section.name, path.name)

    def check(
        self, *, fix: bool = False, references: ClaimReferences | None = None
    ) -> list[Finding]:
        """List claimed content that is missing or damaged, and unclaimed live files.

        Every block of every claimed live file is verified against its checksum footer. A
        claimed file with no footer is damaged when this flowcore wrote it (its name ends
        with :data:`SEALED_SUFFIX`: it was cut short) and unverifiable when an older one did.
        Only ``fix`` writes: unclaimed files are archived or removed, and files of an older
        flowcore get a footer for their bytes as they are now. Damaged or missing content
        cannot be repaired here: its FlowFiles go to ``failure`` when a processor reads them.

        Args:
            fix: repair what is safe to repair.
            references: which queues reference each claim
                (:func:`~repositories._content_check.claim_references`); by default the
                claimant counts adopted by :meth:`recover`.
        """
        counts = (
            dict(self._counts)
            if references is None
            else {claim: sum(queues.values()) for claim, queues in references.items()}
        )
        findings = self._missing(counts)
        for claim in self.resource_claims():
            count = counts.get(claim, 0)
            if claim in self._writable:
                continue
            if not count:
                if fix:
                    self._archive_or_remove(claim)
                findings.append(
                    Finding("content", str(claim), "file that nothing claims", fixed=fix)
                )
                continue
            path = self.path_of(claim)
            problem, legacy = verify_file(path, sealed_name=claim.id.endswith(SEALED_SUFFIX))
            if problem is None:
                continue
            if legacy and fix:
                seal(path, sync=True)
                self._footers.clear()
            who = referenced_by(count, None if references is None else references.get(claim))
            if not legacy:
                who += (
                    "; a processor reading FlowFiles whose content lies in the damaged bytes "
                    "routes them to its failure relationship (restore the file from a backup "
                    "to keep them)"
                )
            findings.append(
                Finding("content", str(claim), f"{problem}; {who}", fixed=legacy and fix)
            )
        return findings

    def _unclaimed(self) -> list[ResourceClaim]:
        """Live claim files nothing claims and no writer of this repository appends to."""
        return [
            claim
            for claim in self.resource_claims()
            if not self._counts.get(claim) and claim not in self._writable
        ]

    def _missing(self, counts: Mapping[ResourceClaim, int] | None = None) -> list[Finding]:
        """Claimed content whose file is gone (live and archived)."""
        counts = self._counts if counts is None else counts
        return [
            Finding(
                "content",
                str(claim),
                f"{count} claimants but the "
                + ("outside file changed or is gone" if claim.is_external else "file is missing"),
            )
            for claim, count in sorted(counts.items(), key=lambda item: str(item[0]))
            if count > 0 and self._located(claim) is None
        ]
