"""The Spark session of a ``flowcore run`` begun before the command's own imports.

A cold ``flowcore run`` on Spark waits for the JVM (about 10 s on a small VM) and, before it
needs the session, imports the commands, the engine and the processors, loads the flow file,
compiles it and opens the repositories (about 2 s). Begun first, in a thread, the session
starts while that work is done (:func:`flowcore.runners.sessions.start_early`), so the driver's
own start costs nothing beyond the JVM's. Only for ``run`` on the Spark runner with a local
master, not sent to a server, and only as the process's command (``main()`` without arguments);
anything it cannot read plainly from the command line leaves the session to start as before.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from flowcore.cli._argv import SERVER_ENV, split_pairs

__all__ = ["start_spark_early"]


def start_spark_early(argv: Sequence[str]) -> bool:
    """Begin the session ``flowcore run`` *argv* will use; whether it did."""
    if not argv or argv[0] != "run" or os.environ.get(SERVER_ENV):
        return False
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--runner", default="spark")
    parser.add_argument("--master")
    parser.add_argument("--conf", action="append", default=[])
    parser.add_argument("--server", nargs="?", const="default")
    parser.add_argument("-h", "--help", action="store_true")
    try:
        known, _ = parser.parse_known_args(list(argv[1:]))
    except SystemExit:  # argparse's own complaint: the real parser reports it
        return False
    if known.help or known.server is not None or known.runner != "spark":
        return False
    conf, malformed = split_pairs(known.conf)
    if malformed is not None:
        return False  # the real parser names the mistake
    from flowcore.runners.sessions import start_early  # noqa: PLC0415 - light: no engine

    return start_early(known.master, conf)
