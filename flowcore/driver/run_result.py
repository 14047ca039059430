"""What a run reports: progress after each stage run, and the result at its end.

Kept apart from the controller that produces them: the CLI, ``flow.run(...)`` and benchmarks
read these values without needing the controller's machinery.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from repositories.records import Bulletin

__all__ = [
    "EXIT_STUCK",
    "InputProgress",
    "RunProgress",
    "RunResult",
    "StageProgress",
    "stage_summary",
    "why_stuck",
]

#: ``flowcore run``'s exit status when a batch run ends with FlowFiles it could not finish
#: (2 is a user's mistake, 1 an internal error).
EXIT_STUCK = 3


def why_stuck(
    reader: str | None,
    *,
    parked: bool = False,
    failed: bool = False,
    full_outputs: Sequence[str] = (),
    in_bins: bool = False,
    returned: bool = False,
    unscheduled: str | None = None,
) -> str:
    """Why FlowFiles stay in a queue at the end of a batch run, in words a user can act on.

    Args:
        reader: the name of the processor that reads the queue; None when no connection of
            the flow leads from it any more (the flow changed since they were queued).
        parked: the queue holds FlowFiles returned after the reader failed on them.
        failed: the reader raised errors (bulletins) in this run.
        full_outputs: labels of the reader's output queues at their back-pressure threshold,
            which kept it from running.
        in_bins: FlowFiles sit in the reader's open bins (it bins, as MergeContent does).
        returned: FlowFiles were handed back penalized or after a failure; a batch run does not
            wait for them.
        unscheduled: why the reader's ``on_scheduled`` raised, when it did (it never ran).
    """
    if reader is None:
        return "no connection of the flow reads this queue any more; add the connection back"
    if unscheduled:
        return (
            f"{reader} could not be scheduled: {unscheduled} (see the bulletins); fix what "
            "on_scheduled needs, a later run schedules it again"
        )
    if full_outputs:
        held = " (its open bins included)" if in_bins else ""
        return (
            f"{reader} could not run{held}: its output queue {', '.join(full_outputs)} is at its "
            "back-pressure threshold and nothing drained it; raise the threshold or fix what "
            "holds that queue"
        )
    if parked or (returned and failed):
        return (
            f"returned after processor errors in {reader} (see the bulletins); a later run "
            "retries them"
        )
    if returned:
        return "penalized past the end of the run; a later run takes them"
    if in_bins:
        return f"held in open bins of {reader} that cannot complete"
    return f"not taken by {reader} before the run ended (it kept yielding or refusing)"


@attrs.frozen
class StageProgress:
    """One stage's totals so far in a run (NiFi's In and Out, per stage).

    Attributes:
        stage_id: ``stage-N``.
        name: its processors' names, upstream first, joined by ``+``.
        flowfiles_in: source work items read and FlowFiles its processors consumed.
        flowfiles_out: FlowFiles it put on its output connections (durable queues).
        runs: stage runs committed.
    """

    stage_id: str
    name: str
    flowfiles_in: int = 0
    flowfiles_out: int = 0
    runs: int = 0


@attrs.frozen
class InputProgress:
    """How much of the sources' known input a run has read: a percentage and an ETA.

    GetFile knows its listed files and their sizes, FileSplitter its blocks.

    Attributes:
        read_items: work items read so far in this run.
        read_bytes: their bytes (0 when the sources do not say).
        pending_items: work items listed and not read yet.
        pending_bytes: their bytes, or None when a source knows only the count.
    """

    read_items: int
    read_bytes: int
    pending_items: int
    pending_bytes: int | None

    @property
    def by_bytes(self) -> bool:
        """Whether the fraction counts bytes (every source said), not work items."""
        return self.pending_bytes is not None and self.read_bytes > 0

    @property
    def fraction(self) -> float | None:
        """Read over read plus pending: 0.0 to 1.0, None before anything is known."""
        if self.by_bytes:
            assert self.pending_bytes is not None
            done, total = self.read_bytes, self.read_bytes + self.pending_bytes
        else:
            done, total = self.read_items, self.read_items + self.pending_items
        return done / total if total else None

    def eta_seconds(self, elapsed_seconds: float) -> float | None:
        """Seconds left to read what is pending at the rate so far; None when unknown."""
        fraction = self.fraction
        if not fraction or elapsed_seconds <= 0:
            return None
        return elapsed_seconds * (1 - fraction) / fraction


@attrs.frozen
class RunProgress:
    """Reported after every stage run that made progress (the CLI's progress display).

    Attributes:
        micro_batch: the micro-batch's number.
        stage_id: the stage that ran.
        flowfiles_in: source work items read and FlowFiles consumed by the stage run.
        queued: FlowFiles queued anywhere after its commit.
        flowfiles_out: FlowFiles the stage run put on its output connections.
        elapsed_seconds: since the run started.
        stages: every stage's totals so far, in execution order.
        input: how much of the sources' known input is read; None when no source knows.
    """

    micro_batch: int
    stage_id: str
    flowfiles_in: int
    queued: int
    flowfiles_out: int = 0
    elapsed_seconds: float = 0.0
    stages: tuple[StageProgress, ...] = ()
    input: InputProgress | None = None


@attrs.frozen
class RunResult:
    """What a run did.

    Attributes:
        flow: the flow's name.
        runner: ``direct`` or ``spark``.
        repository: the repository directory.
        micro_batches: micro-batches run.
        stage_runs: stage runs committed.
        elapsed_seconds: wall time of the run.
        transfers: per component name, per relationship: ``(FlowFiles, bytes)``.
        received: per component name, FlowFiles taken from its input.
        provenance_events: events indexed by this run.
        queued: per connection label, ``(FlowFiles, bytes)`` still queued at the end.
        stuck: per connection label in *queued*, why its FlowFiles did not progress. A batch
            run that ends with FlowFiles queued could not finish them: ``flowcore run`` says
            so and exits with :data:`EXIT_STUCK`.
        bulletins: processor errors of this run.
        unscheduled: per component name, why its ``on_scheduled`` raised, for processors that
            never ran and that no queue in *stuck* names (a source): the run could not finish.
        disabled: per connection label in *queued*, the name of the disabled processor its
            FlowFiles wait for. That is what the flow says (NiFi's DISABLED state), not work
            the run failed to do: they are in *queued* but not in *stuck*.
        plan: the explain plan, with what the runner did per stage.
        sinks: per two-phase sink name, its last published state (a dataset's version, chunk
            count and auto-merge figures).
        master: the Spark master the run's session ran on (its SparkContext's, whoever started
            it); None for the direct runner.
    """

    flow: str
    runner: str
    repository: str
    micro_batches: int
    stage_runs: int
    elapsed_seconds: float
    transfers: dict[str, dict[str, tuple[int, int]]]
    received: dict[str, int]
    provenance_events: int
    queued: dict[str, tuple[int, int]]
    bulletins: tuple[Bulletin, ...]
    plan: str
    sinks: dict[str, dict[str, str]] = attrs.field(factory=dict)
    stuck: dict[str, str] = attrs.field(factory=dict)
    unscheduled: dict[str, str] = attrs.field(factory=dict)
    master: str | None = None
    disabled: dict[str, str] = attrs.field(factory=dict)

    @property
    def finished(self) -> bool:
        """Whether a batch run did all its work.

        Nothing is left queued but for disabled processors, and every processor ran.
        """
        return set(self.queued) <= set(self.disabled) and not self.unscheduled

    def waiting_for_disabled(self) -> dict[str, tuple[int, int]]:
        """Per disabled processor name, the FlowFiles and bytes queued for it."""
        totals: dict[str, tuple[int, int]] = {}
        for label, name in self.disabled.items():
            count, size = self.queued[label]
            before = totals.get(name, (0, 0))
            totals[name] = (before[0] + count, before[1] + size)
        return totals

    def count(self, component: str, relationship: str) -> int:
        """FlowFiles *component* (a name) sent to *relationship* in this run."""
        return self.transfers.get(component, {}).get(relationship, (0, 0))[0]

    def summary(self) -> str:
        """A short text report."""
        lines = [
            f"flow '{self.flow}' on {self.runner}{f' ({self.master})' if self.master else ''}: "
            f"{self.micro_batches} micro-batch(es), "
            f"{self.stage_runs} stage run(s) in {self.elapsed_seconds:.2f} s",
        ]
        for component, relationships in self.transfers.items():
            for relationship, (count, size) in sorted(relationships.items()):
                lines.append(f"  {component} -> {relationship}: {count} FlowFiles, {size} bytes")
        lines.append(f"  provenance events: {self.provenance_events}")
        for label, (count, size) in self.queued.items():
            why = self.stuck.get(label)
            if label in self.disabled:
                why = f"waits for disabled {self.disabled[label]}"
            lines.append(
                f"  still queued in {label}: {count} FlowFiles, {size} bytes"
                + (f" ({why})" if why else "")
            )
        lines.extend(
            f"  {name} never ran: it could not be scheduled: {why}"
            for name, why in self.unscheduled.items()
        )
        lines.extend(f"  bulletin: {b.component_name}: {b.message}" for b in self.bulletins)
        return "\n".join(lines)


def stage_summary(result: RunResult) -> dict[str, Any]:
    """The result as JSON-ready data (for ``--json`` and benchmarks)."""
    return attrs.asdict(result)
