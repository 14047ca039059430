"""Tests for the Processor API: configuration, validation, parameters, picklability."""

from __future__ import annotations

import pickle
from collections.abc import Mapping

import pytest

from flowcore import (
    Processor,
    PropertyDescriptor,
    Relationship,
    ValidationResult,
)
from flowcore.errors import ConfigurationError
from flowcore.parameters import Parameter, SensitiveText
from flowcore.processor import InputRequirement, ProcessorKind
from flowcore.processor.kinds import SourceProcessor
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR
from processors import BUILTIN_PROCESSORS
from processors.update_attribute import Rule, UpdateAttribute


class Configurable(Processor):
    """Has two properties and a cross-property rule."""

    COUNT = PropertyDescriptor(
        "Line Split Count", required=True, validators=POSITIVE_INTEGER_VALIDATOR
    )
    AGE = PropertyDescriptor("Max Bin Age", validators=TIME_PERIOD_VALIDATOR)
    property_descriptors = (COUNT, AGE)
    relationships = (SUCCESS,)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        if values["Line Split Count"] == "13":
            return [ValidationResult("Line Split Count", "13", False, "13 is unlucky")]
        return []


def test_three_spellings_configure_the_same_property() -> None:
    """Display name, internal name and snake_case keyword set the same property."""
    by_keyword = Configurable(line_split_count=1, max_bin_age=60)
    by_name = Configurable(**{"Line Split Count": "1", "Max Bin Age": "60 secs"})
    assert by_keyword.same_configuration(by_name)
    assert by_keyword.configured == {"Line Split Count": "1", "Max Bin Age": "60 secs"}
    assert repr(by_keyword) == "Configurable(line_split_count='1', max_bin_age='60 secs')"


def test_every_problem_is_reported_at_once() -> None:
    """validate() lists unknown properties (with a suggestion), missing and bad values together."""
    problems = Configurable(line_split_cout=1, max_bin_age="soon").validate()
    texts = [str(p) for p in problems]
    assert len(problems) == 3
    assert any("did you mean 'Line Split Count' (line_split_count)" in t for t in texts)
    assert any("Line Split Count is required" in t for t in texts)
    assert any("'Max Bin Age' validated against 'soon'" in t for t in texts)
    assert [str(p) for p in Configurable(line_split_count=13).validate()] == [
        "'Line Split Count' validated against '13' is invalid because 13 is unlucky"
    ]


def test_remove_property_restores_default() -> None:
    """Removing a property makes its default apply again; None removes too."""
    processor = Configurable(line_split_count=1)
    assert processor.remove_property("line_split_count")
    assert processor.effective_value(Configurable.COUNT) is None
    processor.set_property("Line Split Count", 5)
    processor.set_property("Line Split Count", None)
    assert not processor.remove_property("Line Split Count")


def test_context_rejects_unknown_property_names() -> None:
    """Asking the context for a property the processor lacks names it and suggests one."""
    runner = TestRunner(Configurable(line_split_count=1))
    with pytest.raises(ConfigurationError, match="did you mean"):
        runner.context.get_property("Line Split Cont")


@pytest.mark.parametrize("name", sorted(BUILTIN_PROCESSORS))
def test_builtin_processors_are_picklable(name: str) -> None:
    """Every built-in processor, configured, survives pickling (Spark ships processors)."""
    processor = BUILTIN_PROCESSORS[name](**{"my.attribute": "${filename:toUpper():equals('X')}"})
    copy = pickle.loads(pickle.dumps(processor))
    assert copy.same_configuration(processor)
    assert copy.validate() == processor.validate()


def test_relationship_equality_is_by_name() -> None:
    """Relationships compare by name only, as NiFi matches them."""
    assert Relationship("success", "a description") == SUCCESS


def test_capabilities_are_settled_when_a_class_is_made() -> None:
    """Capabilities follow the class's own methods: a subclass overriding what a batch hook
    stands in for loses batch binning, one taking over its sessions loses run batching."""
    from processors import MergeContent, UpdateAttribute

    assert MergeContent.capabilities.bins_batches
    assert MergeContent.capabilities.merges_apart
    assert UpdateAttribute.capabilities.run_batching
    assert not Processor.capabilities.run_batching

    class OwnMerge(MergeContent):
        def merge_bin(self, context, session, bin_):  # type: ignore[no-untyped-def]
            super().merge_bin(context, session, bin_)

    class OwnSessions(UpdateAttribute):
        def on_trigger_sessions(self, context, session_factory):  # type: ignore[no-untyped-def]
            super().on_trigger_sessions(context, session_factory)

    assert not OwnMerge.capabilities.bins_batches
    assert OwnMerge.capabilities.merges_apart
    assert not OwnSessions.capabilities.run_batching


