"""The driver side of two-phase sinks: staging, publishing and recovering their output.

Per stage run with a two-phase sink (PutDataset), after the tasks wrote their part:

1. :meth:`Sinks.prepare` hands each sink its tasks' messages (in task order) and its committed
   state; the sink stages its publication and returns its new state;
2. the controller commits that state inside the stage run's write-ahead log transaction;
3. :meth:`Sinks.publish` lets each sink make the staged output visible.

At start-up :meth:`Sinks.recover` calls ``publish`` with each sink's committed state: what a
crash left staged but committed is published, what was staged but never committed is thrown
away. So a crash at any point neither loses nor duplicates output.

Per-FlowFile sinks (PutFile, LogAttribute) stage their external effects through the session instead
(:meth:`~flowcore.session.process_session.ProcessSession.stage_file`,
:meth:`~flowcore.session.process_session.ProcessSession.log_after_commit`): each task attempt writes
an effect file (:mod:`repositories.effects`), the transaction names the stage run's effect files
under the state entry :data:`EFFECTS_STATE`, and :meth:`Sinks.carry_out` renames and logs after it.
At start-up the effect files the log names are carried out again (idempotent) and the others, of
attempts that never committed, are swept with their temporaries.

Any processor's after-commit actions (``session.after_commit``: FetchSFTP's remote delete or move,
PutDatabaseRecord's COMMIT PREPARED) travel in the same effect files; :meth:`Sinks.carry_out`
hands each task's to :class:`~flowcore.driver.after_commit.AfterCommitRunner`, which runs them on
the processor's worker within the commit's time budget (what is not done by then is recorded in
a pending file and finishes later, or at the next start). At start-up, once every committed
action is handed over, each processor may undo what uncommitted attempts left outside flowcore
(``settle_after_commit_actions``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from traceback import format_exception
from typing import Any

import attrs

from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan, StagePlan
from flowcore.driver.after_commit import AfterCommitRunner
from flowcore.engine._bulletins import log_once_per_reason, redacting, secrets_for
from flowcore.engine.wire import TaskResult
from flowcore.errors import AfterCommitRetry, ConfigurationError
from flowcore.parameters import redact
from flowcore.processor.base import Processor, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SinkJobs, TwoPhaseSink
from flowcore.runners.jobs import Runner
from flowcore.session.host import AfterCommitAction
from repositories.effects import EffectReport, carry_out, release_targets, retries, sweep
from repositories.records import Bulletin, Finding, Transaction
from repositories.repository_set import RepositorySet

__all__ = ["EFFECTS_STATE", "Sinks", "effects_state"]

LOG = logging.getLogger("flowcore.driver.sinks")

#: After a failed settle (a sweep) following a commit, the next is tried no sooner than this.
SETTLE_BACKOFF_SECONDS = 60.0

#: The write-ahead log state entry naming the effect files of the last commit that had any.
EFFECTS_STATE = "$effects"


def effects_state(results: Sequence[TaskResult]) -> dict[str, str] | None:
    """The state entry that makes the tasks' effect files part of the transaction, or None."""
    # Names, not paths: the repository may be moved or restored elsewhere after a crash.
    files = [
        Path(r.effects_file).name for r in sorted(results, key=lambda r: r.index) if r.effects_file
    ]
    return {"files": json.dumps(files)} if files else None


