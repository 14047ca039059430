"""What a run shows while it runs: its progress reports and its live status (DESIGN §10).

The controller tells a :class:`RunTracker` what happens (a micro-batch starts, a stage run starts
and commits, source work is read); the tracker keeps the totals that ``flowcore run``'s progress
display shows (:class:`~flowcore.driver.run_result.RunProgress`), and
:func:`status_document` turns them, with the queues, into ``status.json``, which the controller
rewrites when a micro-batch starts, when a stage run starts and after every commit, so
``flowcore status`` shows the run as it is, from another process:

* ``run``: pid, runner, continuous or not, when it started and (once over) ended;
* ``micro_batch``: the number in progress, when it started, the stage running and since when;
* ``connections``: every connection of the flow, queued FlowFiles and bytes (zeros included;
  a pipelined connection holds none between stage runs), its back-pressure thresholds and
  whether it is over them, and how many of its FlowFiles wait on a penalty or in open bins;
* ``held_back``: stages not scheduled because an output connection is over its thresholds;
* ``parked``: per processor, FlowFiles returned after errors (they came by pipelined
  connections); ``penalized``: FlowFiles waiting out a penalty anywhere;
* ``replayed``: FlowFiles replayed from provenance since the run before (REPLAY events), which
  this run picks up;
* ``stages`` and ``input``: the progress totals; ``transfers``: per processor and relationship;
* ``tasks_duration_nanos``: per processor, the nanoseconds its tasks ran this run (NiFi's task
  time: a fused stage's members each their own share, parallel tasks summed).

The keys ``flow``, ``updated``, ``queues``, ``held_back`` and ``transfers`` keep the meaning
they had before the live status.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from flowcore.clock import now_ms
from flowcore.compiler.stages import CompiledFlow
from flowcore.definition.queues import back_pressured, parked_component
from flowcore.driver.run_result import InputProgress, RunProgress, StageProgress
from flowcore.processor.kinds import PendingWork, WorkItem
from repositories.records import SegmentSummary
from repositories.repository_set import RepositorySet, read_status

__all__ = [
    "STATUS_VERSION",
    "RunTracker",
    "Waiting",
    "renew_progress",
    "replayed_since_last_run",
    "status_document",
    "task_duration",
]

#: ``status.json``'s layout version (1: the last commit's queues only, before live status).
STATUS_VERSION = 2
#: REPLAY events counted at most when a run starts (the count is for people, not a ledger).
MAX_REPLAYED_COUNTED = 100_000


@attrs.define
class _Totals:
    flowfiles_in: int = 0
    flowfiles_out: int = 0
    runs: int = 0


class RunTracker:
    """A run's progress as the controller reports it: micro-batches, stage runs, input read.

    Args:
        compiled: the flow being run.
        runner: the runner's name.
        continuous: whether the run is continuous.
        name_of: a component's name by id.
        clock: epoch milliseconds (tests pass their own).
    """

    def __init__(
        self,
        compiled: CompiledFlow,
        *,
        runner: str,
        continuous: bool,
        name_of: Callable[[str], str],
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.runner = runner
        self.continuous = continuous
        self.pid = os.getpid()
        self._clock = clock
        self.started_ms = clock()
        self._started = time.monotonic()
        self.ended_ms: int | None = None
        self.micro_batch = 0
        self.micro_batch_started_ms: int | None = None
        self.running: str | None = None
        self.running_since_ms: int | None = None
        self._names = {s.id: "+".join(name_of(m) for m in s.members) for s in compiled.stages}
        self._totals = {s.id: _Totals() for s in compiled.stages}
        self._last: dict[str, tuple[int, int]] = {}  # each stage's last run: (in, out)
        self.read_items = 0
        self.read_bytes = 0
        self.pending: PendingWork | None = None

    @property
    def elapsed_seconds(self) -> float:
        """Wall time since the run started."""
        return time.monotonic() - self._started

    def micro_batch_started(self, number: int) -> None:
        """Micro-batch *number* begins."""
        self.micro_batch = number
        self.micro_batch_started_ms = self._clock()

    def stage_started(self, stage_id: str) -> None:
        """A stage run's tasks are about to execute."""
        self.running = stage_id
        self.running_since_ms = self._clock()

    def stage_ran(
        self, stage_id: str, flowfiles_in: int, flowfiles_out: int, read: Iterable[WorkItem]
    ) -> None:
        """A stage run is committed: what it took, what it sent on, the source work it read."""
        self._last[stage_id] = (flowfiles_in, flowfiles_out)
        totals = self._totals[stage_id]
        totals.flowfiles_in += flowfiles_in
        totals.flowfiles_out += flowfiles_out
        totals.runs += 1
        for item in read:
            self.read_items += 1
            self.read_bytes += item.size
        self.running = self.running_since_ms = None

    def ended(self) -> None:
        """The run is over (finished, stopped, or failed)."""
        self.ended_ms = self._clock()
        self.running = self.running_since_ms = None

    @property
    def input(self) -> InputProgress | None:
        """How much of the sources' known input is read; None when a source cannot say."""
        if self.pending is None:
            return None
        return InputProgress(
            self.read_items, self.read_bytes, self.pending.items, self.pending.bytes
        )

    def stages(self) -> tuple[StageProgress, ...]:
        """Every stage's totals, in execution order."""
        return tuple(
            StageProgress(stage_id, self._names[stage_id], t.flowfiles_in, t.flowfiles_out, t.runs)
            for stage_id, t in self._totals.items()
        )

    def progress(self, stage_id: str, queued: int) -> RunProgress:
        """The report after *stage_id*'s run, with *queued* FlowFiles queued anywhere now."""
        flowfiles_in, flowfiles_out = self._last.get(stage_id, (0, 0))
        return RunProgress(
            self.micro_batch,
            stage_id,
            flowfiles_in,
            queued,
            flowfiles_out=flowfiles_out,
            elapsed_seconds=self.elapsed_seconds,
            stages=self.stages(),
            input=self.input,
        )


