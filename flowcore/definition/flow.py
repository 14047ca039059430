"""Flow definitions: processors and funnels joined by connections, as data.

A :class:`FlowDefinition` only records what the user declared; nothing here runs. Validation
(:mod:`flowcore.definition.validation`) reads the definition and reports every problem at once, and
the compiler (issue 5) turns a valid flow into stages. The graph is a networkx ``MultiDiGraph``
whose nodes are component ids and whose edges are connections, so loops and parallel connections are
ordinary.

Connections carry NiFi's queue settings (reference/nifi-framework.md §5): back pressure at 10,000
FlowFiles or 1 GB, FlowFile expiration ``0 sec`` (never), prioritizers (FIFO when none). A
connection with any queue setting given is durable, as is one marked ``durable=True``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from flowcore.controller_service import ControllerService
from flowcore.definition.component_settings import (
    DEFAULT_RUN_SCHEDULE,
    LoadBalanceStrategy,
    Prioritizer,
    QueueSettings,
    RetrySettings,
    SchedulingStrategy,
    enum_member,
    period_text,
)
from flowcore.errors import FlowDefinitionError
from flowcore.ids import connection_id, ends_key, ends_of, reserved_id
from flowcore.parameters import Parameter, ParameterContext
from flowcore.processor.base import Processor, ProcessorKind
from flowcore.processor.relationship import Relationship
from flowcore.units import parse_time_period

if TYPE_CHECKING:
    import networkx as nx


__all__ = [
    "FUNNEL_RELATIONSHIP",
    "Component",
    "ComponentKind",
    "Connection",
    "FlowDefinition",
]

#: A funnel's only exit; connections out of a funnel use it implicitly.
#: The controller services a flow declares (MapCacheService and StandardSSLContextService
#: among them).
_Service = ControllerService

FUNNEL_RELATIONSHIP = "success"


class ComponentKind(enum.Enum):
    """What a node of the flow graph is."""

    PROCESSOR = "processor"
    FUNNEL = "funnel"


@attrs.frozen(eq=False)
class Component:
    """A processor or funnel placed in a flow; the handle ``Flow.add`` returns.

    Attributes:
        id: unique within the flow: what its state, park queue and provenance events are kept
            under in a repository. Its name unless given (``id=``) or kept through a rename
            (:meth:`FlowDefinition.reidentified`).
        name: the user's name, unique within the flow.
        kind: processor or funnel.
        processor: the configured processor (None for a funnel).
        concurrent_tasks: NiFi's Concurrent Tasks: how many times a source is triggered in one
            micro-batch, each trigger's work read in a task of its own (others run in as many
            tasks as their input allows).
        run_schedule: NiFi's Run Schedule for a source in a continuous run: ``"0 sec"`` (the
            default) triggers it as often as there is room downstream; a period such as
            ``"1 min"`` triggers it (``concurrent_tasks`` times) at most once per period. Under
            the CRON_DRIVEN strategy, a Quartz cron expression.
        scheduling_strategy: NiFi's Scheduling Strategy (timer or cron driven).
        penalty_duration: NiFi's Penalty Duration for this processor; None takes the engine
            setting ``penalization_period`` (``30 sec``).
        yield_duration: NiFi's Yield Duration for this processor; None takes the engine
            setting ``yield_duration`` (``1 sec``).
        disabled: NiFi's DISABLED state: the processor never runs; FlowFiles queue before it.
        retry: NiFi's relationship retry settings, or None.
        comments: NiFi's Comments, kept for export.
    """

    id: str
    name: str
    kind: ComponentKind
    processor: Processor | None = None
    concurrent_tasks: int = 1
    run_schedule: str = attrs.field(default=DEFAULT_RUN_SCHEDULE, converter=period_text)
    scheduling_strategy: SchedulingStrategy = attrs.field(
        default=SchedulingStrategy.TIMER_DRIVEN,
        converter=enum_member(SchedulingStrategy, "scheduling strategy"),
    )
    penalty_duration: str | None = attrs.field(
        default=None, converter=attrs.converters.optional(period_text)
    )
    yield_duration: str | None = attrs.field(
        default=None, converter=attrs.converters.optional(period_text)
    )
    disabled: bool = False
    retry: RetrySettings | None = None
    comments: str = ""

    @property
    def run_schedule_ms(self) -> int:
        """The Run Schedule in milliseconds (0: as often as there is room).

        Raises:
            ValueError: the Run Schedule does not parse (validation reports it first).
        """
        return int(parse_time_period(self.run_schedule, "ms"))

    @property
    def type_name(self) -> str:
        """The processor's class name, or ``Funnel``."""
        return type(self.processor).__name__ if self.processor is not None else "Funnel"

    def relationship_names(self) -> tuple[str, ...]:
        """The exits of this component."""
        if self.processor is None:
            return (FUNNEL_RELATIONSHIP,)
        return self.processor.relationship_names()

    def __str__(self) -> str:
        return f"{self.type_name} '{self.name}'"


