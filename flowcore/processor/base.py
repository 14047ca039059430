"""The Processor API: how users and built-ins declare and implement processors.

A processor class declares NiFi-style :class:`~flowcore.properties.PropertyDescriptor` values and
:class:`~flowcore.processor.relationship.Relationship` values, and implements one of four kinds the
engine knows how to run:

* **per-FlowFile** (:class:`Processor`, or
  :class:`~flowcore.processor.kinds.FlowFileTransform` for the common case): narrow
  work on each FlowFile, fused into Spark stages;
* **binning** (:class:`~flowcore.processor.kinds.BinningProcessor`): FlowFiles grouped by a key
  and merged when a bin is ready (MergeContent), a shuffle in Spark;
* **source** (:class:`~flowcore.processor.kinds.SourceProcessor`): lists work on the driver and
  reads each item in a task, with the listing state committed with the output (exactly-once
  ingestion);
* **sink**: per-FlowFile side effects are plain processors;
  :class:`~flowcore.processor.kinds.TwoPhaseSink` writes in tasks and commits on the driver, like
  Spark's DataSource V2 writers.

Processors must be picklable because Spark ships them to executors: keep only configuration in
``__init__`` and open connections, files or clients in :meth:`Processor.on_scheduled`.
"""

from __future__ import annotations

import copy
import difflib
import enum
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from flowcore.parameters import (
    MASK,
    SensitiveText,
    parameter_references,
    substitute_parameters,
)
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import (
    ExpressionLanguageScope,
    PropertyDescriptor,
    active_values,
    parameter_problems,
    property_key,
)
from flowcore.session.batch_context import BatchContext, BatchRoute, WrittenBatch
from flowcore.validators import NON_EMPTY_VALIDATOR, ValidationResult, masked_failures

if TYPE_CHECKING:
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "BatchRoute",
    "Capabilities",
    "InputRequirement",
    "ProcessContext",
    "Processor",
    "ProcessorKind",
    "WrittenBatch",
]


class ProcessorKind(enum.Enum):
    """The core operation a processor compiles to."""

    PER_FLOWFILE = "per-flowfile"
    BINNING = "binning"
    SOURCE = "source"
    SINK = "sink"


class InputRequirement(enum.Enum):
    """Whether a processor needs incoming connections (NiFi's ``@InputRequirement``)."""

    INPUT_REQUIRED = "INPUT_REQUIRED"
    INPUT_ALLOWED = "INPUT_ALLOWED"
    INPUT_FORBIDDEN = "INPUT_FORBIDDEN"


#: Each processor class's property spellings, when its descriptors are fixed.
_DESCRIPTOR_INDEX: dict[type, dict[str, PropertyDescriptor]] = {}


@attrs.frozen
class Capabilities:
    """What the engine may do with a processor type, settled once when the class is made.

    The engine dispatches on these values, never on which class defines a method: a subclass
    that overrides a method a capability stands in for loses that capability here, at its
    definition, so it is never bypassed.

    Attributes:
        run_batching: many triggers in one session (NiFi's ``@SupportsBatching``, and the
            processor keeps the default ``on_trigger_sessions``).
        bins_batches: a binning processor that bins and merges FlowFile batches whole
            (``bin_batches``/``merge_batches``, defined where the methods they stand in for are).
        merges_apart: a binning processor whose ready bins can be merged by another task
            (it implements ``merge_bin``).
        triggers_serially: NiFi's ``@TriggerSerially``: the processor reads and writes its
            state per FlowFile, so each stage run of its stage is one task that sees the state
            the previous stage run committed (parallel tasks would each start from the same
            state and all but one update would be lost at the commit).
        identifies_work: a source whose work items name the data they read (a file's path
            and fingerprint): the FlowFiles an item makes get uuids derived from it, so a
            replayed read makes the same ones (``SourceProcessor.identifies_work``).
    """

    run_batching: bool = False
    bins_batches: bool = False
    merges_apart: bool = False
    triggers_serially: bool = False
    identifies_work: bool = False


