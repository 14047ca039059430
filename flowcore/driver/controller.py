"""The controller: runs a compiled flow in micro-batches and commits each stage run durably.

Per micro-batch, every stage in order that has input (source work, or queued FlowFiles not waiting
on a penalty) and whose output queues are under back pressure runs once: the controller lists source
work, picks segments (:mod:`flowcore.driver.scheduler`), has the runner execute the tasks, then
commits the stage run (:mod:`flowcore.driver.commit`: one write-ahead log transaction, then what
may only follow it).
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan, StagePlan
from flowcore.compiler.stages import CompiledFlow, Stage, compile_flow
from flowcore.controller_service import enabled_service
from flowcore.definition.flow import Connection, FlowDefinition
from flowcore.definition.queues import full_connections, parked_component
from flowcore.driver.commit import commit_stage_run
from flowcore.driver.identity import check_owner, claim_repository
from flowcore.driver.live_status import (
    RunTracker,
    Waiting,
    renew_progress,
    replayed_since_last_run,
    status_document,
)
from flowcore.driver.outcome import RunRecord, explain_run, run_result
from flowcore.driver.run_result import RunProgress, RunResult, stage_summary
from flowcore.driver.scheduler import (
    BatchLimits,
    RetryAt,
    binning_queued,
    holding_kept,
    next_held,
    next_wait,
    select_segments,
)
from flowcore.driver.schedules import Schedules
from flowcore.driver.sinks import Sinks
from flowcore.driver.sources import SourceLister
from flowcore.driver.stage_jobs import StageJobs
from flowcore.engine._bulletins import redacting, secrets_for
from flowcore.engine.task import apply_limits
from flowcore.engine.wire import SegmentWait, TaskResult
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import WorkItem
from flowcore.runners.jobs import Runner
from flowcore.session.host import ComponentInfo, StateMap
from flowcore.settings import Settings
from repositories._content_archive import ARCHIVE_CLEANUP_FREQUENCY_MS
from repositories.held_content import HeldContent
from repositories.provenance_indexer import ProvenanceIndexer
from repositories.records import Bulletin, SegmentSummary
from repositories.repository_set import RepositorySet

__all__ = ["Controller", "RunProgress", "RunResult", "run_flow", "stage_summary"]

#: Micro-batches a batch run waits, without progress, for processors that yielded.
MAX_IDLE_WAITS = 5


class Controller:
    """Owns the repositories of a run and drives the micro-batches.

    Args:
        flow: the flow (validated and compiled here). The repository is claimed for it
            (:func:`~flowcore.driver.identity.claim_repository`).
        runner: where tasks execute.
        repositories: the opened repositories (the controller does not close them).
        settings: engine settings.
    """

    def __init__(
        self,
        flow: FlowDefinition | CompiledFlow,
        runner: Runner,
        repositories: RepositorySet,
        settings: Settings | None = None,
    ) -> None:
        compiled = flow if isinstance(flow, CompiledFlow) else compile_flow(flow)
        # The repository must be this flow's; a renamed component keeps its recorded id.
        claimed, self.renamed = claim_repository(
            compiled.flow, repositories.flowfiles, repositories.directory
        )
        compiled = compiled if claimed is compiled.flow else compile_flow(claimed)
        self.compiled = holding_kept(compiled, repositories.flowfiles)
        self.flow = self.compiled.flow
        self.runner = runner
        self.repos = repositories
        self.settings = settings or Settings()
        apply_limits(self.settings)  # the driver lists sources and decides bins with them too
        self.plans = dict(self.compiled.plans)
        self.jobs = StageJobs(self.plans, repositories, self.settings, runner)
        self._connections = {c.id: c for c in self.flow.connections}
        self._waits: dict[str, SegmentWait] = {}  # queued segments tasks handed back
        self._indexer: ProvenanceIndexer | None = None
        self._contexts: dict[str, ProcessContext] = {}
        self._services: dict[str, Any] | None = None  # the flow's services, parameters bound
        self._unscheduled: dict[str, str] = {}  # component id -> why on_scheduled raised in tasks
        self._transfers: dict[str, dict[str, list[int]]] = defaultdict(
            lambda: defaultdict(lambda: [0, 0])
        )
        self._received: Counter[str] = Counter()
        self._nanos: Counter[str] = Counter()  # per component name: its tasks' time
        self._bulletins: list[Bulletin] = []
        self._stage_runs = 0
        self._held_back: dict[str, list[str]] = {}
        self._archive_expired_at = 0
        self.sinks = Sinks(
            list(self.plans.values()),
            repositories,
            runner,
            self._context,
            after_commit_budget=self.settings.after_commit_budget_seconds,
        )
        self.schedules = Schedules()  # Run Schedules (periods, crons) of continuous runs
        self.sources = SourceLister(
            list(self.plans.values()),
            repositories.flowfiles,
            self.settings,
            self._context,
            self._bulletin,
            schedules=self.schedules,
            # Bounded: a delete that hangs must not hold the driver (the source lists later).
            before_listing=lambda component_id: self.sinks.actions.wait_for(
                component_id, self.settings.after_commit_budget_seconds
            ),
        )
        self.tracker = RunTracker(
            self.compiled, runner=runner.name, continuous=False, name_of=self._component_name
        )
        self._replayed = replayed_since_last_run(repositories)
        self._status: dict[str, Any] | None = None  # the last status.json written

    # --- queues -------------------------------------------------------------------------------

    def _in_bins(self, segment_id: str) -> bool:
        """Whether a queued segment's FlowFiles are held by open bins."""
        wait = self._waits.get(segment_id)
        return wait is not None and wait.in_bins

    def _queued(self, queue_id: str) -> tuple[int, int]:
        """A queue's size for back pressure: FlowFiles held by open bins do not count."""
        count = size = 0
        for summary in self.repos.flowfiles.segments(queue_id):
            if not self._in_bins(summary.segment_id):
                count += summary.count
                size += summary.bytes
        return count, size

    def _label(self, queue_id: str) -> str:
        connection = self._connections.get(queue_id)
        if connection is not None:
            return self.flow.describe(connection)
        parked = parked_component(queue_id)
        if parked is not None:
            return f"{self._component_name(parked)} (returned after errors)"
        return queue_id  # a queue of a connection the flow no longer has

    def _component_name(self, component_id: str) -> str:
        try:
            return self.flow.component(component_id).name
        except KeyError:
            return component_id

    def queued_total(self) -> int:
        """FlowFiles queued anywhere."""
        wal = self.repos.flowfiles
        return sum(wal.queue_size(q)[0] for q in wal.queue_ids())

    # --- sources ------------------------------------------------------------------------------

    def _context(self, member: MemberPlan) -> ProcessContext:
        context = self._contexts.get(member.component_id)
        if context is None:
            assert member.processor is not None
            wal = self.repos.flowfiles
            context = ProcessContext(
                member.processor,
                component=ComponentInfo(
                    member.component_id,
                    member.type_name,
                    member.name,
                    self.repos.repository_id,
                    self.repos.former_repository_ids,
                ),
                clock=now_ms,
                state=lambda: StateMap(0, wal.state(member.component_id)),
                has_incoming_connection=False,
            )
            services = self._resolved_services()
            context.service_lookup = lambda name: enabled_service(name, services)
            context.committed_content = HeldContent(self.repos.content)
            with redacting(secrets_for(member.processor, services)):
                member.processor.on_scheduled(context)
            self._contexts[member.component_id] = context
        return context

    def _resolved_services(self) -> dict[str, Any]:
        """The flow's services with their parameters bound, as the tasks get them.

        One mapping for the whole run: :func:`enabled_service` keeps a runtime per mapping, and
        the declared services still hold their ``#{name}`` references.
        """
        if self._services is None:
            self._services = self.flow.resolved_services()
        return self._services

    def _bulletin(self, bulletin: Bulletin) -> None:
        """Record a bulletin the driver made (one a task made comes with its result)."""
        self._bulletins.append(bulletin)
        self.repos.add_bulletins([bulletin])

    def _room(self, outputs: Sequence[Connection]) -> tuple[int, int]:
        """FlowFiles a stage's sources may add in one micro-batch: ``(plain, batched)``.

        That is each batch limit, or less when an output queue's object threshold is nearer
        (back pressure stays soft by one trigger, as NiFi's).
        """
        settings = self.settings
        plain, batched = settings.batch_max_flowfiles, settings.batch_max_batched_flowfiles
        for connection in outputs:
            threshold = connection.queue_settings.back_pressure_object_threshold
            if threshold > 0:
                left = threshold - self._queued(connection.id)[0]
                plain, batched = min(plain, left), min(batched, left)
        return plain, batched

    # --- one stage run ------------------------------------------------------------------------

    def run_stage(
        self, stage: Stage, *, continuous: bool = False, end_of_input: bool = False
    ) -> int:
        """Run *stage* once if it can run now.

        Returns how many work items it read and FlowFiles its processors consumed (FlowFiles
        only re-binned, returned after a yield or an error do not count: that is no progress).
        """
        plan = self.plans[stage.id]
        scheduled = plan.scheduled_members if continuous else ()
        if not all(self.schedules.due(m) for m in scheduled):
            return 0  # its Run Schedule is not due: its input waits queued
        outputs = [self._connections[c] for c in stage.outputs]
        full = full_connections(outputs, plan.queue_members, self._queued)
        if full:
            # Only a stage with something left to do is held back: one whose sources are
            # exhausted and whose inputs are empty must not keep a batch run from draining
            # its open bins at the end of input (which is what empties the full queue).
            before = self._held_back.get(stage.id)
            if self._has_work(plan, continuous):
                self._held_back[stage.id] = [c.id for c in full]
            else:
                self._held_back.pop(stage.id, None)
            if self._held_back.get(stage.id) != before:
                self._write_status()
            return 0
        self._held_back.pop(stage.id, None)
        work, states = ([], {})
        if not end_of_input:
            work, states = self.sources.list_work(plan, continuous, self._room(outputs))
        wal = self.repos.flowfiles
        queues = {q: wal.segments(q) for q in plan.queue_members}
        now = now_ms()
        if end_of_input:
            binning = {m.component_id for m in plan.binning_members}
            taken = [s for q, m in plan.queue_members.items() if m in binning for s in queues[q]]
        else:
            settings = self.settings
            limits = BatchLimits(
                settings.batch_max_flowfiles,
                settings.batch_max_bytes_value,
                settings.batch_max_batched_flowfiles,
            )
            # A batch run does not retry what failed or was penalized during it: those
            # FlowFiles stay queued for the next run (or a continuous one).
            waits = self._waits
            skip = (
                frozenset()
                if continuous
                else frozenset(s for s, w in waits.items() if w.long and not w.in_bins)
            )
            taken = select_segments(plan, queues, RetryAt(waits), now, limits, skip=skip)
        if not work and not taken:
            if states:
                self._commit(stage, [], [], states)
            return 0
        run = uuid.uuid4().hex[:16]  # the stage run's unique name (TaskSpec.run)
        job = self.jobs.job(plan, taken, work, run=run, end_of_input=end_of_input)
        flowfiles, size = sum(s.count for s in taken), sum(s.bytes for s in taken)
        small = not work and flowfiles <= self.settings.driver_run_max_flowfiles
        small = small and size <= self.settings.driver_run_max_bytes
        self.tracker.stage_started(stage.id)
        if not small:  # a small run takes milliseconds in the driver: its commit shows it
            self._write_progress()
        results = self.jobs.execute(job, run=run, small=small, flowfiles=flowfiles)
        self.sources.note_yields(results)
        unread = self.sources.requeue_unread(plan, work, results, states)
        took = len(work) + sum(sum(r.consumed.values()) for r in results)
        for member in scheduled:
            self.schedules.ran(member)
        self._track(stage, plan, work, results)
        self._commit(stage, taken, results, unread, run=run)
        self.sources.after_commit(plan, work, results)
        return took

    def _track(
        self,
        stage: Stage,
        plan: StagePlan,
        work: list[tuple[str, WorkItem]],
        results: list[TaskResult],
    ) -> None:
        """Count a stage run for progress: work read and FlowFiles taken in, sent on out."""
        failed = {entry for r in results for entry in r.unread}
        read = [item for c, item in work if (c, item.key) not in failed]
        readers = set(plan.queue_members.values())  # members taking from the input queues
        taken = sum(n for r in results for c, n in r.consumed.items() if c in readers)
        sent = sum(s.count for r in results for s in r.enqueued if s.queue_id in stage.outputs)
        self.tracker.stage_ran(stage.id, len(read) + taken, sent, read)

    def _has_work(self, plan: StagePlan, continuous: bool) -> bool:
        """Whether the stage could take anything: a source still listing, or FlowFiles queued."""
        wal = self.repos.flowfiles
        return any(self.sources.active(m, continuous) for m in plan.source_members) or any(
            wal.segments(queue_id) for queue_id in plan.queue_members
        )

    def _commit(
        self,
        stage: Stage,
        taken: list[SegmentSummary],
        results: list[TaskResult],
        source_states: dict[str, dict[str, str]],
        *,
        run: str | None = None,
    ) -> None:
        """Commit a stage run, then update what the controller keeps in memory.

        The durable part is :func:`~flowcore.driver.commit.commit_stage_run`; here follow the
        retries, waits, counts, bulletins and the status file.
        """
        results = sorted(results, key=lambda r: r.index)
        now = now_ms()
        expire = now - self._archive_expired_at >= ARCHIVE_CLEANUP_FREQUENCY_MS
        if expire:
            self._archive_expired_at = now
        commit_stage_run(
            self.repos,
            self.sinks,
            self.indexer,
            plan=self.plans[stage.id],
            taken=taken,
            results=results,
            source_states=source_states,
            run=run,
            now=now,
            expire_archive=expire,
        )
        for summary in taken:
            self._waits.pop(summary.segment_id, None)
        self._note_scheduling(stage, results)
        for result in results:
            self._waits.update(result.waits)
            for component_id, relationships in result.transfers.items():
                name = self._component_name(component_id)
                for relationship, (count, size) in relationships.items():
                    totals = self._transfers[name][relationship]
                    totals[0] += count
                    totals[1] += size
            for component_id, count in result.consumed.items():
                self._received[self._component_name(component_id)] += count
            for component_id, nanos in result.nanos.items():
                self._nanos[self._component_name(component_id)] += nanos
            self._bulletins.extend(result.bulletins)
        self._stage_runs += 1
        if self.plans[stage.id].source_members:  # after the commit: its listing state
            self.tracker.pending = self.sources.pending()
        self._write_status()

    def _note_scheduling(self, stage: Stage, results: list[TaskResult]) -> None:
        """Remember which members' ``on_scheduled`` raised in the tasks, forget those that ran.

        (A source the driver could not schedule is the source lister's to remember.)
        """
        if not results:
            return
        failed: dict[str, str] = {}
        for result in results:
            failed.update(result.unscheduled)
        self._unscheduled.update(failed)
        for member in self.plans[stage.id].members:
            if member.component_id not in failed:
                self._unscheduled.pop(member.component_id, None)

    def _write_progress(self) -> None:
        """Rewrite ``status.json`` when only the micro-batch in progress changed.

        Queues change only at commits: the last document is kept with its progress renewed
        (a stage run starting must show at once, however soon after the last commit).
        """
        if self._status is None:
            self._write_status()
            return
        self._status = renew_progress(self._status, self.tracker)
        self.repos.write_status(self._status)

    def _write_status(self) -> None:
        """Rewrite ``status.json`` (see :mod:`flowcore.driver.live_status`)."""
        wal = self.repos.flowfiles
        now = now_ms()

        def waiting(summary: SegmentSummary) -> Waiting:
            wait = self._waits.get(summary.segment_id)
            if wait is None:
                return Waiting(False, False)
            return Waiting(now < wait.retry_at, wait.in_bins)

        status = status_document(
            self.tracker,
            self.compiled,
            {queue_id: wal.segments(queue_id) for queue_id in wal.queue_ids()},
            label=self._label,
            waiting=waiting,
            held_back=self._held_back,
            transfers=self._transfers,
            tasks_duration_nanos=self._nanos,
            replayed=self._replayed,
        )
        # Committed FlowFiles whose after-commit actions (COMMIT PREPARED) are not done yet.
        status["pending_after_commit"] = self.sinks.actions.pending_count()
        self._status = status
        self.repos.write_status(status)

    @property
    def indexer(self) -> ProvenanceIndexer:
        """The background indexer of committed provenance files.

        It applies the provenance retention too; :meth:`run` starts it, or first use does.
        """
        if self._indexer is None:
            self._indexer = ProvenanceIndexer(self.repos.provenance)
        return self._indexer

    def close(self) -> int:
        """Finish indexing provenance and record it; return the events indexed.

        :meth:`run` does this itself; call it after driving :meth:`run_stage` directly.
        """
        return self._finish_indexing()

    def _finish_indexing(self) -> int:
        """Wait for the indexer, record what it indexed; return the events indexed."""
        if self._indexer is None:
            return 0
        indexer, self._indexer = self._indexer, None
        remaining = indexer.close()
        if remaining:
            self.repos.flowfiles.mark_provenance_indexed(remaining)
            self.repos.provenance.remove_indexed_files(remaining)
        return indexer.events

    # --- the run ------------------------------------------------------------------------------

    def run(
        self,
        *,
        continuous: bool = False,
        progress: Callable[[RunProgress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> RunResult:
        """Run micro-batches: to completion, or until *should_stop* in continuous mode.

        Batch mode ends when no stage can make progress: sources are exhausted, open bins were
        merged (``END_OF_INPUT``), relationship retries were waited out (their backoffs are
        part of the flow), and what remains queued failed, was penalized, was refused by a
        processor that kept yielding (:data:`MAX_IDLE_WAITS` micro-batches), or waits for a
        disabled processor or before a funnel with no outgoing connection; it stays queued for
        the next run.
        """
        started = time.monotonic()
        self.tracker.continuous = continuous
        try:
            self.indexer  # noqa: B018 - started now, it applies provenance retention at once
            self._write_status()  # `flowcore status` sees the run from its start
            self.sinks.recover(continuous=continuous)
            micro_batches = self._loop(continuous, progress, should_stop)
            self.sinks.end_of_run()
        except BaseException:
            self._abandon_indexing()
            self.tracker.ended()
            with contextlib.suppress(Exception):  # a full disk must not hide the first error
                self._write_status()
            raise
        finally:
            self.sinks.release()
            services = self._resolved_services()
            for context in self._contexts.values():
                with redacting(secrets_for(context.processor, services)):
                    context.processor.on_stopped(context)
            self._contexts.clear()
        events = self._finish_indexing()
        self.tracker.ended()
        self._write_status()
        return self._result(micro_batches, time.monotonic() - started, events)

    def _loop(
        self,
        continuous: bool,
        progress: Callable[[RunProgress], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> int:
        """The micro-batches; returns how many ran."""
        micro_batches = idle = 0
        drained = False
        for number in itertools.count(1):
            if should_stop is not None and should_stop():
                break
            took = 0
            self.tracker.micro_batch_started(number)
            self._write_progress()
            for stage in self.compiled.stages:
                count = self.run_stage(stage, continuous=continuous)
                took += count
                if count and progress is not None:
                    progress(self.tracker.progress(stage.id, self.queued_total()))
            micro_batches = number
            if took:
                drained = False
                idle = 0
                continue
            now = now_ms()
            wal, waits = self.repos.flowfiles, self._waits
            wait = next_wait(wal, waits, now, include_long=continuous)
            held = None if continuous else next_held(wal, waits, now)
            if held is not None and (held > now or idle < MAX_IDLE_WAITS):
                # FlowFiles are held until a known time (ControlRate's window, a retry's
                # backoff): they go on then, so waiting for it is not idling; the run goes on.
                # Held ones already due but not taken (their stage held back by back pressure,
                # say) are idling: the run waits for them only as it waits for others.
                if held <= now:
                    idle += 1
                until = held if wait is None else min(wait, held)
                time.sleep(min(max(until - now, 1), 1000) / 1000)
                continue
            rested = self.sources.yield_ends(continuous)
            if rested is not None and not continuous and (rested > now or idle < MAX_IDLE_WAITS):
                # A source yielded (its database is down): its remaining triggers wait out
                # the yield, as NiFi's would; they are bounded, so the run still ends. A rest
                # already over (its source held back since, by back pressure say) is idling.
                if rested <= now:
                    idle += 1
                time.sleep(min(max(rested - now, 1), 1000) / 1000)
                continue
            if wait is not None and (continuous or idle < MAX_IDLE_WAITS):
                idle += 1
                time.sleep(min(wait - now, 1000) / 1000)
                continue
            if continuous:
                pause = self.settings.poll_interval_seconds
                due = min(
                    (t for t in (self.sources.next_scheduled(), rested) if t is not None),
                    default=None,
                )
                if due is not None:  # a Run Schedule or a yield ends before the poll interval
                    pause = min(pause, max(0, due - now) / 1000)
                time.sleep(pause)
                continue
            if not drained and not self._held_back:
                drained = True
                ended = sum(
                    self.run_stage(s, end_of_input=True) for s in binning_queued(self.compiled, wal)
                )
                if ended:
                    continue
            break
        return micro_batches

    def _abandon_indexing(self) -> None:
        """Stop the indexer after a failure.

        What it did not record stays pending in the log and is indexed at the next start.
        """
        if self._indexer is not None:
            indexer, self._indexer = self._indexer, None
            with contextlib.suppress(Exception):
                indexer.close()

    def _result(self, micro_batches: int, elapsed: float, events: int) -> RunResult:
        """The run's result (:func:`~flowcore.driver.outcome.run_result`)."""
        """The run's result (:func:`~flowcore.driver.outcome.run_result`)."""
        return run_result(
            self._record(),
            micro_batches=micro_batches,
            stage_runs=self._stage_runs,
            elapsed=elapsed,
            events=events,
            sinks=self.sinks.reports,
            pending_after_commit=self.sinks.pending_after_commit,
            renamed=self.renamed,
        )

    def _record(self) -> RunRecord:
        """What this controller kept during the run, as the result reads it."""
        return RunRecord(
            compiled=self.compiled,
            plans=self.plans,
            repositories=self.repos,
            settings=self.settings,
            runner=self.runner,
            waits=self._waits,
            held_back=self._held_back,
            transfers=self._transfers,
            received=self._received,
            nanos=self._nanos,
            bulletins=self._bulletins,
            unscheduled=self._unscheduled,
            sources_unscheduled=self.sources.unscheduled,
            sources_yielded=self.sources.yielded,
            sources_list_failed=self.sources.list_failed,
            described=self.jobs.described,
            label=self._label,
            name_of=self._component_name,
        )

    def explain(self) -> str:
        """The plan, with what the runner did for each stage."""
        return explain_run(self.compiled, self.runner.name, self.settings, self.jobs.described)


def run_flow(
    flow: FlowDefinition,
    runner: str | Runner = "spark",
    *,
    repository: str | Path = ".flowcore",
    master: str | None = None,
    conf: dict[str, str] | None = None,
    settings: Settings | None = None,
    continuous: bool = False,
    progress: Callable[[RunProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    spark: Any = None,
) -> RunResult:
    """Validate, compile and run *flow*; what ``flow.run(...)`` and ``flowcore run`` call.

    *spark*, a SparkSession, is used as it is and left running.

    Raises:
        FlowValidationError: the flow is invalid (every problem listed); nothing ran.
        FlowIdentityError: the repository belongs to another flow, or holds FlowFiles in a
            queue whose connection the flow no longer has; nothing ran.
        RepositoryError: the repository is in use or damaged.
        ConfigurationError: Spark cannot start on the master, or the runner's options clash.
    """
    from flowcore.runners import make_runner  # noqa: PLC0415 - runners import this module's peers

    compiled = compile_flow(flow)
    settings = settings or Settings()
    # The repository first: one in use, damaged or another flow's is refused before Spark
    # starts (a refused run said so after the seconds a session takes to start).
    repositories = RepositorySet.open(repository, settings)
    try:
        check_owner(compiled.flow, repositories.flowfiles, repositories.directory)
        chosen = (
            make_runner(
                runner,
                master=master,
                conf=conf,
                spark=spark,
                connect_timeout=settings.spark_connect_timeout_seconds,
            )
            if isinstance(runner, str)
            else runner
        )
    except BaseException:
        repositories.close()
        raise
    try:
        controller = Controller(compiled, chosen, repositories, settings)
        return controller.run(continuous=continuous, progress=progress, should_stop=should_stop)
    finally:
        repositories.close()
        chosen.close()
