"""Values to and from NiFi types: the coercion NiFi's ``DataTypeUtils.convertType`` does.

Readers turn what they parsed (JSON values, CSV text) into the Python values Arrow takes for a
field's type with :func:`coerce`; the writers read Arrow values back as Python values with
:func:`batch_rows`. A value that cannot become its field's type raises :class:`FieldError`,
which a reader turns into the one :class:`~flowcore.errors.RecordError` naming the record and
the field.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

import attrs
import pyarrow as pa

from flowcore.records import formats
from flowcore.records.schema import (
    INTEGRAL,
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    EnumType,
    MapType,
    RecordSchema,
    RecordType,
    SimpleType,
)

__all__ = [
    "JAVA_DECIMAL_PATTERN",
    "JAVA_DOUBLE_TEXT",
    "JAVA_INTEGER_PATTERN",
    "JAVA_INTEGER_TEXT",
    "JAVA_SPACE",
    "FieldError",
    "TemporalFormats",
    "batch_rows",
    "coerce",
    "coerce_record",
]

#: Java's ``Integer.parseInt``/``Long.parseLong``/``new BigInteger`` text and NiFi's
#: ``DataTypeUtils.isIntegral``: a sign, then decimal digits only (no point, exponent,
#: underscore or space). ``\d`` is a Unicode decimal digit in Python, as Java's
#: ``Character.digit``; Arrow's (RE2) ``match_substring_regex`` reads it as ``[0-9]``.
JAVA_INTEGER_PATTERN = r"[+-]?\d+"
JAVA_INTEGER_TEXT = re.compile(JAVA_INTEGER_PATTERN)

_DECIMAL_DIGITS = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: Decimal text Java's ``Double.parseDouble`` reads: a sign, digits with an optional point,
#: an optional exponent (no ``NaN``, ``Infinity``, type suffix or spaces).
JAVA_DECIMAL_PATTERN = rf"[+-]?{_DECIMAL_DIGITS}"

#: Java's ``Double.parseDouble`` text (its ``FloatingDecimal``), hexadecimal forms aside: signed
#: ``NaN``, ``Infinity`` or a decimal with an optional exponent and ``f``/``d`` suffix. Python's
#: ``float`` also takes ``1_000``, ``inf`` and ``nan``, which Java refuses.
JAVA_DOUBLE_TEXT = re.compile(rf"[+-]?(?:NaN|Infinity|{_DECIMAL_DIGITS}[fFdD]?)")

#: What Java's ``String.trim`` (and so ``parseDouble``) strips: every character up to a space.
JAVA_SPACE = "".join(map(chr, range(33)))

_RANGES = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "bigint": (-(10**38) + 1, 10**38 - 1),
}


class FieldError(ValueError):
    """A value does not fit its field's type; ``field`` names it (dotted when nested)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@attrs.frozen
class TemporalFormats:
    """NiFi's "Date Format", "Time Format" and "Timestamp Format".

    ``None`` is NiFi's defaults ``yyyy-MM-dd``, ``HH:mm:ss``, ``yyyy-MM-dd HH:mm:ss`` when
    reading, and epoch millis when writing.
    """

    date: str | None = None
    time: str | None = None
    timestamp: str | None = None


def coerce_record(
    value: Any,
    schema: RecordSchema,
    formats_: TemporalFormats,
    prefix: str = "",
    *,
    inferred: bool = False,
) -> dict[str, Any]:
    """*value* (a mapping) as a dict of *schema*'s fields, each coerced to its type.

    A missing field takes its default; extra keys are dropped (NiFi keeps them as raw fields
    that schema-aware writers do not write). *inferred*: *schema* was inferred from a sample
    of the records, see :func:`coerce`.
    """
    if not isinstance(value, Mapping):
        msg = f"expected a record (JSON object) but got {_describe(value)}"
        raise FieldError(prefix.rstrip("."), msg)
    out = {}
    for field in schema.fields:
        raw = value.get(field.name)
        if raw is None and field.name not in value:
            for alias in field.aliases:
                if alias in value:
                    raw = value[alias]
                    break
            else:
                raw = field.default
        name = prefix + field.name
        if raw is None:
            if not field.nullable:
                msg = "the field is not nullable but has no value"
                raise FieldError(name, msg)
            out[field.name] = None
            continue
        out[field.name] = coerce(raw, field.type, formats_, name, inferred=inferred)
    return out


