"""Tests for split FlowFiles as batches inside tasks: SplitText, UpdateAttribute,
RouteOnAttribute and MergeContent (Defragment included) give the one-by-one FlowFiles and events,
in queue order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import processors._merge_batches as merge_batches
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import (
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
    split_text,
)
from tests.flowcore.engine._batch_outcomes import (
    SETTINGS,
    _one_by_one,
    _per_component,
    _run_outcome,
)


def _split_flow(root: Path, out: Path, lines_per_split: int) -> Flow:
    """GetFile -> SplitText -> UpdateAttribute (EL) -> RouteOnAttribute -> MergeContent -> put."""
    flow = Flow("distinct")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=lines_per_split), name="split")
    tag = flow.add(
        UpdateAttribute(
            group="${fragment.index:mod(3)}",
            lines="${text.line.count:plus(1)}",
            source="${segment.original.filename:substringBefore('.'):toUpper()}",
            kind="split",
        ),
        name="tag",
    )
    route = flow.add(RouteOnAttribute(low="${fragment.index:mod(3):lt(1)}"), name="route")
    merge = flow.add(
        MergeContent(correlation_attribute_name="group", minimum_number_of_entries=1_000),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${source}-${group}-${merge.count}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, route)
    flow.connect(route, merge, ["low", "unmatched"], back_pressure_object_threshold=100_000)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _split_outcome(
    root: Path,
    name: str,
    lines_per_split: int,
    runner: str = "direct",
    settings: Settings = SETTINGS,
) -> tuple:
    """:func:`_run_outcome` of the split flow."""
    flow = _split_flow(root, root / name / "out", lines_per_split)
    return _run_outcome(root, name, flow, runner, settings)


_LINE = st.text(st.sampled_from("abc 5"), max_size=6).map(str.encode)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(_LINE, min_size=1, max_size=30), min_size=1, max_size=3),
    st.booleans(),
    st.integers(1, 3),
    st.sampled_from([1, 4, split_text.BATCH_SPLITS]),
)
def test_distinct_splits_as_batches_give_the_one_by_one_flowfiles_and_events(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[bytes]],
    final_newline: bool,
    lines_per_split: int,
    batch_splits: int,
) -> None:
    """SplitText, UpdateAttribute and RouteOnAttribute on batches: same files, transfers and
    provenance, events in the same order (empty lines, unterminated last lines, groups of
    lines and inputs split into several batches included); handed on part by part, each
    component's events in the same order."""
    root = tmp_path_factory.mktemp("splits")
    (root / "in").mkdir()
    for number, lines in enumerate(files):
        body = b"\n".join(lines) + (b"\n" if final_newline else b"")
        (root / "in" / f"part{number}.log").write_bytes(body)
    hand_over_at = 0 if batch_splits < 5 else 200_000  # small parts: handed on before the commit
    handing_over = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=hand_over_at)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(split_text, "BATCH_SPLITS", batch_splits)
        batched = _split_outcome(root, "batches", lines_per_split, settings=handing_over)
    with pytest.MonkeyPatch.context() as patch:
        _one_by_one(patch)
        single = _split_outcome(root, "single", lines_per_split)
    if hand_over_at:
        assert batched == single
    else:
        assert _per_component(batched) == _per_component(single)


def test_distinct_splits_as_batches_on_each_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str
) -> None:
    """The batch path on this runner gives the direct one-by-one path's outcome, events in
    the same order; its splits handed on before the commit, each component's in the same
    order."""
    lines = [f"10.0.0.{i % 7} GET /p/{i} {(200, 404, 500)[i % 3]}".encode() for i in range(500)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "access.log").write_bytes(b"\n".join(lines) + b"\n")
    batched = _split_outcome(tmp_path, "batches", 1, runner)
    handing_over = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=0)
    handed = _split_outcome(tmp_path, "handed", 1, runner, settings=handing_over)
    _one_by_one(monkeypatch)
    single = _split_outcome(tmp_path, "single", 1)
    assert batched == single
    assert _per_component(handed) == _per_component(single)
    assert batched[2]["split"]["splits"][0] == 500


def _defragment_flow(root: Path, out: Path) -> Flow:
    """GetFile -> SplitText (3 lines, newlines kept) -> MergeContent Defragment -> PutFile."""
    flow = Flow("defragment")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=3, remove_trailing_newlines=False), name="split")
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, merge, "splits")
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_defragmenting_batches_reassembles_each_file_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defragment over split batches: each file whole again, the same events as one by one."""
    (tmp_path / "in").mkdir()
    inputs = {
        f"part{n}.log": b"".join(f"{n} line {i}\n".encode() for i in range(50 + n * 7))
        for n in range(3)
    }
    for name, data in inputs.items():
        (tmp_path / "in" / name).write_bytes(data)
    binned: list[int] = []
    real = merge_batches._defragment

    def spying(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        binned.extend(len(made.ready) for _ in [made] if made is not None)
        return made

    monkeypatch.setattr(merge_batches, "_defragment", spying)
    # One shuffle partition: bins in several partitions leave in partition order, which
    # follows a hash of their fragment.identifier, the split file's uuid; GetFile's batch form
    # derives the uuids of files read together from all of them, one by one from each, so
    # across partitions the two runs' bins would leave in an order of their uuids' hashes.
    one_partition = attrs.evolve(SETTINGS, shuffle_partitions=1)
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
        flow = _defragment_flow(tmp_path, tmp_path / name / "out")
        outcomes.append(_run_outcome(tmp_path, name, flow, settings=one_partition))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == inputs
    assert sum(binned) == 3  # every file was reassembled from batches


@pytest.mark.parametrize("durable", [True, False])
def test_a_batch_taken_whole_never_overtakes_one_declined_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """When the batch form declines a.txt's lines (they go one by one) and takes b.txt's,
    b.txt's still follow a.txt's, across a durable queue or a pipe: queue order holds."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\na2\na3\n")
    (tmp_path / "in" / "b.txt").write_text("b1\nb2\nb3\n")
    real = UpdateAttribute.transform_batch
    calls: list[int] = []

    def declining_first(self: UpdateAttribute, context: Any, batch: Any) -> Any:
        calls.append(batch.count)
        return None if len(calls) == 1 else real(self, context, batch)

    monkeypatch.setattr(UpdateAttribute, "transform_batch", declining_first)
    flow = Flow("order")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=6, maximum_number_of_entries=6), name="merge"
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, tag, "splits", durable=durable)
    flow.connect(tag, merge)
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert [p.read_bytes() for p in (tmp_path / "out").iterdir()] == [b"a1a2a3b1b2b3"]
    assert calls == [3]  # b.txt's batch waited behind a.txt's one by one: unpacked too
