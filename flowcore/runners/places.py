"""Where a task runs on an executor: in the driver's working directory, or nowhere.

A flow names its directories as a user types them, often relative (``GetFile(input_directory=
"in")``, ``PutFile(directory="out")``, ``${path}/done`` evaluated per FlowFile). The driver lists
sources and plans in its own working directory; a Spark executor runs in another one (a standalone
or ``local-cluster`` worker's ``work/app-.../N/``). Left there, a task would read and write
relative paths under the executor's folder: the run ends well, the sources are deleted, and the
outputs are nowhere the user looks (issue 31).

So every function that runs on an executor enters the driver's directory first
(:func:`at_driver_place`), which resolves every relative path a processor makes, static or from
the Expression Language, built-in or the user's, the way the driver would; the worker's own
directory comes back when the task ends (PySpark's reused workers keep relative entries of their
own). Where the executor cannot see the driver's directories (a cluster without a shared file
system), the task fails before it touches anything, naming the directory and the host, rather
than writing elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from flowcore.engine.wire import TaskSpec
from flowcore.errors import ConfigurationError

__all__ = ["DriverPlace", "at_driver_place", "call_at"]

#: The start of the message of a task that cannot see the driver's directories; the driver finds
#: it in the text Spark relays from the executor.
UNREACHABLE = "the Spark executor on host"


@attrs.frozen
class DriverPlace:
    """The driver's working directory and the repository directory a task needs.

    Attributes:
        directory: the driver's working directory, absolute.
        repository: a directory of the repository every task writes to (the queue segments),
            absolute; None for jobs that write none.
    """

    directory: str
    repository: str | None = None

    @classmethod
    def here(cls, repository: str | None = None) -> DriverPlace:
        """The place of this process (the driver), with *repository* made absolute."""
        return cls(os.getcwd(), None if repository is None else os.path.abspath(repository))

    @classmethod
    def of(cls, specs: Sequence[TaskSpec]) -> DriverPlace:
        """The place of a stage run's tasks: here, and the queue segments they write."""
        return cls.here(specs[0].paths.segments if specs else None)


_REPOSITORY = (
    "the repository directory",
    "put the repository and the flow's directories on a file system every executor mounts at "
    "the same path",
)
_WORKING_DIRECTORY = (
    "the driver's working directory",
    "run flowcore from a directory every executor mounts at the same path (relative paths "
    "mean that directory)",
)


def _unreachable(what: tuple[str, str], path: str) -> ConfigurationError:
    name, fix = what
    msg = (
        f"{UNREACHABLE} {socket.gethostname()} cannot see {name} {path}: {fix} (or run on a "
        "local master); nothing was read or written"
    )
    return ConfigurationError(msg)


@contextlib.contextmanager
def at_driver_place(place: DriverPlace) -> Iterator[None]:
    """Run the block in the driver's working directory, checked to exist here first.

    In the driver's own process (the direct runner, a local master's workers share its
    directory) this changes nothing.

    Raises:
        ConfigurationError: this host has no such repository directory or working directory
            (an executor without the driver's file system), naming both and the host.
    """
    if place.repository is not None and not os.path.isdir(place.repository):
        raise _unreachable(_REPOSITORY, place.repository)
    try:
        before: str | None = os.getcwd()
    except FileNotFoundError:  # a worker whose own folder was removed: nothing to go back to
        before = None
    if before == place.directory:
        yield
        return
    try:
        os.chdir(place.directory)
    except OSError:
        raise _unreachable(_WORKING_DIRECTORY, place.directory) from None
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(OSError):
                os.chdir(before)


def call_at(place: DriverPlace, function: Callable[[Any], Any], item: Any) -> Any:
    """``function(item)`` in the driver's working directory (see :func:`at_driver_place`)."""
    with at_driver_place(place):
        return function(item)
