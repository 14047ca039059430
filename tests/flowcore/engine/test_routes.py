"""Tests for the engine's check of batch form results: every problem named, in flows too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._routes import checked_routes
from flowcore.errors import BatchResultError
from flowcore.session.batch_context import BatchRoute
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from flowcore.testing._batches import batches_of
from processors import GetFile, PutFile, SplitText, UpdateAttribute


def _queued(runner: TestRunner) -> list:
    return runner._host.take_ready()


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
    with pytest.raises(BatchResultError) as caught:
        checked_routes(UpdateAttribute(), batch, routes)
    message = str(caught.value)
    assert "route to 'elsewhere': no such relationship (it declares ['success'])" in message
    assert "route to 'success': changes more than attributes: ids" in message
    assert "in several routes: #1 (" in message


class _Misrouted(UpdateAttribute):
    """UpdateAttribute whose batch form sends everything to a relationship it never declared."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        return "sucess", batch


def test_a_route_to_an_undeclared_relationship_goes_one_by_one_with_a_bulletin(
    tmp_path: Path,
) -> None:
    """A batch form that names no declared relationship loses nothing: a bulletin names the
    problem and every FlowFile goes where on_trigger sends it (before, the engine dropped them
    as if the relationship were auto-terminated)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"row %d\n" % i for i in range(20)))
    flow = Flow("misrouted")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(_Misrouted(filename="${fragment.index}.txt"), name="tag")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 20
    assert len(list((tmp_path / "out").iterdir())) == 20
    [bulletin] = [b for b in result.bulletins if b.component_name == "tag"]
    assert "route to 'sucess': no such relationship" in bulletin.message


def test_the_harness_raises_what_the_engine_reports() -> None:
    """The same check fails the harness's batch mode, naming the same problem."""
    runner = TestRunner(_Misrouted(source="web"), batches=True)
    runner.enqueue("a")
    with pytest.raises(AssertionError, match="route to 'sucess': no such relationship"):
        runner.run()


class _Garbled(UpdateAttribute):
    """UpdateAttribute whose batch form returns something that is not routes at all."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        return {"success": batch}


def test_a_result_that_is_not_routes_goes_one_by_one_with_a_bulletin(tmp_path: Path) -> None:
    """A batch form returning a dict fails neither the task nor a FlowFile: a bulletin says the
    result cannot be read, and every FlowFile goes where on_trigger sends it."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"row %d\n" % i for i in range(5)))
    flow = Flow("garbled")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(_Garbled(source="web"), name="tag")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    settings = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 5
    [bulletin] = [b for b in result.bulletins if b.component_name == "tag"]
    assert "a result the engine cannot read" in bulletin.message
