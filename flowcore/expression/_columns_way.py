"""Whether an expression has a column form, decided from its text alone (what ``explain`` says).

Over a batch whose attributes differ from FlowFile to FlowFile, an expression is evaluated in
whole-column passes when every chain in it is one the column ways compute (numpy for whole
numbers, the string pipeline, typed chains: :mod:`~flowcore.expression._columns`); otherwise
once per distinct combination of its attributes' values where they repeat, and per FlowFile
where they do not, which costs some microseconds each. :func:`column_way` says which, and why,
without any data: ``flowcore explain`` names each processor's expressions that have no
column form, so a user sees before a run which ones will cost a Python call per FlowFile.

Some data still make a column way step aside for one batch (an absent attribute before a
string function, ``divide(0)``, a string over the length limit); they are errors or rare, and
the values are the same either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.expression._columns_text import TEXT_STEPS
from flowcore.expression._columns_typed import BOOLEAN_STEPS, NUMBER_STEPS
from flowcore.expression._nodes import AttributeRef, Call, Chain, Literal, walk

if TYPE_CHECKING:
    from flowcore.expression._compile import Compiled

__all__ = ["ALL_ATTRIBUTES", "VOLATILE", "column_way"]

#: Functions whose result changes from one call to the next: never evaluated once for many.
VOLATILE = frozenset({"now", "UUID", "nextInt", "random", "thread", "math"})
#: Functions that read every attribute (``allAttributes`` ...): each FlowFile's own map.
ALL_ATTRIBUTES = frozenset(
    {
        "allAttributes",
        "anyAttribute",
        "allMatchingAttributes",
        "anyMatchingAttribute",
        "allDelineatedValues",
        "anyDelineatedValue",
    }
)


def column_way(expression: Compiled) -> str | None:
    """Why *expression* is evaluated per FlowFile over distinct values, or None if it is not.

    None: it reads no attribute (evaluated once per batch), or each of its chains has a column
    form. Otherwise the reason names the first function that has none, e.g. ``"format() has
    no column form"``.
    """
    parts = [part for part in expression.template.parts if isinstance(part, Chain)]
    reads = False
    for part in parts:
        for node in walk(part):
            if isinstance(node, Call) and node.name in VOLATILE:
                return f"{node.name}() changes from one call to the next"
            if isinstance(node, Call) and node.name in ALL_ATTRIBUTES:
                return f"{node.name}() reads each FlowFile's attributes by name"
            reads = reads or isinstance(node, AttributeRef)
    if not reads:
        return None
    for part in parts:
        why = _chain_way(part)
        if why is not None:
            return why
    return None


def _chain_way(chain: Chain) -> str | None:
    """Why *chain* has no column form, or None."""
    subject = chain.subject
    if not isinstance(subject, AttributeRef):
        name = f"{subject.name}()" if isinstance(subject, Call) else "an expression"
        return f"{name} as a subject has no column form"
    kind = "text"
    for call in chain.calls:
        kind, why = _call_way(call, kind)
        if why is not None:
            return why
    return None


def _call_way(call: Call, kind: str) -> tuple[str, str | None]:
    """What *call* makes of a value of *kind* (text, number or boolean), or why it cannot."""
    name = call.name
    if name in ("and", "or"):
        (argument,) = call.args
        if isinstance(argument, Literal):
            return "boolean", None
        if isinstance(argument, Chain):
            return "boolean", _chain_way(argument)
        return kind, f"{name}() of a function call has no column form"
    if not all(isinstance(arg, Literal) for arg in call.args):
        return kind, f"{name}() with an expression argument has no column form"
    if name in NUMBER_STEPS:
        return "number", None
    if name in BOOLEAN_STEPS:
        return "boolean", None
    step = TEXT_STEPS.get(name)
    if step is None:
        return kind, f"{name}() has no column form"
    if kind != "text":
        return kind, f"{name}() of a {kind} has no column form"
    if step.make(*(arg.value for arg in call.args)) is None:  # type: ignore[union-attr]
        return kind, f"{name}() with these arguments has no column form"
    return step.kind, None
