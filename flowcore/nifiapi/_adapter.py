"""A NiFi Python processor class made a flowcore processor class: :func:`processor_class`.

The adapter is the whole bridge, not a second engine: ``processor_class(UpperCase)`` is a
flowcore :class:`~flowcore.processor.kinds.FlowFileTransform` (or
:class:`~flowcore.processor.kinds.SourceProcessor`) named ``UpperCase`` whose properties and
relationships are the NiFi class's, made flowcore's, and whose ``transform`` calls NiFi's. So it
runs where any flowcore processor runs: in flows, fused into Spark stages, in ``TestRunner``.

What NiFi's Java side does around a Python processor is done as NiFi does it
(``FlowFileTransformProxy``, ``FlowFileSourceProxy``, ``PythonProcessorAdapter``):

* relationships: a transform has the processor's (``success`` unless it implements
  ``getRelationships``) plus ``failure`` and ``original``, auto-terminated by default; a source
  has ``success`` plus the processor's;
* an exception in ``transform`` sends the FlowFile, unchanged, to ``failure``, logged; a result
  to ``failure`` sets its attributes but not its contents; ``original`` gets a clone of the
  input, unless it is auto-terminated;
* a source's ``create`` returning None makes nothing; an exception is logged and makes nothing.

A source's ``create`` runs where flowcore sources list their work (the driver), and what it
sets with ``getStateManager().setState`` is committed with the FlowFile it made. A transform
reads its state from the state committed, and sets it in its FlowFile's session; one that asks
for its state manager at all runs one FlowFile at a time, serially (its source says
``getStateManager``), so each sees the last one's state.

Pickling: a processor whose NiFi class was loaded from an extensions directory
(:func:`import_extension`) pickles as that file's path, its module's source and its
configuration. Unpickled (in a Spark executor), the file is imported again by path, its
directory on ``sys.path`` so a package's sibling modules import as on the driver (or, where the
file is not, its source is run), and a new NiFi instance is made and configured, as NiFi makes
one in each Python process: what ``__init__`` sets is configuration, what ``onScheduled`` opens
is opened again there. A class defined elsewhere (a test's) pickles as any processor.
"""

from __future__ import annotations

import copyreg
import functools
import hashlib
import importlib.abc
import importlib.util
import inspect
import io
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from flowcore.errors import ConfigurationError, InvalidProcessorError, ProcessException
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext as FlowcoreContext
from flowcore.processor.kinds import (
    FlowFileTransform,
    SourceProcessor,
    TransformResult,
    WorkItem,
    WorkListing,
    _Failed,
)
from flowcore.processor.relationship import Relationship as FlowcoreRelationship
from flowcore.properties import ExpressionLanguageScope as FlowcoreScope
from flowcore.properties import PropertyDependency as FlowcoreDependency
from flowcore.properties import PropertyDescriptor as FlowcoreDescriptor
from flowcore.properties import PropertyValue
from flowcore.session._content import CONTENT_FAILURE_REASON
from flowcore.session._transform import FlowFileView, damage_reason
from flowcore.session.host import StateMap
from flowcore.validators import ValidationResult as FlowcoreValidation
from flowcore.validators import Validator
from nifiapi.componentstate import StateException, StateManager
from nifiapi.flowfilesource import FlowFileSource
from nifiapi.flowfiletransform import FlowFileTransform as NiFiTransform
from nifiapi.logging import Logger
from nifiapi.properties import (
    ExpressionLanguageScope,
    ProcessContext,
    PropertyDescriptor,
    ValidationContext,
)
from nifiapi.recordtransform import RecordTransform
from nifiapi.relationship import Relationship

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.session.batch_context import BatchContext, BatchRoute
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "InputFlowFile",
    "SourceAdapter",
    "TransformAdapter",
    "flowcore_descriptor",
    "flowcore_relationship",
    "processor_class",
]

