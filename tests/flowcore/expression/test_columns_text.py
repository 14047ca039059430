"""Tests for string chains over a column: every entry's value is the per-FlowFile one."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowcore.errors import FlowcoreError
from flowcore.expression import FUNCTION_NAMES, compile_expression
from flowcore.expression._columns import evaluate_boolean_column, evaluate_column
from flowcore.expression._columns_text import TEXT_STEPS, text_chain, text_template
from flowcore.expression._nodes import Chain
from flowcore.expression._values import max_length, set_max_length
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, TextColumn

#: Characters where Python's and other libraries' string rules part: case mappings that grow
#: (ß, ﬁ, İ), final sigma, blanks trim and strip see differently, NUL, a surrogate pair's worth.
_ALPHABET = st.sampled_from(list("ab.-_ ßﬁİΣσ\x00\t\n\x1f\u2003é😀1"))
texts = st.one_of(st.text(_ALPHABET, max_size=8), st.text(max_size=6))
markers = st.sampled_from(["'.'", "''", "'..'", "'ß'", "'a'", "' '", "1", "true", "1.5", "'😀'"])
indexes = st.sampled_from(["0", "1", "2", "5", "-1", "'2'", "1.5", "'x'", "'NaN'"])

_TEXT_CALLS = [
    "toUpper()",
    "toLower()",
    "trim()",
    "substringBefore({m})",
    "substringAfter({m})",
    "substringBeforeLast({m})",
    "substringAfterLast({m})",
    "append({m})",
    "prepend({m})",
    "substring({i})",
    "substring({i}, {j})",
]
_END_CALLS = [
    "length()",
    "indexOf({m})",
    "lastIndexOf({m})",
    "startsWith({m})",
    "endsWith({m})",
    "contains({m})",
    "equals({m})",
    "equalsIgnoreCase({m})",
    "in({m}, {n})",
    "isEmpty()",
    "isNull()",
    "notNull()",
]
_NUMERIC_TAILS = ["", ":plus(3)", ":mod(4)", ":gt(2)", ":minus(1):le(0)", ":not()", ":equals(0)"]


@st.composite
def string_chains(draw: st.DrawFn) -> str:
    """A chain of string functions over ``name``, perhaps ending in a number or a boolean."""

    def call(template: str) -> str:
        return template.format(m=draw(markers), n=draw(markers), i=draw(indexes), j=draw(indexes))

    calls = [call(draw(st.sampled_from(_TEXT_CALLS))) for _ in range(draw(st.integers(0, 3)))]
    if draw(st.booleans()):
        calls.append(
            call(draw(st.sampled_from(_END_CALLS))) + draw(st.sampled_from(_NUMERIC_TAILS))
        )
    return "${name" + "".join(f":{c}" for c in calls) + "}"


def _batch(column: Column) -> FlowFileBatch:
    count = len(column)
    steps = np.arange(count)
    return FlowFileBatch(
        ids=steps,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_numbers=steps,
        attributes=Attributes({"path": "./"}),
        uuid_named=(),
        resource_claim=None,
        offsets=np.zeros(count),
        sizes=np.zeros(count),
        entry_date=1,
        lineage_start_date=1,
        lineage_start_indices=steps,
        columns={"name": column},
    )


@st.composite
def text_columns(draw: st.DrawFn) -> TextColumn:
    """A dictionary-encoded column: values may repeat, be absent (None) or go unused."""
    dictionary = draw(st.lists(st.one_of(st.none(), texts), min_size=1, max_size=8))
    codes = draw(st.lists(st.integers(0, len(dictionary) - 1), min_size=1, max_size=12))
    return TextColumn(np.array(codes), tuple(dictionary))


def _assert_per_flowfile(text: str, column: Column) -> None:
    """The column's values (and truths) are the per-FlowFile ones; it fails when one fails."""
    batch = _batch(column)
    expression = compile_expression(text)
    flowfiles = batch.flowfiles()
    try:
        expected = [expression.evaluate(f) for f in flowfiles]
        truths = [expression.evaluate_boolean(f) for f in flowfiles]
    except FlowcoreError:  # any error sends the batch one by one, where each is reported
        with pytest.raises(FlowcoreError):
            evaluate_column(expression, batch)
        return
    assert evaluate_column(expression, batch).values() == expected
    assert evaluate_boolean_column(expression, batch).tolist() == truths


