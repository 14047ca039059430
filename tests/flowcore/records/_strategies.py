"""Hypothesis strategies shared by the records tests: NiFi schemas and records that fit them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from flowcore.records.schema import (
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    ArrayType,
    DataType,
    DecimalType,
    RecordField,
    RecordSchema,
    RecordType,
)

NAMES = st.text("abcdefghij_", min_size=1, max_size=6).filter(lambda n: not n[0].isdigit())
SCALARS = st.sampled_from(
    [BOOLEAN, INT, LONG, DOUBLE, STRING, DATE, TIME, TIMESTAMP, DecimalType(9, 2)]
)


def types(depth: int = 1) -> st.SearchStrategy[DataType]:
    """Scalar types, arrays of them and (to *depth*) nested records."""
    if depth <= 0:
        return SCALARS
    return st.one_of(
        SCALARS,
        SCALARS.map(ArrayType),
        schemas(depth - 1).map(RecordType),
    )


def schemas(depth: int = 1) -> st.SearchStrategy[RecordSchema]:
    """Record schemas of 1-4 nullable fields with distinct names."""
    return st.lists(
        st.tuples(NAMES, types(depth)), min_size=1, max_size=4, unique_by=lambda p: p[0]
    ).map(lambda pairs: RecordSchema(RecordField(n, t) for n, t in pairs))


def value_of(dtype: DataType) -> st.SearchStrategy[Any]:
    """A value Arrow stores for *dtype* (None included)."""
    if isinstance(dtype, ArrayType):
        return st.one_of(st.none(), st.lists(value_of(dtype.element), max_size=3))
    if isinstance(dtype, RecordType):
        return st.one_of(st.none(), records(dtype.schema))
    inner: dict[str, st.SearchStrategy[Any]] = {
        "boolean": st.booleans(),
        "int": st.integers(-(2**31), 2**31 - 1),
        "long": st.integers(-(2**63), 2**63 - 1),
        "double": st.floats(allow_nan=False, allow_infinity=False),
        "string": st.text(max_size=8),
        "date": st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)),
        "time": st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
        "timestamp": st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)).map(
            lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)
        ),
        "decimal": st.decimals(-(10**6), 10**6, places=2).map(
            lambda d: d.quantize(Decimal("0.01"))
        ),
    }
    return st.one_of(st.none(), inner[dtype.name])


def records(schema: RecordSchema) -> st.SearchStrategy[dict[str, Any]]:
    """Records of *schema*."""
    return st.fixed_dictionaries({f.name: value_of(f.type) for f in schema.fields})
