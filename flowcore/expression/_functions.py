"""The Expression Language functions, one registry entry each, with NiFi's null handling.

Each function is a plain module-level callable ``impl(ctx, subject, *args)`` so compiled
expressions stay picklable and the registry is an explicit dict (no import-time magic). The
``kind`` says where a function may appear: after a subject (``chain``), as a subject
(``subjectless``), as a multi-attribute subject (``multi``) or as a reducer over one (``reduce``).
"""

from __future__ import annotations

import base64
import contextvars
import html
import itertools
import math
import random
import socket
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

import flowcore.expression._dates as java_dates
from flowcore.errors import ExpressionEvaluationError, quoted
from flowcore.expression._functions_text import (
    _append,
    _base64_decode,
    _contains,
    _ends_with,
    _escape_csv,
    _escape_json,
    _escape_xml,
    _find,
    _get_delimited_field,
    _hash,
    _in,
    _index_of,
    _json_path,
    _last_index_of,
    _length,
    _matches,
    _pad,
    _prepend,
    _repeat,
    _replace,
    _replace_all,
    _replace_empty,
    _replace_first,
    _replace_null,
    _starts_with,
    _substring,
    _substring_around,
    _text_fn,
    _to_lower,
    _to_upper,
    _trim,
    _unescape_csv,
    _unescape_json,
)
from flowcore.expression._nodes import ResultType
from flowcore.expression._regex import java_regex
from flowcore.expression._values import (
    Value,
    check_length,
    from_epoch_millis,
    int_arg,
    is_number,
    java_trim,
    shown,
    to_boolean,
    to_date,
    to_epoch_millis,
    to_number,
    to_string,
    wrap_long,
)

if TYPE_CHECKING:
    from flowcore.expression._evaluate import EvaluationContext

__all__ = ["DUAL_USE", "FUNCTIONS", "FunctionSpec"]

R = ResultType


@attrs.frozen
class FunctionSpec:
    """How a function is called and what it returns.

    Attributes:
        name: the EL name, case-sensitive as in NiFi.
        impl: the implementation, ``impl(ctx, subject, *args)``.
        min_args: the fewest arguments accepted.
        max_args: the most arguments accepted (``None`` for any number).
        result: the static result type, used to validate e.g. boolean conditions.
        kind: ``chain``, ``subjectless``, ``multi`` or ``reduce``.
        lazy: whether arguments are passed as zero-argument thunks (``and``, ``or``, ``ifElse``).
    """

    name: str
    impl: Callable[..., Value] = attrs.field(repr=False)
    min_args: int = 0
    max_args: int | None = 0
    result: ResultType = ResultType.STRING
    kind: str = "chain"
    lazy: bool = False


# --- helpers -------------------------------------------------------------------------------


_s = to_string
_int_arg = int_arg
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _kind(value: Value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, datetime):
        return "date"
    return "str"


def _normalized(value: Value) -> str | None:
    if isinstance(value, datetime):
        return str(to_epoch_millis(value))
    return to_string(value)


# --- boolean logic ---------------------------------------------------------------------------


def _is_null(_ctx: Any, s: Value) -> bool:
    return s is None


def _not_null(_ctx: Any, s: Value) -> bool:
    return s is not None


def _is_empty(_ctx: Any, s: Value) -> bool:
    return s is None or (to_string(s) or "").strip() == ""


def _equals(_ctx: Any, s: Value, v: Value) -> bool:
    if s is None or v is None:
        return False
    if _kind(s) == _kind(v):
        return bool(s == v)
    return _normalized(s) == _normalized(v)


def _equals_ignore_case(_ctx: Any, s: Value, v: Value) -> bool:
    if s is None or v is None:
        return False
    return (_normalized(s) or "").lower() == (_normalized(v) or "").lower()


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[Any, Value, Value], bool]:
    def compare(_ctx: Any, s: Value, v: Value) -> bool:
        left, right = to_number(s), to_number(v)
        if left is None or right is None:
            return False
        if isinstance(left, float) or isinstance(right, float):
            return op(float(left), float(right))
        return op(left, right)

    return compare


def _gt(a: Any, b: Any) -> bool:
    return bool(a > b)


def _ge(a: Any, b: Any) -> bool:
    return bool(a >= b)


