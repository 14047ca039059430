"""Tests for the direct runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow, Processor, Relationship
from flowcore.compiler.stages import compile_flow
from flowcore.driver.controller import Controller, run_flow
from flowcore.errors import ConfigurationError, FlowValidationError
from flowcore.runners import make_runner
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import GenerateFlowFile
from repositories.repository_set import RepositorySet


class Unpicklable(Processor):
    """Holds a lock, which cannot be pickled, as a processor must not."""

    relationships = (Relationship("success", "out"),)

    def __init__(self, **properties: object) -> None:
        import threading

        super().__init__(**properties)
        self.lock = threading.Lock()

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        session.transfer(session.get(), "success")


def test_make_runner_by_name() -> None:
    """Runner names resolve; unknown names and misplaced options are refused clearly."""
    assert isinstance(make_runner("direct"), DirectRunner)
    with pytest.raises(ConfigurationError, match="unknown runner 'flink'"):
        make_runner("flink")
    with pytest.raises(ConfigurationError, match="only applies to runner='spark'"):
        make_runner("direct", master="local[2]")
    with pytest.raises(ConfigurationError, match=r"spark \(a SparkSession\) only applies"):
        make_runner("direct", spark=object())


def test_tasks_travel_pickled_as_on_spark(tmp_path: Path) -> None:
    """A processor that cannot be pickled fails on the direct runner too, not only on Spark
    (validation names it first; one that takes the lock after validation fails pickled)."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    bad = flow.add(Unpicklable(), name="bad")
    flow.connect(gen, bad)
    flow.auto_terminate(bad, "success")
    with pytest.raises(FlowValidationError, match=r"attribute 'lock' holds a _thread\.lock"):
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    lock = bad.processor.lock  # type: ignore[union-attr]
    del bad.processor.lock  # type: ignore[union-attr]
    compiled = compile_flow(flow)
    bad.processor.lock = lock  # type: ignore[union-attr]
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(compiled, DirectRunner(), repos, Settings(sync=False))
        with pytest.raises(TypeError, match="pickle"):
            controller.run()
    finally:
        repos.close()


def test_describe_counts_tasks(tmp_path: Path) -> None:
    """After a run the plan says how many tasks each stage ran."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    end = flow.add(GenerateFlowFile(), name="other")
    del end
    flow.auto_terminate(gen, "success")
    flow.auto_terminate(flow.component("other"), "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert "1 task(s) in-process" in result.plan
