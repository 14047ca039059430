"""Tests for a task's members: damaged content read during a run goes to failure, never lost."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from flowcore import (
    Flow,
    FlowFileTransform,
    Processor,
    Relationship,
    SourceProcessor,
    TransformResult,
    WorkItem,
    WorkListing,
)
from flowcore.driver.controller import Controller, RunResult, run_flow
from flowcore.flowfile import FlowFile
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import GenerateFlowFile, GetFile, MergeContent, PutFile, SplitText, UpdateAttribute
from repositories.flowfile_wal import iter_queue
from repositories.repository_set import RepositorySet

SETTINGS = Settings(sync=False, parallelism=1, driver_run_max_flowfiles=0)
REASON = "content.failure.reason"
FILE_SIZE = 100_000  # three files, one claim file: the middle one alone holds block 2


class ReadAll(Processor):
    """Reads each FlowFile whole; it has no failure relationship."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.read_bytes(flowfile)
            session.transfer(flowfile, "success")


class Upper(FlowFileTransform):
    """A user-written transform: upper-cases the content."""

    def transform(self, context, flowfile):  # type: ignore[no-untyped-def]
        return TransformResult(contents=flowfile.read().upper())


def _inputs(directory: Path) -> dict[str, bytes]:
    directory.mkdir(parents=True)
    contents = {}
    for number in range(3):
        line = f"file {number} line\n".encode()
        data = (line * (FILE_SIZE // len(line) + 1))[:FILE_SIZE]
        (directory / f"in-{number}.txt").write_bytes(data)
        contents[f"in-{number}.txt"] = data
    return contents


def _flow(tmp_path: Path, consumer: Processor, terminate: tuple[str, ...]) -> Flow:
    flow = Flow("damage")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True), name="get")
    use = flow.add(consumer, name="use")
    flow.connect(get, use, durable=True)
    flow.auto_terminate(use, list(terminate))
    return flow


def _queue_then_damage(
    tmp_path: Path, flow: Flow, damage: Callable[[Path, FlowFile], None]
) -> dict[str, FlowFile]:
    """Run only GetFile (its FlowFiles wait in the durable queue), then damage their claim."""
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    controller = Controller(flow, DirectRunner(), repos, SETTINGS)
    controller.run_stage(controller.compiled.stages[0])
    controller.close()
    (queue,) = repos.flowfiles.queue_ids()
    queued = {f.attributes["filename"]: f for f in iter_queue(repos.flowfiles, queue)}
    repos.close()
    claims = {f.content.resource_claim for f in queued.values()}  # type: ignore[union-attr]
    assert len(claims) == 1
    (claim,) = claims
    damage(tmp_path / "repo" / "content" / claim.section / claim.id, queued["in-1.txt"])
    return queued


def _flip_middle(path: Path, flowfile: FlowFile) -> None:
    """Flip a byte in the middle of *flowfile*'s range, in a block no other FlowFile touches."""
    assert flowfile.content is not None
    position = flowfile.content.offset + flowfile.size // 2
    assert position // 65536 == 2
    raw = bytearray(path.read_bytes())
    raw[position] ^= 0x20
    path.write_bytes(bytes(raw))


def _failure_reasons(repository: Path) -> dict[str, str]:
    """content.failure.reason per filename, from the DROP events of auto-terminated failures."""
    repos = RepositorySet.open(repository, SETTINGS)
    try:
        events = repos.provenance.search(event_type="DROP", limit=100_000)
    finally:
        repos.close()
    return {
        e.previous_attributes.get("filename") or e.updated_attributes.get("filename", ""): (
            e.updated_attributes.get(REASON) or e.previous_attributes.get(REASON, "")
        )
        for e in events
        if REASON in e.updated_attributes or REASON in e.previous_attributes
    }


def _run(tmp_path: Path, flow: Flow, runner: str = "direct") -> RunResult:
    return run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)


