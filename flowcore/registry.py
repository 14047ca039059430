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
import textwrap
from importlib import metadata

from flowcore.errors import InvalidProcessorError, UnknownProcessorError
from flowcore.processor import Processor
from flowcore.properties import AllowableValue
from flowcore.relationship import Relationship

__all__ = [
    "ENTRY_POINT_GROUP",
    "available_processors",
    "describe",
    "processor_class",
    "relationships_of",
]

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
    for descriptor in cls.property_descriptors:
        flags = []
        if descriptor.required:
            flags.append("required")
        if descriptor.supports_expressions:
            flags.append(f"EL: {descriptor.el_scope.value}")
        if descriptor.sensitive:
            flags.append("sensitive")
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


def describe(cls: type[Processor], width: int | None = None) -> str:
    """A processor's usage page: what it does, its properties, relationships and attributes.

    Args:
        cls: the processor type.
        width: wrap lines to this many columns, keeping each line's indentation (a terminal
            would wrap them back to column 0), a ``name: text`` line's rest two columns
            further; ``None`` keeps each line whole.
    """
    out = []
    for indent, text, *hang in _lines(cls):
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
