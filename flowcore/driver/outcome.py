"""A run's outcome: its :class:`RunResult`, built from what the controller kept during the run.

The result says what is left queued and why (stuck, waiting for a disabled processor, before a
dead end), what failed, and the plan with what the runner did for each stage. Kept apart from
the controller, which only drives micro-batches, and from :mod:`flowcore.driver.run_result`,
which holds the values without the machinery that fills them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from flowcore.compiler.plan import StagePlan
from flowcore.compiler.stages import CompiledFlow, explain
from flowcore.definition.queues import parked_component
from flowcore.driver.run_result import RunResult, failed_flowfiles, why_stuck
from flowcore.engine.wire import SegmentWait
from flowcore.runners.jobs import Runner
from flowcore.settings import Settings
from repositories.records import Bulletin
from repositories.repository_set import RepositorySet

__all__ = ["RunRecord", "explain_run", "reader_of", "run_result", "why_queued"]


@attrs.frozen
class RunRecord:
    """What the controller kept during a run, as its result reads it when the run ends.

    Attributes:
        compiled: the flow as compiled (and claimed for the repository).
        plans: each stage's plan, by stage id.
        repositories: the run's repositories (its queues are read here).
        settings: the engine settings (``explain`` shows them).
        runner: the runner that executed the tasks.
        waits: why queued segments that tasks handed back wait, by segment id.
        held_back: each stage held back by back pressure, with its full output queues.
        transfers: per component name and relationship, ``[count, bytes]`` transferred.
        received: per component name, the FlowFiles its tasks took in.
        nanos: per component name, its tasks' time.
        bulletins: every bulletin of the run (the driver's and the tasks').
        unscheduled: component id -> why its ``on_scheduled`` raised in tasks.
        sources_unscheduled: component id -> why the driver could not schedule a source.
        sources_yielded: component id -> why a batch run stopped listing a source that was
            not exhausted (its listing kept yielding with nothing listed).
        sources_list_failed: component id -> why a source's listing raised (a batch run
            stopped listing it).
        described: what the runner did for each stage's last run, by stage id.
        label: a queue's name for people (its connection described).
        name_of: a component's name from its id.
    """

    compiled: CompiledFlow
    plans: Mapping[str, StagePlan]
    repositories: RepositorySet
    settings: Settings
    runner: Runner
    waits: Mapping[str, SegmentWait]
    held_back: Mapping[str, Sequence[str]]
    transfers: Mapping[str, Mapping[str, Sequence[int]]]
    received: Mapping[str, int]
    nanos: Mapping[str, int]
    bulletins: Sequence[Bulletin]
    unscheduled: Mapping[str, str]
    sources_unscheduled: Mapping[str, str]
    sources_yielded: Mapping[str, str]
    sources_list_failed: Mapping[str, str]
    described: Mapping[str, str]
    label: Callable[[str], str]
    name_of: Callable[[str], str]


def run_result(
    record: RunRecord,
    *,
    micro_batches: int,
    stage_runs: int,
    elapsed: float,
    events: int,
    sinks: Mapping[str, Mapping[str, str]],
    pending_after_commit: int,
    renamed: Mapping[str, str],
) -> RunResult:
    """The result of a run that ended: what it moved, and what it left queued and why."""
    flow = record.compiled.flow
    wal = record.repositories.flowfiles
    queued: dict[str, tuple[int, int]] = {}
    stuck: dict[str, str] = {}
    disabled: dict[str, str] = {}
    dead_ends: dict[str, str] = {}
    readers = set()
    waiting_for = {q: m for p in record.plans.values() for q, m in p.disabled_queues.items()}
    funnels = {c.id for c in flow.components if flow.is_dead_end(c)}
    for queue_id in wal.queue_ids():
        count, size = wal.queue_size(queue_id)
        if count:
            label = record.label(queue_id)
            queued[label] = (count, size)
            if queue_id in waiting_for:  # intentional: not stuck
                member = waiting_for[queue_id]
                waits = dead_ends if member in funnels else disabled
                waits[label] = record.name_of(member)
                continue
            stuck[label] = why_queued(record, queue_id)
            readers.add(reader_of(record.plans, queue_id))
    transfers = {
        k: {r: (v[0], v[1]) for r, v in rels.items()} for k, rels in record.transfers.items()
    }
    members = [m for plan in record.plans.values() for m in plan.members]
    runner = record.runner
    return RunResult(
        flow=flow.name,
        runner=runner.name,
        repository=str(record.repositories.directory),
        micro_batches=micro_batches,
        stage_runs=stage_runs,
        elapsed_seconds=elapsed,
        transfers=transfers,
        received=dict(record.received),
        provenance_events=events,
        queued=queued,
        stuck=stuck,
        disabled=disabled,
        dead_ends=dead_ends,
        bulletins=tuple(record.bulletins),
        unscheduled={
            record.name_of(c): why
            for c, why in {**record.unscheduled, **record.sources_unscheduled}.items()
            if c not in readers  # a stuck queue's reason names it already
        },
        yielded={record.name_of(c): why for c, why in record.sources_yielded.items()},
        list_failed={record.name_of(c): why for c, why in record.sources_list_failed.items()},
        plan=explain_run(record.compiled, runner.name, record.settings, record.described),
        sinks={k: dict(v) for k, v in sinks.items()},
        master=runner.master,
        failed=failed_flowfiles(members, transfers, record.bulletins),
        renamed=dict(renamed),
        start_seconds=getattr(runner, "start_seconds", None),
        tasks_duration_nanos=dict(record.nanos),
        pending_after_commit=pending_after_commit,
    )


def reader_of(plans: Mapping[str, StagePlan], queue_id: str) -> str | None:
    """The component id of the member that reads *queue_id* (a parked queue's own)."""
    reader = next((p for p in plans.values() if queue_id in p.queue_members), None)
    if reader is not None:
        return reader.queue_members[queue_id]
    return parked_component(queue_id)


def why_queued(record: RunRecord, queue_id: str) -> str:
    """Why FlowFiles are still in *queue_id* when the run ends (see ``why_stuck``)."""
    segments = {s.segment_id for s in record.repositories.flowfiles.segments(queue_id)}
    reader = next((p for p in record.plans.values() if queue_id in p.queue_members), None)
    component = reader.queue_members[queue_id] if reader is not None else None
    full = record.held_back.get(reader.stage_id, ()) if reader is not None else ()
    waits = [w for s in segments if (w := record.waits.get(s)) is not None]
    return why_stuck(
        None if component is None else record.name_of(component),
        parked=parked_component(queue_id) is not None,
        failed=any(b.component_id == component for b in record.bulletins),
        full_outputs=[record.label(c) for c in full],
        in_bins=any(w.in_bins for w in waits),
        returned=any(w.long for w in waits),
        unscheduled=record.unscheduled.get(component) if component is not None else None,
    )


def explain_run(
    compiled: CompiledFlow, runner: str, settings: Settings, described: Mapping[str, str]
) -> str:
    """The plan, with what the runner did for each stage (*described*, by stage id)."""
    lines = explain(compiled, runner=runner, settings=settings).splitlines()
    out: list[str] = []
    for line in lines:
        out.append(line)
        stage_id = line.split(":", 1)[0]
        if stage_id in compiled.plans:
            ran = described.get(stage_id)
            if ran:
                out.append(f"  ran as: {ran}")
    return "\n".join(out)
