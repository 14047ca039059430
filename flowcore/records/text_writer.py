r"""NiFi's FreeFormTextRecordSetWriter as a codec: one line of text per record.

NiFi evaluates the "Text" property (Expression Language) once per record, with every field's
value as text (``Record.getAsString``: numbers as Java prints them, dates ``yyyy-MM-dd``,
times ``HH:mm:ss``, timestamps ``yyyy-MM-dd HH:mm:ss``) and, under them, the FlowFile's
attributes (a field wins over an attribute of the same name), and writes the result followed
by ``\n`` in the "Character Set".

The codec stays below the Expression Language: it takes the template as a callable that gets
that mapping and returns the text. The service binds it as::

    expression = compile_expression(context.property("Text"))   # once, at enable time
    template = lambda values: expression.evaluate(values)        # values: fields + attributes
    write_text(batches, out, template, variables=flowfile.attributes)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import IO, Any

import pyarrow as pa

from flowcore.errors import ConfigurationError
from flowcore.records import formats
from flowcore.records.schema import RecordSchema
from flowcore.records.values import batch_rows, to_text

__all__ = ["Template", "field_text", "write_text"]

#: The per-record template: field values (text or None) and variables -> the record's text.
Template = Callable[[Mapping[str, str | None]], str]


def field_text(value: Any, kind: str) -> str | None:
    """A field's value as NiFi's ``Record.getAsString`` gives it (None stays None)."""
    if value is None:
        return None
    if isinstance(value, float):
        return formats.java_float_str(value) if kind == "float" else formats.java_double_str(value)
    if isinstance(value, Decimal) and kind == "bigint":
        return str(int(value))
    if isinstance(value, dt.datetime):
        return formats.pattern(formats.DEFAULT_TIMESTAMP).format(value)
    if isinstance(value, list):
        return "[" + ", ".join("null" if v is None else to_text(v) for v in value) + "]"
    return to_text(value)


def write_text(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    template: Template,
    *,
    variables: Mapping[str, str] | None = None,
    character_set: str = "UTF-8",
) -> dict[str, str]:
    r"""Write each record of *batches* as ``template(values) + "\n"``; NiFi's attributes.

    Args:
        batches: the records.
        stream: where the text goes.
        template: the "Text" property, bound by the caller (see the module docstring).
        variables: the FlowFile's attributes (fields of the same name win over them).
        character_set: "Character Set" (NiFi's default UTF-8).
    """
    try:
        "".encode(character_set)
    except LookupError:
        msg = f"Character Set {character_set!r} is not a known encoding"
        raise ConfigurationError(msg) from None
    count = 0
    extra = dict(variables or {})
    for batch in batches:
        schema = RecordSchema.from_arrow(batch.schema)
        kinds = {f.name: f.type.name for f in schema.fields}
        out = []
        for row in batch_rows(batch):
            values: dict[str, str | None] = {n: field_text(v, kinds[n]) for n, v in row.items()}
            for field in schema.fields:
                for alias in field.aliases:
                    values.setdefault(alias, values[field.name])
            for key, value in extra.items():
                values.setdefault(key, value)
            out.append(template(values))
            out.append("\n")
            count += 1
        stream.write("".join(out).encode(character_set))
    return {"record.count": str(count), "mime.type": "text/plain"}
