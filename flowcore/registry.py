"""The registries: built-in processors and controller services plus those packages register.

A package makes its processors available to flows and to ``flowcore processors`` by declaring
them in the ``flowcore.processors`` entry-point group, and its controller services in the
``flowcore.services`` group::

    [project.entry-points."flowcore.processors"]
    ExtractCsvFields = "mypackage.csv:ExtractCsvFields"

    [project.entry-points."flowcore.services"]
    LookupTable = "mypackage.lookup:LookupTable"

:func:`available_processors` merges those with the built-ins (a plugin may not shadow a built-in);
:func:`processor_class` looks one up by name, suggesting near names on a typo; and
:func:`describe` renders a processor's usage page, like NiFi's documentation page.
:func:`available_services`, :func:`service_class` (by simple name or by any NiFi type the
service stands for, simple or fully qualified), :func:`service_for_nifi_type` and
:func:`describe_service` do the same for controller services; a flow imported from NiFi maps a
service type registered here onto the registered class (see :mod:`flowcore.nifi.services`).
"""

from __future__ import annotations

import difflib
import inspect
import textwrap
from collections.abc import Mapping
from importlib import metadata

from flowcore.controller_service import ControllerService, interface_name
from flowcore.errors import InvalidProcessorError, UnknownProcessorError
from flowcore.processor.base import Processor
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDescriptor
from processors._lazy_types import LazyTypes
from processors.lookup_services import LOOKUP_SERVICES
from processors.record_services import RECORD_SERVICES

__all__ = [
    "BUILTIN_SERVICES",
    "ENTRY_POINT_GROUP",
    "SERVICE_ENTRY_POINT_GROUP",
    "available_processors",
    "available_services",
    "describe",
    "describe_service",
    "processor_class",
    "relationships_of",
    "service_class",
    "service_for_nifi_type",
]

ENTRY_POINT_GROUP = "flowcore.processors"
SERVICE_ENTRY_POINT_GROUP = "flowcore.services"

#: flowcore's own controller services, by simple type name.
BUILTIN_SERVICES: LazyTypes[type[ControllerService]] = LazyTypes(
    {
        "Kafka3ConnectionService": "processors.kafka.connection_service",
        "MapCacheService": "flowcore.services",
        "StandardSSLContextService": "flowcore.ssl_context",
        "StandardHttpContextMap": "processors.http_server.context_map",
        "DBCPConnectionPool": "processors.sql.dbcp",
        "AWSCredentialsProviderControllerService": "processors.aws.credentials",
        "StandardS3EncryptionService": "processors.aws.encryption",
        "StandardFileResourceService": "processors.file_resource",
        **RECORD_SERVICES.modules,
        **LOOKUP_SERVICES.modules,
    }
)


def _load(
    entry: metadata.EntryPoint,
    group: str = ENTRY_POINT_GROUP,
    base: type = Processor,
) -> type:
    origin = f"entry point {entry.name!r} ({entry.value}) in group {group!r}"
    try:
        loaded = entry.load()
    except Exception as ex:  # a broken plugin: say which, and why
        msg = f"{origin} failed to load: {type(ex).__name__}: {ex}"
        raise InvalidProcessorError(msg) from ex
    if not (inspect.isclass(loaded) and issubclass(loaded, base)):
        msg = f"{origin} is {loaded!r}, not a flowcore {base.__name__} subclass"
        raise InvalidProcessorError(msg)
    return loaded


def available_processors() -> LazyTypes[type[Processor]]:
    """Every processor type by name: the built-ins, then installed plugins.

    A built-in's module is imported when its type is looked up (see ``processors._lazy_types``);
    plugins are loaded here, so a broken one is reported at once.

    Raises:
        InvalidProcessorError: a plugin fails to load, is not a Processor, or reuses a
            built-in's name.
    """
    from processors import BUILTIN_PROCESSORS  # noqa: PLC0415 (processors build on flowcore)

    found: dict[str, str | type[Processor]] = BUILTIN_PROCESSORS.modules
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in BUILTIN_PROCESSORS:
            msg = (
                f"entry point {entry.name!r} ({entry.value}) reuses the name of a built-in "
                "processor; register it under another name"
            )
            raise InvalidProcessorError(msg)
        found[entry.name] = _load(entry)
    return LazyTypes(dict(sorted(found.items())))


