"""The expressions of a stage that are evaluated per FlowFile, as ``explain`` names them.

A processor's batch form evaluates its Expression Language over columns
(:func:`~flowcore.expression.evaluate_column`); an expression without a column form is
evaluated once per distinct input, and per FlowFile where the inputs are all different, which
costs a Python call each (``${amount:format('#,##0')}`` over a million distinct amounts). Each
such property of a stage's members gets a line under the stage, with the reason
(:func:`~flowcore.expression._columns_way.column_way`), decided from the configuration alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from flowcore.errors import ExpressionSyntaxError
from flowcore.expression import compile_expression, contains_expression
from flowcore.expression._columns_way import column_way
from flowcore.properties import ExpressionLanguageScope

if TYPE_CHECKING:
    from flowcore.compiler.plan import StagePlan
    from flowcore.processor.base import Processor

__all__ = ["expression_notes"]

#: The longest expression text a note shows; longer ones end in "...".
_SHOWN = 80


def expression_notes(plan: StagePlan) -> tuple[str, ...]:
    """One line per property of an enabled member evaluated per FlowFile, with why."""
    notes = []
    for member in plan.members:
        if member.processor is None or member.disabled:
            continue
        for label, text in _flowfile_expressions(member.processor):
            try:
                why = column_way(compile_expression(text))
            except ExpressionSyntaxError:  # an invalid flow drawn all the same: validation says
                continue
            if why is not None:
                shown = text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
                notes.append(
                    f"{member.type_name} '{member.name}': {label} = {shown} is evaluated per "
                    f"FlowFile ({why})"
                )
    return tuple(notes)


def _flowfile_expressions(processor: Processor) -> Iterator[tuple[str, str]]:
    """``(property name, value)`` of each property with Expression Language over attributes."""
    active = processor.active_values()
    for descriptor in processor.descriptors():
        text = active.get(descriptor.name)
        if descriptor.el_scope is ExpressionLanguageScope.FLOWFILE_ATTRIBUTES and (
            contains_expression(text)
        ):
            yield descriptor.display_name, text  # type: ignore[misc]  # contains: not None
    for name, text in processor.dynamic_properties.items():
        descriptor = processor.get_dynamic_property_descriptor(name)
        if (
            descriptor is not None
            and descriptor.el_scope is ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
            and contains_expression(text)
        ):
            yield name, text
