"""NiFi's ``nifiapi.logging``: the ``self.logger`` a Python processor is given.

NiFi injects a ``Logger`` whose ``trace``/``debug``/``info``/``warn``/``error`` take a message
with ``{}`` placeholders (SLF4J's) and their arguments. Here it writes to the Python logger
``flowcore.processors.<Type>``, as flowcore's own processors log, so levels and handlers are
configured in one place. It holds only the logger's name, so a processor holding it pickles.
"""

from __future__ import annotations

import enum
import logging as _logging
from typing import Any

__all__ = ["LogLevel", "Logger"]


class LogLevel(enum.Enum):
    """NiFi's log levels."""

    TRACE = 1
    DEBUG = 2
    INFO = 3
    WARN = 4
    ERROR = 5


def _formatted(msg: Any, args: tuple[Any, ...]) -> str:
    """*msg* with each ``{}`` replaced by the next of *args* (SLF4J's placeholders)."""
    text = str(msg)
    if not args:
        return text
    parts = text.split("{}")
    out = [parts[0]]
    for index, part in enumerate(parts[1:]):
        out.append(str(args[index]) if index < len(args) else "{}")
        out.append(part)
    return "".join(out)


class Logger:
    """A processor's logger, with NiFi's methods over Python's :mod:`logging`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _log(self, level: int, msg: Any, args: tuple[Any, ...]) -> None:
        logger = _logging.getLogger(self.name)
        if logger.isEnabledFor(level):
            error = args[-1] if args and isinstance(args[-1], BaseException) else None
            logger.log(level, "%s", _formatted(msg, args), exc_info=error)

    def trace(self, msg: Any, *args: Any) -> None:
        """Log at TRACE (Python's DEBUG, one below)."""
        self._log(_logging.DEBUG - 5, msg, args)

    def debug(self, msg: Any, *args: Any) -> None:
        """Log at DEBUG."""
        self._log(_logging.DEBUG, msg, args)

    def info(self, msg: Any, *args: Any) -> None:
        """Log at INFO."""
        self._log(_logging.INFO, msg, args)

    def warn(self, msg: Any, *args: Any) -> None:
        """Log at WARN."""
        self._log(_logging.WARNING, msg, args)

    warning = warn

    def error(self, msg: Any, *args: Any) -> None:
        """Log at ERROR (a last argument that is an exception adds its traceback)."""
        self._log(_logging.ERROR, msg, args)

    def __repr__(self) -> str:
        return f"Logger({self.name!r})"
