"""Tests for how a command ends on a mistake (:func:`flowcore.cli._handled.handled`)."""

from __future__ import annotations

import argparse
import errno
from collections.abc import Callable

import pytest

from flowcore.cli._handled import handled
from flowcore.errors import ConfigurationError


def _raising(error: Exception) -> Callable[[argparse.Namespace], int]:
    def handler(_args: argparse.Namespace) -> int:
        raise error

    return handler


def test_a_users_mistake_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    """One of flowcore's errors prints 'error: MESSAGE' once on stderr and returns 2."""
    assert handled(_raising(ConfigurationError("no [such] master")), argparse.Namespace()) == 2
    assert capsys.readouterr().err == "error: no [such] master\n"


def test_a_full_disk_is_the_users_too(capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk is told in one line (the storage fault's words), status 2."""
    error = OSError(errno.ENOSPC, "No space left on device")
    assert handled(_raising(error), argparse.Namespace()) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")


def test_flowcores_own_bugs_and_a_closed_pipe_are_raised() -> None:
    """Any other exception, and BrokenPipeError, go on up (a traceback, or status 141)."""
    with pytest.raises(ZeroDivisionError):
        handled(_raising(ZeroDivisionError("bug")), argparse.Namespace())
    with pytest.raises(BrokenPipeError):
        handled(_raising(BrokenPipeError()), argparse.Namespace())


def test_the_commands_status_is_returned() -> None:
    """A command that ends normally gives its own status back."""
    assert handled(lambda _args: 3, argparse.Namespace()) == 3