def test_a_flipped_byte_sends_its_flowfile_to_failure_and_the_rest_on(
    tmp_path: Path, runner: str
) -> None:
    """SplitText reading a damaged block: that FlowFile goes to failure with the reason."""
    _inputs(tmp_path / "in")
    flow = _flow(tmp_path, SplitText(line_split_count=100), ("splits", "original", "failure"))
    _queue_then_damage(tmp_path, flow, _flip_middle)
    result = _run(tmp_path, flow, runner)
    assert result.count("use", "failure") == 1
    assert result.count("use", "original") == 2
    assert result.queued == {}
    (reason,) = _failure_reasons(tmp_path / "repo").items()
    assert reason[0] == "in-1.txt"
    assert "is damaged: block 2 (bytes 131072 to 196607) has CRC32C" in reason[1]
    assert any("routed 1 FlowFile(s) to failure" in b.message for b in result.bulletins)


def test_a_sink_failing_damaged_content_itself_writes_the_rest(tmp_path: Path) -> None:
    """PutFile routes the damaged FlowFile to failure; no partial file, the others byte for byte."""
    contents = _inputs(tmp_path / "in")
    flow = _flow(tmp_path, PutFile(directory=str(tmp_path / "out")), ("success", "failure"))
    _queue_then_damage(tmp_path, flow, _flip_middle)
    result = _run(tmp_path, flow)
    assert result.count("use", "failure") == 1
    assert sorted(os.listdir(tmp_path / "out")) == ["in-0.txt", "in-2.txt"]
    for name in ("in-0.txt", "in-2.txt"):
        assert (tmp_path / "out" / name).read_bytes() == contents[name]
    assert "block 2" in _failure_reasons(tmp_path / "repo")["in-1.txt"]


def test_a_transform_failing_damaged_content_logs_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A FlowFileTransform sends damaged content to failure with the reason and no traceback."""
    _inputs(tmp_path / "in")
    flow = _flow(tmp_path, Upper(), ("success", "failure"))
    _queue_then_damage(tmp_path, flow, _flip_middle)
    result = _run(tmp_path, flow)
    assert (result.count("use", "success"), result.count("use", "failure")) == (2, 1)
    assert "block 2" in _failure_reasons(tmp_path / "repo")["in-1.txt"]
    assert not [r for r in caplog.records if r.exc_info]


def test_without_a_failure_relationship_damaged_content_stays_queued(tmp_path: Path) -> None:
    """A processor without failure keeps the damaged FlowFile queued with a bulletin."""
    _inputs(tmp_path / "in")
    flow = _flow(tmp_path, ReadAll(), ("success",))
    _queue_then_damage(tmp_path, flow, _flip_middle)
    result = _run(tmp_path, flow)
    assert result.count("use", "success") == 2
    assert sum(count for count, _ in result.queued.values()) == 1
    (bulletin,) = [b for b in result.bulletins if "cannot read the content" in b.message]
    assert "block 2" in bulletin.message
    assert "no failure relationship" in bulletin.message


def test_a_claim_cut_short_sends_every_flowfile_in_it_to_failure(tmp_path: Path) -> None:
    """A truncated claim file is untrustworthy whole: each of its FlowFiles fails, none is lost."""
    _inputs(tmp_path / "in")
    flow = _flow(tmp_path, SplitText(line_split_count=100), ("splits", "original", "failure"))
    _queue_then_damage(tmp_path, flow, lambda path, _f: os.truncate(path, 150_000))
    result = _run(tmp_path, flow)
    assert result.count("use", "failure") == 3
    assert result.queued == {}
    reasons = _failure_reasons(tmp_path / "repo")
    assert sorted(reasons) == ["in-0.txt", "in-1.txt", "in-2.txt"]
    assert all("no checksum footer, so it was cut short" in r for r in reasons.values())


def test_a_damaged_flowfile_leaves_its_bin_and_the_others_still_merge(tmp_path: Path) -> None:
    """MergeContent failing on damaged content: that one to failure, its bin mates merge later."""
    _inputs(tmp_path / "in")
    flow = _flow(
        tmp_path, MergeContent(minimum_number_of_entries=3), ("merged", "original", "failure")
    )
    _queue_then_damage(tmp_path, flow, _flip_middle)
    result = _run(tmp_path, flow)
    assert result.count("use", "failure") == 1
    assert result.count("use", "original") == 2
    assert result.count("use", "merged") == 1
    assert result.queued == {}
    assert sorted(_failure_reasons(tmp_path / "repo")) == ["in-1.txt"]


class Fails(Processor):
    """Raises on every FlowFile: its session rolls back, penalizing the FlowFile."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        if session.get() is not None:
            msg = "no"
            raise RuntimeError(msg)


