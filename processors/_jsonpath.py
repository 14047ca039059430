"""JsonPath with Jayway's results, for EvaluateJsonPath and SplitJson.

NiFi evaluates JsonPath with Jayway JsonPath. flowcore parses and evaluates paths with
`python-jsonpath <https://pypi.org/project/python-jsonpath/>`_ (RFC 9535 plus Jayway's habits:
``[?(@.price < 10)]`` filters with ``&&``, ``||``, ``!``, ``in``, ``=~ /regex/i``; wildcards;
deep scan ``..``; slices; unions) and adds what Jayway does on top:

- **Definite paths** (only names and single indices, Jayway's ``isDefinite``) give their one
  value, and raise :class:`PathNotFoundError` when nothing is there; any other path gives a
  list, empty when nothing matches.
- **Functions at the tail** of a path: ``min() max() avg() stddev() sum() length() size()
  keys() first() last() index(n) concat(...) append(...)`` (literal arguments), applied to
  the value the path before them gives, per match for an indefinite path, or to every match at
  once after a leading deep scan (``$..price.sum()``), as Jayway inverts such paths.
- **Several names in one bracket at the end** (``$.a['b','c']``) give one object holding
  those members (Jayway's property merge), not a list of values.
- ``=~`` and the ``match``/``search`` filter functions run through
  :mod:`flowcore.patterns`, so no document or path can hang a run.
- A deep scan ``..`` walks the document with a stack of its own: python-jsonpath's walk
  recurses and stops at 100 levels (``JSONPathRecursionError``), while a document may nest
  :data:`~processors._json_text.MAX_DEPTH` levels. Whatever else the library raises while a
  path is evaluated is a :class:`JsonPathLimitError`, which the processors route to failure.

Not supported (an invalid path, or another result): Jayway's filter operators ``nin``,
``subsetof``, ``anyof``, ``noneof``, ``size``, ``empty``; functions inside filters
(``@.name.length()``: write RFC 9535's ``length(@.name)``); path arguments to functions.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import jsonpath
from jsonpath.function_extensions.match import Match
from jsonpath.function_extensions.search import Search
from jsonpath.match import JSONPathMatch
from jsonpath.parse import Parser
from jsonpath.path import CompoundJSONPath, JSONPath
from jsonpath.segments import JSONPathChildSegment, JSONPathRecursiveDescentSegment
from jsonpath.selectors import NameSelector

from flowcore.patterns import compile_pattern
from processors._json_text import InvalidJsonError, read_json_text, to_json

__all__ = [
    "JsonPathEvaluationError",
    "JsonPathLimitError",
    "PathNotFoundError",
    "compile_json_path",
    "is_scalar",
]

_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL
_TAIL_FUNCTION = re.compile(r"^(?P<base>.*)\.(?P<name>[A-Za-z]+)\((?P<args>[^()]*)\)\s*$", re.S)
_AGGREGATIONS = frozenset({"min", "max", "avg", "stddev", "sum"})
FUNCTIONS = frozenset(
    {*_AGGREGATIONS, "length", "size", "keys", "first", "last", "index", "concat", "append"}
)


class PathNotFoundError(LookupError):
    """A definite path found nothing (Jayway's PathNotFoundException)."""


class JsonPathEvaluationError(ValueError):
    """A function cannot be applied to what the path found (Jayway's JsonPathException)."""


class JsonPathLimitError(ValueError):
    """The JsonPath library cannot evaluate the path over this document (the FlowFile fails)."""


def is_scalar(value: Any) -> bool:
    """Whether Jayway treats *value* as a scalar: anything but an object or an array."""
    return not isinstance(value, dict | list)


class _Match(Match):
    """RFC 9535's ``match()``, bounded by the flow's regex time limit."""

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(value, str) or not isinstance(pattern, str):
            return False
        return compile_pattern(pattern).fullmatch(value) is not None


class _Search(Search):
    """RFC 9535's ``search()``, bounded by the flow's regex time limit."""

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(value, str) or not isinstance(pattern, str):
            return False
        return compile_pattern(pattern).search(value) is not None


class _Descent(JSONPathRecursiveDescentSegment):
    """The deep scan ``..``, walking the document with a stack instead of recursion.

    The same nodes in the same (depth-first, pre-order) order as python-jsonpath's walk, with
    no depth limit of its own: the parser bounds a document's depth.
    """

    __slots__ = ()

    def _visit(self, node: JSONPathMatch, depth: int = 1) -> Iterable[JSONPathMatch]:
        del depth
        pending = [node]
        while pending:
            current = pending.pop()
            yield current
            pending.extend(reversed(list(_children(current))))


def _children(node: JSONPathMatch) -> Iterator[JSONPathMatch]:
    """The nodes python-jsonpath's walk visits under *node* (strings too: they are Sequences)."""
    obj = node.obj
    if isinstance(obj, Mapping):
        for name, value in obj.items():
            if isinstance(value, Mapping | Sequence):
                yield node.new_child(value, name)
    elif isinstance(obj, Sequence) and not isinstance(obj, str):
        for index, item in enumerate(obj):
            if isinstance(item, Mapping | Sequence):
                yield node.new_child(item, index)


class _Parser(Parser):
    """python-jsonpath's parser, making :class:`_Descent` for ``..`` (in filters too)."""

    def parse_query(self, stream: Any) -> Iterable[Any]:
        """The library's segments, each deep scan replaced by :class:`_Descent`."""
        for segment in super().parse_query(stream):
            if type(segment) is JSONPathRecursiveDescentSegment:
                yield _Descent(env=segment.env, token=segment.token, selectors=segment.selectors)
            else:
                yield segment


class _Environment(jsonpath.JSONPathEnvironment):
    """python-jsonpath with flowcore's time-limited regular expressions and stackless ``..``."""

    parser_class = _Parser

    def setup_function_extensions(self) -> None:
        """RFC 9535's functions, with ``match`` and ``search`` bounded."""
        super().setup_function_extensions()
        self.function_extensions["match"] = _Match()
        self.function_extensions["search"] = _Search()

    def compare(self, left: object, operator: str, right: object) -> bool:
        """Filter comparisons; ``=~`` (a full match, as Jayway's) under the time limit."""
        if operator == "=~":
            pattern = getattr(right, "pattern", None)
            if not isinstance(left, str) or not isinstance(pattern, str):
                return False
            flags = getattr(right, "flags", 0) & _FLAGS
            return compile_pattern(pattern, flags).fullmatch(left) is not None
        return super().compare(left, operator, right)


_ENV = _Environment()


@attrs.frozen
class _Function:
    """A function at the tail of a path.

    Its name, its literal arguments, and whether it takes every match of a leading deep scan
    at once (Jayway turns ``$..a.f()`` into ``f($..a)``).
    """

    name: str
    arguments: tuple[Any, ...]
    over_scan: bool


@attrs.frozen(eq=False)
class JsonPathQuery:
    """A compiled JsonPath that reads a document as Jayway does.

    Attributes:
        text: the path as written.
        definite: whether it gives one value (else a list).
    """

    text: str
    definite: bool
    _path: JSONPath = attrs.field(repr=False)
    _merge: tuple[str, ...] = ()  # names merged into one object at the end
    _function: _Function | None = None
    # a definite path's names and indices, walked directly (python-jsonpath's matching is
    # ten times slower for the common ``$.a.b``)
    _steps: tuple[str | int, ...] | None = None

    def read(self, document: Any) -> Any:
        """What the path gives in *document* (parsed JSON).

        Raises:
            PathNotFoundError: a definite path found nothing.
            JsonPathEvaluationError: a tail function cannot apply to what was found.
            JsonPathLimitError: the JsonPath library failed on the document.
        """
        if self._steps is not None:
            return _walk(self._steps, document, self.text)
        function = self._function
        if function is not None and function.over_scan:
            return _apply(function, _find(self._path, document), scanned=True)
        found = _find(self._path, document)
        if self._merge:
            found = [{n: v[n] for n in self._merge if n in v} for v in found if isinstance(v, dict)]
        if function is not None:
            found = [_apply(function, value, scanned=False) for value in found]
        if not self.definite:
            return found
        if not found:
            msg = f"No results for path: {self.text}"
            raise PathNotFoundError(msg)
        return found[0]


def _walk(steps: tuple[str | int, ...], document: Any, text: str) -> Any:
    """The value at *steps* (names and indices) in *document*, as a definite path reads it."""
    value = document
    for step in steps:
        named = isinstance(step, str) and isinstance(value, dict) and step in value
        indexed = (
            isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value)
        )
        if named or indexed:
            value = value[step]
        else:
            msg = f"No results for path: {text}"
            raise PathNotFoundError(msg)
    return value


