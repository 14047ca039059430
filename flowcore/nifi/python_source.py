"""Any flow definition written back as a Python flow file (``flowcore convert --to python``).

A flow read from NiFi's JSON (or from Python) becomes the file a person would have written:
imports, ``flow = Flow(name, parameters=...)``, one ``flow.add(Processor(...), name=...)`` per
processor with its properties as written (``#{p}`` kept) by keyword where the keyword is a
valid Python name and by NiFi's display name otherwise (``**{"Display Name": "value"}``),
settings that differ from the defaults, connections with their non-default queue settings,
and the auto-terminated relationships. Executing the file gives a flow equal to the one
written (:func:`~flowcore.nifi.structure.same_flow`). A sensitive parameter's value is
never written: its environment variable or file is. Nor is a sensitive property's value,
declared or dynamic, unless it is a parameter reference (as NiFi exports them).
"""

from __future__ import annotations

import enum
import inspect
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

import flowcore
from flowcore.controller_service import ControllerService
from flowcore.definition.component_settings import (
    DEFAULT_RUN_SCHEDULE,
    QueueSettings,
    SchedulingStrategy,
)
from flowcore.definition.flow import Component, ComponentKind, Connection, FlowDefinition
from flowcore.errors import FlowDefinitionError
from flowcore.parameters import Parameter, ParameterContext, sole_reference
from flowcore.processor.base import Processor
from processors import BUILTIN_PROCESSORS

__all__ = ["flow_to_python"]

WIDTH = 99  # characters a line may take before its call is broken, one argument a line
_INDENT = "    "
_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z]+")
#: The prefix under which ``flowcore run`` loads flow files: classes defined there cannot be
#: imported by another file.
_FLOW_FILE_MODULE = "flowcore_flow_"


# --- a small pretty-printer for calls, lists and dicts ----------------------------------------


@attrs.frozen
class _Call:
    """``head(items)``; an item is ``(keyword or None, node)``; a node is a str or a _Call."""

    head: str
    items: tuple[tuple[str | None, Any], ...]
    close: str = ")"


def _flat(node: Any) -> str:
    if isinstance(node, str):
        return node
    parts = [f"{key}{_flat(value)}" if key else _flat(value) for key, value in node.items]
    return f"{node.head}{', '.join(parts)}{node.close}"


def _format(node: Any, indent: str = "") -> str:
    """*node* on one line when it fits in :data:`WIDTH`, else one item a line, recursively."""
    flat = _flat(node)
    if isinstance(node, str) or len(indent) + len(flat) <= WIDTH or not node.items:
        return flat
    inner = indent + _INDENT
    lines = [f"{inner}{key or ''}{_format(value, inner)}," for key, value in node.items]
    return "\n".join([node.head, *lines, indent + node.close])


def _quote(text: str) -> str:
    """A Python string literal, in double quotes where that needs no escapes."""
    written = repr(text)
    if written.startswith("'") and '"' not in text:
        return f'"{written[1:-1]}"'
    return written


def _kw(name: str) -> str:
    return f"{name}="


# --- values as Python -----------------------------------------------------------------------


