"""Tests for the Expression Language functions, with the reference's examples."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ExpressionEvaluationError, ExpressionLimitError
from flowcore.expression import compile_expression
from flowcore.expression._regex import java_regex, java_replacement, java_template
from flowcore.expression._values import max_length, set_max_length


def ev(text: str, attributes: dict[str, str] | None = None, **kwargs: object) -> str:
    return compile_expression(text).evaluate(attributes or {}, **kwargs)  # type: ignore[arg-type]


FILENAME = {"filename": "a brand new filename.txt"}


@pytest.mark.parametrize(
    ("expression", "attributes", "expected"),
    [
        ("${one:plus(${two})}", {"one": "1", "two": "2"}, "3"),
        ("${value:mod(2):equals(0)}", {"value": "2"}, "true"),
        ("${a:equals('b'):toString()}", {"a": "b"}, "true"),
        ("${attribute5:equals('value.5')}", {}, "false"),
        ("${default.attr}-more-stuff", {}, "-more-stuff"),
        (r"${literal('attribute\.'):append(${literal(6)})}", {}, "attribute\\.6"),
        (
            r"${literal('(attribute\.'):append(${literal('[2-5]')}):append(${literal('|sample.*)')})}",
            {},
            r"(attribute\.[2-5]|sample.*)",
        ),
        ("${test:substring(1, 20)}", {"test": "chocolate"}, ""),
        ("${termination:equals('true')}", {"termination": "true"}, "true"),
        ("${termination:equals('true')}", {}, "false"),
        ("${literal(2):gt(1)}", {}, "true"),
        ("${literal(6)}", {}, "6"),
    ],
)
def test_reference_table(expression: str, attributes: dict[str, str], expected: str) -> None:
    """Every expression of the reference's test table evaluates as NiFi's tests expect."""
    assert ev(expression, attributes) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("${filename:toUpper()}", "A BRAND NEW FILENAME.TXT"),
        ("${filename:length()}", "24"),
        ("${filename:substring(0,1)}", "a"),
        ("${filename:substring(2)}", "brand new filename.txt"),
        ("${filename:substring(12)}", "filename.txt"),
        ("${filename:substring(${filename:length():minus(2)})}", "xt"),
        ("${filename:substring(5, 2)}", ""),
        ("${filename:substringBefore('.')}", "a brand new filename"),
        ("${filename:substringBefore(' ')}", "a"),
        ("${filename:substringBefore(' n')}", "a brand"),
        ("${filename:substringBefore('missing')}", "a brand new filename.txt"),
        ("${filename:substringBeforeLast('.')}", "a brand new filename"),
        ("${filename:substringBeforeLast(' ')}", "a brand new"),
        ("${filename:substringBeforeLast(' n')}", "a brand"),
        ("${filename:substringAfter('.')}", "txt"),
        ("${filename:substringAfter(' ')}", "brand new filename.txt"),
        ("${filename:substringAfter(' n')}", "ew filename.txt"),
        ("${filename:substringAfterLast('.')}", "txt"),
        ("${filename:substringAfterLast(' ')}", "filename.txt"),
        ("${filename:substringAfterLast(' n')}", "ew filename.txt"),
        ("${filename:append('.gz')}", "a brand new filename.txt.gz"),
        ("${filename:replace('.', '_')}", "a brand new filename_txt"),
        ("${filename:replace(' ', '.')}", "a.brand.new.filename.txt"),
        ("${filename:replace('filename','book')}", "a brand new book.txt"),
        ("${filename:replaceFirst('a','the')}", "the brand new filename.txt"),
        ("${filename:replaceFirst('[br]','g')}", "a grand new filename.txt"),
        (r"${filename:replaceFirst('\w{8}','book')}", "a brand new book.txt"),
        (r"${filename:replaceAll('\..*','')}", "a brand new filename"),
        ("${filename:replaceAll('a brand (new)','$1')}", "new filename.txt"),
        ("${filename:replaceAll('brand (new)','somewhat $1')}", "a somewhat new filename.txt"),
        ("${filename:find('a [Bb]rand [Nn]ew')}", "true"),
        ("${filename:find('Brand.*')}", "false"),
        ("${filename:matches('a.*txt')}", "true"),
        ("${filename:matches('brand')}", "false"),
        ("${filename:matches('.+brand.+')}", "true"),
        ("${filename:indexOf('.')}", "20"),
        ("${filename:indexOf(' ')}", "1"),
        ("${filename:lastIndexOf('a')}", "17"),
        ("${filename:lastIndexOf(' ')}", "11"),
        ("${filename:ifElse('found','not_found')}", "not_found"),
        ("${nullFilename:ifElse('found','not_found')}", "not_found"),
        ("${filename:isNull():not():ifElse('found','not_found')}", "found"),
        ("${filename:equals('hello.txt'):not()}", "true"),
        ("${filename:startsWith('a brand')}", "true"),
        ("${filename:endsWith('.txt')}", "true"),
        ("${filename:contains('new')}", "true"),
        ("${filename:in('x', 'a brand new filename.txt')}", "true"),
    ],
)
def test_string_and_search_examples(expression: str, expected: str) -> None:
    """The guide's string and search examples on 'a brand new filename.txt' match."""
    assert ev(expression, FILENAME) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("${greetings:padLeft(10)}", "_____hello"),
        ("${greetings:padLeft(10,'@')}", "@@@@@hello"),
        ("${greetings:padLeft(10,'xy')}", "xyxyxhello"),
        ("${greetings:padRight(10)}", "hello_____"),
        ("${greetings:padRight(10,'xy')}", "helloxyxyx"),
        ("${greetings:padRight(3)}", "hello"),
    ],
)
def test_padding(expression: str, expected: str) -> None:
    """padLeft/padRight pad with '_' or a repeated pattern up to the length."""
    assert ev(expression, {"greetings": "hello"}) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("${missing:toUpper()}", ""),
        ("${missing:length()}", "0"),
        ("${missing:substring(1)}", ""),
        ("${missing:substringBefore('a')}", ""),
        ("${missing:append('x')}", "x"),
        ("${missing:prepend('x')}", "x"),
        ("${missing:contains('x')}", "false"),
        ("${missing:startsWith('x')}", "false"),
        ("${missing:indexOf('x')}", "-1"),
        ("${missing:isNull()}", "true"),
        ("${missing:notNull()}", "false"),
        ("${missing:isEmpty()}", "true"),
        ("${missing:replaceNull('dflt')}", "dflt"),
        ("${missing:plus(1)}", ""),
        ("${missing:gt(1)}", "false"),
        ("${missing:equals('x')}", "false"),
        ("${blank:isEmpty()}", "true"),
        ("${blank:replaceEmpty('x')}", "x"),
        ("${literal(' '):isEmpty()}", "true"),
        ("${literal(''):isEmpty()}", "true"),
    ],
)
def test_null_handling(expression: str, expected: str) -> None:
    """Each function treats a null (missing) subject as NiFi documents."""
    assert ev(expression, {"blank": "   "}) == expected


