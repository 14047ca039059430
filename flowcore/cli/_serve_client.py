"""``flowcore run --server``: a run handed to ``flowcore serve``'s warm Spark session.

The client sends what the run needs to happen as it would here (the run's options as parsed,
the working directory, the environment, and how its terminal shows output), prints what the
server streams back as it comes, and exits with the run's status. Ctrl-C asks the server to
stop the run after the micro-batch in progress, as Ctrl-C does to a local run; a second
Ctrl-C leaves at once, and the server, seeing its client gone, stops the run the same way.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

import flowcore
from flowcore.cli._argv import SERVER_ENV
from flowcore.cli._common import UsageError, console, errors
from flowcore.cli._progress import EXIT_INTERRUPTED
from flowcore.cli._serve_wire import PROTOCOL, Channel, connect, default_socket

__all__ = ["LOCAL_ONLY_OPTIONS", "server_of", "submit"]

#: Options of ``run`` that concern the client only; everything else travels to the server.
LOCAL_ONLY_OPTIONS = frozenset({"command", "handler", "server"})


class _Leave(Exception):
    """A second Ctrl-C: the client leaves; the server stops the run on its own."""


def server_of(args: argparse.Namespace) -> Path | None:
    """The socket of the server *args* send the run to, or None to run here.

    ``--server PATH`` names it, ``--server`` alone the default socket of the run's master;
    without the option, :data:`~flowcore.cli._serve_wire.SERVER_ENV` does the same for Spark
    runs (a path, or ``default``), so a direct run still runs here.

    Raises:
        UsageError: ``--server`` with ``--runner direct``, which needs no session.
    """
    given = args.server
    if given is None:
        given = os.environ.get(SERVER_ENV, "")
        if not given or args.runner != "spark":
            return None
        given = "" if given == "default" else given
    elif args.runner != "spark":
        msg = (
            "--server runs the flow on a flowcore server's Spark session; drop --runner direct "
            "to run it there, or drop --server to run it here"
        )
        raise UsageError(msg)
    if given:
        return Path(given)
    from flowcore.runners.sessions import DEFAULT_MASTER  # noqa: PLC0415 - no engine, no pyspark

    return default_socket(args.master or DEFAULT_MASTER)


def _request(args: argparse.Namespace) -> dict[str, Any]:
    """What the server needs to run *args* as this process would."""
    options = {k: v for k, v in vars(args).items() if k not in LOCAL_ONLY_OPTIONS}
    environment = dict(os.environ)
    # rich lays out for the width this terminal has; the server's consoles are told it.
    environment["COLUMNS"] = str(console.width)
    environment["LINES"] = str(console.height)
    return {
        "protocol": PROTOCOL,
        "flowcore": str(Path(flowcore.__file__).resolve().parent),
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "options": options,
        "environment": environment,
        "terminal": {"stdout": console.is_terminal, "stderr": errors.is_terminal},
    }


def submit(path: Path, args: argparse.Namespace) -> int:
    """Run *args* on the server at *path*, printing its output here; the run's exit status.

    Raises:
        UsageError: no server at *path*, or it died before the run ended (the run's
            repository is then left as any crashed run leaves it, for the next run to
            recover).
    """
    channel = Channel(connect(path))
    try:
        channel.send(**_request(args))
        return _follow(channel, path)
    finally:
        channel.close()


def _follow(channel: Channel, path: Path) -> int:
    """Print the run's output as it comes, Ctrl-C passed on; its exit status."""
    asked: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        if asked and signum == signal.SIGINT:
            raise _Leave
        asked.append(signum)
        channel.send(stop=True)
        sys.stderr.write(
            "stopping after the current micro-batch (Ctrl-C again to leave; the server then "
            "stops the run the same way)\n"
        )

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            message = channel.receive()
            if message is None:
                msg = (
                    f"the flowcore server at {path} died during the run; its repository "
                    "recovers at the next run (nothing committed is lost): start the server "
                    "again with flowcore serve, or run without --server"
                )
                raise UsageError(msg)
            if "exit" in message:
                return int(message["exit"])
            for name, stream in (("out", sys.stdout), ("err", sys.stderr)):
                if name in message:
                    stream.write(message[name])
                    stream.flush()
            if "note" in message:
                sys.stderr.write(f"{message['note']}\n")
                sys.stderr.flush()
    except _Leave:
        sys.stderr.write("left the run; the server stops it after the current micro-batch\n")
        return EXIT_INTERRUPTED
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
