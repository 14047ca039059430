"""The processor registry: built-in processors plus those installed packages register.

A package makes its processors available to flows and to ``flowcore processors`` by declaring
them in the ``flowcore.processors`` entry-point group::

    [project.entry-points."flowcore.processors"]
    ExtractCsvFields = "mypackage.csv:ExtractCsvFields"

:func:`available_processors` merges those with the built-ins (a plugin may not shadow a built-in);
:func:`processor_class` looks one up by name, suggesting near names on a typo; and
:func:`describe` renders a processor's usage page, like NiFi's documentation page.
"""

from __future__ import annotations

import difflib
import inspect
from importlib import metadata

from flowcore.errors import InvalidProcessorError, UnknownProcessorError
from flowcore.processor import Processor

__all__ = ["ENTRY_POINT_GROUP", "available_processors", "describe", "processor_class"]

ENTRY_POINT_GROUP = "flowcore.processors"


def _load(entry: metadata.EntryPoint) -> type[Processor]:
    origin = f"entry point {entry.name!r} ({entry.value}) in group {ENTRY_POINT_GROUP!r}"
    try:
        loaded = entry.load()
    except Exception as ex:  # a broken plugin: say which, and why
        msg = f"{origin} failed to load: {type(ex).__name__}: {ex}"
        raise InvalidProcessorError(msg) from ex
    if not (inspect.isclass(loaded) and issubclass(loaded, Processor)):
        msg = f"{origin} is {loaded!r}, not a flowcore Processor subclass"
        raise InvalidProcessorError(msg)
    return loaded


def available_processors() -> dict[str, type[Processor]]:
    """Every processor type by name: the built-ins, then installed plugins.

    Raises:
        InvalidProcessorError: a plugin fails to load, is not a Processor, or reuses a
            built-in's name.
    """
    from processors import BUILTIN_PROCESSORS  # noqa: PLC0415 (processors build on flowcore)

    found = dict(BUILTIN_PROCESSORS)
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in BUILTIN_PROCESSORS:
            msg = (
                f"entry point {entry.name!r} ({entry.value}) reuses the name of a built-in "
                "processor; register it under another name"
            )
            raise InvalidProcessorError(msg)
        found[entry.name] = _load(entry)
    return dict(sorted(found.items()))


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


def describe(cls: type[Processor]) -> str:
    """A processor's usage page: what it does, its properties, relationships and attributes."""
    lines = [cls.__name__, "=" * len(cls.__name__), _summary(cls)]
    if cls.tags:
        lines.append(f"Tags: {', '.join(cls.tags)}")
    lines.append(f"Input: {cls.input_requirement.value}")
    lines += ["", "Properties:"]
    for descriptor in cls.property_descriptors:
        flags = []
        if descriptor.required:
            flags.append("required")
        if descriptor.supports_expressions:
            flags.append(f"EL: {descriptor.el_scope.value}")
        if descriptor.sensitive:
            flags.append("sensitive")
        head = f"  {descriptor.display_name} ({descriptor.key})"
        if flags:
            head += f" [{', '.join(flags)}]"
        lines.append(head)
        if descriptor.default is not None:
            lines.append(f"    default: {descriptor.default}")
        if descriptor.allowable_values:
            values = " | ".join(v.display_name for v in descriptor.allowable_values)
            lines.append(f"    values: {values}")
        for dependency in descriptor.dependencies:
            when = " or ".join(dependency.values) or "any value"
            lines.append(f"    applies when {dependency.property} is {when}")
        if descriptor.description:
            lines.append(f"    {descriptor.description}")
    if cls.supports_dynamic_properties:
        lines.append("  (dynamic properties are supported)")
    lines += ["", "Relationships:"]
    for relationship in cls.relationships:
        auto = " (auto-terminated unless connected)" if relationship.auto_terminated else ""
        lines.append(f"  {relationship.name}{auto}: {relationship.description}")
    for title, attributes in (
        ("Reads attributes", cls.reads_attributes),
        ("Writes attributes", cls.writes_attributes),
    ):
        if attributes:
            lines += ["", f"{title}:"]
            lines.extend(f"  {name}: {what}" for name, what in attributes.items())
    return "\n".join(lines)
