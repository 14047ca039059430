r"""JSON read and written as NiFi's Jackson ``ObjectMapper`` does, for the JSON processors.

EvaluateJsonPath, SplitJson and AttributesToJSON write JSON that NiFi users compare byte for byte
with what NiFi wrote: Jackson's compact form (``{"a":1}``, no spaces), its default pretty printer
(``"a" : 1``, two-space indents, arrays inline as ``[ 1, 2 ]``), its escapes (``\\u001F`` in
upper case, ``\\n`` and friends in short form, nothing else escaped) and Java's rendering of
doubles (``1.0E10``). Python's :mod:`json` differs on each of these, so the writer is here.

Reading follows Jackson's defaults too: UTF-8 text (malformed bytes replaced), no ``NaN`` or
``Infinity`` literals, the first JSON value taken and anything after it ignored (Jackson does
not fail on trailing tokens by default), and strings no longer than a limit (NiFi's Max String
Length). The parser itself is the standard library's.

Documents may nest arrays and objects :data:`MAX_DEPTH` (1,024) levels deep, as orjson reads
them (Jackson's own default limit is 1,000). The standard library's parser recurses once per
level and would run out of Python's recursion limit a little short of 1,000 levels, failing
valid JSON as invalid: a document it cannot read at the stack depth it is called from is read
again with :data:`MAX_DEPTH` levels of head room, and refused, naming the limit, when it is
deeper. The writer walks values with a stack of its own, so any value read is written back.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from flowcore.expression._values import java_double_to_string

__all__ = ["MAX_DEPTH", "InvalidJsonError", "quote", "read_json", "read_json_text", "to_json"]

MAX_DEPTH = 1_024  # levels of nested arrays and objects a document may hold (orjson's limit)
#: Whether the parser's C recursion is bounded apart from Python's recursion limit (3.12 on).
_C_RECURSION_APART = sys.version_info >= (3, 12)

_WHITESPACE = " \t\n\r"
_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_ESCAPES.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"})
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})


class InvalidJsonError(ValueError):
    """The content is not a JSON document Jackson would read (NiFi's InvalidJsonException)."""


def _reject_constant(name: str) -> Any:
    msg = f"non-standard token {name!r}: Jackson does not read NaN or Infinity by default"
    raise InvalidJsonError(msg)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def read_json(data: bytes, max_string_length: int | None = None) -> Any:
    """The first JSON value of *data* (UTF-8), as Jackson's ``readValue`` gives it.

    Raises:
        InvalidJsonError: the content holds no JSON value, or a string longer than
            *max_string_length* characters.
    """
    text = data.decode("utf-8", "replace")
    value = read_json_text(text)
    if max_string_length is not None and len(text) > max_string_length:
        _check_strings(value, max_string_length)
    return value


def read_json_text(text: str) -> Any:
    """The first JSON value of *text*; what follows it is ignored, as Jackson ignores it.

    Raises:
        InvalidJsonError: *text* does not start with a JSON value.
    """
    start = len(text) - len(text.lstrip(_WHITESPACE + "\ufeff"))
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as ex:
        raise InvalidJsonError(str(ex)) from None
    except RecursionError:
        return _read_deep(text, start)
    # From Python 3.12 the parser's C recursion has a bound of its own (1,500 levels or more),
    # not Python's recursion limit: a document past MAX_DEPTH may read at once. Only one with
    # more brackets than MAX_DEPTH can be; it is measured.
    if _C_RECURSION_APART and text.count("[") + text.count("{") > MAX_DEPTH:
        _check_depth(value)
    return value


def _check_depth(value: Any) -> None:
    depth = _depth(value)
    if depth > MAX_DEPTH:
        raise _too_deep(str(depth))


def _too_deep(depth: str) -> InvalidJsonError:
    msg = (
        f"the document nests arrays and objects {depth} levels deep, more than the "
        f"{MAX_DEPTH} levels a JSON document may hold"
    )
    return InvalidJsonError(msg)


def _read_deep(text: str, start: int) -> Any:
    """Read a document that nests deeper than the caller's stack left room for.

    The parser is given :data:`MAX_DEPTH` levels (and some) above whatever the stack already
    holds; the value read is then measured, so the limit is exact whatever the head room.
    Tasks run one at a time in their process: the raised limit is restored before anything
    else runs.
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + MAX_DEPTH + 64)
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as ex:
        raise InvalidJsonError(str(ex)) from None
    except RecursionError:
        deeper = f"more than {MAX_DEPTH}"
        raise _too_deep(deeper) from None
    finally:
        sys.setrecursionlimit(limit)
    _check_depth(value)
    return value


def _depth(value: Any) -> int:
    """How many levels of arrays and objects *value* nests (a scalar: 0), without recursing."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            pending.extend(
                (child, level + 1) for child in children if isinstance(child, dict | list)
            )
    return deepest