#: NiFi's implicit relationships of a Python transform (``PythonProcessorProxy``).
ORIGINAL = FlowcoreRelationship(
    "original",
    "The original FlowFile will be routed to this relationship when it has been "
    "successfully transformed",
    auto_terminated=True,
)
FAILURE = FlowcoreRelationship(
    "failure",
    "The original FlowFile will be routed to this relationship if it unable to be "
    "transformed for some reason",
)
#: A transform's relationship when it does not implement ``getRelationships``.
TRANSFORM_SUCCESS = FlowcoreRelationship(
    "success", "All FlowFiles will go to this relationship after being successfully processed"
)
#: A source's relationship, always there (``FlowFileSourceProxy``).
SOURCE_SUCCESS = FlowcoreRelationship(
    "success", "FlowFiles created by this processor can be routed to this relationship."
)


def flowcore_descriptor(descriptor: PropertyDescriptor, *, dynamic: bool = False) -> Any:
    """The flowcore descriptor a NiFi Python ``PropertyDescriptor`` stands for.

    Raises:
        InvalidProcessorError: the descriptor is not one (names the property and what it is).
    """
    if not isinstance(descriptor, PropertyDescriptor):
        msg = f"a property descriptor is {type(descriptor).__name__} {descriptor!r}, not a " + (
            "nifiapi.properties.PropertyDescriptor"
        )
        raise InvalidProcessorError(msg)
    scope = descriptor.expressionLanguageScope
    scope_name = scope.name if isinstance(scope, ExpressionLanguageScope) else str(scope or "NONE")
    validators = [v for v in descriptor.validators or () if isinstance(v, Validator)]
    return FlowcoreDescriptor(
        descriptor.displayName or descriptor.name,
        name=descriptor.name,
        description=descriptor.description or "",
        default=descriptor.defaultValue,
        required=bool(descriptor.required),
        allowable_values=[str(v) for v in descriptor.allowableValues or ()],
        validators=validators,
        el_scope=FlowcoreScope[scope_name],
        dependencies=[
            FlowcoreDependency(d.property_name, tuple(d.dependent_values))
            for d in descriptor.dependencies or ()
        ],
        sensitive=bool(descriptor.sensitive),
        dynamic=dynamic or bool(descriptor.dynamic),
        identifies_service=descriptor.controllerServiceDefinition is not None,
    )


def flowcore_relationship(relationship: Relationship) -> FlowcoreRelationship:
    """The flowcore relationship a NiFi Python ``Relationship`` stands for."""
    return FlowcoreRelationship(
        relationship.name,
        relationship.description or "",
        auto_terminated=bool(relationship.auto_terminated),
    )


def _united(*groups: Sequence[FlowcoreRelationship]) -> tuple[FlowcoreRelationship, ...]:
    """The relationships of *groups* in order, each name once (NiFi keeps a set)."""
    found: dict[str, FlowcoreRelationship] = {}
    for group in groups:
        for relationship in group:
            found.setdefault(relationship.name, relationship)
    return tuple(found.values())


def instantiate(nifi_class: type) -> Any:
    """A NiFi processor as NiFi makes one: ``cls(jvm=...)``, here with no JVM.

    Processors take ``jvm`` or ``**kwargs`` (NiFi passes ``jvm=``); one whose constructor takes
    neither is made without arguments.
    """
    parameters = inspect.signature(nifi_class).parameters
    takes = "jvm" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
    return nifi_class(jvm=None) if takes else nifi_class()


_SAFE = re.compile(r"[^A-Za-z0-9_]")
#: What a module loaded from an extensions directory is given: where it is, what it holds.
_ORIGIN = "__flowcore_extension__"


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()[:8]
    return f"nifi_python_extension_{_SAFE.sub('_', path.stem)}_{digest}"


