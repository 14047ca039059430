"""RecordPath's standalone functions (NiFi 2's set).

Each behaves as NiFi's class of the same name in ``org.apache.nifi.record.path.functions``.

Each takes its argument trees, the evaluation context and the evaluator (passed in, so this
module does not import the one that imports it) and yields FieldValues. A function that keeps
a field's identity (``substring(/name, 0, 2)``) keeps its field and parent, so UpdateRecord can
write the result back; one that builds a new value (``concat``) has no parent.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import datetime
import hashlib
import json
import math
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from flowcore.errors import (
    ExpressionEvaluationError,
    RecordPathEvaluationError,
    RegexTimeoutError,
    quoted,
)
from flowcore.expression._dates import format_date, parse_date
from flowcore.expression._regex import java_replacement
from flowcore.patterns import JAVA_LINES, compile_pattern
from flowcore.record_path._schema import DataType, RecordSchema, infer_type
from flowcore.record_path._values import FieldValue, RecordField, describe, root_value, to_string

__all__ = ["FUNCTIONS", "first_string"]

Run = Callable[[Any, Any], Iterator[FieldValue]]
Function = Callable[[tuple[Any, ...], Any, Run], Iterator[FieldValue]]
FUNCTIONS: dict[str, Function] = {}


def _function(name: str) -> Callable[[Function], Function]:
    def register(fn: Function) -> Function:
        FUNCTIONS[name] = fn
        return fn

    return register


def first_string(arg: Any, ctx: Any, run: Run) -> str | None:
    """NiFi's ``RecordPathUtils.getFirstStringValue``: the first result's value as text."""
    first = next(run(arg, ctx), None)
    return None if first is None else to_string(first.value)


def _first_int(arg: Any, ctx: Any, run: Run) -> int | None:
    """The first result as a whole number (NiFi's ``isIntegerTypeCompatible``), else None."""
    first = next(run(arg, ctx), None)
    value = None if first is None else first.value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _same(fv: FieldValue, value: Any, type_: str | None = None) -> FieldValue:
    """*value* in *fv*'s place (same field and parent; a new type when *type_*)."""
    field = fv.field
    if type_ is not None:
        field = RecordField(field.name if field else type_, DataType(type_))
    return FieldValue(value, field, fv.parent)


def _present(values: Iterator[FieldValue]) -> Iterator[FieldValue]:
    return (fv for fv in values if fv.value is not None)


# -- strings ----------------------------------------------------------------------------------


@_function("substring")
def _substring(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        start, end = _first_int(args[1], ctx, run), _first_int(args[2], ctx, run)
        text = to_string(fv.value) or ""
        if start is None or end is None:
            yield _same(fv, "")
            continue
        end = len(text) + 1 + end if end < 0 else end
        start = len(text) + 1 + start if start < 0 else start
        if end <= start or start < 0 or start > len(text):
            yield _same(fv, "")
        else:
            yield _same(fv, text[start : min(end, len(text))])


def _cut(find: Callable[[str, str], int], after: bool) -> Function:
    def cut(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
        for fv in _present(run(args[0], ctx)):
            search = first_string(args[1], ctx, run)
            text = to_string(fv.value) or ""
            if not search:
                yield fv
                continue
            index = find(text, search)
            if index < 0:
                yield fv
            else:
                yield _same(fv, text[index + len(search) :] if after else text[:index])

    return cut


FUNCTIONS["substringAfter"] = _cut(str.find, after=True)
FUNCTIONS["substringAfterLast"] = _cut(str.rfind, after=True)
FUNCTIONS["substringBefore"] = _cut(str.find, after=False)
FUNCTIONS["substringBeforeLast"] = _cut(str.rfind, after=False)


@_function("replace")
def _replace(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        search, replacement = first_string(args[1], ctx, run), first_string(args[2], ctx, run)
        if search is None or replacement is None:
            yield fv
        else:
            yield _same(fv, (to_string(fv.value) or "").replace(search, replacement))


@_function("replaceRegex")
def _replace_regex(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        replacement = first_string(args[2], ctx, run)
        pattern = first_string(args[1], ctx, run)
        if replacement is None or pattern is None:
            yield fv
            continue
        try:
            compiled = compile_pattern(pattern, JAVA_LINES)
            yield _same(fv, compiled.sub(java_replacement(replacement), to_string(fv.value) or ""))
        except RegexTimeoutError:
            raise  # the engine's own handling: penalize, roll back, bulletin
        except ExpressionEvaluationError as exc:
            msg = f"replaceRegex: {exc}"
            raise RecordPathEvaluationError(msg) from None


@_function("replaceNull")
def _replace_null(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in run(args[0], ctx):
        if fv.value is not None:
            yield fv
            continue
        replacement = next(run(args[1], ctx), None)
        yield (
            fv if replacement is None or replacement.value is None else _same(fv, replacement.value)
        )


def _no_arg(apply: Callable[[str], str]) -> Function:
    """NiFi's ``NoArgStringFunction``: null reads as the empty string."""

    def function(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
        for fv in run(args[0], ctx):
            yield _same(fv, apply("" if fv.value is None else to_string(fv.value) or ""))

    return function


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: strips characters up to U+0020."""
    return text.strip("".join(chr(c) for c in range(33)))


FUNCTIONS["toUpperCase"] = _no_arg(str.upper)
FUNCTIONS["toLowerCase"] = _no_arg(str.lower)
FUNCTIONS["trim"] = _no_arg(_java_trim)


@_function("concat")
def _concat(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    parts = [
        "null" if fv.value is None else str(to_string(fv.value))
        for arg in args
        for fv in run(arg, ctx)
    ]
    yield FieldValue("".join(parts), RecordField("concat", DataType("string")))


@_function("join")
def _join(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    delimiter = first_string(args[0], ctx, run) or ""
    parts: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, (list, tuple)):
            for element in value:
                add(element)
        else:
            parts.append("null" if value is None else str(to_string(value)))

    for arg in args[1:]:
        for fv in run(arg, ctx):
            add(fv.value)
    yield FieldValue(delimiter.join(parts), RecordField("join", DataType("string")))


def _pad(left: bool) -> Function:
    """NiFi's ``Padding`` (commons-lang ``leftPad``/``rightPad``); the pad defaults to ``_``."""

    def pad(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
        padding = first_string(args[2], ctx, run) if len(args) > 2 else None
        padding = padding or "_"
        for fv in run(args[0], ctx):
            size = _first_int(args[1], ctx, run)
            if size is None:
                yield _same(fv, "")
                continue
            text = to_string(fv.value)
            if text is None or size <= len(text):
                yield _same(fv, text)
                continue
            fill = (padding * (size // len(padding) + 1))[: size - len(text)]
            yield _same(fv, fill + text if left else text + fill)

    return pad


FUNCTIONS["padLeft"] = _pad(left=True)
FUNCTIONS["padRight"] = _pad(left=False)


@_function("fieldName")
def _field_name(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in run(args[0], ctx):
        if fv.field is None:
            msg = (
                f"fieldName: the literal {describe(fv.value)} has no field; "
                "pass a path such as /name"
            )
            raise RecordPathEvaluationError(msg)
        yield FieldValue(fv.field_name, fv.field, fv.parent)


# -- encodings --------------------------------------------------------------------------------


def _bytes_of(value: Any) -> bytes | None:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(v & 0xFF for v in value)
    return None


def _charset(name: str | None, function: str) -> str:
    try:
        return codecs.lookup(name or "UTF-8").name
    except LookupError:
        msg = (
            f"{function}: unknown character set {quoted(name)}; "
            "use a name such as 'UTF-8' or 'ISO-8859-1'"
        )
        raise RecordPathEvaluationError(msg) from None


@_function("toString")
def _to_string(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        charset = _charset(first_string(args[1], ctx, run), "toString")
        raw = _bytes_of(fv.value)
        text = raw.decode(charset, errors="replace") if raw is not None else to_string(fv.value)
        yield _same(fv, text, "string")


@_function("toBytes")
def _to_bytes(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        charset = _charset(first_string(args[1], ctx, run), "toBytes")
        if not isinstance(fv.value, str):
            msg = f"toBytes: {fv.field_name!r} must be a string, got {describe(fv.value)}"
            raise RecordPathEvaluationError(msg)
        field = RecordField(
            fv.field_name or "toBytes", DataType("array", element_type=DataType("byte"))
        )
        yield FieldValue(fv.value.encode(charset), field, fv.parent)


@_function("base64Encode")
def _base64_encode(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        if isinstance(fv.value, str):
            yield _same(fv, base64.b64encode(fv.value.encode()).decode("ascii"))
        elif (raw := _bytes_of(fv.value)) is not None:
            yield _same(fv, base64.b64encode(raw))
        else:
            msg = "Argument supplied to base64Encode must be a String or byte[]"
            raise RecordPathEvaluationError(msg)


@_function("base64Decode")
def _base64_decode(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        try:
            if isinstance(fv.value, str):
                yield _same(
                    fv, base64.b64decode(fv.value, validate=True).decode("utf-8", errors="replace")
                )
            elif (raw := _bytes_of(fv.value)) is not None:
                yield _same(fv, base64.b64decode(raw, validate=True))
            else:
                msg = "Argument supplied to base64Decode must be a String or byte[]"
                raise RecordPathEvaluationError(msg)
        except binascii.Error as exc:
            msg = f"base64Decode: {describe(fv.value)} is not Base64 ({exc})"
            raise RecordPathEvaluationError(msg) from None


def _json_ready(value: Any, data_type: Any = None) -> Any:
    """*value* as JSON-ready data.

    A record with a schema lists every schema field in schema order, null for a missing one
    (as NiFi writes a ``Record``).
    """
    schema = getattr(data_type, "schema", None)
    if isinstance(value, Mapping) and schema is not None:
        return {n: _json_ready(value.get(n), schema.field_type(n)) for n in schema.field_names}
    if isinstance(value, Mapping):
        value_type = getattr(data_type, "value_type", None)
        return {k: _json_ready(v, value_type) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        element_type = getattr(data_type, "element_type", None)
        return [_json_ready(v, element_type) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    return value


@_function("escapeJson")
def _escape_json(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        text = json.dumps(
            _json_ready(fv.value, fv.field.type if fv.field else None),
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        yield _same(fv, text, "string")


@_function("unescapeJson")
def _unescape_json(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        if not isinstance(fv.value, str):
            msg = "Argument supplied to unescapeJson must be a String"
            raise RecordPathEvaluationError(msg)
        try:
            parsed = json.loads(fv.value)
        except json.JSONDecodeError as exc:
            msg = "Unable to deserialize JSON String into Record Path value"
            raise RecordPathEvaluationError(msg) from exc
        yield FieldValue(parsed, fv.field, fv.parent)


_DIGESTS = {
    "MD2": None, "MD5": "md5", "SHA": "sha1", "SHA-1": "sha1", "SHA-224": "sha224",
    "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512", "SHA-512/224": "sha512_224",
    "SHA-512/256": "sha512_256", "SHA3-224": "sha3_224", "SHA3-256": "sha3_256",
    "SHA3-384": "sha3_384", "SHA3-512": "sha3_512",
}  # fmt: skip


@_function("hash")
def _hash(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        algorithm = first_string(args[1], ctx, run)
        if not algorithm:
            yield fv
            continue
        name = _DIGESTS.get(algorithm.upper())
        if name is None:
            known = ", ".join(k for k, v in _DIGESTS.items() if v)
            msg = f"Invalid hash algorithm: {algorithm} not in set [{known}]"
            raise RecordPathEvaluationError(msg)
        yield _same(fv, hashlib.new(name, (to_string(fv.value) or "").encode()).hexdigest())


@_function("uuid5")
def _uuid5(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in run(args[0], ctx):
        first = next(run(args[1], ctx), None) if len(args) > 1 else None
        namespace_text = first.value if first is not None and isinstance(first.value, str) else None
        try:
            namespace = uuid.UUID(namespace_text) if namespace_text else uuid.UUID(int=0)
        except ValueError:
            msg = f"uuid5: the namespace {quoted(namespace_text)} is not a UUID"
            raise RecordPathEvaluationError(msg) from None
        name = "" if fv.value is None else str(to_string(fv.value))
        yield _same(fv, str(uuid.uuid5(namespace, name)))


# -- dates ------------------------------------------------------------------------------------


def _zone(args: tuple[Any, ...], index: int, ctx: Any, run: Run) -> str | None:
    return first_string(args[index], ctx, run) or None if len(args) > index else None


@_function("toDate")
def _to_date(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        pattern = first_string(args[1], ctx, run)
        if not isinstance(fv.value, str) or not pattern:
            yield fv
            continue
        try:
            moment = parse_date(fv.value, pattern, _zone(args, 2, ctx, run))
        except (ExpressionEvaluationError, ValueError):
            yield fv  # as NiFi: a value that does not parse stays as it is
            continue
        yield _same(fv, moment, "timestamp")


@_function("format")
def _format(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in _present(run(args[0], ctx)):
        pattern = first_string(args[1], ctx, run)
        zone = _zone(args, 2, ctx, run)
        value = fv.value
        if isinstance(value, datetime.datetime):  # naive: local time, as a java.sql.Timestamp
            moment = value if value.tzinfo else value.astimezone()
        elif isinstance(value, datetime.date):  # local midnight, as a java.sql.Date
            moment = datetime.datetime(value.year, value.month, value.day).astimezone()
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            moment = datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC)
        else:
            yield fv
            continue
        if not pattern or (len(args) > 2 and zone is None):
            yield fv
            continue
        try:
            yield _same(fv, format_date(moment, pattern, zone), "string")
        except (ExpressionEvaluationError, ValueError):
            yield fv


# -- values and collections -------------------------------------------------------------------


@_function("coalesce")
def _coalesce(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for arg in args:
        first = next(run(arg, ctx), None)
        if first is not None and first.value is not None:
            yield first
            return


@_function("count")
def _count(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    yield FieldValue(sum(1 for _ in run(args[0], ctx)), RecordField("count", DataType("long")))


@_function("arrayOf")
def _array_of(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    values = [fv.value for arg in args for fv in run(arg, ctx)]
    if values:
        yield FieldValue(values, RecordField("arrayOf", DataType("array")))


@_function("mapOf")
def _map_of(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    entries: dict[str, Any] = {}
    for key_arg, value_arg in zip(args[::2], args[1::2], strict=True):
        key, value = next(run(key_arg, ctx), None), next(run(value_arg, ctx), None)
        if key is None or value is None:
            msg = "mapOf: each key and value must select a value"
            raise RecordPathEvaluationError(msg)
        entries[str(to_string(key.value))] = str(to_string(value.value))
    yield FieldValue(entries, RecordField("mapOf", DataType("map", value_type=DataType("string"))))


@_function("recordOf")
def _record_of(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    values: dict[str, Any] = {}
    types: dict[str, DataType] = {}
    for key_arg, value_arg in zip(args[::2], args[1::2], strict=True):
        key, value = next(run(key_arg, ctx), None), next(run(value_arg, ctx), None)
        if key is None or value is None:
            msg = "recordOf: each field name and value must select a value"
            raise RecordPathEvaluationError(msg)
        name = str(to_string(key.value))
        values[name] = value.value
        field_type = value.field.type if value.field is not None else None
        types[name] = field_type if isinstance(field_type, DataType) else infer_type(value.value)
    schema = RecordSchema(types)
    yield FieldValue(values, RecordField("recordOf", DataType("record", schema=schema)))


@_function("anchored")
def _anchored(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    for fv in run(args[0], ctx):
        value = fv.value
        anchors = (
            [value]
            if isinstance(value, Mapping)
            else value
            if isinstance(value, (list, tuple))
            else []
        )
        for anchor in anchors:
            if isinstance(anchor, Mapping):
                yield from run(args[1], attrs.evolve(ctx, root=root_value(anchor), node=None))


# -- numbers ----------------------------------------------------------------------------------


_LONG = 2**64


def _wrap_long(number: int) -> int:
    """*number* as Java's 64-bit ``long`` arithmetic leaves it (overflow wraps)."""
    number %= _LONG
    return number - _LONG if number >= 2**63 else number


def _number(fv: FieldValue) -> int | float:
    """NiFi's ``MathTypeUtils.coerceNumber``.

    Numbers stay as they are (a ``float`` field at float precision), text that parses as a
    whole or decimal number becomes one, anything else is an error.
    """
    value = fv.value
    if isinstance(value, float) and fv.type_name == "float":
        return float(struct.unpack("f", struct.pack("f", value))[0])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value.strip())
            except ValueError:
                continue
    name = fv.field_name if fv.field is not None else "<Anonymous Inner Field>"
    msg = f"Cannot coerce field {name!r} to number"
    raise RecordPathEvaluationError(msg)


def _operand(args: tuple[Any, ...], index: int, ctx: Any, run: Run, name: str) -> FieldValue:
    first = next(run(args[index], ctx), None)
    if first is None:
        side = "left-hand" if index == 0 else "right-hand"
        msg = f"{name} function requires a {side} operand"
        raise RecordPathEvaluationError(msg)
    return first


def _math(name: str, operate: Callable[[Any, Any], Any]) -> Function:
    """NiFi's ``MathBinaryEvaluator`` for *name*.

    Long arithmetic when both operands are whole (wrapping as Java's ``long``), else double; a
    null operand gives no result, a missing one an error.
    """

    def apply(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
        lhs = _operand(args, 0, ctx, run, name)
        rhs = _operand(args, 1, ctx, run, name)
        if lhs.value is None or rhs.value is None:
            return
        left, right = _number(lhs), _number(rhs)
        if isinstance(left, int) and isinstance(right, int):
            result: int | float = _wrap_long(operate(left, right))
            kind = "long"
        else:
            result, kind = operate(float(left), float(right)), "double"
        yield FieldValue(result, RecordField(name, DataType(kind)))

    return apply


def _divide(left: Any, right: Any) -> Any:
    if right == 0:
        msg = "Division by zero in RecordPath divide function"
        raise RecordPathEvaluationError(msg)
    if isinstance(left, int) and isinstance(right, int):
        quotient = abs(left) // abs(right)  # Java truncates toward zero
        return quotient if (left >= 0) == (right >= 0) else -quotient
    return left / right


def _float_operation(operate: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """*operate*, with a float overflow giving an infinity as Java's double does."""

    def checked(left: Any, right: Any) -> Any:
        try:
            return operate(left, right)
        except OverflowError:
            return math.copysign(math.inf, left) * math.copysign(1.0, right)

    return checked


FUNCTIONS["add"] = _math("add", lambda a, b: a + b)
FUNCTIONS["subtract"] = _math("subtract", lambda a, b: a - b)
FUNCTIONS["multiply"] = _math("multiply", lambda a, b: a * b)
FUNCTIONS["divide"] = _math("divide", _float_operation(_divide))


@_function("toNumber")
def _to_number(args: tuple[Any, ...], ctx: Any, run: Run) -> Iterator[FieldValue]:
    fv = next(run(args[0], ctx), None)
    if fv is None:
        msg = "toNumber function requires an operand"
        raise RecordPathEvaluationError(msg)
    if fv.value is None or (isinstance(fv.value, (int, float)) and not isinstance(fv.value, bool)):
        yield fv
        return
    number = _number(fv)
    yield FieldValue(
        number, RecordField("toNumber", DataType("long" if isinstance(number, int) else "double"))
    )