def coerce(
    value: Any, dtype: DataType, formats_: TemporalFormats, name: str, *, inferred: bool = False
) -> Any:
    """*value* as the Python value Arrow stores for NiFi type *dtype* (None stays None).

    *inferred*: *dtype* was inferred from the first records (the reader's inference sample),
    so a value of a wider type than the sample had must be refused, not narrowed: NiFi reads
    every record before it types a field, and a JSON number ``1.5`` after ten thousand whole
    numbers makes its field a DOUBLE there. Such a field refuses any number with a fraction or
    an exponent (``1.5``, ``2.0``), where an explicit schema's INT truncates it as NiFi's
    ``DataTypeUtils.toInteger(Number)`` does.
    """
    if value is None:
        return None
    kind = dtype.name
    try:
        if kind == "string":
            if isinstance(value, (bytes, bytearray)):
                # NiFi's ObjectStringFieldConverter (convertType to STRING): a byte array's
                # UTF-8 text, an empty one Arrays.toString's "[]"
                return bytes(value).decode("utf-8", "replace") if value else "[]"
            return to_text(value)
        if kind == "uuid" and isinstance(value, (bytes, bytearray)):
            return str(uuid.UUID(bytes=bytes(value[:16])))  # NiFi's toUUID: the first 16 bytes
        if kind in ("uuid", "char"):
            if isinstance(value, (bytes, bytearray)):
                raise TypeError(value)  # NiFi's toCharacter refuses a byte array
            text = to_text(value)
            return text[:1] if kind == "char" else text
        if kind == "boolean":
            return _to_bool(value)
        if kind in INTEGRAL:
            if inferred and _fractional(value):
                raise _wider_than_inferred(name, value, dtype)
            return _to_integral(value, kind)
        if kind in ("float", "double"):
            return _to_float(value)
        if isinstance(dtype, DecimalType):
            return _to_decimal(value, dtype)
        if kind == "date":
            return _to_date(value, formats_.date)
        if kind == "time":
            return _to_time(value, formats_.time)
        if kind == "timestamp":
            return _to_timestamp(value, formats_.timestamp)
        if isinstance(dtype, EnumType):
            text = to_text(value)
            if text not in dtype.symbols:
                msg = f"{text!r} is not one of the enum's symbols {list(dtype.symbols)!r}"
                raise FieldError(name, msg)
            return text
        if isinstance(dtype, ArrayType):
            return _to_array(value, dtype, formats_, name, inferred)
        if isinstance(dtype, MapType):
            if not isinstance(value, Mapping):
                raise _mismatch(name, value, dtype)
            return [
                (str(k), coerce(v, dtype.value, formats_, f"{name}.{k}", inferred=inferred))
                for k, v in value.items()
            ]
        if isinstance(dtype, RecordType):
            return coerce_record(value, dtype.schema, formats_, name + ".", inferred=inferred)
        if isinstance(dtype, ChoiceType):
            return _to_choice(value, dtype, formats_, name, inferred)
    except FieldError:
        raise
    except (ValueError, TypeError, ArithmeticError, InvalidOperation):
        raise _mismatch(name, value, dtype) from None
    raise _mismatch(name, value, dtype)


def _mismatch(name: str, value: Any, dtype: DataType) -> FieldError:
    """NiFi's IllegalTypeConversionException message, naming the value, its class and the field.

    A nested record prints as NiFi's ``MapRecord.toString``: its serialized form, the JSON text
    its reader read (``{"a":1}``, as Jackson's ``JsonNode.toString``), which is what NiFi's
    JSON readers attach; NiFi prints ``MapRecord[{a=1}]`` only for a record without one.
    """
    text = (
        json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        if isinstance(value, Mapping)
        else to_text(value)
    )
    if len(text) > 60:
        text = text[:45] + "..."
    target = _JAVA_TARGETS.get(dtype.name, str(dtype))
    msg = f"Cannot convert value [{text}] of type {_java_class(value)} to {target} for field {name}"
    return FieldError(name, msg)


def _fractional(value: Any) -> bool:
    """Whether *value* is a number a whole-number type inferred from a sample cannot take.

    A float is one even when whole (``2.0``): NiFi's inference types a JSON ``2.0`` a DOUBLE
    (Jackson's DoubleNode), and writes every value of such a field as a DOUBLE.
    """
    if isinstance(value, float):
        return True
    return isinstance(value, Decimal) and value != value.to_integral_value()


def _wider_than_inferred(name: str, value: Any, dtype: DataType) -> FieldError:
    """The error of a value a sampled inference typed too narrow, with the way out."""
    msg = (
        f"{_mismatch(name, value, dtype)}: the field's type {dtype.name.upper()} was inferred "
        "from the records before it (the reader's inference sample), which this value does "
        "not fit; give the reader a schema or a larger inference sample"
    )
    return FieldError(name, msg)


