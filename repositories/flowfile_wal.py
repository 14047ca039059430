"""The write-ahead FlowFile repository: durable queues of segments and processor state.

Layout under the repository directory::

    checkpoint              the snapshot: every queue's segment summaries, state, pending work
    checkpoint.partial      a snapshot being written (during, or after a crash in, a checkpoint)
    journals/<txn>.journal  transactions since the snapshot, named by their first transaction id
    segments/<id>.seg       immutable segment files of FlowFile records

Each :meth:`WriteAheadFlowFileRepository.commit` appends one framed transaction to the journal and
(by default) fsyncs it before returning, so a crash at any point leaves either the old or the new
queues, never a mix. The segment files a commit dequeued are deleted only after the next
checkpoint no longer names them (NiFi's "deletion after checkpointing"): even if the journal tail
were lost, every state it can recover to still has its segment files. Recovery follows NiFi:
snapshot files first (both present: the partial is discarded; only the partial: it is renamed;
an empty checkpoint: skipped), then every whole journal transaction after the snapshot; a torn tail
or trailing zeros end a journal with a warning; anything else refuses to start, naming the file and
offset, and changes nothing on disk. After recovery, segment files no queue references (orphans of
failed task attempts) are removed and a fresh checkpoint is taken.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import repositories.segments as segment_files
from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.flowfile import FlowFile, ResourceClaim
from repositories._files import fsync_directory, write_atomically
from repositories._wal_codec import (
    JOURNAL_COMPLETE,
    JOURNAL_HEADER,
    decode_checkpoint,
    encode_checkpoint,
    encode_transaction,
    pack,
    read_journal,
    unpack,
)
from repositories.records import Finding, SegmentSummary, Transaction

__all__ = ["CHECKPOINT_EVERY", "MAX_JOURNAL_BYTES", "WriteAheadFlowFileRepository"]

LOG = logging.getLogger("flowcore.repositories.flowfile")
CHECKPOINT_EVERY = 1_000  # transactions between automatic checkpoints
MAX_JOURNAL_BYTES = 64 * 1024 * 1024  # journal size that triggers a checkpoint
_JOURNAL_SUFFIX = ".journal"
QUARANTINE = "quarantine"  # damaged segments set aside by check --fix


class WriteAheadFlowFileRepository:
    """Durable queues (lists of segment summaries) and component state, changed by transactions.

    Args:
        directory: where the repository lives; created when missing.
        sync: fsync every commit (the default; commits are per micro-batch, so it is cheap).
            Without it a power loss can lose the last commits, never corrupt the log.
        checkpoint_every: transactions between automatic checkpoints.
        max_journal_bytes: journal size that triggers a checkpoint.

    Raises:
        WalCorruptionError: recovery found damage that is not a torn tail; nothing was changed.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        sync: bool = True,
        checkpoint_every: int = CHECKPOINT_EVERY,
        max_journal_bytes: int = MAX_JOURNAL_BYTES,
        read_only: bool = False,
        accept_loss: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.read_only = read_only
        self.accept_loss = accept_loss
        #: What recovery found missing and, with *accept_loss*, gave up (``flowcore check``).
        self.losses: list[str] = []
        self.journals = self.directory / "journals"
        self.segment_dir = self.directory / "segments"
        #: Where a binning stage's shuffle map tasks leave their records for the reduce tasks
        #: of the same stage run (a directory per stage run, removed when its jobs end).
        self.shuffle_dir = self.directory / "shuffle"
        self.sync = sync
        self.checkpoint_every = checkpoint_every
        self.max_journal_bytes = max_journal_bytes
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._queues: dict[str, dict[str, SegmentSummary]] = {}
        self._where: dict[str, str] = {}  # segment id -> queue id
        self._state: dict[str, dict[str, str]] = {}
        self._pending_provenance: list[str] = []
        self._deferred_deletes: list[str] = []  # dequeued segments, deleted at the next checkpoint
        self._next_id = 1
        self._last_txn = 0
        self._since_checkpoint = 0
        self._journal: Any = None
        self._journal_bytes = 0
        self._failed: str | None = None  # why commits are refused (a failed journal write)
        if not read_only:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.journals.mkdir(exist_ok=True)
            self.segment_dir.mkdir(exist_ok=True)
        self._recover()

    # --- recovery ---------------------------------------------------------------------------

    def _snapshot_path(self) -> Path:
        """Which snapshot file to read (NiFi's rules); nothing on disk changes yet."""
        checkpoint = self.directory / "checkpoint"
        partial = self.directory / "checkpoint.partial"
        if checkpoint.exists() and partial.exists():
            # Crashed while writing the partial: the old snapshot and the journals are the truth.
            self.warnings.append(f"{partial} left by an interrupted checkpoint; discarding it")
            return checkpoint
        if partial.exists():
            # Crashed between removing the old snapshot and renaming the new one into place.
            self.warnings.append(f"{partial} was complete but not renamed; using it")
            return partial
        return checkpoint

    def _damaged(self, msg: str) -> None:
        """Refuse to start over missing state, or (``check --fix``) record the loss and go on."""
        if not self.accept_loss:
            refusal = (
                f"{msg}. Restore it from a backup, or run `flowcore check --fix` on this "
                "repository to accept the loss (what the missing state named is dropped and "
                "reported) and start from what is left"
            )
            raise WalCorruptionError(refusal)
        self.losses.append(msg)
        LOG.warning("%s; accepted (check --fix)", msg)

    def _recover(self) -> None:
        checkpoint = self._snapshot_path()
        journals = sorted(self.journals.glob("*" + _JOURNAL_SUFFIX), key=_journal_number)
        segments = sum(1 for _ in self.segment_dir.glob("*" + segment_files.SEGMENT_SUFFIX))
        max_txn = 0
        if checkpoint.exists() and checkpoint.stat().st_size > 0:
            max_txn, payload = decode_checkpoint(checkpoint)
            self._load_snapshot(unpack(payload))
        elif journals and _journal_number(journals[0]) == 1:
            # Every transaction since the repository was created is still in the journals.
            what = "is empty" if checkpoint.exists() else "is missing"
            self.warnings.append(f"{checkpoint} {what}; recovering from the journals alone")
        elif journals or segments:
            # A new repository has none of these; every start ends with a checkpoint, so
            # journals or segments without one mean state files were deleted or emptied.
            what = "is empty" if checkpoint.exists() else "is missing"
            self._damaged(
                f"{checkpoint} {what}, but the repository holds {len(journals)} journal(s) "
                f"and {segments} queue segment(s): the queues it recorded would be lost"
            )
        self._last_txn = max_txn
        expected = self.journals / f"{max_txn + 1}{_JOURNAL_SUFFIX}"
        if max_txn and not any(_journal_number(j) >= max_txn + 1 for j in journals):
            self._damaged(
                f"{expected} is missing: the transactions committed after the checkpoint "
                f"(transaction {max_txn}) would be lost"
            )
        torn: str | None = None
        for journal in journals:
            result = read_journal(journal)
            for frame in result.frames:
                if frame.txn_id <= self._last_txn:
                    continue
                if torn is not None or frame.txn_id != self._last_txn + 1:
                    gap = torn or f"transactions {self._last_txn + 1}..{frame.txn_id - 1}"
                    self._damaged(
                        f"{journal} holds transaction {frame.txn_id}, but {gap} before it "
                        "cannot be read (a journal deleted or torn in the middle)"
                    )
                    break
                transaction, next_id, indexed = self._decode(frame.payload, journal, frame.txn_id)
                self._apply(
                    transaction, next_id, indexed, where=f"{journal} transaction {frame.txn_id}"
                )
                self._last_txn = frame.txn_id
            else:
                if result.warning:
                    self.warnings.append(result.warning)
                    LOG.warning("%s", result.warning)
                    torn = result.warning  # only the last journal may end torn
                continue
            break  # accepted loss: later journals cannot be applied either
        if self.read_only:
            return  # `flowcore check`: look, change nothing
        # Recovery succeeded: only now may anything on disk change.
        self._sweep_orphan_segments()
        self.checkpoint()

    def _load_snapshot(self, data: Mapping[str, Any]) -> None:
        for queue_id, wires in data["queues"].items():
            queue = self._queues.setdefault(queue_id, {})
            for wire in wires:
                summary = segment_files.summary_from_wire(wire)
                queue[summary.segment_id] = summary
                self._where[summary.segment_id] = queue_id
        self._state = {k: dict(v) for k, v in data["state"].items()}
        self._pending_provenance = list(data["provenance"])
        self._next_id = data["next_id"]

    @staticmethod
    def _decode(payload: bytes, journal: Path, txn_id: int) -> tuple[Transaction, int, list[str]]:
        try:
            data = unpack(payload)
            transaction = Transaction(
                dequeued=data["d"],
                enqueued=[segment_files.summary_from_wire(w) for w in data["e"]],
                state={k: (None if v is None else dict(v)) for k, v in data["s"].items()},
                provenance_files=data["p"],
                sink_commits=data["k"],
            )
            return transaction, data["n"], list(data.get("i", ()))
        except (KeyError, TypeError, ValueError) as ex:
            msg = f"{journal} transaction {txn_id} has a valid checksum but cannot be decoded: {ex}"
            raise WalCorruptionError(msg) from None

    def _sweep_orphan_segments(self) -> None:
        # A shuffle's records live only as long as its stage run: any left were a crashed run's.
        shutil.rmtree(self.shuffle_dir, ignore_errors=True)
        for path in self.segment_dir.iterdir():
            name = path.name
            if name.endswith(".part") or (
                name.endswith(segment_files.SEGMENT_SUFFIX)
                and name[: -len(segment_files.SEGMENT_SUFFIX)] not in self._where
            ):
                path.unlink(missing_ok=True)

    # --- transactions -----------------------------------------------------------------------

    def _validate(self, transaction: Transaction, where: str) -> None:
        missing = [s for s in transaction.dequeued if s not in self._where]
        if missing:
            msg = f"{where} dequeues segments that are not queued: {missing!r}"
            raise RepositoryError(msg)
        duplicate = [s.segment_id for s in transaction.enqueued if s.segment_id in self._where]
        if duplicate:
            msg = f"{where} enqueues segments that are already queued: {duplicate!r}"
            raise RepositoryError(msg)

    def _apply(
        self, transaction: Transaction, next_id: int, indexed: Sequence[str], where: str
    ) -> None:
        try:
            self._validate(transaction, where)
        except RepositoryError as ex:
            if "transaction" in where:
                msg = f"{ex}; the journal does not match the snapshot"
                raise WalCorruptionError(msg) from None
            raise
        for segment_id in transaction.dequeued:
            queue_id = self._where.pop(segment_id)
            del self._queues[queue_id][segment_id]
            if not self._queues[queue_id]:
                del self._queues[queue_id]
        for summary in transaction.enqueued:
            self._queues.setdefault(summary.queue_id, {})[summary.segment_id] = summary
            self._where[summary.segment_id] = summary.queue_id
        for component, state in transaction.state.items():
            if state is None:
                self._state.pop(component, None)
            else:
                self._state[component] = dict(state)
        self._pending_provenance.extend(transaction.provenance_files)
        if indexed:
            done = set(indexed)
            self._pending_provenance = [p for p in self._pending_provenance if p not in done]
        self._next_id = max(self._next_id, next_id)

    def commit(self, transaction: Transaction, *, indexed_provenance: Sequence[str] = ()) -> int:
        """Apply *transaction* atomically and durably; return its id.

        The dequeued segments' files are deleted at the next checkpoint.

        Raises:
            RepositoryError: the transaction dequeues segments that are not queued, or enqueues
                segments already queued or never written; nothing is changed.
        """
        with self._lock:
            self._validate(transaction, "transaction")
            for summary in transaction.enqueued:
                if not self._segment_path(summary.segment_id).exists():
                    msg = f"transaction enqueues segment {summary.segment_id!r}, never written"
                    raise RepositoryError(msg)
            txn_id = self._last_txn + 1
            payload = pack(
                {
                    "d": list(transaction.dequeued),
                    "e": [segment_files.summary_to_wire(s) for s in transaction.enqueued],
                    "s": {
                        k: (None if v is None else dict(v)) for k, v in transaction.state.items()
                    },
                    "p": list(transaction.provenance_files),
                    "k": list(transaction.sink_commits),
                    "n": self._next_id,
                    "i": list(indexed_provenance),
                }
            )
            frame = encode_transaction(txn_id, payload)
            self._append(frame)
            self._journal_bytes += len(frame)
            self._apply(transaction, self._next_id, indexed_provenance, where="transaction")
            self._last_txn = txn_id
            self._since_checkpoint += 1
            self._deferred_deletes.extend(transaction.dequeued)
            if (
                self._since_checkpoint >= self.checkpoint_every
                or self._journal_bytes >= self.max_journal_bytes
            ):
                self.checkpoint()
            return txn_id

    def _append(self, frame: bytes) -> None:
        """Append one frame durably, or leave the journal exactly as it was and refuse more.

        A write cut short (a full disk) would otherwise leave a torn frame in the middle of the
        journal once later frames follow it, and recovery refuses a journal torn anywhere but
        at its end. The journal is truncated back, and this repository takes no more commits:
        the run stops, and the next one recovers from what is on disk.
        """
        if self._journal is None or self._failed is not None:
            msg = (
                f"the FlowFile repository {self.directory} stopped taking commits after "
                f"{self._failed or 'it was closed'}; start a new run to recover"
            )
            raise RepositoryError(msg)
        fd = self._journal.fileno()
        start = self._journal_bytes
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(fd, view) :]
            if self.sync:
                os.fsync(fd)
        except OSError as error:
            self._failed = f"a failed journal write ({error.strerror or error})"
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise

    @property
    def accepting(self) -> bool:
        """Whether commits are taken (not after a failed journal write, nor when read-only)."""
        return self._failed is None and not self.read_only

    def mark_provenance_indexed(self, files: Sequence[str]) -> None:
        """Record durably that provenance event files were indexed (they are no longer pending)."""
        if files:
            self.commit(Transaction(), indexed_provenance=files)

    # --- checkpoints ------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Write a snapshot (``.partial``, fsync, rename) and start a new journal."""
        with self._lock:
            self._close_journal()
            snapshot = {
                "queues": {
                    q: [segment_files.summary_to_wire(s) for s in segs.values()]
                    for q, segs in self._queues.items()
                },
                "state": self._state,
                "provenance": self._pending_provenance,
                "next_id": self._next_id,
            }
            old = list(self.journals.glob("*" + _JOURNAL_SUFFIX))
            journal = self.journals / f"{self._last_txn + 1}{_JOURNAL_SUFFIX}"
            # The new journal exists before the snapshot that names it (recovery refuses a
            # snapshot whose journal is missing), and the old journals go only after the
            # snapshot: a crash anywhere between leaves a state recovery reads whole.
            # Unbuffered, so a failed append can be cut back exactly (see _append).
            self._journal = open(journal, "wb", buffering=0)  # noqa: SIM115 - closed by close()
            self._journal.write(JOURNAL_HEADER)
            os.fsync(self._journal.fileno())
            fsync_directory(self.journals)
            write_atomically(
                self.directory / "checkpoint",
                encode_checkpoint(self._last_txn, pack(snapshot)),
                partial=self.directory / "checkpoint.partial",
                sync_directory=True,
            )
            for stale in old:
                if stale != journal:
                    stale.unlink()
            # The snapshot on disk no longer names these: their files can go.
            for segment_id in self._deferred_deletes:
                if segment_id not in self._where:
                    self._segment_path(segment_id).unlink(missing_ok=True)
            self._deferred_deletes.clear()
            self._journal_bytes = len(JOURNAL_HEADER)
            self._since_checkpoint = 0
            self._failed = None

    def close(self) -> None:
        """Close the journal cleanly (the completion marker is written)."""
        with self._lock:
            self._close_journal()

    def _close_journal(self) -> None:
        journal, self._journal = self._journal, None
        if journal is None:
            return
        try:
            if self._failed is None:
                journal.write(bytes([JOURNAL_COMPLETE]))
                os.fsync(journal.fileno())
        finally:
            journal.close()

    def __enter__(self) -> WriteAheadFlowFileRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- segments and queries ---------------------------------------------------------------

    def _segment_path(self, segment_id: str) -> Path:
        return segment_files.segment_path(self.segment_dir, segment_id)

    def next_flowfile_ids(self, count: int) -> range:
        """Reserve *count* FlowFile ids; the high-water mark is recorded with the next commit."""
        with self._lock:
            start = self._next_id
            self._next_id += count
            return range(start, start + count)

    def write_segment(
        self, queue_id: str, flowfiles: Sequence[FlowFile], *, owner: str = ""
    ) -> SegmentSummary:
        """Write an uncommitted segment file (safe on an executor sharing the directory)."""
        return segment_files.write_segment(
            self.segment_dir, queue_id, flowfiles, owner=owner, sync=self.sync
        )

    def read_segment(self, segment_id: str) -> list[FlowFile]:
        """A segment's FlowFiles, in order."""
        return segment_files.read_segment(self._segment_path(segment_id))

    def segments(self, queue_id: str) -> tuple[SegmentSummary, ...]:
        """The committed segments of a queue, oldest first."""
        return tuple(self._queues.get(queue_id, {}).values())

    def queue_ids(self) -> tuple[str, ...]:
        """Queues holding segments."""
        return tuple(self._queues)

    def queue_size(self, queue_id: str) -> tuple[int, int]:
        """FlowFiles and bytes queued, from the summaries alone."""
        segs = self._queues.get(queue_id, {}).values()
        return sum(s.count for s in segs), sum(s.bytes for s in segs)

    def state(self, component_id: str) -> Mapping[str, str]:
        """A component's committed state."""
        return dict(self._state.get(component_id, {}))

    @property
    def pending_provenance(self) -> tuple[str, ...]:
        """Provenance event files committed but not yet marked indexed."""
        return tuple(self._pending_provenance)

    def referenced_claims(self) -> dict[ResourceClaim, int]:
        """How many queued FlowFiles reference each resource claim (claimant counts at start-up).

        Computed from the segment summaries alone, so it costs no segment reads however many
        FlowFiles are queued.
        """
        counts: Counter[ResourceClaim] = Counter()
        for queue in self._queues.values():
            for summary in queue.values():
                for claim, count in summary.claim_counts:
                    counts[claim] += count
        return dict(counts)

    def check(self, *, fix: bool = False) -> list[Finding]:
        """List every inconsistency of the queues and segment files.

        Queued segments that are missing, damaged or unlike their summary are reported; orphan
        segment files (no queue references them) are reported and, with *fix*, removed.
        """
        findings = []
        damaged: list[str] = []
        for queue_id, queue in self._queues.items():
            for segment_id, summary in queue.items():
                path = self._segment_path(segment_id)
                try:
                    stored = segment_files.read_summary(path)
                    segment_files.read_segment_whole(path)  # every record's checksum too
                except (RepositoryError, WalCorruptionError) as ex:
                    problem = str(ex)
                    if fix:
                        problem += (
                            f"; quarantined in {QUARANTINE}/: its {summary.count} FlowFile(s) "
                            f"({summary.bytes} bytes) of queue {queue_id!r} are lost"
                        )
                        damaged.append(segment_id)
                    findings.append(
                        Finding("flowfile", f"{queue_id}/{segment_id}", problem, fixed=fix)
                    )
                    continue
                if (stored.count, stored.bytes) != (summary.count, summary.bytes):
                    findings.append(
                        Finding(
                            "flowfile",
                            f"{queue_id}/{segment_id}",
                            "segment file does not match its summary",
                        )
                    )
        awaiting_checkpoint = set(self._deferred_deletes)
        for path in self.segment_dir.iterdir():
            name = path.name
            segment_id = name[: -len(segment_files.SEGMENT_SUFFIX)]
            orphan = name.endswith(".part") or (
                name.endswith(segment_files.SEGMENT_SUFFIX)
                and segment_id not in self._where
                and segment_id not in awaiting_checkpoint
            )
            if orphan and segment_id not in damaged:
                if fix:
                    path.unlink(missing_ok=True)
                findings.append(
                    Finding(
                        "flowfile",
                        str(path),
                        "orphan segment file (no queue references it)",
                        fixed=fix,
                    )
                )
        if damaged:
            self._quarantine(damaged)
        return findings

    def _quarantine(self, segment_ids: Sequence[str]) -> None:
        """Move damaged segments aside and drop them from their queues (``check --fix``).

        The rest of the flow can run again; the files stay in ``quarantine/`` for a person to
        salvage what they can.
        """
        aside = self.directory / QUARANTINE
        aside.mkdir(exist_ok=True)
        for segment_id in segment_ids:
            path = self._segment_path(segment_id)
            if path.exists():
                os.replace(path, aside / path.name)
        fsync_directory(aside)
        self.commit(Transaction(dequeued=list(segment_ids)))


def _journal_number(path: Path) -> int:
    try:
        return int(path.name[: -len(_JOURNAL_SUFFIX)])
    except ValueError:
        msg = f"{path} is not named <first transaction id>.journal; move it out of {path.parent}"
        raise WalCorruptionError(msg) from None


def iter_queue(repository: WriteAheadFlowFileRepository, queue_id: str) -> Iterable[FlowFile]:
    """Every FlowFile queued in *queue_id*, segment by segment (a helper for tools and tests)."""
    for summary in repository.segments(queue_id):
        yield from repository.read_segment(summary.segment_id)
