"""What the ``flowcore`` commands share: consoles, the user-error type, flow and repository lookup.

Mistakes a user can make raise :class:`UsageError` (or another
:class:`~flowcore.errors.FlowcoreError`); :func:`flowcore.cli.main` prints them as one line
and exits with :data:`USER_ERROR`.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from flowcore.cli._argv import split_pairs
from flowcore.definition.flow import FlowDefinition
from flowcore.definition.validation import short_secret_warnings
from flowcore.errors import FlowcoreError
from flowcore.parameters import layered, load_parameters
from flowcore.settings import DEFAULT_REPOSITORY, Settings

__all__ = [
    "CLOSED_OUTPUT",
    "USER_ERROR",
    "UsageError",
    "apply_parameters",
    "console",
    "describe_flow_error",
    "errors",
    "is_nifi_flow",
    "load_flow",
    "open_repositories",
    "parse_pairs",
    "repository_of",
    "settings_of",
    "with_parameters",
    "with_repository",
]

#: The exit status of a mistake a user made (a bad flow, argument or file).
USER_ERROR = 2

#: The exit status when standard output's reader went away (``| head``): 128 + SIGPIPE, what a
#: shell reports for ``cat`` killed by SIGPIPE. Nothing is printed.
CLOSED_OUTPUT = 141


class _Console(Console):
    """A rich console that leaves a closed standard output to :func:`flowcore.cli.main`.

    rich's own answer exits with status 1; every command stops the same way instead, with
    :data:`CLOSED_OUTPUT`. Text is never hard-wrapped (``soft_wrap``): in a pipe or a log rich
    assumes 80 columns, and a summary line broken there defeats every ``grep``; a terminal wraps
    long lines itself. Tables still fit the width.
    """

    def __init__(self, **options: Any) -> None:
        options.setdefault("soft_wrap", True)
        super().__init__(**options)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "standard output was closed")


console = _Console()
errors = _Console(stderr=True)


class UsageError(FlowcoreError):
    """A command-line mistake (bad argument, missing file)."""


def is_nifi_flow(path: str | Path) -> bool:
    """Whether *path* names a NiFi flow (``.json``, ``.json.gz``) rather than a Python file.

    ``.xml`` (a NiFi 1.x template) and ``.xml.gz`` (a 1.x ``flow.xml.gz``) count too.
    """
    return Path(path).name.lower().endswith((".json", ".json.gz", ".gz", ".xml"))


def load_flow(
    path: str | Path,
    type_map: Mapping[str, Any] | None = None,
    *,
    module_name: str | None = None,
    strict: bool = False,
) -> FlowDefinition:
    """Import a flow file and return its module-level ``flow`` (or its only Flow).

    A NiFi flow definition (``.json``, ``.json.gz``) is read with
    :meth:`flowcore.builder.Flow.from_nifi` instead, *type_map* mapping NiFi types to
    processor classes; its invalid processors stay stopped, as in NiFi, unless *strict*
    (:meth:`flowcore.builder.Flow.from_nifi`). The file runs under its own module name, so an
    ``if __name__ == "__main__"`` block does not; *module_name* (starting ``flowcore_flow_``)
    replaces that name, for a process that imports the same file again (``flowcore serve``).

    Raises:
        UsageError: the file is missing, does not compile, raises while it runs (one line
            naming the file, the line and the exception: see :func:`describe_flow_error`), or
            defines no flow (or several, none named ``flow``).
        NiFiFormatError, NiFiImportError: a NiFi flow cannot be read, or cannot run.
    """
    file = Path(path)
    if not file.is_file():
        msg = f"flow file {file} does not exist"
        raise UsageError(msg)
    if is_nifi_flow(file):
        # the engine only here: `status`, `provenance`, `check` start without it
        from flowcore.builder import Flow  # noqa: PLC0415

        return Flow.from_nifi(file, type_map=type_map, strict=strict)
    name = module_name or f"flowcore_flow_{file.stem.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        msg = f"{file} is not a Python file"
        raise UsageError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The flow's directory goes first on the path so that modules beside it import; the
    # built-in processors are imported before, so a folder there named `processors` cannot
    # stand in for them.
    importlib.import_module("processors")
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's code: a SyntaxError, NameError, ImportError ...
        sys.modules.pop(name, None)
        raise UsageError(describe_flow_error(file, error)) from None
    finally:
        sys.path.pop(0)
    found = getattr(module, "flow", None)
    if isinstance(found, FlowDefinition):
        return found
    flows = [v for v in vars(module).values() if isinstance(v, FlowDefinition)]
    if len(flows) == 1:
        return flows[0]
    msg = (
        f"{file} defines {len(flows)} flows and none is named 'flow'; "
        "assign the one to run to a module-level variable named flow"
    )
    raise UsageError(msg)


def describe_flow_error(file: Path, error: Exception) -> str:
    """One line for an error raised while a flow file compiles or runs: where, what, the fix.

    A syntax error names its own file and line (a module the flow imports may hold it); any
    other error names the flow file's deepest line in the traceback: the statement that raised,
    or that called the code that did. flowcore's own errors keep their message, which already
    says what to fix.
    """
    if isinstance(error, SyntaxError):  # IndentationError and TabError too
        where = f"{error.filename or file}:{error.lineno or '?'}"
        return f"{where}: {type(error).__name__}: {error.msg}; fix that line of the flow file"
    target = str(file.resolve())
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename and str(Path(frame.filename).resolve()) == target
    ]
    where = f"{file}:{lines[-1]}" if lines else str(file)
    text = " ".join(str(error).split()) or "(no message)"
    if isinstance(error, FlowcoreError):
        return f"{where}: {text}"
    if isinstance(error, ModuleNotFoundError):
        fix = "install it, or put it beside the flow file"
    else:
        fix = "fix that line of the flow file"
    return f"{where}: {type(error).__name__}: {text} (raised while the flow file ran); {fix}"


def parse_pairs(pairs: Sequence[str], option: str = "--conf") -> dict[str, str]:
    conf, malformed = split_pairs(pairs)
    if malformed is not None:
        msg = f"{option} {malformed!r} must look like key=value"
        raise UsageError(msg)
    return conf


def repository_of(args: argparse.Namespace, flow_file: str | None = None) -> Path:
    if args.repository:
        return Path(args.repository)
    if flow_file:
        return Path(flow_file).resolve().parent / DEFAULT_REPOSITORY
    return Path(DEFAULT_REPOSITORY)


def settings_of(args: argparse.Namespace) -> Settings:
    texts = parse_pairs(getattr(args, "setting", None) or (), "--setting")
    values: dict[str, Any] = {}
    if getattr(args, "parallelism", None):
        values["parallelism"] = args.parallelism
    if getattr(args, "batch_size", None):
        values["batch_max_flowfiles"] = args.batch_size
    try:
        return Settings.parse(texts, **values)
    except ValueError as error:
        raise UsageError(str(error)) from None


def open_repositories(args: argparse.Namespace, flow_file: str | None = None) -> Any:
    from repositories.repository_set import RepositorySet  # noqa: PLC0415

    directory = repository_of(args, flow_file)
    if not directory.is_dir():
        msg = f"repository {directory} does not exist; pass --repository DIR"
        raise UsageError(msg)
    return RepositorySet.open(directory)


def with_repository(sub: argparse.ArgumentParser) -> None:
    """Give a command the ``--repository DIR`` option."""
    sub.add_argument(
        "--repository",
        metavar="DIR",
        help="repository directory (default: .flowcore next to the flow, or here)",
    )


def with_parameters(sub: argparse.ArgumentParser) -> None:
    """Give a command the options that set the flow's parameters (docs/operations.md)."""
    sub.add_argument("--parameter", action="append", default=[], metavar="NAME=VALUE")
    sub.add_argument("--parameters", metavar="FILE", help="parameters as JSON (NiFi's shape)")
    sub.add_argument(
        "--parameter-env", action="append", default=[], metavar="NAME=ENVVAR",
        help="a (sensitive) parameter read from an environment variable",
    )  # fmt: skip


def apply_parameters(flow: FlowDefinition, args: argparse.Namespace) -> None:
    """Put the command line's parameters over the flow's: its values, then the file's."""
    file = load_parameters(args.parameters) if args.parameters else None
    values = parse_pairs(args.parameter, "--parameter")
    from_env = parse_pairs(args.parameter_env, "--parameter-env")
    flow.parameters = layered(flow.parameters, file=file, values=values, from_env=from_env)


def print_warnings(flow: FlowDefinition) -> None:
    """Print one ``warning:`` line on stderr per secret too short to be masked in logs.

    Call it once the command line's parameters are applied: they may set the secret.
    """
    for warning in short_secret_warnings(flow):
        errors.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