@attrs.define
class _Writer:
    """The imports and notes of the file being written."""

    imports: dict[str, set[str]] = attrs.field(factory=dict)

    def use(self, module: str, name: str) -> str:
        """Import *name* from *module* (from ``flowcore`` itself when it re-exports it)."""
        if module.startswith("flowcore.") and name in flowcore.__all__:
            module = "flowcore"
        self.imports.setdefault(module, set()).add(name)
        return name

    def literal(self, value: Any) -> Any:
        """A node for *value*: text, numbers, lists, dicts, enums and attrs values."""
        if isinstance(value, str):
            return _quote(value)
        if value is None or isinstance(value, bool | int | float):
            return repr(value)
        if isinstance(value, enum.Enum):
            return _quote(str(value.value))
        if attrs.has(type(value)):
            return self._attrs_value(value)
        if isinstance(value, ControllerService):
            return self._service_value(value)
        if isinstance(value, Mapping):
            pairs = ((_flat(self.literal(k)), _flat(self.literal(v))) for k, v in value.items())
            return _Call("{", tuple((None, f"{k}: {v}") for k, v in pairs), "}")
        if isinstance(value, Sequence):
            return _Call("[", tuple((None, self.literal(v)) for v in value), "]")
        msg = f"cannot write {value!r} ({type(value).__name__}) as Python"
        raise FlowDefinitionError(msg)

    def _attrs_value(self, value: Any) -> _Call:
        cls = type(value)
        head = self.use(cls.__module__, cls.__name__)
        items = []
        for field in attrs.fields(cls):
            if not field.init or field.metadata.get("sensitive"):
                continue  # a secret (an SSL service's password) is never written
            current = getattr(value, field.name)
            default = field.default
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                default = None if default.takes_self else default.factory()
            if current == default or (current == () and default in ((), [], None)):
                continue
            items.append((_kw(field.alias or field.name), self.literal(current)))
        return _Call(f"{head}(", tuple(items))

    def _service_value(self, service: ControllerService) -> _Call:
        """``Type("name", key=value, ...)``: a sensitive value only as a parameter reference."""
        cls = type(service)
        if cls.__module__.startswith(_FLOW_FILE_MODULE) or cls.__module__ == "__main__":
            msg = (
                f"service class {cls.__name__} is defined in the flow file itself, which another "
                "file cannot import; move it to a module beside the flow and import it from there"
            )
            raise FlowDefinitionError(msg)
        head = self.use(cls.__module__, cls.__name__)
        items: list[tuple[str | None, Any]] = [(None, _quote(service.name))]
        dynamic = {}
        for name, value in service.raw_configured.items():
            descriptor = service.resolve_descriptor(name)
            if descriptor is not None and descriptor.sensitive and not sole_reference(value):
                continue  # a secret is written only as a parameter reference (DBCP's SENSITIVE.)
            if descriptor is None or descriptor.dynamic:
                dynamic[name] = value
            else:
                items.append((_kw(descriptor.key), self.literal(value)))
        if dynamic:
            items.append((None, f"**{_flat(self.literal(dynamic))}"))
        return _Call(f"{head}(", tuple(items))


# --- the flow file --------------------------------------------------------------------------


def _processor_module(cls: type[Processor]) -> str:
    if BUILTIN_PROCESSORS.get(cls.__name__) is cls:
        return "processors"
    if getattr(cls, "nifi_class", None) is not None:  # a NiFi 2 Python processor, loaded
        return "nifiapi.extensions"
    if cls.__module__.startswith(_FLOW_FILE_MODULE) or cls.__module__ == "__main__":
        msg = (
            f"processor class {cls.__name__} is defined in the flow file itself, which another "
            "file cannot import; move it to a module beside the flow and import it from there"
        )
        raise FlowDefinitionError(msg)
    return cls.__module__


def _init_defaults(cls: type[Processor]) -> dict[str, Any]:
    """The constructor's own keyword arguments (not properties) and their defaults."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {
        p.name: p.default
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    }


def _property_items(writer: _Writer, processor: Processor) -> list[tuple[str | None, Any]]:
    """The processor's constructor arguments: advanced configuration, then its properties."""
    own = _init_defaults(type(processor))
    items: list[tuple[str | None, Any]] = [
        (_kw(name), writer.literal(value))
        for name, value in processor.advanced_configuration()
        if own.get(name, inspect.Parameter.empty) != value
    ]
    by_name = processor._descriptors_by_name()
    spelled: dict[str, str] = {}
    for name, value in processor.raw_configured.items():
        found = processor.resolve_descriptor(name)
        if found is not None and found.sensitive and not sole_reference(value):
            continue  # a secret is written only as a parameter reference, as for services
        descriptor = by_name.get(name)
        if descriptor is not None:
            word, label = descriptor.key, descriptor.display_name
            clear = by_name.get(word) == descriptor
        else:  # dynamic: its name is the keyword, unless that is some property's spelling
            word = label = name
            clear = word not in by_name
        if clear and word.isidentifier() and not keyword.iskeyword(word) and word not in own:
            items.append((_kw(word), _quote(value)))
        else:
            spelled[label] = value
    if spelled:
        items.append(("**", writer.literal(spelled)))
    return items


