"""The ``flowcore`` command: run, explain, convert, status, provenance, check, adopt, dataset, ...

One module per command (``run``, ``serve``, ``explain``, ``convert``, ``status``, ``provenance``,
``check``, ``adopt``, ``datasets``, ``catalog``), each adding its parser with ``add_command``;
what they share is in :mod:`flowcore.cli._common`.

Mistakes a user can make (a bad flow, a missing file, a repository in use) print one clear
message and exit with status 2; only flowcore's own bugs show a traceback. A batch ``run`` that
ends with FlowFiles it could not finish prints a ``stuck:`` line per queue and exits with 3. A
command whose standard output is closed early (``flowcore dataset cat DS | head``) stops quietly
with status 141, as ``cat`` killed by SIGPIPE does (docs/operations.md, "Errors and exit statuses").
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from flowcore.cli._early import start_spark_early

__all__ = ["load_flow", "main", "print_result"]

#: Each command's module, by command, in the order ``flowcore --help`` lists them. They are
#: imported when the parser is made, after a ``run`` on Spark has begun its session
#: (:mod:`._early`); a command line naming a command imports that command's module alone (the
#: others' imports, the web UI's and NiFi export's among them, would only slow every start).
COMMANDS = {
    "run": "run",
    "serve": "serve",
    "explain": "explain",
    "convert": "convert",
    "status": "status",
    "provenance": "provenance",
    "check": "check",
    "adopt": "adopt",
    "dataset": "datasets",
    "processors": "catalog",
    "ui": "ui",
}


def __getattr__(name: str) -> Any:
    """``load_flow`` and ``print_result``, imported when first asked for."""
    if name == "load_flow":
        from flowcore.cli._common import load_flow  # noqa: PLC0415

        return load_flow
    if name == "print_result":
        from flowcore.cli.run import print_result  # noqa: PLC0415

        return print_result
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of *argv*: its command's alone when it starts with one, else every command's.

    Every command's is made for ``--help`` and for argparse to name a mistyped command.
    """
    parser = argparse.ArgumentParser(
        prog="flowcore", description="NiFi-style flows compiled to Apache Spark."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    named = COMMANDS.get(argv[0]) if argv else None
    for module in COMMANDS.values() if named is None else (named,):
        importlib.import_module(f"flowcore.cli.{module}").add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point.

    Returns:
        The exit status: 0 done, 2 a user's mistake (one line on stderr), 3 a batch run that
        could not finish its FlowFiles, 141 standard output closed by its reader.
    """
    if argv is None:  # the process's own command: a run on Spark begins its session now
        start_spark_early(sys.argv[1:])
    try:
        try:
            status = _dispatch(argv)
        finally:  # here, not at exit, where a closed pipe could only be complained of
            sys.stdout.flush()  # argparse's --help too, which exits with SystemExit
    except BrokenPipeError:
        return _closed_output()
    return status


def _closed_output() -> int:
    """Stop quietly once standard output's reader has gone (``| head``), as Unix tools do.

    Whatever is still buffered for stdout can never be written: stdout is pointed at the null
    device, so that Python's flush at exit does not print a second error.
    """
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())
    from flowcore.cli._common import CLOSED_OUTPUT  # noqa: PLC0415

    return CLOSED_OUTPUT


def _dispatch(argv: Sequence[str] | None) -> int:
    """Run the command; a user's mistake becomes one line on stderr and :data:`USER_ERROR`."""
    words = sys.argv[1:] if argv is None else list(argv)
    args = _parser(words).parse_args(words)
    from flowcore.cli._handled import handled  # noqa: PLC0415

    return handled(args.handler, args)


if __name__ == "__main__":
    sys.exit(main())
