"""The compiler: a validated flow, cut into stages, in small named phases.

Phases (DESIGN §6), each a pure function of its inputs and tested alone:

1. :func:`mark_durable`: which connections are queues stored in the FlowFile repository, and
   why: they feed a binning processor, close a cycle, are marked ``durable=True``, carry queue
   settings, feed a disabled processor (its FlowFiles wait there), or join a processor run on a
   schedule (a Run Schedule period or cron: it runs in a stage of its own, its input waiting
   between its runs). Every other connection is pipelined: FlowFiles pass by reference inside
   one task.
2. :func:`form_stages`: a stage is a maximal group of components joined by pipelined connections;
   its inputs are sources and durable queues.
3. :func:`order_stages`: stages in dependency order; cycles run through durable queues, so the
   stage graph's strongly connected parts are ordered as units.
4. :func:`plan_stage`: each stage's shippable plan (:mod:`flowcore.compiler.plan`): its members
   and their routes, the queues it reads, their expiration and prioritizers.

Mapping stages to Spark (narrow chains in one ``mapPartitions`` pass, binning as a shuffle of
records) is the runner's concern and comes with it.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping

import attrs
import networkx as nx

from flowcore.compiler.expression_notes import expression_notes
from flowcore.compiler.plan import MemberPlan, Route, StagePlan, block_reader, serial
from flowcore.definition.component_settings import LoadBalanceStrategy, SchedulingStrategy
from flowcore.definition.flow import Component, Connection, FlowDefinition
from flowcore.definition.queues import park_queue_id
from flowcore.definition.validation import validate_flow
from flowcore.processor.base import ProcessorKind
from flowcore.service_order import enabling_order
from flowcore.settings import Settings
from flowcore.units import parse_time_period

__all__ = [
    "CompiledFlow",
    "DurableReason",
    "Stage",
    "block_notes",
    "compile_flow",
    "driver_note",
    "explain",
    "form_stages",
    "is_scheduled",
    "mark_durable",
    "order_stages",
    "scheduling_note",
    "serial_note",
    "stage_notes",
]


class DurableReason(enum.Enum):
    """Why a connection is a durable queue (shown by ``explain``)."""

    INTO_BINNING = "feeds a binning processor"
    CLOSES_CYCLE = "closes a cycle"
    MARKED_DURABLE = "marked durable=True"
    QUEUE_SETTINGS = "has queue settings"
    INTO_DISABLED = "feeds a disabled processor"
    INTO_DEAD_END = "feeds a funnel with no outgoing connection"
    HOLDS_FLOWFILES = "holds FlowFiles an earlier run queued"
    SCHEDULED = "joins a processor run on a schedule"
    SERIAL = "joins a processor that runs serially"


@attrs.frozen
class Stage:
    """Components that run together in one task, joined by pipelined connections.

    Attributes:
        id: ``stage-N`` in execution order.
        members: component ids, upstream first.
        inputs: durable connections feeding the stage (empty for a stage of sources).
        outputs: durable connections leaving the stage.
    """

    id: str
    members: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def is_source_stage(self) -> bool:
        """Whether the stage has no input queue (it starts at source processors)."""
        return not self.inputs


@attrs.frozen
class CompiledFlow:
    """The result of compilation.

    Attributes:
        flow: the flow compiled.
        durable: each durable connection id with the reasons it is durable.
        stages: stages in execution order.
        plans: each stage's shippable plan, by stage id (what its tasks are given).
    """

    flow: FlowDefinition = attrs.field(eq=False)
    durable: Mapping[str, tuple[DurableReason, ...]]
    stages: tuple[Stage, ...]
    plans: Mapping[str, StagePlan] = attrs.field(factory=dict, eq=False)

    def stage_of(self, component: Component | str) -> Stage:
        """The stage a component runs in."""
        key = component.id if isinstance(component, Component) else component
        return next(s for s in self.stages if key in s.members)


def _is_binning(flow: FlowDefinition, component: Component) -> bool:
    return flow.kind_of(component) is ProcessorKind.BINNING


def _is_source(flow: FlowDefinition, component: Component) -> bool:
    return flow.kind_of(component) is ProcessorKind.SOURCE


def _cron(component: Component) -> str | None:
    """The cron Run Schedule of an enabled CRON driven processor, else None."""
    if component.disabled or component.scheduling_strategy is not SchedulingStrategy.CRON_DRIVEN:
        return None
    return component.run_schedule


def _period_ms(component: Component) -> int:
    """The timer-driven Run Schedule in ms (0 for a disabled or CRON driven component)."""
    if component.disabled or component.scheduling_strategy is SchedulingStrategy.CRON_DRIVEN:
        return 0
    return component.run_schedule_ms


def is_scheduled(flow: FlowDefinition, component: Component) -> bool:
    """Whether a processor that takes queued input runs on a schedule (a period or a cron).

    Sources are scheduled by the driver's listing (they start stages); the others run in a
    stage of their own, which runs only when its schedule comes due. The kind is the one the
    component has in *flow* (GenerateTableFetch fed by a connection takes queued input).
    """
    kind = flow.kind_of(component)
    if kind is None or kind is ProcessorKind.SOURCE:
        return False
    return _cron(component) is not None or _period_ms(component) > 0


def is_serial(flow: FlowDefinition, component: Component) -> bool:
    """Whether a processor runs serially: one task per stage run (see ``StagePlan.serial``).

    The compiler gives each a stage of its own, so what comes before and after it still runs in
    parallel tasks: only the serial processor's own work is one task. Its services are read
    with parameters bound (``#{cache}`` naming a map cache), as ``StagePlan.serial`` reads them.
    """
    if component.disabled or component.processor is None:
        return False
    return serial(flow.resolved_processor(component), flow.services)


def _ms(period: str | None) -> int | None:
    return None if period is None else int(parse_time_period(period, "ms"))


def _cycle_closing(flow: FlowDefinition) -> set[str]:
    """Connections that close a cycle: back edges of a depth-first walk in declaration order.

    Starting from components without inputs (then any unvisited, in the order they were added)
    makes the choice stable and natural: the connection that loops back is the one cut.
    """
    components = flow.components
    outgoing = {c.id: flow.outgoing(c) for c in components}
    state: dict[str, int] = {}  # 1 = on the walk's path, 2 = finished
    closing: set[str] = set()
    roots = [c.id for c in components if not flow.incoming(c)]
    roots += [c.id for c in components if c.id not in roots]
    for root in roots:
        if root in state:
            continue
        stack = [(root, iter(outgoing[root]))]
        state[root] = 1
        while stack:
            node, edges = stack[-1]
            connection = next(edges, None)
            if connection is None:
                state[node] = 2
                stack.pop()
                continue
            target = connection.destination
            if state.get(target) == 1:
                closing.add(connection.id)
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(outgoing[target])))
    return closing


def mark_durable(
    flow: FlowDefinition, holding: Collection[str] = ()
) -> dict[str, tuple[DurableReason, ...]]:
    """Phase 1: the durable connections, each with every reason that applies.

    *holding* names connections whose queues hold FlowFiles an earlier run left (see
    :func:`compile_flow`).
    """
    closing = _cycle_closing(flow)
    durable: dict[str, tuple[DurableReason, ...]] = {}
    for connection in flow.connections:
        reasons = []
        if _is_binning(flow, flow.component(connection.destination)):
            reasons.append(DurableReason.INTO_BINNING)
        if connection.id in closing:
            reasons.append(DurableReason.CLOSES_CYCLE)
        if connection.durable:
            reasons.append(DurableReason.MARKED_DURABLE)
        if connection.settings is not None:
            reasons.append(DurableReason.QUEUE_SETTINGS)
        destination = flow.component(connection.destination)
        if destination.disabled:
            reasons.append(DurableReason.INTO_DISABLED)
        elif flow.is_dead_end(destination):  # its FlowFiles wait there, as NiFi keeps them
            reasons.append(DurableReason.INTO_DEAD_END)
        source = flow.component(connection.source)
        if is_scheduled(flow, destination) or is_scheduled(flow, source):
            reasons.append(DurableReason.SCHEDULED)
        if is_serial(flow, destination) or is_serial(flow, source):
            reasons.append(DurableReason.SERIAL)
        if connection.id in holding and not reasons:
            reasons.append(DurableReason.HOLDS_FLOWFILES)
        if reasons:
            durable[connection.id] = tuple(reasons)
    return durable


def form_stages(flow: FlowDefinition, durable: Mapping[str, object]) -> list[tuple[str, ...]]:
    """Phase 2: groups of component ids joined by pipelined connections, each upstream first.

    Funnels join the stage of what they connect, as they only merge streams.
    """
    pipelined = nx.DiGraph()
    pipelined.add_nodes_from(c.id for c in flow.components)
    pipelined.add_edges_from(
        (c.source, c.destination) for c in flow.connections if c.id not in durable
    )
    order = {c.id: n for n, c in enumerate(flow.components)}
    groups = []
    for members in nx.weakly_connected_components(pipelined):
        sub = pipelined.subgraph(members)
        ranked = nx.lexicographical_topological_sort(sub, key=order.__getitem__)
        groups.append(tuple(ranked))
    return groups


def order_stages(
    flow: FlowDefinition, groups: list[tuple[str, ...]], durable: Mapping[str, object]
) -> tuple[Stage, ...]:
    """Phase 3: stages in dependency order, named ``stage-1``..; cycles ordered as units."""
    where = {member: n for n, group in enumerate(groups) for member in group}
    stage_graph = nx.DiGraph()
    stage_graph.add_nodes_from(range(len(groups)))
    for connection in flow.connections:
        if connection.id in durable:
            source, target = where[connection.source], where[connection.destination]
            if source != target:
                stage_graph.add_edge(source, target)
    order = {c.id: n for n, c in enumerate(flow.components)}
    first_added = {n: min(order[m] for m in group) for n, group in enumerate(groups)}
    condensed = nx.condensation(stage_graph)
    ranked: list[int] = []
    for scc in nx.lexicographical_topological_sort(
        condensed, key=lambda s: min(first_added[n] for n in condensed.nodes[s]["members"])
    ):
        ranked.extend(sorted(condensed.nodes[scc]["members"], key=first_added.__getitem__))
    stages = []
    for position, n in enumerate(ranked, 1):
        members = groups[n]
        inputs = tuple(
            c.id for c in flow.connections if c.id in durable and c.destination in members
        )
        outputs = tuple(c.id for c in flow.connections if c.id in durable and c.source in members)
        stages.append(Stage(f"stage-{position}", members, inputs, outputs))
    return tuple(stages)


def compile_flow(
    flow: FlowDefinition, *, validate: bool = True, holding: Collection[str] = ()
) -> CompiledFlow:
    """Validate *flow*, then run the phases.

    Args:
        flow: the flow.
        validate: False only to draw a flow that is invalid (``flowcore explain`` shows it
            with its problems); such a plan must never run.
        holding: connections whose queues in the repository hold FlowFiles: they stay
            durable until those are taken, though nothing else makes them so (they queued
            before a disabled processor or a funnel with no outgoing connection, since
            enabled or connected on), so no FlowFile is left behind.

    Raises:
        FlowValidationError: the flow is invalid (every problem listed).
    """
    if validate:
        validate_flow(flow)
    durable = mark_durable(flow, holding)
    groups = form_stages(flow, durable)
    stages = order_stages(flow, groups, durable)
    plans = {stage.id: plan_stage(flow, durable, stage) for stage in stages}
    return CompiledFlow(flow, durable, stages, plans)


def plan_stage(flow: FlowDefinition, durable: Mapping[str, object], stage: Stage) -> StagePlan:
    """The last phase: the shippable plan of *stage* (members, routes, queue behaviour)."""
    members = []
    member_ids = set(stage.members)
    for component_id in stage.members:
        component: Component = flow.component(component_id)
        routes: dict[str, list[Route]] = {}
        for connection in flow.outgoing(component):
            pipelined = connection.id not in durable
            for relationship in connection.relationships:
                member = connection.destination if pipelined else None
                assert member is None or member in member_ids
                routes.setdefault(relationship, []).append(Route(connection.id, member))
        members.append(
            MemberPlan(
                component_id=component.id,
                name=component.name,
                type_name=component.type_name,
                processor=flow.resolved_processor(component),  # parameters bound here
                routes={k: tuple(v) for k, v in routes.items()},
                auto_terminated=flow.terminated(component),  # the processor's defaults too
                has_input=bool(flow.incoming(component)),
                has_non_loop_input=any(c.source != component.id for c in flow.incoming(component)),
                concurrent_tasks=component.concurrent_tasks,
                run_schedule_ms=_period_ms(component),
                cron=_cron(component),
                penalty_ms=None if component.disabled else _ms(component.penalty_duration),
                yield_ms=None if component.disabled else _ms(component.yield_duration),
                retry=component.retry,
                disabled=component.disabled or flow.is_dead_end(component),
            )
        )
    connections = {c.id: c for c in flow.connections}
    disabled = {m.component_id for m in members if m.disabled}
    queue_members: dict[str, str] = {}
    disabled_queues: dict[str, str] = {}
    for queue_id in stage.inputs:
        destination = connections[queue_id].destination
        (disabled_queues if destination in disabled else queue_members)[queue_id] = destination
    for member in members:
        if member.has_input:
            target = disabled_queues if member.disabled else queue_members
            target[park_queue_id(member.component_id)] = member.component_id
    expiration, prioritizers = {}, {}
    for queue_id in stage.inputs:
        settings = connections[queue_id].settings
        if settings is None:
            continue
        millis = int(parse_time_period(settings.flowfile_expiration, "ms"))
        if millis > 0:
            expiration[queue_id] = millis
        if settings.prioritizers:
            prioritizers[queue_id] = settings.prioritizers
    declared = flow.services
    named = {
        name
        for member in members
        if member.processor is not None
        for name in member.processor.referenced_services().values()
    }
    # The services named, and those they name, parameters bound, dependencies first.
    services = {name: flow.resolved_service(name) for name in enabling_order(declared, named)}
    return StagePlan(
        stage.id, tuple(members), queue_members, expiration, prioritizers, services, disabled_queues
    )


def serial_note(plan: StagePlan) -> str | None:
    """Why each run of a stage is one task, as explain shows it (None: it is not)."""
    members = plan.serial_members
    if not members:
        return None
    reasons = []
    for member in members:
        processor = member.processor
        assert processor is not None
        services = sorted(set(processor.referenced_services().values()))
        why = (
            "triggers serially"
            if processor.runs_serially()
            else f"uses service {', '.join(repr(s) for s in services)}"
        )
        reasons.append(f"{member.type_name} '{member.name}' {why}")
    return (
        "serial: one task per stage run, seeing the state the last one committed "
        f"({'; '.join(reasons)})"
    )


def block_notes(plan: StagePlan) -> list[str]:
    """Whether the stage's sources read large files as blocks in parallel tasks, and if not why.

    Only for a source that can (``block_reads``: GetFile) feeding a member in the stage.
    """
    notes = []
    for source in plan.source_members:
        refusal = getattr(source.processor, "block_refusal", None)
        reader = block_reader(plan, source)
        if refusal is None or reader is None or plan.binning_members:
            continue
        why = refusal(reader.processor, reader.dropped)
        if why is None:
            notes.append(
                f"blocks: '{source.name}' reads large files as line-aligned blocks in parallel "
                f"tasks for '{reader.name}' (block_read_min_size)"
            )
        elif why != "it does not feed SplitText":
            notes.append(f"blocks: '{source.name}' reads each file in one task: {why}")
    return notes


def scheduling_note(component: Component, flow: FlowDefinition | None = None) -> str:
    """A component's scheduling settings that differ from NiFi's defaults, as explain shows them.

    With *flow*, a funnel with no outgoing connection is noted too (its input waits queued).
    """
    text = ""
    if component.disabled:
        return f", {component} DISABLED (never runs; its input waits queued)"
    if flow is not None and flow.is_dead_end(component):
        return f", {component} has no outgoing connection (never runs; its input waits queued)"
    if component.concurrent_tasks > 1:
        text += f", {component} x{component.concurrent_tasks} concurrent tasks"
    cron = _cron(component)
    if cron is not None:
        text += f", {component} on cron '{cron}' (continuous runs)"
    elif _period_ms(component):
        text += f", {component} every {component.run_schedule} (continuous runs)"
    if component.penalty_duration is not None:
        text += f", {component} penalty {component.penalty_duration}"
    if component.yield_duration is not None:
        text += f", {component} yield {component.yield_duration}"
    retry = component.retry
    if retry is not None:
        how = retry.backoff_mechanism.value.lower().replace("_", " ")
        text += (
            f", {component} retries {','.join(retry.relationships)} x{retry.count} "
            f"({how}, backoff up to {retry.max_backoff_period})"
        )
    return text


def _balancing(connection: Connection) -> str:
    """A connection's non-default Load Balance Strategy, as explain notes it."""
    strategy = connection.load_balance_strategy
    if strategy is LoadBalanceStrategy.DO_NOT_LOAD_BALANCE:
        return ""
    on = f" on {connection.partitioning_attribute!r}" if connection.partitioning_attribute else ""
    return f" [load balance {strategy.value}{on}: Spark spreads every stage over its tasks]"


def driver_note(
    compiled: CompiledFlow, stage: Stage, runner: str | None, settings: Settings | None = None
) -> str | None:
    """Which of a stage's runs *runner* leaves to the driver's process, and why (None: none).

    On Spark, a stage run that takes no source work and at most ``driver_run_max_flowfiles``
    queued FlowFiles of at most ``driver_run_max_size`` runs in the driver, as the direct runner
    runs it (``Controller.run_stage``): a Spark job's scheduling costs more than such a run
    (``bench/driver_runs.py`` measures where Spark starts to pay). Only a stage fed by a
    durable queue that an enabled member reads can take such a run; the direct runner runs
    everything in the driver anyway, and a limit of 0 sends every run to the runner.

    Args:
        compiled: the compiled flow.
        stage: one of its stages.
        runner: the runner's name (``"spark"``, ``"direct"``); None when it is not known.
        settings: the run's settings (their limits are quoted); None for the defaults.
    """
    settings = settings or Settings()
    if runner in {None, "direct"} or not settings.driver_run_max_flowfiles:
        return None
    plan = compiled.plans.get(stage.id)
    read = [q for q in stage.inputs if plan is None or q in plan.queue_members]
    if not read:
        return None
    flow = compiled.flow
    sources = any(_is_source(flow, flow.component(m)) for m in stage.members)
    which = "no source work and " if sources else ""
    return (
        f"in the driver: runs taking {which}at most {settings.driver_run_max_flowfiles:,} "
        f"queued FlowFiles / {settings.driver_run_max_size} (a Spark job's scheduling costs "
        "more than they do; settings driver_run_max_flowfiles, driver_run_max_size)"
    )


def stage_notes(
    compiled: CompiledFlow,
    stage: Stage,
    *,
    reasons: bool = True,
    runner: str | None = None,
    settings: Settings | None = None,
) -> list[str]:
    """What ``explain`` and the flow's picture say about a stage, one line each.

    Its input (source work, with the members' scheduling) or its non-default settings, its
    durable inputs and outputs, why it runs serially, what its expressions cost, and which of
    its runs go to the driver's process (:func:`driver_note`). One function, so the text plan
    and every picture format say the same.

    Args:
        compiled: the compiled flow.
        stage: one of its stages.
        reasons: whether a queue's line says why it is durable (and its load balancing): the
            text plan's do; a picture's edges say it themselves.
        runner: the runner's name, for :func:`driver_note`; None when it is not known.
        settings: the run's settings, for :func:`driver_note`; None for the defaults.
    """
    flow = compiled.flow
    connections = {c.id: c for c in flow.connections}

    def label(connection_id: str) -> str:
        connection = connections[connection_id]
        if not reasons:
            return flow.describe(connection)
        why = ", ".join(r.value for r in compiled.durable[connection_id])
        return f"{flow.describe(connection)} (durable: {why}){_balancing(connection)}"

    notes = []
    scheduling = "".join(scheduling_note(flow.component(m), flow) for m in stage.members)
    if stage.is_source_stage and all(flow.component(m).processor is None for m in stage.members):
        notes.append("input: none (a funnel with no incoming connection never runs)")
    elif stage.is_source_stage:
        notes.append(f"input: source work{scheduling}")
    elif scheduling:
        notes.append(f"settings: {scheduling.removeprefix(', ')}")
    notes.extend(f"input: {label(c)}" for c in stage.inputs)
    notes.extend(f"output: {label(c)}" for c in stage.outputs)
    plan = compiled.plans.get(stage.id)
    if plan is not None:
        serial = serial_note(plan)
        notes.extend([serial] if serial is not None else [])
        notes.extend(block_notes(plan))
        notes.extend(expression_notes(plan))
    in_driver = driver_note(compiled, stage, runner, settings)
    notes.extend([in_driver] if in_driver is not None else [])
    return notes


def explain(
    compiled: CompiledFlow, *, runner: str | None = None, settings: Settings | None = None
) -> str:
    """The plan as text: each stage, its members, where its input comes from and why it is cut.

    A run's plan (``RunResult.plan``) is this text with what the runner did under each stage;
    ``flow.explain()`` and ``flowcore explain`` draw the whole graph instead
    (:mod:`flowcore.pictures.flow_picture`), with the same :func:`stage_notes` on each stage.

    Args:
        compiled: the compiled flow.
        runner: the runner's name (``"spark"`` adds which runs go to the driver's process);
            None when it is not known.
        settings: the run's settings; None for the defaults.
    """
    flow = compiled.flow
    lines = [f"flow '{flow.name}': {len(compiled.stages)} stage(s)"]
    for stage in compiled.stages:
        members = " -> ".join(_member_text(flow, flow.component(m)) for m in stage.members)
        lines.append(f"{stage.id}: {members}")
        notes = stage_notes(compiled, stage, runner=runner, settings=settings)
        lines.extend(f"  {n}" for n in notes)
        pipelined = [
            c
            for c in flow.connections
            if c.id not in compiled.durable and c.source in stage.members and _balancing(c)
        ]
        lines.extend(f"  pipelined: {flow.describe(c)}{_balancing(c)}" for c in pipelined)
    return "\n".join(lines)


def _member_text(flow: FlowDefinition, component: Component) -> str:
    if component.disabled:
        return f"{component} (disabled)"
    if flow.is_dead_end(component):
        return f"{component} (no outgoing connection)"
    return str(component)
