"""Flow validation: every problem of a flow definition, found in one pass, before anything runs.

Each check is a small function from a flow to problems, listed in :data:`CHECKS` in the order
their findings read best. A :class:`FlowProblem` names the component (or connection), what is
wrong and how to fix it; :func:`validate_flow` raises one :class:`FlowValidationError` carrying
all of them, so a user fixes a flow in one round instead of one error at a time.

A disabled processor is not validated itself, as NiFi validates only enabled ones: its
properties, parameters, unconnected relationships, input requirement and scheduling settings go
unchecked until it is enabled. The flow around it still is (the connections into and out of it).
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Iterator

import attrs

from flowcore.cron import parse_cron
from flowcore.definition.component_settings import SchedulingStrategy
from flowcore.definition.flow import Component, ComponentKind, Connection, FlowDefinition
from flowcore.errors import ConfigurationError, FlowValidationError
from flowcore.parameters import MIN_MASKED_LENGTH, SensitiveText, redact
from flowcore.processor.base import InputRequirement
from flowcore.service_order import service_cycles
from flowcore.units import parse_data_size, parse_time_period

__all__ = [
    "CHECKS",
    "FlowProblem",
    "problems_of",
    "short_secret_warnings",
    "short_secrets",
    "validate_flow",
]

log = logging.getLogger(__name__)
#: The short-secret warnings this process logged (each is logged once, see validate_flow).
_WARNED: set[str] = set()


@attrs.frozen
class FlowProblem:
    """One thing wrong with a flow.

    Attributes:
        subject: the component or connection concerned, as the user named it.
        problem: what is wrong.
        fix: what to do about it.
    """

    subject: str
    problem: str
    fix: str = ""

    def __str__(self) -> str:
        return f"{self.subject}: {self.problem}" + (f"; {self.fix}" if self.fix else "")


Check = Callable[[FlowDefinition], Iterator[FlowProblem]]


def _describe(flow: FlowDefinition, connection: Connection) -> str:
    source = flow.component(connection.source)
    destination = flow.component(connection.destination)
    carried = ", ".join(connection.relationships) or "?"
    return f"connection {source.name} -[{carried}]-> {destination.name}"


def _processors(flow: FlowDefinition) -> Iterator[Component]:
    return (c for c in flow.components if c.kind is ComponentKind.PROCESSOR)


def _enabled(flow: FlowDefinition) -> Iterator[Component]:
    """The processors NiFi validates: those not disabled."""
    return (c for c in _processors(flow) if not c.disabled)


def check_not_empty(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """A flow needs at least one processor."""
    if not any(_processors(flow)):
        yield FlowProblem(f"flow '{flow.name}'", "has no processors", "add some with flow.add()")


def check_properties(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Every processor's properties, parameters substituted.

    Required values, allowable values, validators, EL syntax, and each reference to a parameter
    (defined, and sensitive only where NiFi allows); a sensitive value never shows.
    """
    for component in _enabled(flow):
        processor = flow.resolved_processor(component)
        assert processor is not None
        secrets = processor.sensitive_values()
        for result in processor.validate():
            yield FlowProblem(str(component), redact(str(result), secrets))


