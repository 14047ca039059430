"""Tests for the GrokReader codec (cases after NiFi's TestGrokRecordReader)."""

from __future__ import annotations

import io

import pytest

from flowcore import patterns
from flowcore.errors import ConfigurationError, RegexTimeoutError
from flowcore.records.grok import (
    RAW_LINE,
    SKIP_LINE,
    GrokReaderOptions,
    compile_grok,
    grok_schema,
    parse_patterns,
    read_grok,
)
from flowcore.records.grok_patterns import DEFAULT_PATTERNS

DEFAULTS = parse_patterns(DEFAULT_PATTERNS)
NIFI_LOG = "%{TIMESTAMP_ISO8601:timestamp} %{LOGLEVEL:level} \\[%{DATA:thread}\\] %{DATA:class} "
NUMBERS = "%{NUMBER:first} %{NUMBER:second} %{NUMBER:third} %{NUMBER:fourth} %{NUMBER:fifth}"
_AT = (
    "        at org.apache.nifi.cluster.coordination.node.NodeClusterCoordinator"
    ".getElectedActiveCoordinatorAddress(NodeClusterCoordinator.java:185) "
    "[nifi-framework-cluster-1.0.0-SNAPSHOT.jar:1.0.0-SNAPSHOT]"
)
_EXCEPTION = (
    "org.apache.nifi.exception.UnitTestException: Testing to ensure we are able to capture "
    "stack traces"
)
STACK = "\n".join(
    [
        _EXCEPTION,
        _AT,
        "        at java.lang.Thread.run(Thread.java:745) [na:1.8.0_60]",
        "Caused by: " + _EXCEPTION,
        _AT,
        "    ... 12 common frames omitted",
    ]
)


def _records(text: str, expression: str, behavior: str = "append-to-previous-message") -> list:
    grok = compile_grok(expression, DEFAULTS)
    schema = grok_schema([grok])
    options = GrokReaderOptions(no_match_behavior=behavior)
    batches = read_grok(io.BytesIO(text.encode()), [grok], schema, options)
    return [row for batch in batches for row in batch.to_pylist()]


def test_parse_single_line_log_messages() -> None:
    """testParseSingleLineLogMessages: five fields, stackTrace null, _raw the line."""
    levels = ["INFO", "WARN", "ERROR", "FATAL", "FINE"]
    messages = ["Test Message 1", "Red", "Green", "Blue", "Yellow"]
    lines = [f"2016-11-08 21:24:23,029 {lv} {m}" for lv, m in zip(levels, messages, strict=True)]
    rows = _records(
        "\n".join(lines) + "\n",
        "%{TIMESTAMP_ISO8601:timestamp} %{LOGLEVEL:level} %{GREEDYDATA:message}",
    )
    assert [list(r.values()) for r in rows] == [
        ["2016-11-08 21:24:23,029", lv, m, None, line]
        for lv, m, line in zip(levels, messages, lines, strict=True)
    ]


def test_parse_empty_message_with_stack_trace() -> None:
    """testParseEmptyMessageWithStackTrace: an empty message, the trace ending the content."""
    msg = (
        "2016-08-04 13:26:32,473 INFO [Leader Election Notification Thread-1] o.a.n.LoggerClass \n"
        "org.apache.nifi.exception.UnitTestException: Testing to ensure we are able to capture "
        "stack traces"
    )
    (row,) = _records(msg, NIFI_LOG + "%{GREEDYDATA:message}")
    assert list(row.values()) == [
        "2016-08-04 13:26:32,473",
        "INFO",
        "Leader Election Notification Thread-1",
        "o.a.n.LoggerClass",
        "",
        "org.apache.nifi.exception.UnitTestException: Testing to ensure we are able to capture "
        "stack traces",
        msg,
    ]


def test_parse_multiline_with_stack_trace() -> None:
    """testParseNiFiSampleMultilineWithStackTrace: lines appended to the message, then the trace."""
    text = (
        "2016-08-04 13:26:32,473 INFO [main] o.a.n.A first\n"
        "2016-08-04 13:26:32,474 ERROR [Leader Election Notification Thread-2] "
        "o.apache.nifi.controller.FlowController One\nTwo\nThree\n" + STACK + "\n"
        "2016-08-04 13:26:35,475 WARN [main] o.a.n.B last\n"
    )
    rows = _records(text, NIFI_LOG + "%{GREEDYDATA:message}?")
    assert [r["level"] for r in rows] == ["INFO", "ERROR", "WARN"]
    error = rows[1]
    assert error["message"] == "One\nTwo\nThree"
    assert error["stackTrace"] == STACK
    assert error["_raw"].startswith(
        "2016-08-04 13:26:32,474 ERROR [Leader Election Notification Thread-2] "
        "o.apache.nifi.controller.FlowController One\nTwo"
    )
    assert error["_raw"].endswith("\n    ... 12 common frames omitted")
    assert rows[0]["stackTrace"] is None
    assert rows[2]["stackTrace"] is None


