"""RecordPath evaluation over a record: paths, predicates, comparisons and filter functions.

Each node of the syntax tree yields :class:`FieldValue` results lazily and in NiFi's order (the
schema's field order, else the mapping's). Standalone functions live in
:mod:`flowcore.record_path._functions`; this module hands them itself as the way to evaluate
their arguments.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from flowcore.errors import ExpressionEvaluationError, RecordPathEvaluationError
from flowcore.patterns import JAVA_LINES, compile_pattern
from flowcore.record_path._functions import FUNCTIONS, first_string
from flowcore.record_path._nodes import (
    CURRENT,
    PARENT,
    AllIndices,
    Child,
    Comparison,
    CurrentStep,
    Descendant,
    Expression,
    Function,
    Indices,
    Literal,
    MapKeys,
    ParentStep,
    Path,
    Predicate,
    Step,
)
from flowcore.record_path._schema import DataType, type_name
from flowcore.record_path._values import (
    FieldValue,
    RecordField,
    is_array,
    is_map,
    is_record,
    to_string,
)

__all__ = ["Context", "evaluate", "filter_values"]


@attrs.define
class Context:
    """One evaluation: the root record's FieldValue and the context node (``.``)."""

    root: FieldValue
    node: FieldValue | None = None

    @property
    def current(self) -> FieldValue:
        """The context node, or the root when none was given."""
        return self.root if self.node is None else self.node


def evaluate(node: Expression, ctx: Context) -> Iterator[FieldValue]:
    """The FieldValues *node* selects in *ctx*, in NiFi's order."""
    if isinstance(node, Path):
        return _path(node, ctx)
    if isinstance(node, Literal):
        return iter((FieldValue(node.value),))
    if isinstance(node, Comparison):
        return _booleans(node, ctx)
    if node.name in FUNCTIONS:
        return FUNCTIONS[node.name](node.args, ctx, evaluate)
    return _booleans(node, ctx)


# -- paths ------------------------------------------------------------------------------------


def _path(path: Path, ctx: Context) -> Iterator[FieldValue]:
    if path.start == CURRENT:
        values: Iterator[FieldValue] = iter((ctx.current,))
    elif path.start == PARENT:
        parent = ctx.current.parent
        values = iter(() if parent is None else (parent,))
    else:
        values = iter((ctx.root,))
    for step in path.steps:
        values = _step(step, values, ctx)
    return values


def _step(step: Step, values: Iterator[FieldValue], ctx: Context) -> Iterator[FieldValue]:
    if type(step) is Child and step.name is not None:  # the common step, without _apply
        name = step.name
        for fv in values:
            yield _child(fv, name)
        return
    for fv in values:
        yield from _apply(step, fv, ctx)


def _apply(step: Step, fv: FieldValue, ctx: Context) -> Iterator[FieldValue]:
    match step:
        case Child(None):
            yield from _children(fv)
        case Child(name):
            yield _child(fv, name)
        case Descendant(name):
            yield from _descendants(fv, name)
        case CurrentStep():
            yield fv
        case ParentStep():
            if fv.parent is not None:
                yield fv.parent
        case Indices() if is_array(fv) and fv.value is not None:
            yield from _indices(step, fv)
        case MapKeys(keys) if is_map(fv) and fv.value is not None:
            value_type = getattr(fv.field.type if fv.field else None, "value_type", None)
            for key in keys:
                field = RecordField(fv.field_name or "", value_type)
                yield FieldValue(fv.value.get(key), field, fv, key=key)
        case AllIndices() if fv.value is not None:
            if is_array(fv):
                yield from _elements(fv, range(len(fv.value)))
            elif is_map(fv):
                value_type = getattr(fv.field.type if fv.field else None, "value_type", None)
                for key, value in list(fv.value.items()):
                    yield FieldValue(
                        value, RecordField(fv.field_name or "", value_type), fv, key=key
                    )
        case Predicate(inner):
            previous = ctx.node
            ctx.node = fv
            try:
                passed = next(filter_values(inner, ctx, invert=False), None) is not None
            finally:
                ctx.node = previous
            if passed:
                yield fv


def _schema_of(fv: FieldValue) -> Any:
    return None if fv.field is None else getattr(fv.field.type, "schema", None)


def _field_names(fv: FieldValue) -> list[str]:
    schema = _schema_of(fv)
    if schema is not None:
        return list(schema.field_names)
    return list(fv.value) if isinstance(fv.value, Mapping) else []


