"""Jolt transforms for JoltTransformJSON: NiFi's strategies over the ``jolt-py`` library.

The Jolt DSL itself (shift with its ``*``, ``&n``, ``&(n,m)``, ``$``, ``#``, ``@``, ``|`` and
``[&n]`` wildcards, default, remove, cardinality, sort, the modify operations and their
functions, chains) is ``jolt-py`` (import name ``pyjolt``), a pure-Python port that passes
Jolt's own test resources; ``tests/processors/test_jolt_transform_json.py`` runs a copy of them
here too. This module adds what NiFi puts around Jolt: its strategy names (``Jolt Transform``),
specifications read as text or from a file and parsed with Jolt's ``JsonUtils`` leniency
(``//`` and ``/* */`` comments), custom transforms (Python classes here, not Java ones), and
a small cache of built transforms (``Transform Cache Size``).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyjolt import Chainr, PyJoltError
from pyjolt.transforms import (
    Cardinality,
    Default,
    ModifyDefault,
    ModifyDefine,
    ModifyOverwrite,
    Remove,
    Shift,
    Sort,
    Transform,
)

__all__ = [
    "CHAIN",
    "CUSTOM",
    "SORT",
    "STRATEGIES",
    "JoltSpecError",
    "TransformCache",
    "build_transform",
    "parse_spec",
    "read_spec_text",
    "strip_comments",
]

CHAIN = "jolt-transform-chain"
SORT = "jolt-transform-sort"
CUSTOM = "jolt-transform-custom"

#: NiFi's JoltTransformStrategy: value -> (display name, description).
STRATEGIES: dict[str, tuple[str, str]] = {
    "jolt-transform-shift": ("Shift", "Shift input JSON/data to create the output JSON."),
    CHAIN: ("Chain", "Execute list of Jolt transformations."),
    "jolt-transform-default": ("Default", "Apply default values to the output JSON."),
    "jolt-transform-remove": (
        "Remove",
        "Remove values from input data to create the output JSON.",
    ),
    "jolt-transform-card": (
        "Cardinality",
        "Change the cardinality of input elements to create the output JSON.",
    ),
    SORT: (
        "Sort",
        "Sort input json key values alphabetically. Any specification set is ignored.",
    ),
    CUSTOM: ("Custom", "Custom Transformation. Requires Custom Transformation Class Name"),
    "jolt-transform-modify-default": (
        "Modify - Default",
        "Writes when key is missing or value is null",
    ),
    "jolt-transform-modify-overwrite": ("Modify - Overwrite", "Always overwrite value"),
    "jolt-transform-modify-define": ("Modify - Define", "Writes when key is missing"),
}

_SINGLE: dict[str, Callable[[Any], Transform]] = {
    "jolt-transform-shift": Shift,
    "jolt-transform-default": Default,
    "jolt-transform-remove": Remove,
    "jolt-transform-card": Cardinality,
    "jolt-transform-modify-default": ModifyDefault,
    "jolt-transform-modify-overwrite": ModifyOverwrite,
    "jolt-transform-modify-define": ModifyDefine,
}

#: Chain operations jolt-py knows (short names and Jolt's Java class names).
_KNOWN_OPERATIONS = frozenset(
    {
        "shift",
        "default",
        "remove",
        "sort",
        "cardinality",
        "modify-overwrite-beta",
        "modify-default-beta",
        "modify-define-beta",
        "modify-overwrite",
        "modify-default",
        "modify-define",
    }
)


class JoltSpecError(ValueError):
    """A Jolt specification or custom transform that cannot be built (the message says why)."""


def strip_comments(text: str) -> str:
    """*text* less its ``//`` and ``/* */`` comments (as Jolt's JsonUtils skips them)."""
    if "/" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    start = 0
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            out.append(text[start:i])
            if text[i + 1] == "/":
                end = text.find("\n", i)
                i = n if end < 0 else end
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    msg = "a /* comment is not closed"
                    raise JoltSpecError(msg)
                i = end + 2
            start = i
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:2]
    return head[:1] in ("[", "{") or head in ("//", "/*")


def read_spec_text(value: str) -> str:
    """The specification's text: *value* itself, or the file it names (NiFi's text-or-file).

    Raises:
        JoltSpecError: *value* is not JSON text and names no readable file.
    """
    if _looks_like_json(value):
        return value
    path = Path(value.strip()).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as ex:
        msg = (
            f"the value is neither a JSON specification nor a readable file: file {str(path)!r} "
            f"({ex.strerror or ex}); give the spec's JSON text or the path of a file holding it"
        )
        raise JoltSpecError(msg) from ex


def parse_spec(text: str) -> Any:
    """The specification's JSON value, comments allowed.

    Raises:
        JoltSpecError: it is not JSON.
    """
    try:
        return json.loads(strip_comments(text))
    except json.JSONDecodeError as ex:
        msg = f"the specification is not valid JSON: {ex}"
        raise JoltSpecError(msg) from ex


