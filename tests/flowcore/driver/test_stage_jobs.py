"""Tests for stage jobs: tasks built for each stage run, and a binning stage's second merge pass."""

from __future__ import annotations

from pathlib import Path

import pytest

import flowcore.engine._bins as task_bins
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GenerateFlowFile, GetFile, MergeContent, SplitText, UpdateAttribute
from repositories.repository_set import RepositorySet

# every stage run goes to the runner under test, however small (see driver_run_max_flowfiles)
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3, driver_run_max_flowfiles=0)


class FailingMerge(MergeContent):
    """Bins as MergeContent does, then fails to merge."""

    def merge_bin(self, context, session, bin_):  # type: ignore[no-untyped-def]
        msg = "the disk is full"
        raise OSError(msg)


def _merge_flow(merge: MergeContent) -> Flow:
    flow = Flow("merging")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=12), name="gen")
    combine = flow.add(merge, name="merge")
    end = flow.add(UpdateAttribute(), name="end")
    flow.connect(gen, combine)
    flow.connect(combine, end, "merged")
    flow.auto_terminate(combine, ["original", "failure"])
    flow.auto_terminate(end, "success")
    return flow


def test_ready_bins_are_merged_by_parallel_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bins of one group are decided in one task and merged by a second, parallel pass."""
    monkeypatch.setattr(task_bins, "MERGE_APART_BYTES", 0)  # however small they are
    flow = _merge_flow(MergeContent(minimum_number_of_entries=3, maximum_number_of_entries=3))
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "merged") == 4
    assert result.count("end", "success") == 4
    assert "2 task(s) in-process merging bins" in result.plan


def test_a_failed_merge_keeps_the_bins_flowfiles_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When merging a handed-over bin fails, its FlowFiles go back to the queue with a bulletin."""
    monkeypatch.setattr(task_bins, "MERGE_APART_BYTES", 0)
    flow = _merge_flow(FailingMerge(minimum_number_of_entries=3, maximum_number_of_entries=3))
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "merged") == 0
    assert sum(count for count, _ in result.queued.values()) == 12
    assert "the disk is full" in result.bulletins[0].message


def test_one_group_is_binned_in_one_task_without_a_shuffle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a correlation attribute all FlowFiles share a group: one task, no shuffle."""
    monkeypatch.setattr(task_bins, "MERGE_APART_BYTES", 0)
    flow = _merge_flow(MergeContent(minimum_number_of_entries=3, maximum_number_of_entries=3))
    result = run_flow(flow, "direct", repository=tmp_path / "one", settings=SETTINGS)
    assert "1 task(s) in-process, then 2 task(s) in-process merging bins" in result.plan
    correlated = MergeContent(
        minimum_number_of_entries=3, maximum_number_of_entries=3, correlation_attribute_name="x"
    )
    result = run_flow(
        _merge_flow(correlated), "direct", repository=tmp_path / "keyed", settings=SETTINGS
    )
    assert "3 task(s) in-process, then 2 task(s) in-process merging bins" in result.plan
    assert result.count("merge", "merged") == 4


STATEFUL = {"Store State": "Store state locally"}


def _count_lines(root: Path, runner: str, settings: Settings) -> tuple[str, int, str]:
    """8 files of 25 lines, split in parallel tasks, each line counted by a stateful variable.

    The split stage writes one segment per task to the durable queue the counter reads, so its
    stage run takes several segments. Returns the committed count, the lines, and the plan.
    """
    (root / "in").mkdir(parents=True)
    for n in range(8):
        (root / "in" / f"f{n}.txt").write_text("".join(f"{n}-{i}\n" for i in range(25)))
    flow = Flow("counting")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    count = flow.add(
        UpdateAttribute(
            **STATEFUL,
            **{"Stateful Variables Initial Value": "0"},
            count="${getStateValue('count'):plus(1)}",
        ),
        name="count",
    )
    flow.connect(get, split)
    flow.connect(split, count, "splits", durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(count, ["success", "set state fail"])
    result = run_flow(flow, runner, repository=root / "repo", settings=settings)
    repos = RepositorySet.open(root / "repo")
    try:
        state = dict(repos.flowfiles.state(count.id))
    finally:
        repos.close()
    return state["count"], result.transfers["count"]["success"][0], flow.explain()


def test_storing_state_makes_the_stage_serial_so_no_update_is_lost(
    tmp_path: Path, runner: str
) -> None:
    """With Store State, each stage run is one task over every segment: the counter the
    FlowFiles advance one by one ends at the number of lines, on Spark as in the driver."""
    settings = Settings(sync=False, parallelism=4, driver_run_max_flowfiles=0)
    count, lines, plan = _count_lines(tmp_path, runner, settings)
    assert (count, lines) == ("200", 200)
    assert "serial: one task per stage run" in plan
    assert "UpdateAttribute 'count' triggers serially" in plan


def test_parallel_tasks_would_lose_the_counter_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the serial stage, tasks each start from the same state and the commit keeps
    one task's count: what the serial capability prevents."""
    monkeypatch.setattr(UpdateAttribute, "runs_serially", lambda self: False)
    settings = Settings(sync=False, parallelism=4, driver_run_max_flowfiles=0)
    count, lines, _ = _count_lines(tmp_path, "direct", settings)
    assert lines == 200
    assert int(count) < 200