class Sinks:
    """The two-phase sinks of a flow, as the controller drives them.

    Args:
        plans: the flow's stage plans.
        repositories: the run's repositories (committed state lives in the FlowFile log).
        runner: where merge jobs run.
        context_of: the driver-side context of a member.
        after_commit_budget: how long a commit waits for after-commit actions (seconds).
    """

    def __init__(
        self,
        plans: Sequence[StagePlan],
        repositories: RepositorySet,
        runner: Runner,
        context_of: Callable[[MemberPlan], ProcessContext],
        *,
        after_commit_budget: float = 5.0,
    ) -> None:
        self.members = [m for plan in plans for m in plan.members if m.kind is ProcessorKind.SINK]
        self._all = {m.component_id: m for plan in plans for m in plan.members}
        #: component id -> the services its stage ships (their secrets are masked in its logs)
        self._services = {m.component_id: p.services for p in plans for m in p.members}
        self.repos = repositories
        self.runner = runner
        self._context_of = context_of
        self._continuous = False
        self.reports: dict[str, Mapping[str, str]] = {}
        self._waiting = False  # whether refused publications wait in retry files
        self._deadline: float | None = None  # when this commit's after-commit wait ends
        self._settle_after: dict[str, float] = {}  # component -> no settle before (monotonic)
        self._missing: set[str] = set()  # components of pending actions not in the flow
        self.pending_after_commit = 0  # action batches left pending when the run stopped
        self.actions = AfterCommitRunner(
            repositories.paths.effects,
            self._run_actions,
            self._report_actions,
            budget_seconds=after_commit_budget,
        )

    def _secrets(self, member: MemberPlan) -> Callable[[], list[str]]:
        """What *member*'s messages must not show: its secrets and its services'."""
        return secrets_for(member.processor, self._services.get(member.component_id, {}))

    def _sink(self, member: MemberPlan) -> TwoPhaseSink:
        processor = member.processor
        assert isinstance(processor, TwoPhaseSink)
        return processor

    def _jobs(self) -> SinkJobs:
        return SinkJobs(self.runner.map_jobs, continuous=self._continuous)

    def recover(self, *, continuous: bool = False) -> list[Finding]:
        """Settle what a previous run staged, from each sink's committed state.

        Committed effect files are carried out (a rename already made is skipped); effect
        files of attempts that never committed are removed with their temporaries.
        """
        self._continuous = continuous
        for member in self.members:
            state = self.repos.flowfiles.state(member.component_id)
            with redacting(self._secrets(member)):
                self._sink(member).publish(self._context_of(member), state)
        committed = self.committed_effects()
        self._waiting = True  # a previous run may have left refused publications
        self.carry_out(committed)
        release_targets(self.repos.paths.effects)
        findings = sweep(self.repos.paths.effects, keep=committed)
        self.settle(self.actions.resume())
        return findings

    def settle(
        self,
        pending: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        plan: StagePlan | None = None,
    ) -> None:
        """Let processors undo what uncommitted attempts left outside flowcore.

        At start-up (every processor; a failure is a bulletin) and after each commit of a
        stage run (*plan*'s members; a failure is a warning, and that processor is not asked
        again for :data:`SETTLE_BACKOFF_SECONDS`, so a hanging database holds up one commit
        a minute at most, each wait bounded by the processor's own timeouts): no task runs
        then, so what no committed action names belongs to an attempt that will never commit
        (a Spark task lost after PREPARE, whose rerun would wait on its locks). That is also
        why this runs here, on the driver between stage runs, not on the processor's
        after-commit worker: there it would overlap the next stage run, and roll back the
        transactions its tasks have just prepared.

        Args:
            pending: by component, the committed actions not carried out yet (None: the
                after-commit runner's at this moment).
            plan: the stage run just committed (None: at start-up).
        """
        members = self._all.values() if plan is None else plan.members
        now = time.monotonic()
        settling = [
            m
            for m in members
            if m.processor is not None
            and _overrides(m.processor, "settle_after_commit_actions")
            and (plan is None or now >= self._settle_after.get(m.component_id, 0.0))
        ]
        if not settling:
            return
        # Spare every committed action: those the runner holds open and those in pending
        # files (a batch this run could not carry out: its processor left the flow). One
        # unreadable pending file could name any gid: then nothing is swept.
        kept, readable = self.actions.kept_on_disk()
        if not readable:
            problem = (
                f"a pending after-commit file in {self.repos.paths.effects} cannot be read: "
                "nothing is swept (rolled back) until it is repaired or removed"
            )
            LOG.warning("%s", problem)
            if plan is None:  # once a start, not at every commit
                self.repos.add_bulletins(
                    [Bulletin(now_ms(), "after-commit", "after-commit", "WARNING", problem)]
                )
            return
        merged = {k: list(v) for k, v in kept.items()}
        for component_id, payloads in (
            self.actions.outstanding() if pending is None else pending
        ).items():
            merged.setdefault(component_id, []).extend(payloads)
        pending = merged
        for member in settling:
            processor = member.processor
            assert processor is not None
            component_id = member.component_id
            try:
                with redacting(self._secrets(member)):
                    processor.settle_after_commit_actions(
                        self._context_of(member), list(pending.get(component_id, ()))
                    )
            except ConfigurationError as refused:
                if plan is None:
                    raise  # the run cannot start so (a copied repository running): refused
                self._settle_after[component_id] = now + SETTLE_BACKOFF_SECONDS
                LOG.warning("%s does not settle: %s", member.name, refused)
            except Exception as error:  # the run goes on; what is left waits for the next
                if plan is None:
                    self._report(component_id, error, "settle what earlier runs left")
                else:
                    self._settle_after[component_id] = now + SETTLE_BACKOFF_SECONDS
                    LOG.warning(
                        "%s could not settle what uncommitted attempts left (tried again "
                        "after a commit %.0f s from now): %s: %s",
                        member.name, SETTLE_BACKOFF_SECONDS, type(error).__name__, error,
                    )  # fmt: skip
            else:
                self._settle_after.pop(component_id, None)

    def committed_effects(self) -> list[str]:
        """The effect files the last transaction that had any names."""
        state = self.repos.flowfiles.state(EFFECTS_STATE)
        directory = Path(self.repos.paths.effects)
        return [str(directory / Path(name).name) for name in json.loads(state.get("files", "[]"))]

    def carry_out(self, files: Sequence[str]) -> EffectReport:
        """After the transaction: rename staged files into place and emit deferred log lines.

        Publications a file system refused earlier are tried first, so a target gets its
        files in commit order; one still refused holds back later publications of its target
        only. A file that appeared at a target after its FlowFile was committed, where the
        sink's conflict strategy forbids replacing it, is kept; a warning bulletin names it.
        The after-commit actions of all *files* share one time budget.
        """
        report = EffectReport()
        self._deadline = time.monotonic() + self.actions.budget_seconds
        if self._waiting:
            for path in retries(self.repos.paths.effects):
                report += carry_out(path, blocked=report.waiting, act=self._act)
            report = attrs.evolve(report, failed=())  # already reported when first refused
        for path in files:
            report += carry_out(path, blocked=report.waiting, act=self._act)
        self._waiting = bool(report.waiting)
        now = now_ms()
        bulletins = [
            Bulletin(
                now,
                "effects",
                "PutFile",
                "WARNING",
                f"{target} appeared after its FlowFile was committed; the existing file was "
                "kept (Conflict Resolution Strategy is not 'replace')",
            )
            for target in report.conflicts
        ]
        bulletins.extend(
            Bulletin(
                now,
                "effects",
                "PutFile",
                "ERROR",
                f"could not publish {problem}; the file stays staged and is published once "
                "the file system takes it (tried at every commit and start)",
            )
            for problem in report.failed
        )
        self.repos.add_bulletins(bulletins)
        return report

    def _act(self, actions: Sequence[AfterCommitAction]) -> None:
        """Hand one task's after-commit actions over (in order, per processor; see the runner).

        The processors' driver contexts are made here, on the driver's thread, before their
        workers use them.
        """
        for component_id in dict.fromkeys(a.component_id for a in actions):
            member = self._all.get(component_id)
            if member is not None and member.processor is not None:
                with redacting(self._secrets(member)):  # its on_scheduled may log
                    self._context_of(member)
        self.actions.hand_over(actions, deadline=self._deadline)

    def _run_actions(self, component_id: str, payloads: Sequence[Mapping[str, Any]]) -> None:
        """Carry out one processor's actions (on its worker thread).

        An action whose processor left the flow is not carried out, nor dropped: its
        FlowFiles are committed (a COMMIT PREPARED dropped would let a later sweep roll back
        rows the log says were written), so it stays pending, for a start whose flow has the
        processor again; a warning bulletin names it (once per run and component). What the
        processor raises goes to the runner (retry, or :meth:`_report_actions`).
        """
        member = self._all.get(component_id)
        if member is None or member.processor is None:
            problem = (
                f"{len(payloads)} after-commit action(s) of component {component_id}, "
                "which is not in the flow, wait in the repository: they are carried out by "
                "a run whose flow has it again"
            )
            if component_id not in self._missing:
                self._missing.add(component_id)
                LOG.warning("%s", problem)
                self.repos.add_bulletins(
                    [Bulletin(now_ms(), component_id, component_id, "WARNING", problem)]
                )
            raise AfterCommitRetry(problem)
        with redacting(self._secrets(member)):
            member.processor.run_after_commit_actions(self._context_of(member), payloads)

    def _report_actions(self, component_id: str, error: BaseException, count: int) -> None:
        """An error bulletin: the FlowFiles are committed, the actions are not retried."""
        self._report(component_id, error, f"carry out {count} after-commit action(s)")

    def _report(self, component_id: str, error: BaseException, what: str) -> None:
        """An error bulletin saying what *component_id* could not do.

        One line (a database refusing the password is the user's to fix, not a traceback):
        written to stderr once per reason when nothing else handles the log; the traceback
        is logged at DEBUG only, secrets masked.
        """
        member = self._all.get(component_id)
        name = component_id if member is None else member.name or member.type_name
        secrets = [] if member is None else self._secrets(member)()
        text = " ".join(str(error).split()) or "(no message)"
        problem = redact(f"{name} could not {what}: {type(error).__name__}: {text}", secrets)
        log_once_per_reason(LOG, problem)
        LOG.debug("%s", redact("".join(format_exception(error)), secrets))
        self.repos.add_bulletins([Bulletin(now_ms(), component_id, name, "ERROR", problem)])

    def sweep_attempts(self) -> list[Finding]:
        """Remove what task attempts that were not committed staged (between stage runs).

        Only called when no task runs: every effect file left then is a dead attempt's.
        """
        return sweep(self.repos.paths.effects)

    def prepare(self, plan: StagePlan, results: Sequence[TaskResult]) -> dict[str, dict[str, str]]:
        """Stage each sink's output of this stage run; the states to commit."""
        states: dict[str, dict[str, str]] = {}
        for member in plan.members:
            if member.kind is not ProcessorKind.SINK:
                continue
            messages = [
                message
                for result in sorted(results, key=lambda r: r.index)
                for component_id, message in result.sink_messages
                if component_id == member.component_id
            ]
            if not messages:
                continue
            committed = self.repos.flowfiles.state(member.component_id)
            sink = self._sink(member)
            with redacting(self._secrets(member)):
                states[member.component_id] = dict(
                    sink.commit(self._context_of(member), messages, committed, self._jobs())
                )
        return states

    def publish(self, states: Mapping[str, Mapping[str, str]]) -> None:
        """After the transaction: make what *states* name visible."""
        for member in self.members:
            state = states.get(member.component_id)
            if state is not None:
                with redacting(self._secrets(member)):
                    self._sink(member).publish(self._context_of(member), state)
                self.reports[member.name] = state

    def end_of_run(self) -> None:
        """A batch run is over: each sink may stage a last change (relaxed auto-merge)."""
        for member in self.members:
            committed = self.repos.flowfiles.state(member.component_id)
            sink = self._sink(member)
            with redacting(self._secrets(member)):
                state = sink.end_of_run(self._context_of(member), committed, self._jobs())
            if state is None:
                continue
            self.repos.flowfiles.commit(Transaction(state={member.component_id: dict(state)}))
            self.publish({member.component_id: state})

    def release(self) -> None:
        """The run stopped: sinks let go of their locks; after-commit actions get the budget.

        What is not done by then stays in pending files, for the next start.
        """
        left = self.actions.close(self.actions.budget_seconds)
        self.pending_after_commit = left
        if left:
            problem = (
                f"{left} after-commit action batch(es) not done at the end of the run; they "
                "are kept in the repository and carried out at the next start"
            )
            LOG.warning("%s", problem)
            self.repos.add_bulletins(
                [Bulletin(now_ms(), "after-commit", "after-commit", "WARNING", problem)]
            )
        for member in self.members:
            with redacting(self._secrets(member)):
                self._sink(member).release(self._context_of(member))


def _overrides(processor: object, method: str) -> bool:
    """Whether *processor*'s class defines *method* itself (not only the Processor default)."""
    return getattr(type(processor), method, None) is not getattr(Processor, method, None)
