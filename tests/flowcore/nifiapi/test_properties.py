"""Tests for nifiapi.properties: NiFi's names over flowcore's values and validators."""

from __future__ import annotations

import pytest

from flowcore import validators
from flowcore.properties import ExpressionLanguageScope as FlowcoreScope
from flowcore.properties import PropertyDescriptor as FlowcoreDescriptor
from flowcore.properties import PropertyValue
from nifiapi.properties import (
    DataUnit,
    PropertyDependency,
    PropertyDescriptor,
    PythonPropertyValue,
    StandardValidators,
    TimeUnit,
)

#: The names NiFi 2's StandardValidators defines (nifiapi/properties.py).
NIFI_VALIDATORS = (
    "ALWAYS_VALID",
    "NON_EMPTY_VALIDATOR",
    "INTEGER_VALIDATOR",
    "POSITIVE_INTEGER_VALIDATOR",
    "POSITIVE_LONG_VALIDATOR",
    "NON_NEGATIVE_INTEGER_VALIDATOR",
    "NUMBER_VALIDATOR",
    "LONG_VALIDATOR",
    "PORT_VALIDATOR",
    "NON_EMPTY_EL_VALIDATOR",
    "HOSTNAME_PORT_LIST_VALIDATOR",
    "BOOLEAN_VALIDATOR",
    "URL_VALIDATOR",
    "URI_VALIDATOR",
    "REGULAR_EXPRESSION_VALIDATOR",
    "REGULAR_EXPRESSION_WITH_EL_VALIDATOR",
    "TIME_PERIOD_VALIDATOR",
    "DATA_SIZE_VALIDATOR",
    "FILE_EXISTS_VALIDATOR",
)


def _value(text: str | None, *, scope: FlowcoreScope = FlowcoreScope.NONE) -> PythonPropertyValue:
    return PythonPropertyValue(PropertyValue(text, FlowcoreDescriptor("P", el_scope=scope)))


def test_standard_validators_are_nifis_names_and_flowcores_checks() -> None:
    """Every name NiFi defines is there, and is flowcore's validator of that name."""
    for name in NIFI_VALIDATORS:
        assert getattr(StandardValidators, name) is getattr(validators, name), name


def test_a_descriptor_keeps_nifis_attribute_names() -> None:
    """NiFi's camelCase attributes, the default made text, ALWAYS_VALID when none given."""
    made = PropertyDescriptor("Count", "how many", default_value=3, required=True)
    assert (made.name, made.defaultValue, made.displayName, made.required) == (
        "Count",
        "3",
        None,
        True,
    )
    assert made.validators == [StandardValidators.ALWAYS_VALID]


def test_a_dependency_takes_values_one_by_one_or_as_a_list() -> None:
    """PropertyDependency(descriptor, 'a', 'b') and NiFi's own (name, [values]) agree."""
    mode = PropertyDescriptor("Mode", "m")
    assert PropertyDependency(mode, "a", "b").dependent_values == ["a", "b"]
    assert PropertyDependency("Mode", ["a", "b"]).dependent_values == ["a", "b"]
    assert PropertyDependency(mode).property_name == "Mode"


def test_values_convert_as_nifis_accessors_do() -> None:
    """asInteger, asBoolean, asFloat, asTimePeriod (whole units) and asDataSize."""
    assert _value("42").asInteger() == 42
    assert _value("TRUE").asBoolean() is True
    assert _value("2.5").asFloat() == 2.5
    assert _value("30 sec").asTimePeriod(TimeUnit.MILLISECONDS) == 30_000
    assert _value("90 sec").asTimePeriod(TimeUnit.MINUTES) == 1
    assert _value("1 KB").asDataSize(DataUnit.B) == 1024
    unset = _value(None)
    assert (unset.getValue(), unset.isSet(), unset.asInteger()) == (None, False, None)


def test_expression_language_reads_a_dict_or_none() -> None:
    """evaluateAttributeExpressions takes attributes as NiFi's AttributeMap gives them; a
    property without EL support gives itself back."""
    value = _value("${who}!", scope=FlowcoreScope.FLOWFILE_ATTRIBUTES)
    assert value.isExpressionLanguagePresent()
    assert value.evaluateAttributeExpressions({"who": "nifi"}).getValue() == "nifi!"
    assert value.evaluateAttributeExpressions().getValue() == "!"
    plain = _value("${who}")
    assert plain.evaluateAttributeExpressions({"who": "x"}) is plain


def test_an_unknown_attribute_source_is_refused() -> None:
    """Something that is neither a FlowFile, a dict nor None is named."""
    value = _value("${a}", scope=FlowcoreScope.FLOWFILE_ATTRIBUTES)
    with pytest.raises(TypeError, match="not int"):
        value.evaluateAttributeExpressions(5)