_JAVA_TARGETS = {
    "boolean": "Boolean",
    "byte": "Byte",
    "short": "Short",
    "int": "Integer",
    "long": "Long",
    "bigint": "BigInteger",
    "float": "Float",
    "double": "Double",
    "decimal": "BigDecimal",
    "date": "Date",
    "time": "Time",
    "timestamp": "Timestamp",
}


def _java_class(value: Any) -> str:
    if isinstance(value, bool):
        return "class java.lang.Boolean"
    if isinstance(value, int):
        return "class java.lang.Integer" if -(2**31) <= value < 2**31 else "class java.lang.Long"
    if isinstance(value, float):
        return "class java.lang.Double"
    if isinstance(value, str):
        return "class java.lang.String"
    if isinstance(value, Mapping):
        # a JSON object read for a field that is not a MAP is a record (AbstractJsonRowRecordReader)
        return "class org.apache.nifi.serialization.record.MapRecord"
    if isinstance(value, (list, tuple)):
        return "class [Ljava.lang.Object;"
    return f"class {type(value).__name__}"


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:45] + "..."
    return f"{text} ({type(value).__name__})"


def to_text(value: Any) -> str:
    """NiFi's ``DataTypeUtils.toString(value, format)`` (Java's forms of numbers and booleans).

    What NiFi's CSV writers, FreeFormTextRecordSetWriter (``MapRecord.getAsString``),
    PartitionRecord's attributes and UpdateRecord's ``field.value`` write. A byte array (an
    Avro ``bytes`` value, which NiFi's ``AvroTypeUtil.normalizeValue`` makes an ``Object[]``
    of ``Byte``) is ``Arrays.toString`` of its signed bytes, ``[0, -1, 65]``, not its text:
    converting it to a STRING field is another path (:func:`coerce`).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return formats.java_double_str(value)
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, dt.datetime):
        return formats.pattern(formats.DEFAULT_TIMESTAMP).format(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S")
    if isinstance(value, (bytes, bytearray)):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, (list, tuple)):  # Java's Arrays.toString: [first, second, null]
        return "[" + ", ".join(_element_text(v) for v in value) + "]"
    return json.dumps(value, separators=(",", ":"), default=str)


def _element_text(value: Any) -> str:
    """An array element as ``Arrays.toString`` prints it.

    A nested array or record, where Java prints an identity hash, is its JSON text.
    """
    if value is None:
        return "null"
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value, separators=(",", ":"), default=str)
    return to_text(value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(value)


def _to_integral(value: Any, kind: str) -> int:
    """NiFi's ``DataTypeUtils.toInteger``/``toLong``/``toShort``/``toByte``/``toBigInt``.

    Text is Java's ``Integer.parseInt`` (``Long.parseLong``...): a whole number only, so
    ``"1.5"``, ``"1e3"``, ``"1_000"`` and ``" 1"`` are refused (NiFi's
    IllegalTypeConversion or NumberFormatException: the FlowFile goes to failure), as NiFi's
    ``isIntegral`` refuses them for a CHOICE. A number is truncated (``Number.intValue()``):
    a JSON ``1.5`` read under an INT schema is 1 in NiFi.
    """
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, str):
        if not JAVA_INTEGER_TEXT.fullmatch(value):
            msg = f"{value!r} is not a whole number"
            raise ValueError(msg)
        number = int(value)
    elif isinstance(value, float):
        number = _whole(value)
    elif isinstance(value, (int, Decimal)):
        number = int(value)
    elif isinstance(value, dt.datetime):
        number = int((value - formats.EPOCH).total_seconds() * 1000)
    else:
        raise TypeError(value)
    low, high = _RANGES[kind]
    if not low <= number <= high:
        msg = f"{number} is out of range for the type {kind.upper()}"
        raise ValueError(msg)
    return number


def _whole(value: float) -> int:
    if not math.isfinite(value):
        raise ValueError(value)
    return int(value)  # NiFi's Number.intValue()/longValue() truncate


def _to_float(value: Any) -> float:
    """NiFi's ``toDouble``/``toFloat``: text is Java's ``Double.parseDouble``'s."""
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, str):
        text = value.strip(JAVA_SPACE)
        if not JAVA_DOUBLE_TEXT.fullmatch(text):
            msg = f"{value!r} is not a number"
            raise ValueError(msg)
        return float(text.rstrip("fFdD"))
    raise TypeError(value)


