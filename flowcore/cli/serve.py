"""``flowcore serve``: one warm Spark session for many ``flowcore run --server`` runs.

A cold ``flowcore run --runner spark`` pays the JVM's start and the Python workers' imports
(some 14 s on a small VM) before its first micro-batch. The server pays them once: it starts
the session as ``flowcore run`` would (same settings, the static sources on the JVM's path, the
workers warmed up), then runs the flows clients send it IN ITS OWN PROCESS, on that session,
one at a time (a request that comes during a run waits, and its client says so). Every run's
summary therefore says ``session reused``.

A request runs as the same ``flowcore run`` would in the client's process: in the client's
working directory, with its environment (Spark's own variables excepted: the session keeps the
server's), its options, and consoles shaped like its terminal; the flow file (and the modules
beside it) imported afresh, under a module name of its own, so an edited flow is seen and its
processors travel to the workers by value as a local run's do. What it prints streams back to
the client, which exits with its status. A user's mistake ends that run in the same one line
and status 2 as here; the server, and its session, serve the next.

The socket and its lock: :mod:`flowcore.cli._serve_wire`. SIGINT or SIGTERM stops the server
after the run in progress has stopped at the end of its micro-batch (a second SIGINT at once);
the session is stopped and the socket removed. A server killed outright leaves its socket,
which the next one replaces, and any run it had leaves its repository as a crashed run does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import queue
import signal
import socket
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

import flowcore
from flowcore.cli._common import USER_ERROR, UsageError, console, errors, parse_pairs
from flowcore.cli._handled import handled
from flowcore.cli._progress import EXIT_INTERRUPTED
from flowcore.cli._serve_wire import (
    PROTOCOL,
    Channel,
    checked_path,
    default_socket,
    lock_file,
    peer_credentials,
)
from flowcore.cli.run import add_command as add_run
from flowcore.cli.run import run_here

__all__ = ["add_command", "cmd_serve"]

_ACCEPT_POLL = 0.5  # seconds: how soon a stop request is seen between connections
_REQUEST_WAIT = 10.0  # seconds a new connection has to send its request
_BACKLOG = 16  # connections waiting for their turn in the kernel, beyond those queued here
#: Variables a served run keeps from the server's environment: the session was started with
#: them, and changing them under it would mean nothing or break it.
_SESSION_VARIABLES = ("SPARK_", "PYSPARK_", "JAVA_", "HADOOP_", "PYTHONHASHSEED")
_PACKAGES = ("flowcore", "processors", "repositories")


def cmd_serve(args: argparse.Namespace) -> int:
    """Start a Spark session and serve runs on a Unix socket until SIGINT or SIGTERM.

    Raises:
        UsageError: a server already serves the socket, or its path cannot be one.
        ConfigurationError: Spark cannot start on the master.
    """
    from flowcore.runners.sessions import DEFAULT_MASTER  # noqa: PLC0415 - no engine, no pyspark
    from repositories.locks import lock_holder, try_lock  # noqa: PLC0415

    conf = parse_pairs(args.conf)
    master = args.master or DEFAULT_MASTER
    path = checked_path(Path(args.socket)) if args.socket else default_socket(master)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = try_lock(lock_file(path))
    if lock is None:
        pid = lock_holder(lock_file(path))
        msg = (
            f"a flowcore server already serves {path} (pid {pid}); stop it (kill {pid}) or "
            "pass another --socket"
        )
        raise UsageError(msg)
    with lock:
        _remove_stale(path)
        return _Server(path, master, conf).serve()


def _remove_stale(path: Path) -> None:
    """Remove the socket a killed server left at *path* (its lock is free, so it is dead).

    Raises:
        UsageError: *path* is something else than a socket.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    import stat  # noqa: PLC0415

    if not stat.S_ISSOCK(info.st_mode):
        msg = f"{path} exists and is no socket; remove it or pass another --socket"
        raise UsageError(msg)
    path.unlink()


@attrs.define
class _Current:
    """The run in progress: whose, and its stop switch."""

    channel: Channel
    cancel: threading.Event
    flow: str
    pid: int


