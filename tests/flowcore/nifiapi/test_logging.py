"""Tests for nifiapi.logging: NiFi's logger methods and {} placeholders over Python logging."""

from __future__ import annotations

import logging
import pickle

import pytest

from nifiapi.logging import Logger


def test_placeholders_take_the_arguments_in_order(caplog: pytest.LogCaptureFixture) -> None:
    """SLF4J's {} are filled in order; warn is WARNING; a last exception adds its traceback."""
    logger = Logger("flowcore.processors.Sample")
    with caplog.at_level(logging.DEBUG, logger="flowcore.processors.Sample"):
        logger.warn("moved {} of {}", 3, 4)  # noqa: PLE1205 - NiFi's logger, not logging's
        logger.error("failed {}", "x", ValueError("boom"))  # noqa: PLE1205
        logger.trace("hidden at DEBUG")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "moved 3 of 4"),
        (logging.ERROR, "failed x"),
    ]
    assert caplog.records[1].exc_info is not None


def test_it_pickles_with_the_processor() -> None:
    """Only the name is kept, so a processor holding it ships to executors."""
    assert pickle.loads(pickle.dumps(Logger("a.b"))).name == "a.b"
