"""The plan of a stage: its members, their processors and routes, the queues it reads.

The compiler's last phase turns each :class:`~flowcore.compiler.stages.Stage` into a
:class:`StagePlan` once; every task of the stage is given it (through
:class:`~flowcore.engine.wire.TaskSpec`). It crosses the Spark wire, so it holds configuration
and names, never open files.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from flowcore.controller_service import ControllerService
from flowcore.definition.component_settings import Prioritizer, RetrySettings
from flowcore.definition.flow import FUNNEL_RELATIONSHIP
from flowcore.processor.base import Processor, ProcessorKind

__all__ = [
    "MemberPlan",
    "Route",
    "StagePlan",
    "block_reader",
    "serial",
]


def serial(processor: Processor | None, services: Mapping[str, ControllerService]) -> bool:
    """Whether *processor* must not run in two tasks at once.

    It triggers serially (NiFi's ``@TriggerSerially``, or state read and written per FlowFile)
    or names one of *services* whose entries are one shared state (a map cache:
    ``ControllerService.holds_shared_state``). A service of configuration only (an SSL context,
    a record reader) leaves its processors' tasks parallel.
    """
    if processor is None:
        return False
    if processor.runs_serially():
        return True
    named = (services.get(name) for name in processor.referenced_services().values())
    return any(service is not None and service.holds_shared_state for service in named)


@attrs.frozen
class Route:
    """One connection a relationship leads to.

    Attributes:
        connection_id: the connection (a queue id when durable).
        member: the member it feeds inside the stage (pipelined), or None when it is durable.
    """

    connection_id: str
    member: str | None


@attrs.frozen(eq=False)
class MemberPlan:
    """A component of a stage with its routing.

    Attributes:
        component_id: the flow's component id.
        name: the component's name.
        type_name: the processor class name, or ``Funnel``.
        processor: the configured processor (None for a funnel).
        routes: each relationship's connections, in the order they were made.
        auto_terminated: relationships whose FlowFiles are dropped unless connected: those
            the user auto-terminated and those the processor declares so by default.
        has_input: whether anything feeds the component (NiFi's ``hasIncomingConnection``).
        has_non_loop_input: whether another component feeds it (NiFi's
            ``hasNonLoopConnection``; None: as *has_input*).
        concurrent_tasks: triggers of a source per micro-batch (NiFi's Concurrent Tasks).
        run_schedule_ms: the Run Schedule in a continuous run (0: as often as there is room
            or input); a source's triggers, any other member's stage runs at most once per
            period.
        cron: the Run Schedule under the CRON_DRIVEN strategy (a cron expression), or None.
        penalty_ms: NiFi's Penalty Duration of the component (None: the engine setting).
        yield_ms: NiFi's Yield Duration of the component (None: the engine setting).
        retry: NiFi's relationship retry settings, or None.
        disabled: the member never runs, its input waits queued: NiFi's DISABLED state, or
            a funnel with no outgoing connection (NiFi keeps its FlowFiles queued too).
    """

    component_id: str
    name: str
    type_name: str
    processor: Processor | None
    routes: Mapping[str, tuple[Route, ...]]
    auto_terminated: frozenset[str]
    has_input: bool
    concurrent_tasks: int = 1
    run_schedule_ms: int = 0
    cron: str | None = None
    penalty_ms: int | None = None
    yield_ms: int | None = None
    retry: RetrySettings | None = None
    disabled: bool = False
    has_non_loop_input: bool | None = None

    @property
    def kind(self) -> ProcessorKind:
        """The processor's kind (a funnel is per-FlowFile)."""
        return self.processor.kind if self.processor is not None else ProcessorKind.PER_FLOWFILE

    @property
    def dropped(self) -> frozenset[str]:
        """The relationships whose FlowFiles are dropped: auto-terminated, and not connected.

        NiFi's rule: a relationship with a connection is never auto-terminated.
        """
        return frozenset(name for name in self.auto_terminated if not self.routes.get(name))

    @property
    def routes_whole(self) -> bool:
        """Whether every relationship leads to exactly one destination.

        Then nothing is dropped or cloned, so a FlowFile batch can go on whole.
        """
        processor = self.processor
        names = processor.relationship_names() if processor is not None else (FUNNEL_RELATIONSHIP,)
        return all(len(self.routes.get(name, ())) == 1 for name in names)

    @property
    def routes_or_drops_whole(self) -> bool:
        """Whether every relationship leads to one destination or is auto-terminated.

        Then nothing is cloned: a batch a processor routes goes on whole or is dropped whole.
        """
        processor = self.processor
        names = processor.relationship_names() if processor is not None else (FUNNEL_RELATIONSHIP,)
        dropped = self.dropped
        return all(len(self.routes.get(name, ())) == 1 or name in dropped for name in names)


@attrs.frozen(eq=False)
class StagePlan:
    """A stage ready to ship: members upstream first and where its input queues lead.

    Attributes:
        stage_id: the compiled stage's id.
        members: the members, upstream first.
        queue_members: each input queue (durable connections and park queues) with the member
            it feeds.
        expiration_ms: FlowFile expiration per input queue (absent: never).
        prioritizers: prioritizers per input queue (absent: FIFO).
        services: the services its members name, by name (their state travels with tasks).
        disabled_queues: the input queues of disabled members, each with its member: nothing
            takes from them (they are not in *queue_members*).
    """

    stage_id: str
    members: tuple[MemberPlan, ...]
    queue_members: Mapping[str, str]
    expiration_ms: Mapping[str, int]
    prioritizers: Mapping[str, tuple[Prioritizer, ...]]
    services: Mapping[str, ControllerService] = attrs.field(factory=dict)
    disabled_queues: Mapping[str, str] = attrs.field(factory=dict)

    def member(self, component_id: str) -> MemberPlan:
        """A member by component id."""
        return next(m for m in self.members if m.component_id == component_id)

    @property
    def binning_members(self) -> tuple[MemberPlan, ...]:
        """Members whose input must be grouped by key (a shuffle on Spark); disabled ones aside."""
        return tuple(m for m in self.members if m.kind is ProcessorKind.BINNING and not m.disabled)

    @property
    def serial_members(self) -> tuple[MemberPlan, ...]:
        """Members that must not run in two tasks at once.

        Those that trigger serially (NiFi's ``@TriggerSerially``, or state read and written
        per FlowFile) and those that name a service whose entries are one shared state.
        """
        return tuple(
            m for m in self.members if not m.disabled and serial(m.processor, self.services)
        )

    @property
    def serial(self) -> bool:
        """Whether each run of the stage is one task (see :attr:`serial_members`)."""
        return bool(self.serial_members)

    @property
    def source_members(self) -> tuple[MemberPlan, ...]:
        """Members that list work on the driver (disabled ones list nothing)."""
        return tuple(m for m in self.members if m.kind is ProcessorKind.SOURCE and not m.disabled)

    @property
    def scheduled_members(self) -> tuple[MemberPlan, ...]:
        """Members that take queued input and run on a schedule (a period, or a cron).

        The compiler gives each a stage of its own, which runs only when it comes due.
        """
        return tuple(
            m
            for m in self.members
            if m.kind is not ProcessorKind.SOURCE and (m.run_schedule_ms > 0 or m.cron)
        )


def block_reader(plan: StagePlan, source: MemberPlan) -> MemberPlan | None:
    """The member *source* feeds alone, in the same stage, or None.

    A source whose every FlowFile goes to one member through one pipelined connection (no
    fan-out, nothing dropped) may hand that member a large file as blocks read by parallel
    tasks, when the member can split blocks (GetFile to SplitText: ``block_reads``).
    """
    processor = source.processor
    if processor is None or source.disabled:
        return None
    names = processor.relationship_names()
    if len(names) != 1:
        return None
    routes = source.routes.get(names[0], ())
    if len(routes) != 1 or routes[0].member is None:
        return None
    reader = plan.member(routes[0].member)
    return None if reader.disabled else reader