def _field(fv: FieldValue, name: str) -> RecordField:
    schema = _schema_of(fv)
    return RecordField(name, None if schema is None else schema.field_type(name))


def _child(fv: FieldValue, name: str) -> FieldValue:
    """``/name``: always one result, its value None when the field is missing (as NiFi).

    The hot path of every record processor, so written out: a record is a field typed
    ``record``, or an untyped (or choice) field holding a mapping.
    """
    value, field = fv.value, fv.field
    data_type = None if field is None else field.type
    kind = None if data_type is None else data_type.name
    mapping = type(value) is dict or isinstance(value, Mapping)
    if kind != "record" and (kind not in (None, "choice") or not mapping):
        return FieldValue(None, RecordField(name), fv)
    schema = None if data_type is None else getattr(data_type, "schema", None)
    child = RecordField(name, None if schema is None else schema.field_type(name))
    return FieldValue(value.get(name) if mapping else None, child, fv)


def _children(fv: FieldValue) -> Iterator[FieldValue]:
    """``/*``: every child field with a value, in schema order."""
    if not is_record(fv) or not isinstance(fv.value, Mapping):
        return
    for name in _field_names(fv):
        value = fv.value.get(name)
        if value is not None:
            yield FieldValue(value, _field(fv, name), fv)


def _descendants(fv: FieldValue, name: str | None) -> Iterator[FieldValue]:
    """``//name`` and ``//*``: depth first, a field before what it holds (NiFi's order)."""
    if fv.value is None or not is_record(fv) or not isinstance(fv.value, Mapping):
        return
    for child_name in _field_names(fv):
        value = fv.value.get(child_name)
        if value is None:
            continue
        child = FieldValue(value, _field(fv, child_name), fv)
        if name is None or child_name == name:
            yield child
        if is_record(child):
            yield from _descendants(child, name)
        elif is_array(child):
            element_type = getattr(child.field.type if child.field else None, "element_type", None)
            for element in value:
                if isinstance(element, Mapping):
                    holder = FieldValue(element, RecordField(child_name, element_type), fv)
                    yield from _descendants(holder, name)
        elif type_name(child.field.type if child.field else None) == "map":
            value_type = getattr(child.field.type, "value_type", None)
            for key, entry in list(value.items()):
                yield FieldValue(
                    entry, RecordField(fv.field_name or "", value_type), child, key=key
                )


def _elements(fv: FieldValue, positions: Any) -> Iterator[FieldValue]:
    element_type = getattr(fv.field.type if fv.field else None, "element_type", None)
    for i in positions:
        yield FieldValue(fv.value[i], RecordField(fv.field_name or "", element_type), fv, index=i)


def _indices(step: Indices, fv: FieldValue) -> Iterator[FieldValue]:
    length = len(fv.value)
    if step.single:
        index = step.items[0]
        assert isinstance(index, int)
        position = length + index if index < 0 else index
        if 0 <= position < length:
            yield from _elements(fv, (position,))
        return
    for item in step.items:
        first, last = (item, item) if isinstance(item, int) else (item.first, item.last)
        if length <= abs(first):
            continue
        low = length + first if first < 0 else first
        high = length + last if last < 0 else last
        yield from _elements(fv, range(max(low, 0), min(high, length - 1) + 1))


# -- filters ----------------------------------------------------------------------------------


def filter_values(node: Expression, ctx: Context, *, invert: bool) -> Iterator[FieldValue]:
    """NiFi's ``RecordPathFilter.filter``: the values the filter keeps (or drops, inverted)."""
    if isinstance(node, Comparison):
        rhs = next((v.value for v in evaluate(node.rhs, ctx) if v.value is not None), None)
        if rhs is None:
            return
        test = _COMPARE[node.operator]
        for fv in evaluate(node.lhs, ctx):
            if test(fv.value, rhs) != invert:
                yield fv
        return
    if isinstance(node, Function) and node.name == "not":
        yield from filter_values(node.args[0], ctx, invert=not invert)
        return
    if isinstance(node, Function) and node.name in _FILTERS:
        test_fn = _FILTERS[node.name]
        for fv in evaluate(node.args[0], ctx):
            if test_fn(fv, node.args[1:], ctx) != invert:
                yield fv
        return
    msg = f"{node!r} is not a filter: use a comparison or a filter function in a predicate"
    raise RecordPathEvaluationError(msg)