@attrs.frozen
class Waiting:
    """Why a queued segment is not taken now (see :func:`status_document`'s *waiting*).

    Attributes:
        penalized: its FlowFiles wait out a penalty (or a retry after an error).
        in_bins: its FlowFiles sit in open bins of a binning processor.
    """

    penalized: bool = False
    in_bins: bool = False


def status_document(
    tracker: RunTracker,
    compiled: CompiledFlow,
    queues: Mapping[str, Collection[SegmentSummary]],
    *,
    label: Callable[[str], str],
    waiting: Callable[[SegmentSummary], Waiting],
    held_back: Mapping[str, Collection[str]],
    transfers: Mapping[str, Mapping[str, Any]],
    replayed: int,
    tasks_duration_nanos: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The live status (``status.json``) of the run *tracker* follows.

    Args:
        tracker: the run's progress.
        compiled: the flow being run.
        queues: every queue's segment summaries (connections' and park queues).
        label: a queue's label for people.
        waiting: why a segment is not taken now.
        held_back: per stage id, the connections over their thresholds that hold it back.
        transfers: per processor name and relationship, ``[FlowFiles, bytes]`` this run.
        tasks_duration_nanos: per processor name, the nanoseconds its tasks ran this run.
        replayed: FlowFiles replayed from provenance since the run before.
    """
    flow = compiled.flow
    sizes = {q: _sizes(summaries, waiting) for q, summaries in queues.items()}
    connections = []
    for connection in flow.connections:
        size = sizes.get(connection.id, _EMPTY)
        settings = connection.queue_settings
        # As the scheduler counts: FlowFiles held in open bins do not press back.
        pressing = (size["flowfiles"] - size["in_bins"], size["bytes"] - size["in_bins_bytes"])
        connections.append(
            {
                "id": connection.id,
                "label": label(connection.id),
                "durable": connection.id in compiled.durable,
                **size,
                "back_pressure": {
                    "object_threshold": settings.back_pressure_object_threshold,
                    "data_size_threshold": settings.back_pressure_data_size_threshold,
                    "over": back_pressured(connection, pressing),
                },
            }
        )
    parked = {
        label(queue_id): size
        for queue_id, size in sizes.items()
        if parked_component(queue_id) is not None and size["flowfiles"]
    }
    return {
        "version": STATUS_VERSION,
        "flow": flow.name,
        "updated": now_ms(),
        **_progress_sections(tracker),
        "connections": connections,
        "held_back": {s: list(c) for s, c in held_back.items()},
        "parked": parked,
        "penalized": {
            "flowfiles": sum(s["penalized"] for s in sizes.values()),
            "bytes": sum(s["penalized_bytes"] for s in sizes.values()),
        },
        "replayed": replayed,
        "stages": {p.stage_id: attrs.asdict(p) for p in tracker.stages()},
        "input": None if tracker.input is None else attrs.asdict(tracker.input),
        "queues": {
            queue_id: {"label": label(queue_id), "flowfiles": s["flowfiles"], "bytes": s["bytes"]}
            for queue_id, s in sizes.items()
        },
        "transfers": {k: dict(v) for k, v in transfers.items()},
        "tasks_duration_nanos": dict(tasks_duration_nanos or {}),
    }


def task_duration(nanos: int) -> str:
    """*nanos* of task time as NiFi shows Tasks/Time: ``HH:MM:SS.mmm`` (``00:00:00.345``).

    The milliseconds are cut, not rounded, and the hours grow past two digits, as NiFi's
    ``FormatUtils.formatHoursMinutesSeconds`` does.
    """
    millis = max(0, int(nanos)) // 1_000_000
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    seconds, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def renew_progress(status: dict[str, Any], tracker: RunTracker) -> dict[str, Any]:
    """*status* with the run's clock and the micro-batch in progress brought up to date."""
    return {**status, **_progress_sections(tracker), "updated": now_ms()}