def processor_class(name: str) -> type[Processor]:
    """The processor type called *name*.

    Raises:
        UnknownProcessorError: no such processor; near names are suggested.
    """
    known = available_processors()
    if name in known:
        return known[name]
    near = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    msg = f"no processor named {name!r}{hint} (available: {', '.join(known)})"
    raise UnknownProcessorError(msg)


def _summary(cls: type[Processor]) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ")


def relationships_of(cls: type[Processor]) -> tuple[Relationship, ...]:
    """Every relationship *cls* may have, its dynamic one last (NiFi's ``@DynamicRelationship``).

    RouteOnAttribute declares ``matched`` and ``unmatched`` and makes one relationship per
    dynamic property: listing only the declared ones would hide where most FlowFiles go.
    """
    dynamic = cls.dynamic_relationship
    return (*cls.relationships, *((dynamic,) if dynamic is not None else ()))


#: How far past its line a wrapped ``name: text`` line continues (prose continues under itself).
_HANG = 2


def _allowed(value: AllowableValue) -> str:
    """An allowed value as NiFi stores it, with the name NiFi shows when that differs."""
    if value.display_name == value.value:
        return value.value
    return f"{value.value} ({value.display_name})"


def _lines(cls: type[Processor]) -> list[tuple[int, str] | tuple[int, str, int]]:
    """The usage page as ``(indent, text[, hang])``: where each line and its wrapped rest go."""
    lines: list[tuple[int, str] | tuple[int, str, int]] = [
        (0, cls.__name__),
        (0, "=" * len(cls.__name__)),
        (0, _summary(cls), 0),
    ]
    if cls.tags:
        lines.append((0, f"Tags: {', '.join(cls.tags)}"))
    lines.append((0, f"Input: {cls.input_requirement.value}"))
    lines += [(0, ""), (0, "Properties:")]
    lines += _property_lines(cls.property_descriptors)
    if cls.supports_dynamic_properties:
        lines.append((2, "(dynamic properties are supported)"))
    lines += [(0, ""), (0, "Relationships:")]
    for relationship in relationships_of(cls):
        auto = " (auto-terminated unless connected)" if relationship.auto_terminated else ""
        lines.append((2, f"{relationship.name}{auto}: {relationship.description}"))
    for title, attributes in (
        ("Reads attributes", cls.reads_attributes),
        ("Writes attributes", cls.writes_attributes),
    ):
        if attributes:
            lines += [(0, ""), (0, f"{title}:")]
            lines.extend((2, f"{name}: {what}") for name, what in attributes.items())
    return lines


def _property_lines(
    descriptors: tuple[PropertyDescriptor, ...],
) -> list[tuple[int, str] | tuple[int, str, int]]:
    """The ``Properties:`` section of a usage page."""
    lines: list[tuple[int, str] | tuple[int, str, int]] = []
    for descriptor in descriptors:
        flags = []
        if descriptor.required:
            flags.append("required")
        if descriptor.supports_expressions:
            flags.append(f"EL: {descriptor.el_scope.value}")
        if descriptor.sensitive:
            flags.append("sensitive")
        if descriptor.identifies_service:
            flags.append(f"service: {descriptor.service_interface or 'any'}")
        head = f"{descriptor.display_name} ({descriptor.key})"
        lines.append((2, head + (f" [{', '.join(flags)}]" if flags else "")))
        if descriptor.name != descriptor.display_name:  # what NiFi's flow JSON calls it
            lines.append((4, f"NiFi name: {descriptor.name}"))
        if descriptor.default is not None:
            lines.append((4, f"default: {descriptor.default}"))
        if descriptor.allowable_values:
            values = " | ".join(_allowed(v) for v in descriptor.allowable_values)
            lines.append((4, f"values: {values}"))
        for dependency in descriptor.dependencies:
            when = " or ".join(dependency.values) or "any value"
            lines.append((4, f"applies when {dependency.property} is {when}"))
        if descriptor.description:
            lines.append((4, descriptor.description, 0))
    return lines


