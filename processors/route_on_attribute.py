"""RouteOnAttribute: route FlowFiles by boolean Expression Language conditions on attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_boolean_column
from flowcore.expression._nodes import ResultType
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR

__all__ = ["RouteOnAttribute"]

ROUTE_PROPERTY_NAME = AllowableValue(
    "Route to Property name",
    "Route to Property name",
    "A copy of the FlowFile goes to each relationship whose condition is true",
)
ROUTE_ALL_MATCH = AllowableValue(
    "Route to 'matched' if all match",
    "Route to 'matched' if all match",
    "Requires that all user-defined conditions are true for the FlowFile to be 'matched'",
)
ROUTE_ANY_MATCHES = AllowableValue(
    "Route to 'matched' if any matches",
    "Route to 'matched' if any matches",
    "Requires that at least one user-defined condition is true for the FlowFile to be 'matched'",
)

REL_MATCH = Relationship(
    "matched", "FlowFiles that match the conditions, for the 'matched' strategies"
)
REL_NO_MATCH = Relationship("unmatched", "FlowFiles that match no condition")
REL_DYNAMIC = Relationship(
    "<one per dynamic property>",
    "Named after its dynamic property, for Route to Property name: FlowFiles for which that "
    "property's condition is true",
)
ROUTE_ATTRIBUTE = "RouteOnAttribute.Route"


class RouteOnAttribute(Processor):
    """Routes FlowFiles by boolean expressions over their attributes (NiFi's RouteOnAttribute).

    Each dynamic property is a condition such as ``${status:startsWith('5')}``. With
    ``Route to Property name`` each property is a relationship of the same name and a FlowFile
    goes (cloned as needed) to every relationship whose condition is true, else ``unmatched``.
    The other strategies route to ``matched`` or ``unmatched``. Each routed FlowFile gets
    ``RouteOnAttribute.Route`` and a ROUTE provenance event. A condition that cannot be
    evaluated (a regular expression past ``regex_time_limit``, a bad date) raises its error,
    naming the condition: the FlowFile stays queued, penalized, with a bulletin.
    """

    ROUTING_STRATEGY = PropertyDescriptor(
        "Routing Strategy",
        description="Specifies how to determine which relationship to use when evaluating the "
        "Expression Language",
        required=True,
        default=ROUTE_PROPERTY_NAME.value,
        allowable_values=(ROUTE_PROPERTY_NAME, ROUTE_ALL_MATCH, ROUTE_ANY_MATCHES),
    )
    property_descriptors: ClassVar = (ROUTING_STRATEGY,)
    # What the usage page lists; get_relationships gives those of the configured strategy.
    relationships: ClassVar = (REL_MATCH, REL_NO_MATCH)
    dynamic_relationship: ClassVar = REL_DYNAMIC
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("attributes", "routing", "Attribute Expression Language", "regexp", "find")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        ROUTE_ATTRIBUTE: "The relationship the FlowFile was routed to"
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A condition: Expression Language that must return a boolean."""
        return PropertyDescriptor(
            name,
            description="Routes FlowFiles whose attributes make this expression true",
            required=False,
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            validators=(NON_EMPTY_VALIDATOR,),
            expected_type=ResultType.BOOLEAN,
            dynamic=True,
        )

    def _strategy(self) -> str:
        return self.effective_value(self.ROUTING_STRATEGY) or ROUTE_PROPERTY_NAME.value

    def get_relationships(self) -> tuple[Relationship, ...]:
        """One relationship per condition (Route to Property name), else matched/unmatched."""
        if self._strategy() == ROUTE_PROPERTY_NAME.value:
            names = tuple(
                Relationship(n, f"FlowFiles for which {n!r} is true")
                for n in self.dynamic_properties
            )
            return (*names, REL_NO_MATCH)
        return (REL_MATCH, REL_NO_MATCH)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Route a whole batch by masks: each condition evaluated over columns.

        Each FlowFile goes where :meth:`on_trigger` sends it, with its ``RouteOnAttribute.Route``
        attribute and a ROUTE event. A FlowFile matching several properties under Route to
        Property name would be cloned: such a batch is left to the per-FlowFile path.
        """
        conditions = self.dynamic_properties
        masks = [
            evaluate_boolean_column(compile_expression(text), batch, clock=context.now)
            for text in conditions.values()
        ]
        matches = np.sum(masks, axis=0) if masks else np.zeros(batch.count, dtype=np.int64)
        strategy = self._strategy()
        if strategy == ROUTE_ALL_MATCH.value:
            parts = [(REL_MATCH.name, matches == len(conditions))]
        elif strategy == ROUTE_ANY_MATCHES.value:
            parts = [(REL_MATCH.name, matches > 0)]
        else:
            if np.any(matches > 1):
                return None
            parts = list(zip(conditions, masks, strict=True))
        taken = np.zeros(batch.count, dtype=bool)
        for _, mask in parts:
            taken |= mask
        parts.append((REL_NO_MATCH.name, ~taken))
        routes = []
        for name, mask in parts:
            rows = np.flatnonzero(mask)
            if len(rows):
                routed = batch.take(rows).with_attributes({ROUTE_ATTRIBUTE: name})
                routes.append(BatchRoute(name, rows, routed, reported=True))
        return routes

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Route one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        conditions = self.dynamic_properties
        matching = []
        for name, text in conditions.items():
            try:
                matched = compile_expression(text).evaluate_boolean(flowfile, clock=context.now)
            except ExpressionEvaluationError as ex:
                # No failure relationship in NiFi either: the engine returns the FlowFile to
                # its queue, penalized, with a bulletin carrying this message.
                ex.args = (f"could not evaluate {name!r} for {flowfile}: {ex}", *ex.args[1:])
                raise
            if matched:
                matching.append(name)
        strategy = self._strategy()
        if strategy == ROUTE_ALL_MATCH.value:
            destinations = [
                REL_MATCH.name if len(matching) == len(conditions) else REL_NO_MATCH.name
            ]
        elif strategy == ROUTE_ANY_MATCHES.value:
            destinations = [REL_MATCH.name if matching else REL_NO_MATCH.name]
        else:
            destinations = matching or [REL_NO_MATCH.name]
        first, *others = destinations
        for name in others:
            clone = session.clone(flowfile)
            clone = session.put_attribute(clone, ROUTE_ATTRIBUTE, name)
            session.provenance.route(clone, name)
            session.transfer(clone, name)
        flowfile = session.put_attribute(flowfile, ROUTE_ATTRIBUTE, first)
        session.provenance.route(flowfile, first)
        session.transfer(flowfile, first)
