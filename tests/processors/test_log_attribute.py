"""Tests for LogAttribute."""

from __future__ import annotations

import logging

import pytest

from flowcore.testing import TestRunner
from processors import LogAttribute


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