def _lt(a: Any, b: Any) -> bool:
    return bool(a < b)


def _le(a: Any, b: Any) -> bool:
    return bool(a <= b)


def _and(_ctx: Any, s: Value, other: Callable[[], Value]) -> bool:
    if to_boolean(s) is not True:
        return False
    return to_boolean(other()) is True


def _or(_ctx: Any, s: Value, other: Callable[[], Value]) -> bool:
    if to_boolean(s) is True:
        return True
    return to_boolean(other()) is True


def _not(_ctx: Any, s: Value) -> bool | None:
    value = to_boolean(s)
    return None if value is None else not value


def _if_else(_ctx: Any, s: Value, yes: Callable[[], Value], no: Callable[[], Value]) -> Value:
    return yes() if to_boolean(s) is True else no()


# --- numbers -----------------------------------------------------------------------------------


def _arithmetic(op: str) -> Callable[[Any, Value, Value], int | float | None]:
    def apply(_ctx: Any, s: Value, v: Value) -> int | float | None:
        left, right = to_number(s), to_number(v)
        if left is None or right is None:
            return None
        if isinstance(left, int) and isinstance(right, int):
            if op in "/%" and right == 0:
                msg = f"{'divide' if op == '/' else 'mod'}() by zero (subject {left})"
                raise ExpressionEvaluationError(msg)
            if op == "+":
                return wrap_long(left + right)
            if op == "-":
                return wrap_long(left - right)
            if op == "*":
                return wrap_long(left * right)
            quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)
            return wrap_long(quotient) if op == "/" else left - right * quotient
        a, b = float(left), float(right)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            if op == "%" or a == 0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b if op == "/" else math.fmod(a, b)

    return apply


def _to_number(_ctx: Any, s: Value) -> int | None:
    number = to_number(s)
    if number is None:
        return None
    if isinstance(number, float):
        if math.isnan(number) or math.isinf(number):
            return None
        # Java's (long) cast saturates: 1e300 becomes Long.MAX_VALUE, not a 301-digit number.
        return max(_LONG_MIN, min(_LONG_MAX, int(number)))
    return number


def _to_decimal(_ctx: Any, s: Value) -> float | None:
    number = to_number(s)
    return None if number is None else float(number)


def _to_string(_ctx: Any, s: Value) -> str | None:
    return to_string(s)


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _to_radix(_ctx: Any, s: Value, base: Value, width: Value = None) -> str | None:
    number = to_number(s)
    if number is None:
        return None
    radix = _int_arg(base, "toRadix")
    if not 2 <= radix <= 36:
        msg = f"toRadix() base must be between 2 and 36, got {radix}"
        raise ExpressionEvaluationError(msg)
    value = int(number)
    digits = []
    remaining = abs(value)
    while True:
        remaining, digit = divmod(remaining, radix)
        digits.append(_DIGITS[digit])
        if remaining == 0:
            break
    text = "".join(reversed(digits))
    if width is not None:
        padded = _int_arg(width, "toRadix")
        check_length(padded, "toRadix")  # toRadix(2, 2000000000) made 2 GB of zeros
        text = text.zfill(padded)
    return "-" + text if value < 0 else text


def _from_radix(_ctx: Any, s: Value, base: Value) -> int | None:
    text = _s(s)
    if text is None:
        return None
    try:
        return int(java_trim(text), _int_arg(base, "fromRadix"))
    except ValueError:
        msg = f"fromRadix(): {shown(text)} is not a number in base {to_string(base)}"
        raise ExpressionEvaluationError(msg) from None


_MATH: Mapping[str, Callable[..., float]] = {
    "abs": abs,
    "acos": math.acos,
    "asin": math.asin,
    "atan": math.atan,
    "atan2": math.atan2,
    "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "ceil": math.ceil,
    "cos": math.cos,
    "cosh": math.cosh,
    "exp": math.exp,
    "expm1": math.expm1,
    "floor": math.floor,
    "hypot": math.hypot,
    "log": math.log,
    "log10": math.log10,
    "log1p": math.log1p,
    "max": max,
    "min": min,
    "pow": math.pow,
    "random": random.random,
    "rint": round,
    "round": lambda x: math.floor(x + 0.5),
    "signum": lambda x: math.copysign(1.0, x) if x else 0.0,
    "sin": math.sin,
    "sinh": math.sinh,
    "sqrt": math.sqrt,
    "tan": math.tan,
    "tanh": math.tanh,
    "toDegrees": math.degrees,
    "toRadians": math.radians,
}


