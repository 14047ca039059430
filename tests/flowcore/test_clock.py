"""Tests for flowcore/clock.py: the one clock."""

from __future__ import annotations

import time

from flowcore.clock import now_ms


def test_now_is_integer_epoch_milliseconds() -> None:
    """now_ms reads the wall clock in whole milliseconds, as NiFi stamps FlowFiles."""
    before = int(time.time() * 1000)
    now = now_ms()
    after = int(time.time() * 1000) + 1
    assert isinstance(now, int)
    assert before <= now <= after
