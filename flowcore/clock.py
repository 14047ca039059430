"""The one clock: the current time in epoch milliseconds, as NiFi stamps FlowFiles and events.

Every wall-clock reading of the engine goes through :func:`now_ms`, so time is read one way
(integer milliseconds, no float rounding) and a test can see every place that reads it. Code
that must run on a harness or a replayed clock takes a ``clock`` callable instead and defaults
to this one.
"""

from __future__ import annotations

import time

__all__ = ["now_ms"]


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000