def _check_strings(value: Any, limit: int) -> None:
    """Raise when a string (value or name) in *value* is longer than *limit* characters."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if len(item) > limit:
                msg = f"a string of {len(item)} characters exceeds the maximum length {limit}"
                raise InvalidJsonError(msg)
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def to_json(value: Any, *, pretty: bool = False) -> str:
    """*value* as Jackson's ``ObjectMapper`` writes it: compact, or its default pretty printer."""
    out: list[str] = []
    _write(value, out, 0 if pretty else None)
    return "".join(out)


def quote(text: str) -> str:
    """*text* as a JSON string, with Jackson's escapes."""
    return '"' + text.translate(_ESCAPES) + '"'


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = java_double_to_string(value)
        # Jackson writes NaN and the infinities as strings (WRITE_NAN_AS_STRINGS)
        return text if math.isfinite(value) else quote(text)
    return quote(str(value))


def _write(value: Any, out: list[str], level: int | None) -> None:
    """Append *value*; *level* is the pretty printer's object nesting, None when compact.

    A stack of pending work instead of recursion, so a value nested as deep as a document may
    be (:data:`MAX_DEPTH`) is written at any stack depth. Each entry is text to append (a
    1-tuple) or a value to write at a level (a 2-tuple); a container's parts are pushed in
    reverse, so they come off in order.
    """
    pending: list[tuple[str] | tuple[Any, int | None]] = [(value, level)]
    while pending:
        entry = pending.pop()
        if len(entry) == 1:
            out.append(entry[0])  # type: ignore[misc]
            continue
        item, depth = entry  # type: ignore[misc]
        if isinstance(item, Mapping):
            parts = _mapping_parts(item, depth)
        elif isinstance(item, Sequence) and not isinstance(item, str | bytes):
            parts = _sequence_parts(item, depth)
        else:
            out.append(_scalar(item))
            continue
        pending.extend(reversed(parts))


def _mapping_parts(value: Mapping[Any, Any], level: int | None) -> list[Any]:
    """An object's text and members, in order, as :func:`_write`'s stack entries."""
    if level is None:
        parts: list[Any] = [("{",)]
        for index, (key, item) in enumerate(value.items()):
            name = str(key).translate(_ESCAPES)
            parts.append((f',"{name}":' if index else f'"{name}":',))
            parts.append((item, None))
        parts.append(("}",))
        return parts
    if not value:
        return [("{ }",)]
    inner = "\n" + "  " * (level + 1)
    parts = [("{",)]
    for index, (key, item) in enumerate(value.items()):
        parts.append((("," + inner if index else inner) + quote(str(key)) + " : ",))
        parts.append((item, level + 1))
    parts.append(("\n" + "  " * level + "}",))
    return parts


def _sequence_parts(value: Sequence[Any], level: int | None) -> list[Any]:
    """An array's text and items, in order, as :func:`_write`'s stack entries.

    Pretty arrays are inline: their items stay at the array's level.
    """
    if level is None:
        parts: list[Any] = [("[",)]
        for index, item in enumerate(value):
            if index:
                parts.append((",",))
            parts.append((item, None))
        parts.append(("]",))
        return parts
    if not value:
        return [("[ ]",)]
    parts = [("[ ",)]
    for index, item in enumerate(value):
        if index:
            parts.append((", ",))
        parts.append((item, level))
    parts.append((" ]",))
    return parts
