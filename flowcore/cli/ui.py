"""``flowcore ui``: the web UI over a flow and its repository (docs/ui.md).

It reads the repository without its lock (read-only, as ``status`` and ``provenance`` do), so
it works while a run holds the repository in another process and after the run ended. It binds
to loopback unless told otherwise; any other address needs a token on every request (given in
``FLOWCORE_UI_TOKEN`` or with ``--token``, which ``ps`` shows, or generated and printed at
start). Starlette and uvicorn (the ``ui`` extra) are imported only when the command runs, so
other commands do not pay for them.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from flowcore.cli._common import UsageError, console, load_flow, repository_of, with_repository

__all__ = ["add_command", "cmd_ui", "is_loopback", "prepare"]

INSTALL_UI = "flowcore ui needs Starlette and uvicorn: pip install 'flowcore[ui]'"
#: The environment variable a token may come from: one given with ``--token`` shows in ``ps``.
TOKEN_VARIABLE = "FLOWCORE_UI_TOKEN"


def is_loopback(host: str) -> bool:
    """Whether *host* is a loopback address (or ``localhost``): no token needed there."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _document(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """The flow's document: from the flow file, or from the record the repository keeps.

    Raises:
        UsageError: the repository belongs to another flow, or no flow is given and the
            repository records none.
    """
    from flowcore.driver.identity import read_record  # noqa: PLC0415
    from flowcore.ui.flow_document import flow_document, recorded_document  # noqa: PLC0415
    from flowcore.ui.nifi_groups import read_nifi_groups  # noqa: PLC0415
    from repositories.flowfile_wal import WriteAheadFlowFileRepository  # noqa: PLC0415

    record = read_record(WriteAheadFlowFileRepository(directory / "flowfile", read_only=True))
    if args.flow is None:
        if record is None:
            msg = f"repository {directory} records no flow yet; name the flow: flowcore ui FLOW"
            raise UsageError(msg)
        return recorded_document(record)
    flow = load_flow(args.flow)
    if record is not None and record.flow != flow.name:
        msg = (
            f"repository {directory} belongs to flow {record.flow!r}, not {flow.name!r}: pass "
            f"the repository {flow.name!r} ran with (--repository DIR)"
        )
        raise UsageError(msg)
    runnable = flow.runnable() if hasattr(flow, "runnable") else flow
    nifi = str(args.flow).lower().endswith((".json", ".gz"))
    return flow_document(runnable, groups=read_nifi_groups(args.flow) if nifi else None)


def _editor(flow: str | None) -> Any:
    """The editor of a NiFi 2.x JSON flow definition; None for any other flow (read-only)."""
    from flowcore.ui.editing import EditError, FlowEditor  # noqa: PLC0415

    if flow is None or not str(flow).lower().endswith((".json", ".json.gz")):
        return None
    try:
        return FlowEditor(flow)
    except EditError:  # a 1.x export or a registry snapshot: shown, not edited
        return None


def prepare(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The ASGI app the command serves, and the token it requires (None on loopback).

    Raises:
        UsageError: a flow or repository mistake, or the ``ui`` extra is not installed.
    """
    try:
        from flowcore.ui.reading import RepositoryView  # noqa: PLC0415
        from flowcore.ui.server import create_app  # noqa: PLC0415
    except ModuleNotFoundError as missing:
        if missing.name and missing.name.split(".")[0] in ("starlette", "uvicorn"):
            raise UsageError(INSTALL_UI) from None
        raise
    directory = repository_of(args, args.flow).resolve()
    if not (directory / "flowfile").is_dir():
        msg = (
            f"{directory} holds no flowcore repository (no flowfile/ there); run the flow "
            "first, or pass the repository it ran with (--repository DIR)"
        )
        raise UsageError(msg)
    document = _document(args, directory)
    editor = _editor(args.flow)
    if editor is not None:
        document = {**document, "editable": True, "dirty": False}
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if token is None and not is_loopback(args.host):
        token = secrets.token_urlsafe(24)
    app = create_app(
        RepositoryView(directory), document, token=token, flow_path=args.flow, editor=editor
    )
    return app, token


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on *host*:*port*, or one line saying why not.

    Raises:
        UsageError: the port is in use, or the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            msg = f"port {port} on {host} is in use; pass another with --port"
        else:
            msg = f"cannot listen on {host}:{port} ({error.strerror or error}); check --host"
        raise UsageError(msg) from None
    except socket.gaierror as error:
        sock.close()
        msg = f"cannot listen on {host}:{port} ({error.strerror}); check --host"
        raise UsageError(msg) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def cmd_ui(args: argparse.Namespace) -> int:
    """Serve the UI until interrupted."""
    try:
        import uvicorn  # noqa: PLC0415
    except ModuleNotFoundError:
        raise UsageError(INSTALL_UI) from None
    app, token = prepare(args)
    sock = _bind(args.host, args.port)
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{port}/"
    if token is not None:
        url += f"?token={token}"
    console.print(f"flowcore ui: {url}  (Ctrl-C stops it)", highlight=False, markup=False)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0


def add_command(commands: Any) -> None:
    """Add ``ui`` to the command parsers."""
    ui = commands.add_parser(
        "ui",
        help="the web UI: canvas, queues, content, provenance (live while a run runs)",
        description="Serve a web UI for a flow and its repository, live while a run runs in "
        "another process and after it ended (docs/ui.md).",
    )
    ui.add_argument(
        "flow", nargs="?", help="the flow file (default: the flow the repository records)"
    )
    ui.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    ui.add_argument("--port", type=int, default=8080, help="port (0: any free one)")
    ui.add_argument(
        "--token",
        help=f"the token required off loopback (default: ${TOKEN_VARIABLE}, else generated and "
        "printed; the variable keeps it out of ps)",
    )
    with_repository(ui)
    ui.set_defaults(handler=cmd_ui)
