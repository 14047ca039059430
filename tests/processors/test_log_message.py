"""Tests for LogMessage: NiFi's TestLogMessage cases, prefix, levels, deferred logging."""

from __future__ import annotations

import logging

import pytest

from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors import LogMessage

LOGGER = "flowcore.processors.LogMessage"


def test_info_message_logged(caplog: pytest.LogCaptureFixture) -> None:
    """The message's EL is evaluated against the FlowFile and logged at info (TestLogMessage)."""
    runner = TestRunner(
        LogMessage(
            log_message="This should help the operator to follow the flow: ${foobar}",
            log_level="info",
        )
    )
    runner.enqueue("This is a message!", {"foobar": "baz"})
    with caplog.at_level(5, logger=LOGGER):
        runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("This is a message!")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "This should help the operator to follow the flow: baz")
    ]


def test_prefix_is_prepended(caplog: pytest.LogCaptureFixture) -> None:
    """Log Prefix comes right before the message (TestLogMessage with prefix)."""
    runner = TestRunner(LogMessage(log_prefix="FOOBAR>>>", log_message="m: ${foobar}"))
    runner.enqueue("x", {"foobar": "baz"})
    with caplog.at_level(5, logger=LOGGER):
        runner.run()
    assert [r.getMessage() for r in caplog.records] == ["FOOBAR>>>m: baz"]


@pytest.mark.parametrize(
    ("level", "number"),
    [("TRACE", 5), ("debug", logging.DEBUG), ("Warn", logging.WARNING), ("ERROR", logging.ERROR)],
)
def test_levels_in_any_case(caplog: pytest.LogCaptureFixture, level: str, number: int) -> None:
    """Each level is valid in any case and logs at that level."""
    runner = TestRunner(LogMessage(log_level=level, log_message="hello"))
    runner.assert_valid()
    runner.enqueue("x")
    with caplog.at_level(5, logger=LOGGER):
        runner.run()
    assert [r.levelno for r in caplog.records] == [number]


def test_invalid_level_and_legacy_names() -> None:
    """An unknown level is invalid; NiFi 1's internal names (log-level...) are accepted."""
    TestRunner(LogMessage(log_level="whatever")).assert_not_valid()
    processor = LogMessage(**{"log-level": "warn", "log-prefix": "p", "log-message": "m"})
    assert processor.effective_value(LogMessage.LOG_LEVEL) == "warn"
    assert processor.effective_value(LogMessage.LOG_MESSAGE) == "m"


def test_level_from_an_attribute(caplog: pytest.LogCaptureFixture) -> None:
    """Log Level takes EL per FlowFile; one that evaluates to no level keeps the FlowFile queued."""
    runner = TestRunner(LogMessage(log_level="${lvl}", log_message="${n}"))
    runner.enqueue("a", {"lvl": "error", "n": "one"})
    with caplog.at_level(5, logger=LOGGER):
        runner.run()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.ERROR, "one")]
    runner = TestRunner(LogMessage(log_level="${lvl}", log_message="m"))
    runner.enqueue("b", {"lvl": "loud"})
    with pytest.raises(ProcessException, match="loud"):
        runner.run()
    assert runner.queue_size() == 1


def test_nothing_logged_below_the_logger_level(caplog: pytest.LogCaptureFixture) -> None:
    """A level the logger does not emit logs nothing; the FlowFile still passes on."""
    runner = TestRunner(LogMessage(log_level="debug", log_message="quiet"))
    runner.enqueue("x")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert caplog.records == []


def test_batch_form_logs_the_same_lines(caplog: pytest.LogCaptureFixture) -> None:
    """The batch form logs exactly on_trigger's lines, in order, and routes alike."""
    properties = {"log_level": "${lvl}", "log_prefix": "${p}", "log_message": "m ${n}"}
    lines = {}
    for batches in (True, False):
        runner = TestRunner(LogMessage(**properties), batches=batches)
        for n, (level, prefix) in enumerate([("info", "A:"), ("ERROR", ""), ("debug", " ")]):
            runner.enqueue("x", {"lvl": level, "p": prefix, "n": str(n)})
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=LOGGER):
            if batches:
                runner.assert_batch_form_agrees()
            else:
                runner.run()
        lines[batches] = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]
    assert lines[False] == [(logging.INFO, "A:m 0"), (logging.ERROR, "m 1")]
    assert lines[True] == lines[False] * 2  # the batch form's, then its one-by-one twin's


def test_batch_form_declines_a_bad_level() -> None:
    """A Log Level that is no level sends the batch one by one, where it is an error."""
    runner = TestRunner(LogMessage(log_level="${lvl}", log_message="m"), batches=True)
    runner.enqueue("a", {"lvl": "info"})
    runner.enqueue("b", {"lvl": "loud"})
    with pytest.raises(ProcessException, match="loud"):
        runner.run()