def describe(cls: type[Processor], width: int | None = None) -> str:
    """A processor's usage page: what it does, its properties, relationships and attributes.

    Args:
        cls: the processor type.
        width: wrap lines to this many columns, keeping each line's indentation (a terminal
            would wrap them back to column 0), a ``name: text`` line's rest two columns
            further; ``None`` keeps each line whole.
    """
    return _render(_lines(cls), width)


def _render(lines: list[tuple[int, str] | tuple[int, str, int]], width: int | None) -> str:
    """Usage page lines as text, wrapped to *width* keeping each line's indentation."""
    out = []
    for indent, text, *hang in lines:
        if width is None or not text:
            out.append(" " * indent + text)
            continue
        out.extend(
            textwrap.wrap(
                text,
                width=max(width, indent + 20),
                initial_indent=" " * indent,
                subsequent_indent=" " * (indent + (hang[0] if hang else _HANG)),
                break_on_hyphens=False,
            )
        )
    return "\n".join(out)


# --- controller services ------------------------------------------------------------------------


def available_services() -> LazyTypes[type[ControllerService]]:
    """Every controller service type by simple name: the built-ins, then installed plugins.

    As :func:`available_processors`, a built-in's module is imported when it is looked up.

    Raises:
        InvalidProcessorError: a plugin fails to load, is not a ControllerService, or reuses a
            built-in's name.
    """
    found: dict[str, str | type[ControllerService]] = BUILTIN_SERVICES.modules
    for entry in metadata.entry_points(group=SERVICE_ENTRY_POINT_GROUP):
        if entry.name in BUILTIN_SERVICES:
            msg = (
                f"entry point {entry.name!r} ({entry.value}) reuses the name of a built-in "
                "controller service; register it under another name"
            )
            raise InvalidProcessorError(msg)
        found[entry.name] = _load(entry, SERVICE_ENTRY_POINT_GROUP, ControllerService)
    return LazyTypes(dict(sorted(found.items())))


def service_for_nifi_type(
    nifi_type: str, known: Mapping[str, type[ControllerService]] | None = None
) -> type[ControllerService] | None:
    """The registered service standing for NiFi type *nifi_type* (fully qualified or simple).

    A type one declares in ``nifi_types`` first; then the simple name of one of those (NiFi
    moved some services between packages: 1.x's and 2.x's map cache clients); then a
    registered name (a user's service that declares no NiFi type).
    """
    services = available_services() if known is None else known
    simple = interface_name(nifi_type)
    for cls in services.values():
        if nifi_type in cls.nifi_types:
            return cls
    for cls in services.values():
        if simple in map(interface_name, cls.nifi_types):
            return cls
    return services.get(simple)


def service_class(name: str) -> type[ControllerService]:
    """The controller service type called *name* (its simple name or a NiFi type it stands for).

    Raises:
        UnknownProcessorError: no such service; near names are suggested.
    """
    known = available_services()
    found = service_for_nifi_type(name, known)
    if found is not None:
        return found
    near = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    msg = f"no controller service named {name!r}{hint} (available: {', '.join(known)})"
    raise UnknownProcessorError(msg)


def describe_service(cls: type[ControllerService], width: int | None = None) -> str:
    """A controller service's usage page: what it does, its interfaces and properties."""
    lines: list[tuple[int, str] | tuple[int, str, int]] = [
        (0, cls.__name__),
        (0, "=" * len(cls.__name__)),
        (0, _summary(cls), 0),  # type: ignore[arg-type]
    ]
    if cls.tags:
        lines.append((0, f"Tags: {', '.join(cls.tags)}"))
    if cls.implements:
        lines.append((0, f"Implements: {', '.join(cls.implements)}"))
    if cls.nifi_types:
        lines.append((0, f"NiFi types: {', '.join(cls.nifi_types)}"))
    lines += [(0, ""), (0, "Properties:")]
    lines += _property_lines(cls.property_descriptors)
    if cls.supports_dynamic_properties:
        lines.append((2, "(dynamic properties are supported)"))
    return _render(lines, width)