def _steps(path: JSONPath) -> tuple[str | int, ...] | None:
    """A singular path's names and indices, or None."""
    if not path.singular_query():
        return None
    steps: list[str | int] = []
    for segment in path.segments:
        (selector,) = segment.selectors
        steps.append(selector.name if isinstance(selector, NameSelector) else selector.index)
    return tuple(steps)


def _find(path: JSONPath, document: Any) -> list[Any]:
    """What *path* finds in *document*.

    Raises:
        JsonPathLimitError: the library failed on the document (its own error, or Python's
            recursion limit): the FlowFile's failure, never an error that keeps it queued.
    """
    if isinstance(document, str):  # python-jsonpath would read a string as JSON text
        return [document] if not path.segments else []
    try:
        return path.findall(document)
    except (jsonpath.JSONPathError, RecursionError) as ex:
        message = " ".join(str(ex).split()) or type(ex).__name__
        msg = f"python-jsonpath cannot evaluate {str(path)!r} over this document: {message}"
        raise JsonPathLimitError(msg) from None


@functools.lru_cache(maxsize=1024)
def compile_json_path(text: str) -> JsonPathQuery:
    """Compile *text* as Jayway would (a path without ``$`` starts at the root).

    Raises:
        ValueError: *text* is blank or not a path Jayway and python-jsonpath both accept,
            with NiFi's explanation.
    """
    if not text.strip():
        msg = "the expression cannot be empty."
        raise ValueError(msg)
    base, function = _split_function(_without_dot_brackets(text.strip()))
    try:
        path = _ENV.compile(base)
    except jsonpath.JSONPathError:
        msg = f"specified expression was not valid: {text}"
        raise ValueError(msg) from None
    if isinstance(path, CompoundJSONPath):  # python-jsonpath's | and &: not Jayway's
        msg = f"specified expression was not valid: {text}"
        raise ValueError(msg)
    segments = path.segments
    merge: tuple[str, ...] = ()
    if function is None and segments and _is_merge(segments[-1]):
        merge = tuple(s.name for s in segments[-1].selectors)
        path = JSONPath(env=_ENV, segments=segments[:-1])
    scan_first = bool(segments) and isinstance(segments[0], JSONPathRecursiveDescentSegment)
    if function is not None and scan_first:
        function = attrs.evolve(function, over_scan=True)
        return JsonPathQuery(text, True, path, (), function)
    steps = _steps(path) if function is None and not merge else None
    return JsonPathQuery(text, path.singular_query(), path, merge, function, steps)