class _Custom(Transform):
    """A user's Python transform object adapted to jolt-py's Transform."""

    def __init__(self, delegate: Any) -> None:
        self.delegate = delegate
        method = getattr(delegate, "transform", None) or getattr(delegate, "apply", None)
        if not callable(method):
            name = type(delegate).__qualname__
            msg = f"custom transform {name} has neither a transform(input) nor apply(input) method"
            raise JoltSpecError(msg)
        self._method = method

    def apply(self, input_data: Any) -> Any:
        return self._method(input_data)


def _import_class(name: str, module_dirs: tuple[str, ...]) -> type:
    """The class *name* (``package.module.Class`` or ``package.module:Class``)."""
    for directory in module_dirs:
        if directory and directory not in sys.path:
            sys.path.append(directory)
    module_name, sep, class_name = name.replace(":", ".").rpartition(".")
    found = None
    if sep:
        try:
            found = getattr(importlib.import_module(module_name), class_name, None)
        except ImportError:
            found = None
    if not isinstance(found, type):
        msg = (
            f"custom transformation class {name!r} is not an importable Python class "
            "(give package.module.ClassName, its directory in Custom Module Directory); "
            "flowcore runs Python transforms, not Java classes from jars"
        )
        raise JoltSpecError(msg)
    return found


def _is_transform_class(cls: type) -> bool:
    """Whether *cls* is a transform: jolt-py's ``Transform``, or one with ``transform``/``apply``.

    Checked on the class, before it is made: the property may come from a FlowFile's
    attributes, and making an arbitrary class (``subprocess.Popen``) runs its code.
    """
    if issubclass(cls, Transform):
        return True
    return any(callable(getattr(cls, method, None)) for method in ("transform", "apply"))


def _custom(name: str, spec: Any, module_dirs: tuple[str, ...]) -> Transform:
    cls = _import_class(name, module_dirs)
    if not _is_transform_class(cls):
        msg = (
            f"custom transformation class {name!r} is not a transform: it needs a "
            "transform(input) or apply(input) method (or to subclass pyjolt's Transform)"
        )
        raise JoltSpecError(msg)
    try:
        instance = cls(spec) if spec is not None else cls()
    except TypeError:
        instance = cls()
    if isinstance(instance, Transform):
        return instance
    return _Custom(instance)


def _chain(spec: Any, module_dirs: tuple[str, ...]) -> Transform:
    if not isinstance(spec, list) or not spec:
        msg = "a Chain specification must be a non-empty JSON array of {operation, spec} objects"
        raise JoltSpecError(msg)
    transforms: list[Transform] = []
    for index, entry in enumerate(spec):
        if not isinstance(entry, dict) or "operation" not in entry:
            msg = f"entry {index} of the chain has no 'operation'"
            raise JoltSpecError(msg)
        operation = str(entry["operation"])
        short = operation.rsplit(".", 1)[-1].lower()
        if operation in _KNOWN_OPERATIONS or operation.startswith("com.bazaarvoice.jolt."):
            transforms.extend(Chainr.from_spec([entry])._transforms)
        elif "." in operation and short:
            transforms.append(_custom(operation, entry.get("spec"), module_dirs))
        else:
            known = sorted(_KNOWN_OPERATIONS)
            msg = f"entry {index} of the chain has unknown operation {operation!r} (known: {known})"
            raise JoltSpecError(msg)
    return Chainr(transforms)


def build_transform(
    strategy: str,
    spec: Any,
    *,
    custom_class: str | None = None,
    module_dirs: tuple[str, ...] = (),
) -> Transform:
    """The transform of a ``Jolt Transform`` *strategy* over a parsed *spec*.

    Raises:
        JoltSpecError: the spec does not fit the strategy (the message says why).
    """
    try:
        if strategy == SORT:
            return Sort()
        if strategy == CHAIN:
            return _chain(spec, module_dirs)
        if strategy == CUSTOM:
            if not custom_class:
                msg = "A custom transformation class should be provided."
                raise JoltSpecError(msg)
            return _custom(custom_class, spec, module_dirs)
        single = _SINGLE.get(strategy)
        if single is None:
            msg = f"unknown Jolt Transform {strategy!r} (known: {sorted(STRATEGIES)})"
            raise JoltSpecError(msg)
        return single(spec)
    except PyJoltError as ex:
        raise JoltSpecError(str(ex)) from ex
    except (TypeError, AttributeError, KeyError, ValueError) as ex:
        if isinstance(ex, JoltSpecError):
            raise
        msg = f"the specification does not fit {STRATEGIES[strategy][0]}: {ex}"
        raise JoltSpecError(msg) from ex


class TransformCache:
    """Built transforms by specification text, least recently used evicted (NiFi's cache)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._entries: OrderedDict[str | None, Transform] = OrderedDict()

    def get(self, key: str | None, build: Callable[[], Transform]) -> Transform:
        """The transform cached for *key*, built by *build* the first time."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        made = build()
        self._entries[key] = made
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return made