class Secretive(Processor):
    """Has a sensitive property and an ordinary one that takes Expression Language."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    GREETING = PropertyDescriptor("Greeting", el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES)
    property_descriptors = (PASSWORD, GREETING)
    relationships = (SUCCESS,)


def _secret() -> SensitiveText:
    return SensitiveText("hunter2", Parameter("pw", "hunter2", sensitive=True))


class SecretiveDynamic(Secretive):
    """Secretive whose ``SENSITIVE.`` dynamic properties are secrets too."""

    supports_dynamic_properties = True

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        return PropertyDescriptor(name, sensitive=name.startswith("SENSITIVE."), dynamic=True)


def test_sensitive_values_cover_declared_dynamic_and_parameter_secrets() -> None:
    """What messages are redacted with: sensitive properties written or read from parameters,
    declared or dynamic, and sensitive parameters bound; ordinary values are not secrets."""
    processor = SecretiveDynamic(
        password="pw-1", greeting="hello", **{"SENSITIVE.token": "#{pw}", "plain": "open"}
    )
    processor.bind_parameters({"pw": _secret()})
    assert sorted(processor.sensitive_values()) == ["hunter2", "hunter2", "pw-1"]


def test_parameters_are_substituted_when_values_are_read() -> None:
    """Bound values replace references in every reading path; validators see the values."""
    processor = Configurable(line_split_count="#{n}", max_bin_age="#{age} sec")
    processor.bind_parameters({"n": "3", "age": "5"})
    assert processor.effective_value(Configurable.COUNT) == "3"
    assert processor.configured == {"Line Split Count": "3", "Max Bin Age": "5 sec"}
    assert processor.validate() == ()
    processor.bind_parameters({"n": "x", "age": "5"})
    assert "'x'" in str(processor.validate()[0])
    assert repr(processor) == "Configurable(line_split_count='#{n}', max_bin_age='#{age} sec')"


def test_undefined_parameters_are_problems_naming_property_and_parameter() -> None:
    """A reference to an undefined name is one problem, and the property's validators wait."""
    problems = Configurable(line_split_count="#{count}").validate()
    assert len(problems) == 1
    assert problems[0].subject == "Line Split Count"
    assert "parameter 'count', which is not defined" in problems[0].explanation
    assert "not a valid parameter reference" in str(
        Configurable(line_split_count="#{a/b}").validate()
    )


def test_sensitive_parameters_follow_nifis_rules() -> None:
    """Sensitive parameters only in sensitive properties, alone; sensitive properties only them."""
    values = {"pw": _secret(), "plain": "p"}
    wrong_way = Secretive(greeting="#{pw}")
    wrong_way.bind_parameters(values)
    assert "only a sensitive property" in str(wrong_way.validate())
    not_sensitive = Secretive(password="#{plain}")
    not_sensitive.bind_parameters(values)
    assert "which is not sensitive" in str(not_sensitive.validate())
    around = Secretive(password="x#{pw}")
    around.bind_parameters(values)
    assert "nothing else" in str(around.validate())
    right = Secretive(password="#{pw}", greeting="hi ${name} #{plain}")
    right.bind_parameters(values)
    assert right.validate() == ()
    assert isinstance(right.effective_value(Secretive.PASSWORD), SensitiveText)
    assert "hunter2" not in repr(right) + repr(Secretive(password="hunter2"))


def test_with_parameters_copies_only_processors_that_reference_them() -> None:
    """with_parameters returns the processor itself without references, else a bound copy."""
    plain = Configurable(line_split_count="1")
    assert plain.with_parameters({"n": "2"}) is plain
    configured = Secretive(password="#{pw}")
    bound = configured.with_parameters({"pw": _secret()})
    assert bound is not configured
    assert configured.effective_value(Secretive.PASSWORD) == ""
    assert bound.effective_value(Secretive.PASSWORD) == "hunter2"
    assert bound.referenced_parameters() == {"Password": ("pw",)}
    bound.set_property("Greeting", "x")
    assert "Greeting" not in configured.configured


def test_raw_configured_keeps_parameter_references() -> None:
    """raw_configured is what was written; configured substitutes the parameters."""
    split = BUILTIN_PROCESSORS["SplitText"](line_split_count="#{n}")
    split.bind_parameters({"n": "3"})
    assert split.raw_configured == {"Line Split Count": "#{n}"}
    assert split.configured == {"Line Split Count": "3"}


def test_advanced_configuration_is_compared_with_the_properties() -> None:
    """Most processors have none; UpdateAttribute's rules make two configurations differ."""
    assert BUILTIN_PROCESSORS["SplitText"]().advanced_configuration() == ()
    rule = Rule("r", actions={"a": "b"})
    assert not UpdateAttribute(rules=[rule]).same_configuration(UpdateAttribute())
    assert UpdateAttribute(rules=[rule]).same_configuration(UpdateAttribute(rules=[rule]))


class _FedOrNot(SourceProcessor):
    """A source that runs per FlowFile when fed (as GenerateTableFetch)."""

    input_requirement = InputRequirement.INPUT_ALLOWED
    kind_with_input = ProcessorKind.PER_FLOWFILE


def test_a_kind_that_depends_on_input_is_settled_on_a_copy() -> None:
    """with_input gives the processor itself when its kind does not change, else a picklable
    copy whose kind is the one for its input; the configured processor keeps its class's."""
    alone = _FedOrNot()
    assert alone.with_input(False) is alone
    fed = alone.with_input(True)
    assert fed is not alone
    assert fed.kind is ProcessorKind.PER_FLOWFILE
    assert pickle.loads(pickle.dumps(fed)).kind is ProcessorKind.PER_FLOWFILE
    assert alone.kind is ProcessorKind.SOURCE
    assert alone.kind_for(True) is ProcessorKind.PER_FLOWFILE
    assert Configurable().with_input(True).kind is ProcessorKind.PER_FLOWFILE
    assert Configurable().kind_for(False) is ProcessorKind.PER_FLOWFILE
