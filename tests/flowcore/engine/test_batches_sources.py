"""Tests for a source's batches dropped whole inside tasks: GenerateFlowFile and ListFile give
the one-by-one counts and events, in the same order."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._source_batches import SourceDriver
from flowcore.processor import Processor
from processors import GenerateFlowFile, ListFile
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape
from tests.flowcore.engine._batch_outcomes import SETTINGS, _assert_made_before_used


def _source_flow(root: Path, source: Processor) -> Flow:
    """A source alone, its ``success`` auto-terminated."""
    flow = Flow("dropped")
    made = flow.add(source, name="source")
    flow.auto_terminate(made, "success")
    return flow


def _dropped_outcome(root: Path, name: str, source: Processor, runner: str = "direct") -> tuple:
    """The events of a source whose FlowFiles are all dropped, in order, and the counts."""
    result = run_flow(_source_flow(root, source), runner, repository=root / name, settings=SETTINGS)
    repos = RepositorySet.open(root / name)
    try:
        events = sorted(repos.provenance.search(limit=100_000), key=lambda e: e.event_id)
    finally:
        repos.close()
    _assert_made_before_used(events)
    return [event_shape(e) for e in events], dict(result.transfers)


def _sources(kind: str, root: Path, draw: tuple) -> Processor:
    """A GenerateFlowFile (batch size, content) or a ListFile of files of the sizes drawn."""
    if kind == "generate":
        batch_size, content = draw
        return GenerateFlowFile(batch_size=batch_size, kind="x", **content)
    if not (root / "in").exists():  # written once: both runs list the same files
        (root / "in").mkdir()
        for number, size in enumerate(draw):
            path = root / "in" / f"f{number}.txt"
            path.write_bytes(b"z" * size)
            os.utime(path, (1_700_000_000, 1_700_000_000))  # old: listed at once, no lag
    return ListFile(input_directory=str(root / "in"))


_CONTENTS = st.sampled_from(
    [
        {},
        {"custom_text": "line\n"},
        {"file_size": "3 B"},
        {"file_size": "4 B", "unique_flowfiles": True},
    ]
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.tuples(st.just("generate"), st.tuples(st.integers(1, 40), _CONTENTS)),
        st.tuples(st.just("list"), st.lists(st.integers(0, 20), min_size=1, max_size=30)),
    )
)
def test_a_sources_batches_dropped_whole_give_the_one_by_one_events_in_order(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[str, tuple]
) -> None:
    """GenerateFlowFile and ListFile with ``success`` auto-terminated make their FlowFiles as
    batches and drop them whole: the same counts and events, field for field and in the same
    order (every CREATE, then every DROP) as read one by one."""
    kind, draw = drawn
    root = tmp_path_factory.mktemp("sources")
    source = type(_sources(kind, root, draw))
    dropped: list[int] = []
    real = SourceDriver.drop_whole

    def counted(
        driver: SourceDriver, relationship: str, before: Any, after: Any, queue: Any
    ) -> None:
        dropped.append(after.count)
        real(driver, relationship, before, after, queue)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SourceDriver, "drop_whole", counted)  # what a source's batches call
        batched = _dropped_outcome(root, "batches", _sources(kind, root, draw))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "read_work_batches", lambda *_: None)
        single = _dropped_outcome(root, "single", _sources(kind, root, draw))
    if "file_size" in str(draw):  # random content: each run draws its own bytes
        assert [s[:2] for s in batched[0]] == [s[:2] for s in single[0]]
    assert batched == single
    made = single[1]["source"]["success"][0]
    assert sum(dropped) == made
    per_item, items = (draw[0], 3) if kind == "generate" else (len(draw), 1)
    assert [s[0] for s in single[0]] == (["CREATE"] * per_item + ["DROP"] * per_item) * items


@pytest.mark.parametrize("kind", ["generate", "list"])
def test_a_sources_batches_dropped_whole_on_each_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str, kind: str
) -> None:
    """On this runner, a source's batches dropped whole give the direct one-by-one outcome."""
    draw = (25, {"custom_text": "x"}) if kind == "generate" else (3, 0, 9, 1)
    batched = _dropped_outcome(tmp_path, "batches", _sources(kind, tmp_path, draw), runner)
    monkeypatch.setattr(type(_sources(kind, tmp_path, draw)), "read_work_batches", lambda *_: None)
    single = _dropped_outcome(tmp_path, "single", _sources(kind, tmp_path, draw))
    assert batched == single
    assert batched[1]["source"]["success"][0] == (75 if kind == "generate" else 4)