class TakesOne(Processor):
    """Takes one FlowFile per trigger, then yields."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")
        context.yield_()


def _one_pass(tmp_path: Path, flow: Flow) -> tuple[Controller, RepositorySet]:
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    controller = Controller(flow, DirectRunner(), repos, SETTINGS)
    for stage in controller.compiled.stages:
        controller.run_stage(stage)
    return controller, repos


@pytest.mark.parametrize(("penalty", "expected_ms"), [(None, 30_000), ("5 min", 300_000)])
def test_a_rollback_penalizes_for_the_processors_penalty_duration(
    tmp_path: Path, penalty: str | None, expected_ms: int
) -> None:
    """NiFi's Penalty Duration of the component, else the engine's 30 sec."""
    flow = Flow("penalty")
    gen = flow.add(GenerateFlowFile(), name="gen")
    use = flow.add(Fails(), name="use", penalty_duration=penalty)
    flow.connect(gen, use)
    flow.auto_terminate(use, "success")
    before = int(time.time() * 1000)
    controller, repos = _one_pass(tmp_path, flow)
    controller.close()
    (queue,) = repos.flowfiles.queue_ids()
    (flowfile,) = iter_queue(repos.flowfiles, queue)
    repos.close()
    assert before + expected_ms <= flowfile.penalty_expiration <= before + expected_ms + 10_000


@pytest.mark.parametrize(("yield_duration", "taken_again"), [("1 ms", 1), ("5 min", 0)])
def test_a_yield_waits_the_processors_yield_duration(
    tmp_path: Path, yield_duration: str, taken_again: int
) -> None:
    """What a yielding processor left is taken again after its own Yield Duration."""
    flow = Flow("yield")
    gen = flow.add(GenerateFlowFile(batch_size=3), name="gen")
    use = flow.add(TakesOne(), name="use", yield_duration=yield_duration)
    flow.connect(gen, use)
    flow.auto_terminate(use, "success")
    controller, repos = _one_pass(tmp_path, flow)
    try:
        time.sleep(0.05)
        stage = controller.compiled.stage_of(use)
        assert controller.run_stage(stage) == taken_again
    finally:
        controller.close()
        repos.close()


class Letters(SourceProcessor):
    """Lists the letters a to c once, and makes a FlowFile of each, one session an item."""

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        if state:
            return WorkListing((), state)
        return WorkListing([WorkItem(k, {"letter": k}) for k in "abc"], {"listed": "yes"})

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        made = session.write(session.create(), item.payload["letter"])
        session.transfer(made, "success")


class NamedLetters(Letters):
    """Letters whose items name what they read: its FlowFiles' uuids derive from them."""

    identifies_work = True


def _letter_uuids(repository: Path, source: SourceProcessor) -> dict[str, str]:
    """The uuid of each letter *source* made in a run, by its content."""
    flow = Flow("letters")
    letters = flow.add(source, name="letters")
    hold = flow.add(UpdateAttribute(), name="hold", disabled=True)
    flow.connect(letters, hold, durable=True)
    run_flow(flow, "direct", repository=repository, settings=SETTINGS)
    repos = RepositorySet.open(repository, SETTINGS)
    try:
        (queue,) = repos.flowfiles.queue_ids()
        return {repos.content.read(f.content): f.uuid for f in iter_queue(repos.flowfiles, queue)}
    finally:
        repos.close()


def test_a_source_read_one_by_one_derives_uuids_from_its_items(tmp_path: Path) -> None:
    """A source that identifies its work makes the same uuids when the same items are read
    again (a replay); one that does not keeps NiFi's random uuids."""
    named = [_letter_uuids(tmp_path / f"named{n}", NamedLetters()) for n in range(2)]
    plain = [_letter_uuids(tmp_path / f"plain{n}", Letters()) for n in range(2)]
    assert sorted(named[0]) == [b"a", b"b", b"c"]
    assert named[0] == named[1]
    assert sorted(plain[0]) == [b"a", b"b", b"c"]
    assert not set(plain[0].values()) & set(plain[1].values())
