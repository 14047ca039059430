"""What the commands read off the command line before anything heavy is imported.

:mod:`flowcore.cli._early` starts the Spark session before the commands' modules (rich, the
engine) are imported, so what it shares with them lives here, importing nothing of flowcore's:
the server variable and the reading of ``key=value`` options.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SERVER_ENV", "split_pairs"]

#: The environment variable that sends ``flowcore run`` to a server (flowcore.cli.serve): a
#: socket path, or ``default`` for the default socket of the run's master; empty or unset runs
#: here.
SERVER_ENV = "FLOWCORE_SERVER"


def split_pairs(pairs: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """``key=value`` texts as a mapping (each side stripped), and the first text without ``=``.

    The caller decides what a malformed pair means: the commands refuse it by name, the early
    start leaves it to them.
    """
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            return values, pair
        values[key.strip()] = value.strip()
    return values, None
