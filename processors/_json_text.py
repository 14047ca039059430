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
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from flowcore.expression._values import java_double_to_string

__all__ = ["InvalidJsonError", "quote", "read_json", "read_json_text", "to_json"]

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
        msg = "the document nests too deeply"
        raise InvalidJsonError(msg) from None
    return value


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
    """Append *value*; *level* is the pretty printer's object nesting, None when compact."""
    if isinstance(value, Mapping):
        if level is None:
            out.append("{")
            for index, (key, item) in enumerate(value.items()):
                out.append(',"' if index else '"')
                out.append(str(key).translate(_ESCAPES))
                out.append('":')
                _write(item, out, None)
            out.append("}")
            return
        if not value:
            out.append("{ }")
            return
        inner = "\n" + "  " * (level + 1)
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            out.append("," + inner if index else inner)
            out.append(quote(str(key)))
            out.append(" : ")
            _write(item, out, level + 1)
        out.append("\n" + "  " * level + "}")
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if level is None:
            out.append("[")
            for index, item in enumerate(value):
                if index:
                    out.append(",")
                _write(item, out, None)
            out.append("]")
            return
        if not value:
            out.append("[ ]")
            return
        out.append("[ ")
        for index, item in enumerate(value):
            if index:
                out.append(", ")
            _write(item, out, level)  # arrays are inline: they add no indentation
        out.append(" ]")
    else:
        out.append(_scalar(value))