def import_extension(path: Path, search: Path, source: str | None = None) -> Any:
    """Import the extension module at *path* under a name of its own (once per process).

    *search* (its directory, or its package's) goes on ``sys.path``, as NiFi puts it, so a
    package's modules import one another by name. Where *path* is not a file (an executor
    without the directory), *source* is run instead.

    Raises:
        ConfigurationError: the module fails to import (names it and the error).
    """
    name = _module_name(path)
    found = sys.modules.get(name)
    if found is not None:
        return found
    if search.is_dir() and str(search) not in sys.path:
        sys.path.append(str(search))
    text = source
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    if text is None:
        msg = f"Python extension {path} is not there"
        raise ConfigurationError(msg)
    loader = _SourceText(str(path), text)
    spec = importlib.util.spec_from_loader(name, loader=loader, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    setattr(module, _ORIGIN, (str(path), str(search), text))
    sys.modules[name] = module
    try:
        loader.exec_module(module)  # Python's import machinery, as `import` loads a file
    except Exception as error:
        del sys.modules[name]
        msg = f"Python extension {path} failed to load: {type(error).__name__}: {error}"
        raise ConfigurationError(msg) from error
    return module


class _SourceText(importlib.abc.SourceLoader):
    """An import loader for an extension's source text: the file's, or the pickled copy."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def get_filename(self, fullname: str) -> str:
        del fullname
        return self.path

    def get_data(self, path: str) -> bytes:
        del path
        return self.text.encode("utf-8")


def _rebuilt(origin: tuple[str, str, str], class_name: str, state: dict[str, Any]) -> Processor:
    """A processor unpickled: its extension imported by path, a new NiFi instance configured."""
    path, search, source = origin
    module = import_extension(Path(path), Path(search), source)
    cls = processor_class(getattr(module, class_name))
    made = cls.__new__(cls)
    made.__dict__.update(state)
    made._with_nifi_instance()  # type: ignore[attr-defined]
    return made


class InputFlowFile:
    """The FlowFile ``transform`` is given, with NiFi's ``InputFlowFile`` methods.

    Attributes:
        flowfile: the flowcore FlowFile (Expression Language evaluation takes it).
    """

    def __init__(self, view: FlowFileView) -> None:
        self._view = view
        self.flowfile = view.flowfile

    def getContentsAsBytes(self) -> bytes:
        """The whole content."""
        return self._view.read()

    def getContentsAsReader(self) -> io.TextIOWrapper:
        """The content as UTF-8 text, read line by line (``readLine``, ``readline``, iterate).

        NiFi's reader is closed by the framework when ``transform`` returns; nothing here can
        tell when a Python reader is done with, so the content is read first (as
        :meth:`getContentsAsBytes` reads it) and the lines come from memory.
        """
        reader = io.TextIOWrapper(io.BytesIO(self._view.read()), encoding="utf-8")
        reader.readLine = reader.readline  # type: ignore[attr-defined] - Java's spelling
        return reader

    def getSize(self) -> int:
        """The content's size in bytes."""
        return self.flowfile.size

    def getAttribute(self, name: str) -> str | None:
        """One attribute, or None."""
        return self.flowfile.attributes.get(name)

    def getAttributes(self) -> dict[str, str]:
        """Every attribute, as a new dict."""
        return dict(self.flowfile.attributes)

    def __repr__(self) -> str:
        return f"InputFlowFile({self.flowfile})"


def _strings(attributes: Mapping[str, Any] | None) -> dict[str, str] | None:
    """*attributes* with string values (NiFi's map holds strings), or None."""
    if not attributes:
        return None
    return {str(k): "" if v is None else str(v) for k, v in attributes.items()}


class _StateSlot(Protocol):
    """Where NiFi's state manager reads and writes during a call.

    The FlowFile's session (or, in a batch form, its batch context) in ``transform``, the
    listing's :class:`_ListingState` in a source's ``create``, the processor's context outside
    them (``onScheduled``): each stages or stores state as that call commits it.
    """

    def get_state(self) -> StateMap:
        """The state as this call sees it."""

    def set_state(self, values: Mapping[str, str]) -> None:
        """Replace the state, as this call commits it."""


class _NiFiProcessor:
    """What both adapters share: the NiFi instance, its properties, context and lifecycle."""

    #: The NiFi Python processor class this adapter runs.
    nifi_class: ClassVar[type]
    #: Whether the NiFi class asks for its state manager (its source says so).
    uses_state: ClassVar[bool] = False
    #: Whether the NiFi class implements ``getRelationships``.
    _own_relationships: ClassVar[bool] = False
    #: The relationships every adapter of this kind adds to the processor's.
    _implicit: ClassVar[tuple[FlowcoreRelationship, ...]] = ()
    _implicit_first: ClassVar[bool] = False

    # Built when used, and left out of pickles (see __getstate__).
    _context: tuple[FlowcoreContext, ProcessContext] | None = None
    #: The state slot of the trigger running now (None: the context's, outside triggers).
    _state_now: _StateSlot | None = None
    _relationships: tuple[list[Any], tuple[FlowcoreRelationship, ...]] | None = None

    def __init__(self, **properties: Any) -> None:
        self._with_nifi_instance()
        super().__init__(**properties)  # type: ignore[call-arg]

    def _with_nifi_instance(self) -> None:
        """Make the NiFi processor this one runs, as NiFi makes it, with its logger."""
        nifi = instantiate(type(self).nifi_class)
        nifi.logger = Logger(f"flowcore.processors.{type(self).__name__}")
        self.nifi = nifi
        own = getattr(nifi, "getPropertyDescriptors", None)
        self._nifi_descriptors = {d.name: d for d in (own() if callable(own) else ())}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("_context", "_state_now", "_relationships"):
            state.pop(name, None)
        return state

    def __reduce__(self) -> tuple[Any, ...]:
        """By the extension's path and source when loaded from one (see the module's notes)."""
        module = sys.modules.get(type(self).nifi_class.__module__)
        origin = getattr(module, _ORIGIN, None)
        if origin is None:
            return (copyreg.__newobj__, (type(self),), self.__getstate__())
        state = self.__getstate__()
        del state["nifi"], state["_nifi_descriptors"]
        return (_rebuilt, (origin, type(self).nifi_class.__name__, state))

    # --- configuration ----------------------------------------------------------------------

    def get_relationships(self) -> tuple[FlowcoreRelationship, ...]:
        """The processor's relationships now, with the implicit ones (NiFi's set, in order)."""
        if not self._own_relationships:
            return type(self).relationships  # type: ignore[attr-defined]
        given = list(self.nifi.getRelationships() or ())
        cached = self._relationships
        if cached is not None and cached[0] == given:
            return cached[1]
        own = [flowcore_relationship(r) for r in given]
        groups = (self._implicit, own) if self._implicit_first else (own, self._implicit)
        made = _united(*groups)
        self._relationships = (given, made)
        return made

    def get_dynamic_property_descriptor(self, name: str) -> Any:
        """The NiFi processor's ``getDynamicPropertyDescriptor(name)``, made flowcore's."""
        if not self.supports_dynamic_properties:  # type: ignore[attr-defined]
            return None
        found = self.nifi.getDynamicPropertyDescriptor(name)
        return None if found is None else flowcore_descriptor(found, dynamic=True)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[FlowcoreValidation]:
        """NiFi's ``customValidate(context)``, its results made flowcore's."""
        check = getattr(self.nifi, "customValidate", None)
        if not callable(check):
            return []
        given = {
            name: PropertyValue(value, self.resolve_descriptor(name))  # type: ignore[attr-defined]
            for name, value in values.items()
            if name in self._nifi_descriptors
        }
        found = check(ValidationContext(None, self._nifi_descriptors, given)) or ()
        return [FlowcoreValidation(r.subject, r.input, bool(r.valid), r.explanation) for r in found]

    # --- the context NiFi's methods are given -----------------------------------------------

    def _nifi_context(self, context: FlowcoreContext) -> ProcessContext:
        """NiFi's ProcessContext over *context*: made once per flowcore context."""
        made = self._context
        if made is not None and made[0] is context:
            return made[1]
        active = self.active_values()  # type: ignore[attr-defined]
        descriptors: dict[str, Any] = {}
        values: dict[str, PropertyValue] = {}
        for descriptor in self.descriptors():  # type: ignore[attr-defined]
            if descriptor.is_enabled(active):
                descriptors[descriptor.name] = self._nifi_descriptors.get(descriptor.name)
                values[descriptor.name] = context.get_property(descriptor)
        for name in self.dynamic_properties:  # type: ignore[attr-defined]
            nifi = self.nifi.getDynamicPropertyDescriptor(name)
            descriptors[name] = nifi or PropertyDescriptor(name, "A user-defined property")
            values[name] = context.get_property(name)
        state = StateManager(
            lambda: self._read_state(context), lambda values: self._write_state(context, values)
        )
        found = ProcessContext(context, descriptors, values, state)
        self._context = (context, found)
        return found

    def _state_slot(self, context: FlowcoreContext) -> _StateSlot:
        """Where the state manager reads and writes now: the trigger's, else *context*."""
        return context if self._state_now is None else self._state_now

    def _read_state(self, context: FlowcoreContext) -> tuple[Mapping[str, str], int]:
        found = self._state_slot(context).get_state()
        return found.values, found.version

    def _write_state(self, context: FlowcoreContext, values: Mapping[str, str]) -> None:
        try:
            self._state_slot(context).set_state(values)
        except ConfigurationError as error:  # the context, where the runner stores none
            msg = f"{type(self).__name__} cannot set its state here: {error}"
            raise StateException(msg) from error

    # --- lifecycle --------------------------------------------------------------------------

    def on_scheduled(self, context: FlowcoreContext) -> None:
        """NiFi's ``onScheduled(context)``, when the processor has one."""
        self.nifi.identifier = context.component.id
        self._state_now = None
        hook = getattr(self.nifi, "onScheduled", None)
        if callable(hook):
            hook(self._nifi_context(context))

    def on_stopped(self, context: FlowcoreContext) -> None:
        """NiFi's ``onStopped(context)``, when the processor has one."""
        self._state_now = None
        hook = getattr(self.nifi, "onStopped", None)
        if callable(hook):
            hook(self._nifi_context(context))


class TransformAdapter(_NiFiProcessor, FlowFileTransform):
    """A NiFi ``FlowFileTransform``, as a flowcore per-FlowFile transform."""

    _implicit: ClassVar[tuple[FlowcoreRelationship, ...]] = (FAILURE, ORIGINAL)

    def transform(self, context: FlowcoreContext, flowfile: FlowFileView) -> TransformResult:
        """NiFi's ``transform(context, flowFile)``, its result made flowcore's."""
        nifi_context = self._nifi_context(context)
        self._state_now = flowfile._session
        result = self.nifi.transform(nifi_context, InputFlowFile(flowfile))
        relationship = getattr(result, "relationship", None)
        if not isinstance(relationship, str):
            msg = (
                f"{type(self).__name__}.transform must return a FlowFileTransformResult, "
                f"but it returned {type(result).__name__} {result!r}"
            )
            raise ProcessException(msg, flowfile_uuid=flowfile.flowfile.uuid)
        attributes = _strings(result.attributes)
        if relationship == FAILURE.name:  # NiFi sets the attributes only
            return TransformResult(relationship, attributes=attributes)
        return TransformResult(relationship, contents=result.contents, attributes=attributes)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> Sequence[BatchRoute] | None:
        """Flowcore's batch form, when ``original`` is auto-terminated and no state is used.

        flowcore's batch form stands aside for processors with ``original`` (each input is
        cloned there); NiFi clones only when ``original`` is connected, so with it
        auto-terminated the FlowFiles go on as batches.
        """
        if self.uses_state or not context.is_auto_terminated(ORIGINAL):
            return None
        names = frozenset(self.relationship_names()) - {ORIGINAL.name}
        return self._transform_each(context, batch, names)

    def on_trigger(self, context: FlowcoreContext, session: ProcessSession) -> None:
        """One FlowFile, as NiFi's ``FlowFileTransformProxy`` handles it."""
        flowfile = session.get()
        if flowfile is None:
            return
        outcome = context.carried_outcome(flowfile)
        if outcome is None:
            view = FlowFileView(flowfile, session)
            outcome = self._outcome(context, view, self.relationship_names())
        if isinstance(outcome, _Failed):
            reason = damage_reason(outcome.error, flowfile)
            if reason is not None:
                flowfile = session.put_attribute(flowfile, CONTENT_FAILURE_REASON, reason)
            session.transfer(flowfile, FAILURE)
            return
        result: TransformResult = outcome  # type: ignore[assignment] - one result each
        clone: FlowFile | None = None
        if result.relationship != FAILURE.name and not context.is_auto_terminated(ORIGINAL):
            clone = session.clone(flowfile)
        if result.attributes:
            flowfile = session.put_all_attributes(flowfile, result.attributes)
        if result.contents is not None:
            flowfile = session.write(flowfile, result.contents)
        session.transfer(flowfile, result.relationship)
        if clone is not None:
            session.transfer(clone, ORIGINAL)


@functools.cache
def _record_transform_adapter() -> type[_NiFiProcessor]:
    """``RecordTransformAdapter``: a NiFi ``RecordTransform``, as ``RecordTransformProxy`` runs it.

    Made on first use, so that loading NiFi Python processors (at every ``flowcore`` command
    that reads a flow) does not import the record codecs, pyarrow and the reader services;
    the module's ``__getattr__`` hands out the same class, so it pickles by name.
    """
    from nifiapi._record_adapter import RecordTransformRunner  # noqa: PLC0415 (see above)

    class RecordTransformAdapter(_NiFiProcessor, RecordTransformRunner):
        """A NiFi ``RecordTransform``, as NiFi's ``RecordTransformProxy`` runs it."""

        _implicit: ClassVar[tuple[FlowcoreRelationship, ...]] = (FAILURE, ORIGINAL)

    RecordTransformAdapter.__qualname__ = "RecordTransformAdapter"
    return RecordTransformAdapter


def __getattr__(name: str) -> Any:
    if name == "RecordTransformAdapter":
        return _record_transform_adapter()
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


class SourceAdapter(_NiFiProcessor, SourceProcessor):
    """A NiFi ``FlowFileSource``, as a flowcore source that never runs out."""

    unbounded: ClassVar[bool] = True
    _implicit: ClassVar[tuple[FlowcoreRelationship, ...]] = (SOURCE_SUCCESS,)
    _implicit_first: ClassVar[bool] = True

    def list_work(self, context: FlowcoreContext, state: Mapping[str, str]) -> WorkListing:
        """Call ``create``; its result is the work item, its state the listing's."""
        staged = _ListingState(state, context.get_state().version)
        nifi_context = self._nifi_context(context)
        self._state_now = staged
        try:
            result = self.nifi.create(nifi_context)
        except Exception as error:  # NiFi logs it and makes nothing
            context.logger.error("%s failed to create a FlowFile: %s", self, error, exc_info=error)
            return WorkListing((), state)
        finally:
            self._state_now = None
        if result is None:
            return WorkListing((), staged.values)
        contents = result.contents or b""
        payload = {
            "relationship": str(result.relationship),
            "attributes": _strings(result.attributes) or {},
            "contents": contents,
        }
        item = WorkItem("create", payload, flowfiles=1, size=len(contents))
        return WorkListing((item,), staged.values)

    def read_work(self, context: FlowcoreContext, session: ProcessSession, item: WorkItem) -> None:
        """Make the FlowFile ``create`` described."""
        del context
        flowfile = session.create()
        if item.payload["attributes"]:
            flowfile = session.put_all_attributes(flowfile, item.payload["attributes"])
        if item.payload["contents"]:
            flowfile = session.write(flowfile, item.payload["contents"])
        session.transfer(flowfile, item.payload["relationship"])


class _ListingState:
    """The state a source's ``create`` reads and writes, staged for the listing it makes."""

    def __init__(self, values: Mapping[str, str], version: int) -> None:
        self.values = dict(values)
        self._version = version

    def get_state(self) -> StateMap:
        """The listing's state, at the version committed."""
        return StateMap(self._version, self.values)

    def set_state(self, values: Mapping[str, str]) -> None:
        """Stage *values* as the listing's state."""
        self.values = dict(values)


#: The adapter of each NiFi class made so far.
_ADAPTERS: dict[type, type[Processor]] = {}


def _asks_for_state(nifi_class: type) -> bool:
    """Whether the class's source asks for its state manager."""
    origin = getattr(sys.modules.get(nifi_class.__module__), _ORIGIN, None)
    if origin is not None:  # the whole file's source, the same wherever it is imported
        return "getStateManager" in origin[2]
    try:
        source = inspect.getsource(nifi_class)
    except (OSError, TypeError):
        return False
    return "getStateManager" in source


def _kind(nifi_class: type) -> type[_NiFiProcessor]:
    if issubclass(nifi_class, NiFiTransform):
        return TransformAdapter
    if issubclass(nifi_class, FlowFileSource):
        return SourceAdapter
    if issubclass(nifi_class, RecordTransform):
        return _record_transform_adapter()
    msg = (
        f"{nifi_class.__name__} is not a NiFi Python processor flowcore runs: it must extend "
        "nifiapi.flowfiletransform.FlowFileTransform, nifiapi.flowfilesource.FlowFileSource "
        "or nifiapi.recordtransform.RecordTransform"
    )
    raise InvalidProcessorError(msg)


def processor_class(nifi_class: type) -> type[Processor]:
    """The flowcore processor class running NiFi Python processor class *nifi_class*.

    Made once per class, named as the NiFi class, documented from its ``ProcessorDetails``.

    Raises:
        InvalidProcessorError: *nifi_class* is no NiFi transform or source, or its
            constructor, descriptors or relationships fail (names the class and why).
    """
    made = _ADAPTERS.get(nifi_class)
    if made is not None:
        return made
    base = _kind(nifi_class)
    name = nifi_class.__name__
    try:
        prototype = instantiate(nifi_class)
        own = getattr(prototype, "getPropertyDescriptors", None)
        descriptors = tuple(flowcore_descriptor(d) for d in (own() if callable(own) else ()))
        rels = getattr(prototype, "getRelationships", None)
        given = [flowcore_relationship(r) for r in (rels() or ())] if callable(rels) else []
    except InvalidProcessorError as error:
        msg = f"{name}: {error}"
        raise InvalidProcessorError(msg) from error
    except Exception as error:
        msg = f"{name} could not be made: {type(error).__name__}: {error}"
        raise InvalidProcessorError(msg) from error
    record_transform = base is not TransformAdapter and base is not SourceAdapter
    if record_transform:  # NiFi's RecordTransformProxy: reader and writer first
        from nifiapi._record_adapter import RECORD_PROPERTIES  # noqa: PLC0415 (records: lazy)

        descriptors = RECORD_PROPERTIES + descriptors
    if base is TransformAdapter or record_transform:
        relationships = _united(given or [TRANSFORM_SUCCESS], (FAILURE, ORIGINAL))
    else:
        relationships = _united([SOURCE_SUCCESS], given)
    details = getattr(nifi_class, "ProcessorDetails", None)
    description = str(getattr(details, "description", "") or "").strip()
    uses_state = _asks_for_state(nifi_class)
    namespace: dict[str, Any] = {
        "__module__": nifi_class.__module__,
        "__qualname__": f"_flowcore_{name}",
        "__doc__": description or f"The NiFi Python processor {name}.",
        "nifi_class": nifi_class,
        "property_descriptors": descriptors,
        "relationships": relationships,
        "tags": tuple(str(t) for t in getattr(details, "tags", ()) or ()),
        "supports_dynamic_properties": callable(
            getattr(nifi_class, "getDynamicPropertyDescriptor", None)
        ),
        "uses_state": uses_state,
        "triggers_serially": uses_state,
        "_own_relationships": callable(getattr(nifi_class, "getRelationships", None)),
    }
    adapter = type(name, (base,), namespace)
    module = sys.modules.get(nifi_class.__module__)
    if module is not None:  # plain pickle finds the class as <module>._flowcore_<Name>
        setattr(module, namespace["__qualname__"], adapter)
    _ADAPTERS[nifi_class] = adapter
    return adapter  # type: ignore[return-value]


def nifi_processor(nifi_class: type, **properties: Any) -> Processor:
    """A configured flowcore processor running *nifi_class*: ``processor_class(...)(**props)``."""
    return processor_class(nifi_class)(**properties)
