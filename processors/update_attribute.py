"""UpdateAttribute: set and delete FlowFile attributes with the Expression Language."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np

from flowcore.errors import ConfigurationError, ExpressionEvaluationError, ProcessException
from flowcore.expression import compile_expression, contains_expression, validate_expression
from flowcore.expression._columns import evaluate_column
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import ResultType
from flowcore.expression._regex import java_regex
from flowcore.flowfile import CORE_ATTRIBUTES
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, constant_column
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import SUCCESS, Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    ValidationResult,
)
from processors._update_rules import (
    apply_changes,
    called_functions,
    final_state,
    group_by_matches,
    match_rules,
    present_everywhere,
)

__all__ = ["Rule", "UpdateAttribute"]

DO_NOT_STORE_STATE = AllowableValue(
    "Do not store state", "Do not store state", "Do not store state"
)
STORE_STATE_LOCALLY = AllowableValue(
    "Store state locally",
    "Store state locally",
    "Keep stateful variables (dynamic properties' last values) in the processor's state",
)
DELETE_KEY = "Delete Attributes Expression"
USE_CLONE = "USE_CLONE"
USE_ORIGINAL = "USE_ORIGINAL"
REL_FAILED_SET_STATE = Relationship(
    "set state fail",
    "A FlowFile goes here when the state could not be stored (only with Store state locally)",
)
MATCHED_RULE = "UpdateAttribute.matchedRule"


@attrs.frozen
class Rule:
    """An advanced rule (NiFi's Advanced UI): when every condition is true, apply the actions.

    ``Rule(name="big", conditions=["${fileSize:gt(1000)}"], actions={"size.class": "big"})``.
    Conditions are trimmed boolean expressions; action values are expressions. An action on
    ``Delete Attributes Expression`` overrides that property for the FlowFiles of this rule.

    Attributes:
        name: the rule's name, written as ``UpdateAttribute.matchedRule``.
        conditions: boolean expressions that must all be true (AND).
        actions: attribute name -> value expression.
        comments: free text.
    """

    name: str
    conditions: tuple[str, ...] = attrs.field(
        default=(), converter=lambda cs: tuple(c.strip() for c in cs)
    )
    actions: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    comments: str = ""

    def matches(self, ctx: EvaluationContext) -> bool:
        """Whether every condition evaluates to true against *ctx*."""
        return all(compile_expression(c).boolean_in(ctx) for c in self.conditions)

    def problems(self) -> list[ValidationResult]:
        """What is wrong with this rule (NiFi validates the annotation data too)."""
        subject = f"Rule {self.name!r}" if self.name.strip() else "Rule"
        found = []
        if not self.name.strip():
            found.append(ValidationResult(subject, None, False, "a rule needs a non-blank name"))
        for condition in self.conditions:
            why = validate_expression(condition, ResultType.BOOLEAN)
            if why is None and not contains_expression(condition):
                why = "a condition must be an Expression Language boolean such as ${a:equals('b')}"
            if why:
                found.append(ValidationResult(subject, condition, False, why))
        for attribute, value in self.actions.items():
            if not attribute.strip():
                found.append(
                    ValidationResult(subject, value, False, "an action needs an attribute name")
                )
            if value is None:
                found.append(ValidationResult(subject, attribute, False, "an action needs a value"))
                continue
            why = validate_expression(value)
            if why:
                found.append(ValidationResult(subject, value, False, why))
        return found


class UpdateAttribute(Processor):
    """Updates the attributes of FlowFiles using the Expression Language (NiFi's UpdateAttribute).

    Each dynamic property sets the attribute of its name to its evaluated value. Every value is
    evaluated against the *incoming* FlowFile, never against values set in the same trigger.
    ``Delete Attributes Expression`` is a regex full-matched against the incoming attribute names;
    deletion wins over updates, and attributes added here are never deleted.

    With ``Store State`` = ``Store state locally``, each variable's latest value is kept in the
    processor's state and ``${getStateValue('name')}`` reads the state as it was at the start of
    the trigger. A FlowFile whose state cannot be stored goes to ``set state fail``.

    Provenance: as NiFi's, an ATTRIBUTES_MODIFIED event is reported for every FlowFile sent to
    ``success`` (``modifyAttributes``), its attributes changed or not; the batch form records
    them as one run (:attr:`~flowcore.session.batch_context.BatchRoute.attributes_modified`).

    Advanced rules (NiFi's Advanced UI) are given in Python::

        UpdateAttribute(rules=[Rule(name="big", conditions=["${fileSize:gt(100)}"],
                                    actions={"size": "big"})],
                        flowfile_policy="USE_CLONE")

    A rule matches when all its conditions are true; its actions override the dynamic properties
    (the defaults, which apply alone when no rule matches). Under ``USE_CLONE`` (the default) the
    first matching rule updates the incoming FlowFile and each further one a clone of it; under
    ``USE_ORIGINAL`` one FlowFile gets every matching rule's actions in order. The matching
    rule's name is written to ``UpdateAttribute.matchedRule``. Output order follows rule order
    (NiFi's is unspecified).
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
    supports_batching: ClassVar = True
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

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        flowfile_policy: str = USE_CLONE,
        **properties: object,
    ) -> None:
        super().__init__(**properties)
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.flowfile_policy = flowfile_policy
        for rule in self.rules:
            if not isinstance(rule, Rule):
                msg = f"rules must be Rule values, got {type(rule).__name__} {rule!r}"
                raise ConfigurationError(msg)

    def advanced_configuration(self) -> tuple[tuple[str, object], ...]:
        """The Advanced rules and the FlowFile Policy (NiFi's annotation data)."""
        return (("rules", self.rules), ("flowfile_policy", self.flowfile_policy))

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

    def runs_serially(self) -> bool:
        """Storing state: each FlowFile reads and writes it, so one task per stage run.

        Parallel tasks would each start from the same committed state and the commit would
        keep one task's values only (NiFi's ``replaceState`` would send the others to
        ``set state fail``; here nothing would tell).
        """
        return self._stores_state()

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
        if self.flowfile_policy not in (USE_CLONE, USE_ORIGINAL):
            problems.append(
                ValidationResult(
                    "FlowFile Policy",
                    self.flowfile_policy,
                    False,
                    f"it must be {USE_CLONE!r} or {USE_ORIGINAL!r}",
                )
            )
        for rule in self.rules:
            problems.extend(rule.problems())
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
        names = [*self.dynamic_properties, *(a for r in self.rules for a in r.actions)]
        for name in names:
            if name not in (DELETE_KEY, MATCHED_RULE):
                state.setdefault(name, initial)
        return state

    def on_scheduled(self, context: ProcessContext) -> None:
        """Give every stateful variable without state its initial value.

        An engine task cannot set state outside its output (``context.set_state`` raises
        there); its first trigger or batch then writes the initialised variables with its own
        updates, as each trigger starts from the initialised state anyway.
        """
        if not self._stores_state():
            return
        current = dict(context.get_state().values)
        initialised = self._initial_state(current)
        if initialised != current:
            try:
                context.set_state(initialised)
            except ConfigurationError:
                return

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Update one FlowFile (and its clones, one per further matching rule under USE_CLONE)."""
        incoming = session.get()
        if incoming is None:
            return
        stateful = self._stores_state()
        start_state = session.get_state() if stateful else None
        state_values = self._initial_state(start_state.values) if start_state is not None else None
        # Conditions and values are all evaluated against the incoming FlowFile and the state
        # as it was when the trigger started.
        ctx = EvaluationContext(
            attributes=incoming.attributes, flowfile=incoming, state=state_values, clock=context.now
        )
        try:
            plans = [
                (self._evaluate(ctx, actions), rule_name)
                for actions, rule_name in self._action_plans(ctx)
            ]
            deletions = [
                self._attributes_to_delete(ctx, incoming.attributes, updates.pop(DELETE_KEY, None))
                for updates, _ in plans
            ]
        except ExpressionEvaluationError as ex:
            msg = f"UpdateAttribute could not evaluate its properties for {incoming}: {ex}"
            raise ProcessException(msg, flowfile_uuid=incoming.uuid) from ex
        # Clones are taken from the incoming FlowFile before any action applies.
        targets = [incoming] + [session.clone(incoming) for _ in plans[1:]]
        outputs = []
        for target, (updates, rule_name), doomed in zip(targets, plans, deletions, strict=True):
            changes = dict(updates)
            if rule_name is not None:
                changes[MATCHED_RULE] = rule_name
            updated = session.put_all_attributes(target, changes)
            if doomed:
                updated = session.remove_all_attributes(updated, doomed)
            outputs.append(updated)
        if stateful and state_values is not None and start_state is not None:
            working = dict(state_values)
            for updates, _ in plans:
                working.update(updates)
            if working != dict(start_state.values) and not session.replace_state(
                start_state, working
            ):
                session.remove(outputs[1:])
                session.transfer(outputs[0], REL_FAILED_SET_STATE)
                return
        for output in outputs:  # NiFi reports it for each, whether or not an attribute changed
            session.provenance.modify_attributes(output)
        session.transfer(outputs, SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Update a whole batch as :meth:`on_trigger` updates each FlowFile, over columns.

        Values, conditions and Delete Attributes Expressions are evaluated against the incoming
        attributes, as one by one: once when they name only shared attributes, column-wise
        otherwise (:func:`~flowcore.expression.evaluate_column`). With advanced rules, each
        rule's conditions become a mask (:func:`~processors._update_rules.match_rules`), the
        FlowFiles are grouped by the rules they match, and each group gets the defaults with its
        matched rules' actions over them, in rule order, and ``UpdateAttribute.matchedRule`` set
        to the last one's name. A Delete Attributes Expression (the property, or a matched
        rule's action) must give a group one regex; the matching incoming attributes go, core
        ones stay, and deletion wins over updates (:meth:`_batch_deletions`).

        It declines (returns None, and the batch goes one by one) when:

        * under ``USE_CLONE`` a FlowFile matches more than one rule: its clones are new
          FlowFiles with CLONE events, which a batch form's routes cannot make (they hold each
          incoming FlowFile exactly once, attributes changed). A batch in which every FlowFile
          matches one rule at most is taken whole: then no FlowFile is cloned.
        * a group's delete expression gives its FlowFiles different regexes, or an invalid
          one, or matches a name set here that some of them lack (see :meth:`_batch_deletions`);
        * ``nextInt()`` is called with rules, or in several expressions: its values follow the
          order of evaluation, which only the one-by-one path keeps;
        * the state is stored and an expression reads it (``getStateValue``): each FlowFile
          then sees the state the previous one left, a scan that columns cannot evaluate.

        When the state is stored and no expression reads it, the state the batch leaves (each
        variable's value in the last FlowFile that set it, :func:`final_state`) is set through
        ``context.set_state`` as the last step; the engine stages it with the batch's output.
        """
        if self._declines_batches():
            return None
        stateful = self._stores_state()
        start = context.get_state() if stateful else None
        state = self._initial_state(start.values) if start is not None else None
        matched = match_rules(
            [rule.conditions for rule in self.rules], batch, clock=context.now, state=state
        )
        groups = group_by_matches(matched)
        if self.flowfile_policy == USE_CLONE and any(len(g.rules) > 1 for g in groups):
            return None
        updates: list[dict[str, Column]] = []
        changes: list[dict[str, Column | None]] = []
        for group in groups:
            actions, rule_name = self._merged_actions([self.rules[i] for i in group.rules])
            found = self._group_changes(context, group.part(batch), actions, rule_name, state)
            if found is None:
                return None
            updates.append(found[0])
            changes.append(found[1])
        changed = apply_changes(batch, groups, changes)
        if state is not None and start is not None:
            left = final_state(state, groups, updates, batch.count)
            if left != dict(start.values):
                context.set_state(left)  # last: nothing may decline after it
        return [BatchRoute(SUCCESS.name, None, changed, attributes_modified=True)]

    def _declines_batches(self) -> bool:
        """Whether the configuration has what the batch form cannot do over columns."""
        texts = [*self.dynamic_properties.values()]
        delete = self.effective_value(self.DELETE_ATTRIBUTES)
        if delete:
            texts.append(delete)
        for rule in self.rules:
            texts.extend(rule.conditions)
            texts.extend(rule.actions.values())
        called = called_functions(texts)
        if called["nextInt"] and (self.rules or called["nextInt"] > 1):
            return True
        return self._stores_state() and bool(called["getStateValue"])

    def _group_changes(
        self,
        context: ProcessContext,
        part: FlowFileBatch,
        actions: Mapping[str, str],
        rule_name: str | None,
        state: Mapping[str, str] | None,
    ) -> tuple[dict[str, Column], dict[str, Column | None]] | None:
        """What *actions* do to the FlowFiles of *part*; None when the batch form declines.

        Returns:
            The evaluated actions (the state's updates) and the attribute changes (a column
            of values, or None: removed).
        """
        pending = dict(actions)
        delete = pending.pop(DELETE_KEY, None)
        if delete is None:
            delete = self.effective_value(self.DELETE_ATTRIBUTES)
        updates = {
            name: evaluate_column(compile_expression(text), part, clock=context.now, state=state)
            for name, text in pending.items()
        }
        changes: dict[str, Column | None] = {n: c for n, c in updates.items() if n != "uuid"}
        if rule_name is not None:
            changes[MATCHED_RULE] = constant_column(rule_name, part.count)
        if delete:
            doomed = self._batch_deletions(context, part, delete, set(changes), state)
            if doomed is None:
                return None
            changes.update(dict.fromkeys(doomed))  # deletion wins over updates
        return updates, changes

    def _batch_deletions(
        self,
        context: ProcessContext,
        batch: FlowFileBatch,
        text: str,
        set_here: set[str],
        state: Mapping[str, str] | None = None,
    ) -> list[str] | None:
        """The incoming attributes a Delete Attributes Expression removes from a whole batch.

        None (the per-FlowFile path decides) when the expression gives the FlowFiles different
        regexes, or an invalid one, or when a matched name is also set here (*set_here*) while
        some FlowFiles lack it: those keep the new value one by one (only incoming names go).
        """
        codes, values = evaluate_column(
            compile_expression(text), batch, clock=context.now, state=state
        ).encoded()
        used = np.unique(codes)
        if len(used) != 1:
            return None
        pattern_text = values[int(used[0])]
        if not pattern_text:
            return []
        try:
            pattern = java_regex(pattern_text)
        except ExpressionEvaluationError:
            return None
        names = dict.fromkeys([*batch.attributes, *batch.columns, *batch.uuid_named])
        doomed = [n for n in names if n not in CORE_ATTRIBUTES and pattern.fullmatch(n)]
        for name in set(doomed) & set_here:
            column = batch.column(name)
            if column is not None and not present_everywhere(column):
                return None
        return doomed

    def _merged_actions(self, matched: Sequence[Rule]) -> tuple[dict[str, str], str | None]:
        """What one output FlowFile gets: the actions and the matched rule's name.

        The defaults with each of *matched*'s actions over them in turn, and the last one's
        name (None when no rule matched).
        """
        actions = dict(self.dynamic_properties)
        for rule in matched:
            actions.update(rule.actions)
        return actions, (matched[-1].name if matched else None)

    def _action_plans(self, ctx: EvaluationContext) -> list[tuple[dict[str, str], str | None]]:
        """The actions for each output FlowFile, with the name of the rule that produced it."""
        matched = [rule for rule in self.rules if rule.matches(ctx)]
        if self.flowfile_policy == USE_ORIGINAL or len(matched) < 2:
            return [self._merged_actions(matched)]
        return [self._merged_actions([rule]) for rule in matched]

    @staticmethod
    def _evaluate(ctx: EvaluationContext, actions: Mapping[str, str]) -> dict[str, str]:
        evaluated = {}
        for name, text in actions.items():
            if name == DELETE_KEY:
                evaluated[name] = text  # evaluated by _attributes_to_delete
            else:
                evaluated[name] = compile_expression(text).evaluate_in(ctx)
        return evaluated

    def _attributes_to_delete(
        self, ctx: EvaluationContext, incoming: Mapping[str, str], override: str | None = None
    ) -> list[str]:
        text = override if override is not None else self.effective_value(self.DELETE_ATTRIBUTES)
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