def _variables(flow: FlowDefinition, reserved: set[str]) -> dict[str, str]:
    """A Python name for each component, from its name, unique in the file."""
    taken = set(reserved)
    names = {}
    for component in flow.components:
        base = _NOT_IDENTIFIER.sub("_", component.name).strip("_").lower() or "component"
        if base[0].isdigit():
            base = f"c_{base}"
        if keyword.iskeyword(base):
            base += "_"
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names[component.id] = name
    return names


def _add(writer: _Writer, component: Component, variable: str) -> str:
    """``variable = flow.add(...)`` or ``flow.funnel(...)`` for *component*."""
    # An id other than the name (NiFi's identifier) is written: queues and state hang on it.
    given_id = f", id={_quote(component.id)}" if component.id != component.name else ""
    if component.kind is ComponentKind.FUNNEL:
        disabled = ", disabled=True" if component.disabled else ""
        return f"{variable} = flow.funnel({_quote(component.name)}{disabled}{given_id})"
    processor = component.processor
    assert processor is not None
    cls = writer.use(_processor_module(type(processor)), type(processor).__name__)
    items: list[tuple[str | None, Any]] = [
        (None, _Call(f"{cls}(", tuple(_property_items(writer, processor)))),
        (_kw("name"), _quote(component.name)),
    ]
    settings = {
        "concurrent_tasks": (component.concurrent_tasks, 1),
        "run_schedule": (component.run_schedule, DEFAULT_RUN_SCHEDULE),
        "scheduling_strategy": (component.scheduling_strategy, SchedulingStrategy.TIMER_DRIVEN),
        "penalty_duration": (component.penalty_duration, None),
        "yield_duration": (component.yield_duration, None),
        "disabled": (component.disabled, False),
        "retry": (component.retry, None),
        "comments": (component.comments, ""),
    }
    for name, (value, default) in settings.items():
        if value != default:
            items.append((_kw(name), writer.literal(value)))
    if given_id:
        items.append((_kw("id"), _quote(component.id)))
    return _format(_Call(f"{variable} = flow.add(", tuple(items)))


def _queue_items(writer: _Writer, settings: QueueSettings) -> list[tuple[str | None, Any]]:
    """Queue settings that differ from NiFi's defaults (one at least: any makes it durable)."""
    defaults = QueueSettings()
    items = [
        (_kw(field.name), writer.literal(getattr(settings, field.name)))
        for field in attrs.fields(QueueSettings)
        if getattr(settings, field.name) != getattr(defaults, field.name)
    ]
    if not items:
        threshold = repr(defaults.back_pressure_object_threshold)
        items = [(_kw("back_pressure_object_threshold"), threshold)]
    return items


def _connect(
    writer: _Writer,
    flow: FlowDefinition,
    connection: Connection,
    variables: Mapping[str, str],
    derived: Mapping[str, str],
) -> str:
    """``flow.connect(source, destination, relationships, settings...)``.

    *derived* is each connection's derived id (``flow.derived_connection_ids()``): an id
    other than that one is written as ``id=``.
    """
    items: list[tuple[str | None, Any]] = [
        (None, variables[connection.source]),
        (None, variables[connection.destination]),
    ]
    names = flow.component(connection.source).relationship_names()
    chosen = connection.relationships
    if not (len(names) == 1 and chosen == names):
        items.append((None, _quote(chosen[0]) if len(chosen) == 1 else writer.literal(chosen)))
    if connection.settings is not None:
        items.extend(_queue_items(writer, connection.settings))
    extras = {
        "durable": (connection.durable, False),
        "name": (connection.name, ""),
        "load_balance_strategy": (connection.load_balance_strategy.value, "DO_NOT_LOAD_BALANCE"),
        "partitioning_attribute": (connection.partitioning_attribute, ""),
    }
    for name, (value, default) in extras.items():
        if value != default:
            items.append((_kw(name), writer.literal(value)))
    if connection.id != derived[connection.id]:  # NiFi's identifier:
        items.append((_kw("id"), _quote(connection.id)))  # its queue hangs on it
    return _format(_Call("flow.connect(", tuple(items)))