@pytest.mark.parametrize(
    ("expression", "attributes", "expected"),
    [
        ("${fileSize:divide(12)}", {"fileSize": "100"}, "8"),
        ("${fileSize:mod(12)}", {"fileSize": "100"}, "4"),
        ("${n:divide(2)}", {"n": "-7"}, "-3"),
        ("${n:mod(2)}", {"n": "-7"}, "-1"),
        ("${n:plus(0.5)}", {"n": "2"}, "2.5"),
        ("${n:plus(1.0)}", {"n": "2"}, "3.0"),
        ("${n:multiply(1.0)}", {"n": "10000000000"}, "1.0E10"),
        ("${n:toNumber()}", {"n": "2.9"}, "2"),
        ("${n:toNumber()}", {"n": "0x1F"}, "31"),
        ("${n:toNumber()}", {"n": " 12 "}, "12"),
        ("${n:toNumber()}", {"n": "abc"}, ""),
        ("${n:toDecimal()}", {"n": "3"}, "3.0"),
        ("${n:plus(1)}", {"n": "9223372036854775807"}, "-9223372036854775808"),
        ("${n:toRadix(16)}", {"n": "255"}, "ff"),
        ("${n:toRadix(2, 8)}", {"n": "5"}, "00000101"),
        ("${n:fromRadix(16)}", {"n": "ff"}, "255"),
        ("${n:gt(1024)}", {"n": "2048"}, "true"),
        ("${n:le(2.5)}", {"n": "2.5"}, "true"),
        ("${n:math('abs')}", {"n": "-4"}, "4"),
        ("${literal(2):math('pow', 10)}", {}, "1024.0"),
    ],
)
def test_numbers(expression: str, attributes: dict[str, str], expected: str) -> None:
    """Arithmetic follows Java long/double rules, including truncation and overflow."""
    assert ev(expression, attributes) == expected


