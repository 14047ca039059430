"""Tests for parsing property text: escaping, literals, syntax errors and result types."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ExpressionSyntaxError
from flowcore.expression import (
    ResultType,
    compile_expression,
    contains_expression,
    validate_expression,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$${abc}", "${abc}"),
        ("$$${abc}", "$v"),
        ("$$$${abc}", "$${abc}"),
        ("$$$$${abc}", "$$v"),
        ("I owe you $5", "I owe you $5"),
        ("You owe me $$5 too", "You owe me $$5 too"),
        ("plain text", "plain text"),
        ("${abc}${abc}", "vv"),
        ("[${abc}]", "[v]"),
        ("##{not a parameter}", "#{not a parameter}"),
    ],
)
def test_dollar_escaping(text: str, expected: str) -> None:
    """Pairs of '$' before '{' collapse; a lone '$' elsewhere is left alone."""
    assert compile_expression(text).evaluate({"abc": "v"}) == expected


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        (r"'a\"b'", 'a"b'),
        (r'"a\'b"', "a'b"),
        (r"'a\nb'", "a\nb"),
        (r"'a\tb'", "a\tb"),
        (r"'a\\b'", "a\\\\b"),
        (r"'attribute\.'", "attribute\\."),
    ],
)
def test_string_literal_escapes(literal: str, expected: str) -> None:
    r"""String literals decode \" \' \n \r \t; '\\' gives two backslashes; others keep '\'."""
    assert compile_expression("${literal(" + literal + ")}").evaluate() == expected


def test_quoted_attribute_names_and_whitespace() -> None:
    """Quoted names reach attributes with special characters; whitespace between tokens is ok."""
    attrs = {"my attribute": "x", "a:b": "y"}
    assert compile_expression("${'my attribute'}").evaluate(attrs) == "x"
    assert compile_expression('${"a:b"}').evaluate(attrs) == "y"
    assert compile_expression("${ 'my attribute' : toUpper( ) }").evaluate(attrs) == "X"


def test_parameters_resolve_or_drop() -> None:
    """#{name} reads parameters and renders as nothing when the parameter is unset."""
    expression = compile_expression("#{missing.parameter}${literal('x')}")
    assert expression.evaluate() == "x"
    assert expression.evaluate(parameters={"missing.parameter": "p-"}) == "p-x"


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("${UUID(}", 7),
        ("${a:foo()}", 4),
        ("${a", 3),
        ("${'x}", 2),
        ("${a:substring()}", 4),
        ("${a:toUpper(1)}", 4),
        ("${toUpper()}", 2),
        ("${a:UUID()}", 4),
        ("${1abc}", 2),
        ("${a:join(',')}", 4),
        ("${literal('a\nb')}", 12),
    ],
)
def test_syntax_errors_name_the_position(text: str, position: int) -> None:
    """A malformed expression raises ExpressionSyntaxError pointing at the problem."""
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_expression(text)
    assert caught.value.position == position
    assert f"position {position}" in str(caught.value)
    assert caught.value.expression == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${a}", ResultType.STRING),
        ("${a:equals('b')}", ResultType.BOOLEAN),
        ("${a:length()}", ResultType.WHOLE_NUMBER),
        ("${a:plus(1)}", ResultType.NUMBER),
        ("${now()}", ResultType.DATE),
        ("x${a:equals('b')}", ResultType.STRING),
        ("${allAttributes('a'):isNull()}", ResultType.BOOLEAN),
        ("${allAttributes('a'):join(',')}", ResultType.STRING),
    ],
)
def test_result_types(text: str, expected: ResultType) -> None:
    """The static result type comes from the last function of a lone expression."""
    assert compile_expression(text).result_type is expected


def test_validate_expression_checks_the_expected_type() -> None:
    """validate_expression explains syntax errors and wrong result types."""
    assert validate_expression("${a:equals('b')}", ResultType.BOOLEAN) is None
    assert "Boolean" in (validate_expression("${a}", ResultType.BOOLEAN) or "")
    assert "position" in (validate_expression("${UUID(}") or "")
    assert validate_expression("${a:length()}", ResultType.NUMBER) is None


@pytest.mark.parametrize(
    "text",
    [
        "${now()}",
        "${a:length()}",
        "${literal(5):divide(2.0)}",
        "${a:toNumber():toDecimal()}",
        "${a:equals('b')}",
        "${now():format('yyyy')}-${a:length()}",
    ],
)
def test_every_result_type_is_a_valid_string(text: str) -> None:
    """A Date, Number, Whole Number, Decimal or Boolean result is a valid String, as in NiFi."""
    assert validate_expression(text, ResultType.STRING) is None


def test_a_string_expected_still_refuses_bad_syntax() -> None:
    """Coercion to String does not make malformed EL valid."""
    assert "position" in (validate_expression("${now(}", ResultType.STRING) or "")


def test_types_other_than_string_are_still_checked() -> None:
    """A Date or Number where a Boolean is expected stays invalid (NiFi's strict validators)."""
    assert "Boolean" in (validate_expression("${now()}", ResultType.BOOLEAN) or "")
    assert "Number" in (validate_expression("${a:equals('b')}", ResultType.NUMBER) or "")


def test_contains_expression() -> None:
    """contains_expression tells literal text from text with EL."""
    assert contains_expression("${a}")
    assert contains_expression("x #{p}")
    assert not contains_expression("plain")
    assert not contains_expression("$${escaped}")
    assert not contains_expression(None)


def syntax_error(text: str) -> ExpressionSyntaxError | None:
    """Compile *text*; return the syntax error (any other exception propagates)."""
    try:
        compile_expression(text)
    except ExpressionSyntaxError as ex:
        return ex
    return None


@given(st.text(max_size=60))
def test_garbage_only_raises_the_syntax_error_with_a_position(text: str) -> None:
    """Random text either parses or raises ExpressionSyntaxError with a position inside it."""
    error = syntax_error(text)
    assert error is None or 0 <= error.position <= len(text)


@given(st.text(alphabet="${}():,'\"ab1 \\.-", max_size=40))
def test_expression_shaped_garbage_only_raises_the_syntax_error(text: str) -> None:
    """Text made of EL punctuation either parses or raises the flowcore syntax error."""
    error = syntax_error(text)
    assert error is None or 0 <= error.position <= len(text)


def test_deep_nesting_is_a_syntax_error_not_a_recursion_error() -> None:
    """500 nested expressions give a syntax error naming the limit; 100 still parse."""

    def nested(levels: int) -> str:
        text = "${b}"
        for _ in range(levels - 1):
            text = "${b:append(" + text + ")}"
        return text

    with pytest.raises(ExpressionSyntaxError, match="nest more than 100 levels"):
        compile_expression(nested(500))
    assert compile_expression(nested(100)).evaluate({"b": "y"}) == "y" * 100


def test_a_flow_with_a_500_deep_expression_is_refused_in_a_short_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Validation names the processor, the property and the limit; the 5,000-character value
    is cut short, so the CLI's one line stays readable."""
    from flowcore import Flow
    from flowcore.errors import FlowValidationError
    from processors import GenerateFlowFile, UpdateAttribute

    text = "${a}"
    for _ in range(499):
        text = "${a:append(" + text + ")}"
    flow = Flow("deep")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(deep=text), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    with pytest.raises(FlowValidationError) as caught:
        flow.run(runner="direct", repository=tmp_path / "repo")
    message = str(caught.value)
    assert "UpdateAttribute 'tag': 'deep'" in message
    assert "nest more than 100 levels" in message
    assert len(message) < 1000
