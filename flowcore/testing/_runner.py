"""``TestRunner``: the processor test harness's runner (usage: :mod:`flowcore.testing`).

The harness drives the processor through the real
:class:`~flowcore.session.process_session.ProcessSession` over in-memory repositories, so sessions,
provenance and claim counting behave as in a flow run. Semantics follow NiFi's mock harness: an
enqueued FlowFile gets ``filename`` = ``<n>.mockFlowFile``, ``path`` = ``target`` and a ``uuid``;
``run(n)`` calls ``on_scheduled``, triggers *n* times, then stops; the clock only moves when
:meth:`TestRunner.advance_time` says so.

``TestRunner(processor, batches=True)`` runs the processor's batch forms instead, as the engine
does (:mod:`flowcore.testing._batches`), and :meth:`TestRunner.assert_batch_form_agrees` checks
them against the one-by-one form (:mod:`flowcore.testing._agreement`).
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flowcore.clock import now_ms
from flowcore.controller_service import ControllerService, ServiceSet
from flowcore.errors import ConfigurationError, InvalidProcessorError, RelationshipError
from flowcore.flowfile import FlowFile
from flowcore.parameters import Parameter, ParameterContext
from flowcore.processor.base import Processor, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.provenance_events import ProvenanceEvent
from flowcore.services import MapCache, MapCacheService
from flowcore.session.host import ComponentInfo, RetryPolicy, StateMap
from flowcore.session.process_session import ProcessSession
from flowcore.testing._agreement import RunRecord, SeenFlowFile, assert_agreement
from flowcore.testing._batches import BatchUse, drain, trigger_batches
from flowcore.testing._host import HarnessHost
from flowcore.testing._mock_flowfile import MockFlowFile
from flowcore.testing._queue import InputQueue
from flowcore.validators import ValidationResult
from repositories.held_content import HeldContent
from repositories.memory import MemoryContentRepository, MemoryProvenanceRepository

__all__ = ["TestRunner"]

DEFAULT_PENALIZATION_MS = 30_000  # NiFi's default Penalty Duration (30 sec)

#: What sessions (``SessionHost``, ``SpillingHost``) and batch mode (``BatchHost``) ask of the
#: runner beyond its NiFi surface: defined on :class:`HarnessHost`, forwarded by the runner.
_HOST_MEMBERS = frozenset(name for name in vars(HarnessHost) if not name.startswith("_"))


class _Forwarded:
    """A member of the harness's plumbing, reached through the runner but held by its host.

    Sessions and batch mode run over the runner (``ProcessSession(runner)``) and ask it for
    ids, queued FlowFiles, routing facts and the commit. Those members are not the runner's
    API (NiFi's ``TestRunner`` has none of them), so they live on its
    :class:`~flowcore.testing._host.HarnessHost`; each is a class attribute of the runner that
    hands over the host's, so ``isinstance`` checks against the session's protocols,
    ``super()`` in a subclass that overrides one (``destinations``), and ``mock.patch`` see it.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, runner: TestRunner | None, owner: type) -> Any:
        if runner is None:
            return self
        return getattr(runner._host, self.name)