def test_divide_by_zero_is_an_evaluation_error() -> None:
    """Whole-number division by zero raises a flowcore error naming the function."""
    with pytest.raises(ExpressionEvaluationError, match="divide"):
        ev("${n:divide(0)}", {"n": "5"})


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('${time:format("yyyy/MM/dd HH:mm:ss.SSS\'Z\'", "GMT")}', "2014/12/31 20:36:03.264Z"),
        ("${time:format('yyyy/MM/dd', 'GMT')}", "2014/12/31"),
        ("${time:format('EEE, dd MMM yyyy HH:mm', 'America/New_York')}", "Wed, 31 Dec 2014 15:36"),
        ("${time:format('hh:mm a', 'GMT')}", "08:36 PM"),
        ("${time:format('yyyy-MM-dd HH:mm:ssXXX', 'GMT+02:00')}", "2014-12-31 22:36:03+02:00"),
        ("${date:toDate('MM-dd-yyyy', 'GMT'):format('yyyy/MM/dd', 'GMT')}", "2014/12/31"),
        ("${date:toDate('MM-dd-yyyy', 'GMT'):toNumber()}", "1419984000000"),
        ("${stamp:toDate(\"yyyy-MM-dd'T'HH:mm:ssXXX\"):toNumber()}", "1420058163000"),
    ],
)
def test_dates(expression: str, expected: str) -> None:
    """Dates format and parse with Java patterns in the requested zone."""
    attributes = {"time": "1420058163264", "date": "12-31-2014", "stamp": "2014-12-31T20:36:03Z"}
    assert ev(expression, attributes) == expected


def test_now_uses_the_supplied_clock() -> None:
    """now() reads the evaluation clock, so the harness can control it."""
    assert ev("${now():toNumber()}", clock=lambda: 1420058163264) == "1420058163264"


def test_date_renders_as_java_date_to_string() -> None:
    """A date rendered alone looks like Java's Date.toString()."""
    text = ev("${now()}", clock=lambda: 1420058163264)
    parts = text.split()
    assert len(parts) == 6
    assert parts[-1] == "2014"
    assert parts[1] == "Dec"


def test_unparsable_date_is_an_evaluation_error() -> None:
    """toDate with a pattern the text does not match raises with both named."""
    with pytest.raises(ExpressionEvaluationError, match="yyyy"):
        ev("${d:toDate('yyyy-MM-dd')}", {"d": "nope"})


def test_uuid_and_literal() -> None:
    """UUID() gives a type-4 UUID; literal() starts an expression from a value."""
    value = ev("${UUID()}")
    assert len(value) == 36
    assert value[14] == "4"
    assert ev("${literal('abc'):toUpper()}") == "ABC"


def test_get_state_value_reads_supplied_state() -> None:
    """getStateValue reads the state map and is null without one."""
    assert ev("${getStateValue('count'):plus(1)}", state={"count": "0"}) == "1"
    assert (
        ev("${getStateValue('sum'):plus(${pencils})}", {"pencils": "2"}, state={"sum": "0"}) == "2"
    )
    assert (
        ev("${getStateValue('maxValue'):lt(${value})}", {"value": "1"}, state={"maxValue": "0"})
        == "true"
    )
    assert ev("${getStateValue('count')}") == ""


