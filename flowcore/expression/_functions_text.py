"""Expression Language string, search and encoding functions (NiFi guide §4.3-4.4, encoders).

Null rules follow NiFi: most string functions return null for a null subject, the substring
family returns ``""``, ``length`` 0, ``indexOf`` -1, and the search functions false.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import random
import re
from collections.abc import Callable
from typing import Any

import regex as regex_engine

from flowcore.errors import ExpressionEvaluationError, quoted
from flowcore.expression._regex import java_regex, java_template
from flowcore.expression._values import (
    Value,
    check_length,
    int_arg,
    java_trim,
    max_length,
    to_boolean,
    to_number,
    to_string,
)

_s = to_string
_int_arg = int_arg


# --- strings -----------------------------------------------------------------------------------


def _to_upper(_ctx: Any, s: Value) -> str | None:
    text = _s(s)
    return None if text is None else text.upper()


def _to_lower(_ctx: Any, s: Value) -> str | None:
    text = _s(s)
    return None if text is None else text.lower()


def _trim(_ctx: Any, s: Value) -> str | None:
    text = _s(s)
    return None if text is None else java_trim(text)


def _length(_ctx: Any, s: Value) -> int:
    text = _s(s)
    return 0 if text is None else len(text)


def _substring(_ctx: Any, s: Value, start: Value, end: Value = None) -> str:
    text = _s(s)
    if text is None:
        return ""
    begin = to_number(start)
    stop = len(text) if end is None else to_number(end)
    if begin is None or stop is None:
        return ""
    begin, stop = int(begin), int(stop)
    # Java throws IndexOutOfBoundsException here; NiFi catches it and returns "".
    if begin < 0 or stop > len(text) or begin > stop:
        return ""
    return text[begin:stop]


def _substring_around(*, last: bool, after: bool) -> Callable[[Any, Value, Value], str]:
    """Build substringBefore, substringBeforeLast, substringAfter or substringAfterLast.

    As in NiFi, a null subject gives "" and an empty or absent marker gives the whole subject.
    """

    def around(_ctx: Any, s: Value, sep: Value) -> str:
        text, marker = _s(s), _s(sep)
        if text is None:
            return ""
        if not marker:
            return text
        index = text.rfind(marker) if last else text.find(marker)
        if index < 0:
            return text
        return text[index + len(marker) :] if after else text[:index]

    return around


def _append(_ctx: Any, s: Value, v: Value) -> str:
    head, tail = _s(s) or "", _s(v) or ""
    check_length(len(head) + len(tail), "append")
    return head + tail


def _prepend(_ctx: Any, s: Value, v: Value) -> str:
    head, tail = _s(v) or "", _s(s) or ""
    check_length(len(head) + len(tail), "prepend")
    return head + tail


def _replace(_ctx: Any, s: Value, search: Value, repl: Value) -> str | None:
    text = _s(s)
    if text is None:
        return None
    needle, replacement = _s(search) or "", _s(repl) or ""
    if len(replacement) > len(needle):
        found = len(text) + 1 if not needle else text.count(needle)
        check_length(len(text) + found * (len(replacement) - len(needle)), "replace")
    return text.replace(needle, replacement)


#: Characters with a meaning in a Java regular expression; a pattern without any is a literal.
_REGEX_SYNTAX = frozenset(".^$*+?{}[]\\|()")


def _regex_replace(text: str, regex: Value, repl: Value, *, first: bool, name: str) -> str:
    """``replaceFirst``/``replaceAll``, refusing a result over the length limit before making it.

    A bound is cheap when the replacement is short; otherwise the matches are counted first
    (each group reference in the replacement can add at most the whole text).
    """
    source = _s(regex) or ""
    pattern = java_regex(source)
    template = _s(repl) or ""
    references = template.count("$")
    matches = 1 if first else len(text) + 1  # at most one match per position
    if len(text) + matches * len(template) + references * len(text) > max_length():
        if source and not _REGEX_SYNTAX.intersection(source):  # a literal: counted at C speed
            matches = text.count(source)
        else:
            matches = pattern.subn("", text)[1]  # counted in C, under the time limit
        check_length(len(text) + matches * len(template) + references * len(text), name)
    try:
        return pattern.sub(java_template(template), text, count=1 if first else 0)
    except (regex_engine.error, IndexError) as ex:  # a group the pattern does not have
        msg = (
            f"{name}(): replacement {quoted(template)} does not fit {quoted(pattern.pattern)}: {ex}"
        )
        raise ExpressionEvaluationError(msg) from None


def _replace_first(_ctx: Any, s: Value, regex: Value, repl: Value) -> str | None:
    text = _s(s)
    if text is None:
        return None
    return _regex_replace(text, regex, repl, first=True, name="replaceFirst")


def _replace_all(_ctx: Any, s: Value, regex: Value, repl: Value) -> str | None:
    text = _s(s)
    if text is None:
        return None
    return _regex_replace(text, regex, repl, first=False, name="replaceAll")


def _replace_null(_ctx: Any, s: Value, v: Value) -> Value:
    return v if s is None else s


def _replace_empty(_ctx: Any, s: Value, v: Value) -> Value:
    return v if s is None or (to_string(s) or "").strip() == "" else s


def _pad(left: bool) -> Callable[..., str | None]:
    def pad(_ctx: Any, s: Value, length: Value, pad_with: Value = "_") -> str | None:
        text = _s(s)
        if text is None:
            return None
        target = _int_arg(length, "padLeft" if left else "padRight")
        filler = _s(pad_with) or "_"
        missing = target - len(text)
        if missing <= 0:
            return text
        check_length(target, "padLeft" if left else "padRight")
        padding = (filler * (missing // len(filler) + 1))[:missing]
        return padding + text if left else text + padding

    return pad


def _repeat(_ctx: Any, s: Value, low: Value, high: Value = None) -> str:
    text = _s(s) or ""
    minimum = _int_arg(low, "repeat")
    maximum = minimum if high is None else _int_arg(high, "repeat")
    if minimum < 0 or maximum < minimum:
        msg = f"repeat({minimum}, {maximum}) needs 0 <= min <= max"
        raise ExpressionEvaluationError(msg)
    times = random.randint(minimum, maximum)
    check_length(len(text) * times, "repeat")
    return text * times


def _get_delimited_field(  # noqa: PLR0917 - mirrors the EL function's positional arguments
    _ctx: Any,
    s: Value,
    index: Value,
    delimiter: Value = ",",
    quote: Value = '"',
    escape: Value = "\\",
    strip: Value = False,
) -> str:
    text = _s(s) or ""
    wanted = _int_arg(index, "getDelimitedField")
    if wanted < 1:
        msg = f"getDelimitedField() index must be 1 or greater, got {wanted}"
        raise ExpressionEvaluationError(msg)
    delim, quote_ch, escape_ch = _s(delimiter) or ",", _s(quote) or '"', _s(escape) or "\\"
    strip_chars = to_boolean(strip) is True
    fields: list[str] = []
    current: list[str] = []
    in_quotes = escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == escape_ch:
            escaped = True
            if not strip_chars:
                current.append(ch)
        elif ch == quote_ch:
            in_quotes = not in_quotes
            if not strip_chars:
                current.append(ch)
        elif ch == delim[0] and not in_quotes:
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
    fields.append("".join(current))
    return fields[wanted - 1] if wanted <= len(fields) else ""


# --- searching ---------------------------------------------------------------------------------


def _starts_with(_ctx: Any, s: Value, v: Value) -> bool:
    text, other = _s(s), _s(v)
    return text is not None and other is not None and text.startswith(other)


def _ends_with(_ctx: Any, s: Value, v: Value) -> bool:
    text, other = _s(s), _s(v)
    return text is not None and other is not None and text.endswith(other)


def _contains(_ctx: Any, s: Value, v: Value) -> bool:
    text, other = _s(s), _s(v)
    return text is not None and other is not None and other in text


def _in(_ctx: Any, s: Value, *values: Value) -> bool:
    text = _s(s)
    return text is not None and any(text == _s(v) for v in values)


def _find(_ctx: Any, s: Value, regex: Value) -> bool:
    text = _s(s)
    return text is not None and java_regex(_s(regex) or "").search(text) is not None


def _matches(_ctx: Any, s: Value, regex: Value) -> bool:
    text = _s(s)
    return text is not None and java_regex(_s(regex) or "").fullmatch(text) is not None


def _index_of(_ctx: Any, s: Value, v: Value) -> int:
    text = _s(s)
    return -1 if text is None else text.find(_s(v) or "")


def _last_index_of(_ctx: Any, s: Value, v: Value) -> int:
    text = _s(s)
    return -1 if text is None else text.rfind(_s(v) or "")


def _json_path(_ctx: Any, s: Value, path: Value) -> str:
    text = _s(s)
    if text is None:
        return ""
    try:
        document = json.loads(text)
    except ValueError as ex:
        msg = f"jsonPath() subject is not valid JSON: {ex}"
        raise ExpressionEvaluationError(msg) from None
    expression = _s(path) or "$"
    node: Any = document
    for token in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']+)'\]", expression.lstrip("$")):
        key, index, quoted = token
        try:
            node = node[int(index)] if index else node[key or quoted]
        except (KeyError, IndexError, TypeError):
            return ""
    if isinstance(node, dict | list):
        return json.dumps(node, separators=(",", ":"))
    return to_string(node) if not isinstance(node, str) else node  # type: ignore[return-value]


# --- encoding ----------------------------------------------------------------------------------


def _text_fn(fn: Callable[[str], str]) -> Callable[[Any, Value], str | None]:
    def apply(_ctx: Any, s: Value) -> str | None:
        text = _s(s)
        return None if text is None else fn(text)

    return apply


def _escape_json(text: str) -> str:
    return json.dumps(text)[1:-1]


def _unescape_json(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except ValueError:
        return text


def _escape_xml(text: str) -> str:
    return html.escape(text, quote=True).replace("&#x27;", "&apos;")


def _escape_csv(text: str) -> str:
    if any(ch in text for ch in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _unescape_csv(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"')
    return text


def _base64_decode(text: str) -> str:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        msg = f"base64Decode(): {text[:40]!r} is not Base64-encoded UTF-8"
        raise ExpressionEvaluationError(msg) from None


def _hash(_ctx: Any, s: Value, algorithm: Value) -> str | None:
    text = _s(s)
    if text is None:
        return None
    name = (_s(algorithm) or "").upper().replace("-", "")
    aliases = {"SHA": "SHA1", "SHA512256": "SHA512_256", "SHA512224": "SHA512_224"}
    try:
        digest = hashlib.new(aliases.get(name, name).lower().replace("sha3", "sha3_"))
    except ValueError:
        msg = f"hash(): unknown algorithm {to_string(algorithm)!r}; use e.g. 'SHA-256' or 'MD5'"
        raise ExpressionEvaluationError(msg) from None
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()
