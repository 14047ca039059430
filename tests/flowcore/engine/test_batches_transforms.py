"""Tests for user processors' batch forms inside tasks: a FlowFileTransform,
docs/writing-processors.md's example and a batch form whose parts interleave give the one-by-one
outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.processor import BatchRoute, Processor
from flowcore.processor.kinds import FlowFileTransform, TransformResult
from flowcore.processor.relationship import Relationship
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute
from repositories.repository_set import RepositorySet
from tests.flowcore.engine._batch_outcomes import SETTINGS, _one_by_one, _run_outcome, _Tag


class _Parity(FlowFileTransform):
    """Tags each split odd or even, drops text.line.count, and sends line 5 to failure."""

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        index = int(flowfile.attributes["fragment.index"])
        if index == 5:
            return TransformResult("failure")
        return TransformResult(
            attributes={"parity": "odd" if index % 2 else "even", "uuid": "ignored"},
            remove_attributes=("text.line.count", "filename"),
        )


def _transform_flow(root: Path, out: Path) -> Flow:
    flow = Flow("transform")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    parity = flow.add(_Parity(), name="parity")
    merge = flow.add(
        MergeContent(correlation_attribute_name="parity", minimum_number_of_entries=1_000),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${parity}-${merge.count}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, parity, "splits")
    flow.connect(parity, merge, "success")
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(parity, "failure")
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_a_user_transform_on_batches_gives_the_one_by_one_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FlowFileTransform gets each FlowFile of a batch and its results become columns: the
    same files, transfers and events as one by one, and the FlowFiles stay batches after it."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"line %d\n" % i for i in range(40)))
    called: list[int] = []
    real = _Parity.transform_batch

    def counting(self: _Parity, context: Any, batch: Any) -> Any:
        made = real(self, context, batch)
        called.append(0 if made is None else batch.count)
        return made

    monkeypatch.setattr(_Parity, "transform_batch", counting)
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
            monkeypatch.setattr(_Parity, "transform_batch", lambda *_: None)
        flow = _transform_flow(tmp_path, tmp_path / name / "out")
        outcomes.append(_run_outcome(tmp_path, name, flow))
    assert outcomes[0] == outcomes[1]
    assert called == [40]
    assert outcomes[0][2]["parity"] == {"success": (39, 264), "failure": (1, 6)}


def test_the_documented_batch_form_gives_the_per_flowfile_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example of docs/writing-processors.md: same files, transfers and events either way."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.log").write_bytes(b"".join(b"row %d\n" % i for i in range(30)))
    outcomes = []
    for name in ("batches", "single"):
        if name == "single":
            _one_by_one(monkeypatch)
            monkeypatch.setattr(_Tag, "transform_batch", lambda *_: None)
        flow = Flow("tag")
        get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
        split = flow.add(SplitText(line_split_count=1), name="split")
        tag = flow.add(_Tag(), name="tag")
        merge = flow.add(
            MergeContent(correlation_attribute_name="group", minimum_number_of_entries=100),
            name="merge",
        )
        rename = flow.add(UpdateAttribute(filename="${group}"), name="rename")
        put = flow.add(PutFile(directory=str(tmp_path / name / "out")), name="put")
        flow.connect(get, split)
        flow.connect(split, tag, "splits")
        flow.connect(tag, merge, ["low", "high"])
        flow.connect(merge, rename, "merged")
        flow.connect(rename, put)
        flow.auto_terminate(split, ["original", "failure"])
        flow.auto_terminate(merge, ["original", "failure"])
        flow.auto_terminate(put, ["success", "failure"])
        outcomes.append(_run_outcome(tmp_path, name, flow))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2]["tag"] == {"low": (15, 84), "high": (15, 86)}


class _Interleaved(Processor):
    """Odd lines and even lines as two routes to `success` (as ReplaceText's rewritten and
    unchanged FlowFiles): the batch form's parts interleave in input order."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")

    def transform_batch(self, context, batch):  # type: ignore[no-untyped-def]
        index = batch.column("fragment.index").numbers  # type: ignore[union-attr]
        odd = index % 2 == 1
        return [
            BatchRoute("success", np.flatnonzero(odd), batch.where(odd)),
            BatchRoute("success", np.flatnonzero(~odd), batch.where(~odd)),
        ]


@pytest.mark.parametrize("one_by_one", [False, True])
def test_interleaved_parts_reach_the_next_member_in_input_order(
    tmp_path: Path, one_by_one: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch form's parts for one pipelined member go on in input order: the member counts
    the FlowFiles (stored state) in the order of their lines, as one by one does."""
    if one_by_one:
        _one_by_one(monkeypatch)
        monkeypatch.setattr(_Interleaved, "transform_batch", lambda *_: None)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f.txt").write_bytes(b"".join(b"line%d\n" % i for i in range(1, 10)))
    flow = Flow("order")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    step = flow.add(_Interleaved(), name="step")
    count = flow.add(
        UpdateAttribute(
            store_state="Store state locally",
            stateful_variables_initial_value="0",
            n="${getStateValue('n'):plus(1)}",
        ),
        name="count",
    )
    flow.connect(get, split)
    flow.connect(split, step, "splits")
    flow.connect(step, count)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(count, ["success", "set state fail"])
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = repos.provenance.search(event_type="ATTRIBUTES_MODIFIED", limit=1000)
        seen = sorted(
            (int(e.updated_attributes["n"]), int(e.attributes["fragment.index"]))
            for e in events
            if e.component_name == "count"
        )
    finally:
        repos.close()
    assert [index for _, index in seen] == list(range(1, 10))
