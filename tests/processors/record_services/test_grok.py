"""Tests for the GrokReader service: properties, validation, reading (after TestGrokReader)."""

from __future__ import annotations

import io
from pathlib import Path

from flowcore.controller_service import ServiceContext
from flowcore.registry import BUILTIN_SERVICES
from flowcore.testing import TestRunner
from processors import ConvertRecord
from processors.record_services import GrokReader, JsonRecordSetWriter

LOG = b"""2016-08-04 13:26:32,473 INFO [main] o.a.n.A started
2016-08-04 13:26:32,474 ERROR [main] o.a.n.B failed
continued here
"""


def _rows(reader: GrokReader, content: bytes) -> list[dict]:
    enabled = reader.enable(ServiceContext(reader))
    return [r for b in enabled.create_reader({}, io.BytesIO(content)) for r in b.to_pylist()]


def test_nifi_names_defaults_and_nifi_1_names() -> None:
    """NiFi's defaults; NiFi 1's property names are aliases; the service is registered."""
    reader = GrokReader(
        "g", **{"Grok Expression": "%{GREEDYDATA:m}", "Grok Pattern File": "X \\d+"}
    )
    assert reader.get_property("Grok Expressions").value == "%{GREEDYDATA:m}"
    assert reader.get_property("Grok Patterns").value == "X \\d+"
    assert reader.get_property("No Match Behavior").value == "append-to-previous-message"
    assert (
        reader.get_property("Schema Access Strategy").value == "string-fields-from-grok-expression"
    )
    assert BUILTIN_SERVICES["GrokReader"] is GrokReader


def test_invalid_expressions_are_named() -> None:
    """An undefined pattern fails validation naming it; a required expression is required."""
    problems = GrokReader("g", grok_expressions="%{NOPE:x}").validate()
    assert any("No definition for key 'NOPE'" in p.explanation for p in problems)
    assert GrokReader("g").validate()
    assert not GrokReader("g", grok_expressions="%{WORD:w}").validate()


def test_reads_log_lines_with_the_grok_schema() -> None:
    """The default strategy: string fields from the expression, stackTrace and _raw."""
    expression = (
        "%{TIMESTAMP_ISO8601:timestamp} %{LOGLEVEL:level} \\[%{DATA:thread}\\] %{GREEDYDATA:msg}"
    )
    rows = _rows(GrokReader("g", grok_expressions=expression), LOG)
    assert [r["level"] for r in rows] == ["INFO", "ERROR"]
    assert rows[1]["msg"] == "o.a.n.B failed\ncontinued here"
    assert list(rows[0]) == ["timestamp", "level", "thread", "msg", "stackTrace", "_raw"]


def test_patterns_and_expressions_from_files(tmp_path: Path) -> None:
    """Grok Patterns and Grok Expressions may name files; user patterns override defaults."""
    patterns = tmp_path / "patterns.txt"
    patterns.write_text("# mine\nLOGLEVEL (?:INFO|ERROR)\nTHREAD \\[[^\\]]+\\]\n")
    expressions = tmp_path / "expressions.txt"
    expressions.write_text("%{TIMESTAMP_ISO8601:ts} %{LOGLEVEL:level} %{THREAD:thread}\n")
    reader = GrokReader(
        "g",
        grok_patterns=str(patterns),
        grok_expressions=str(expressions),
        no_match_behavior="skip-line",
    )
    rows = _rows(reader, LOG)
    assert [(r["level"], r["thread"]) for r in rows] == [("INFO", "[main]"), ("ERROR", "[main]")]


def test_a_schema_text_types_the_fields() -> None:
    """Schema Text: the captures are coerced to its types (empty text is null)."""
    schema = (
        '{"type":"record","name":"r","fields":[{"name":"n","type":["null","int"]},'
        '{"name":"_raw","type":["null","string"]}]}'
    )
    reader = GrokReader(
        "g",
        grok_expressions="%{INT:n}?x",
        schema_access_strategy="schema-text-property",
        schema_text=schema,
    )
    assert _rows(reader, b"12x\n") == [{"n": 12, "_raw": "12x"}]


def test_convert_record_log_lines_to_json() -> None:
    """ConvertRecord with GrokReader: log lines become JSON records."""

    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(GrokReader("reader", grok_expressions="%{LOGLEVEL:level} %{GREEDYDATA:msg}"))
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    runner.enqueue(b"INFO one\nWARN two\n")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals(
        '{"level":"INFO","msg":"one","stackTrace":null,"_raw":"INFO one"}\n'
        '{"level":"WARN","msg":"two","stackTrace":null,"_raw":"WARN two"}'
    )


def test_a_missing_pattern_file_is_named(tmp_path: Path) -> None:
    """NiFi 1's Grok Pattern File naming no file is a validation problem naming it."""
    missing = str(tmp_path / "nope.txt")
    problems = GrokReader("g", grok_expressions="%{WORD:w}", grok_patterns=missing).validate()
    assert any("does not exist" in p.explanation for p in problems)