def _to_decimal(value: Any, dtype: DecimalType) -> Decimal:
    """NiFi's ``toBigDecimal``, at the field's scale (Arrow's decimals have one scale).

    Digits beyond the scale are rounded HALF_UP, as NiFi's ``AvroTypeUtil`` does when it
    writes a decimal (``setScale(scale, RoundingMode.HALF_UP)``). The rounding runs under a
    context of the field's precision, not Python's default 28 digits, so a DECIMAL(38, 2)
    takes all its 38 digits (and a wider one its own) as NiFi's BigDecimal does.
    """
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, str) and "_" in value:
        raise ValueError(value)  # Python's Decimal takes 1_000, Java's BigDecimal does not
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value).strip())
    if not number.is_finite():
        raise ValueError(value)
    precision, scale = dtype.precision, dtype.scale
    too_big = f"{number} does not fit DECIMAL({precision}, {scale})"
    if number and number.adjusted() >= precision - scale:
        raise ValueError(too_big)  # more whole digits than the type has: refused before rounding
    # one digit more than the type's: a carry (99.995 -> 100.00) is then refused below
    context = Context(prec=precision + 1, rounding=ROUND_HALF_UP)
    rounded = number.quantize(Decimal(1).scaleb(-scale), context=context)
    if len(rounded.as_tuple().digits) > precision and rounded != 0:
        raise ValueError(too_big)
    return rounded


def _to_date(value: Any, pattern: str | None) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (formats.EPOCH + dt.timedelta(milliseconds=value)).date()
    if isinstance(value, str):
        parsed = _parse(value, pattern or formats.DEFAULT_DATE)
        return parsed.date()
    raise TypeError(value)


def _to_time(value: Any, pattern: str | None) -> dt.time:
    if isinstance(value, dt.datetime):
        return value.time()
    if isinstance(value, dt.time):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (formats.EPOCH + dt.timedelta(milliseconds=value)).time()
    if isinstance(value, str):
        return _parse(value, pattern or formats.DEFAULT_TIME).time()
    raise TypeError(value)


def _to_timestamp(value: Any, pattern: str | None) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) - (value.utcoffset() or dt.timedelta())
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return formats.EPOCH + dt.timedelta(milliseconds=value)
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return formats.EPOCH + dt.timedelta(milliseconds=int(text))
        return _parse(text, pattern or formats.DEFAULT_TIMESTAMP)
    raise TypeError(value)


def _parse(text: str, pattern: str) -> dt.datetime:
    parsed = formats.pattern(pattern).parse_datetime(text)
    if parsed is None:
        msg = f"{text!r} does not match the format {pattern!r}"
        raise ValueError(msg)
    return parsed


def _to_array(
    value: Any, dtype: ArrayType, formats_: TemporalFormats, name: str, inferred: bool
) -> Any:
    if dtype.element is not None and dtype.element.name == "byte":
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, list):
            return bytes(b & 0xFF for b in (_to_integral(v, "byte") for v in value))
        raise TypeError(value)
    if not isinstance(value, (list, tuple)):
        raise TypeError(value)
    element = dtype.element
    if element is None:
        return [None if v is None else to_text(v) for v in value]
    return [coerce(v, element, formats_, name, inferred=inferred) for v in value]


def _to_choice(
    value: Any, dtype: ChoiceType, formats_: TemporalFormats, name: str, inferred: bool
) -> str:
    """The JSON text of *value* as the CHOICE option NiFi's ``chooseDataType`` would pick."""
    option = choose_option(value, dtype)
    if option is None:
        msg = f"{_describe(value)} fits none of {dtype}"
        raise FieldError(name, msg)
    chosen = coerce(value, option, formats_, name, inferred=inferred)
    return json.dumps(_jsonable(chosen), separators=(",", ":"))


def choose_option(value: Any, dtype: ChoiceType) -> DataType | None:
    """The option of *dtype* that *value* takes (NiFi's ``chooseDataType``).

    The option of the value's own type first, then a wider number type, then the first option
    that accepts it. An array or record value takes the first option of its kind its elements
    or fields fit: NiFi keeps only the options a value is compatible with, so ``["x"]`` under
    CHOICE[ARRAY[INT], ARRAY[STRING]] is an ARRAY[STRING], not a failed ARRAY[INT].
    """
    own = _own_type(value)
    if own == "string":
        fitting = [option for option in dtype.options if _fits(value, option)]
        if len(fitting) > 1:
            # NiFi's findMostSuitableTypeByStringValue: the narrowest in RecordFieldType's
            # order, so "35" under CHOICE[STRING, INT] is an INT, as NiFi writes it
            fitting.sort(key=lambda option: _NIFI_ORDER.get(option.name, len(_NIFI_ORDER)))
        return fitting[0] if fitting else None
    nested = own in ("array", "record")
    for option in dtype.options:
        if option.name == own and (not nested or _fits(value, option)):
            return option
    if own in INTEGRAL or own in ("float", "double"):
        order = ("byte", "short", "int", "long", "bigint", "float", "double", "decimal")
        for wider in order[order.index(own) :]:
            for option in dtype.options:
                if option.name == wider:
                    return option
    for option in dtype.options:
        if _fits(value, option):
            return option
    return None


