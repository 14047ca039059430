"""Tests that user code runs exactly once per FlowFile per attempt, on every path: a
FlowFileTransform's batch form (whole, stopped part way, declined by the engine), its one-by-one
form, a plain ``on_trigger`` processor and a user batch form; on the direct runner, on Spark and
in the TestRunner harness. Calls are counted through a file each call appends a line to, a side
effect that survives Spark's worker processes."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from flowcore import Flow, FlowFileTransform, Processor, Relationship, TransformResult
from flowcore.definition.component_settings import RetrySettings
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.testing import TestRunner
from processors import GetFile, SplitText

ODD = Relationship("odd")
FILES = 3
LINES = 70  # per file: one FlowFile per line


def _note(log: str, flowfile: Any, where: str = "transform") -> None:
    """One line per call: the FlowFile's file and line (as an HTTP call or an insert acts)."""
    key = f"{flowfile.attributes.get('filename')}:{flowfile.attributes.get('fragment.index')}"
    with open(log, "a") as out:
        out.write(f"{where} {key}\n")


def _calls(log: Path) -> collections.Counter[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return collections.Counter(line.split(" ", 1)[1] for line in lines)


class _Effect(FlowFileTransform):
    """A transform with an outside effect, deciding by its FlowFile's line number.

    Modes: ``attributes`` (only attributes), ``contents`` (new content for every third),
    ``reads`` (reads every content), ``raises`` (every seventh raises), ``routes`` (odd lines to
    ``odd``), ``clones`` (every fifth gives two results, every eleventh none) and ``mixed`` (all
    of them).
    """

    relationships = (SUCCESS, FAILURE, ODD)

    def __init__(self, log: str, mode: str, **properties: Any) -> None:
        super().__init__(**properties)
        self.log = log
        self.mode = mode

    def transform(self, context: Any, flowfile: Any) -> Any:
        _note(self.log, flowfile)
        n = int(flowfile.attributes["fragment.index"])
        mode = self.mode
        mixed = mode == "mixed"
        if (mixed or mode == "raises") and n % 7 == 0:
            msg = f"line {n} fails"
            raise ValueError(msg)
        if (mixed or mode == "clones") and n % 11 == 0:
            return []
        if (mixed or mode == "clones") and n % 5 == 0:
            return [TransformResult(), TransformResult(attributes={"copy": "yes"})]
        attributes = {"n": str(n)}
        if mixed or mode == "reads":
            attributes["length"] = str(len(flowfile.read()))
        relationship = "odd" if (mixed or mode == "routes") and n % 2 else "success"
        contents = f"new {n}" if (mixed or mode == "contents") and n % 3 == 0 else None
        return TransformResult(relationship, contents=contents, attributes=attributes)


def _expected(mode: str) -> dict[str, int]:
    """Where the FlowFiles of one file go in *mode* (before any retry)."""
    counted: collections.Counter[str] = collections.Counter()
    mixed = mode == "mixed"
    for n in range(1, LINES + 1):
        if (mixed or mode == "raises") and n % 7 == 0:
            counted["failure"] += 1
        elif (mixed or mode == "clones") and n % 11 == 0:
            continue
        elif (mixed or mode == "clones") and n % 5 == 0:
            counted["success"] += 2
        else:
            counted["odd" if (mixed or mode == "routes") and n % 2 else "success"] += 1
    return {k: v * FILES for k, v in counted.items()}


def _inputs(root: Path) -> Path:
    source = root / "in"
    source.mkdir()
    for f in range(FILES):
        lines = "".join(f"file {f} line {i}\n" for i in range(1, LINES + 1))
        (source / f"f{f}.txt").write_text(lines)
    return source


def _flow(root: Path, processor: Processor, *, retry: RetrySettings | None = None) -> Flow:
    """GetFile -> SplitText (one line each) -> *processor*, its relationships dropped."""
    flow = Flow("once")
    get = flow.add(GetFile(input_directory=str(_inputs(root)), keep_source_file=True))
    split = flow.add(SplitText(line_split_count=1), name="split")
    options: dict[str, Any] = {"retry": retry, "penalty_duration": "1 ms"} if retry else {}
    user = flow.add(processor, name="user", **options)
    flow.connect(get, split)
    flow.connect(split, user, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(user, list(processor.relationship_names()))
    return flow


def _every_line_once(log: Path) -> None:
    calls = _calls(log)
    assert len(calls) == FILES * LINES
    assert set(calls.values()) == {1}, [k for k, v in calls.items() if v != 1][:5]


@pytest.mark.parametrize(
    "mode", ["attributes", "contents", "reads", "raises", "routes", "clones", "mixed"]
)
def test_a_transform_runs_once_per_flowfile_on_the_direct_runner(tmp_path: Path, mode: str) -> None:
    """Whatever the transform returns (contents, reads, errors, several relationships, clones or
    none), each FlowFile's transform runs once, and the FlowFiles go where the results say."""
    log = tmp_path / "calls.log"
    flow = _flow(tmp_path, _Effect(str(log), mode))
    result = flow.run("direct", repository=str(tmp_path / "repo"))
    _every_line_once(log)
    made = {r: c for r, c in result.transfers["user"].items() if c[0]}
    assert {r: c[0] for r, c in made.items()} == _expected(mode)


def test_a_transform_runs_once_per_flowfile_on_each_runner(tmp_path: Path, runner: str) -> None:
    """Spark runs the transform in its worker processes: once per FlowFile there too."""
    log = tmp_path / "calls.log"
    flow = _flow(tmp_path, _Effect(str(log), "mixed"))
    result = flow.run(runner, repository=str(tmp_path / "repo"))
    _every_line_once(log)
    assert {r: c[0] for r, c in result.transfers["user"].items() if c[0]} == _expected("mixed")


class _NoFailure(FlowFileTransform):
    """A transform without ``failure``: line 3 of each file raises, the others pass."""

    relationships = (SUCCESS,)

    def __init__(self, log: str) -> None:
        super().__init__()
        self.log = log

    def transform(self, context: Any, flowfile: Any) -> TransformResult:
        _note(self.log, flowfile)
        if flowfile.attributes["fragment.index"] == "3":
            msg = "line 3 fails"
            raise ValueError(msg)
        return TransformResult(attributes={"ok": "yes"})


def test_a_raising_transform_without_failure_rolls_back_only_its_flowfile(
    tmp_path: Path, runner: str
) -> None:
    """The FlowFile whose transform raises is rolled back, penalized and kept queued with a
    bulletin; the others are not transformed again in the same attempt."""
    log = tmp_path / "calls.log"
    result = _flow(tmp_path, _NoFailure(str(log))).run(runner, repository=str(tmp_path / "repo"))
    _every_line_once(log)
    assert result.transfers["user"]["success"][0] == FILES * (LINES - 1)
    assert sum(count for count, _ in result.queued.values()) == FILES
    assert any("line 3 fails" in b.message for b in result.bulletins)


def test_flowfiles_the_engine_retries_are_transformed_once_per_attempt(tmp_path: Path) -> None:
    """A retried relationship makes the engine refuse the batch form's routes after the
    transforms ran: the FlowFiles go one by one with their results; only a retry (a new
    attempt, asked for) calls the transform again."""
    log = tmp_path / "calls.log"
    flow = _flow(tmp_path, _Effect(str(log), "routes"), retry=RetrySettings(["odd"], count=1))
    result = flow.run("direct", repository=str(tmp_path / "repo"))
    calls = _calls(log)
    odd = {k: v for k, v in calls.items() if int(k.rsplit(":", 1)[1]) % 2}
    even = {k: v for k, v in calls.items() if k not in odd}
    assert len(calls) == FILES * LINES
    assert set(even.values()) == {1}
    assert set(odd.values()) == {2}  # the first attempt, and the one retry
    assert result.transfers["user"]["odd"][0] == FILES * LINES // 2


class _Plain(Processor):
    """A plain processor: its ``on_trigger`` has the outside effect."""

    relationships = (SUCCESS,)

    def __init__(self, log: str) -> None:
        super().__init__()
        self.log = log

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is not None:
            _note(self.log, flowfile, "on_trigger")
            session.transfer(session.put_attribute(flowfile, "seen", "yes"), SUCCESS)


class _OwnBatch(_Plain):
    """A user processor with a batch form of its own: one effect per FlowFile either way; it
    declines (before any effect) batches holding line 13."""

    def transform_batch(self, context: Any, batch: Any) -> Any:
        flowfiles = batch.flowfiles()
        if any(f.attributes["fragment.index"] == "13" for f in flowfiles):
            return None
        for flowfile in flowfiles:
            _note(self.log, flowfile, "batch")
        return "success", batch.with_attributes({"seen": "yes"})


class _Carrying(_Plain):
    """A user batch form that runs its per-FlowFile code, then declines batches holding line 13
    and hands what it decided to ``on_trigger`` (``carry_outcomes``/``carried_outcome``)."""

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        seen = context.carried_outcome(flowfile)
        if seen is None:
            _note(self.log, flowfile, "on_trigger")
            seen = "yes"
        session.transfer(session.put_attribute(flowfile, "seen", seen), SUCCESS)

    def transform_batch(self, context: Any, batch: Any) -> Any:
        flowfiles = batch.flowfiles()
        for flowfile in flowfiles:
            _note(self.log, flowfile, "batch")
        context.carry_outcomes(flowfiles, ["yes"] * len(flowfiles))
        if any(f.attributes["fragment.index"] == "13" for f in flowfiles):
            return None
        return "success", batch.with_attributes({"seen": "yes"})


@pytest.mark.parametrize("kind", [_Plain, _OwnBatch, _Carrying])
def test_a_user_processor_runs_once_per_flowfile(
    tmp_path: Path, runner: str, kind: type[_Plain]
) -> None:
    """``on_trigger`` (and a user batch form beside it, declining before its code runs or
    carrying what it decided) runs once per FlowFile."""
    log = tmp_path / "calls.log"
    result = _flow(tmp_path, kind(str(log))).run(runner, repository=str(tmp_path / "repo"))
    _every_line_once(log)
    assert result.transfers["user"]["success"][0] == FILES * LINES
    if kind is _Carrying:  # batches declined after their code ran: it did not run again
        assert "batch" in {line.split(" ")[0] for line in log.read_text().splitlines()}


@pytest.mark.parametrize("batches", [False, True])
def test_the_harness_transforms_each_flowfile_once(tmp_path: Path, batches: bool) -> None:
    """TestRunner, one FlowFile per trigger or in batch mode (where a batch stops part way and
    goes on one by one), calls the transform once per FlowFile."""
    log = tmp_path / "calls.log"
    runner = TestRunner(_Effect(str(log), "mixed"), batches=batches)
    for n in range(1, LINES + 1):
        runner.enqueue(f"line {n}", {"filename": "f.txt", "fragment.index": str(n)})
    runner.run(LINES if not batches else 1)
    calls = _calls(log)
    assert len(calls) == LINES
    assert set(calls.values()) == {1}
    expected = {k: v // FILES for k, v in _expected("mixed").items()}
    assert {r: len(runner.flowfiles_for(r)) for r in expected} == expected
    runner.flowfiles_for("odd")[1].assert_content_equals("new 3")  # line 3
