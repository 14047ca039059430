"""Tests for RecordPath's standalone functions: NiFi's TestRecordPath StandaloneFunctions and
MathFunctions cases on its example record."""

from __future__ import annotations

import base64
import datetime
import decimal
from typing import Any

import pytest

from flowcore.record_path import DataType, RecordPathError, RecordSchema, compile_record_path

# (path, expected values), ported from TestRecordPath.StandaloneFunctions.
CASES = [
    ("substringBefore(/name, ' ')", ["John"]),
    ("substringAfter(substringBefore(/name, 'n'), 'J')", ["oh"]),
    # Substring
    ("substring(/name, 2, 6)", ["hn D"]),
    ("substring(/name, 4, 10000)", [" Doe"]),
    ("substring(/name, -7, -3)", ["hn D"]),
    ("substring(/name, 8, 10)", [""]),
    ("substring(/name, 3, 3)", [""]),
    ("substring(/missing, 1, 2)", []),
    ("substring('Bob Bobby Bobson', 4, 9)", ["Bobby"]),
    # SubstringAfter / AfterLast / Before / BeforeLast
    ("substringAfter(/name, 'o')", ["hn Doe"]),
    ("substringAfter(/name, 'x')", ["John Doe"]),
    ("substringAfter(/name, '')", ["John Doe"]),
    ("substringAfter(/name, 'e')", [""]),
    ("substringAfter(/name, 'oh')", ["n Doe"]),
    ("substringAfter('Bob Bobby Bobson', 'y')", [" Bobson"]),
    ("substringAfter(/name, /firstName)", [" Doe"]),
    ("substringAfterLast(/name, 'o')", ["e"]),
    ("substringAfterLast(/name, 'x')", ["John Doe"]),
    ("substringAfterLast(/name, '')", ["John Doe"]),
    ("substringAfterLast(/name, 'e')", [""]),
    ("substringAfterLast(/name, 'oh')", ["n Doe"]),
    ("substringAfterLast('Bob Bobby Bobson', 'y')", [" Bobson"]),
    ("substringAfterLast(/name, /firstName)", [" Doe"]),
    ("substringBefore(/name, 'x')", ["John Doe"]),
    ("substringBefore(/name, '')", ["John Doe"]),
    ("substringBefore(/name, 'J')", [""]),
    ("substringBefore(/name, 'Do')", ["John "]),
    ("substringBefore('Bob Bobby Bobson', 'y')", ["Bob Bobb"]),
    ("substringBefore(/name, /lastName)", ["John "]),
    ("substringBeforeLast(/name, 'o')", ["John D"]),
    ("substringBeforeLast(/name, 'x')", ["John Doe"]),
    ("substringBeforeLast(/name, '')", ["John Doe"]),
    ("substringBeforeLast(/name, 'J')", [""]),
    ("substringBeforeLast(/name, 'Do')", ["John "]),
    ("substringBeforeLast('Bob Bobby Bobson', 'y')", ["Bob Bobb"]),
    ("substringBeforeLast(/name, /lastName)", ["John "]),
    # Replace / ReplaceNull / ReplaceRegex
    ("replace(/name, 'ohn', 'ane')", ["Jane Doe"]),
    ("replace(/name, 'o', 'X')", ["JXhn DXe"]),
    ("replace(/name, 'nomatch', 'X')", ["John Doe"]),
    ("replaceNull(/missing, 14)", [14]),
    ("replaceNull(/firstName, 17)", ["John"]),
    ("replaceNull(/missing, /id)", [48]),
    ("replaceRegex(/name, 'ohn', 'ane')", ["Jane Doe"]),
    ("replaceRegex(/name, 'o', 'X')", ["JXhn DXe"]),
    ("replaceRegex(/name, 'nomatch', 'X')", ["John Doe"]),
    ("replaceRegex(/name, '[aeiou]', 'x')", ["Jxhn Dxx"]),
    ("replaceRegex(/name, '\\w', 'x')", ["xxxx xxx"]),
    ("replaceRegex(/name, 'J|D', 'X')", ["Xohn Xoe"]),
    ("replaceRegex(/name, '([JD])', '$1x')", ["Jxohn Dxoe"]),
    ("replaceRegex(/name, '(?<hello>[JD])', '${hello}x')", ["Jxohn Dxoe"]),
    ("replaceRegex('John Doe', 'John', 'Jane')", ["Jane Doe"]),
    ("replaceRegex(/name, /firstName, 'ane')", ["ane Doe"]),
    ("replaceRegex(/name, 'oh', /id)", ["J48n Doe"]),
    # Concat / Join / Coalesce / Count
    ("concat(/firstName, /attributes['state'])", ["JohnNY"]),
    ("concat(/id, /mainAccount/balance)", ["48123.45"]),
    ("concat(/firstName, /missing)", ["Johnnull"]),
    ("concat('Hello NiFi', ' ', 2)", ["Hello NiFi 2"]),
    ("join(', ', /firstName, /lastName, /name)", ["John, Doe, John Doe"]),
    ("join('---', /name)", ["John Doe"]),
    ("join(' ', 'Nyan', 'Cat')", ["Nyan Cat"]),
    ("join(' ', /firstName, /friends[1..2], /lastName)", ["John Jane Jacob Doe"]),
    ("coalesce(/missing, 'default', /firstName)", ["default"]),
    ("coalesce('single')", ["single"]),
    ("coalesce(/missing, /missing)", []),
    ("count(/attributes[*])", [2]),
    ("count(/friends[0, 1, 3])", [3]),
    ("count(/*[fieldName(.) = 'bytes'])", [1]),
    ("count(/missing)", [1]),
    ("count('hello')", [1]),
    ("count(56)", [1]),
    # FieldName
    ("fieldName(/id)", ["id"]),
    ("fieldName(/missing)", ["missing"]),
    ("fieldName(/name[/id != /id])", []),
    ("fieldName(/mainAccount/*)", ["id", "balance", "address"]),
    ("fieldName(concat('enate'))", ["concat"]),
    # PadLeft / PadRight
    ("padLeft(/name, 11)", ["___John Doe"]),
    ("padLeft(/name, 10, '@')", ["@@John Doe"]),
    ("padLeft(/name, 11, 'abc')", ["abcJohn Doe"]),
    ("padLeft(/name, 9, 'abc')", ["aJohn Doe"]),
    ("padLeft(/name, 13, 'abc')", ["abcabJohn Doe"]),
    ("padLeft(/lastName, 7, /firstName)", ["JohnDoe"]),
    ("padLeft(/name, 11, '')", ["___John Doe"]),
    ("padLeft(/name, 8)", ["John Doe"]),
    ("padLeft(/name, 3)", ["John Doe"]),
    ("padLeft(/missing, 10)", [None]),
    ("padRight(/name, 11)", ["John Doe___"]),
    ("padRight(/name, 10, '@')", ["John Doe@@"]),
    ("padRight(/name, 11, 'abc')", ["John Doeabc"]),
    ("padRight(/name, 9, 'abc')", ["John Doea"]),
    ("padRight(/name, 13, 'abc')", ["John Doeabcab"]),
    ("padRight(/lastName, 7, /firstName)", ["DoeJohn"]),
    ("padRight(/name, 11, '')", ["John Doe___"]),
    ("padRight(/name, 8)", ["John Doe"]),
    ("padRight(/name, 3)", ["John Doe"]),
    ("padRight(/missing, 10)", [None]),
    # ToLowerCase / ToUpperCase / Trim
    ("toLowerCase(/name)", ["john doe"]),
    ("toLowerCase(/missing)", [""]),
    ("toLowerCase('UPPER lower')", ["upper lower"]),
    ("toUpperCase(/name)", ["JOHN DOE"]),
    ("toUpperCase(/missing)", [""]),
    ("toUpperCase('UPPER lower')", ["UPPER LOWER"]),
    ("trim(' John Doe \\t')", ["John Doe"]),
    ("trim(/missing)", [""]),
    # EscapeJson
    ("escapeJson(/name)", ['"John Doe"']),
    ("escapeJson(/id)", ["48"]),
    ("escapeJson(/mainAccount/balance)", ["123.45"]),
    ("escapeJson(/numbers)", ["[0,1,2,3,4,5,6,7,8,9]"]),
    ("escapeJson(/friends)", ['["John","Jane","Jacob","Judy"]']),
    ("escapeJson(/attributes)", ['{"city":"New York","state":"NY"}']),
    (
        "escapeJson(/mainAccount)",
        ['{"id":1,"balance":123.45,"address":{"city":"Boston","state":"Massachusetts"}}'],
    ),
    # Hash (NiFi's digests of "John Doe")
    ("hash(/name, 'MD5')", ["4c2a904bafba06591225113ad17b5cec"]),
    (
        "hash(/name, 'SHA-384')",
        [
            "d0e24ff9f82e2a6b35409aec172e64b363f2dd26d8881d19f63214d5552357a40e32ac874a587d3fcf43ec86299eb001"
        ],
    ),
    ("hash(/name, 'SHA-224')", ["20b058bc065abdbbd674123ed539286fa2765589424c38cd9e27b748"]),
    (
        "hash(/name, 'SHA-256')",
        ["6cea57c2fb6cbc2a40411135005760f241fffc3e5e67ab99882726431037f908"],
    ),
    # Anchored / ArrayOf / MapOf
    ("anchored(/mainAccount, concat(/id, '->', /balance))", ["1->123.45"]),
    ("anchored(/accounts, concat(/id, '->', /balance))", ["6->10000.0", "9->48.02"]),
    ("arrayOf('a', 'b', 'c')", [["a", "b", "c"]]),
    ("arrayOf(/friends[*], 'Junior')", [["John", "Jane", "Jacob", "Judy", "Junior"]]),
    (
        "mapOf('firstName', /firstName, 'lastName', /lastName)",
        [{"firstName": "John", "lastName": "Doe"}],
    ),
    # Math beyond NiFi's cases
    ("add(/mainAccount/balance, 1)", [124.45]),
    ("divide(-7, 2)", [-3]),
    ("add('2', '3')", [5]),
    ("toNumber('42')", [42]),
]


