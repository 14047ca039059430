"""Tests for flowcore/session/batch_context.py: what a batch form stages and reports."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from flowcore.session.batch_context import BatchContext
from flowcore.testing import TestRunner
from flowcore.testing._batches import batches_of
from processors import LogAttribute


def _context_and_batch(count: int = 3) -> tuple[BatchContext, TestRunner, object]:
    runner = TestRunner(LogAttribute())
    for index in range(count):
        runner.enqueue(f"line {index}", {"filename": f"f{index}"})
    ((batch, _),) = batches_of(runner._host.take_ready(), runner.content)
    return BatchContext(runner.context, runner), runner, batch


def test_discarding_deletes_the_staged_files_and_forgets_lines_and_events(tmp_path: Path) -> None:
    """A batch that declines leaves no temporary, and nothing of it is carried out."""
    context, _, batch = _context_and_batch()
    temporary = context.stage_file(tmp_path / "out.txt", replace=False)
    temporary.write_bytes(b"x")
    assert context.is_staged(tmp_path / "out.txt")
    context.log_after_commit("flowcore.test", logging.WARNING, "once")
    context.report_send(batch, "file:///out")  # type: ignore[arg-type]
    assert context.holds_effects
    context.discard()
    assert not temporary.exists()
    assert not context.holds_effects
    assert not context.take()
    assert not context.is_staged(tmp_path / "out.txt")


def test_taking_hands_over_what_was_staged_and_reported(tmp_path: Path) -> None:
    """A batch that goes whole: its publications, lines and SEND reports, then a clean slate."""
    context, _, batch = _context_and_batch()
    temporary = context.stage_file(tmp_path / "a.txt")
    context.log_after_commit("flowcore.test", logging.INFO, "line")
    context.report_send(batch, ["file:///a", "file:///c"], rows=[0, 2])  # type: ignore[arg-type]
    taken = context.take()
    assert [(p.temporary, p.target) for p in taken.publications] == [
        (str(temporary), str(tmp_path / "a.txt"))
    ]
    assert [line.message for line in taken.logs] == ["line"]
    (sent,) = taken.sends
    assert sent.rows.tolist() == [0, 2]  # type: ignore[union-attr]
    assert sent.transit_uris == ("file:///a", "file:///c")
    assert not context.take()


def test_a_uri_per_flowfile_must_name_each_flowfile_sent() -> None:
    """One URI per FlowFile sent, or one for all: anything else is a batch form's bug."""
    context, _, batch = _context_and_batch()
    with pytest.raises(ValueError, match="2 transit URIs for 3 FlowFiles"):
        context.report_send(batch, ["file:///a", "file:///b"])  # type: ignore[arg-type]


def test_contents_are_each_flowfile_s_bytes_in_order() -> None:
    """Contents come from the batch's claim, FlowFile by FlowFile or joined."""
    context, _, batch = _context_and_batch()
    each = [b"".join(bytes(p) for p in pieces) for pieces in context.contents(batch)]  # type: ignore[arg-type]
    assert each == [b"line 0", b"line 1", b"line 2"]
    joined = b"".join(bytes(p) for p in context.joined_contents(batch, b"|"))  # type: ignore[arg-type]
    assert joined == b"line 0|line 1|line 2"
    assert np.array_equal(batch.sizes, [6, 6, 6])  # type: ignore[attr-defined]


def test_written_contents_lie_back_to_back_in_a_claim_per_part() -> None:
    """write_contents gives each FlowFile its bytes: cuts of the batch, one claim each, ids kept."""
    context, runner, batch = _context_and_batch(5)
    runner.content.max_appendable_size = 6
    written = context.write_contents(batch, [b"aa", b"", b"cccc", b"d", b"eeeeeee"])  # type: ignore[arg-type]
    assert [p.count for p in written.parts] == [3, 2]  # a new part once one holds 6 bytes
    assert written.count == 5
    read = [runner.content.read(f.content) if f.content else b"" for p in written.parts for f in p]
    assert read == [b"aa", b"", b"cccc", b"d", b"eeeeeee"]
    assert np.concatenate([p.ids for p in written.parts]).tolist() == batch.ids.tolist()  # type: ignore[attr-defined]
    assert all(context.wrote(p) for p in written.parts)
    assert not context.wrote(batch)  # type: ignore[arg-type]
    routes = written.routes("success", [4, 0, 1, 2, 3])
    assert [r.rows.tolist() for r in routes] == [[4, 0, 1], [2, 3]]
    context.discard()
    assert not any(context.wrote(p) for p in written.parts)  # forgotten with the batch


def test_contents_must_be_one_per_flowfile() -> None:
    """Too few or too many contents are refused, naming the counts."""
    context, _, batch = _context_and_batch(2)
    with pytest.raises(ValueError, match="1 contents for the 2 FlowFiles"):
        context.write_contents(batch, [b"a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more than 2 contents"):
        context.write_contents(batch, [b"a", b"b", b"c"])  # type: ignore[arg-type]


def test_empty_contents_need_no_claim() -> None:
    """FlowFiles all made empty have no content claim, as a session's empty write."""
    context, _, batch = _context_and_batch(2)
    (part,) = context.write_contents(batch, [b"", b""]).parts  # type: ignore[arg-type]
    assert part.resource_claim is None
    assert part.sizes.tolist() == [0, 0]
