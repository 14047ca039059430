"""The session's external effects: files, moves and lines that happen only after a durable commit.

A sink that writes outside the repositories must not make its effect visible while the session
could still roll back, nor from a task attempt that may never commit (its replay would repeat the
effect). So a sink *stages* effects through the session; the session hands them to its host with
the commit, and the host carries them out once the commit is durable: the test harness at once,
the engine after the stage run's write-ahead log transaction (see
:mod:`repositories.effects`).
"""

from __future__ import annotations

import errno
import json
import logging
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flowcore.errors import ProcessException
from flowcore.session.external_files import fingerprint
from flowcore.session.host import AfterCommitAction, Disposal, LogLine, MoveConflict, Publication

if TYPE_CHECKING:
    from flowcore.session.host import SessionHost

__all__ = ["StagedEffects", "emit"]


class StagedEffects:
    """A session's staged files and deferred log lines, carried out by its host after commit."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._publications: list[Publication] = []  # files staged to appear after the commit
        self._targets: Counter[str] = Counter()  # their targets: a task may stage thousands
        self._logs: list[LogLine] = []  # log lines to emit after the commit
        self._disposals: list[Disposal] = []  # source files to delete or move after the commit
        self._actions: list[AfterCommitAction] = []  # the processor's remote work after it

    def stage_file(self, target: str | os.PathLike[str], *, replace: bool = True) -> Path:
        """A hidden temporary to write; it becomes *target* only once the commit is durable.

        The temporary sits in *target*'s directory (which must exist), so the final rename is
        atomic; its name is short, so a target name of the file system's maximum length still
        works. A rollback deletes it. Readers of the directory never see a partial file, and
        a FlowFile whose session is replayed after a crash writes its file once.

        Args:
            target: the final path.
            replace: whether the rename may overwrite a file that appears at *target* after
                this check (Conflict Resolution Strategy ``replace``). If not, *target* is
                also reserved among the tasks running beside this one, so two of them cannot
                both stage it and have the second FlowFile reported as written while its file
                is dropped.

        Returns:
            The temporary's path; write it, then leave it to the engine.

        Raises:
            FileExistsError: *replace* is false and another task of this stage run staged
                *target*: the sink applies its conflict rule as if the file existed.
        """
        final = Path(target)
        if not replace and not self._host.reserve(os.fsdecode(final)):
            msg = "another task of this stage run is writing it"
            raise FileExistsError(errno.EEXIST, msg, os.fsdecode(final))
        temporary = self._host.stage_file(final.parent)
        self._publications.append(Publication(os.fsdecode(temporary), os.fsdecode(final), replace))
        self._targets[os.fsdecode(final)] += 1
        return temporary

    def cancel_staged(self, temporary: str | os.PathLike[str]) -> None:
        """Give up a staged file (writing it failed): it is deleted and never published."""
        name = os.fsdecode(temporary)
        kept = [p for p in self._publications if p.temporary != name]
        self._targets.subtract(p.target for p in self._publications if p.temporary == name)
        self._targets = +self._targets  # drop the targets no longer staged
        self._publications = kept
        Path(name).unlink(missing_ok=True)

    def is_staged(self, target: str | os.PathLike[str]) -> bool:
        """Whether *target* is already staged by this session or an earlier one of this task.

        A sink checks this beside the file system so that two FlowFiles of one task with the
        same name meet its conflict rule as they would if the first were already written.
        """
        name = os.fsdecode(target)
        return name in self._targets or self._host.staged(name)

    def will_log(self, logger: str, level: int) -> bool:
        """Whether a line at *level* on *logger* would be emitted after the commit.

        Deferred lines are emitted where the commit happens (the driver, on Spark), under
        its logging configuration: a sink asks before rendering an expensive message.
        """
        return level >= self._host.lowest_logged_level(logger)

    def log_after_commit(self, logger: str, level: int, message: str) -> None:
        """Log *message* once the commit is durable: a rolled-back or replayed session logs once.

        The record is emitted only if the logger is enabled for *level* when it is carried out.
        """
        self._logs.append(LogLine(logger, level, message))

    def delete_after_commit(self, source: str | os.PathLike[str]) -> None:
        """Delete *source* once the commit is durable, never before (a rollback keeps it).

        Only the version of the file there now: one rewritten before the commit, or a new
        file of that name found when a crashed run's disposals are finished, is left.
        """
        path, version = _version(source)
        self._disposals.append(Disposal(path, fingerprint=version))

    def move_after_commit(
        self,
        source: str | os.PathLike[str],
        target: str | os.PathLike[str],
        conflict: MoveConflict = MoveConflict.RENAME,
        alternative: str | None = None,
    ) -> None:
        """Move *source* to *target* once the commit is durable (FetchFile's Move File).

        Args:
            source: the file to move.
            target: its new path; its directory is created if need be.
            conflict: what to do if *target* exists when the move is carried out.
            alternative: the file name to use instead on a ``RENAME`` conflict.
        """
        path, version = _version(source)
        self._disposals.append(
            Disposal(path, os.path.abspath(os.fsdecode(target)), conflict, alternative, version)
        )

    def after_commit(self, action: Mapping[str, Any]) -> None:
        """Have the processor carry out *action* once the commit is durable, never before.

        The driver hands the actions of a committed task to the processor's
        ``run_after_commit_actions`` (after the commit, and again at start-up after a crash
        in between: the processor makes them idempotent); a rollback forgets them. See
        :class:`~flowcore.session.host.AfterCommitAction`.

        Args:
            action: JSON values (it is written to the task's effect file): what to do, and
                where, without secrets.

        Raises:
            ProcessException: *action* is not JSON.
        """
        try:
            payload = json.loads(json.dumps(dict(action)))
        except (TypeError, ValueError) as error:
            msg = f"an after-commit action must be JSON values: {error}"
            raise ProcessException(msg, processor=self._host.component.type) from error
        self._actions.append(AfterCommitAction(self._host.component.id, payload))

    def take_actions(self) -> tuple[AfterCommitAction, ...]:
        """A commit: the recorded after-commit actions, handed to the host."""
        taken, self._actions = tuple(self._actions), []
        return taken

    @property
    def holds_effects(self) -> bool:
        """Whether a file, a move, a line or an after-commit action is staged."""
        return bool(self._publications or self._logs or self._disposals or self._actions)

    def discard(self) -> None:
        """A rollback: staged temporaries are deleted, deferred lines and moves forgotten."""
        for publication in self._publications:
            Path(publication.temporary).unlink(missing_ok=True)
        self._publications = []
        self._targets.clear()
        self._logs = []
        self._disposals = []
        self._actions = []

    def take(self) -> tuple[tuple[Publication, ...], tuple[LogLine, ...], tuple[Disposal, ...]]:
        """A commit: the staged effects, handed to the host, and a clean slate."""
        taken = tuple(self._publications), tuple(self._logs), tuple(self._disposals)
        self._publications = []
        self._targets.clear()
        self._logs = []
        self._disposals = []
        return taken


def emit(lines: tuple[LogLine, ...]) -> None:
    """Emit deferred log lines now (hosts whose commit is durable at once)."""
    for line in lines:
        logging.getLogger(line.logger).log(line.level, "%s", line.message)


def _version(source: str | os.PathLike[str]) -> tuple[str, str | None]:
    """*source* as an absolute path, and the fingerprint of its version now (None: unreadable).

    Absolute, since a start-up may finish the disposal from another working directory.
    """
    path = os.path.abspath(os.fsdecode(source))
    try:
        return path, fingerprint(path)
    except OSError:
        return path, None
