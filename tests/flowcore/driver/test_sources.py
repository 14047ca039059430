"""Tests for flowcore/driver/sources.py: listing sources' work per micro-batch, and settling it."""

from __future__ import annotations

from pathlib import Path

from flowcore.builder import Flow
from flowcore.driver.controller import Controller
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import GetFile, UpdateAttribute
from repositories.repository_set import RepositorySet


def _flow(inputs: Path) -> Flow:
    flow = Flow("listing")
    get = flow.add(GetFile(input_directory=str(inputs), keep_source_file=True), name="get")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(get, tag)
    flow.auto_terminate(tag, "success")
    return flow


def test_a_source_lists_until_exhausted_then_is_no_longer_active(tmp_path: Path) -> None:
    """One micro-batch lists every file: GetFile fills it, triggered until a listing comes back
    empty. The source is then inactive for the rest of a batch run, so a later micro-batch lists
    nothing; a continuous run keeps polling it."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("a", "b", "c"):
        (inputs / name).write_text(name)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(_flow(inputs), DirectRunner(), repos, Settings(sync=False))
        plan = next(p for p in controller.plans.values() if p.source_members)
        member = plan.source_members[0]
        lister = controller.sources
        work, states = lister.list_work(plan, False, (100, 100))
        assert sorted(item.key.rsplit("/", 1)[-1] for _, item in work) == ["a", "b", "c"]
        assert member.component_id in states  # the listing state, for the commit
        assert not lister.active(member, False)
        assert lister.active(member, True)
        assert lister.list_work(plan, False, (100, 100)) == ([], {})
    finally:
        repos.close()
