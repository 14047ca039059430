"""Tests for stage jobs: tasks built for each stage run, and a binning stage's second merge pass."""

from __future__ import annotations

import shutil
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


def _split_into_queue(root: Path, lines: list[int]) -> Flow:
    """GetFile -> SplitText -> a durable queue -> UpdateAttribute, over one file per entry of
    *lines* (that many lines each): each split task writes its file's lines as one segment."""
    (root / "in").mkdir(parents=True)
    for n, count in enumerate(lines):
        (root / "in" / f"f{n}.txt").write_text("".join(f"{n}-{i}\n" for i in range(count)))
    flow = Flow("queued")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    flow.connect(get, split)
    flow.connect(split, tag, "splits", durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    return flow


def _ran_as(plan: str, stage_id: str) -> str:
    """The ``ran as:`` line of *stage_id* in a run's plan."""
    lines = plan.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"{stage_id}:"))
    return next(line.strip() for line in lines[start:] if line.strip().startswith("ran as:"))


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_a_spark_runs_small_stage_run_says_it_ran_in_the_driver_and_why(tmp_path: Path) -> None:
    """On Spark, a queue-fed stage run of few FlowFiles is described as run in the driver, with
    its FlowFile count against driver_run_max_flowfiles; the source stage ran on Spark."""
    flow = _split_into_queue(tmp_path, [30, 20])
    settings = Settings(sync=False, parallelism=2)
    result = run_flow(flow, "spark", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 50
    assert _ran_as(result.plan, "stage-2") == (
        "ran as: in the driver (50 FlowFiles <= driver_run_max_flowfiles): 2 task(s)"
    )
    assert "Spark stage(s)" in _ran_as(result.plan, "stage-1")
    assert "in the driver: runs taking at most 20,000 queued FlowFiles" in result.plan  # why


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_a_stage_run_both_on_spark_and_in_the_driver_shows_the_last_of_each(
    tmp_path: Path,
) -> None:
    """A stage whose runs went to Spark (a large one) and to the driver (a small one) says
    both, each with its count of runs."""
    flow = _split_into_queue(tmp_path, [150, 50])  # two segments: 150 and 50 FlowFiles
    settings = Settings(  # a stage run takes one segment (splits are batched); 50 is small
        sync=False,
        parallelism=2,
        batch_max_flowfiles=1,
        batch_max_batched_flowfiles=1,
        driver_run_max_flowfiles=100,
    )
    result = run_flow(flow, "spark", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 200
    ran_as = _ran_as(result.plan, "stage-2")
    assert "Spark stage(s), 1 task(s) on local" in ran_as
    assert "(1 run(s)); in the driver (50 FlowFiles <= driver_run_max_flowfiles): 1 task(s)" in (
        ran_as
    )
    assert ran_as.endswith("(1 run(s))")


def test_the_direct_runner_describes_its_runs_as_before(tmp_path: Path) -> None:
    """On the direct runner every run is in-process anyway: no driver_run_max_flowfiles note."""
    flow = _split_into_queue(tmp_path, [30, 20])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert _ran_as(result.plan, "stage-2") == "ran as: 2 task(s) in-process"