@pytest.mark.parametrize(("path", "expected"), CASES, ids=[p for p, _ in CASES])
def test_nifi_function_cases(run: Any, path: str, expected: list[Any]) -> None:
    """Each ported StandaloneFunctions/MathFunctions case gives NiFi's values."""
    assert run(path) == expected


def test_replace_regex_escaped_metacharacters(run: Any) -> None:
    """NiFi's replaceRegex over ``.^$*+?()[{\\|``: an escaped metacharacter matches itself."""
    target = {"name": ".^$*+?()[{\\|"}
    for char, expected in ((".", "x^$*+?()[{\\|"), ("^", ".x$*+?()[{\\|"), ("|", ".^$*+?()[{\\x")):
        assert run(f"replaceRegex(/name, '\\{char}', 'x')", target) == [expected]


def test_replace_regex_anchors_and_dot(run: Any) -> None:
    """``^``, ``$`` and ``.`` behave as Java's: the dot does not match line breaks."""
    assert run("replaceRegex(/name, '^Bob', 'Hello')", {"name": "Bob Bobby"}) == ["Hello Bobby"]
    assert run("replaceRegex(/name, 'Bob$', 'Bobson')", {"name": "Bobby Bob"}) == ["Bobby Bobson"]
    assert run("replaceRegex(/name, '.', 'W')", {"name": "a\n\rb"}) == ["W\n\rW"]


