"""``flowcore check``: check the repositories, and with ``--fix`` repair them."""

from __future__ import annotations

import argparse
from typing import Any

from flowcore.cli._common import console, repository_of, with_repository

__all__ = ["add_command", "cmd_check"]


def cmd_check(args: argparse.Namespace) -> int:
    """Check (and with --fix repair) the repositories; without --fix nothing is changed."""
    from repositories.repository_set import check_repositories  # noqa: PLC0415

    findings = check_repositories(repository_of(args, None), fix=args.fix)
    for finding in findings:
        console.print(str(finding), highlight=False, markup=False)
    unfixed = [f for f in findings if not f.fixed]
    console.print(f"{len(findings)} finding(s), {len(unfixed)} not fixed")
    return 1 if unfixed else 0


def add_command(commands: Any) -> None:
    """Add ``check`` to the command parsers."""
    check = commands.add_parser("check", help="check the repositories")
    check.add_argument("--fix", action="store_true")
    with_repository(check)
    check.set_defaults(handler=cmd_check)