@attrs.frozen
class Connection:
    """FlowFiles routed to any of *relationships* of *source* queue for *destination*.

    Attributes:
        id: unique within the flow: what its queue is kept under in a repository. Derived from
            source, relationships and destination (:func:`connection_id`) unless given.
        source: id of the component FlowFiles leave.
        relationships: the source's relationships this connection carries.
        destination: id of the component FlowFiles enter.
        settings: queue settings, or None when the user gave none.
        durable: whether the user asked for a durable (logged) queue.
        name: NiFi's connection name (empty: none), kept for export.
        load_balance_strategy: NiFi's Load Balance Strategy, a cluster setting.
        partitioning_attribute: the attribute PARTITION_BY_ATTRIBUTE balances on.
    """

    id: str
    source: str
    relationships: tuple[str, ...]
    destination: str
    settings: QueueSettings | None = None
    durable: bool = False
    name: str = ""
    load_balance_strategy: LoadBalanceStrategy = attrs.field(
        default=LoadBalanceStrategy.DO_NOT_LOAD_BALANCE,
        converter=enum_member(LoadBalanceStrategy, "load balance strategy"),
    )
    partitioning_attribute: str = ""

    @property
    def queue_settings(self) -> QueueSettings:
        """The effective settings (NiFi's defaults when none were given)."""
        return self.settings or QueueSettings()


