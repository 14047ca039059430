"""Processors' after-commit actions, run in the background, each commit waiting a time budget.

``session.after_commit(action)`` records remote work that may happen only once the session's
FlowFiles are durable: COMMIT PREPARED (PutDatabaseRecord), an SFTP delete or move (FetchSFTP,
GetSFTP). The driver used to carry them out one after the other inside the commit, so one slow
server held up every stage. Here each processor has one worker thread (its actions
stay in the order recorded, and a processor never sees two of its batches at once); a commit
hands a task's actions over and waits for them at most ``after_commit_budget``:

- what is done by then is done: nothing is written (the usual, fast case);
- what is not is first recorded in a *pending file* (``effects/*.actions``, written
  atomically and fsynced) before the commit deletes the effect file that named it, so the
  action is never lost; its worker goes on, and deletes the pending file when done;
- an action whose processor raises :class:`~flowcore.errors.AfterCommitRetry` (the server is
  unreachable; for an action that must complete, any error) stays pending and its worker
  tries it again after a backoff (1 s doubling to a minute; no commit needed, so an idle
  continuous flow finishes it too), and at the next start;
- at start-up every pending file left is handed over again (actions are idempotent).

So each action is carried out at least once after its commit, never before, and a repeat
(a crash between the action and the deletion of its pending file) finds it done.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import AfterCommitRetry
from flowcore.session.host import AfterCommitAction
from repositories._files import fsync_directory

__all__ = ["PENDING_SUFFIX", "AfterCommitRunner", "pending_actions"]

LOG = logging.getLogger("flowcore.driver.after_commit")
PENDING_SUFFIX = ".actions"
RETRY_BASE_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


@attrs.define(eq=False)
class _Job:
    """One task's after-commit actions of one processor."""

    component_id: str
    payloads: list[Mapping[str, Any]]
    file: Path | None = None  # its pending file, once written
    finished: bool = False  # done, or given up (reported)
    tries: int = 0
    retry_at: float = 0.0  # time.monotonic() after which a retry may start
    done: threading.Event = attrs.field(factory=threading.Event)  # this try ended


_DUE: Any = object()  # a worker's wake-up: a retry's time has come


def pending_actions(directory: str | os.PathLike[str]) -> list[Path]:
    """The pending files under *directory*, oldest first."""
    root = Path(directory)
    if not root.is_dir():
        return []
    return sorted(root.glob(f"*{PENDING_SUFFIX}"))