def _progress_sections(tracker: RunTracker) -> dict[str, Any]:
    return {
        "run": {
            "pid": tracker.pid,
            "runner": tracker.runner,
            "continuous": tracker.continuous,
            "started": tracker.started_ms,
            "ended": tracker.ended_ms,
            "elapsed_seconds": round(tracker.elapsed_seconds, 3),
        },
        "micro_batch": {
            "number": tracker.micro_batch,
            "started": tracker.micro_batch_started_ms,
            "running": [tracker.running] if tracker.running else [],
            "since": tracker.running_since_ms,
        },
    }


_EMPTY = {
    "flowfiles": 0,
    "bytes": 0,
    "penalized": 0,
    "penalized_bytes": 0,
    "in_bins": 0,
    "in_bins_bytes": 0,
}


def _sizes(
    summaries: Collection[SegmentSummary], waiting: Callable[[SegmentSummary], Waiting]
) -> dict[str, int]:
    sizes = dict(_EMPTY)
    for summary in summaries:
        sizes["flowfiles"] += summary.count
        sizes["bytes"] += summary.bytes
        why = waiting(summary)
        if why.in_bins:
            sizes["in_bins"] += summary.count
            sizes["in_bins_bytes"] += summary.bytes
        elif why.penalized:
            sizes["penalized"] += summary.count
            sizes["penalized_bytes"] += summary.bytes
    return sizes


def replayed_since_last_run(repositories: RepositorySet) -> int:
    """FlowFiles replayed from provenance since the last run ended: this run picks them up.

    Replay needs the repository to itself, so they were all queued before this run started;
    read from the REPLAY events after the end the last run's ``status.json`` records.
    """
    previous = read_status(repositories.directory) or {}
    since = (previous.get("run") or {}).get("ended") or previous.get("updated")
    found = repositories.provenance.search(
        event_type="REPLAY", start=since, limit=MAX_REPLAYED_COUNTED
    )
    return len(found)
