"""The ProcessContext: what a scheduled processor sees of its configuration and environment.

The engine's tasks, the controller (for sources' listings and sinks' commits) and the test harness
each build one per processor; the processor reads its properties, state and relationships through
it, never through the engine's own objects, so the same processor code runs everywhere.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, ParamSpec, Protocol, TypeVar

from flowcore.errors import ConfigurationError
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor, PropertyValue

if TYPE_CHECKING:
    from flowcore.flowfile import Content, FlowFile
    from flowcore.processor.binning import Bin
    from flowcore.session.host import ComponentInfo, StateMap
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "CommittedContent",
    "ConfiguredProcessor",
    "ProcessContext",
    "carry_context",
    "leave_behind",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")
#: What :func:`carry_context` resets in the threads it runs: (context variable, its default).
_LEFT: list[tuple[contextvars.ContextVar[object], object]] = []


class ConfiguredProcessor(Protocol):
    """What a context needs of its processor: its properties, relationships and last hook.

    A :class:`~flowcore.processor.Processor` is one. Named here, below the Processor API, so
    that the processor module imports this one and not the other way round (the hooks a
    processor implements take a context).
    """

    @property
    def dynamic_properties(self) -> Mapping[str, str]:
        """The user-defined properties, by name."""

    def descriptors(self) -> tuple[PropertyDescriptor, ...]:
        """The supported properties, in declaration order."""

    def resolve_descriptor(self, name: PropertyDescriptor | str) -> PropertyDescriptor | None:
        """The descriptor *name* spells, or None."""

    def unknown_property_message(self, name: str) -> str:
        """Why *name* is not a property, with the closest ones."""

    def effective_value(self, descriptor: PropertyDescriptor) -> str | None:
        """The configured value, else the default."""

    def relationship_names(self) -> tuple[str, ...]:
        """The relationships in effect."""

    def on_stopped(self, context: ProcessContext) -> None:
        """Called after the last trigger."""


class CommittedContent(Protocol):
    """Reads committed FlowFile content after its commit, where the commit happens.

    For a processor's driver side that must read a FlowFile's content once the FlowFile has
    moved on (HandleHttpResponse streams a large body to its client after the commit): a hold
    keeps the content's claims claimed, so the content repository neither archives nor
    destroys them, until it is released. The engine's driver and the test harness give one
    (:attr:`ProcessContext.committed_content`).
    """

    def hold(self, content: Content) -> None:
        """Claim *content* once more: it stays readable until :meth:`release`."""

    def read(self, content: Content, offset: int, length: int) -> bytes:
        """*length* bytes of *content* from *offset* (a window: never the whole of a large one).

        Raises:
            ContentNotFoundError, ContentCorruptionError: as the content repository's reads.
        """

    def release(self, content: Content) -> None:
        """Let go of one :meth:`hold` of *content*."""


def processor_logger(type_name: str) -> logging.Logger:
    """The logger of processors of type *type_name* (``flowcore.processors.<type>``)."""
    return logging.getLogger(f"flowcore.processors.{type_name}")


def lowest_logged_level(logger: logging.Logger) -> int:
    """The lowest level *logger* emits here (its effective level, or past ``logging.disable``)."""
    return max(logger.getEffectiveLevel(), logging.root.manager.disable + 1)


class ProcessContext:
    """What a processor sees of its configuration and environment while scheduled.

    Built by the runner or the test harness. Property values come back as
    :class:`~flowcore.properties.PropertyValue` with NiFi's accessors.
    """

    def __init__(
        self,
        processor: ConfiguredProcessor,
        *,
        component: ComponentInfo,
        clock: Callable[[], int],
        state: Callable[[], StateMap],
        set_state: Callable[[Mapping[str, str]], None] | None = None,
        auto_terminated: Iterable[str] = (),
        has_incoming_connection: bool = True,
        resumed_bins: bool = False,
        has_non_loop_connection: bool | None = None,
    ) -> None:
        self.processor = processor
        self.component = component
        self._clock = clock
        self._state = state
        self._set_state = set_state
        self._auto_terminated = frozenset(auto_terminated)
        self._has_input = has_incoming_connection
        #: None: as :attr:`_has_input` (no connection loops back to the processor)
        self._non_loop = has_non_loop_connection
        #: Set by the engine, whose binning tasks rebuild bins from queued FlowFiles each
        #: micro-batch: a bin's age then counts from its oldest FlowFile's queue date.
        self.resumed_bins = resumed_bins
        #: Set by the engine to merge ready bins in other tasks: a binning processor that
        #: implements :meth:`BinningProcessor.merge_bin` hands each ready bin (with the session
        #: holding its FlowFiles) to this callable instead of processing it.
        self.bin_sink: Callable[[Bin, ProcessSession], None] | None = None
        self.yielded = False
        #: Set by :meth:`yield_until`: when the processor will take its queued FlowFiles.
        self.held_until: int | None = None
        self.logger = processor_logger(component.type)
        #: FlowFile id -> (the FlowFile as seen, what user code decided for it): see
        #: :meth:`carry_outcome`.
        self._carried: dict[int, tuple[FlowFile, object]] = {}
        #: Set where a source lists its work (the driver): the flow's enabled services by name,
        #: for a source that asks a service what there is to read (QueryDatabaseTable).
        self.service_lookup: Callable[[str], object] | None = None
        #: Set where a two-phase sink publishes (the driver) and in the test harness: committed
        #: content to read after the commit (see :class:`CommittedContent`).
        self.committed_content: CommittedContent | None = None

    @property
    def name(self) -> str:
        """The processor's name in the flow."""
        return self.component.name

    def now(self) -> int:
        """The current time in epoch milliseconds (the harness clock under test)."""
        return self._clock()

    def get_property(self, descriptor: PropertyDescriptor | str) -> PropertyValue:
        """Return a property's effective value (configured, else default).

        Raises:
            ConfigurationError: *descriptor* names no property of this processor.
        """
        resolved = self.processor.resolve_descriptor(descriptor)
        if resolved is None:
            name = descriptor.name if isinstance(descriptor, PropertyDescriptor) else descriptor
            msg = self.processor.unknown_property_message(name)
            raise ConfigurationError(msg)
        value = self.processor.effective_value(resolved)
        return PropertyValue(value, resolved, clock=self._clock)

    @property
    def properties(self) -> Mapping[PropertyDescriptor, str | None]:
        """Every supported property with its effective value, in declaration order."""
        return {d: self.processor.effective_value(d) for d in self.processor.descriptors()}

    @property
    def dynamic_properties(self) -> Mapping[str, str]:
        """The user-defined (dynamic) properties, by name."""
        return self.processor.dynamic_properties

    def get_state(self) -> StateMap:
        """The processor's committed state."""
        return self._state()

    def set_state(self, values: Mapping[str, str]) -> None:
        """Replace the processor's state outside a session (NiFi's state manager).

        Meant for ``on_scheduled``. Inside ``on_trigger`` stage state with the session instead,
        so it commits with the output.

        Raises:
            ConfigurationError: the runner cannot store state outside a session.
        """
        if self._set_state is None:
            msg = f"{self.component.type} cannot set state here; use session.set_state()"
            raise ConfigurationError(msg)
        self._set_state(values)

    def is_auto_terminated(self, relationship: Relationship | str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped by the flow."""
        name = relationship.name if isinstance(relationship, Relationship) else relationship
        return name in self._auto_terminated

    def has_incoming_connection(self) -> bool:
        """Whether anything feeds this processor."""
        return self._has_input

    def has_non_loop_connection(self) -> bool:
        """Whether a connection from another component feeds this processor (NiFi's method).

        False when every incoming connection loops back to the processor itself: NiFi's
        ExecuteSQL then runs its query on its own.
        """
        return self._has_input if self._non_loop is None else self._non_loop

    def controller_service(self, name: str) -> object:
        """The enabled service *name*, where the context has services (a source's listing).

        Raises:
            ConfigurationError: this context was given no services.
        """
        if self.service_lookup is None:
            msg = f"{self.component.type}: no controller services here (asked for {name!r})"
            raise ConfigurationError(msg)
        return self.service_lookup(name)

    def yield_(self) -> None:
        """Ask not to be triggered again for the yield duration (1 sec by default)."""
        self.yielded = True

    def yield_until(self, epoch_ms: int) -> None:
        """Ask not to be triggered before *epoch_ms*, when what is queued can go on.

        For a processor that knows when its input will be taken (ControlRate: when its rate
        window opens). The engine keeps the FlowFiles it left queued until then and retries
        them at that time; a batch run waits for it instead of ending with them queued, as it
        does after plain yields.
        """
        self.yielded = True
        self.held_until = epoch_ms if self.held_until is None else min(self.held_until, epoch_ms)

    # --- user code runs once per FlowFile -------------------------------------------------

    def carry_outcome(self, flowfile: FlowFile, outcome: object) -> None:
        """Keep what user code decided for *flowfile*, for its trigger later in this attempt.

        A batch form that ran per-FlowFile user code (``FlowFileTransform.transform``) and
        then declines leaves each FlowFile's outcome here, so the one-by-one path applies it
        instead of running the code again: user code runs once per FlowFile per attempt.
        """
        self._carried[flowfile.id] = (flowfile, outcome)

    def carried_outcome(self, flowfile: FlowFile) -> object | None:
        """The outcome carried for *flowfile* (taken: given once), or None.

        Only for the FlowFile as it was seen (same attributes and content): a FlowFile that
        changed since is another attempt.
        """
        kept = self._carried.pop(flowfile.id, None)
        if kept is None:
            return None
        seen, outcome = kept
        same = seen.content == flowfile.content and seen.attributes == flowfile.attributes
        return outcome if same else None


# --- threads a processor starts ---------------------------------------------------------------


def carry_context(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """*fn*, to run in another thread in a copy of the context current now.

    flowcore masks a processor's secrets in every log record made while it runs through
    context variables, and a new thread starts with an empty context: a thread the processor
    starts (a server's connection threads, a pool of calls) would log them in clear. Give the
    thread or the pool the wrapped callable instead::

        threading.Thread(target=carry_context(self._serve), daemon=True).start()
        pool.submit(carry_context(call), request)

    Each call runs in a copy of its own, so a pool's threads may run it at once (one context
    cannot be entered by two threads). What belongs to one task only (the member a record
    becomes a bulletin of, see :func:`leave_behind`) is left behind: a server's thread
    outlives the task that started it.
    """
    captured = contextvars.copy_context()

    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return captured.copy().run(_left_behind, fn, *args, **kwargs)

    run.__wrapped__ = fn  # type: ignore[attr-defined]
    return run


def leave_behind(variable: contextvars.ContextVar[_R], default: _R) -> None:
    """Have :func:`carry_context` set *variable* to *default* in the threads it runs."""
    _LEFT.append((variable, default))  # type: ignore[arg-type]


def _left_behind(fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    for variable, default in _LEFT:
        variable.set(default)
    return fn(*args, **kwargs)
