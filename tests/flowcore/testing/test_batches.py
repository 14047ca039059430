"""Tests for the harness's batch mode helpers: FlowFiles as batches, and checked routes."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from flowcore.processor import BatchRoute
from flowcore.testing import TestRunner
from flowcore.testing._batches import batches_of, checked_routes
from processors import UpdateAttribute


def _queued(runner: TestRunner) -> list:
    return runner.take_ready()


def test_queued_flowfiles_become_one_batch_that_gives_them_back() -> None:
    """A batch of enqueued FlowFiles (each content in its own claim) materializes the same
    FlowFiles, their contents copied into one claim."""
    runner = TestRunner(UpdateAttribute)
    runner.enqueue(b"alpha", {"k": "1", "same": "x"})
    runner.enqueue(b"", {"same": "x"})
    runner.enqueue(b"gamma!", {"k": "3", "same": "x"})
    flowfiles = _queued(runner)
    [(batch, held)] = batches_of(flowfiles, runner.content)
    assert batch.attributes["same"] == "x"
    assert "k" in batch.columns
    made = batch.flowfiles()
    assert [f.uuid for f in made] == [f.uuid for f in flowfiles]
    assert [f.id for f in made] == [f.id for f in flowfiles]
    assert [dict(f.attributes) for f in made] == [dict(f.attributes) for f in flowfiles]
    assert [f.content for f in made] == [f.content for f in held]
    contents = [runner.content.read(f.content) if f.content else b"" for f in made]
    assert contents == [b"alpha", b"", b"gamma!"]
    for flowfile in flowfiles:  # the old claims were released
        if flowfile.content is not None:
            assert not runner.content.exists(flowfile.content.resource_claim)


def test_flowfiles_of_different_dates_make_separate_batches() -> None:
    """FlowFiles enqueued before and after the clock moves cannot share a batch's dates."""
    runner = TestRunner(UpdateAttribute)
    runner.enqueue("a")
    runner.advance_time(1)
    runner.enqueue("b")
    runner.enqueue("c")
    made = batches_of(_queued(runner), runner.content)
    assert [b.count for b, _ in made] == [1, 2]


def test_checked_routes_name_every_problem() -> None:
    """A route to an undeclared relationship, a changed id and a FlowFile in two routes are all
    reported at once."""
    runner = TestRunner(UpdateAttribute)
    for text in ("a", "b", "c"):
        runner.enqueue(text)
    [(batch, _)] = batches_of(_queued(runner), runner.content)
    moved = batch.take([0, 1])
    moved = attrs.evolve(moved, ids=moved.ids + 100)
    routes = [
        BatchRoute("success", [0, 1], moved),
        BatchRoute("elsewhere", np.array([1, 2]), batch.take([1, 2])),
    ]
    with pytest.raises(AssertionError) as caught:
        checked_routes(UpdateAttribute(), batch, routes)
    message = str(caught.value)
    assert "route to 'elsewhere': no such relationship (it declares ['success'])" in message
    assert "route to 'success': changes more than attributes: ids" in message
    assert "in several routes: #1 (" in message