def _math(_ctx: Any, s: Value, name: Value, arg: Value = None) -> int | float:
    method = _s(name) or ""
    fn = _MATH.get(method)
    if fn is None:
        msg = f"math({quoted(method)}) is not supported; use one of {', '.join(sorted(_MATH))}"
        raise ExpressionEvaluationError(msg)
    args = [to_number(x) for x in (s, arg) if x is not None]
    if any(a is None for a in args):
        msg = f"math({quoted(method)}) needs numeric operands, got {shown(s)}"
        raise ExpressionEvaluationError(msg)
    try:
        result = fn(*args)
    except (TypeError, ValueError) as ex:
        msg = f"math({quoted(method)}) cannot be applied to {quoted(repr(args))}: {ex}"
        raise ExpressionEvaluationError(msg) from None
    return result if is_number(result) else float(result)


# --- dates -------------------------------------------------------------------------------------


def _format(_ctx: Any, s: Value, pattern: Value, zone: Value = None) -> str | None:
    moment = to_date(s)
    if moment is None:
        return None
    return java_dates.format_date(moment, _s(pattern) or "", _s(zone))


def _to_date(_ctx: Any, s: Value, pattern: Value = None, zone: Value = None) -> datetime | None:
    if s is None:
        return None
    if pattern is None:
        return to_date(s)
    text = _s(s)
    return java_dates.parse_date(java_trim(text or ""), _s(pattern) or "", _s(zone))


def _now(ctx: EvaluationContext, _s_: Value) -> datetime:
    return from_epoch_millis(ctx.now_millis())


# --- subjectless -------------------------------------------------------------------------------

_next_int = itertools.count()
_next_int_lock = threading.Lock()


def _uuid(_ctx: Any, _s_: Value) -> str:
    return str(uuid.uuid4())


def _literal(_ctx: Any, _s_: Value, v: Value) -> Value:
    return v


def _get_state_value(ctx: EvaluationContext, _s_: Value, key: Value) -> str | None:
    state = ctx.state
    return None if state is None else state.get(_s(key) or "")


def _next_int_value(_ctx: Any, _s_: Value) -> int:
    with _next_int_lock:
        return next(_next_int)


def _random(_ctx: Any, _s_: Value) -> int:
    return random.getrandbits(63)


def _ip(_ctx: Any, _s_: Value) -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _hostname(_ctx: Any, _s_: Value, fqdn: Value = False) -> str:
    return socket.getfqdn() if to_boolean(fqdn) else socket.gethostname()


def _thread(_ctx: Any, _s_: Value) -> str:
    return threading.current_thread().name


#: ``evaluateELString`` evaluating text that calls it again, at most: an attribute whose value
#: is ``${a:evaluateELString()}`` refers to itself forever otherwise (a RecursionError).
MAX_EL_STRING_DEPTH = 16
_el_string_depth = contextvars.ContextVar("flowcore_el_string_depth", default=0)
#: What ``evaluateELString`` compiles its text with. The compiler's parser needs this module's
#: function table, so the compiler registers itself here (:func:`use_compiler`) instead of
#: being imported: this module stays below it.
_compilers: list[Callable[[str], Any]] = []


def use_compiler(compile_text: Callable[[str], Any]) -> None:
    """Register the Expression Language compiler ``evaluateELString`` uses."""
    _compilers[:] = [compile_text]


def _evaluate_el_string(ctx: EvaluationContext, s: Value) -> str | None:
    text = _s(s)
    if text is None:
        return None
    depth = _el_string_depth.get()
    if depth >= MAX_EL_STRING_DEPTH:
        shown = text if len(text) <= 80 else text[:77] + "..."
        msg = (
            f"evaluateELString() evaluated text that calls it again {MAX_EL_STRING_DEPTH} levels "
            f"deep (now {shown!r}); an attribute that refers to itself this way never ends: "
            "break the cycle"
        )
        raise ExpressionEvaluationError(msg)
    token = _el_string_depth.set(depth + 1)
    try:
        return _compilers[0](text).evaluate_in(ctx)
    finally:
        _el_string_depth.reset(token)


