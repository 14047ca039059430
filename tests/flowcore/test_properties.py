"""Tests for property descriptors and property values."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from flowcore.errors import ConfigurationError
from flowcore.expression import ResultType
from flowcore.parameters import MASK, Parameter, SensitiveText
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
    PropertyValue,
    property_key,
)
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
)

EL = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES


@pytest.mark.parametrize(
    ("display", "key"),
    [
        ("Max Bin Age", "max_bin_age"),
        ("Line Split Count", "line_split_count"),
        ("Header Line Marker Characters", "header_line_marker_characters"),
        ("FlowFile Insertion Strategy", "flowfile_insertion_strategy"),
        ("Keep Path", "keep_path"),
        ("Minimum/Maximum File Age", "minimum_maximum_file_age"),
    ],
)
def test_keyword_is_display_name_in_snake_case(display: str, key: str) -> None:
    """The keyword lowercases the display name and joins runs of other characters with '_'."""
    assert property_key(display) == key
    assert PropertyDescriptor(display).key == key


def test_names_include_aliases() -> None:
    """A descriptor answers to display name, internal name, keyword and legacy aliases."""
    descriptor = PropertyDescriptor(
        "Maximum Number of Bins", name="Maximum Number of Bins", aliases=("Maximum number of Bins",)
    )
    assert set(descriptor.names()) == {
        "Maximum Number of Bins",
        "maximum_number_of_bins",
        "Maximum number of Bins",
    }


def test_python_values_become_nifi_strings() -> None:
    """Booleans, numbers and timedeltas render in the form the validator expects."""
    assert PropertyDescriptor("B", validators=BOOLEAN_VALIDATOR).to_value_string(True) == "true"
    assert (
        PropertyDescriptor("T", validators=TIME_PERIOD_VALIDATOR).to_value_string(60) == "60 secs"
    )
    age = PropertyDescriptor("T", validators=TIME_PERIOD_VALIDATOR)
    assert age.to_value_string(timedelta(minutes=1)) == "60 secs"
    assert PropertyDescriptor("S", validators=DATA_SIZE_VALIDATOR).to_value_string(10) == "10 B"
    assert PropertyDescriptor("N", validators=POSITIVE_INTEGER_VALIDATOR).to_value_string(5) == "5"
    assert PropertyDescriptor("X").to_value_string("as is") == "as is"
    with pytest.raises(ConfigurationError, match="cannot take a list"):
        PropertyDescriptor("X").to_value_string([1])


def test_required_allowable_and_validators() -> None:
    """Missing required values, values outside the allowed set and bad values are each reported."""
    required = PropertyDescriptor(
        "Line Split Count", required=True, validators=POSITIVE_INTEGER_VALIDATOR
    )
    (missing,) = required.validate(None)
    assert str(missing) == "'Line Split Count' is invalid because Line Split Count is required"
    (bad,) = required.validate("zero")
    assert "positive integer" in bad.explanation
    choice = PropertyDescriptor("Mode", allowable_values=("a", AllowableValue("b", "Bee")))
    (outside,) = choice.validate("c")
    assert "Given value not found in allowed set 'a', 'b'" in outside.explanation
    assert choice.validate("b") == ()


def test_dependencies_disable_validation() -> None:
    """A property whose dependency is unmet is not validated, even when required."""
    header = PropertyDescriptor(
        "Header",
        required=True,
        dependencies=[PropertyDependency("Delimiter Strategy", ("Text", "Filename"))],
    )
    assert header.validate(None, {"Delimiter Strategy": "Do Not Use Delimiters"}) == ()
    assert header.validate(None, {"Delimiter Strategy": "Text"})
    any_value = PropertyDescriptor("Y", required=True, dependencies=[("X",)])
    assert any_value.validate(None, {"X": None}) == ()
    assert any_value.validate(None, {"X": "set"})


def test_expression_values_skip_static_validators_but_must_parse() -> None:
    """A value holding EL is not checked by static validators, but malformed EL is invalid."""
    count = PropertyDescriptor("Count", validators=POSITIVE_INTEGER_VALIDATOR, el_scope=EL)
    assert count.validate("${n}") == ()
    (broken,) = count.validate("${UUID(}")
    assert "position 7" in broken.explanation
    literal_only = PropertyDescriptor("Count", validators=POSITIVE_INTEGER_VALIDATOR)
    assert literal_only.validate("${n}")


def test_expected_type_is_checked() -> None:
    """A condition property rejects EL that does not return a boolean."""
    condition = PropertyDescriptor("Check", el_scope=EL, expected_type=ResultType.BOOLEAN)
    assert condition.validate("${a:equals('b')}") == ()
    (wrong,) = condition.validate("${a}")
    assert "Boolean" in wrong.explanation


def test_a_string_property_takes_a_date_or_number_coerced_to_text() -> None:
    """${now()} and numbers are valid in a String property and evaluate to Java's text: the
    Date as Date.toString(), a whole number without .0, a decimal as Double.toString."""
    text = PropertyDescriptor("Id", el_scope=EL, expected_type=ResultType.STRING)
    for value in ("${now()}", "${a:length()}", "${a:length():divide(2.0)}"):
        assert text.validate(value) == ()
    now = PropertyValue("${now()}", text).evaluate_attribute_expressions({}).value
    assert re.fullmatch(r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}", now)
    length = PropertyValue("${a:length()}", text).evaluate_attribute_expressions({"a": "abcd"})
    assert length.value == "4"
    half = PropertyValue("${a:length():divide(2.0)}", text)
    assert half.evaluate_attribute_expressions({"a": "abcd"}).value == "2.0"
    assert half.evaluate_attribute_expressions({"a": "abc"}).value == "1.5"


def test_property_value_accessors() -> None:
    """PropertyValue converts as NiFi's: integers, booleans, periods and sizes."""
    assert PropertyValue("42").as_integer() == 42
    assert PropertyValue("TRUE").as_boolean() is True
    assert PropertyValue("2 mins").as_time_period("s") == 120
    assert PropertyValue("2 mins").as_time_period("ms") == 120_000
    assert PropertyValue("1 KB").as_data_size("B") == 1024
    assert PropertyValue(None).as_integer() is None
    assert not PropertyValue(None).is_set()
    with pytest.raises(ConfigurationError, match="'Count' has the value 'x'"):
        PropertyValue("x", PropertyDescriptor("Count")).as_integer()