def test_coalesce_takes_the_first_present_value(run: Any) -> None:
    """NiFi's Coalesce cases: the first argument with a non-null value wins."""
    target = {"name": None, "firstName": "Eve", "lastName": "X"}
    assert run("coalesce(/name, /firstName, /lastName)", target) == ["Eve"]
    assert run("coalesce(/name, /firstName, /lastName)", {"name": "Alice"}) == ["Alice"]
    assert run("coalesce(/name, /firstName, /lastName)", {}) == []


def test_base64_round_trip(run: Any) -> None:
    """base64Encode and base64Decode of text and of bytes, as NiFi's Base64 cases."""
    assert run("base64Encode(/name)") == [base64.b64encode(b"John Doe").decode()]
    assert run("base64Decode(/name)", {"name": base64.b64encode(b"John Doe").decode()}) == [
        "John Doe"
    ]
    assert run("base64Encode(/b)", {"b": b"Hello"}) == [base64.b64encode(b"Hello")]
    assert run("base64Decode(/b)", {"b": base64.b64encode(b"Hello")}) == [b"Hello"]


def test_to_bytes_and_to_string(run: Any) -> None:
    """toBytes encodes with the charset; toString decodes an array of bytes (NiFi's cases)."""
    assert run("toBytes(/name, 'UTF-16LE')") == ["John Doe".encode("utf-16-le")]
    assert run("toBytes('Hello', 'UTF-8')") == [b"Hello"]
    assert run("toString(/bytes, 'UTF-8')") == ["Hello World!"]
    assert run("toString(/b, 'UTF-16')", {"b": list("Hello World!".encode("utf-16"))}) == [
        "Hello World!"
    ]
    with pytest.raises(RecordPathError, match="NOT A REAL CHARSET"):
        run("toBytes(/name, 'NOT A REAL CHARSET')")