# --- multi-attribute subjects and reducers -----------------------------------------------------


def _any_attribute(ctx: EvaluationContext, _s_: Value, *names: Value) -> list[Value]:
    return [ctx.lookup(_s(n) or "") for n in names]


def _matching_attributes(ctx: EvaluationContext, _s_: Value, *patterns: Value) -> list[Value]:
    regexes = [java_regex(_s(p) or "") for p in patterns]
    return [v for k, v in ctx.attributes.items() if any(r.fullmatch(k) for r in regexes)]


def _delineated(_ctx: Any, _s_: Value, value: Value, delimiter: Value) -> list[Value]:
    text, delim = _s(value), _s(delimiter) or ","
    return [] if text is None else list(text.split(delim))


def _join(_ctx: Any, values: list[Value], delimiter: Value) -> str:
    return (_s(delimiter) or "").join(t for t in (to_string(v) for v in values) if t is not None)


def _count(_ctx: Any, values: list[Value]) -> int:
    return sum(1 for v in values if v is not None and v is not False)


def _spec(
    name: str,
    impl: Callable[..., Value],
    args: tuple[int, int | None] = (0, 0),
    result: ResultType = R.STRING,
    kind: str = "chain",
    *,
    lazy: bool = False,
) -> FunctionSpec:
    return FunctionSpec(name, impl, args[0], args[1], result, kind, lazy)


