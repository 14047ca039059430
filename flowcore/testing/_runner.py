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
import logging
import os
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flowcore.clock import now_ms
from flowcore.errors import ConfigurationError, InvalidProcessorError, RelationshipError
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.parameters import Parameter, ParameterContext
from flowcore.process_context import ProcessContext, lowest_logged_level
from flowcore.processor import Processor, ProcessorKind
from flowcore.properties import PropertyDescriptor
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun
from flowcore.relationship import Relationship
from flowcore.services import MapCache, MapCacheService
from flowcore.session._effects import emit
from flowcore.session.host import (
    SELF,
    ComponentInfo,
    FlowFileFilter,
    QueuedFlowFile,
    RetryPolicy,
    SessionCommit,
    SessionOutput,
    SessionSpill,
    StateMap,
)
from flowcore.session.process_session import ProcessSession
from flowcore.ssl_context import StandardSSLContextService
from flowcore.testing._agreement import assert_agreement, record_of, twin_of
from flowcore.testing._batches import INPUT_QUEUE, BatchUse, drain, trigger_batches, unfolded
from flowcore.testing._mock_flowfile import MockFlowFile
from flowcore.testing._queue import InputQueue
from flowcore.validators import ValidationResult
from repositories.disposals import dispose
from repositories.effects import publish, temporary_name
from repositories.memory import MemoryContentRepository, MemoryProvenanceRepository

__all__ = ["TestRunner"]