class TestRunner:
    """Runs one processor against an in-memory queue, NiFi's ``TestRunner`` in Python.

    Args:
        processor: a processor instance or class (instantiated with no arguments).
        name: the component name used in provenance (default: the class name).
        batches: run the processor's batch forms, as the engine does when FlowFiles arrive as
            batches: each trigger hands every ready FlowFile to ``transform_batch`` (or
            ``bin_batches``) as FlowFile batches, sessions take batches (``fork_batch``), and
            what a batch form declines is triggered one FlowFile at a time
            (:mod:`flowcore.testing._batches`). Results read as in the default mode.
        parameters: values for ``#{name}`` references in the processor's properties (a dict
            of name -> value, or a :class:`~flowcore.parameters.ParameterContext`); more with
            :meth:`set_parameter`.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        processor: Processor | type[Processor],
        *,
        name: str | None = None,
        batches: bool = False,
        parameters: ParameterContext | Mapping[str, str] | None = None,
    ) -> None:
        self.processor: Processor = processor() if isinstance(processor, type) else processor
        #: The parameter context the processor's ``#{name}`` references read.
        self.parameters = ParameterContext.of(parameters)
        if parameters is not None:
            self._bind_parameters()
        processor_type = type(self.processor).__name__
        self.component = ComponentInfo(
            id=f"{processor_type}-1",
            type=processor_type,
            name=name or processor_type,
            repository_id=uuid.uuid4().hex[:16],  # one per runner, as one per repository
        )
        self.content = MemoryContentRepository()
        self.provenance = MemoryProvenanceRepository()
        self.penalization_ms = DEFAULT_PENALIZATION_MS
        #: NiFi's relationship retry: FlowFiles sent to its relationships come back to the
        #: queue, penalized, as the engine's sessions do (None: no retry).
        self.retry_policy: RetryPolicy | None = None
        #: Hand finished FlowFiles over every this many (None: never, as NiFi's mock).
        self.spill_threshold: int | None = None
        #: Whether triggers run the batch forms (see the ``batches`` argument).
        self.batches = batches
        #: How batch-mode triggers used the batch forms: FlowFiles taken whole, and declines.
        self.batch_use = BatchUse()
        self._auto_terminated: set[str] = set()
        self._dropped: dict[str, tuple[int, int]] = {}  # auto-terminated: FlowFiles, bytes
        self.uuid_salt = ""  # the harness queue is not committed input: replays are not tested
        self.uuid_sequences: dict[str, list] = {}
        # Ready FlowFiles in queue order, and penalized ones aside until their penalty expires
        # (NiFi's queues sort penalized FlowFiles last and never hand them out early).
        self.input_queue = InputQueue(self.now)
        self._transfers: dict[str, list[MockFlowFile]] = {}
        self._transfer_order: list[tuple[str, MockFlowFile]] = []
        self._state = StateMap()
        self._counters: dict[str, int] = {}
        self._next_id = 1
        self._clock_start = now_ms()
        self._clock_offset = 0
        self._names = itertools.count(1)
        self._next_queue_index = 0
        self._scheduled = False
        self._incoming = True  # NiFi's MockProcessContext: an incoming connection by default
        self._non_loop: bool | None = None  # as _incoming, unless set_non_loop_connection
        self._context: ProcessContext | None = None
        self._caches: dict[str, MapCache] = {}
        self._services: dict[str, ControllerService] = {}
        self._service_set = ServiceSet({})  # the added services, enabled while it runs
        self._keep_contents = False  # while assert_batch_form_agrees reads events' contents
        #: The plumbing its sessions and batch mode ask for (ids, queue, commit).
        self._host = HarnessHost(self)

    # --- clock, state and services ------------------------------------------------------------

    def now(self) -> int:
        """The harness clock in epoch ms: the wall clock at creation plus :meth:`advance_time`."""
        return self._clock_start + self._clock_offset

    def _terminated(self) -> frozenset[str]:
        defaults = {r.name for r in self.processor.get_relationships() if r.auto_terminated}
        return frozenset(self._auto_terminated | defaults)

    def get_state(self) -> StateMap:
        """The processor's committed state."""
        return self._state

    def add_service(self, service: ControllerService) -> MapCache | ControllerService:
        """Give the processor a service to name (NiFi's ``addControllerService``).

        Any :class:`~flowcore.controller_service.ControllerService`. It is enabled (its
        ``on_enabled`` run on a runtime copy, what it names first) before :meth:`run` schedules
        the processor, or when the processor first asks for it, and disabled when the processor
        stops; :meth:`enable_controller_service` and :meth:`disable_controller_service` do it
        by hand, as NiFi's harness does.

        For a map cache, returns the service's cache, on the harness clock, to look into
        (``len(cache)``, ``cache.get(key)``) or to fill before a run; for another service,
        the service.

        Raises:
            ConfigurationError: it is not a controller service.
        """
        if not isinstance(service, ControllerService):
            msg = f"add_service takes a controller service (a ControllerService), got {service!r}"
            raise ConfigurationError(msg)
        self._service_set.disable(service.name)
        self._services[service.name] = service
        self._service_set.declared[service.name] = service
        if not isinstance(service, MapCacheService):
            return service
        cache = MapCache(service, {}, self.now)
        self._caches[service.name] = cache
        return cache

    def enable_controller_service(self, service: ControllerService | str) -> ControllerService:
        """Enable an added service (and what it names) now; the enabled runtime object."""
        return self.controller_service(service if isinstance(service, str) else service.name)

    def disable_controller_service(self, service: ControllerService | str) -> None:
        """Disable an added service (``on_disabled``), and first every service naming it."""
        self._service_set.disable(service if isinstance(service, str) else service.name)

    def controller_service(self, name: str) -> object:
        """The enabled service *name* given to :meth:`add_service` (enabled now if it is not).

        Raises:
            ConfigurationError: no service of that name was added, or it cannot be enabled.
        """
        if name not in self._services:
            msg = (
                f"the processor names service {name!r}, which the runner does not have; "
                f"add it: runner.add_service(...)"
            )
            raise ConfigurationError(msg)
        self._declare_services()
        return self._service_set.get(name)

    def _declare_services(self) -> None:
        """The added services as they are enabled: parameters bound, each one valid.

        As NiFi's harness refuses to enable an invalid service.

        Raises:
            ConfigurationError: a service not yet enabled is invalid (every problem named).
        """
        for name, service in self._services.items():
            if name in self._service_set.enabled:
                continue
            names = {p for found in service.referenced_parameters().values() for p in found}
            bound = service.with_parameters(self.parameters.values_for(names))
            problems = bound.validate()
            if problems:
                listed = "; ".join(str(p) for p in problems)
                msg = f"service {name!r} cannot be enabled, it is invalid: {listed}"
                raise ConfigurationError(msg)
            self._service_set.declared[name] = bound

    def _count_claims(self, flowfile: FlowFile) -> None:
        if flowfile.content is not None:
            for resource_claim in flowfile.content.resource_claims:
                self.content.increment_claimant_count(resource_claim)

    # --- configuration ----------------------------------------------------------------------

    def set_property(self, name: PropertyDescriptor | str, value: Any) -> ValidationResult:
        """Set a property by display name, internal name, keyword or descriptor.

        Returns the validation result of that property alone, as NiFi's ``setProperty``.
        """
        self.processor.set_property(name, value)
        label = name.display_name if isinstance(name, PropertyDescriptor) else name
        descriptor = self.processor.resolve_descriptor(name)
        if descriptor is None:
            return ValidationResult(
                label, str(value), False, self.processor.unknown_property_message(label)
            )
        problems = descriptor.validate(
            self.processor.effective_value(descriptor), self.processor.effective_values()
        )
        return (
            problems[0]
            if problems
            else ValidationResult(descriptor.display_name, str(value), True, "valid")
        )

    def remove_property(self, name: PropertyDescriptor | str) -> bool:
        """Unset a property; return whether it was set."""
        return self.processor.remove_property(name)

    def auto_terminate(
        self, relationships: Relationship | str | Iterable[Relationship | str]
    ) -> None:
        """Drop what goes to *relationships*, as ``flow.auto_terminate`` does in a flow.

        FlowFiles sent there are not transferred (``flowfiles_for`` stays empty): each gets a
        DROP event "Auto-Terminated by <relationship> Relationship" and is counted
        (:meth:`auto_terminated_count`); ``context.is_auto_terminated`` says so.

        Raises:
            RelationshipError: the processor does not declare one of them.
        """
        given = [relationships] if isinstance(relationships, Relationship | str) else relationships
        names = [self._relationship_name(r) for r in given]
        declared = self.relationships()
        unknown = [n for n in names if n not in declared]
        if unknown:
            msg = (
                f"{type(self.processor).__name__} has no relationship {unknown[0]!r} to "
                f"auto-terminate; its relationships are: {', '.join(sorted(declared))}"
            )
            raise RelationshipError(msg)
        self._auto_terminated.update(names)
        self._context = None  # made again, saying which relationships are auto-terminated

    def auto_terminated_count(self, relationship: Relationship | str) -> int:
        """How many FlowFiles were dropped on auto-terminated *relationship*."""
        return self._dropped.get(self._relationship_name(relationship), (0, 0))[0]

    def set_parameter(self, name: str, value: str, *, sensitive: bool = False) -> None:
        """Define (or redefine) parameter *name*, which ``#{name}`` references read.

        A sensitive one may only be referenced by sensitive properties, as in a flow; here,
        unlike in a flow, its value may be written in the test.
        """
        parameter = Parameter(name, value, sensitive=sensitive)
        self.parameters = self.parameters.overridden_by([parameter])
        self._bind_parameters()

    def _bind_parameters(self) -> None:
        self.processor.bind_parameters(self.parameters.values_for(self.parameters.effective()))

    def validation_problems(self) -> tuple[ValidationResult, ...]:
        """Every configuration problem of the processor."""
        return self.processor.validate()

    def is_valid(self) -> bool:
        """Whether the processor's configuration is valid."""
        return not self.validation_problems()

    def assert_valid(self) -> None:
        """Assert the configuration is valid, listing every problem otherwise."""
        problems = self.validation_problems()
        if problems:
            listed = "\n  ".join(str(p) for p in problems)
            msg = f"{type(self.processor).__name__} is invalid:\n  {listed}"
            raise AssertionError(msg)

    def assert_not_valid(self) -> None:
        """Assert the configuration is invalid."""
        if self.is_valid():
            msg = f"{self.processor!r} is valid, expected it to be invalid"
            raise AssertionError(msg)

    # --- input ------------------------------------------------------------------------------

    def _mock_filename(self) -> str:
        return f"{time.monotonic_ns()}{next(self._names):04d}.mockFlowFile"

    def enqueue(
        self,
        content: bytes | str | os.PathLike[str] | MockFlowFile = b"",
        attributes: Mapping[str, str] | None = None,
    ) -> MockFlowFile:
        """Queue a FlowFile with *content* and *attributes*.

        *content* is bytes, UTF-8 text, a file path, or a MockFlowFile from another runner.
        Defaults as NiFi's mock: ``filename`` ``<n>.mockFlowFile`` (a path's base name for a
        path), ``path`` ``target``, and a ``uuid``; *attributes* override them (not ``uuid``).
        A MockFlowFile brings its content and attributes, as NiFi's ``enqueue(FlowFile...)``.
        """
        given = dict(attributes or {})
        if isinstance(content, MockFlowFile):
            given = {**{k: v for k, v in content.attributes.items() if k != "uuid"}, **given}
            content = content.content
        if isinstance(content, os.PathLike):
            data = Path(content).read_bytes()
            given.setdefault("filename", Path(content).name)
        elif isinstance(content, str):
            data = content.encode("utf-8")
        else:
            data = bytes(content)
        claim = self.content.write_bytes(data) if data else None
        now = self.now()
        base = {"filename": self._mock_filename(), "path": "target", **given}
        flowfile = FlowFile.create(self.next_flowfile_id(), now, base, content=claim)
        flowfile = flowfile.replace(queue_date_index=self.take_queue_indices(1))
        if claim is not None:
            self.content.increment_claimant_count(claim.resource_claim)
        self.input_queue.put(flowfile)
        return MockFlowFile(flowfile, data)

    # --- running ----------------------------------------------------------------------------

    def _make_context(self) -> ProcessContext:
        context = ProcessContext(
            self.processor,
            component=self.component,
            clock=self.now,
            state=self.get_state,
            set_state=self.set_state,
            auto_terminated=self._terminated(),
            has_incoming_connection=self._incoming,
            has_non_loop_connection=self._non_loop,
        )
        context.committed_content = HeldContent(self.content)
        context.service_lookup = self.controller_service  # as the driver's (list_work uses it)
        return context

    def set_incoming_connection(self, has_incoming: bool) -> None:
        """Whether the processor has an incoming connection (NiFi's ``setIncomingConnection``).

        True by default, as NiFi's mock. It is what ``context.has_incoming_connection()``
        answers and, for a processor whose kind depends on its input
        (``Processor.kind_with_input``: GenerateTableFetch), the kind it runs as, as a flow's
        compiler decides from its connections: without one, a source.
        """
        self._incoming = has_incoming
        if self._context is not None:
            self._context._has_input = has_incoming

    def set_non_loop_connection(self, has_non_loop: bool) -> None:
        """Whether another component feeds the processor (NiFi's ``setNonLoopConnection``).

        As :meth:`set_incoming_connection` until set. False with an incoming connection stands
        for a flow whose only connections into the processor loop back to it: what
        ``context.has_non_loop_connection()`` answers, and for ExecuteSQL (its class's
        ``fed_by_self_loops`` False) a source, as a flow's compiler decides.
        """
        self._non_loop = has_non_loop
        if self._context is not None:
            self._context._non_loop = has_non_loop

    @property
    def context(self) -> ProcessContext:
        """The process context handed to the processor."""
        if self._context is None:
            self._context = self._make_context()
        return self._context

    def run(
        self, iterations: int = 1, stop_on_finish: bool = True, initialize: bool = True
    ) -> None:
        """Schedule (``on_scheduled``), trigger *iterations* times, then stop unless told not to.

        Each trigger gets a new session, committed when the processor returns; if it raises, the
        session is rolled back with its inputs penalized and the exception propagates.

        Raises:
            InvalidProcessorError: the configuration is invalid (every problem is listed).
        """
        problems = self.validation_problems()
        if problems:
            listed = "\n  ".join(str(p) for p in problems)
            msg = f"cannot run {type(self.processor).__name__}; it is invalid:\n  {listed}"
            raise InvalidProcessorError(msg, problems)
        context = self.context
        if initialize and not self._scheduled:
            self._declare_services()
            self._service_set.enable_all()  # services before the processor that uses them
            self.processor.on_scheduled(context)
            self._scheduled = True
        try:
            for _ in range(iterations):
                self.trigger_once()
        finally:
            if stop_on_finish:
                self.stop()

    def trigger_once(self) -> None:
        """Trigger the processor once with fresh sessions (``on_scheduled`` not called).

        In batch mode a trigger hands every ready FlowFile to the batch form, as an engine task
        does (see the ``batches`` argument).
        """
        if self.batches:
            trigger_batches(self)
        else:
            self.trigger_per_flowfile()

    def create_session(self) -> ProcessSession:
        """A new session over this harness (the processor's session factory)."""
        return ProcessSession(self)

    def stop(self) -> None:
        """Unschedule and stop the processor (``on_unscheduled``, ``on_stopped``)."""
        if self._scheduled:
            context = self.context
            self.processor.on_unscheduled(context)
            self.processor.on_stopped(context)
            self._scheduled = False
            self._service_set.disable_all()  # after the processor that used them

    def advance_time(self, seconds: float) -> None:
        """Move the harness clock forward (ages bins, expires penalties)."""
        self._clock_offset += round(seconds * 1000)

    # --- batch forms ------------------------------------------------------------------------

    def assert_batch_form_agrees(
        self, *, allow_decline: bool = False, twin_properties: Mapping[str, Any] | None = None
    ) -> None:
        """Run the queue through the batch form here and one by one on a twin; assert they agree.

        This runner runs once in batch mode (:meth:`run`: on_scheduled, one trigger taking
        every ready FlowFile, stop), so its transfers and events are the batch form's
        afterwards, for further assertions. A twin (a pickled copy of the processor, with the
        same queue, state and clock) triggers one FlowFile at a time while its queue shrinks,
        once more for a binning processor, then stops: the one-by-one path an engine task
        takes. Compared: the FlowFiles on each relationship in transfer order (content, and
        attributes but ``uuid``; an attribute holding a uuid compares by the FlowFile it names),
        the FlowFiles left queued, the provenance events as a multiset of shapes (type,
        component, FlowFile, relationship, details, attribute changes, sizes, parents and
        children), state and counters.

        Args:
            allow_decline: accept a run in which no FlowFile went through a batch form (the
                processor has none, or declines this configuration: ``transform_batch`` or
                ``bin_batches`` returned None or raised); else that fails, saying why.
            twin_properties: properties set on the twin only: a sink's output place
                (PutFile's or PutDataset's Directory), so the two runs write apart and
                neither finds the other's files.

        Raises:
            AssertionError: nothing is queued, the batch form was not used (unless
                *allow_decline*), a batch form returned routes the engine would not take, or
                the runs differ: every difference listed, naming the FlowFile.
        """
        twin = self._twin()
        for name, value in (twin_properties or {}).items():
            twin.set_property(name, value)
        inputs = tuple(f.uuid for f in self.queued_flowfiles)
        since = (len(self._transfer_order), len(self.provenance.events()))
        dropped = dict(self._dropped)
        used = BatchUse(self.batch_use.whole, self.batch_use.forked)
        declined = len(self.batch_use.declined)
        batches, self.batches = self.batches, True
        self._keep_contents = twin._keep_contents = True
        try:
            self.run()
        finally:
            self.batches = batches
        used.whole = self.batch_use.whole - used.whole
        used.forked = self.batch_use.forked - used.forked
        used.declined = self.batch_use.declined[declined:]
        twin.run(0, stop_on_finish=False)  # validates and schedules
        try:
            drain(twin, once_more=twin.processor.kind is ProcessorKind.BINNING)
        finally:
            twin.stop()
        try:
            single = twin._record(inputs, (0, 0))
            batched = self._record(inputs, since, dropped)
        finally:
            self._keep_contents = False
        assert_agreement(self.processor, single, batched, used, allow_decline=allow_decline)

    # --- assertions -------------------------------------------------------------------------

    def _relationship_name(self, relationship: Relationship | str) -> str:
        return relationship.name if isinstance(relationship, Relationship) else relationship

    def flowfiles_for(self, relationship: Relationship | str) -> list[MockFlowFile]:
        """FlowFiles transferred to *relationship* since the last clear, in transfer order."""
        return list(self._transfers.get(self._relationship_name(relationship), []))

    def assert_transfer_count(self, relationship: Relationship | str, count: int) -> None:
        """Assert how many FlowFiles went to *relationship*."""
        actual = len(self.flowfiles_for(relationship))
        if actual != count:
            msg = (
                f"expected {count} FlowFiles transferred to "
                f"{self._relationship_name(relationship)!r} but got {actual}; "
                f"transfers: {self._transfer_summary()}"
            )
            raise AssertionError(msg)

    def assert_all_flowfiles_transferred(
        self, relationship: Relationship | str, count: int | None = None
    ) -> None:
        """Assert every transferred FlowFile went to *relationship* (and exactly *count*)."""
        name = self._relationship_name(relationship)
        others = {r: len(f) for r, f in self._transfers.items() if r != name and f}
        if others:
            msg = f"expected all FlowFiles to go to {name!r}, but some went to {others!r}"
            raise AssertionError(msg)
        if count is not None:
            self.assert_transfer_count(name, count)

    def _transfer_summary(self) -> dict[str, int]:
        return {r: len(f) for r, f in self._transfers.items() if f}

    def clear_transfer_state(self) -> None:
        """Forget recorded transfers."""
        self._transfers.clear()
        self._transfer_order.clear()

    def queue_size(self) -> int:
        """How many FlowFiles are queued for the processor (penalized ones included)."""
        return len(self.input_queue)

    def assert_queue_empty(self) -> None:
        """Assert nothing is queued."""
        if self.queue_size():
            msg = f"expected the input queue to be empty but it holds {self.queue_size()} FlowFiles"
            raise AssertionError(msg)

    def assert_queue_not_empty(self) -> None:
        """Assert something is queued."""
        if not self.queue_size():
            msg = "expected the input queue to hold FlowFiles but it is empty"
            raise AssertionError(msg)

    @property
    def queued_flowfiles(self) -> list[FlowFile]:
        """The queued FlowFiles: ready ones in order, then penalized ones."""
        return [*self.input_queue.ready(), *self.input_queue.penalized()]

    @property
    def penalized_flowfiles(self) -> list[FlowFile]:
        """Queued FlowFiles still under penalty."""
        return self.input_queue.penalized()

    @property
    def provenance_events(self) -> list[ProvenanceEvent]:
        """Every provenance event committed, in order."""
        return self.provenance.events()

    def clear_provenance_events(self) -> None:
        """Forget recorded provenance events."""
        self.provenance = MemoryProvenanceRepository()

    @property
    def state(self) -> Mapping[str, str]:
        """The processor's state map."""
        return dict(self._state.values)

    def set_state(self, values: Mapping[str, str]) -> None:
        """Replace the processor's state (NiFi's ``MockStateManager.setState``)."""
        self._state = StateMap(self._state.version + 1, dict(values))

    def get_counter_value(self, name: str) -> int | None:
        """A counter's value, ``None`` when never adjusted."""
        return self._counters.get(name)

    def _twin(self) -> TestRunner:
        """A runner of a pickled copy of the processor: this queue, state, clock and services."""
        twin = type(self)(pickle.loads(pickle.dumps(self.processor)), name=self.component.name)
        twin.component = self.component
        twin.penalization_ms = self.penalization_ms
        twin.retry_policy = self.retry_policy
        twin._auto_terminated = set(self._auto_terminated)
        twin._clock_start, twin._clock_offset = self._clock_start, self._clock_offset
        twin._next_id, twin._next_queue_index = self._next_id, self._next_queue_index
        twin._state, twin._counters = self._state, dict(self._counters)
        twin.uuid_sequences = {k: list(v) for k, v in self.uuid_sequences.items()}
        for service in self._services.values():  # the same services; a map cache's entries too
            cache = twin.add_service(service)
            if isinstance(cache, MapCache):
                twin._caches[service.name] = MapCache(
                    service, self._caches[service.name].to_state(), twin.now
                )
        for flowfile in [*self.input_queue.ready(), *self.input_queue.penalized()]:
            claim = None
            if flowfile.content is not None:
                claim = twin.content.write_bytes(self.content.read(flowfile.content))
            copy = flowfile.replace(content=claim)
            twin._count_claims(copy)
            twin.input_queue.put(copy)
        return twin

    def _record(
        self,
        inputs: tuple[str, ...],
        since: tuple[int, int],
        dropped_before: Mapping[str, tuple[int, int]] | None = None,
    ) -> RunRecord:
        """What this runner produced after *since* (transfers, events), for a comparison.

        *dropped_before* is what was dropped per auto-terminated relationship before (FlowFiles
        and bytes): the record counts what was dropped since.
        """

        def seen(flowfile: FlowFile, content: bytes) -> SeenFlowFile:
            return SeenFlowFile(flowfile.uuid, dict(flowfile.attributes), content)

        transfers: dict[str, list[SeenFlowFile]] = {}
        dropped = {}
        for relationship, (count, size) in self._dropped.items():
            earlier = (dropped_before or {}).get(relationship, (0, 0))
            if count > earlier[0]:
                dropped[relationship] = (count - earlier[0], size - earlier[1])
        for relationship, mock in self._transfer_order[since[0] :]:
            transfers.setdefault(relationship, []).append(seen(mock.flowfile, mock.content))
        # By queue position: FlowFiles of bins a stop rolls back return bin after bin.
        left = sorted(self.queued_flowfiles, key=lambda f: (f.queue_date, f.queue_date_index))
        queued = [
            seen(f, self.content.read(f.content) if f.content is not None else b"") for f in left
        ]
        return RunRecord(
            inputs=inputs,
            transfers={r: tuple(f) for r, f in transfers.items()},
            events=tuple(self.provenance.events()[since[1] :]),
            queued=tuple(queued),
            state=self.state,
            counters=dict(self._counters),
            dropped=dropped,
        )


for _name in sorted(_HOST_MEMBERS):
    setattr(TestRunner, _name, _Forwarded(_name))