FUNCTIONS: Mapping[str, FunctionSpec] = {
    spec.name: spec
    for spec in (
        # boolean logic (§4.2)
        _spec("isNull", _is_null, result=R.BOOLEAN),
        _spec("notNull", _not_null, result=R.BOOLEAN),
        _spec("isEmpty", _is_empty, result=R.BOOLEAN),
        _spec("equals", _equals, (1, 1), R.BOOLEAN),
        _spec("equalsIgnoreCase", _equals_ignore_case, (1, 1), R.BOOLEAN),
        _spec("gt", _compare(_gt), (1, 1), R.BOOLEAN),
        _spec("ge", _compare(_ge), (1, 1), R.BOOLEAN),
        _spec("lt", _compare(_lt), (1, 1), R.BOOLEAN),
        _spec("le", _compare(_le), (1, 1), R.BOOLEAN),
        _spec("and", _and, (1, 1), R.BOOLEAN, lazy=True),
        _spec("or", _or, (1, 1), R.BOOLEAN, lazy=True),
        _spec("not", _not, result=R.BOOLEAN),
        _spec("ifElse", _if_else, (2, 2), R.STRING, lazy=True),
        # strings (§4.3)
        _spec("toUpper", _to_upper),
        _spec("toLower", _to_lower),
        _spec("trim", _trim),
        _spec("length", _length, result=R.WHOLE_NUMBER),
        _spec("substring", _substring, (1, 2)),
        _spec("substringBefore", _substring_around(last=False, after=False), (1, 1)),
        _spec("substringBeforeLast", _substring_around(last=True, after=False), (1, 1)),
        _spec("substringAfter", _substring_around(last=False, after=True), (1, 1)),
        _spec("substringAfterLast", _substring_around(last=True, after=True), (1, 1)),
        _spec("append", _append, (1, 1)),
        _spec("prepend", _prepend, (1, 1)),
        _spec("replace", _replace, (2, 2)),
        _spec("replaceFirst", _replace_first, (2, 2)),
        _spec("replaceAll", _replace_all, (2, 2)),
        _spec("replaceNull", _replace_null, (1, 1)),
        _spec("replaceEmpty", _replace_empty, (1, 1)),
        _spec("padLeft", _pad(left=True), (1, 2)),
        _spec("padRight", _pad(left=False), (1, 2)),
        _spec("getDelimitedField", _get_delimited_field, (1, 5)),
        _spec("repeat", _repeat, (1, 2)),
        _spec("escapeJson", _text_fn(_escape_json)),
        _spec("unescapeJson", _text_fn(_unescape_json)),
        _spec("escapeXml", _text_fn(_escape_xml)),
        _spec("unescapeXml", _text_fn(html.unescape)),
        _spec("escapeHtml3", _text_fn(html.escape)),
        _spec("escapeHtml4", _text_fn(html.escape)),
        _spec("unescapeHtml3", _text_fn(html.unescape)),
        _spec("unescapeHtml4", _text_fn(html.unescape)),
        _spec("escapeCsv", _text_fn(_escape_csv)),
        _spec("unescapeCsv", _text_fn(_unescape_csv)),
        _spec("urlEncode", _text_fn(lambda t: urllib.parse.quote_plus(t, safe="*"))),
        _spec("urlDecode", _text_fn(urllib.parse.unquote_plus)),
        _spec("base64Encode", _text_fn(lambda t: base64.b64encode(t.encode()).decode("ascii"))),
        _spec("base64Decode", _text_fn(_base64_decode)),
        _spec("hash", _hash, (1, 1)),
        _spec("jsonPath", _json_path, (1, 1)),
        _spec("evaluateELString", _evaluate_el_string),
        # searching (§4.4)
        _spec("startsWith", _starts_with, (1, 1), R.BOOLEAN),
        _spec("endsWith", _ends_with, (1, 1), R.BOOLEAN),
        _spec("contains", _contains, (1, 1), R.BOOLEAN),
        _spec("in", _in, (1, None), R.BOOLEAN),
        _spec("find", _find, (1, 1), R.BOOLEAN),
        _spec("matches", _matches, (1, 1), R.BOOLEAN),
        _spec("indexOf", _index_of, (1, 1), R.WHOLE_NUMBER),
        _spec("lastIndexOf", _last_index_of, (1, 1), R.WHOLE_NUMBER),
        # numbers (§4.5)
        _spec("plus", _arithmetic("+"), (1, 1), R.NUMBER),
        _spec("minus", _arithmetic("-"), (1, 1), R.NUMBER),
        _spec("multiply", _arithmetic("*"), (1, 1), R.NUMBER),
        _spec("divide", _arithmetic("/"), (1, 1), R.NUMBER),
        _spec("mod", _arithmetic("%"), (1, 1), R.NUMBER),
        _spec("toNumber", _to_number, result=R.WHOLE_NUMBER),
        _spec("toDecimal", _to_decimal, result=R.DECIMAL),
        _spec("toString", _to_string),
        _spec("toRadix", _to_radix, (1, 2)),
        _spec("fromRadix", _from_radix, (1, 1), R.WHOLE_NUMBER),
        _spec("math", _math, (1, 2), R.NUMBER),
        # dates (§4.6)
        _spec("format", _format, (1, 2)),
        _spec("toDate", _to_date, (0, 2), R.DATE),
        # subjectless (§4.7)
        _spec("now", _now, result=R.DATE, kind="subjectless"),
        _spec("UUID", _uuid, kind="subjectless"),
        _spec("literal", _literal, (1, 1), kind="subjectless"),
        _spec("getStateValue", _get_state_value, (1, 1), kind="subjectless"),
        _spec("nextInt", _next_int_value, result=R.WHOLE_NUMBER, kind="subjectless"),
        _spec("random", _random, result=R.WHOLE_NUMBER, kind="subjectless"),
        _spec("ip", _ip, kind="subjectless"),
        _spec("hostname", _hostname, (0, 1), kind="subjectless"),
        _spec("thread", _thread, kind="subjectless"),
        # multi-attribute subjects and their reducers
        _spec("anyAttribute", _any_attribute, (1, None), R.BOOLEAN, "multi"),
        _spec("allAttributes", _any_attribute, (1, None), R.BOOLEAN, "multi"),
        _spec("anyMatchingAttribute", _matching_attributes, (1, None), R.BOOLEAN, "multi"),
        _spec("allMatchingAttributes", _matching_attributes, (1, None), R.BOOLEAN, "multi"),
        _spec("anyDelineatedValue", _delineated, (2, 2), R.BOOLEAN, "multi"),
        _spec("allDelineatedValues", _delineated, (2, 2), R.BOOLEAN, "multi"),
        _spec("join", _join, (1, 1), R.STRING, "reduce"),
        _spec("count", _count, (0, 0), R.WHOLE_NUMBER, "reduce"),
    )
}

#: Functions that may be used both as a subject and after one (``${math('random')}``).
DUAL_USE: frozenset[str] = frozenset({"math"})