DEFAULT_PENALIZATION_MS = 30_000  # NiFi's default Penalty Duration (30 sec)
_INPUT_QUEUE = INPUT_QUEUE


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
            id=f"{processor_type}-1", type=processor_type, name=name or processor_type
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
        self._spills: list[SessionSpill] = []
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
        self._staged = itertools.count()
        self._attempt = f"harness-{os.urandom(8).hex()}"  # names this runner's temporaries
        self._next_queue_index = 0
        self._scheduled = False
        self._context: ProcessContext | None = None
        self._caches: dict[str, MapCache] = {}
        self._services: dict[str, object] = {}
        self._keep_contents = False  # while assert_batch_form_agrees reads events' contents

    # --- SessionHost ------------------------------------------------------------------------

    def now(self) -> int:
        """The harness clock in epoch ms: the wall clock at creation plus :meth:`advance_time`."""
        return self._clock_start + self._clock_offset

    @property
    def accepts_batches(self) -> bool:
        """Whether batches made by ``fork_batch`` go whole (in batch mode only)."""
        return self.batches

    def next_flowfile_id(self) -> int:
        """A new FlowFile id."""
        return self.take_flowfile_ids(1)

    def take_flowfile_ids(self, count: int) -> int:
        """*count* consecutive new FlowFile ids; the first."""
        first = self._next_id
        self._next_id += count
        return first

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        """Take queued FlowFiles in order; penalized ones wait until their penalty expires."""
        taken = self.input_queue.take(max_count, flowfile_filter)
        return [QueuedFlowFile(flowfile, _INPUT_QUEUE) for flowfile in taken]

    def relationships(self) -> Collection[str]:
        """The processor's declared relationships."""
        return self.processor.relationship_names()

    def destinations(self, relationship: str) -> int:
        """How many places *relationship* leads to: its transfer list, or none.

        A declared relationship has one destination in the harness unless it is
        auto-terminated (:meth:`auto_terminate`).
        """
        declared = relationship in self.relationships()
        return 1 if declared and not self.is_auto_terminated(relationship) else 0

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped.

        Auto-terminated by :meth:`auto_terminate`, or by the processor's own default
        (``Relationship(..., auto_terminated=True)``), as in an unconnected flow.
        """
        return relationship in self._terminated()

    def _terminated(self) -> frozenset[str]:
        defaults = {r.name for r in self.processor.get_relationships() if r.auto_terminated}
        return frozenset(self._auto_terminated | defaults)

    def get_state(self) -> StateMap:
        """The processor's committed state."""
        return self._state

    def map_cache(self, name: str) -> MapCache:
        """The cache of a service given to :meth:`add_service`.

        Raises:
            ConfigurationError: no service of that name was added.
        """
        cache = self._caches.get(name)
        if cache is None:
            msg = (
                f"the processor names service {name!r}, which the runner does not have; "
                f"add it: runner.add_service(MapCacheService({name!r}))"
            )
            raise ConfigurationError(msg)
        return cache

    def add_service(
        self, service: MapCacheService | StandardSSLContextService
    ) -> MapCache | StandardSSLContextService:
        """Give the processor a service to name (NiFi's ``addControllerService``).

        For a map cache, returns the service's cache, on the harness clock, to look into
        (``len(cache)``, ``cache.get(key)``) or to fill before a run; for another service,
        the service.
        """
        self._services[service.name] = service
        if not isinstance(service, MapCacheService):
            return service
        cache = MapCache(service, {}, self.now)
        self._caches[service.name] = cache
        return cache

    def controller_service(self, name: str) -> object:
        """A service given to :meth:`add_service`.

        Raises:
            ConfigurationError: no service of that name was added.
        """
        service = self._services.get(name)
        if service is None:
            msg = (
                f"the processor names service {name!r}, which the runner does not have; "
                f"add it: runner.add_service(...)"
            )
            raise ConfigurationError(msg)
        return service

    def spill(self, batch: SessionSpill) -> None:
        """Hold finished FlowFiles handed over before commit (only when spill_threshold is set)."""
        self._spills.append(batch)

    def discard_spilled(self) -> None:
        """Forget spilled FlowFiles: their session rolled back."""
        self._spills.clear()

    def apply_commit(self, commit: SessionCommit) -> None:
        """Record transfers, drops, events, state and counters; settle claimant counts."""
        spills, self._spills = self._spills, []
        for batch in spills:
            self._apply_outputs(batch.outputs)
            self.provenance.register(batch.events)
        self._apply_outputs(commit.outputs)
        now = self.now()
        for batch, relationship in commit.batches:  # children forked as one (batch mode)
            queued = batch.queued(now, self.take_queue_indices(batch.count))
            self.record_transfers([(relationship, f) for f in queued.flowfiles()], claimants=True)
            self.batch_use.forked += batch.count
        for relationship, (count, size) in commit.auto_terminated.items():
            self.record_drops(relationship, count, size)
        # a session's runs are the DROPs of batches it forked and auto-terminated whole
        runs = [e for e in commit.events if isinstance(e, ProvenanceEventRun)]
        self.batch_use.forked += sum(run.count for run in runs)
        content = self.content
        candidates = set()
        for consumed in commit.consumed:
            claim = consumed.flowfile.content
            if claim is not None:
                for resource_claim in claim.resource_claims:
                    content.decrement_claimant_count(resource_claim)
                    candidates.add(resource_claim)
        candidates.update(c.resource_claim for c in commit.transient_claims)
        self.remove_unclaimed(candidates)
        self.provenance.register(unfolded(commit.events))
        if commit.state is not None:
            self._state = StateMap(self._state.version + 1, commit.state)
        for name, delta in commit.counters.items():
            self._counters[name] = self._counters.get(name, 0) + delta
        for disposal in commit.disposals:  # the harness commit is final at once
            dispose(disposal)
        for publication in commit.publications:  # the harness commit is final at once
            publish(publication)
        emit(commit.logs)

    def stage_file(self, directory: Path) -> Path:
        """A hidden temporary in *directory* for a sink to write."""
        return Path(directory) / temporary_name(self._attempt, next(self._staged))

    def staged(self, target: str) -> bool:
        """Nothing stays staged in the harness: a commit publishes at once."""
        del target
        return False

    def lowest_logged_level(self, logger: str) -> int:
        """The harness emits deferred lines itself, in this process."""
        return lowest_logged_level(logging.getLogger(logger))

    def reserve(self, target: str) -> bool:
        """The harness runs one session at a time: nothing runs beside it."""
        del target
        return True

    def _apply_outputs(self, outputs: Sequence[SessionOutput]) -> None:
        now = self.now()
        for output in outputs:
            flowfile = output.flowfile.replace(
                queue_date=now, queue_date_index=self.take_queue_indices(1)
            )
            if output.relationship == SELF:
                self._count_claims(flowfile)
                self.input_queue.put(flowfile)
                continue
            self.record_transfers([(output.relationship, flowfile)], claimants=True)

    def _count_claims(self, flowfile: FlowFile) -> None:
        if flowfile.content is not None:
            for resource_claim in flowfile.content.resource_claims:
                self.content.increment_claimant_count(resource_claim)

    def remove_unclaimed(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Remove those of *resource_claims* nothing claims, as a commit does.

        Not while :meth:`assert_batch_form_agrees` compares runs: it reads the contents the
        events name.
        """
        if self._keep_contents:
            return
        for resource_claim in resource_claims:
            if self.content.claimant_count(resource_claim) == 0:
                self.content.remove(resource_claim)

    # --- BatchHost (flowcore.testing._batches) ------------------------------------------------

    def ready_count(self) -> int:
        """How many queued FlowFiles are ready (not penalized)."""
        return len(self.input_queue.ready())

    def take_ready(self) -> list[FlowFile]:
        """Take every ready FlowFile off the queue, in queue order."""
        return self.input_queue.take_ready()

    def requeue(self, flowfiles: Sequence[FlowFile]) -> None:
        """Put FlowFiles back at the front of the queue, in the order given."""
        self.input_queue.put_back(flowfiles)

    def take_queue_indices(self, count: int) -> int:
        """*count* consecutive queue positions; the first."""
        first = self._next_queue_index
        self._next_queue_index += count
        return first

    def record_drops(self, relationship: str, count: int, size: int) -> None:
        """Count *count* FlowFiles of *size* bytes in all as dropped on *relationship*."""
        before = self._dropped.get(relationship, (0, 0))
        self._dropped[relationship] = (before[0] + count, before[1] + size)

    def record_transfers(self, outputs: Sequence[tuple[str, FlowFile]], *, claimants: bool) -> None:
        """Record FlowFiles as transferred, in order; *claimants*: they hold new claim counts."""
        for relationship, flowfile in outputs:
            if claimants:
                self._count_claims(flowfile)
            mock = MockFlowFile(flowfile, repository=self.content)
            self._transfers.setdefault(relationship, []).append(mock)
            self._transfer_order.append((relationship, mock))

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        """Return rolled-back FlowFiles to the front of the queue, in order."""
        self.input_queue.put_back([queued.flowfile for queued in flowfiles])

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
        return ProcessContext(
            self.processor,
            component=self.component,
            clock=self.now,
            state=self.get_state,
            set_state=self.set_state,
            auto_terminated=self._terminated(),
        )

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

    def trigger_per_flowfile(self) -> None:
        """One ordinary trigger, whatever the mode (``on_trigger_sessions``)."""
        self.processor.on_trigger_sessions(self.context, self.create_session)

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
        twin = twin_of(self)
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
            single = record_of(twin, inputs, (0, 0))
            batched = record_of(self, inputs, since, dropped)
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