class _Server:
    """The listening socket, the session, and the thread that runs requests in turn.

    The main thread accepts connections and takes the signals; runs go on in one thread of their
    own, so that ``flowcore run``'s Ctrl-C handling (installed only in the main thread) stays
    out of the way and a signal reaches the server, which stops the run as Ctrl-C would.
    """

    def __init__(self, path: Path, master: str, conf: dict[str, str]) -> None:
        self.path = path
        self.master = master
        self.conf = conf
        self.runner: Any = None
        self.stopping = threading.Event()
        self.waiting: queue.Queue[Channel | None] = queue.Queue()
        self.current: _Current | None = None
        self.requests = 0
        self.status = 0
        self._out, self._log = sys.stdout, sys.stderr  # the server's own, whatever runs swap
        self._inode: int | None = None

    def serve(self) -> int:
        """Listen, start the session, serve until stopped; the exit status."""
        from flowcore.runners import make_runner  # noqa: PLC0415
        from flowcore.settings import Settings  # noqa: PLC0415

        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        listener = self._listen()
        try:
            # Bound first: a client that comes while the JVM starts waits in the backlog.
            self.runner = make_runner(
                "spark",
                master=self.master,
                conf=self.conf,
                connect_timeout=Settings().spark_connect_timeout_seconds,
            )
            if self.stopping.is_set():  # stopped while the session started
                return self.status
            self._say(
                f"serving Spark {self.runner.master} on {self.path}; session started in "
                f"{self.runner.start_seconds:.1f} s",
                self._out,
            )
            runs = threading.Thread(target=self._runs, name="flowcore-serve-runs", daemon=True)
            runs.start()
            self._accept(listener)
            self.waiting.put(None)
            runs.join()
        finally:
            listener.close()
            self._remove_socket()
            self._stop_session()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return self.status

    def _listen(self) -> socket.socket:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o077)  # the socket is born 0700: only its owner may connect
        try:
            listener.bind(os.fspath(self.path))
        finally:
            os.umask(mask)
        self._inode = self.path.stat().st_ino
        listener.listen(_BACKLOG)
        listener.settimeout(_ACCEPT_POLL)
        return listener

    def _accept(self, listener: socket.socket) -> None:
        """Take connections until stopped, queueing each for its turn."""
        while not self.stopping.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if self.current is None:
                    self._stop_if_session_gone()
                continue
            credentials = peer_credentials(connection)
            if credentials is not None and credentials[1] != os.getuid():
                connection.close()  # the socket's mode keeps others out; this is belt and braces
                continue
            channel = Channel(connection)
            current = self.current
            if current is not None or not self.waiting.empty():
                ahead = f" ({current.flow}, from pid {current.pid})" if current else ""
                channel.send(note=f"waiting for the server's current run{ahead}")
            self.waiting.put(channel)

    def _runs(self) -> None:
        """Serve queued requests in turn; once stopping, refuse those still waiting."""
        while (channel := self.waiting.get()) is not None:
            if self.stopping.is_set():
                told = f"error: the flowcore server at {self.path} stopped before this run started"
                channel.send(err=told + "\n")
                channel.send(exit=USER_ERROR)
                channel.close()
                continue
            try:
                self._serve_one(channel)
            finally:
                channel.close()
            self._stop_if_session_gone()

    def _serve_one(self, channel: Channel) -> None:
        channel.connection.settimeout(_REQUEST_WAIT)
        try:
            request = channel.receive()
        except TimeoutError:
            return
        channel.connection.settimeout(None)
        if request is None:
            return  # a probe, or a client gone before asking
        cancel = threading.Event()
        flow = str((request.get("options") or {}).get("flow", "?"))
        self.current = _Current(channel, cancel, flow, int(request.get("pid", 0)))
        watch = threading.Thread(target=_watch, args=(channel, cancel), daemon=True)
        watch.start()
        if self.stopping.is_set():
            cancel.set()
        started = time.monotonic()
        try:
            status = self._run(request, channel, cancel)
        finally:
            self.current = None
        channel.send(exit=status)
        self._say(
            f"ran {flow} for pid {request.get('pid')} in {request.get('cwd')}: exit status "
            f"{status} after {time.monotonic() - started:.1f} s",
            self._log,
        )

    def _run(self, request: dict[str, Any], channel: Channel, cancel: threading.Event) -> int:
        """Run *request* as its ``flowcore run`` would; its exit status."""
        self.requests += 1
        with _as_client(request, channel):
            try:
                return handled(lambda _: self._run_request(request, cancel), request)  # type: ignore[arg-type]
            except Exception:  # flowcore's own bug: shown as a local run shows it; serve on
                traceback.print_exc()
                traceback.print_exc(file=self._log)
                return 1

    def _run_request(self, request: dict[str, Any], cancel: threading.Event) -> int:
        ours = str(Path(flowcore.__file__).resolve().parent)
        if request.get("protocol") != PROTOCOL or request.get("flowcore") != ours:
            msg = (
                f"this flowcore ({request.get('flowcore')}) is not the one the server at "
                f"{self.path} runs ({ours}); use that one, or start a server with this one"
            )
            raise UsageError(msg)
        try:
            os.chdir(request["cwd"])
        except OSError as error:
            msg = f"the server cannot enter the run's directory {request['cwd']}: {error.strerror}"
            raise UsageError(msg) from None
        args = _run_defaults()
        options = request.get("options") or {}
        unknown = sorted(set(options) - set(vars(args)))
        if unknown:
            msg = f"the server at {self.path} does not know the options {unknown}; restart it"
            raise UsageError(msg)
        vars(args).update(options)
        self._check_session(args)
        gone = self._session_gone()
        if gone is not None:  # the JVM died since the last run (killed, out of memory)
            msg = (
                f"the Spark session of the flowcore server at {self.path} has ended ({gone}); "
                "nothing ran: start the server again with flowcore serve"
            )
            raise UsageError(msg)
        stem = Path(args.flow).stem.replace("-", "_")
        name = f"flowcore_flow_{stem}_served{self.requests}"
        return run_here(args, cancelled=cancel.is_set, module_name=name)

    def _check_session(self, args: argparse.Namespace) -> None:
        """Refuse a run asking for another runner, master or conf than the session has.

        Then the run takes the session as it is (no master, no conf of its own).
        """
        where = f"the flowcore server at {self.path}"
        if args.runner != "spark":
            msg = f"{where} runs flows on Spark; drop --runner {args.runner}, or --server"
            raise UsageError(msg)
        running = self.runner.master
        if args.master and args.master not in (self.master, running):
            msg = (
                f"--master {args.master} differs from the master of {where}, {running}: drop "
                f"--master to run there, or start a server on it: flowcore serve --master "
                f"{args.master}"
            )
            raise UsageError(msg)
        for key, value in parse_pairs(args.conf).items():
            if self.conf.get(key) != value:
                theirs = f"{key}={self.conf[key]}" if key in self.conf else f"{key} unset"
                msg = (
                    f"--conf {key}={value} differs from the Spark conf of {where} ({theirs}); "
                    "a session's conf is fixed when it starts: drop --conf, or start a server "
                    f"with it: flowcore serve --conf {key}={value}"
                )
                raise UsageError(msg)
        args.master, args.conf = None, []

    def _session_gone(self) -> str | None:
        """Why the session's JVM has ended, or None while it runs."""
        from flowcore.runners.spark_failures import jvm_exit  # noqa: PLC0415

        return jvm_exit(self.runner.context)

    def _stop_if_session_gone(self) -> None:
        """Stop serving (exit status 1) once the session's JVM has ended: nothing can run."""
        gone = self._session_gone()
        if gone is not None and not self.stopping.is_set():
            self._say(f"the server's Spark session ended ({gone}); stopping", self._log)
            self.status = 1
            self.stopping.set()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        """Stop serving: the run in progress after its micro-batch; at once on a second SIGINT.

        Stopping at once is a crash, which the repositories are made for: the run's
        micro-batch in progress is redone by the next run.
        """
        if self.stopping.is_set():
            if signum == signal.SIGINT:
                os.write(2, b"stopped at once; a run's micro-batch in progress is redone next\n")
                self._remove_socket()
                os._exit(EXIT_INTERRUPTED)
            return
        self.stopping.set()
        os.write(2, b"stopping: the run in progress (if any) stops after its micro-batch\n")
        current = self.current
        if current is not None:
            current.cancel.set()
            note = "the flowcore server is stopping: this run stops after the current micro-batch"
            threading.Thread(target=current.channel.send, kwargs={"note": note}).start()

    def _remove_socket(self) -> None:
        """Remove the socket file, if it is still the one this server bound."""
        with contextlib.suppress(OSError):
            if self._inode is not None and self.path.lstat().st_ino == self._inode:
                self.path.unlink()

    def _stop_session(self) -> None:
        if self.runner is not None:
            with contextlib.suppress(Exception):  # a JVM already gone has nothing to stop
                self.runner.session.stop()

    @staticmethod
    def _say(line: str, stream: Any) -> None:
        stream.write(line + "\n")
        stream.flush()