def test_to_date_and_format(run: Any) -> None:
    """toDate parses with a Java pattern (and zone); format prints dates and epoch millis."""
    (parsed,) = run("toDate(/date, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'GMT')")
    assert parsed == datetime.datetime(2017, 10, 20, 11, 0, tzinfo=datetime.UTC)
    assert run("toDate(/date, 'INVALID')") == ["2017-10-20T11:00:00Z"]
    assert run("toDate(/id, 'yyyy-MM-dd')") == [48]
    assert run("format(0, 'yyyy-MM-dd', 'GMT')") == ["1970-01-01"]
    assert run("format(/t, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'GMT')", {"t": 1723939200000}) == [
        "2024-08-18T00:00:00Z"
    ]
    assert run("format(toDate('2017-10-20', 'yyyy-MM-dd', 'GMT'), 'yyyy/MM/dd', 'GMT')") == [
        "2017/10/20"
    ]
    assert run("format(/name, 'yyyy-MM-dd')") == ["John Doe"]


def test_unescape_json(record: dict[str, Any], run: Any) -> None:
    """TestRecordPath.UnescapeJson: strings, numbers, arrays and objects from JSON text."""
    record["name"] = '"John Doe"'
    assert run("unescapeJson(/name)") == ["John Doe"]
    record["id"] = "48"
    assert run("unescapeJson(/id)") == [48]
    record["id"] = "123.45"
    assert run("unescapeJson(/id)") == [123.45]
    record["numbers"] = "[0,1,2,3,4,5,6,7,8,9]"
    assert run("unescapeJson(/numbers)") == [list(range(10))]
    record["friends"] = '["John","Jane","Jacob","Judy"]'
    assert run("unescapeJson(/friends)") == [["John", "Jane", "Jacob", "Judy"]]
    record["name"] = '{"id":1,"balance":2.3,"address":{"city":"New York","state":"NY"}}'
    expected = {"id": 1, "balance": 2.3, "address": {"city": "New York", "state": "NY"}}
    for path in (
        "unescapeJson(/name, 'false')",
        "unescapeJson(/name)",
        "unescapeJson(/name, 'true')",
    ):
        assert run(path) == [expected]
    record["name"] = '{"id":1,"balance":2.3,"nested":[{"city":"New York","state":"NY"}]}'
    nested = {"id": 1, "balance": 2.3, "nested": [{"city": "New York", "state": "NY"}]}
    assert run("unescapeJson(/name, 'true', 'false')") == [nested]
    assert run("unescapeJson(/name, 'true', 'true')") == [nested]


