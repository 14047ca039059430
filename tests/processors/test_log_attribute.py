"""Tests for LogAttribute."""

from __future__ import annotations

import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, LogAttribute, log_attribute


def log(caplog: pytest.LogCaptureFixture, attributes: dict[str, str], **properties: object) -> str:
    runner = TestRunner(LogAttribute(**properties))
    runner.enqueue("the payload", attributes)
    with caplog.at_level(5, logger="flowcore.processors.LogAttribute"):
        runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    return caplog.text


def test_logs_all_attributes_by_default(caplog: pytest.LogCaptureFixture) -> None:
    """Every attribute and the FlowFile properties are logged at info; no payload."""
    text = log(caplog, {"a": "1", "b": "2"})
    assert "Key: 'a'\n\tValue: '1'" in text
    assert "Key: 'fileSize'" in text
    assert "the payload" not in text
    assert caplog.records[0].levelno == logging.INFO


def test_selection_rules(caplog: pytest.LogCaptureFixture) -> None:
    """A name list with the default regex logs only those names; ignore rules remove names."""
    text = log(
        caplog, {"a": "1", "b": "2", "c": "3"}, attributes_to_log="a,b", attributes_to_ignore="b"
    )
    assert "Key: 'a'" in text
    assert "Key: 'b'" not in text
    assert "Key: 'c'" not in text
    caplog.clear()
    text = log(
        caplog,
        {"keep.x": "1", "drop.y": "2"},
        attributes_to_ignore_by_regular_expression="drop\\..*",
    )
    assert "keep.x" in text
    assert "drop.y" not in text


def test_payload_prefix_level_and_single_line(caplog: pytest.LogCaptureFixture) -> None:
    """Payload, prefix, single-line format and level are honoured."""
    text = log(
        caplog,
        {"a": "1"},
        log_payload=True,
        log_prefix="P:",
        output_format="Single Line",
        log_level="warn",
    )
    assert "the payload" in text
    assert "P:----" in text
    assert "a=1" in text
    assert caplog.records[0].levelno == logging.WARNING


def _count_renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the messages rendered, one FlowFile at a time or from a batch's columns."""
    renders: list[int] = []
    original = log_attribute._layout

    def counted(*args):  # type: ignore[no-untyped-def]
        renders.append(1)
        return original(*args)

    monkeypatch.setattr(log_attribute, "_layout", counted)
    return renders


def test_nothing_is_rendered_for_a_level_the_logger_does_not_emit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Below the logger's level no message is rendered (no payload read), and the FlowFile
    still passes to success."""
    renders = _count_renders(monkeypatch)
    runner = TestRunner(LogAttribute(log_payload=True))
    runner.enqueue("the payload")
    with caplog.at_level(logging.WARNING, logger="flowcore.processors.LogAttribute"):
        runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert renders == []
    assert caplog.records == []


def test_the_engine_asks_the_driver_s_logger(tmp_path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    """In a flow run, tasks render only what the driver's logging configuration emits."""
    renders = _count_renders(monkeypatch)
    flow = Flow("log")
    gen = flow.add(GenerateFlowFile(batch_size=3, file_size="4 B"), name="gen")
    logged = flow.add(LogAttribute(), name="log")
    flow.connect(gen, logged)
    flow.auto_terminate(logged, "success")
    with caplog.at_level(logging.WARNING, logger="flowcore.processors.LogAttribute"):
        result = flow.run(runner="direct", repository=str(tmp_path / "repo"))
    assert result.count("log", "success") == 3
    assert renders == []
    with caplog.at_level(logging.INFO, logger="flowcore.processors.LogAttribute"):
        flow.run(runner="direct", repository=str(tmp_path / "repo"))
    assert len(renders) == 3


_NAMES = st.sampled_from(["a", "b", "k", "filename", "path", "x.y"])
_VALUES = st.text(st.sampled_from("ab1 -"), max_size=4)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flowfiles=st.lists(
        st.tuples(st.binary(max_size=12), st.dictionaries(_NAMES, _VALUES, max_size=4)),
        min_size=1,
        max_size=12,
    ),
    payload=st.booleans(),
    properties=st.booleans(),
    single_line=st.booleans(),
    prefix=st.sampled_from([None, "p-", "${k}:", "${a:toUpper()}"]),
    selection=st.sampled_from(
        [
            {},
            {"attributes_to_log": "a,k"},
            {"Attributes to Ignore by Regular Expression": "a|file.*"},
            {"Attributes to Log by Regular Expression": "[ak]"},
            {"attributes_to_ignore": "uuid,path"},
        ]
    ),
)
def test_the_batch_form_logs_the_one_by_one_lines(
    caplog: pytest.LogCaptureFixture,
    *,
    flowfiles: list[tuple[bytes, dict[str, str]]],
    payload: bool,
    properties: bool,
    single_line: bool,
    prefix: str | None,
    selection: dict[str, str],
) -> None:
    """Rendered from columns (shared, varying, missing attributes; payloads; prefixes with
    Expression Language), the batch form's lines are on_trigger's, in the same order."""
    processor = LogAttribute(
        log_payload=str(payload).lower(),
        log_flowfile_properties=str(properties).lower(),
        output_format="Single Line" if single_line else "Line per Attribute",
        **({"log_prefix": prefix} if prefix else {}),
        **selection,
    )
    runner = TestRunner(processor)
    for content, attributes in flowfiles:
        runner.enqueue(content, attributes)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="flowcore.processors.LogAttribute"):
        runner.assert_batch_form_agrees()
    lines = [r.getMessage() for r in caplog.records]
    assert runner.batch_use.whole == len(flowfiles)
    assert lines[: len(flowfiles)] == lines[len(flowfiles) :]  # the batch form's, then the twin's
    assert len(lines) == 2 * len(flowfiles)


def test_the_batch_form_renders_nothing_below_the_logger_s_level(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Below the level, a batch goes through unread and unrendered."""
    renders = _count_renders(monkeypatch)
    runner = TestRunner(LogAttribute(log_payload="true"), batches=True)
    for index in range(5):
        runner.enqueue(f"line {index}")
    with caplog.at_level(logging.WARNING, logger="flowcore.processors.LogAttribute"):
        runner.run()
    runner.assert_all_flowfiles_transferred("success", 5)
    assert runner.batch_use.whole == 5
    assert renders == []
    assert caplog.records == []