class Processor:
    """Base class of every processor.

    Subclasses declare ``property_descriptors`` and ``relationships`` (tuples), and implement
    :meth:`on_trigger`. Properties are set by display name, internal name or snake_case keyword::

        SplitText(line_split_count=1) == SplitText(**{"Line Split Count": "1"})

    Values may be NiFi strings (``"1 min"``, ``"true"``) or Python values (``60``, ``True``).

    The engine promises: :meth:`on_scheduled` runs before the first trigger on each executor (open
    resources there, not in ``__init__``, since processors are pickled); :meth:`on_trigger` runs
    with a fresh session that is committed when it returns and rolled back (inputs penalized) if it
    raises; :meth:`on_stopped` runs after the last trigger, but is not guaranteed after a crash.
    """

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = ()
    relationships: ClassVar[tuple[Relationship, ...]] = ()
    #: NiFi's ``@DynamicRelationship``: the relationships the processor makes from its dynamic
    #: properties, described as one (for ``flowcore processors``; :meth:`get_relationships`
    #: gives the real ones).
    dynamic_relationship: ClassVar[Relationship | None] = None
    supports_dynamic_properties: ClassVar[bool] = False
    input_requirement: ClassVar[InputRequirement] = InputRequirement.INPUT_REQUIRED
    kind: ClassVar[ProcessorKind] = ProcessorKind.PER_FLOWFILE
    #: The kind an ``INPUT_ALLOWED`` processor compiles to where it has incoming connections
    #: (None: :attr:`kind` either way). NiFi's GenerateTableFetch is a source alone and runs
    #: once per incoming FlowFile when fed; the compiler settles it once per flow
    #: (:meth:`with_input`), so validation, stages and tasks all read one kind.
    kind_with_input: ClassVar[ProcessorKind | None] = None
    #: Whether connections from the processor back to itself feed it, for a processor whose kind
    #: depends on its input: NiFi's test of its class, ``context.hasIncomingConnection()``
    #: (True: GenerateTableFetch waits for FlowFiles on a self-loop) or
    #: ``context.hasNonLoopConnection()`` (False: AbstractExecuteSQL whose incoming connections
    #: all loop back to it runs its query on its own, a source).
    fed_by_self_loops: ClassVar[bool] = True
    #: NiFi's ``@SupportsBatching``: the engine may run many triggers in one session and commit
    #: once. Only for processors whose triggers have no side effects outside the session: if
    #: one trigger fails, the session rolls back and the others run again, one session each.
    supports_batching: ClassVar[bool] = False
    #: NiFi's ``@TriggerSerially``: never triggered by two tasks at once (see
    #: :attr:`Capabilities.triggers_serially`); :meth:`runs_serially` may narrow it to some
    #: configurations.
    triggers_serially: ClassVar[bool] = False
    tags: ClassVar[tuple[str, ...]] = ()
    #: Attributes the processor reads and writes, for documentation (``flowcore processors``).
    reads_attributes: ClassVar[Mapping[str, str]] = {}
    writes_attributes: ClassVar[Mapping[str, str]] = {}
    #: Properties NiFi 2 keeps on a controller service this processor names, by each of their
    #: names: where to set them (``Max Poll Records`` on ConsumeKafka: its Kafka Connection
    #: Service's), said instead of a near name when one is set on the processor.
    properties_elsewhere: ClassVar[Mapping[str, str]] = {}

    #: Settled per class when it is made (see :class:`Capabilities`).
    capabilities: ClassVar[Capabilities] = Capabilities()

    # The values ``#{name}`` references read (:meth:`bind_parameters`; None: defined, but its
    # source cannot be read), and the configured values with them substituted, made when first
    # read. Class defaults, so a subclass that skips ``__init__`` still has them.
    _parameters: Mapping[str, str | None] = {}
    _resolved: dict[str, str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.capabilities = cls._capabilities()

    @classmethod
    def _capabilities(cls) -> Capabilities:
        """This class's capabilities; kinds with capabilities of their own extend it."""
        own_sessions = cls.on_trigger_sessions is Processor.on_trigger_sessions
        return Capabilities(
            run_batching=cls.supports_batching and own_sessions,
            triggers_serially=cls.triggers_serially,
        )

    def runs_serially(self) -> bool:
        """Whether this configured processor must run in one task per stage run.

        The class's :attr:`Capabilities.triggers_serially` by default; a processor whose state
        is read and written per FlowFile only in some configurations (UpdateAttribute storing
        state) narrows it here. The compiler makes every stage holding such a member serial.
        """
        return type(self).capabilities.triggers_serially

    def batches_triggers(self) -> bool:
        """Whether the engine may run many triggers of this configured processor in one session.

        The class's :attr:`Capabilities.run_batching` (NiFi's ``@SupportsBatching``) by
        default. A failing trigger rolls back its whole session, and the triggers before it run
        again one session each: only for triggers with no effect outside their session. A
        processor whose triggers fail only in some configurations narrows it here
        (``FlowFileTransform`` without ``failure``).
        """
        return type(self).capabilities.run_batching

    def __init__(self, **properties: Any) -> None:
        self._values: dict[str, str] = {}
        self._unknown: dict[str, str] = {}
        for name, value in properties.items():
            self.set_property(name, value)

    # --- configuration --------------------------------------------------------------------

    def descriptors(self) -> tuple[PropertyDescriptor, ...]:
        """The supported properties, in declaration order (override to depend on config)."""
        return self.property_descriptors

    def get_relationships(self) -> tuple[Relationship, ...]:
        """The relationships in effect for the current configuration (override when dynamic)."""
        return self.relationships

    def relationship_names(self) -> tuple[str, ...]:
        """Names of :meth:`get_relationships`."""
        return tuple(r.name for r in self.get_relationships())

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor | None:
        """Describe a user-defined property *name*, or ``None`` when not supported.

        The default, for processors that support dynamic properties, takes any non-empty value
        with Expression Language over FlowFile attributes.
        """
        if not self.supports_dynamic_properties:
            return None
        return PropertyDescriptor(
            name,
            description="A user-defined property",
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            validators=(NON_EMPTY_VALIDATOR,),
            dynamic=True,
        )

    def _descriptors_by_name(self) -> Mapping[str, PropertyDescriptor]:
        """Every spelling of every supported property, the first declared winning.

        Built once per class when :meth:`descriptors` is the class's fixed list (processors look
        properties up per FlowFile); built each time when a subclass makes it depend on config.
        """
        cls = type(self)
        static = cls.descriptors is Processor.descriptors
        index = _DESCRIPTOR_INDEX.get(cls) if static else None
        if index is None:
            index = {}
            for descriptor in self.descriptors():
                for spelling in descriptor.names():
                    index.setdefault(spelling, descriptor)
            if static:
                _DESCRIPTOR_INDEX[cls] = index
        return index

    def resolve_descriptor(self, name: PropertyDescriptor | str) -> PropertyDescriptor | None:
        """Find the descriptor for a display name, internal name, keyword, alias or descriptor."""
        if isinstance(name, PropertyDescriptor):
            if name.dynamic:
                return name
            name = name.name
        found = self._descriptors_by_name().get(name)
        if found is not None:
            return found
        if name in self._values and self.supports_dynamic_properties:
            return self.get_dynamic_property_descriptor(name)
        return None

    def unknown_property_message(self, name: str) -> str:
        """Explain that *name* is not a property, suggesting the closest ones."""
        elsewhere = self.properties_elsewhere.get(name)
        if elsewhere is not None:
            return f"{name!r} is not a property of {type(self).__name__}: {elsewhere}"
        choices = {n: d for d in self.descriptors() for n in (d.display_name, d.key)}
        close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
        hint = ""
        if close:
            found = choices[close[0]]
            hint = f"; did you mean {found.display_name!r} ({found.key})?"
        elif self.descriptors():
            hint = f"; its properties are {[d.display_name for d in self.descriptors()]!r}"
        return f"{name!r} is not a supported property of {type(self).__name__}{hint}"

    def set_property(self, name: PropertyDescriptor | str, value: Any) -> None:
        """Set a property by any of its names.

        Unknown names become dynamic properties when the processor supports them, else
        validation problems, so every mistake is reported at once.
        """
        descriptor = self.resolve_descriptor(name)
        label = name.name if isinstance(name, PropertyDescriptor) else name
        if value is None:
            self.remove_property(label)
            return
        self._resolved = None
        if descriptor is not None and not descriptor.dynamic:
            self._values[descriptor.name] = descriptor.to_value_string(value)
            return
        dynamic = self.get_dynamic_property_descriptor(label)
        if dynamic is not None:
            self._values[label] = dynamic.to_value_string(value)
            return
        self._unknown[label] = value if isinstance(value, str) else str(value)

    def remove_property(self, name: PropertyDescriptor | str) -> bool:
        """Unset a property (its default applies again); return whether it was set."""
        descriptor = self.resolve_descriptor(name)
        key = descriptor.name if descriptor is not None else str(name)
        self._resolved = None
        found = self._values.pop(key, None) is not None
        return found or self._unknown.pop(key, None) is not None

    # --- parameters ------------------------------------------------------------------------

    def bind_parameters(self, values: Mapping[str, str | None]) -> None:
        """Give ``#{name}`` references in property values their values (NiFi's parameters).

        Values are substituted when a property is read (:meth:`effective_value`, the context's
        ``get_property``), before Expression Language is evaluated; :meth:`validate` reports a
        reference to a name not in *values*. A flow binds a copy (:meth:`with_parameters`).

        Args:
            values: parameter values by name; a sensitive one a
                :class:`~flowcore.parameters.SensitiveText`; None for one whose source cannot
                be read (the flow reports why).
        """
        self._parameters = dict(values)
        self._resolved = None

    def with_parameters(self, values: Mapping[str, str | None]) -> Processor:
        """This processor with *values* bound: itself when no property references any.

        A shallow copy with its own property values, so the configured processor keeps its
        references and a flow run ships only the values its processors read.
        """
        if not any("#" in value for value in self._values.values()):
            return self
        clone = copy.copy(self)
        clone._values = dict(self._values)
        clone._unknown = dict(self._unknown)
        clone.bind_parameters(values)
        return clone

    def is_fed(self, has_incoming: bool, has_non_loop: bool) -> bool:
        """Whether the processor counts as fed, given NiFi's two tests of its connections.

        *has_incoming*: any incoming connection; *has_non_loop*: one from another component.
        Which one counts is the class's (:attr:`fed_by_self_loops`).
        """
        return has_incoming if self.fed_by_self_loops else has_non_loop

    def kind_for(self, has_input: bool) -> ProcessorKind:
        """The kind this processor runs as with (or without) incoming connections."""
        if has_input and self.kind_with_input is not None:
            return self.kind_with_input
        return type(self).kind

    def with_input(self, has_input: bool) -> Processor:
        """This processor as it runs with (or without) incoming connections.

        Itself unless its kind depends on its input (:attr:`kind_with_input`): then a shallow
        copy whose :attr:`kind` is the one for *has_input*, so every reader of
        ``processor.kind`` (stages, tasks, sinks) agrees without being told about input.
        """
        kind = self.kind_for(has_input)
        if kind is self.kind:
            return self
        clone = copy.copy(self)
        clone.kind = kind  # type: ignore[misc]  # an instance's settled kind shadows the class's
        return clone

    @property
    def parameter_values(self) -> Mapping[str, str | None]:
        """The values bound to parameter references (:meth:`bind_parameters`)."""
        return self._parameters

    def sensitive_values(self) -> list[str]:
        """Every secret the processor holds, to redact from its messages.

        The values of its sensitive properties (declared, or dynamic ones its
        :meth:`get_dynamic_property_descriptor` calls sensitive, as a NiFi 2 Python processor's
        may), written in the flow or read from parameters, and the sensitive parameters bound
        to it (a non-sensitive property may not reference them, but its code may read them).
        """
        found = [str.__str__(v) for v in self._parameters.values() if isinstance(v, SensitiveText)]
        for name, value in self._configured_values().items():
            descriptor = self.resolve_descriptor(name)
            if value and descriptor is not None and descriptor.sensitive:
                found.append(str.__str__(value))
        return found

    def referenced_parameters(self) -> dict[str, tuple[str, ...]]:
        """The parameter names each configured property references, by its internal name."""
        found = {}
        for name, value in self._values.items():
            names = parameter_references(value, expressions=self._evaluates(name))
            if names:
                found[name] = names
        return found

    def referenced_services(self) -> dict[str, str]:
        """The service each set service property names, by the property's display name.

        Properties with ``identifies_service`` (NiFi's ``identifiesControllerService``);
        validation checks the flow declares each, and the compiler ships them with the stage.
        """
        found = {}
        for descriptor in self.descriptors():
            if descriptor.identifies_service:
                value = self.effective_value(descriptor)
                if value:
                    found[descriptor.display_name] = value
        return found

    def _evaluates(self, name: str) -> bool:
        descriptor = self.resolve_descriptor(name)
        return descriptor is not None and descriptor.supports_expressions

    def _configured_values(self) -> Mapping[str, str]:
        """The configured values with parameters substituted (made once per configuration)."""
        resolved = self._resolved
        if resolved is None:
            resolved = {
                name: value
                if "#" not in value
                else substitute_parameters(
                    value, self._parameters, expressions=self._evaluates(name)
                )
                for name, value in self._values.items()
            }
            self._resolved = resolved
        return resolved

    def _parameter_problems(self) -> tuple[list[ValidationResult], set[str]]:
        """NiFi's rules for references, and the properties whose references cannot resolve."""
        return parameter_problems(
            self.referenced_parameters(), self.resolve_descriptor, self._values, self._parameters
        )

    @property
    def configured(self) -> Mapping[str, str]:
        """The values explicitly set, by internal name (dynamic properties included)."""
        return dict(self._configured_values())

    @property
    def raw_configured(self) -> Mapping[str, str]:
        """The values explicitly set, by internal name, as written: ``#{name}`` references kept.

        What a definition holds (an export writes these; :attr:`configured` substitutes
        parameters, as a run reads them). Dynamic properties included; unknown names are not.
        """
        return dict(self._values)

    @property
    def dynamic_properties(self) -> dict[str, str]:
        """User-defined properties, in the order they were set."""
        names = self._descriptors_by_name()
        return {k: v for k, v in self._configured_values().items() if k not in names}

    def effective_value(self, descriptor: PropertyDescriptor) -> str | None:
        """The configured value (parameters substituted), else the default."""
        value = self._configured_values().get(descriptor.name)
        return descriptor.default if value is None else value

    def effective_values(self) -> dict[str, str | None]:
        """Every supported property's effective value, by internal name."""
        return {d.name: self.effective_value(d) for d in self.descriptors()}

    def active_values(self) -> dict[str, str | None]:
        """Effective values, with every property whose dependencies are unmet set to None."""
        return active_values(self.descriptors(), self.effective_values())

    # --- validation ------------------------------------------------------------------------

    def validate(self) -> tuple[ValidationResult, ...]:
        """Return every configuration problem at once; empty when valid."""
        problems: list[ValidationResult] = []
        for name, value in self._unknown.items():
            why = self.unknown_property_message(name)
            problems.append(ValidationResult(name, value, False, why))
        # A property whose references cannot resolve is reported for them alone.
        referencing, unresolved = self._parameter_problems()
        problems.extend(referencing)
        effective = self.effective_values()
        values = self.active_values()
        for descriptor in self.descriptors():
            if descriptor.display_name not in unresolved:
                problems.extend(descriptor.validate(effective[descriptor.name], values))
        for name, value in self.dynamic_properties.items():
            dynamic = self.get_dynamic_property_descriptor(name)
            if dynamic is not None and name not in unresolved:
                problems.extend(dynamic.validate(value))
        sensitive = {
            label for d in self.descriptors() if d.sensitive for label in (d.name, d.display_name)
        }
        problems.extend(masked_failures(self.custom_validate(values), sensitive))
        return tuple(problems)

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """Cross-property checks (NiFi's ``customValidate``); *values* by internal name."""
        del values
        return ()

    def service_problems(
        self, descriptor: PropertyDescriptor, service: Any
    ) -> Iterable[tuple[str, str]]:
        """Checks of the *service* a property names: pairs of problem and fix.

        NiFi's customValidate reading ``asControllerService``; flow validation runs it, since
        only the flow knows which service a name means.
        """
        del descriptor, service
        return ()

    def is_valid(self) -> bool:
        """Whether :meth:`validate` finds nothing."""
        return not self.validate()

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def logger(self) -> logging.Logger:
        """This processor type's logger (``flowcore.processors.<Type>``)."""
        return logging.getLogger(f"flowcore.processors.{type(self).__name__}")

    def on_scheduled(self, context: ProcessContext) -> None:
        """Called once before the first trigger; open resources here."""

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        """Carry out the after-commit actions this processor's sessions recorded.

        ``session.after_commit(action)`` records remote work (delete the fetched remote file,
        complete an upload) that may happen only once the session's FlowFiles are durable.
        The engine calls this on the driver after the write-ahead log transaction that made
        them durable, with one task's actions in the order recorded, and again at start-up
        when a crash came in between: so each action must be idempotent (a file already
        gone is done). The actions run on a worker thread of their own (one per processor,
        so never two calls at once), and a commit waits for them at most the
        ``after_commit_budget`` setting (:mod:`flowcore.driver.after_commit`). A failure is the
        processor's to report (a warning, as NiFi's completion strategies); raise
        :class:`~flowcore.errors.AfterCommitRetry` for actions that must be tried again later
        (they stay recorded in the repository, across a restart); anything else raised becomes
        a bulletin and is not retried.
        """
        del context, actions
        msg = f"{type(self).__name__} records after-commit actions but does not carry them out"
        raise NotImplementedError(msg)

    def settle_after_commit_actions(
        self, context: ProcessContext, pending: Sequence[Mapping[str, Any]]
    ) -> None:
        """Undo what task attempts that never committed left half-done outside flowcore.

        Called on the driver at start-up, once every committed action is handed over, and
        after each commit of a stage run of this processor (no task of it runs then).
        *pending* holds this processor's after-commit actions whose FlowFiles are committed
        and that are not carried out yet (they will be). A processor whose tasks leave work
        half-done outside flowcore until that action completes it (PutDatabaseRecord's
        prepared transactions) undoes here every such piece that no pending action names:
        its task attempt never committed. The default does nothing.
        """
        del context, pending

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Do one unit of work with *session*; the caller commits it."""
        msg = f"{type(self).__name__} must implement on_trigger"
        raise NotImplementedError(msg)

    def on_trigger_sessions(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """Run one trigger with sessions from *session_factory* (NiFi's session-factory form).

        The default creates one session, calls :meth:`on_trigger`, and commits; if anything
        raises, the session is rolled back with its inputs penalized and the error propagates.
        Override it when FlowFiles must outlive one trigger in sessions of their own (bins).
        """
        session = session_factory()
        try:
            self.on_trigger(context, session)
            session.commit()
        except BaseException:
            session.rollback(penalize=True)
            raise

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> tuple[str, FlowFileBatch] | Sequence[BatchRoute] | None:
        """Process a whole FlowFile batch at once (:mod:`flowcore.flowfile_batch`), if it can.

        The batch form of a processor that changes attributes, routes or rewrites content: it
        must do to each FlowFile exactly what :meth:`on_trigger` would, working on columns
        instead of one FlowFile at a time (:meth:`FlowFileBatch.with_columns`,
        :func:`flowcore.expression.evaluate_column`, :meth:`FlowFileBatch.where`). Engine tasks
        and the test harness give it a :class:`BatchContext`: the processor's context, plus
        the batch's contents read in windows (``context.contents``), new contents written as
        one (``context.write_contents``, a :class:`WrittenBatch`), and a session's external
        effects (``stage_file``, ``log_after_commit``, ``report_send``). Return
        ``(relationship, batch)`` when every FlowFile goes to one relationship, or one
        :class:`BatchRoute` per part, which together hold every FlowFile exactly once. The
        engine records the provenance as runs (CONTENT_MODIFIED where contents changed,
        ATTRIBUTES_MODIFIED where only attributes did, or the events a route reports) and
        passes the parts on whole.

        Return None (the default) when this configuration cannot, and raise when a FlowFile
        fails: the engine then gives the FlowFiles to :meth:`on_trigger` one by one, as
        always, which reports each failure.
        """
        del context, batch
        return None

    def on_unscheduled(self, context: ProcessContext) -> None:
        """Called when the processor stops being scheduled, before :meth:`on_stopped`."""

    def on_stopped(self, context: ProcessContext) -> None:
        """Called after the last trigger; release resources. Not guaranteed after a crash."""

    def __repr__(self) -> str:
        shown = []
        for key, value in self._values.items():  # as configured: references, not their values
            descriptor = self.resolve_descriptor(key)
            hidden = descriptor is not None and descriptor.sensitive and "#{" not in value
            label = property_key(key) if descriptor is not None else key
            shown.append(f"{label}={MASK if hidden else value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def same_configuration(self, other: Processor) -> bool:
        """Whether *other* is the same processor type configured with the same values.

        Processors are mutable configuration holders, so they compare by identity; use this to
        compare configurations (e.g. after a pickle round trip).
        """
        return (
            type(self) is type(other)
            and self._values == other._values
            and self._unknown == other._unknown
            and self.advanced_configuration() == other.advanced_configuration()
        )

    def advanced_configuration(self) -> tuple[tuple[str, Any], ...]:
        """Configuration held outside the properties, as ``(keyword, value)`` pairs.

        NiFi keeps such configuration as a processor's annotation data, set in its Advanced
        UI (UpdateAttribute's rules). Each keyword is the constructor argument that takes the
        value, so a flow written back as Python passes it on; flow comparison and export read
        it too. Empty for most processors.
        """
        return ()