@pytest.mark.parametrize("field", ["id", "attributes", "mainAccount", "numbers", "bytes"])
def test_unescape_json_of_non_text(run: Any, field: str) -> None:
    """NiFi's throwsExceptionWhenAppliedToNonStringValue, with NiFi's message."""
    with pytest.raises(RecordPathError) as caught:
        run(f"unescapeJson(/{field})")
    assert str(caught.value) == "Argument supplied to unescapeJson must be a String"


def test_unescape_json_of_non_json(record: dict[str, Any], run: Any) -> None:
    """NiFi's throwsExceptionWhenAppliedToNonJsonStringValue, with NiFi's message."""
    record["name"] = "<xml>value</xml>"
    with pytest.raises(RecordPathError) as caught:
        run("unescapeJson(/name)")
    assert str(caught.value) == "Unable to deserialize JSON String into Record Path value"


def test_record_of_and_array_of_records(run: Any) -> None:
    """recordOf builds a record; arrayOf appends it to the accounts (NiFi's ArrayOf cases)."""
    (values,) = run("arrayOf(/accounts[*], recordOf('id', '5555', 'balance', '123.45'))")
    assert len(values) == 3
    assert values[2] == {"id": "5555", "balance": "123.45"}
    (first,) = run("recordOf('mapValue', /attributes, 'name', /name)")
    assert first == {"mapValue": {"city": "New York", "state": "NY"}, "name": "John Doe"}


def test_uuid5(run: Any) -> None:
    """uuid5 is a name-based UUID of the value, with an optional namespace."""
    import uuid

    namespace = str(uuid.uuid4())
    assert run("uuid5(/name)") == [str(uuid.uuid5(uuid.UUID(int=0), "John Doe"))]
    assert run(f"uuid5(/name, '{namespace}')") == [
        str(uuid.uuid5(uuid.UUID(namespace), "John Doe"))
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("hash(/name, 'NOPE')", "Invalid hash algorithm"),
        ("mapOf('firstName', /firstName, 'lastName')", "even number of arguments"),
        ("recordOf('firstName', /firstName, 'lastName')", "even number of arguments"),
        ("fieldName('whoops')", "no field"),
    ],
)
def test_function_errors(run: Any, path: str, message: str) -> None:
    """NiFi's failing function cases raise our RecordPath error, naming the problem."""
    with pytest.raises(RecordPathError, match=message):
        run(path)


# (path, type, Java's toString of the value): TestRecordPath.MathFunctions.
MATH = [
    ("multiply(2, /bytes[0])", "long", "144"),
    ("multiply('2.0', /bytes[0])", "double", "144.0"),
    ("multiply(2, /shortNumber)", "long", "246"),
    ("multiply('2.0', /shortNumber)", "double", "246.0"),
    ("multiply(2, /longNumber)", "long", "2469135780246913578"),
    ("multiply(2, /mainAccount/balance)", "double", "246.9"),
    ("multiply('2.0', /longNumber)", "double", "2.4691357802469135E18"),
    ("multiply('2.0', /floatNumber)", "double", "246.89999389648438"),
    ("multiply(2, 2)", "long", "4"),
    ("multiply(/id, 2)", "long", "96"),
    ("multiply(2, /id)", "long", "96"),
    ("multiply(/id, /id)", "long", "2304"),
    ("multiply(/longNumber, /longNumber)", "long", "-8736265215553819719"),
    ("multiply('-1.0e308', /mainAccount/balance)", "double", "-Infinity"),
    ("divide(3, 2)", "long", "1"),
    ("divide(/id, 2)", "long", "24"),
    ("divide(2, /id)", "long", "0"),
    ("divide(/id, /id)", "long", "1"),
    ("divide(-9223372036854775808, -1)", "long", "-9223372036854775808"),
    ("divide('1.0e300', '1.0e-300')", "double", "Infinity"),
    ("add(3, 2)", "long", "5"),
    ("add(/id, 2)", "long", "50"),
    ("add(2, /id)", "long", "50"),
    ("add(/id, /id)", "long", "96"),
    ("add(9223372036854775807, 1)", "long", "-9223372036854775808"),
    ("add('1.0e308', '1.0e308')", "double", "Infinity"),
    ("subtract(3, 2)", "long", "1"),
    ("subtract(/id, 2)", "long", "46"),
    ("subtract(2, /id)", "long", "-46"),
    ("subtract(/id, /id)", "long", "0"),
    ("subtract(-9223372036854775808, 1)", "long", "9223372036854775807"),
    ("subtract(9223372036854775807, -1)", "long", "-9223372036854775808"),
    ("subtract('1.0e308', '-1.0e308')", "double", "Infinity"),
    ("subtract('-1.0e308', '1.0e308')", "double", "-Infinity"),
    ("toNumber('1e1')", "double", "10.0"),
    ("toNumber(/id)", "int", "48"),
]