class FlowDefinition:
    """A flow under construction: add components, connect them, auto-terminate exits.

    This is the value the engine takes. Users build its subclass :class:`flowcore.builder.Flow`
    (an example is there), which adds ``validate``, ``explain`` and ``run``: the engine sits
    above this module and takes the definition from there. Mistakes in the calls themselves (a
    component from another flow, a repeated name) raise at once; everything else is reported
    together by validation.

    Args:
        name: the flow's name.
        parameters: NiFi's parameter context for ``#{name}`` references in property values: a
            :class:`~flowcore.parameters.ParameterContext`, or a dict of name -> value.
    """

    def __init__(
        self,
        name: str,
        *,
        parameters: ParameterContext | Mapping[str, str | Parameter] | None = None,
    ) -> None:
        self.name = name
        #: The parameter context; ``flowcore run --parameter`` puts one over it.
        self.parameters: ParameterContext = ParameterContext.of(parameters, name)
        self._components: dict[str, Component] = {}
        self._connections: dict[str, Connection] = {}
        self._auto_terminated: dict[str, set[str]] = {}
        self._services: dict[str, _Service] = {}
        self._service_ids: dict[str, str] = {}  # NiFi identifiers given (an imported flow's)

    # --- building -------------------------------------------------------------------------------

    def _unique_name(self, wanted: str | None, default: str) -> str:
        taken = {c.name for c in self._components.values()}
        if wanted is not None:
            if wanted in taken:
                msg = f"flow '{self.name}' already has a component named {wanted!r}; pick another"
                raise FlowDefinitionError(msg)
            return wanted
        candidate, n = default, 1
        while candidate in taken:
            n += 1
            candidate = f"{default}-{n}"
        return candidate

    def _unique_id(self, wanted: str | None, derived: str, what: str) -> str:
        """*wanted*, or else *derived* (from the name or the endpoints), when no one has it yet.

        Identity is data (DESIGN §9c): queues, state and provenance in a repository hang on these
        ids, so they come from what the user names, never from the order of calls.
        """
        if wanted is not None and (not isinstance(wanted, str) or not wanted):
            msg = f"an id must be a non-empty string, got {wanted!r}"
            raise FlowDefinitionError(msg)
        chosen = derived if wanted is None else wanted
        reserved = reserved_id(chosen)
        if reserved is not None:
            source = "derived from its name" if wanted is None else "given"
            msg = (
                f"flow '{self.name}': the id {chosen!r} of {what} ({source}) {reserved}; "
                "give it another name or id="
            )
            raise FlowDefinitionError(msg)
        if chosen in self._components or chosen in self._connections:
            if wanted is None:
                msg = (
                    f"flow '{self.name}': the id {chosen!r} of {what} (derived from its name) "
                    "is another component's or connection's explicit id; give one of them "
                    "another name or id="
                )
            else:
                msg = (
                    f"flow '{self.name}' already has a component or connection with id "
                    f"{chosen!r}; give {what} another id="
                )
            raise FlowDefinitionError(msg)
        return chosen

    def add(
        self,
        processor: Processor,
        name: str | None = None,
        *,
        concurrent_tasks: int = 1,
        run_schedule: str | int | float = DEFAULT_RUN_SCHEDULE,
        scheduling_strategy: SchedulingStrategy | str = SchedulingStrategy.TIMER_DRIVEN,
        penalty_duration: str | int | float | None = None,
        yield_duration: str | int | float | None = None,
        disabled: bool = False,
        retry: RetrySettings | None = None,
        comments: str = "",
        id: str | None = None,
    ) -> Component:
        """Place a configured processor in the flow; return its handle.

        Args:
            processor: the configured processor.
            name: its name in the flow (default: the class name, numbered when taken).
            concurrent_tasks: NiFi's Concurrent Tasks scheduling setting. A source is
                triggered this many times per micro-batch and its triggers' work is read in
                parallel tasks (GenerateFlowFile on two cores wants 2).
            run_schedule: NiFi's Run Schedule, for sources in continuous runs: ``"0 sec"``
                runs a source as often as there is room downstream; ``"1 min"`` (or 60, in
                seconds) at most once a minute. Checked by validation.
            scheduling_strategy: ``TIMER_DRIVEN`` (the default) or ``CRON_DRIVEN``, when
                *run_schedule* is a Quartz cron expression.
            penalty_duration: NiFi's Penalty Duration (default: the engine's, ``30 sec``).
            yield_duration: NiFi's Yield Duration (default: the engine's, ``1 sec``).
            disabled: keep the processor from running, as NiFi's DISABLED state does.
            retry: NiFi's relationship retry, e.g.
                ``RetrySettings(relationships=["failure"], count=3)``.
            comments: NiFi's Comments.
            id: the component id, what its queues, state and provenance are kept under in a
                repository (default: its name). Give one to keep that identity through a
                rename that also changes the processor's properties (a plain rename keeps it
                anyway, see docs/operations.md "Identity"); an import from NiFi keeps NiFi's
                identifier, so provenance shows NiFi's ids.

        Raises:
            FlowDefinitionError: the processor instance is already in the flow, or the name is,
                or the id is, or *concurrent_tasks* is not a positive integer.
        """
        if not isinstance(processor, Processor):
            msg = f"Flow.add takes a Processor instance, got {processor!r}"
            raise FlowDefinitionError(msg)
        counts = isinstance(concurrent_tasks, int) and not isinstance(concurrent_tasks, bool)
        if not counts or concurrent_tasks < 1:
            msg = (
                f"concurrent_tasks of {type(processor).__name__} must be a positive integer, "
                "e.g. concurrent_tasks=2"
            )
            raise FlowDefinitionError(msg)
        for component in self._components.values():
            if component.processor is processor:
                msg = (
                    f"{component} is already in flow '{self.name}'; add a new instance "
                    "(processors are configured per placement)"
                )
                raise FlowDefinitionError(msg)
        kind = type(processor).__name__
        chosen_name = self._unique_name(name, kind)
        component = Component(
            id=self._unique_id(id, chosen_name, f"{kind} '{chosen_name}'"),
            name=chosen_name,
            kind=ComponentKind.PROCESSOR,
            processor=processor,
            concurrent_tasks=concurrent_tasks,
            run_schedule=run_schedule,
            scheduling_strategy=scheduling_strategy,
            penalty_duration=penalty_duration,
            yield_duration=yield_duration,
            disabled=disabled,
            retry=retry,
            comments=comments,
        )
        self._components[component.id] = component
        return component

    def add_service(
        self, service: _Service, name: str | None = None, *, id: str | None = None
    ) -> _Service:
        """Declare a controller service that processors name in a service property.

        ``flow.add_service(MapCacheService("dedupe"))``, then
        ``DetectDuplicate(distributed_cache_service="dedupe")`` (or the returned service
        itself as the value); processors naming the same service share it (NiFi's controller
        services, scoped to the flow). Any :class:`~flowcore.controller_service.ControllerService`
        is accepted, built-in or the user's own; ``StandardSSLContextService`` is named by
        InvokeHTTP's ``SSL Context Service``.

        Args:
            service: the service definition.
            name: declare it under this name instead of its own.
            id: its NiFi identifier (an imported service keeps its own, which an export
                writes back); by default one is derived from the flow's and service's names.

        Returns:
            The service as declared (the handle processors may take).

        Raises:
            FlowDefinitionError: it is not a service, or the flow has one of that name.
        """
        if not isinstance(service, ControllerService):
            msg = (
                "Flow.add_service takes a controller service (a ControllerService subclass, "
                f"e.g. MapCacheService or StandardSSLContextService), got {service!r}"
            )
            raise FlowDefinitionError(msg)
        if name is not None and name != service.name:
            service = service.renamed(name)
        if service.name in self._services:
            msg = f"flow '{self.name}' already has a service named {service.name!r}; pick another"
            raise FlowDefinitionError(msg)
        self._services[service.name] = service
        if id is not None:
            self._service_ids[service.name] = id
        return service

    @property
    def service_ids(self) -> Mapping[str, str]:
        """The NiFi identifiers given to services (:meth:`add_service`), by service name."""
        return dict(getattr(self, "_service_ids", {}))

    @property
    def services(self) -> Mapping[str, _Service]:
        """The declared services, by name (as declared: ``#{name}`` references kept)."""
        return dict(self._services)

    def resolved_service(self, name: str) -> _Service:
        """Service *name* with the parameters it references bound.

        What validation checks and the compiler ships, as :meth:`resolved_processor` is for
        processors.

        Raises:
            KeyError: the flow declares no such service.
        """
        service = self._services[name]
        names = {n for names in service.referenced_parameters().values() for n in names}
        if not names:
            return service
        return service.with_parameters(self.parameters.values_for(sorted(names)))

    def resolved_services(self) -> dict[str, _Service]:
        """Every declared service with its parameters bound, by name."""
        return {name: self.resolved_service(name) for name in self._services}

    def funnel(
        self,
        name: str | None = None,
        *,
        id: str | None = None,
        disabled: bool = False,
    ) -> Component:
        """Add a funnel: many connections in, one stream out, no processing.

        *disabled* stands for a disabled port of an imported NiFi flow: nothing passes it,
        FlowFiles wait queued before it.
        """
        chosen_name = self._unique_name(name, "funnel")
        component = Component(
            id=self._unique_id(id, chosen_name, f"funnel '{chosen_name}'"),
            name=chosen_name,
            kind=ComponentKind.FUNNEL,
            disabled=disabled,
        )
        self._components[component.id] = component
        return component

    def _own(self, component: Component | str, role: str) -> Component:
        """*component* if it is one of this flow's, or the one a string names (its id or name).

        A handle from ``add()`` is exact; a name is what a NiFi user thinks in and what
        validation's messages say, so it is taken too when it names exactly one component.
        """
        if isinstance(component, str):
            found = [c for c in self._components.values() if component in (c.id, c.name)]
            if len(found) == 1:
                return found[0]
            names = ", ".join(sorted(repr(c.name) for c in self._components.values()))
            msg = (
                f"the {role} {component!r} names {len(found) or 'no'} component(s) of flow"
                f" '{self.name}' (it has: {names}); use a name or the handle flow.add() returned"
            )
            raise FlowDefinitionError(msg)
        owned = isinstance(component, Component) and (
            self._components.get(component.id) is component
        )
        if not owned:
            msg = (
                f"the {role} {component!r} is not a component of flow '{self.name}'; "
                "use the handle that flow.add() returned"
            )
            raise FlowDefinitionError(msg)
        return component

    def connect(
        self,
        source: Component | str,
        destination: Component | str,
        relationships: str | Relationship | Sequence[str | Relationship] | None = None,
        *,
        durable: bool = False,
        back_pressure_object_threshold: int | None = None,
        back_pressure_data_size_threshold: str | int | None = None,
        flowfile_expiration: str | int | None = None,
        prioritizers: Sequence[Prioritizer | str] | None = None,
        name: str = "",
        load_balance_strategy: LoadBalanceStrategy | str = LoadBalanceStrategy.DO_NOT_LOAD_BALANCE,
        partitioning_attribute: str = "",
        id: str | None = None,
    ) -> Connection:
        """Route *relationships* of *source* to *destination*.

        *source* and *destination* are handles from :meth:`add` (or a component's name or id).
        With no relationships, the source's only one is used (a funnel's, or a processor with a
        single relationship); otherwise validation asks which. Any queue setting makes the
        connection durable. *name*, *load_balance_strategy* and *partitioning_attribute* are
        NiFi's connection settings of the same names; *id* the connection's id, what its queue
        is kept under in a repository (default: derived from its source, relationships and
        destination, ``source:rel1,rel2->destination`` with the component ids, so the order of
        ``connect()`` calls never matters; see :func:`connection_id`).
        """
        source = self._own(source, "source")
        destination = self._own(destination, "destination")
        if relationships is None:
            names = source.relationship_names()
            chosen: tuple[str, ...] = names if len(names) == 1 else ()
        elif isinstance(relationships, str | Relationship):
            chosen = (str(relationships),)
        else:
            chosen = tuple(str(r) for r in relationships)
        given: dict[str, Any] = {
            "back_pressure_object_threshold": back_pressure_object_threshold,
            "back_pressure_data_size_threshold": back_pressure_data_size_threshold,
            "flowfile_expiration": flowfile_expiration,
            "prioritizers": prioritizers,
        }
        given = {k: v for k, v in given.items() if v is not None}
        ends = ends_key(source.id, chosen, destination.id)
        twins = sum(1 for c in self._connections.values() if ends_of(c) == ends)
        derived = connection_id(source.id, chosen, destination.id, copy=twins + 1)
        connection = Connection(
            id=self._unique_id(id, derived, f"the connection {derived}"),
            source=source.id,
            relationships=chosen,
            destination=destination.id,
            settings=QueueSettings(**given) if given else None,
            durable=durable,
            name=name,
            load_balance_strategy=load_balance_strategy,
            partitioning_attribute=partitioning_attribute,
        )
        self._connections[connection.id] = connection
        return connection

    def auto_terminate(
        self,
        component: Component | str,
        relationships: str | Relationship | Iterable[str | Relationship],
    ) -> None:
        """Drop FlowFiles routed to these relationships (with a DROP event), as NiFi does.

        *component* is a handle from :meth:`add`, or a component's name or id.
        """
        component = self._own(component, "component")
        names = (
            [str(relationships)]
            if isinstance(relationships, str | Relationship)
            else [str(r) for r in relationships]
        )
        self._auto_terminated.setdefault(component.id, set()).update(names)

    def reidentified(self, kept: Mapping[str, str]) -> FlowDefinition:
        """A copy whose components in *kept* (id -> the id to keep) carry their kept ids.

        A repository recognises a renamed component and hands its old id back, so its state,
        queues and provenance stay its own (:mod:`flowcore.driver.identity`). Connections whose
        ids were derived are derived again from the new endpoints; given ids stay.
        """
        if not kept:
            return self
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._components = {}
        for component in self._components.values():
            moved = attrs.evolve(component, id=kept.get(component.id, component.id))
            copy._components[moved.id] = moved
        copy._connections = {}
        derived = self.derived_connection_ids()
        copies: dict[tuple[Any, ...], int] = {}
        for connection in self._connections.values():
            source = kept.get(connection.source, connection.source)
            destination = kept.get(connection.destination, connection.destination)
            ends = ends_key(source, connection.relationships, destination)
            copies[ends] = copies.get(ends, 0) + 1
            cid = connection.id
            if cid == derived[cid]:
                cid = connection_id(
                    source, connection.relationships, destination, copy=copies[ends]
                )
            moved = attrs.evolve(connection, id=cid, source=source, destination=destination)
            copy._connections[moved.id] = moved
        copy._auto_terminated = {
            kept.get(cid, cid): set(names) for cid, names in self._auto_terminated.items()
        }
        return copy

    def derived_connection_ids(self) -> dict[str, str]:
        """Each connection's id -> the id it would have been given (``id=`` unset)."""
        copies: dict[tuple[Any, ...], int] = {}
        derived = {}
        for connection in self._connections.values():
            ends = ends_of(connection)
            copies[ends] = copies.get(ends, 0) + 1
            derived[connection.id] = connection_id(
                connection.source,
                connection.relationships,
                connection.destination,
                copy=copies[ends],
            )
        return derived

    # --- reading ------------------------------------------------------------------------------

    @property
    def components(self) -> tuple[Component, ...]:
        """Components in the order they were added."""
        return tuple(self._components.values())

    @property
    def connections(self) -> tuple[Connection, ...]:
        """Connections in the order they were made."""
        return tuple(self._connections.values())

    def component(self, key: str) -> Component:
        """A component by id or name.

        Raises:
            KeyError: no component has that id or name.
        """
        found = self._components.get(key)
        if found is None:
            found = next((c for c in self._components.values() if c.name == key), None)
        if found is None:
            names = ", ".join(sorted(c.name for c in self._components.values()))
            msg = f"flow '{self.name}' has no component {key!r}; it has: {names}"
            raise KeyError(msg)
        return found

    def resolved_processor(self, component: Component) -> Processor | None:
        """*component*'s processor with the parameters it references bound (None for a funnel).

        What validation checks and what the compiler ships: only the values the processor
        references travel with it, read now (a sensitive one as a
        :class:`~flowcore.parameters.SensitiveText`, which travels as its source). Its kind
        is the one for its place in this flow (``Processor.with_input``): GenerateTableFetch
        with an incoming connection runs per FlowFile.
        """
        processor = component.processor
        if processor is None:
            return None
        names = {n for names in processor.referenced_parameters().values() for n in names}
        bound = processor.with_parameters(self.parameters.values_for(sorted(names)))
        return bound.with_input(self.is_fed(component))

    def kind_of(self, component: Component) -> ProcessorKind | None:
        """The kind *component*'s processor runs as in this flow (None for a funnel).

        The class's kind, or for a processor whose kind depends on its input
        (``Processor.kind_with_input``) the one its incoming connections give (:meth:`is_fed`).
        """
        processor = component.processor
        if processor is None:
            return None
        return processor.kind_for(self.is_fed(component))

    def is_fed(self, component: Component) -> bool:
        """Whether *component* counts as fed, for a processor whose kind depends on its input.

        Any incoming connection counts, a disabled source's or a funnel's nothing feeds too (as
        NiFi's ``hasIncomingConnection()``); connections from *component* back to itself do not
        where its class says so (``Processor.fed_by_self_loops``: ExecuteSQL, whose NiFi
        trigger tests ``hasNonLoopConnection()``). The one rule validation, the compiler and
        the test harness read, through :meth:`kind_of` and :meth:`resolved_processor`.
        """
        incoming = self.incoming(component)
        non_loop = any(c.source != component.id for c in incoming)
        processor = component.processor
        return processor.is_fed(bool(incoming), non_loop) if processor else bool(incoming)

    def auto_terminated(self, component: Component) -> frozenset[str]:
        """Relationships of *component* the user auto-terminated."""
        return frozenset(self._auto_terminated.get(component.id, ()))

    def terminated(self, component: Component) -> frozenset[str]:
        """Relationships of *component* dropped unless connected: NiFi's run-time rule.

        Those the user auto-terminated and those its processor declares auto-terminated by
        default (``Relationship(..., auto_terminated=True)``); a connection overrides either.
        """
        processor = component.processor
        declared = processor.get_relationships() if processor is not None else ()
        defaults = {r.name for r in declared if r.auto_terminated}
        return self.auto_terminated(component) | defaults

    def is_dead_end(self, component: Component) -> bool:
        """Whether *component* is a funnel with no outgoing connection.

        NiFi accepts one: FlowFiles sent to it wait queued before it, as before a disabled
        processor, until a connection out of it is made.
        """
        return (
            component.kind is ComponentKind.FUNNEL
            and not self.outgoing(component)
            and FUNNEL_RELATIONSHIP not in self.auto_terminated(component)
        )

    def describe(self, connection: Connection) -> str:
        """A connection as people read it: ``source -[relationships]-> destination``."""
        source = self.component(connection.source).name
        destination = self.component(connection.destination).name
        return f"{source} -[{','.join(connection.relationships)}]-> {destination}"

    def incoming(self, component: Component) -> tuple[Connection, ...]:
        """Connections into *component*."""
        return tuple(c for c in self._connections.values() if c.destination == component.id)

    def outgoing(self, component: Component) -> tuple[Connection, ...]:
        """Connections out of *component*."""
        return tuple(c for c in self._connections.values() if c.source == component.id)

    def graph(self) -> nx.MultiDiGraph:
        """The flow as a graph: component ids as nodes, one edge per connection (key = its id)."""
        import networkx as nx  # noqa: PLC0415 - Spark workers load this module, never graphs

        graph = nx.MultiDiGraph(name=self.name)
        for component in self._components.values():
            graph.add_node(component.id, component=component)
        for connection in self._connections.values():
            graph.add_edge(
                connection.source, connection.destination, key=connection.id, connection=connection
            )
        return graph

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.name!r}: {len(self._components)} components, "
            f"{len(self._connections)} connections>"
        )
