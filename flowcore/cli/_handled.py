"""How every command ends on a mistake: one line on stderr and :data:`USER_ERROR`, no traceback.

:func:`flowcore.cli.main` runs each command through :func:`handled`; ``flowcore serve`` runs
each request it serves through it too, so that a served run ends as the same command here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.markup import escape

from flowcore.cli._common import USER_ERROR, errors
from flowcore.errors import FlowcoreError
from flowcore.faults import describe_storage_fault, storage_fault

__all__ = ["handled"]


def handled(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run *handler* on *args*; a user's mistake becomes one line on stderr and status 2.

    A user's mistake is one of flowcore's errors, or a full or read-only disk. Anything else
    is flowcore's own bug and raised, as is a closed standard output (``BrokenPipeError``).
    """
    try:
        return handler(args)
    except BrokenPipeError:
        raise
    except Exception as error:
        fault = storage_fault(error)
        if fault is not None:  # a full or read-only disk: the user's to fix, in one line
            text = describe_storage_fault(fault)
        elif isinstance(error, FlowcoreError):
            text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
        else:
            raise
        errors.print(f"[red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
        return USER_ERROR