class AfterCommitRunner:
    """Runs after-commit actions on per-processor workers, committing waits at most a budget.

    Args:
        directory: where pending files go (the repository's effect directory).
        run: carries out one processor's actions: ``run(component_id, payloads)``; it raises
            :class:`AfterCommitRetry` to be tried again later, anything else to give up.
        report: called with ``(component_id, error, number of actions)`` for actions given up.
        budget_seconds: how long :meth:`hand_over` waits.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        run: Callable[[str, Sequence[Mapping[str, Any]]], None],
        report: Callable[[str, BaseException, int], None],
        *,
        budget_seconds: float,
    ) -> None:
        self.directory = Path(directory)
        self._run = run
        self._report = report
        self.budget_seconds = budget_seconds
        self._lock = threading.Lock()
        self._tried = threading.Condition(self._lock)  # notified when a try ends
        self._workers: dict[str, queue.SimpleQueue[_Job | None]] = {}
        self._open: list[_Job] = []  # handed over, not finished
        self._sequence = 0

    # --- handing over ---------------------------------------------------------------------

    def hand_over(
        self,
        actions: Sequence[AfterCommitAction],
        origin: str = "task",
        *,
        deadline: float | None = None,
    ) -> None:
        """Start *actions* (one task's, in order); wait for them; record what is not done.

        Called after the write-ahead log transaction that made their FlowFiles durable, and
        before the effect file naming them is deleted. The wait ends at *deadline*
        (``time.monotonic()``; the commit's, shared by its tasks), else after the budget.
        """
        grouped: dict[str, list[Mapping[str, Any]]] = {}
        for action in actions:
            grouped.setdefault(action.component_id, []).append(dict(action.payload))
        jobs = [_Job(component_id, payloads) for component_id, payloads in grouped.items()]
        self._start(jobs)
        if deadline is None:
            deadline = time.monotonic() + self.budget_seconds
        self._wait(jobs, deadline - time.monotonic())
        for job in jobs:
            self._keep(job, origin)

    def resume(self) -> dict[str, list[Mapping[str, Any]]]:
        """At start-up: hand over what pending files hold; every open action by processor.

        The result is what the processors' ``settle_after_commit`` hooks are told is still to
        be carried out (their FlowFiles are committed).
        """
        if self.directory.is_dir():  # torn writes: their effect file was still there
            for partial in self.directory.glob(f"*{PENDING_SUFFIX}.partial"):
                partial.unlink(missing_ok=True)
        jobs = []
        for path in pending_actions(self.directory):
            job = _read(path)
            if job is not None:
                jobs.append(job)
        self._start(jobs)
        self._wait(jobs, self.budget_seconds)
        return self.outstanding()

    def outstanding(self) -> dict[str, list[Mapping[str, Any]]]:
        """The actions handed over and not finished, by component id."""
        with self._lock:
            found: dict[str, list[Mapping[str, Any]]] = {}
            for job in self._open:
                found.setdefault(job.component_id, []).extend(job.payloads)
            return found

    def pending_count(self) -> int:
        """How many action batches are handed over and not finished (running or waiting)."""
        with self._lock:
            return len(self._open)

    def kept_on_disk(self) -> tuple[dict[str, list[Mapping[str, Any]]], bool]:
        """The actions the pending files hold, by component; whether every file could be read.

        A sweep that undoes what no committed action names must also spare these: they are
        committed even where this run's runner does not hold them open.
        """
        found: dict[str, list[Mapping[str, Any]]] = {}
        readable = True
        for path in pending_actions(self.directory):
            if not path.exists():  # finished meanwhile
                continue
            job = _read(path)
            if job is None:
                readable = readable and not path.exists()  # gone: finished meanwhile
                continue
            found.setdefault(job.component_id, []).extend(job.payloads)
        return found, readable

    def wait_for(self, component_id: str, timeout: float | None = None) -> bool:
        """Wait until *component_id* has no action running; whether none is.

        A source whose actions change what it lists (GetSFTP deleting what it pulled) must
        not list again before they are done, or it would pull a file twice.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                running = [  # a job waiting out its backoff is not running
                    j for j in self._open if j.component_id == component_id and not j.done.is_set()
                ]
            if not running:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            running[0].done.wait(left)

    def close(self, timeout: float) -> int:
        """The run stops: actions go on (retries too) up to *timeout*; how many stay pending.

        Those are in pending files, carried out at the next start; the workers are daemon
        threads, so a server that never answers cannot keep the process from ending.
        """
        deadline = time.monotonic() + max(timeout, 0)
        with self._lock:  # what waits out a long backoff is tried once more now
            for job in self._open:
                job.retry_at = min(job.retry_at, time.monotonic())
            workers = list(self._workers.values())
        for worker in workers:
            worker.put(_DUE)
        with self._lock:
            # Woken when a try ends, not polled: a job waiting out its backoff has its done
            # event set, and waiting on that would spin a core for the whole timeout.
            while self._open and (remaining := deadline - time.monotonic()) > 0:
                self._tried.wait(remaining)
            left = [j for j in self._open if not j.finished]
            workers, self._workers = self._workers, {}
        for job in left:
            self._keep(job, "stop")
        for worker in workers.values():
            worker.put(None)
        return len(left)

    # --- the workers ----------------------------------------------------------------------

    def _start(self, jobs: Sequence[_Job]) -> None:
        for job in jobs:
            with self._lock:
                job.done.clear()
                if job not in self._open:
                    self._open.append(job)
                worker = self._workers.get(job.component_id)
                if worker is None:
                    worker = queue.SimpleQueue()
                    self._workers[job.component_id] = worker
                    thread = threading.Thread(
                        target=self._work,
                        args=(worker,),
                        name=f"after-commit-{job.component_id}",
                        daemon=True,
                    )
                    thread.start()
            worker.put(job)

    def _work(self, jobs: queue.SimpleQueue[_Job | None]) -> None:
        """One processor's worker: its jobs in order, and its retries when their time comes.

        A retry needs no commit: an idle continuous flow would otherwise leave a COMMIT
        PREPARED (rows invisible, locks held) waiting until data arrives again.
        """
        waiting: list[_Job] = []
        while True:
            timeout = None
            if waiting:
                timeout = max(min(j.retry_at for j in waiting) - time.monotonic(), 0.0)
            try:
                job = jobs.get(timeout=timeout)
            except queue.Empty:
                job = _DUE
            if job is None:
                return
            if job is not _DUE:
                self._execute(job)
                if not job.finished:
                    waiting.append(job)
            now = time.monotonic()
            for due in [j for j in waiting if j.retry_at <= now]:
                waiting.remove(due)
                if due.finished:
                    continue
                due.done.clear()
                self._execute(due)
                if not due.finished:
                    waiting.append(due)

    def _execute(self, job: _Job) -> None:
        retry = False
        try:
            self._run(job.component_id, job.payloads)
        except AfterCommitRetry as error:
            retry = True
            job.tries += 1
            delay = min(RETRY_BASE_SECONDS * 2 ** (job.tries - 1), RETRY_MAX_SECONDS)
            job.retry_at = time.monotonic() + delay
            LOG.warning(
                "%d after-commit action(s) of %s wait to be tried again in %.0f s: %s",
                len(job.payloads), job.component_id, delay, error,
            )  # fmt: skip
        except Exception as error:  # the FlowFiles are committed: report, go on
            with contextlib.suppress(Exception):
                self._report(job.component_id, error, len(job.payloads))
        with self._lock:
            if not retry:
                job.finished = True
                self._open.remove(job)
                if job.file is not None:
                    job.file.unlink(missing_ok=True)
            job.done.set()
            self._tried.notify_all()

    @staticmethod
    def _wait(jobs: Sequence[_Job], timeout: float) -> None:
        deadline = time.monotonic() + max(timeout, 0)
        for job in jobs:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            job.done.wait(left)

    def _keep(self, job: _Job, origin: str) -> None:
        """Record an unfinished job in a pending file (once), before its effect file goes."""
        with self._lock:
            if job.finished or job.file is not None:
                return
            self._sequence += 1
            digest = hashlib.blake2b(job.component_id.encode(), digest_size=6).hexdigest()
            stamp = f"{time.time_ns():020d}-{self._sequence:06d}"
            path = self.directory / f"{stamp}-{Path(origin).stem[:40]}-{digest}{PENDING_SUFFIX}"
            _write(path, job)
            job.file = path


def _write(path: Path, job: _Job) -> None:
    """Write a pending file atomically and durably."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    record = {"component": job.component_id, "actions": [dict(p) for p in job.payloads]}
    with open(partial, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(json.dumps(record, ensure_ascii=True))
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)
    fsync_directory(path.parent)


def _read(path: Path) -> _Job | None:
    """A pending file's job; None (with a warning) for one that cannot be read."""
    try:
        record = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        return _Job(str(record["component"]), list(record["actions"]), file=path)
    except (OSError, ValueError, KeyError, TypeError) as error:
        LOG.warning("cannot read the pending after-commit actions %s: %s", path, error)
        return None