def _run_defaults() -> argparse.Namespace:
    """``run``'s options as its parser leaves them when only a flow is given."""
    parser = argparse.ArgumentParser(prog="flowcore")
    add_run(parser.add_subparsers())
    return parser.parse_args(["run", "flow"])


def _watch(channel: Channel, cancel: threading.Event) -> None:
    """Until the client goes: its Ctrl-C (a ``stop`` message) or its leaving stops the run."""
    while True:
        message = channel.receive()
        if message is None or message.get("stop"):
            cancel.set()
        if message is None:
            return


class _ClientStream(io.TextIOBase):
    """The client's stdout or stderr, as a text file the run writes to."""

    def __init__(self, channel: Channel, name: str, tty: bool) -> None:
        super().__init__()
        self._channel = channel
        self._name = name
        self._tty = tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def write(self, text: str) -> int:
        if text:
            self._channel.send(**{self._name: text})  # a client gone: its run is stopping
        return len(text)


@contextlib.contextmanager
def _as_client(request: dict[str, Any], channel: Channel) -> Iterator[None]:
    """Give the process the client's environment, output and terminal for one run.

    The working directory, ``os.environ``, ``sys.stdout``/``sys.stderr`` and flowcore's two
    consoles are the process's: the server runs one request at a time, and puts them all back
    after it. The consoles are rebuilt over the client's streams and environment (rich reads
    colours, width and ``NO_COLOR`` from it), then their state swapped in, since the commands
    hold them by name. Modules the run imported from outside Python's and flowcore's
    installation (the flow file, modules beside it) are forgotten, so the next request imports
    their files afresh.
    """
    cwd, environment = os.getcwd(), dict(os.environ)
    streams = sys.stdout, sys.stderr
    consoles = {c: dict(vars(c)) for c in (console, errors)}
    modules = set(sys.modules)
    terminal = request.get("terminal") or {}
    wanted = dict(request.get("environment") or {})
    wanted.update({k: v for k, v in environment.items() if k.startswith(_SESSION_VARIABLES)})
    out = _ClientStream(channel, "out", bool(terminal.get("stdout")))
    err = _ClientStream(channel, "err", bool(terminal.get("stderr")))
    try:
        os.environ.clear()
        os.environ.update(wanted)
        sys.stdout, sys.stderr = out, err
        for shown, stream, stderr in ((console, out, False), (errors, err, True)):
            fresh = type(shown)(file=stream, stderr=stderr, _environ=wanted)
            vars(shown).clear()
            vars(shown).update(vars(fresh))
        yield
    finally:
        sys.stdout, sys.stderr = streams
        for shown, state in consoles.items():
            vars(shown).clear()
            vars(shown).update(state)
        os.environ.clear()
        os.environ.update(environment)
        os.chdir(cwd)
        for name in set(sys.modules) - modules:
            if _users_module(name, sys.modules.get(name)):
                sys.modules.pop(name, None)


