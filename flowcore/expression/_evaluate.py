"""What an expression is evaluated against: a FlowFile's attributes and the names around them.

:class:`EvaluationContext` says what names resolve to. Every function of the Expression
Language takes one (:mod:`~flowcore.expression._functions`), and so does each evaluation: the
tree walk (:mod:`~flowcore.expression._walk`) and the closures
:mod:`~flowcore.expression._compile` makes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from flowcore.clock import now_ms
from flowcore.expression._values import Value

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile

__all__ = ["EvaluationContext"]

_EMPTY: Mapping[str, str] = {}


class EvaluationContext(NamedTuple):
    """What a name can resolve to while an expression is evaluated.

    Names resolve in NiFi's order: *variables* (maps supplied by the caller), the FlowFile's
    virtual properties (``fileSize``, ``entryDate`` ...), its *attributes*, then environment
    variables. A missing name is null.

    One is made per FlowFile evaluated, so it is an immutable named tuple rather than a frozen
    attrs class: made in a third of the time (0.35 against 0.8 us), which is a quarter of a
    simple expression's whole per-FlowFile evaluation.

    Attributes:
        attributes: the FlowFile attributes (or any attribute map).
        flowfile: the FlowFile, for its virtual properties; optional.
        variables: extra names that take precedence over everything else.
        state: the processor state for ``getStateValue`` (None when the processor has none).
        parameters: values for ``#{name}`` references.
        clock: returns the current time in epoch milliseconds (the harness clock in tests).
    """

    attributes: Mapping[str, str] = _EMPTY
    flowfile: FlowFile | None = None
    variables: Mapping[str, str] = _EMPTY
    state: Mapping[str, str] | None = None
    parameters: Mapping[str, str] = _EMPTY
    clock: Callable[[], int] | None = None

    def now_millis(self) -> int:
        """The current time in epoch milliseconds, from the context's clock when it has one."""
        return self.clock() if self.clock is not None else now_ms()

    def lookup(self, name: str) -> Value:
        """Resolve *name* in NiFi's lookup order; ``None`` when it is defined nowhere."""
        if name in self.variables:
            return self.variables[name]
        if self.flowfile is not None:
            virtual = _virtual_property(self.flowfile, name)
            if virtual is not None:
                return virtual
        if name in self.attributes:
            return self.attributes[name]
        return os.environ.get(name)


def _virtual_property(flowfile: FlowFile, name: str) -> str | None:
    if name == "fileSize":
        return str(flowfile.size)
    if name == "flowFileId":
        return str(flowfile.id)
    if name == "entryDate":
        return str(flowfile.entry_date)
    if name == "lineageStartDate":
        return str(flowfile.lineage_start_date)
    if name == "lastQueueDate":
        return str(flowfile.queue_date)
    if name == "queueDateIndex":
        return str(flowfile.queue_date_index)
    return None
