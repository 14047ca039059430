"""Tests for flowcore/driver/sources.py: a source that yields, in its listing or in a task reading
its work, is not triggered again before its Yield Duration is over."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import ClassVar

import pytest

from flowcore.builder import Flow
from flowcore.clock import now_ms
from flowcore.driver.controller import run_flow
from flowcore.driver.run_result import RunResult
from flowcore.driver.sources import MAX_YIELDED_EMPTY_LISTINGS
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.settings import Settings


class DownDatabase(SourceProcessor):
    """A source querying a database that is down: each trigger fails and yields, in the task
    reading its work (ExecuteSQL without input) or in its listing (QueryDatabaseTable)."""

    unbounded = True
    where: ClassVar[str] = "read"
    #: when each trigger ran (epoch ms): the tests run tasks in-process (the direct runner)
    triggers: ClassVar[list[int]] = []

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        if self.where == "listing":
            DownDatabase.triggers.append(now_ms())
            context.yield_()
            return WorkListing((), state)
        return WorkListing([WorkItem("query")], state)

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        DownDatabase.triggers.append(now_ms())
        context.yield_()


def _run(tmp_path: Path, where: str, yield_duration: str, **options: object) -> list[int]:
    DownDatabase.where = where
    DownDatabase.triggers = []
    flow = Flow("down")
    query = flow.add(DownDatabase(), name="query", yield_duration=yield_duration)
    flow.auto_terminate(query, "success")
    continuous = "should_stop" in options
    stop = options.pop("should_stop", None)
    settings = Settings(sync=False, parallelism=1, poll_interval="0 sec", **options)  # type: ignore[arg-type]
    run_flow(
        flow,
        "direct",
        repository=tmp_path / "repo",
        settings=settings,
        continuous=continuous,
        should_stop=stop,  # type: ignore[arg-type]
    )
    return DownDatabase.triggers


@pytest.mark.parametrize("where", ["read", "listing"])
def test_a_continuous_run_triggers_a_yielding_source_once_per_yield_duration(
    tmp_path: Path, where: str
) -> None:
    """Polling without pause, a source that yields each time (in its task or its listing) is
    triggered again only once its 200 ms Yield Duration is over, not every micro-batch."""
    started = time.monotonic()
    triggers = _run(tmp_path, where, "200 ms", should_stop=lambda: time.monotonic() - started > 0.7)
    elapsed_ms = (time.monotonic() - started) * 1000
    assert 2 <= len(triggers) <= elapsed_ms / 200 + 1
    assert all(b - a >= 200 for a, b in itertools.pairwise(triggers))


def test_a_batch_run_waits_out_a_yield_for_its_remaining_triggers_and_ends(
    tmp_path: Path,
) -> None:
    """A batch run still triggers an unbounded source unbounded_source_batches times, each after
    the yield before it, and then ends."""
    triggers = _run(tmp_path, "read", "100 ms", unbounded_source_batches=3)
    assert len(triggers) == 3
    assert all(b - a >= 100 for a, b in itertools.pairwise(triggers))


def test_a_batch_run_ends_at_once_when_a_yielding_source_has_no_triggers_left(
    tmp_path: Path,
) -> None:
    """With one trigger (the default) the batch run does not wait out an hour's yield: it
    returns (its return is the check), having triggered the source once."""
    assert len(_run(tmp_path, "read", "1 hour")) == 1


class FlakyTable(SourceProcessor):
    """A bounded source (QueryDatabaseTable) whose listing yields with nothing listed while its
    database is down: for its first *down* listings, then it lists one item once."""

    down: ClassVar[int] = 1
    listings: ClassVar[int] = 0

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        FlakyTable.listings += 1
        if FlakyTable.listings <= self.down:
            context.logger.error("Unable to list new rows of t: connection refused (%d)", 1)
            context.yield_()
            return WorkListing((), state)
        if state.get("done"):
            return WorkListing((), state)
        return WorkListing([WorkItem("rows")], {"done": "1"})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        session.transfer(session.create(), "success")


def _run_flaky(tmp_path: Path, down: int, rest: str = "1 ms") -> RunResult:
    FlakyTable.down, FlakyTable.listings = down, 0
    flow = Flow("flaky")
    table = flow.add(FlakyTable(), name="table", yield_duration=rest)
    flow.auto_terminate(table, "success")
    settings = Settings(sync=False, parallelism=1, poll_interval="0 sec")
    return run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)


def test_a_bounded_source_that_yielded_nothing_is_not_exhausted(tmp_path: Path) -> None:
    """A bounded source whose first listing yields with nothing listed lists again after its
    yield and reads its rows: the batch run does not end at once as finished."""
    result = _run_flaky(tmp_path, down=1)
    assert result.transfers["table"]["success"][0] == 1
    assert result.finished
    assert not result.yielded


def test_a_bounded_source_that_keeps_yielding_nothing_ends_the_run_unfinished(
    tmp_path: Path,
) -> None:
    """After MAX_YIELDED_EMPTY_LISTINGS yielded empty listings in a row the batch run ends,
    not finished, naming the source as yielded, not exhausted, in its result and summary."""
    result = _run_flaky(tmp_path, down=10**6)
    assert FlakyTable.listings == MAX_YIELDED_EMPTY_LISTINGS
    assert not result.finished
    assert "yielded with nothing listed" in result.yielded["table"]
    assert "table stopped listing: its listing yielded" in result.summary()
    # the last error its listing logged ends the line, and each is a bulletin
    assert result.yielded["table"].endswith(
        "last error: Unable to list new rows of t: connection refused (1)"
    )
    errors = [b for b in result.bulletins if b.level == "ERROR"]
    assert len(errors) == MAX_YIELDED_EMPTY_LISTINGS


def test_a_rest_over_before_the_run_looks_still_lists_again(tmp_path: Path) -> None:
    """A yield whose rest is already over when the batch run checks for work (Yield Duration
    0 here; 1 ms on a busy machine) is due, not done: the source lists again and reads its
    rows (the run ended after the first yielded listing, as if exhausted)."""
    result = _run_flaky(tmp_path, down=3, rest="0 sec")
    assert FlakyTable.listings == 5  # three yielded, the rows, then nothing left
    assert result.transfers["table"]["success"][0] == 1
    assert result.finished


class BrokenListing(SourceProcessor):
    """A source whose listing raises an exception no one expected (a library's own)."""

    triggers: ClassVar[list[int]] = []

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        BrokenListing.triggers.append(now_ms())
        msg = "no such thing"
        raise KeyError(msg)

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        msg = "nothing was listed"
        raise AssertionError(msg)


def _broken(tmp_path: Path, **options: object) -> RunResult:
    BrokenListing.triggers = []
    flow = Flow("broken")
    broken = flow.add(BrokenListing(), name="list", yield_duration="100 ms")
    flow.auto_terminate(broken, "success")
    continuous = "should_stop" in options
    stop = options.pop("should_stop", None)
    settings = Settings(sync=False, parallelism=1, poll_interval="0 sec")
    return run_flow(
        flow,
        "direct",
        repository=tmp_path / "repo",
        settings=settings,
        continuous=continuous,
        should_stop=stop,  # type: ignore[arg-type]
    )


def test_a_batch_run_stops_listing_a_source_whose_listing_raises(tmp_path: Path) -> None:
    """Any exception from a listing is an ERROR bulletin naming the processor and its message,
    and the batch run ends at once with one line for it (``list_failed``), not a traceback."""
    result = _broken(tmp_path)
    assert len(BrokenListing.triggers) == 1
    assert result.list_failed == {
        "list": "BrokenListing 'list' could not list: KeyError: 'no such thing'; fix its "
        "properties (or what they name) and run again"
    }
    (bulletin,) = [b for b in result.bulletins if b.level == "ERROR"]
    assert bulletin.message == "BrokenListing 'list' could not list: KeyError: 'no such thing'"
    assert "Traceback" not in bulletin.message


def test_a_continuous_run_lists_a_failing_source_again_after_its_yield(tmp_path: Path) -> None:
    """NiFi's onTrigger that throws: the processor yields and is triggered again after its
    Yield Duration; a continuous run keeps going and records no batch end."""
    started = time.monotonic()
    result = _broken(tmp_path, should_stop=lambda: time.monotonic() - started > 0.5)
    assert len(BrokenListing.triggers) >= 2
    assert all(b - a >= 100 for a, b in itertools.pairwise(BrokenListing.triggers))
    assert result.list_failed == {}
