"""``flowcore check``: check the repositories, and with ``--fix`` repair them."""

from __future__ import annotations

import argparse
from typing import Any

from flowcore.cli._common import console, repository_of, with_repository

__all__ = ["add_command", "cmd_check"]


def cmd_check(args: argparse.Namespace) -> int:
    """Check (and with --fix repair) the repositories; without --fix nothing is changed.

    Beside a live run the check is read-only and ``--fix`` is refused (one line, status 2).
    """
    from repositories.repository_set import check_repositories, live_run  # noqa: PLC0415

    directory = repository_of(args, None)
    holder = live_run(directory) if directory.is_dir() else None
    findings = check_repositories(directory, fix=args.fix)  # --fix beside a run: refused
    if holder is not None:
        console.print(
            f"a run (pid {holder}) holds {directory}: checked read-only beside it; files of "
            "its micro-batch in progress are not judged",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for finding in findings:
        # one line per finding, however long its paths: a log or grep reads it whole
        console.print(str(finding), highlight=False, markup=False, soft_wrap=True)
    unfixed = [f for f in findings if not f.fixed]
    console.print(f"{len(findings)} finding(s), {len(unfixed)} not fixed")
    return 1 if unfixed else 0


def add_command(commands: Any) -> None:
    """Add ``check`` to the command parsers."""
    check = commands.add_parser("check", help="check the repositories")
    check.add_argument("--fix", action="store_true")
    with_repository(check)
    check.set_defaults(handler=cmd_check)
