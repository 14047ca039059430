"""Processor log records at WARNING or above become bulletins, as NiFi's do.

NiFi turns what a processor logs at its bulletin level (WARN by default) or above into a
bulletin on its component, so an operator sees "Cannot write ...; routing to failure" on the
bulletin board, not only in a log file. flowcore's processors log through their type's logger
(``flowcore.processors.<Type>``); a task marks which member is running (:func:`running`), and
one handler on ``flowcore.processors`` turns such records into that member's bulletins, which
the task returns with its result (so they reach ``flowcore status`` from Spark executors too).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import weakref
from collections.abc import Iterator
from typing import Protocol

__all__ = ["BULLETIN_LEVEL", "running"]

#: NiFi's default bulletin level: WARN and above.
BULLETIN_LEVEL = logging.WARNING
#: Log bulletins one member makes in one task; past them, a processor that warns about every
#: FlowFile (a million failing writes) keeps its lines in the log only. NiFi's bulletin board
#: keeps the last few per component too.
MAX_LOG_BULLETINS = 100


class _Bulletins(Protocol):
    def bulletin(self, message: str, level: str = "ERROR") -> None: ...


_RUNNING: contextvars.ContextVar[_Bulletins | None] = contextvars.ContextVar(
    "flowcore_running_member", default=None
)
#: Log bulletins made so far by each member (a member lives for one task).
_MADE: weakref.WeakKeyDictionary[_Bulletins, int] = weakref.WeakKeyDictionary()


class _ToBulletins(logging.Handler):
    """Hands a processor's log record to the member running in this thread, as a bulletin."""

    def emit(self, record: logging.LogRecord) -> None:
        member = _RUNNING.get()
        made = _MADE.get(member, 0) if member is not None else MAX_LOG_BULLETINS + 1
        if made < MAX_LOG_BULLETINS:
            try:
                message = record.getMessage()
            except Exception:  # a bad format string must not fail the processor
                message = str(record.msg)
            level = "ERROR" if record.levelno >= logging.ERROR else "WARNING"
            member.bulletin(message, level)  # type: ignore[union-attr]
        elif made == MAX_LOG_BULLETINS:
            member.bulletin(  # type: ignore[union-attr]
                f"more than {MAX_LOG_BULLETINS} warnings in one task: the rest are in the log only",
                "WARNING",
            )
        if member is not None:
            _MADE[member] = made + 1
        # Being a handler, this one would keep Python from writing the record to stderr when
        # nothing else handles it (``logging.lastResort``): do that as Python would have.
        last = logging.lastResort
        if last is not None and record.levelno >= last.level and not _handled_elsewhere(record):
            last.handle(record)


def _handled_elsewhere(record: logging.LogRecord) -> bool:
    """Whether a handler other than this module's sees *record* (as ``callHandlers`` walks)."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(not isinstance(h, _ToBulletins) for h in logger.handlers):
            return True
        logger = logger.parent if logger.propagate else None
    return False


def _install() -> None:
    """Put one handler on the processors' parent logger (once per process)."""
    parent = logging.getLogger("flowcore.processors")
    if not any(isinstance(h, _ToBulletins) for h in parent.handlers):
        parent.addHandler(_ToBulletins(BULLETIN_LEVEL))


@contextlib.contextmanager
def running(member: _Bulletins) -> Iterator[None]:
    """While the block runs, what processors log at WARNING or above is *member*'s bulletin."""
    _install()
    token = _RUNNING.set(member)
    try:
        yield
    finally:
        _RUNNING.reset(token)