def test_inherit_named_parameters() -> None:
    """testInheritNamedParameters: names inside patterns (SYSLOGBASE) are fields too."""
    grok = compile_grok("%{SYSLOGBASE}%{GREEDYDATA:message}", DEFAULTS)
    schema = grok_schema([grok])
    assert sorted(schema.names) == sorted(
        [
            *("timestamp", "logsource", "facility", "priority", "program", "pid", "message"),
            *("stackTrace", "_raw"),
        ]
    )
    (row,) = _records(
        "May 22 15:58:23 my-host nifi[12345]:My Message", "%{SYSLOGBASE}%{GREEDYDATA:message}"
    )
    assert row["timestamp"] == "May 22 15:58:23"
    assert row["logsource"] == "my-host"
    assert row["facility"] is None
    assert row["program"] == "nifi"
    assert row["pid"] == "12345"
    assert row["message"] == "My Message"
    assert row["_raw"] == "May 22 15:58:23 my-host nifi[12345]:My Message"


def test_skip_unmatched_lines() -> None:
    """testSkipUnmatchedRecordFirstLine / Middle: lines that match nothing are dropped."""
    first = _records("hello there\n1 2 3 4 5", NUMBERS, SKIP_LINE)
    assert [(r["first"], r["fifth"], r["_raw"]) for r in first] == [
        ("1", "5", "hello there1 2 3 4 5")
    ]
    middle = _records("1 2 3 4 5\nhello there\n1 2 3 4 5", NUMBERS, SKIP_LINE)
    assert [r["_raw"] for r in middle] == ["1 2 3 4 5", "1 2 3 4 5"]


def test_raw_unmatched_lines() -> None:
    """testRawUnmatchedRecordFirstLine / Middle / Last: an unmatched line is a record of _raw."""
    assert [
        (r["first"], r["_raw"]) for r in _records("hello there\n1 2 3 4 5", NUMBERS, RAW_LINE)
    ] == [
        (None, "hello there"),
        ("1", "1 2 3 4 5"),
    ]
    middle = _records("1 2 3 4 5\nhello there\n1 2 3 4 5", NUMBERS, RAW_LINE)
    assert [(r["first"], r["_raw"]) for r in middle] == [
        ("1", "1 2 3 4 5"),
        (None, "hello there"),
        ("1", "1 2 3 4 5"),
    ]
    last = _records("1 2 3 4 5\nhello there", NUMBERS, RAW_LINE)
    assert [(r["fifth"], r["_raw"]) for r in last] == [("5", "1 2 3 4 5"), (None, "hello there")]


def test_expressions_are_tried_in_order() -> None:
    """Grok Expressions: the first expression that matches a line gives its record."""
    a = compile_grok("A %{WORD:word}", DEFAULTS)
    b = compile_grok("B %{INT:number}", DEFAULTS)
    schema = grok_schema([a, b])
    assert schema.names == ("word", "number", "stackTrace", "_raw")
    rows = [
        r
        for batch in read_grok(io.BytesIO(b"A x\nB 7\n"), [a, b], schema)
        for r in batch.to_pylist()
    ]
    assert [(r["word"], r["number"]) for r in rows] == [("x", None), (None, "7")]


def test_apache_log_and_quotes_and_repeated_names() -> None:
    """COMBINEDAPACHELOG: quoted values lose their quotes (java-grok's cleanString)."""
    line = (
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 '
        '"http://www.example.com/start.html" "Mozilla/4.08"'
    )
    (row,) = _records(line, "%{COMBINEDAPACHELOG}")
    assert row["clientip"] == "127.0.0.1"
    assert row["verb"] == "GET"
    assert row["bytes"] == "2326"
    assert row["referrer"] == "http://www.example.com/start.html"
    assert row["agent"] == "Mozilla/4.08"


def test_inline_definitions_and_types_in_names() -> None:
    """``%{NAME:field=regex}`` defines a pattern; ``%{NUMBER:n:int}`` captures as n."""
    (row,) = _records("id-42 7", "%{ID:ident=id-\\d+} %{NUMBER:n:int}")
    assert (row["ident"], row["n"]) == ("id-42", "7")


def test_an_unknown_pattern_is_a_configuration_error() -> None:
    """java-grok's message: No definition for key found."""
    with pytest.raises(ConfigurationError, match="No definition for key 'NOPE'"):
        compile_grok("%{NOPE:x}", DEFAULTS)


def test_a_catastrophic_expression_is_bounded() -> None:
    """A user expression that backtracks stops at the regex time limit instead of hanging."""
    grok = compile_grok("%{BAD:x}", {"BAD": "(a|aa)+$"})
    previous = patterns.time_limit()
    patterns.set_time_limit(0.05)
    try:
        with pytest.raises(RegexTimeoutError):
            list(read_grok(io.BytesIO(b"a" * 40 + b"b"), [grok], grok_schema([grok])))
    finally:
        patterns.set_time_limit(previous)