def test_evaluate_attribute_expressions() -> None:
    """Evaluation substitutes attributes; a property without EL support stays literal."""
    value = PropertyValue("${a}-${b:toUpper()}", PropertyDescriptor("P", el_scope=EL))
    assert value.evaluate_attribute_expressions({"a": "1", "b": "x"}).value == "1-X"
    literal = PropertyValue("${a}", PropertyDescriptor("P"))
    assert literal.evaluate_attribute_expressions({"a": "1"}).value == "${a}"


def test_evaluate_attribute_expressions_takes_every_flowfile_form() -> None:
    """A FlowFile, a transform's FlowFileView and a harness's MockFlowFile are evaluated alike,
    FlowFile fields (``fileSize``) included; anything else is a TypeError naming the forms."""
    from flowcore.flowfile import FlowFile
    from flowcore.processor.kinds import FlowFileView
    from flowcore.testing import MockFlowFile

    flowfile = FlowFile.create(1, 0, {"filename": "a.txt"}).replace(size=5)
    value = PropertyValue("${filename}:${fileSize}", PropertyDescriptor("P", el_scope=EL))
    for form in (flowfile, FlowFileView(flowfile, None), MockFlowFile(flowfile)):  # type: ignore[arg-type]
        assert value.evaluate_attribute_expressions(form).value == "a.txt:5"
    with pytest.raises(TypeError, match=r"FlowFileView a transform gets.*not int 3"):
        value.evaluate_attribute_expressions(3)  # type: ignore[arg-type]


def test_sensitive_values_are_masked_and_never_evaluated() -> None:
    """A sensitive property's problems show ********; a sensitive value is not evaluated as EL."""
    secret = SensitiveText("${x}-abc", Parameter("pw", "${x}-abc", sensitive=True))
    descriptor = PropertyDescriptor(
        "Password",
        sensitive=True,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        validators=POSITIVE_INTEGER_VALIDATOR,
    )
    (problem,) = descriptor.validate("abc")
    assert problem.input == MASK
    assert "abc" not in str(problem)
    value = PropertyValue(secret, descriptor).evaluate_attribute_expressions({"x": "1"})
    assert value.value == "${x}-abc"