def test_multi_attribute_functions() -> None:
    """any/all functions aggregate a boolean chain; join and count reduce values."""
    attrs = {"abc": "hello world", "xyz": "good bye world", "n1": "1", "n2": "2"}
    assert ev("${anyAttribute('abc','xyz'):contains('bye')}", attrs) == "true"
    assert ev("${allAttributes('abc','xyz'):contains('world')}", attrs) == "true"
    assert ev("${allAttributes('abc','xyz'):contains('bye')}", attrs) == "false"
    assert ev("${anyMatchingAttribute('n.*'):equals('2')}", attrs) == "true"
    assert ev("${allMatchingAttributes('n.*'):gt(0)}", attrs) == "true"
    assert ev("${anyDelineatedValue('a,b,c', ','):equals('b')}", attrs) == "true"
    assert ev("${allDelineatedValues('a,b,c', ','):matches('[a-c]')}", attrs) == "true"
    assert ev("${allAttributes('n1','n2'):join(' + ')}", attrs) == "1 + 2"
    assert ev("${allMatchingAttributes('n.*'):gt(1):count()}", attrs) == "1"


def test_get_delimited_field() -> None:
    """getDelimitedField picks a 1-based field and honours quotes."""
    line = {"line": 'a,"b,c",d'}
    assert ev("${line:getDelimitedField(2)}", line) == '"b,c"'
    assert ev("${line:getDelimitedField(3)}", line) == "d"
    assert ev("${line:getDelimitedField(2, ',', '\"', '\\\\', true)}", line) == "b,c"


def test_encoding_functions() -> None:
    """The encoders produce the standard encodings."""
    attrs = {"v": 'a "b" & c'}
    assert ev("${v:escapeJson()}", attrs) == 'a \\"b\\" & c'
    assert ev("${v:urlEncode()}", attrs) == "a+%22b%22+%26+c"
    assert ev("${v:base64Encode():base64Decode()}", attrs) == 'a "b" & c'
    assert ev("${v:hash('SHA-256')}", attrs) == hashlib.sha256(attrs["v"].encode()).hexdigest()
    assert ev("${v:escapeXml()}", attrs) == "a &quot;b&quot; &amp; c"


def test_invalid_regex_at_run_time_is_an_evaluation_error() -> None:
    """A regex built at run time that does not compile raises a flowcore error."""
    with pytest.raises(ExpressionEvaluationError, match="regular expression"):
        ev("${a:matches(${b})}", {"a": "x", "b": "("})


def test_virtual_properties_resolve_from_the_flowfile() -> None:
    """fileSize and friends come from the FlowFile, ahead of same-named attributes."""
    from flowcore.flowfile import FlowFile

    flowfile = FlowFile.create(7, 1000, {"fileSize": "shadowed"})
    flowfile = flowfile.with_content(None)
    assert compile_expression("${fileSize}").evaluate(flowfile) == "0"
    assert compile_expression("${flowFileId}").evaluate(flowfile) == "7"
    assert compile_expression("${entryDate}").evaluate(flowfile) == "1000"


