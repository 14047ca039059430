"""``flowcore run``'s progress display and its Ctrl-C handling.

The display (on stderr, only on a terminal) is redrawn a few times a second from the last
:class:`~flowcore.driver.run_result.RunProgress` the controller reported:

    ⠙ web-logs 0:01:23  micro-batch 42  queued 1,234  stopping after this micro-batch
      input ━━━━━━━━━━━━━━━━━━━━╸━━━━━━━━━━━━━━━━━━━  52% ETA 0:01:17  (520 of 1,000 files)
      stage     processors    in    in/s     out   out/s
      stage-1   get+split    520     6.3  52,000   626.5
      stage-2   tag        52,000  626.5  52,000   626.5

The elapsed time comes first so a narrow terminal never cuts it off; each stage has its own
counts (a FlowFile is counted by every stage it passes, so they are not added up); the
percentage and ETA are shown when the sources know what they have left to read (GetFile's
listed files and bytes, FileSplitter's blocks).

Ctrl-C (or SIGTERM) asks the run to stop after the micro-batch in progress, which then ends as a
run does: the summary is printed, and a continuous run exits with 0, a batch run (stopped early,
its work left queued) with :data:`EXIT_INTERRUPTED`. A second Ctrl-C stops at once, like a
crash: nothing committed is lost, and the micro-batch in progress is redone at the next start.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from flowcore.cli.status import duration

__all__ = ["EXIT_INTERRUPTED", "ProgressDisplay", "ProgressView", "StopRequest"]

#: The exit status of a batch run stopped early by Ctrl-C or SIGTERM, and after a second Ctrl-C
#: stopped any run at once (128 + SIGINT, as shells use).
EXIT_INTERRUPTED = 130
_REFRESH_PER_SECOND = 4
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """The run's stop switch, thrown by Ctrl-C and SIGTERM.

    The first signal asks the controller to stop after the current micro-batch; a second
    SIGINT ends the process at once. Installed before the run starts (the Spark runner keeps
    it when PySpark starts, see :mod:`flowcore.runners.spark`).
    """

    def __init__(self, announce: Callable[[str], None]) -> None:
        self._event = threading.Event()
        self._announce = announce
        self._previous: dict[int, Any] = {}

    def is_set(self) -> bool:
        """Whether a stop was asked for (the controller's ``should_stop``)."""
        return self._event.is_set()

    def install(self) -> None:
        """Handle SIGINT and SIGTERM from now on (only the main thread may; elsewhere: not)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in _SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def restore(self) -> None:
        """Put back the handlers :meth:`install` replaced (``main()`` may run in a test)."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if self._event.is_set() and signum == signal.SIGINT:
            # Like a crash, which the repositories are made for: the log holds every commit.
            os.write(2, b"\nstopped at once; the micro-batch in progress is redone next start\n")
            os._exit(EXIT_INTERRUPTED)
        self._event.set()
        self._announce("stopping after the current micro-batch (Ctrl-C again to stop at once)")


class ProgressView:
    """What the display shows: the flow's name, its clock, and the last progress report."""

    def __init__(self, flow: str) -> None:
        self.flow = flow
        self.started = time.monotonic()
        self.last: Any = None  # the last RunProgress
        self.note = ""
        self._spinner = Spinner("dots")

    def report(self, progress: Any) -> None:
        """Take a controller's report (called in the run's thread)."""
        self.last = progress

    def __rich__(self) -> RenderableType:
        elapsed = time.monotonic() - self.started
        head = Text.assemble((f"{self.flow} ", "bold"), duration(elapsed))
        last = self.last
        if last is not None:
            head.append(f"  micro-batch {last.micro_batch:,}  queued {last.queued:,}")
        head.no_wrap = True
        head.overflow = "ellipsis"
        spinner = Table.grid(padding=(0, 1))
        spinner.add_row(self._spinner, head)
        parts: list[RenderableType] = [spinner]
        if self.note:
            parts.append(Text(f"  {self.note}", style="yellow"))
        if last is not None:
            if last.input is not None and last.input.fraction is not None:
                parts.append(_input_line(last.input, elapsed))
            parts.append(_stage_table(last.stages, elapsed))
        return Group(*parts)


def _input_line(read: Any, elapsed: float) -> RenderableType:
    fraction = read.fraction
    eta = read.eta_seconds(elapsed)
    if read.by_bytes:
        total = read.read_bytes + read.pending_bytes
        what = f"{read.read_bytes:,} of {total:,} bytes"
    else:
        what = f"{read.read_items:,} of {read.read_items + read.pending_items:,} work items"
    line = Table.grid(padding=(0, 1))
    line.add_column(width=7)
    line.add_column(width=30)
    line.add_column(no_wrap=True, overflow="ellipsis")
    text = f"{fraction:4.0%}" + (f" ETA {duration(eta)}" if eta is not None else "")
    line.add_row(
        "  input", ProgressBar(total=1.0, completed=fraction, width=30), f"{text}  ({what})"
    )
    return line


def _stage_table(stages: Any, elapsed: float) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, overflow="ellipsis", max_width=30)
    for _ in range(4):
        table.add_column(justify="right", no_wrap=True)
    table.add_row("  stage", "processors", "in", "in/s", "out", "out/s", style="dim")
    seconds = max(elapsed, 1e-3)
    for stage in stages:
        table.add_row(
            f"  {stage.stage_id}",
            stage.name,
            f"{stage.flowfiles_in:,}",
            f"{stage.flowfiles_in / seconds:,.1f}",
            f"{stage.flowfiles_out:,}",
            f"{stage.flowfiles_out / seconds:,.1f}",
        )
    return table


class ProgressDisplay:
    """The display while a run runs: live on a terminal, silent elsewhere (or with --json).

    Use as ``with ProgressDisplay(console, name, enabled) as (report, stop):``; *report*
    goes to the controller as its ``progress``, *stop* is the installed :class:`StopRequest`.
    """

    def __init__(self, console: Console, flow: str, enabled: bool) -> None:
        self.view = ProgressView(flow)
        self.console = console
        self.live: Live | None = None
        if enabled and console.is_terminal:
            self.live = Live(
                self.view,
                console=console,
                transient=True,
                refresh_per_second=_REFRESH_PER_SECOND,
            )
        self.stop = StopRequest(self._announce)

    def _announce(self, note: str) -> None:
        if self.live is not None:
            self.view.note = note  # drawn at the next refresh: no printing in a signal handler
        else:
            sys.stderr.write(note + "\n")

    def __enter__(self) -> tuple[Callable[[Any], None], StopRequest]:
        self.stop.install()
        if self.live is not None:
            self.live.start()
        return self.view.report, self.stop

    def __exit__(self, *exc: object) -> None:
        try:
            if self.live is not None:
                self.live.stop()
        finally:
            self.stop.restore()
