"""Tests for flowcore/driver/commit.py: one stage run made durable, then what follows it."""

from __future__ import annotations

from pathlib import Path

from flowcore.builder import Flow
from flowcore.driver.commit import commit_stage_run
from flowcore.driver.controller import Controller
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import GenerateFlowFile, UpdateAttribute
from repositories.effects import reserve_target
from repositories.repository_set import PROVENANCE_STATE, RepositorySet


def test_a_commit_records_states_and_the_provenance_mark_then_releases_names(
    tmp_path: Path,
) -> None:
    """A stage run with no task output still commits the sources' listing state and the next
    provenance event id in one transaction, and frees the names its sinks reserved."""
    flow = Flow("commit")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos, Settings(sync=False))
        plan = next(iter(controller.plans.values()))
        assert reserve_target(repos.paths.effects, "run-1", str(tmp_path / "out" / "a"), 0)
        commit_stage_run(
            repos,
            controller.sinks,
            controller.indexer,
            plan=plan,
            taken=[],
            results=[],
            source_states={"GenerateFlowFile": {"listed": "3"}},
            run="run-1",
            now=0,
            expire_archive=False,
        )
        assert repos.flowfiles.state("GenerateFlowFile") == {"listed": "3"}
        mark = repos.flowfiles.state(PROVENANCE_STATE)["next_event_id"]
        assert int(mark) == repos.provenance.next_event_id
        assert reserve_target(repos.paths.effects, "run-1", str(tmp_path / "out" / "a"), 1)
        controller.close()
    finally:
        repos.close()