@settings(max_examples=300, deadline=None)
@given(string_chains(), text_columns())
@example(
    "${name:substringBefore('.'):toUpper()}", TextColumn(np.array([0, 1, 2]), (".a", "a.", "ß.ß"))
)
@example("${name:toUpper():length()}", TextColumn(np.array([0, 1]), ("ßﬁ", None)))
@example("${name:toLower()}", TextColumn(np.array([0, 1]), ("ΑΣ", "Σ")))
@example("${name:trim():isEmpty()}", TextColumn(np.array([0, 1]), ("\x00 \u2003", "\t")))
def test_a_string_chain_gives_each_flowfile_its_own_value(text: str, column: TextColumn) -> None:
    """Over any strings, absent values and unused entries, the column is the per-FlowFile one."""
    _assert_per_flowfile(text, column)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(string_chains(), st.sampled_from(["-", ".bak", "#{p}", ""])), max_size=3),
    text_columns(),
)
@example(["${name:substringBefore('.')}", ".bak"], TextColumn(np.array([0, 1]), ("a.b", None)))
@example(["${name:length()}", ":", "${name:endsWith('.')}"], TextColumn(np.array([0]), ("a.",)))
def test_text_around_string_chains_is_their_concatenation(
    parts: list[str], column: TextColumn
) -> None:
    """Literal text and chains over one attribute: the per-FlowFile text, part by part."""
    _assert_per_flowfile("".join(parts), column)


@settings(max_examples=60, deadline=None)
@given(string_chains(), st.lists(st.integers(-(1 << 62), 1 << 62), min_size=1, max_size=8))
def test_a_string_chain_over_whole_numbers_reads_their_text(text: str, numbers: list[int]) -> None:
    """A whole-number column's values go through string functions as their decimal text."""
    _assert_per_flowfile(text, IntColumn(np.array(numbers)))


@pytest.mark.parametrize(
    "text",
    [
        "${name:substringBefore('.'):toUpper()}",
        "${name:substringAfterLast('.'):equals('log')}",
        "${name:trim():length():mod(4)}",
        "${name:prepend('x'):substring(1, 3)}",
        "${name:in('a', 'b'):not()}",
        "${name:substringBefore('.')}.bak",
        "<${name:length()}|${name:isEmpty()}>",
    ],
)
def test_the_pipeline_takes_these_chains(text: str) -> None:
    """Chains of the listed functions with literal arguments are computed over the entries."""
    column = TextColumn(np.array([0, 1, 0]), ("a.log", "b.txt"))
    parts = compile_expression(text).template.parts
    assert text_template(parts, column) is not None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "${name:replaceAll('a', 'b')}",  # not a listed function
        "${name:append(${other})}",  # an argument that is not a literal
        "${name:length():divide(-1)}",  # numpy's part cannot be exact
        "${name:substring('NaN')}",  # the per-FlowFile function fails
    ],
)
def test_other_chains_are_left_to_the_other_ways(text: str) -> None:
    """A chain the pipeline cannot compute exactly gives None, not a guess."""
    column = TextColumn(np.array([0]), ("a.log",))
    chain = compile_expression(text).template.parts[0]
    assert isinstance(chain, Chain)
    assert text_chain(chain, column) is None


def test_every_step_is_a_registered_function() -> None:
    """The pipeline's functions are Expression Language functions of the same names."""

    assert set(TEXT_STEPS) <= FUNCTION_NAMES


@pytest.fixture
def short_limit() -> Iterator[None]:
    """Strings of at most 6 characters, for the length of this test."""
    before = max_length()
    set_max_length(6)
    yield
    set_max_length(before)


@pytest.mark.usefixtures("short_limit")
@given(string_chains(), text_columns())
@example("${name:toUpper()}", TextColumn(np.array([0]), ("ßßßß",)))  # grows past the limit
@example("${name:append('xyz')}", TextColumn(np.array([0, 1]), ("abcd", "a")))
@example("${name:substringBefore('.')}", TextColumn(np.array([0]), ("abcdefgh",)))
@settings(max_examples=100, deadline=None)
def test_the_length_limit_fails_as_the_per_flowfile_evaluation(
    text: str, column: TextColumn
) -> None:
    """Near the length limit, the batch fails exactly when some FlowFile would."""
    _assert_per_flowfile(text, column)


def test_an_absent_attribute_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """As per FlowFile, a FlowFile without the attribute sees an environment variable's value."""
    monkeypatch.setenv("name", "env.value")
    column = TextColumn(np.array([0, 1, 1]), ("a.b", None))
    _assert_per_flowfile("${name:substringAfter('.'):toUpper()}", column)
    _assert_per_flowfile("${name:length():plus(1)}", column)
    _assert_per_flowfile("${name:startsWith('env')}", column)


def test_a_cut_column_is_compacted_first() -> None:
    """A column sharing a large dictionary is evaluated over the entries its FlowFiles use."""
    dictionary = tuple(f"f{i}.log" for i in range(1000))
    column = TextColumn(np.array([7, 3, 7]), dictionary)
    chain = compile_expression("${name:toUpper()}").template.parts[0]
    assert isinstance(chain, Chain)
    result = text_chain(chain, column)
    assert result is not None
    assert result.values == ("F3.LOG", "F7.LOG")
    assert result.codes.tolist() == [1, 0, 1]