def test_variables_take_precedence_and_environment_is_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caller variables beat attributes; environment variables fill in last."""
    monkeypatch.setenv("FLOWCORE_TEST_ENV", "from-env")
    expression = compile_expression("${a}|${FLOWCORE_TEST_ENV}")
    assert expression.evaluate({"a": "attr"}, variables={"a": "var"}) == "var|from-env"


def test_multi_attribute_functions_with_no_match_evaluate_once_on_null() -> None:
    """As in NiFi, a chain over no matching attributes runs once on a null value."""
    assert ev("${allMatchingAttributes('zz.*'):isNull()}") == "true"
    assert ev("${anyMatchingAttribute('zz.*'):notNull()}") == "false"
    assert ev("${allMatchingAttributes('zz.*'):count()}") == "0"


@pytest.mark.parametrize(
    ("expression", "attributes", "expected"),
    [
        ("${a:toLower()}", {"a": "MiXed"}, "mixed"),
        ("${a:trim()}", {"a": "     1 2 3     "}, "1 2 3"),
        ("${a:equalsIgnoreCase('HELLO')}", {"a": "hello"}, "true"),
        ("${a:equals('x'):and(${b:equals('y')})}", {"a": "x", "b": "y"}, "true"),
        ("${a:equals('x'):and(${b:equals('z')})}", {"a": "x", "b": "y"}, "false"),
        ("${a:equals('q'):or(${b:equals('y')})}", {"a": "x", "b": "y"}, "true"),
        ("${a:equals('q'):or(${missing})}", {"a": "x"}, "false"),
        ("${a:repeat(3)}", {"a": "ab"}, "ababab"),
        ("${a:escapeCsv()}", {"a": 'x,"y"'}, '"x,""y"""'),
        ("${a:unescapeCsv()}", {"a": '"x,""y"""'}, 'x,"y"'),
        ("${a:unescapeJson()}", {"a": 'say \\"hi\\"'}, 'say "hi"'),
        ("${a:unescapeXml()}", {"a": "&lt;b&gt;"}, "<b>"),
        ("${a:escapeHtml4()}", {"a": "<b>"}, "&lt;b&gt;"),
        ("${a:unescapeHtml4()}", {"a": "&lt;b&gt;"}, "<b>"),
        ("${a:urlDecode()}", {"a": "a+b%26c"}, "a b&c"),
        ("${a:jsonPath('$.user.name')}", {"a": '{"user": {"name": "ann"}}'}, "ann"),
        ("${a:jsonPath('$.items[1]')}", {"a": '{"items": [1, 2]}'}, "2"),
        ("${a:jsonPath('$.missing')}", {"a": "{}"}, ""),
        ("${a:evaluateELString()}", {"a": "${b:toUpper()}", "b": "x"}, "X"),
        ("${a:toString()}", {"a": "v"}, "v"),
        ("${a:replaceEmpty('d')}", {"a": "v"}, "v"),
        ("${literal(3):toDecimal()}", {}, "3.0"),
    ],
)
def test_remaining_functions(expression: str, attributes: dict[str, str], expected: str) -> None:
    """The other functions of NiFi's guide behave as documented."""
    assert ev(expression, attributes) == expected


def test_environment_functions() -> None:
    """nextInt counts up; random, ip, hostname and thread give plausible values."""
    first, second = int(ev("${nextInt()}")), int(ev("${nextInt()}"))
    assert second == first + 1
    assert int(ev("${random()}")) >= 0
    assert ev("${ip()}").count(".") == 3
    assert ev("${hostname()}")
    assert ev("${thread()}")
    assert 0 <= float(ev("${math('random')}")) < 1


def test_repeat_range_and_bad_bounds() -> None:
    """repeat(min, max) repeats between min and max times; bad bounds are errors."""
    assert ev("${a:repeat(1, 3)}", {"a": "x"}) in {"x", "xx", "xxx"}
    with pytest.raises(ExpressionEvaluationError, match="repeat"):
        ev("${a:repeat(3, 1)}", {"a": "x"})


@pytest.mark.parametrize(
    "expression",
    [
        "${x:repeat(2000000000)}",
        "${x:repeat(1, 2000000000):repeat(2000000000)}",
        "${x:padLeft(2000000000)}",
        "${x:padRight(2000000000, 'ab')}",
        "${x:repeat(1000000):replace('a', ${x:repeat(100)})}",
        "${x:repeat(1000000):replaceAll('a', ${x:repeat(100)})}",
        "${x:repeat(1000000):replaceAll('', ${x:repeat(100)})}",
        "${x:repeat(1000000):replaceAll('(a)', '" + "$1" * 70 + "')}",
        "${x:repeat(40000000):append(${x:repeat(40000000)})}",
    ],
)
def test_results_over_the_length_limit_are_refused_before_they_are_made(expression: str) -> None:
    """Amplifying functions refuse a result over expression_max_length (64 MB) at once,
    naming the function, instead of allocating gigabytes."""
    started = time.monotonic()
    with pytest.raises(ExpressionLimitError, match="over the limit of 67,108,864"):
        ev(expression, {"x": "a"})
    assert time.monotonic() - started < 10