@pytest.mark.parametrize(("path", "kind", "text"), MATH, ids=[m[0] for m in MATH])
def test_nifi_math_cases(
    record: dict[str, Any], schema: Any, path: str, kind: str, text: str
) -> None:
    """Each ported MathFunctions case: Java's long wrap-around and double infinities, and the
    result type (long when both operands are whole)."""
    from flowcore.expression._values import java_double_to_string

    (fv,) = compile_record_path(path).evaluate(record, schema=schema)
    assert fv.type_name == kind
    shown = java_double_to_string(fv.value) if isinstance(fv.value, float) else str(fv.value)
    assert shown == text


@pytest.mark.parametrize("name", ["multiply", "divide", "add", "subtract"])
def test_math_operands(run: Any, name: str) -> None:
    """A null operand gives no result; a missing operand is NiFi's error message."""
    assert run(f"{name}(/notAField, 0)") == []
    assert run(f"{name}(0, /notAField)") == []
    with pytest.raises(RecordPathError, match=f"^{name} function requires a left-hand operand$"):
        run(f"{name}({name}(/notAField, 0), {name}(/notAField, 0))")
    with pytest.raises(RecordPathError, match=f"^{name} function requires a right-hand operand$"):
        run(f"{name}(0, {name}(/notAField, 0))")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("multiply(/numbers, 2)", "Cannot coerce field 'numbers' to number"),
        ("multiply(2, /firstName)", "Cannot coerce field 'firstName' to number"),
        ("multiply(2, 'hello')", "Cannot coerce field '<Anonymous Inner Field>' to number"),
        ("toNumber(/firstName)", "Cannot coerce field 'firstName' to number"),
        ("toNumber(multiply(/notAField, 0))", "toNumber function requires an operand"),
        ("divide(2, 0)", "Division by zero in RecordPath divide function"),
        ("divide('2.0', 0)", "Division by zero in RecordPath divide function"),
    ],
)
def test_nifi_math_errors(run: Any, path: str, message: str) -> None:
    """NiFi's math failures, with NiFi's exact messages."""
    with pytest.raises(RecordPathError) as caught:
        run(path)
    assert str(caught.value) == message


def test_to_number_of_null_and_missing(run: Any) -> None:
    """toNumber of a null field is that field, unchanged."""
    assert run("toNumber(/notAField)") == [None]


_GMT8 = datetime.timezone(datetime.timedelta(hours=8))
_LOCAL = datetime.datetime(2017, 10, 20, 12, 30, 45).astimezone()


