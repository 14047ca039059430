"""Stage jobs: the tasks of one stage run, built from what it takes, then executed.

The controller decides whether a stage runs and what it takes (queued segments, source work);
this module turns that into a :class:`~flowcore.runners.jobs.StageJob` (the input split into
parallel tasks, one task for a single group, or a shuffle for a binning stage) and has a runner
execute it, followed by a second job merging a binning stage's ready bins. It is apart from the
controller because building and executing a job needs only the plans, the settings and the
runners, none of the controller's bookkeeping of queues, counts and status.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from flowcore.clock import now_ms
from flowcore.compiler.plan import StagePlan, block_reader
from flowcore.driver.scheduler import chunk, split_segments
from flowcore.engine.shuffle import single_group
from flowcore.engine.task import ID_BLOCK
from flowcore.engine.wire import ReadyBin, TaskInput, TaskResult, TaskSpec
from flowcore.processor.context import lowest_logged_level, processor_logger
from flowcore.processor.kinds import WorkItem
from flowcore.runners.direct import DirectRunner
from flowcore.runners.jobs import Runner, ShuffleInput, StageJob
from flowcore.settings import Settings
from repositories.records import SegmentSummary
from repositories.repository_set import RepositorySet

__all__ = ["StageJobs"]


class StageJobs:
    """Builds the jobs of a flow's stage runs and executes them.

    Args:
        plans: the flow's stage plans, by stage id.
        repositories: the run's repositories (FlowFile ids, processor state, paths).
        settings: engine settings (parallelism, shuffle partitions).
        runner: where stage runs execute, small ones aside.

    Attributes:
        described: what the runners did for each stage's last run, for ``explain``; on Spark,
            a stage whose runs went both to Spark and to the driver's process (small runs)
            shows the last of each, with their counts.
    """

    def __init__(
        self,
        plans: Mapping[str, StagePlan],
        repositories: RepositorySet,
        settings: Settings,
        runner: Runner,
    ) -> None:
        self.repos = repositories
        self.settings = settings
        self.runner = runner
        # Small stage runs execute in the driver's process whatever the runner (see Settings)
        self._in_driver: Runner = runner if runner.name == "direct" else DirectRunner()
        self._single_group = {i: single_group(p) for i, p in plans.items()}
        self.described: dict[str, str] = {}
        # per stage, per place ("runner" or "driver"): its runs so far and the last one's text
        self._places: dict[str, dict[str, tuple[int, str]]] = {}

    def _specs(
        self,
        plan: StagePlan,
        inputs: list[TaskInput],
        *,
        run: str,
        end_of_input: bool = False,
        defer_bins: bool = False,
        first_index: int = 0,
    ) -> list[TaskSpec]:
        wal = self.repos.flowfiles
        paths = self.repos.paths
        batch_time = now_ms()
        states = {m.component_id: wal.state(m.component_id) for m in plan.members}
        states |= {s.state_key: wal.state(s.state_key) for s in plan.services.values()}
        states = {k: v for k, v in states.items() if v}
        loggers = [processor_logger(m.type_name) for m in plan.members]
        log_levels = {logger.name: lowest_logged_level(logger) for logger in loggers}
        return [
            TaskSpec(
                plan=plan,
                index=index,
                input=task_input,
                paths=paths,
                settings=self.settings,
                batch_time=batch_time,
                first_id=wal.next_flowfile_ids(ID_BLOCK).start,
                states=states,
                end_of_input=end_of_input,
                defer_bins=defer_bins,
                run=run,
                log_levels=log_levels,
            )
            for index, task_input in enumerate(inputs, first_index)
        ]

    def _merge_job(
        self, plan: StagePlan, ready: list[ReadyBin], first_index: int, *, run: str
    ) -> StageJob:
        """The second pass of a binning stage: ready bins merged in parallel tasks."""
        inputs = [TaskInput(bins=tuple(c)) for c in chunk(ready, self.settings.parallelism)]
        return StageJob(plan, tuple(self._specs(plan, inputs, run=run, first_index=first_index)))

    def execute(
        self, job: StageJob, *, run: str, small: bool = False, flowfiles: int = 0
    ) -> list[TaskResult]:
        """Run *job*; a binning stage's ready bins are then merged by a second job of run *run*.

        A *small* job runs in the driver's process: scheduling a Spark job costs more than
        running a few thousand FlowFiles through the same task function here
        (``bench/driver_runs.py``). *flowfiles*, the queued FlowFiles it takes, goes into its
        description on a runner other than the direct one.
        """
        in_driver = small and self.runner.name != "direct"
        runner = self._in_driver if small else self.runner
        results = runner.execute(job)
        described = [runner.describe(job.plan.stage_id) or ""]
        merged = 0
        ready = [b for r in sorted(results, key=lambda r: r.index) for b in r.ready_bins]
        if ready:
            merge = self._merge_job(job.plan, ready, len(job.specs), run=run)
            merged = len(merge.specs)
            results = [*results, *runner.execute(merge)]
            described.append(f"then {runner.describe(job.plan.stage_id)} merging bins")
        text = ", ".join(d for d in described if d)
        if in_driver:
            then = f", then {merged} task(s) merging bins" if merged else ""
            text = (
                f"in the driver ({flowfiles:,} FlowFiles <= driver_run_max_flowfiles): "
                f"{len(job.specs)} task(s){then}"
            )
        self._describe(job.plan.stage_id, "driver" if in_driver else "runner", text)
        return results

    def _describe(self, stage_id: str, place: str, text: str) -> None:
        """Record a stage run's *text*; a stage run in two places shows the last of each."""
        places = self._places.setdefault(stage_id, {})
        runs = places.get(place, (0, ""))[0] + 1
        places[place] = (runs, text)
        if len(places) == 1:
            self.described[stage_id] = text
        else:
            self.described[stage_id] = "; ".join(
                f"{last} ({count} run(s))" for count, last in places.values()
            )

    def job(
        self,
        plan: StagePlan,
        taken: list[SegmentSummary],
        work: list[tuple[str, WorkItem]],
        *,
        run: str,
        end_of_input: bool,
    ) -> StageJob:
        """The job of stage run *run* of *plan*, taking the segments *taken* and source *work*."""
        pairs = [(s.queue_id, s.segment_id) for s in taken]
        if plan.serial:
            # One task sees the state the last stage run committed and leaves the next one's:
            # parallel tasks would each start from the same state, and the commit would keep
            # one task's update only. Its bins are merged where they are decided, for the same
            # reason (a merge task would start from the state before them).
            one = TaskInput(segments=tuple(pairs), work=tuple(work))
            specs = self._specs(plan, [one], run=run, end_of_input=end_of_input)
            return StageJob(plan, tuple(specs))
        if not plan.binning_members:
            inputs = [
                TaskInput(segments=tuple((s.queue_id, s.segment_id) for s in group))
                for group in split_segments(taken, self.settings.parallelism)
            ]
            inputs += self._work_inputs(plan, work)
            specs = self._specs(plan, inputs, run=run, end_of_input=end_of_input)
            return StageJob(plan, tuple(specs))
        if self._single_group[plan.stage_id]:  # a shuffle would gather everything in one task
            one = TaskInput(segments=tuple(pairs), work=tuple(work))
            specs = self._specs(plan, [one], run=run, end_of_input=end_of_input, defer_bins=True)
            return StageJob(plan, tuple(specs))
        partitions = self.settings.shuffle_partitions
        specs = self._specs(
            plan,
            [TaskInput() for _ in range(partitions)],
            run=run,
            end_of_input=end_of_input,
            defer_bins=True,
        )
        if work:
            specs[0] = attrs.evolve(specs[0], input=TaskInput(work=tuple(work)))
        shuffle = ShuffleInput(
            tuple(pairs),
            str(self.repos.flowfiles.segment_dir),
            partitions,
            spill_dir=str(self.repos.flowfiles.shuffle_dir / run),
        )
        return StageJob(plan, tuple(specs), shuffle)

    def _work_inputs(self, plan: StagePlan, work: list[tuple[str, WorkItem]]) -> list[TaskInput]:
        """Source work cut into parallel tasks, in listing order.

        Items are cut into ``parallelism`` contiguous runs, except a large file a source can
        hand its reader as line-aligned blocks (GetFile to SplitText): each of its blocks is a
        task of its own, so one file keeps every core busy (:meth:`_blocks`).
        """
        parts = self.settings.parallelism
        inputs: list[TaskInput] = []
        whole: list[tuple[str, WorkItem]] = []
        for component_id, item in work:
            blocks = self._blocks(plan, component_id, item)
            if blocks is None:
                whole.append((component_id, item))
                continue
            inputs += [TaskInput(work=tuple(c)) for c in chunk(whole, parts)]
            inputs += [TaskInput(work=((component_id, block),)) for block in blocks]
            whole = []
        inputs += [TaskInput(work=tuple(c)) for c in chunk(whole, parts)]
        return inputs

    def _blocks(self, plan: StagePlan, component_id: str, item: WorkItem) -> list[WorkItem] | None:
        """*item* as blocks read by parallel tasks, or None (it is read whole, in one task).

        A file is read in blocks when it holds at least two of ``block_read_min_size`` and its
        source and reader can (``block_reads``): up to ``parallelism`` blocks.
        """
        least = self.settings.block_read_min_bytes
        parts = min(self.settings.parallelism, item.size // least) if least else 0
        if parts < 2:
            return None
        source = plan.member(component_id)
        reads = getattr(source.processor, "block_reads", None)
        reader = block_reader(plan, source)
        if reads is None or reader is None:
            return None
        return reads(item, reader.processor, reader.dropped, parts)