def check_parameters(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Each parameter a processor references has a value, a sensitive one read from a source.

    A sensitive value comes from the environment or a file, never written in the flow, so it
    never travels with the processors (each process reads it where it is needed).
    """
    referenced = {
        name
        for component in _enabled(flow)
        for names in component.processor.referenced_parameters().values()  # type: ignore[union-attr]
        for name in names
    } | {
        name
        for service in flow.services.values()
        for names in service.referenced_parameters().values()
        for name in names
    }
    for name in sorted(referenced):
        parameter = flow.parameters.find(name)
        if parameter is None:
            continue  # each property referencing it says so
        if parameter.sensitive and parameter.written_in_flow:
            yield FlowProblem(
                f"parameter {name!r}",
                "is sensitive and its value is written in the flow",
                "give it value_from_env or value_from_file (or --parameter-env NAME=ENVVAR)",
            )
            continue
        try:
            parameter.read()
        except ConfigurationError as error:
            why = str(error).removeprefix(f"parameter {name!r} ")
            yield FlowProblem(f"parameter {name!r}", why)


def _service_label(service: object) -> str:
    return f"{type(service).__name__} service '{service.name}'"  # type: ignore[attr-defined]


def _reference_problems(flow: FlowDefinition, subject: str, owner: object) -> Iterator[FlowProblem]:
    """Problems of *owner*'s service properties (a processor's or a service's).

    Each names a declared service implementing the interface the property asks for, which
    passes the owner's ``service_problems(descriptor, service)`` (pairs of problem and fix).
    """
    declared = flow.services
    for descriptor in owner.descriptors():  # type: ignore[attr-defined]
        if not descriptor.identifies_service:
            continue
        name = owner.effective_value(descriptor)  # type: ignore[attr-defined]
        if not name:
            continue
        prop = descriptor.display_name
        interface = descriptor.service_interface
        service = declared.get(name)
        if service is None:
            known = f"it has {sorted(declared)!r}" if declared else "it declares none"
            example = (
                f"MapCacheService({name!r})"
                if interface in (None, "DistributedMapCacheClient")
                else f"<a {interface}>({name!r})"
            )
            yield FlowProblem(
                subject,
                f"{prop!r} names service {name!r}, which flow '{flow.name}' does not "
                f"declare ({known})",
                f"declare it: flow.add_service({example})",
            )
        elif interface is not None and not service.implements_interface(interface):
            yield FlowProblem(
                subject,
                f"{prop!r} names service {name!r} of type {type(service).__name__}, which is "
                f"not a {interface}",
                f"name a service implementing {interface}",
            )
        else:
            # The owner's own checks of the service it names (NiFi's customValidate reading
            # asControllerService: FetchS3Object refuses a Server-side S3 encryption service).
            for why, fix in owner.service_problems(descriptor, service):  # type: ignore[attr-defined]
                yield FlowProblem(subject, f"{prop!r} names service {name!r}: {why}", fix)


def check_services(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Services are declared, of the interface asked for, valid, and name no cycle.

    Each processor's service property names a service the flow declares, implementing the
    interface the property asks for (NiFi's ``identifiesControllerService(Class)``); each
    service's own properties are valid (a sensitive value never shows) and the services it
    names are checked the same way; services naming each other in a cycle are named.
    """
    for component in _processors(flow):
        processor = flow.resolved_processor(component)
        assert processor is not None
        yield from _reference_problems(flow, str(component), processor)
    for name in flow.services:
        service = flow.resolved_service(name)
        subject = _service_label(service)
        secrets = [
            *service.sensitive_values(),
            *(
                v
                for v in getattr(service, "_parameters", {}).values()
                if isinstance(v, SensitiveText)
            ),
        ]
        for result in service.validate():
            yield FlowProblem(subject, redact(str(result), secrets))
        yield from _reference_problems(flow, subject, service)
    for cycle in service_cycles(flow.services):
        around = " -> ".join(repr(n) for n in [*cycle, cycle[0]])
        yield FlowProblem(
            f"service {cycle[0]!r}",
            f"services name each other in a cycle ({around}), so none can be enabled first",
            "break the cycle: one of them must not name the other",
        )


def check_connection_relationships(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Each connection names relationships its source has, at least one."""
    for connection in flow.connections:
        source = flow.component(connection.source)
        known = source.relationship_names()
        if not connection.relationships:
            yield FlowProblem(
                _describe(flow, connection),
                f"names no relationship and {source} has several ({', '.join(known)})",
                "pass the relationship(s) to flow.connect()",
            )
        for name in connection.relationships:
            if name not in known:
                yield FlowProblem(
                    _describe(flow, connection),
                    f"{source} has no relationship {name!r}",
                    f"use one of: {', '.join(known)}",
                )


def check_relationships_handled(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Each relationship is connected or auto-terminated (NiFi's wording).

    Auto-terminated by the user or by the processor's own default (NiFi's rule). A funnel
    with no outgoing connection is valid, as in NiFi: FlowFiles wait queued before it.
    """
    for component in flow.components:
        if component.disabled:
            continue
        connected = {r for c in flow.outgoing(component) for r in c.relationships}
        terminated = flow.auto_terminated(component)
        dropped = flow.terminated(component)
        for name in component.relationship_names():
            if name not in connected and name not in dropped and not flow.is_dead_end(component):
                yield FlowProblem(
                    str(component),
                    f"Relationship '{name}' is not connected to any component and is not "
                    "auto-terminated",
                    f"connect it or call flow.auto_terminate({component.name!r}, {name!r})",
                )
        for name in sorted(terminated - set(component.relationship_names())):
            yield FlowProblem(
                str(component),
                f"auto-terminates {name!r}, which it does not have",
                f"its relationships are: {', '.join(component.relationship_names())}",
            )


def check_inputs(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Input requirements: some processors need incoming connections, sources forbid them."""
    for component in flow.components:
        if component.disabled:
            continue
        incoming = flow.incoming(component)
        if component.kind is ComponentKind.FUNNEL:
            continue  # with no incoming connection it simply never runs, as in NiFi
        assert component.processor is not None
        requirement = component.processor.input_requirement
        if requirement is InputRequirement.INPUT_REQUIRED and not incoming:
            yield FlowProblem(
                str(component),
                "Upstream Connections is invalid because the processor requires an upstream "
                "connection but currently has none",
                "connect a component to it",
            )
        if requirement is InputRequirement.INPUT_FORBIDDEN and incoming:
            yield FlowProblem(
                str(component),
                "is a source and does not accept incoming connections",
                "remove the connections into it",
            )


def check_queue_settings(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Back-pressure thresholds and expirations must parse and not be negative."""
    for connection in flow.connections:
        if connection.settings is None:
            continue
        settings = connection.settings
        subject = _describe(flow, connection)
        objects = settings.back_pressure_object_threshold
        if not isinstance(objects, int) or objects < 0:
            yield FlowProblem(
                subject,
                f"back_pressure_object_threshold {objects!r} is not a whole number >= 0",
                "use e.g. 10000 (0 disables it)",
            )
        try:
            parse_data_size(settings.back_pressure_data_size_threshold)
        except ValueError as ex:
            yield FlowProblem(subject, f"back_pressure_data_size_threshold: {ex}", "e.g. '1 GB'")
        try:
            parse_time_period(settings.flowfile_expiration)
        except ValueError as ex:
            yield FlowProblem(subject, f"flowfile_expiration: {ex}", "e.g. '0 sec' or '5 mins'")


def check_run_schedules(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """A Run Schedule must parse: a period (TIMER_DRIVEN), or a cron expression (CRON_DRIVEN)."""
    for component in _enabled(flow):
        if component.scheduling_strategy is SchedulingStrategy.CRON_DRIVEN:
            try:
                parse_cron(component.run_schedule)
            except ValueError as ex:
                hint = "" if "e.g." in str(ex) else "e.g. '0 0 * * * ?'"
                yield FlowProblem(str(component), f"Run Schedule (run_schedule): {ex}", hint)
            continue
        try:
            parse_time_period(component.run_schedule)
        except ValueError as ex:
            yield FlowProblem(str(component), f"run_schedule: {ex}", "e.g. '0 sec' or '1 min'")


def _period_problem(component: Component, name: str, value: str | None) -> FlowProblem | None:
    if value is None:
        return None
    try:
        parse_time_period(value)
    except ValueError as ex:
        return FlowProblem(str(component), f"{name}: {ex}", "e.g. '30 sec'")
    return None


def check_durations_and_retry(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Penalty and Yield Durations parse; retry settings name known relationships and parse."""
    for component in _enabled(flow):
        for name, value in (
            ("penalty_duration", component.penalty_duration),
            ("yield_duration", component.yield_duration),
        ):
            problem = _period_problem(component, name, value)
            if problem is not None:
                yield problem
        retry = component.retry
        if retry is None:
            continue
        known = component.relationship_names()
        for name in retry.relationships:
            if name not in known:
                yield FlowProblem(
                    str(component),
                    f"retries relationship {name!r}, which it does not have",
                    f"its relationships are: {', '.join(known)}",
                )
        count = retry.count
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            yield FlowProblem(
                str(component),
                f"retry count {count!r} is not a whole number >= 0",
                "use e.g. RetrySettings(['failure'], count=3)",
            )
        problem = _period_problem(component, "max_backoff_period", retry.max_backoff_period)
        if problem is not None:
            yield problem


def _pickle_error(value: object) -> Exception | None:
    """What plain pickle raises for *value*, or ``None`` when it pickles."""
    try:
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        return error
    return None


def _refuses(error: Exception) -> bool:
    """Whether *error* says the object itself cannot be pickled by any pickler.

    A class or function plain pickle cannot find by name (defined in a function, a lambda)
    is no problem: Spark's cloudpickle ships it by value. What an object refuses itself (a
    socket, a lock, an open file: ``TypeError: cannot pickle ...``) no pickler ships.
    """
    return not isinstance(error, (pickle.PicklingError, AttributeError))


def _parts(value: object) -> Iterator[tuple[str, object]]:
    """``(path suffix, item)`` of what *value* holds: attributes, or items of a container."""
    if isinstance(value, dict):
        yield from ((f"[{k!r}]", v) for k, v in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        yield from ((f"[{i}]", v) for i, v in enumerate(value))
    elif isinstance(getattr(value, "__dict__", None), dict):
        yield from ((f".{k}", v) for k, v in vars(value).items())


def _culprit(path: str, value: object, depth: int = 2) -> tuple[str, object, Exception] | None:
    """The innermost part of *value* (within *depth* levels) that cannot be pickled, if any."""
    error = _pickle_error(value)
    if error is None:
        return None
    if depth > 0:
        for suffix, item in _parts(value):
            found = _culprit(path + suffix, item, depth - 1)
            if found is not None:
                return found
    return (path, value, error) if _refuses(error) else None


def _type_name(value: object) -> str:
    kind = type(value)
    module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
    return f"{module}{kind.__qualname__}"


def check_picklable(flow: FlowDefinition) -> Iterator[FlowProblem]:
    """Each processor can be pickled, the attribute that cannot travel named.

    Spark ships processors to its executors (the direct runner pickles them too, to behave
    the same); a processor holding a connection fails there with a long traceback that
    never names it. When the whole processor does not pickle, each attribute of its state is
    tried, two levels deep (an attribute's attributes, a container's items).
    """
    for component in _processors(flow):
        processor = component.processor
        error = _pickle_error(processor)
        if error is None:
            continue
        state = processor.__getstate__()  # type: ignore[union-attr]
        found = None
        if isinstance(state, dict):
            found = next((f for k, v in state.items() if (f := _culprit(k, v)) is not None), None)
        if found is not None:
            path, value, error = found
            yield FlowProblem(
                str(component),
                f"attribute {path!r} holds a {_type_name(value)}, which cannot be pickled to "
                f"Spark executors ({type(error).__name__}: {error})",
                "open it in on_scheduled instead (and release it in on_stopped)",
            )
        elif _refuses(error):
            yield FlowProblem(
                str(component),
                f"cannot be pickled to Spark executors ({type(error).__name__}: {error})",
                "keep what cannot be pickled out of the processor; open it in on_scheduled",
            )


#: The checks, in reporting order.
CHECKS: tuple[Check, ...] = (
    check_not_empty,
    check_properties,
    check_parameters,
    check_services,
    check_connection_relationships,
    check_relationships_handled,
    check_inputs,
    check_queue_settings,
    check_run_schedules,
    check_durations_and_retry,
    check_picklable,
)


def problems_of(flow: FlowDefinition) -> list[FlowProblem]:
    """Every problem of *flow*, in :data:`CHECKS` order."""
    return [problem for check in CHECKS for problem in check(flow)]


def short_secrets(flow: FlowDefinition) -> list[FlowProblem]:
    """Sensitive values too short to be masked in logs: warnings, not problems.

    Messages lose secrets of :data:`~flowcore.parameters.MIN_MASKED_LENGTH` characters or
    more only (masking a password "a" would garble every word holding an "a"), so a shorter
    one shows wherever a processor writes it.
    """
    fix = f"use a secret of at least {MIN_MASKED_LENGTH} characters"
    why = "is too short to be masked in logs"
    found = []
    for component in _enabled(flow):
        processor = flow.resolved_processor(component)
        assert processor is not None
        for name, value in processor.configured.items():
            descriptor = processor.resolve_descriptor(name)
            if descriptor is not None and descriptor.sensitive and _short(value):
                found.append(FlowProblem(str(component), f"the value of {name!r} {why}", fix))
    for name in flow.services:
        service = flow.resolved_service(name)
        configured = service.configured
        found.extend(
            FlowProblem(_service_label(service), f"the value of {prop!r} {why}", fix)
            for prop in sorted(service.sensitive_names())
            if _short(configured.get(prop))
        )
    return found


def short_secret_warnings(flow: FlowDefinition) -> list[FlowProblem]:
    """A valid *flow*'s :func:`short_secrets`, for a command to show its user (none if invalid).

    A log line alone goes unseen when the application logs to a file; what this returns is not
    logged again by :func:`validate_flow` in this process. An invalid flow has its problems to
    show first (and a value may not resolve yet).
    """
    if problems_of(flow):
        return []
    found = short_secrets(flow)
    _WARNED.update(str(w) for w in found)
    return found


def _short(value: str | None) -> bool:
    return bool(value) and len(value) < MIN_MASKED_LENGTH  # type: ignore[arg-type]


def validate_flow(flow: FlowDefinition) -> None:
    """Raise one error listing every problem of *flow*; return quietly when it is valid.

    A valid flow's :func:`short_secrets` are logged as warnings, each once per process.

    Raises:
        FlowValidationError: with ``problems`` holding each :class:`FlowProblem`.
    """
    problems = problems_of(flow)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        msg = f"flow '{flow.name}' is invalid ({count}):\n{lines}"
        raise FlowValidationError(msg, problems)
    for warning in short_secrets(flow):
        if str(warning) not in _WARNED:
            _WARNED.add(str(warning))
            log.warning("%s", warning)