def _booleans(node: Expression, ctx: Context) -> Iterator[FieldValue]:
    """NiFi's ``mapToBoolean``: a filter used as a value yields true/false per tested value."""
    if isinstance(node, Function) and node.name == "not":
        for fv in _booleans(node.args[0], ctx):
            yield FieldValue(fv.value is not True, RecordField("not()", DataType("boolean")))
        return
    if isinstance(node, Comparison):
        rhs = next((v.value for v in evaluate(node.rhs, ctx) if v.value is not None), None)
        if rhs is None:
            return
        test = _COMPARE[node.operator]
        for fv in evaluate(node.lhs, ctx):
            yield FieldValue(test(fv.value, rhs), RecordField(node.operator, DataType("boolean")))
        return
    assert isinstance(node, Function)
    test_fn = _FILTERS[node.name]
    for fv in evaluate(node.args[0], ctx):
        yield FieldValue(
            test_fn(fv, node.args[1:], ctx), RecordField("<function>", DataType("boolean"))
        )


def _is_number(value: Any) -> bool:
    """A Java ``Number``: ints, floats and decimals (booleans are not numbers in Java)."""
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def _equals(lhs: Any, rhs: Any) -> bool:
    if lhs is None:
        return rhs is None
    if _is_number(lhs) or _is_number(rhs):
        if _is_number(lhs) and _is_number(rhs):
            return lhs == rhs
        return to_string(lhs) == to_string(rhs)
    return bool(lhs == rhs)


def _not_equals(lhs: Any, rhs: Any) -> bool:
    if lhs is None:
        return False
    if _is_number(lhs) or _is_number(rhs):
        return _is_number(lhs) and _is_number(rhs) and lhs != rhs
    return bool(lhs != rhs)


def _numeric(value: Any) -> int | float | None:
    """NiFi's long- or double-compatible value as a number (strings that parse included)."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if _is_number(value):
        return value
    if isinstance(value, str) and "_" not in value:  # Python reads 1_000; Java does not
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _ordering(check: Any) -> Any:
    def test(lhs: Any, rhs: Any) -> bool:
        left, right = _numeric(lhs), _numeric(rhs)
        if left is None or right is None:
            return False
        return bool(check(left, right))

    return test


_COMPARE = {
    "=": _equals,
    "!=": _not_equals,
    "<": _ordering(lambda a, b: a < b),
    "<=": _ordering(lambda a, b: a <= b),
    ">": _ordering(lambda a, b: a > b),
    ">=": _ordering(lambda a, b: a >= b),
}


def _string_test(check: Any) -> Any:
    """NiFi's ``StringComparisonFilter``: the field and the first value of the argument as text."""

    def test(fv: FieldValue, args: tuple[Expression, ...], ctx: Context) -> bool:
        text = to_string(fv.value)
        if text is None:
            return False
        first = next(evaluate(args[0], ctx), None)
        search = None if first is None else to_string(first.value)
        return search is not None and bool(check(text, search))

    return test


def _regex_test(whole: bool) -> Any:
    def test(fv: FieldValue, args: tuple[Expression, ...], ctx: Context) -> bool:
        pattern = first_string(args[0], ctx, evaluate)
        text = to_string(fv.value)
        if pattern is None or text is None:
            return False
        try:
            compiled = compile_pattern(pattern, JAVA_LINES)
        except ExpressionEvaluationError as exc:
            msg = f"{'matchesRegex' if whole else 'containsRegex'}: {exc}"
            raise RecordPathEvaluationError(msg) from None
        found = compiled.fullmatch(text) if whole else compiled.search(text)
        return found is not None

    return test


def _blank_test(blank: bool) -> Any:
    def test(fv: FieldValue, args: tuple[Expression, ...], ctx: Context) -> bool:
        text = to_string(fv.value)
        if text is None:
            return True
        return not text.strip() if blank else text == ""

    return test


_FILTERS = {
    "contains": _string_test(lambda text, search: search in text),
    "startsWith": _string_test(str.startswith),
    "endsWith": _string_test(str.endswith),
    "containsRegex": _regex_test(whole=False),
    "matchesRegex": _regex_test(whole=True),
    "isEmpty": _blank_test(blank=False),
    "isBlank": _blank_test(blank=True),
}
