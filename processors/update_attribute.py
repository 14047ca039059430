"""UpdateAttribute: set and delete FlowFile attributes with the Expression Language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore import (
    AllowableValue,
    ExpressionLanguageScope,
    ProcessContext,
    ProcessException,
    Processor,
    ProcessSession,
    PropertyDescriptor,
    Relationship,
    ValidationResult,
)
from flowcore.errors import ExpressionEvaluationError
from flowcore.expression import EvaluationContext, compile_expression
from flowcore.expression._functions import java_regex
from flowcore.relationship import SUCCESS
from flowcore.validators import (
    ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
)

__all__ = ["UpdateAttribute"]

DO_NOT_STORE_STATE = AllowableValue(
    "Do not store state", "Do not store state", "Do not store state"
)
STORE_STATE_LOCALLY = AllowableValue(
    "Store state locally",
    "Store state locally",
    "Keep stateful variables (dynamic properties' last values) in the processor's state",
)
REL_FAILED_SET_STATE = Relationship(
    "set state fail",
    "A FlowFile goes here when the state could not be stored (only with Store state locally)",
)
MATCHED_RULE = "UpdateAttribute.matchedRule"


class UpdateAttribute(Processor):
    """Updates the attributes of FlowFiles using the Expression Language (NiFi's UpdateAttribute).

    Each dynamic property sets the attribute of its name to its evaluated value. Every value is
    evaluated against the *incoming* FlowFile, never against values set in the same trigger.
    ``Delete Attributes Expression`` is a regex full-matched against the incoming attribute names;
    deletion wins over updates, and attributes added here are never deleted.

    With ``Store State`` = ``Store state locally``, each variable's latest value is kept in the
    processor's state and ``${getStateValue('name')}`` reads the state as it was at the start of
    the trigger. A FlowFile whose state cannot be stored goes to ``set state fail``.
    """

    DELETE_ATTRIBUTES = PropertyDescriptor(
        "Delete Attributes Expression",
        description="Regular expression for attribute names to delete from FlowFiles; "
        "full-matched against each incoming attribute name",
        required=False,
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    STORE_STATE = PropertyDescriptor(
        "Store State",
        description="Select whether or not state will be stored",
        required=True,
        default=DO_NOT_STORE_STATE.value,
        allowable_values=(DO_NOT_STORE_STATE, STORE_STATE_LOCALLY),
    )
    STATEFUL_VARIABLES_INIT_VALUE = PropertyDescriptor(
        "Stateful Variables Initial Value",
        description="Initial value of every stateful variable without state yet; required when "
        "storing state (may be empty)",
        required=False,
    )
    CANONICAL_VALUE_LOOKUP_CACHE_SIZE = PropertyDescriptor(
        "Cache Value Lookup Cache Size",
        description="Size of the internal string cache; does not change behaviour",
        required=True,
        default="100",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        aliases=("canonical-value-lookup-cache-size",),
    )
    property_descriptors: ClassVar = (
        DELETE_ATTRIBUTES,
        STORE_STATE,
        STATEFUL_VARIABLES_INIT_VALUE,
        CANONICAL_VALUE_LOOKUP_CACHE_SIZE,
    )
    relationships: ClassVar = (SUCCESS,)
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "attributes",
        "modification",
        "update",
        "delete",
        "Attribute Expression Language",
        "state",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "See additional details": "This processor may write or remove zero or more attributes",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """An attribute to set: the name is the attribute, the value EL (empty allowed)."""
        return PropertyDescriptor(
            name,
            description=f"Sets attribute {name!r} to the evaluated value",
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def _stores_state(self) -> bool:
        return self.effective_value(self.STORE_STATE) == STORE_STATE_LOCALLY.value

    def get_relationships(self) -> tuple[Relationship, ...]:
        """``success``, plus ``set state fail`` when storing state."""
        if self._stores_state():
            return (SUCCESS, REL_FAILED_SET_STATE)
        return (SUCCESS,)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Dynamic property names must be attribute keys; storing state needs an initial value."""
        problems = []
        for name in self.dynamic_properties:
            result = ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR(name, name)
            if not result.valid:
                problems.append(result)
        if self._stores_state() and values.get(self.STATEFUL_VARIABLES_INIT_VALUE.name) is None:
            problems.append(
                ValidationResult(
                    self.STATEFUL_VARIABLES_INIT_VALUE.display_name,
                    None,
                    False,
                    "Stateful Variables Initial Value is required when Store State is "
                    f"'{STORE_STATE_LOCALLY.value}'",
                )
            )
        return problems

    def _initial_state(self, current: Mapping[str, str]) -> dict[str, str]:
        initial = self.effective_value(self.STATEFUL_VARIABLES_INIT_VALUE) or ""
        state = dict(current)
        for name in self.dynamic_properties:
            state.setdefault(name, initial)
        return state

    def on_scheduled(self, context: ProcessContext) -> None:
        """Give every stateful variable without state its initial value."""
        if not self._stores_state():
            return
        current = dict(context.get_state().values)
        initialised = self._initial_state(current)
        if initialised != current:
            context.set_state(initialised)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Update one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        stateful = self._stores_state()
        start_state = session.get_state() if stateful else None
        state_values = self._initial_state(start_state.values) if start_state is not None else None
        ctx = EvaluationContext(
            attributes=flowfile.attributes,
            flowfile=flowfile,
            state=state_values,
            clock=context.now,
        )
        try:
            updates = {
                name: compile_expression(text).evaluate_in(ctx)
                for name, text in self.dynamic_properties.items()
            }
            doomed = self._attributes_to_delete(ctx, flowfile.attributes)
        except ExpressionEvaluationError as ex:
            msg = f"UpdateAttribute could not evaluate its properties for {flowfile}: {ex}"
            raise ProcessException(msg, flowfile_uuid=flowfile.uuid) from ex
        flowfile = session.put_all_attributes(flowfile, updates)
        if doomed:
            flowfile = session.remove_all_attributes(flowfile, doomed)
        if stateful and state_values is not None and start_state is not None:
            working = {**state_values, **updates}
            if working != dict(start_state.values) and not session.replace_state(
                start_state, working
            ):
                session.transfer(flowfile, REL_FAILED_SET_STATE)
                return
        session.transfer(flowfile, SUCCESS)

    def _attributes_to_delete(
        self, ctx: EvaluationContext, incoming: Mapping[str, str]
    ) -> list[str]:
        text = self.effective_value(self.DELETE_ATTRIBUTES)
        if not text:
            return []
        pattern_text = compile_expression(text).evaluate_in(ctx)
        if not pattern_text:
            return []
        try:
            pattern = java_regex(pattern_text)
        except ExpressionEvaluationError as ex:
            msg = f"Delete Attributes Expression evaluated to an invalid regex: {ex}"
            raise ProcessException(msg) from ex
        return [name for name in incoming if pattern.fullmatch(name)]
