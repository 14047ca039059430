"""Tests for processors the controller cannot schedule: on_scheduled raising (tried again
after the administrative yield) and disabled processors."""

from __future__ import annotations

import time
from pathlib import Path

from flowcore import Flow, Processor, Relationship
from flowcore.compiler.stages import compile_flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GenerateFlowFile, GetFile, PutFile, UpdateAttribute
from repositories.repository_set import read_bulletins
from tests.flowcore.driver._controller_runs import SETTINGS


class NeedsService(Processor):
    """Passes FlowFiles on; its on_scheduled raises while the file *down* exists (a service
    that is down), and it writes *done* once it has passed a FlowFile on."""

    relationships = (Relationship("success", "passed"),)

    def __init__(self, down: str, done: str = "", **properties: object) -> None:
        super().__init__(**properties)
        self.down, self.done = down, done

    def on_scheduled(self, context):  # type: ignore[no-untyped-def]
        if Path(self.down).exists():
            msg = "service at db:5432 refused the connection"
            raise ConnectionError(msg)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")
            if self.done:
                Path(self.done).touch()


def test_a_processor_whose_on_scheduled_raises_leaves_its_input_queued(
    tmp_path: Path, runner: str
) -> None:
    """As NiFi: an ERROR bulletin names the processor and the exception, the rest of the flow
    runs, its input stays queued with a stuck reason naming the failure; a later run, the
    service back, processes it."""
    down = tmp_path / "down"
    down.touch()
    flow = Flow("scheduling")
    gen = flow.add(GenerateFlowFile(batch_size=3, unique_flowfiles=True), name="gen")
    needs = flow.add(NeedsService(str(down)), name="needs")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, needs)
    flow.connect(gen, tag)
    flow.auto_terminate(needs, "success")
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 3
    assert not result.finished
    assert sum(count for count, _ in result.queued.values()) == 3
    [why] = result.stuck.values()
    assert why.startswith(
        "needs could not be scheduled: on_scheduled raised ConnectionError: service at "
        "db:5432 refused the connection"
    )
    messages = {b.message for b in read_bulletins(tmp_path / "repo")}
    assert any(
        m.startswith("NeedsService 'needs' failed to schedule: on_scheduled") for m in messages
    )
    down.unlink()
    again = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.count("needs", "success") == 6  # the 3 kept, and 3 new
    assert again.finished


def test_on_scheduled_is_tried_again_after_the_administrative_yield(tmp_path: Path) -> None:
    """In a continuous run a processor whose on_scheduled raised is scheduled again after the
    administrative yield duration; once it succeeds its queued input goes through."""
    down, done = tmp_path / "down", tmp_path / "done"
    down.touch()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a")
    flow = Flow("retry")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    needs = flow.add(NeedsService(str(down), str(done)), name="needs")
    flow.connect(get, needs)
    flow.auto_terminate(needs, "success")
    settings = Settings(
        sync=False, parallelism=1, poll_interval="10 ms", administrative_yield_duration="200 ms"
    )
    started = time.monotonic()
    calls = []

    def stop() -> bool:
        calls.append(1)
        if len(calls) == 3:
            down.unlink()  # the service comes back
        return done.exists() or time.monotonic() - started > 60

    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, continuous=True,
        should_stop=stop,
    )  # fmt: skip
    assert result.count("needs", "success") == 1
    assert any("failed to schedule" in b.message for b in result.bulletins)
    assert not result.unscheduled


def test_a_disabled_processor_never_runs_and_its_flowfiles_wait_for_it(
    tmp_path: Path, runner: str
) -> None:
    """FlowFiles queue durably before a disabled processor (never validated nor scheduled);
    the rest of the flow runs, and the batch run ends finished, saying what waits for it."""
    flow = Flow("half-off")
    gen = flow.add(GenerateFlowFile(batch_size=3), name="gen")
    tag = flow.add(UpdateAttribute(kind="log"), name="tag")
    put = flow.add(PutFile(), name="put", disabled=True)  # no Directory: not validated
    flow.connect(gen, tag)
    into = flow.connect(tag, put)
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.finished
    assert result.stuck == {}
    assert result.count("tag", "success") == 3
    assert "put" not in result.received
    assert result.disabled == {"tag -[success]-> put": "put"}
    assert result.waiting_for_disabled() == {"put": (3, 0)}
    again = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.queued["tag -[success]-> put"][0] == 6  # kept, durably, run after run
    assert into.id in compile_flow(flow).durable


def test_enabling_a_disabled_processor_takes_what_waited_for_it(tmp_path: Path) -> None:
    """Enabled, the processor's input is pipelined again, yet stays durable while it holds the
    FlowFiles earlier runs queued: the next run processes them, none is left behind."""

    def half_off(disabled: bool) -> Flow:
        flow = Flow("half-off")
        gen = flow.add(GenerateFlowFile(batch_size=3), name="gen")
        tag = flow.add(UpdateAttribute(kind="log"), name="tag", disabled=disabled)
        flow.connect(gen, tag)
        flow.auto_terminate(tag, "success")
        return flow

    first = run_flow(half_off(True), "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert first.waiting_for_disabled() == {"tag": (3, 0)}
    enabled = half_off(False)
    assert compile_flow(enabled).durable == {}
    again = run_flow(enabled, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert again.count("tag", "success") == 6
    assert again.queued == {}
    assert "durable: holds FlowFiles an earlier run queued" in again.plan
