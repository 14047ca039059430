"""What a run reports: progress after each stage run, and the result at its end.

Kept apart from the controller that produces them: the CLI, ``flow.run(...)`` and benchmarks
read these values without needing the controller's machinery.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from flowcore.engine._bulletins import brief, reason_key, repeated
from repositories.records import Bulletin

if TYPE_CHECKING:
    from flowcore.compiler.plan import MemberPlan

__all__ = [
    "EXIT_FAILED",
    "EXIT_STUCK",
    "FAILED_RELATIONSHIPS",
    "FAILURE",
    "FailedFlowFiles",
    "InputProgress",
    "LoggedReason",
    "RunProgress",
    "RunResult",
    "StageProgress",
    "failed_flowfiles",
    "logged_reasons",
    "stage_summary",
    "why_stuck",
]

#: ``flowcore run``'s exit status when a batch run ends with FlowFiles it could not finish
#: (2 is a user's mistake, 1 an internal error).
EXIT_STUCK = 3
#: ``flowcore run``'s exit status when a batch run finished but dropped FlowFiles at an
#: auto-terminated ``failure`` (:attr:`RunResult.failed`); :data:`EXIT_STUCK` comes first.
EXIT_FAILED = 4
#: The relationship whose auto-terminated FlowFiles a run reports as lost: NiFi's convention
#: for "this FlowFile could not be processed".
FAILURE = "failure"
#: Every relationship name (compared without case: InvokeHTTP says ``Failure``) whose
#: auto-terminated FlowFiles a run reports as lost: ``failure``, and ``retry`` / ``no retry``
#: (InvokeHTTP's, PutSQL's, PutDatabaseRecord's), FlowFiles the processor could not deliver.
#: Other relationships some processors route problems to (FetchFile's ``not.found``,
#: ``permission.denied``; ``unmatched``) are outcomes a flow may expect, and are not counted.
FAILED_RELATIONSHIPS = frozenset({FAILURE, "retry", "no retry"})
#: Reasons a count line shows per processor; the rest are summed in one more line.
MAX_REASON_LINES = 5
#: Distinct bulletins a summary shows per component; the rest are summed in one more line.
MAX_BULLETIN_LINES = 10


@attrs.frozen
class LoggedReason:
    """One reason a processor logged (WARNING or above) in a run, and how many times.

    Records alike once the FlowFile they name is masked share a reason (see
    :func:`~flowcore.engine._bulletins.reason_key`).

    Attributes:
        message: the first record's message, naming its FlowFile; None for records of other
            reasons that a task counted together past its bulletin limit.
        count: the records with this reason, including those past the bulletin limit.
    """

    message: str | None
    count: int


def logged_reasons(bulletins: Iterable[Bulletin]) -> tuple[LoggedReason, ...]:
    """*bulletins* (one component's) as distinct reasons with their counts, first seen first.

    A bulletin a task made past its limit counts the records it stands for
    (:func:`~flowcore.engine._bulletins.repeated`); the rest count one each.
    """
    counts: dict[str | None, list[Any]] = {}
    for bulletin in bulletins:
        said = repeated(bulletin.message)
        message, count = (bulletin.message, 1) if said is None else (said.message, said.count)
        key = None if message is None else reason_key(message)
        seen = counts.setdefault(key, [message, 0])
        seen[1] += count
    return tuple(LoggedReason(message, count) for message, count in counts.values())


@attrs.frozen
class FailedFlowFiles:
    """What one processor dropped at its auto-terminated ``failure`` in a run, and why.

    NiFi's routing is unchanged (they were dropped, with a DROP event each); this is the
    report. A ``failure`` connected to another processor is handled by the flow, not lost,
    and not reported here.

    Attributes:
        processor_type: the processor's type (``PutFile``).
        count: FlowFiles it sent to ``failure``.
        size: their bytes.
        reasons: what it logged (WARNING or above) in the run, by distinct reason, first seen
            first; empty when it logged nothing.
        relationships: the auto-terminated relationships (of :data:`FAILED_RELATIONSHIPS`)
            that dropped them, as the processor names them.
    """

    processor_type: str
    count: int
    size: int
    reasons: tuple[LoggedReason, ...] = ()
    relationships: tuple[str, ...] = (FAILURE,)

    @property
    def where(self) -> str:
        """The relationships they were dropped at, as the flow names them (``Failure, Retry``)."""
        return ", ".join(self.relationships)

    @property
    def reason(self) -> str | None:
        """The first reason the processor gave (its first bulletin of the run), if any."""
        return next((r.message for r in self.reasons if r.message is not None), None)

    @property
    def one_per_flowfile(self) -> bool:
        """Whether it logged one record per FlowFile sent to failure (counts are FlowFiles)."""
        return sum(r.count for r in self.reasons) == self.count

    def lines(self, name: str) -> list[str]:
        """One line per distinct reason, with its count (at most :data:`MAX_REASON_LINES`+1).

        When the processor logged one record per failed FlowFile, a reason's count is its
        FlowFiles; otherwise each line gives the FlowFiles and how often the reason was logged.
        """
        who = f"{self.processor_type} '{name}'"
        lost = f"{self.count} FlowFile(s) to {self.where}"
        if not self.reasons:
            return [f"{who}: {lost} (it logged no reason; their DROP events are in provenance)"]
        exact = self.one_per_flowfile
        shown = [r for r in self.reasons if r.message is not None][:MAX_REASON_LINES]
        lines = []
        for reason in shown:
            text = brief(reason.message or "")
            lines.append(
                f"{who}: {reason.count} FlowFile(s) to {self.where}: {text}"
                if exact
                else f"{who}: {lost}; it logged {reason.count} time(s): {text}"
            )
        rest = [r for r in self.reasons if r not in shown]
        if rest:
            count = sum(r.count for r in rest)
            what = (
                f"{count} FlowFile(s) to {self.where}"
                if exact
                else f"{lost}; it logged {count} time(s)"
            )
            lines.append(f"{who}: {what} for other reasons: see the bulletins (flowcore status)")
        return lines


def failed_flowfiles(
    members: Iterable[MemberPlan],
    transfers: Mapping[str, Mapping[str, tuple[int, int]]],
    bulletins: Sequence[Bulletin],
) -> dict[str, FailedFlowFiles]:
    """Per component name, what it dropped at an auto-terminated ``failure`` in a run.

    Args:
        members: the flow's members (their auto-terminated, unconnected relationships).
        transfers: per component name, per relationship: ``(FlowFiles, bytes)`` of the run.
        bulletins: the run's bulletins; each processor's give its reasons.
    """
    failed = {}
    for member in members:
        dropped = sorted(r for r in member.dropped if r.lower() in FAILED_RELATIONSHIPS)
        moved = transfers.get(member.name, {})
        counts = {r: moved.get(r, (0, 0)) for r in dropped}
        count, size = sum(c for c, _ in counts.values()), sum(b for _, b in counts.values())
        if count:
            failed[member.name] = FailedFlowFiles(
                member.type_name,
                count,
                size,
                logged_reasons(b for b in bulletins if b.component_id == member.component_id),
                tuple(r for r, (c, _) in counts.items() if c),
            )
    return failed


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
    if failed and (parked or returned):
        return (
            f"returned after processor errors in {reader} (see the bulletins); a later run "
            "retries them"
        )
    if parked or returned:  # no error in the reader: penalized upstream (a routed failure)
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
        yielded: per source name, why a batch run stopped listing a bounded source that was
            not exhausted: its listing yielded with nothing listed time after time
            (QueryDatabaseTable while its database is down). The run could not finish.
        list_failed: per source name, one line saying why its listing raised (a missing
            bucket, a refused password) and what to fix: a batch run stopped listing it, and
            ``flowcore run`` ends with that line and exits with 2 (3 when FlowFiles are left).
        disabled: per connection label in *queued*, the name of the disabled processor its
            FlowFiles wait for. That is what the flow says (NiFi's DISABLED state), not work
            the run failed to do: they are in *queued* but not in *stuck*.
        dead_ends: per connection label in *queued*, the name of the funnel with no outgoing
            connection its FlowFiles wait before. NiFi keeps them queued there; like
            *disabled*, they are in *queued* but not in *stuck*.
        plan: the explain plan, with what the runner did per stage.
        sinks: per two-phase sink name, its last published state (a dataset's version, chunk
            count and auto-merge figures).
        master: the Spark master the run's session ran on (its SparkContext's, whoever started
            it); None for the direct runner.
        failed: per component name, the FlowFiles it dropped at an auto-terminated
            ``failure``, with the reasons it logged. A batch run that did so did not lose
            track of them (NiFi drops them so), but did not do that work either:
            ``flowcore run`` says so, one line per reason, and exits with
            :data:`EXIT_FAILED`.
        renamed: components renamed since the repository's last run, old name -> new name:
            each kept its id, so its state, queues and provenance (DESIGN §9c).
        start_seconds: what the runner took to start before the run (a Spark session and its
            workers), apart from *elapsed_seconds*; None for the direct runner.
        tasks_duration_nanos: per component name, the nanoseconds its tasks ran (NiFi's
            task time, summed over parallel tasks as NiFi sums its threads').
        pending_after_commit: after-commit action batches (COMMIT PREPARED, SFTP deletes) of
            committed FlowFiles not carried out when the run stopped: kept in the repository,
            carried out at the next start (a warning bulletin says so).
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
    yielded: dict[str, str] = attrs.field(factory=dict)
    list_failed: dict[str, str] = attrs.field(factory=dict)
    master: str | None = None
    disabled: dict[str, str] = attrs.field(factory=dict)
    dead_ends: dict[str, str] = attrs.field(factory=dict)
    failed: dict[str, FailedFlowFiles] = attrs.field(factory=dict)
    renamed: dict[str, str] = attrs.field(factory=dict)
    start_seconds: float | None = None
    tasks_duration_nanos: dict[str, int] = attrs.field(factory=dict)
    pending_after_commit: int = 0

    def failure_lines(self) -> list[str]:
        """One line per processor and distinct reason it dropped FlowFiles at ``failure``."""
        return [line for name, failed in self.failed.items() for line in failed.lines(name)]

    @property
    def finished(self) -> bool:
        """Whether a batch run did all its work.

        Nothing is left queued but for disabled processors and before funnels with no outgoing
        connection, and every processor ran.
        """
        waiting = set(self.disabled) | set(self.dead_ends)
        return set(self.queued) <= waiting and not self.unscheduled and not self.yielded

    def waiting_for_disabled(self) -> dict[str, tuple[int, int]]:
        """Per disabled processor name, the FlowFiles and bytes queued for it."""
        return self._totals(self.disabled)

    def waiting_before_funnels(self) -> dict[str, tuple[int, int]]:
        """Per funnel with no outgoing connection, the FlowFiles and bytes queued before it."""
        return self._totals(self.dead_ends)

    def _totals(self, waiting: dict[str, str]) -> dict[str, tuple[int, int]]:
        totals: dict[str, tuple[int, int]] = {}
        for label, name in waiting.items():
            count, size = self.queued[label]
            before = totals.get(name, (0, 0))
            totals[name] = (before[0] + count, before[1] + size)
        return totals

    def count(self, component: str, relationship: str) -> int:
        """FlowFiles *component* (a name) sent to *relationship* in this run."""
        return self.transfers.get(component, {}).get(relationship, (0, 0))[0]

    def work_and_time(self) -> str:
        """What ran and how long, the runner's start apart from the run's own time.

        ``2 micro-batch(es), 3 stage run(s) in 1.50 s`` on the direct runner;
        ``session started in 2.90 s; flow ran in 1.10 s: 2 micro-batch(es), 3 stage run(s)``
        on Spark, where the session's start is most of a short run's wait (``session reused``
        when it was already running).
        """
        work = f"{self.micro_batches} micro-batch(es), {self.stage_runs} stage run(s)"
        if self.start_seconds is None:
            return f"{work} in {self.elapsed_seconds:.2f} s"
        start = (
            f"session started in {self.start_seconds:.2f} s"
            if self.start_seconds
            else "session reused"
        )
        return f"{start}; flow ran in {self.elapsed_seconds:.2f} s: {work}"

    def summary(self) -> str:
        """A short text report."""
        lines = [
            f"flow '{self.flow}' on {self.runner}{f' ({self.master})' if self.master else ''}: "
            f"{self.work_and_time()}",
        ]
        lines.extend(
            f"  renamed: {old} -> {new} (its state and queues kept)"
            for old, new in self.renamed.items()
        )
        for component, relationships in self.transfers.items():
            for relationship, (count, size) in sorted(relationships.items()):
                lines.append(f"  {component} -> {relationship}: {count} FlowFiles, {size} bytes")
        lines.append(f"  provenance events: {self.provenance_events}")
        for label, (count, size) in self.queued.items():
            why = self.stuck.get(label)
            if label in self.disabled:
                why = f"waits for disabled {self.disabled[label]}"
            if label in self.dead_ends:
                why = f"waits before funnel '{self.dead_ends[label]}', no outgoing connection"
            lines.append(
                f"  still queued in {label}: {count} FlowFiles, {size} bytes"
                + (f" ({why})" if why else "")
            )
        lines.extend(
            f"  {name} never ran: it could not be scheduled: {why}"
            for name, why in self.unscheduled.items()
        )
        lines.extend(f"  {name} stopped listing: {why}" for name, why in self.yielded.items())
        lines.extend(f"  error: {why}" for why in self.list_failed.values())
        lines.extend(f"  failed: {line}" for line in self.failure_lines())
        if self.pending_after_commit:
            lines.append(
                f"  after-commit: {self.pending_after_commit} action batch(es) of committed "
                "FlowFiles pending (kept in the repository, carried out at the next start)"
            )
        for name, reasons in self.bulletin_reasons().items():
            for reason in reasons:
                if reason.message is None:
                    lines.append(f"  bulletin: {name}: {reason.count} more, of other reasons")
                else:
                    times = f" ({reason.count} like this)" if reason.count > 1 else ""
                    lines.append(f"  bulletin: {name}: {reason.message}{times}")
        return "\n".join(lines)

    def bulletin_reasons(
        self, limit: int = MAX_BULLETIN_LINES
    ) -> dict[str, tuple[LoggedReason, ...]]:
        """Per component name, its bulletins of the run as distinct reasons with counts.

        At most *limit* reasons each, first seen first; the rest are summed into one more,
        whose message is None (what a report prints as "of other reasons").
        """
        names: dict[str, list[Bulletin]] = {}
        for bulletin in self.bulletins:
            names.setdefault(bulletin.component_name, []).append(bulletin)
        kept = {}
        for name, bulletins in names.items():
            reasons = logged_reasons(bulletins)
            shown = [r for r in reasons if r.message is not None][:limit]
            rest = sum(r.count for r in reasons if r not in shown)
            kept[name] = (*shown, LoggedReason(None, rest)) if rest else tuple(shown)
        return kept


def stage_summary(result: RunResult) -> dict[str, Any]:
    """The result as JSON-ready data (for ``--json`` and benchmarks)."""
    return attrs.asdict(result)