def _users_module(name: str, module: Any) -> bool:
    """Whether *module* is the user's (a flow file, a module beside it), not an installed one."""
    if name.startswith("flowcore_flow_"):
        return True
    location = getattr(module, "__file__", None)
    if not location:
        return False
    resolved = Path(location).resolve()
    paths = sysconfig.get_paths()
    installed = {Path(paths[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    root = Path(flowcore.__file__).resolve().parent.parent
    installed.update(root / package for package in _PACKAGES)
    return not any(resolved.is_relative_to(place) for place in installed)


def add_command(commands: Any) -> None:
    """Add ``serve`` to the command parsers."""
    serve = commands.add_parser(
        "serve",
        help="keep a Spark session for `flowcore run --server`",
        description="Start a Spark session once and run the flows `flowcore run --server` "
        "sends, one at a time, on it, until Ctrl-C or SIGTERM (docs/operations.md, 'A session "
        "kept between runs').",
        epilog="exit status: 0 stopped by Ctrl-C or SIGTERM; 1 the session's JVM ended; 2 a "
        "mistake (a server already serves the socket, Spark cannot start on the master); 130 "
        "stopped at once by a second Ctrl-C",
    )
    serve.add_argument("--master", help="Spark master URL (default local[*])")
    serve.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    serve.add_argument(
        "--socket",
        metavar="PATH",
        help="the Unix socket to serve on (default: one per user and master, in "
        "$XDG_RUNTIME_DIR/flowcore/, else ~/.flowcore/serve/)",
    )
    serve.set_defaults(handler=cmd_serve)