@pytest.mark.parametrize(
    ("path", "changes", "expected"),
    [
        ("toDate(/date, \"yyyy-MM-dd'T'HH:mm:ss\")", {}, _LOCAL),
        ("toDate(/date, \"yyyy-MM-dd'T'HH:mm:ss\", 'GMT+8:00')", {}, _LOCAL.replace(tzinfo=_GMT8)),
        ("toDate(/date, /name)", {"name": "yyyy-MM-dd'T'HH:mm:ss"}, _LOCAL),
        (
            "toDate(/date, \"yyyy-MM-dd'T'HH:mm:ss\", /name)",
            {"name": "GMT+8:00"},
            _LOCAL.replace(tzinfo=_GMT8),
        ),
    ],
)
def test_nifi_to_date_cases(
    record: dict[str, Any], run: Any, path: str, changes: dict[str, Any], expected: Any
) -> None:
    """TestRecordPath.ToDate: the system zone by default, or the zone given (also by path)."""
    record["date"] = "2017-10-20T12:30:45"
    record.update(changes)
    (value,) = run(path)
    assert value == expected
    (fv,) = compile_record_path(path).evaluate(record)
    assert fv.type_name == "timestamp"


@pytest.mark.parametrize("field", ["id", "attributes", "mainAccount", "numbers", "bytes"])
def test_to_date_leaves_non_text_unchanged(record: dict[str, Any], run: Any, field: str) -> None:
    """NiFi's yieldsValueUnchangedWhenAppliedOnAFieldWithNonStringValue."""
    assert run(f"toDate(/{field}, 'yyyy-MM-dd')") == [record[field]]


@pytest.mark.parametrize("field", ["name", "attributes", "mainAccount", "numbers", "bytes"])
def test_format_leaves_non_dates_unchanged(record: dict[str, Any], run: Any, field: str) -> None:
    """NiFi's Format: a value that is neither a date nor a number stays as it is."""
    assert run(f"format(/{field}, 'yyyy-MM-dd')") == [record[field]]


def test_escape_json_of_a_record_with_its_schema(record: dict[str, Any]) -> None:
    """NiFi's escapeJson(/) on the reduced record: schema order, a missing field as null."""
    schema = RecordSchema(
        {"id": DataType("int"), "name": DataType("string"), "missing": DataType("string")}
    )
    reduced = {"name": record["name"], "id": record["id"]}
    (fv,) = compile_record_path("escapeJson(/)").evaluate(reduced, schema=schema)
    assert fv.value == '{"id":48,"name":"John Doe","missing":null}'


def test_decimal_values_compare_as_numbers(run: Any) -> None:
    """A decimal is a Java Number: equal to its text, ordered against numbers."""
    target = {"d": decimal.Decimal("1.5")}
    assert run("/d[. = '1.5']", target) == [decimal.Decimal("1.5")]
    assert run("/d[. > 1]", target) == [decimal.Decimal("1.5")]
    assert run("/d[. > '1_0']", target) == []  # Java does not read 1_0 as a number


_INSTANT = datetime.datetime(2017, 10, 20, 12, 30, 45, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "value", [int(_INSTANT.timestamp() * 1000), _INSTANT], ids=["epoch millis", "date"]
)
def test_nifi_format_cases(record: dict[str, Any], run: Any, value: Any) -> None:
    """TestRecordPath.Format: a long (epoch millis) or a date, in the system zone or one given."""
    record["id"] = value
    local_day = _INSTANT.astimezone().strftime("%Y-%m-%d")
    assert run("format(/id, 'yyyy-MM-dd')") == [local_day]
    assert run("format(/id, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'GMT')") == ["2017-10-20T12:30:45Z"]
    record["name"] = "GMT"
    assert run("format(/id, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", /name)") == ["2017-10-20T12:30:45Z"]
    (fv,) = compile_record_path("format(/id, 'yyyy-MM-dd')").evaluate(record)
    assert fv.type_name == "string"


def test_format_of_a_date_by_path_and_an_invalid_pattern(record: dict[str, Any], run: Any) -> None:
    """NiFi's supportsDefiningFormatAsPathReference and yieldsValueUnchangedWhenFormatIsInvalid."""
    record["id"] = datetime.date(2024, 8, 18)
    record["name"] = "yyyy-MM-dd"
    assert run("format(/id, /name)") == ["2024-08-18"]
    assert run("format(/id, 'INVALID')") == [datetime.date(2024, 8, 18)]