def _without_dot_brackets(text: str) -> str:
    """*text* with Jayway's ``.[`` (``$.a.[0]``, ``$.a.[*]``) written ``[``, as RFC 9535 has it.

    Dots inside quoted names and filter strings are kept; ``..[`` (a deep scan) is left alone.
    """
    out = []
    quote = None
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote and text[index - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "." and text[index + 1 : index + 2] == "[" and _after_name(text, index):
            continue
        out.append(char)
    return "".join(out)


def _after_name(text: str, index: int) -> bool:
    """Whether the dot at *index* follows a name or a bracket: neither the start nor ``..``."""
    return index > 0 and text[index - 1] != "."


def _is_merge(segment: object) -> bool:
    return (
        isinstance(segment, JSONPathChildSegment)
        and len(segment.selectors) > 1
        and all(isinstance(s, NameSelector) for s in segment.selectors)
    )


def _split_function(text: str) -> tuple[str, _Function | None]:
    """The path before a tail function, and the function (None when there is none)."""
    found = _TAIL_FUNCTION.match(text)
    if found is None or found["name"] not in FUNCTIONS:
        return text, None
    arguments: list[Any] = []
    for raw in _split_arguments(found["args"]):
        try:
            arguments.append(read_json_text(raw.replace("'", '"')))
        except InvalidJsonError:
            msg = f"specified expression was not valid: {text}"
            raise ValueError(msg) from None
    base = found["base"] or "$"
    return base, _Function(found["name"], tuple(arguments), over_scan=False)


def _split_arguments(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")] if text.strip() else []


def _numbers(value: Any) -> list[float]:
    items = value if isinstance(value, list) else []
    return [float(v) for v in items if isinstance(v, int | float) and not isinstance(v, bool)]


def _aggregate(name: str, numbers: list[float]) -> float:
    if not numbers:
        msg = "Aggregation function attempted to calculate value using empty array"
        raise JsonPathEvaluationError(msg)
    if name == "sum":
        return math.fsum(numbers)
    if name == "min":
        return min(numbers)
    if name == "max":
        return max(numbers)
    mean = math.fsum(numbers) / len(numbers)
    if name == "avg":
        return mean
    return math.sqrt(max(math.fsum(n * n for n in numbers) / len(numbers) - mean * mean, 0.0))


def _length(value: Any, scanned: bool) -> int | None:
    if scanned:  # Jayway counts the children of every match: $..book.length() is $..book.*
        return sum(len(v) for v in value if isinstance(v, list | dict))
    return len(value) if isinstance(value, list | dict) else None


def _element(function: _Function, value: Any) -> Any:
    if not isinstance(value, list) or not value:
        msg = f"{function.name}() needs a non-empty array"
        raise JsonPathEvaluationError(msg)
    if function.name == "first":
        return value[0]
    if function.name == "last":
        return value[-1]
    index = int(function.arguments[0]) if function.arguments else 0
    try:
        return value[index]
    except IndexError:
        msg = f"index({index}) is outside an array of {len(value)}"
        raise JsonPathEvaluationError(msg) from None


def _concat(function: _Function, value: Any) -> str:
    """The array's strings, then the arguments as text (Jayway's ``concat``)."""
    items = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    arguments = (a if isinstance(a, str) else to_json(a) for a in function.arguments)
    return "".join(items) + "".join(arguments)


_APPLY: dict[str, Callable[[_Function, Any, bool], Any]] = {
    "length": lambda f, v, s: _length(v, s),
    "size": lambda f, v, s: _length(v, s),
    "keys": lambda f, v, s: list(v) if isinstance(v, dict) else None,
    "first": lambda f, v, s: _element(f, v),
    "last": lambda f, v, s: _element(f, v),
    "index": lambda f, v, s: _element(f, v),
    "concat": lambda f, v, s: _concat(f, v),
    "append": lambda f, v, s: [*v, *f.arguments] if isinstance(v, list) else v,
}


def _apply(function: _Function, value: Any, *, scanned: bool) -> Any:
    """Jayway's function *function* applied to *value*."""
    if function.name in _AGGREGATIONS:
        return _aggregate(function.name, _numbers(value) + _numbers(list(function.arguments)))
    return _APPLY[function.name](function, value, scanned)
