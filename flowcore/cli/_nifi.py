"""What ``run``, ``explain``, ``convert`` add for NiFi flows: ``--type-map``, ``--strict``, notes.

``--python-extensions DIR`` (NiFi's ``nifi.python.extensions.source.directory``; also the setting
``python_extensions_source_directory`` and the variable ``FLOWCORE_PYTHON_EXTENSIONS``) loads
NiFi 2 Python processors for the flow (:mod:`nifiapi._loader`); each one whose declared
dependencies are missing is a ``note:`` naming the ``pip install`` command, and
``--install-dependencies`` installs them first.

``flowcore run FLOW.json`` imports the flow with :meth:`flowcore.builder.Flow.from_nifi`; the
import's notes (settings kept without effect, ports that lead nowhere) are printed on stderr as
``note:`` lines before anything runs, and its problems as one error (exit status 2). Invalid
processors stay stopped, as in NiFi, one ``note:`` each once the command line's parameters are
applied (they count); ``--strict`` makes them validation errors instead.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flowcore.builder import Flow
from flowcore.cli._common import UsageError, errors, settings_of
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import ConfigurationError
from flowcore.nifi.invalid import stopped_notes
from nifiapi._loader import ENVIRONMENT_VARIABLE, load_python_extensions, register

__all__ = [
    "load_python_extensions_of",
    "load_type_map",
    "print_notes",
    "print_stopped",
    "runnable",
    "with_strict",
    "with_type_map",
]


def with_type_map(sub: argparse.ArgumentParser) -> None:
    """Give a command the ``--type-map MODULE:DICT`` option."""
    sub.add_argument(
        "--type-map",
        metavar="MODULE:DICT",
        help="for a NiFi flow: a dict of NiFi type -> your processor class, in a module "
        "(my.module:TYPES) or a Python file (types.py:TYPES)",
    )
    sub.add_argument(
        "--python-extensions",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory of NiFi 2 Python processors, as NiFi's "
        f"nifi.python.extensions.source.directory (repeatable; also {ENVIRONMENT_VARIABLE})",
    )
    sub.add_argument(
        "--install-dependencies",
        action="store_true",
        help="pip-install the dependencies those processors declare into this environment",
    )


def load_python_extensions_of(args: argparse.Namespace) -> None:
    """Load and register the NiFi Python processors the command line and settings name.

    Raises:
        UsageError: a directory is missing, a processor file does not load, or pip fails.
    """
    directories = list(getattr(args, "python_extensions", None) or ())
    if getattr(args, "setting", None):
        directories += settings_of(args).python_extensions_source_directory
    directories += [d for d in os.environ.get(ENVIRONMENT_VARIABLE, "").split(os.pathsep) if d]
    if not directories:
        return
    try:
        found = load_python_extensions(
            directories, install_dependencies=bool(getattr(args, "install_dependencies", False))
        )
    except ConfigurationError as error:
        raise UsageError(str(error)) from None
    for missing in found.missing:
        errors.print(f"note: {missing.message()}", markup=False, highlight=False, soft_wrap=True)
    register(found)


def with_strict(sub: argparse.ArgumentParser) -> None:
    """Give a command the ``--strict`` option."""
    sub.add_argument(
        "--strict",
        action="store_true",
        help="for a NiFi flow: invalid processors are errors (exit 2) instead of staying "
        "stopped, as NiFi leaves them",
    )


def _module(spec: str) -> Any:
    """The module *spec* names: a Python file, or a module importable from here."""
    if spec.endswith(".py"):
        file = Path(spec)
        if not file.is_file():
            msg = f"--type-map: {file} does not exist"
            raise UsageError(msg)
        name = f"flowcore_type_map_{file.stem.replace('-', '_')}"
        found = importlib.util.spec_from_file_location(name, file)
        assert found is not None
        assert found.loader is not None
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        sys.path.insert(0, str(file.parent.resolve()))
        try:
            found.loader.exec_module(module)
        finally:
            sys.path.pop(0)
        return module
    sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(spec)
    finally:
        sys.path.pop(0)


def load_type_map(
    spec: str | None, args: argparse.Namespace | None = None
) -> Mapping[str, Any] | None:
    """The dict ``--type-map MODULE:DICT`` names, or None without the option.

    With the command's *args*, the NiFi Python processors it names are loaded first
    (:func:`load_python_extensions_of`).

    Raises:
        UsageError: the spec is not ``MODULE:DICT``, the module does not load, or the name is
            not a dict in it.
    """
    if args is not None:
        load_python_extensions_of(args)
    if spec is None:
        return None
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        msg = f"--type-map {spec!r} must look like MODULE:DICT (e.g. my_types.py:TYPES)"
        raise UsageError(msg)
    try:
        module = _module(module_name)
    except UsageError:
        raise
    except Exception as error:  # the user's module: an ImportError, a SyntaxError ...
        msg = f"--type-map: {module_name} does not load: {type(error).__name__}: {error}"
        raise UsageError(msg) from None
    found = getattr(module, attribute, None)
    if not isinstance(found, Mapping):
        msg = f"--type-map: {module_name} has no dict named {attribute!r}"
        raise UsageError(msg)
    return found


def print_notes(flow: FlowDefinition) -> None:
    """Print what an import from NiFi said about *flow*, one ``note:`` line each, on stderr."""
    if not isinstance(flow, Flow):
        return
    for note in flow.notes:
        errors.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def print_stopped(flow: FlowDefinition) -> dict[str, tuple[str, ...]]:
    """Print one ``note:`` per processor an imported NiFi flow leaves stopped; return them.

    Call it once the command line's parameters are applied: they decide what is valid.
    """
    if not isinstance(flow, Flow):
        return {}
    stopped = flow.stopped
    for note in stopped_notes(stopped):
        errors.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    return stopped


def runnable(flow: FlowDefinition) -> FlowDefinition:
    """*flow* as it runs: an imported NiFi flow's invalid processors stopped (disabled)."""
    return flow.runnable() if isinstance(flow, Flow) else flow