def test_results_under_the_limit_are_unchanged() -> None:
    """The checks change nothing below the limit."""
    assert ev("${x:repeat(3):replaceAll('a', 'bb'):padLeft(8, '-')}", {"x": "a"}) == "--bbbbbb"
    assert ev("${x:replace('', '.')}", {"x": "ab"}) == ".a.b."


@pytest.fixture
def small_limit() -> Iterator[None]:
    before = max_length()
    set_max_length(1000)
    yield
    set_max_length(before)


def test_to_radix_refuses_a_padding_width_over_the_limit() -> None:
    """toRadix(2, 2000000000) made 2 GB of zeros; now it fails at once, naming itself."""
    started = time.monotonic()
    with pytest.raises(ExpressionLimitError, match=r"toRadix\(\) would make a string of 2,000"):
        ev("${n:toRadix(2, 2000000000)}", {"n": "5"})
    assert time.monotonic() - started < 1
    assert ev("${n:toRadix(2, 8)}", {"n": "5"}) == "00000101"


@pytest.mark.parametrize(
    ("text", "attributes", "expected"),
    [
        ("${a:toNumber()}", {"a": "9" * 5000}, ""),
        ("${a:toDecimal():toNumber()}", {"a": "1e308"}, "9223372036854775807"),
        ("${a:toDecimal():toNumber()}", {"a": "-1e308"}, "-9223372036854775808"),
        ("${a:toNumber()}", {"a": "0x" + "0" * 30 + "1F"}, "31"),
        ("${a:substring(2000000000, 2000000001)}", {"a": "x"}, ""),
    ],
)
def test_huge_numbers_behave_as_java_longs(
    text: str, attributes: dict[str, str], expected: str
) -> None:
    """Digit strings past a long are not whole numbers, decimals saturate when made whole."""
    assert ev(text, attributes) == expected


def test_an_attribute_evaluating_itself_stops_with_a_clear_error() -> None:
    """${a:evaluateELString()} where a holds that text was a RecursionError traceback."""
    with pytest.raises(ExpressionEvaluationError, match="calls it again 16 levels deep"):
        ev("${a:evaluateELString()}", {"a": "${a:evaluateELString()}"})
    assert ev("${a:evaluateELString()}", {"a": "${b:evaluateELString()}", "b": "${c}", "c": "x"})


@pytest.mark.parametrize(
    ("text", "attributes"),
    [
        ("${q:escapeJson()}", {"q": '"' * 600}),
        ("${q:urlEncode()}", {"q": "/" * 400}),
        ("${q:base64Encode():base64Encode():base64Encode()}", {"q": "x" * 500}),
    ],
)
def test_every_function_result_is_held_to_the_limit(
    small_limit: None, text: str, attributes: dict[str, str]
) -> None:
    """Functions that grow their input without a check of their own are checked on return."""
    with pytest.raises(ExpressionLimitError, match="over the limit of 1,000"):
        ev(text, attributes)


def test_a_replacement_naming_a_missing_group_is_an_evaluation_error() -> None:
    """$3 or ${nope} against a pattern without them fails cleanly, naming both."""
    for replacement in ("$3", "${nope}"):
        with pytest.raises(ExpressionEvaluationError, match="does not fit"):
            ev(f"${{a:replaceAll('(\\w+)', '{replacement}')}}", {"a": "hello"})


_REPLACEMENTS = st.lists(
    st.sampled_from(["x", "$0", "$1", "\\$", "\\\\", "${g}", "-", "\\g<1>", "\\n"]), max_size=4
).map("".join)


@given(replacement=_REPLACEMENTS, subject=st.text(alphabet="ab1 \\", max_size=12))
def test_replacements_substituted_by_the_engine_equal_javas_semantics(
    replacement: str, subject: str
) -> None:
    """The engine's template (fast path) gives what the Java replacement callable gives."""
    pattern = java_regex("(?<g>a)|(b)")
    assert pattern.sub(java_template(replacement), subject) == pattern.sub(
        java_replacement(replacement), subject
    )