#: RecordFieldType's declaration order in NiFi 2, which ranks the options a string fits.
_NIFI_ORDER = {
    name: rank
    for rank, name in enumerate(
        ("boolean", "byte", "short", "int", "long", "bigint", "float", "double", "decimal",
         "timestamp", "date", "time", "char", "string", "record", "choice", "array", "map",
         "enum", "uuid")
    )
}  # fmt: skip


def _fits(value: Any, option: DataType) -> bool:
    """Whether *value* coerces to *option* (NiFi's ``isCompatibleDataType``).

    For a whole-number option that is NiFi's rule: text must be ``isIntegral`` (``"2.5"``
    fits no INT, so under CHOICE[INT, STRING] it stays the STRING ``"2.5"``), while any
    number in range fits (``isIntegerTypeCompatible(Number)``: 1.5 fits an INT).
    """
    if _record_as_string(value, option):
        return False
    try:
        coerce(value, option, TemporalFormats(), "")
    except (FieldError, ValueError, TypeError):
        return False
    return True


def _record_as_string(value: Any, option: DataType) -> bool:
    """Whether an object in *value* would meet a STRING in *option*.

    NiFi's ``isStringTypeCompatible`` refuses a Record (a JSON object read for a field that is
    not a MAP), so ``[{"quantity": 10}]`` under CHOICE[ARRAY[STRING], ARRAY[RECORD]] takes the
    array of records, not the text of the object.
    """
    if isinstance(value, Mapping):
        if option.name == "string":
            return True
        if isinstance(option, RecordType):
            return any(_record_as_string(value.get(f.name), f.type) for f in option.schema.fields)
        return False
    if isinstance(value, (list, tuple)) and isinstance(option, ArrayType) and option.element:
        return any(_record_as_string(v, option.element) for v in value)
    return False


def _own_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return (
            "int"
            if -(2**31) <= value < 2**31
            else "long"
            if -(2**63) <= value < 2**63
            else "bigint"
        )
    if isinstance(value, float):
        return "double"
    if isinstance(value, Decimal):
        return "decimal"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "record"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, dt.time):
        return "time"
    return "string"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):  # a map's (key, value) pairs
            return {k: _jsonable(v) for k, v in value}
        return [_jsonable(v) for v in value]
    if isinstance(value, Decimal):
        return float(value) if value.as_tuple().exponent < 0 else int(value)
    if isinstance(value, (dt.date, dt.time)):
        return to_text(value)
    if isinstance(value, bytes):
        return list(value)
    return value


# ---------------------------------------------------------------------------------------------
# Arrow -> Python


def batch_rows(batch: pa.RecordBatch | pa.Table) -> Iterator[dict[str, Any]]:
    """The rows of *batch* as dicts of Python values.

    CHOICE columns are decoded from their JSON text and maps are dicts: the record view the
    writers and FreeForm templates use.
    """
    schema = RecordSchema.from_arrow(batch.schema)
    decoders = [(f.name, decoder(f.type)) for f in schema.fields]
    columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
    for values in (
        zip(*columns, strict=True) if columns else iter(() for _ in range(batch.num_rows))
    ):
        yield {name: decode(v) for (name, decode), v in zip(decoders, values, strict=True)}


def _identity(value: Any) -> Any:
    return value


def decoder(dtype: DataType) -> Callable[[Any], Any]:
    if isinstance(dtype, ChoiceType):
        return lambda v: None if v is None else json.loads(v)
    if isinstance(dtype, MapType):
        inner = decoder(dtype.value)
        return lambda v: None if v is None else {k: inner(x) for k, x in v}
    if isinstance(dtype, ArrayType) and dtype.element is not None and dtype.element.name != "byte":
        inner = decoder(dtype.element)
        if inner is _identity:
            return _identity
        return lambda v: None if v is None else [inner(x) for x in v]
    if isinstance(dtype, RecordType):
        children = [(f.name, decoder(f.type)) for f in dtype.schema.fields]
        if all(d is _identity for _, d in children):
            return _identity
        return lambda v: None if v is None else {n: d(v.get(n)) for n, d in children}
    if isinstance(dtype, SimpleType | DecimalType | EnumType | ArrayType):
        return _identity
    return _identity