def _without_secrets(context: ParameterContext) -> ParameterContext:
    """*context* with sensitive values written in it dropped (their sources stay)."""

    def scrub(parameter: Parameter) -> Parameter:
        if parameter.sensitive and parameter.value is not None:
            return attrs.evolve(parameter, value=None)
        return parameter

    return attrs.evolve(
        context,
        parameters=tuple(scrub(p) for p in context.parameters),
        inherited=tuple(_without_secrets(c) for c in context.inherited),
    )


def _parameters(writer: _Writer, flow: FlowDefinition) -> Any | None:
    """The ``parameters=`` of ``Flow(...)``: a dict when plain values do, else the context."""
    context = flow.parameters
    plain = (
        context.name in ("", flow.name)
        and not context.description
        and not context.inherited
        and all(
            p.value is not None and not p.sensitive and not p.description
            for p in context.parameters
        )
    )
    if plain:
        values = {p.name: p.value for p in context.parameters}
        return writer.literal(values) if values else None
    return writer.literal(_without_secrets(context))


def _imports(imports: Mapping[str, set[str]]) -> list[str]:
    return [
        f"from {module} import {', '.join(sorted(names))}"
        for module, names in sorted(imports.items())
    ]


def flow_to_python(flow: FlowDefinition, *, origin: str | None = None) -> str:
    """*flow* as the source of a Python flow file whose module-level ``flow`` equals it.

    Args:
        flow: the flow to write.
        origin: what the flow was read from, named in the file's docstring.

    Raises:
        FlowDefinitionError: a processor's class cannot be imported by another file (it is
            defined in the flow file itself).
    """
    writer = _Writer()
    writer.use("flowcore", "Flow")
    parameters = _parameters(writer, flow)
    flow_items: list[tuple[str | None, Any]] = [(None, _quote(flow.name))]
    if parameters is not None:
        flow_items.append((_kw("parameters"), parameters))
    body = [_format(_Call("flow = Flow(", tuple(flow_items)))]
    ids = flow.service_ids
    body.extend(
        _format(
            _Call(
                "flow.add_service(",
                ((None, writer.literal(s)),)
                + (((_kw("id"), _quote(ids[s.name])),) if s.name in ids else ()),
            )
        )
        for s in flow.services.values()
    )
    body.append("")
    for component in flow.components:  # a first pass gathers the imports variables must avoid
        _add(writer, component, "_")
    reserved = {"flow"} | {name for names in writer.imports.values() for name in names}
    variables = _variables(flow, reserved)
    body.extend(_add(writer, c, variables[c.id]) for c in flow.components)
    if flow.connections:
        body.append("")
        derived = flow.derived_connection_ids()
        body.extend(_connect(writer, flow, c, variables, derived) for c in flow.connections)
    terminated = [(c, sorted(flow.auto_terminated(c))) for c in flow.components]
    terminated = [(c, names) for c, names in terminated if names]
    if terminated:
        body.append("")
        for component, names in terminated:
            which = _quote(names[0]) if len(names) == 1 else _flat(writer.literal(names))
            body.append(f"flow.auto_terminate({variables[component.id]}, {which})")
    source = f" from {origin}" if origin else ""
    header = f'"""The flow {_quote(flow.name)}, written by flowcore convert{source}."""'
    return "\n".join([header, "", *_imports(writer.imports), "", *body]) + "\n"
