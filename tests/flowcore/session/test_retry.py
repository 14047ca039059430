"""Tests for relationship retry (NiFi's ``retryCount``), in sessions and in engine runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow, FlowFileTransform, Processor, Relationship, TransformResult
from flowcore.definition.component_settings import BackoffMechanism, RetrySettings
from flowcore.driver.controller import Controller, run_flow
from flowcore.flowfile import FlowFile
from flowcore.provenance_events import ProvenanceEventType
from flowcore.runners.direct import DirectRunner
from flowcore.session.host import RetryPolicy
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, LogAttribute, UpdateAttribute
from repositories.flowfile_wal import iter_queue
from repositories.repository_set import RepositorySet

SETTINGS = Settings(sync=False, parallelism=2, driver_run_max_flowfiles=0)
ATTRIBUTE = "retryCount.Flaky-1"


class Flaky(FlowFileTransform):
    """Sends a FlowFile to failure until it has been retried ``fails`` times (its attribute)."""

    def transform(self, context, flowfile):  # type: ignore[no-untyped-def]
        tries = int(flowfile.attributes.get(f"retryCount.{context.component.id}", "0"))
        if tries < int(flowfile.attributes.get("fails", "0")):
            return TransformResult("failure", attributes={"attempted": "yes"})
        return TransformResult("success", attributes={"tries": str(tries)})


class Splitter(Processor):
    """Makes a child of each FlowFile for success and sends the parent to failure."""

    relationships = (Relationship("success"), Relationship("failure"))

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        parent = session.get()
        if parent is None:
            return
        child = session.create(parent)
        session.transfer(child, "success")
        session.transfer(parent, "failure")


def _policy(
    component_id: str = "Flaky-1", *, count: int = 3, penalize: bool = True, base: int = 100
) -> RetryPolicy:
    return RetryPolicy(component_id, {"failure"}, count, penalize, base, 250)


# --- the session ---------------------------------------------------------------------------


def test_backoff_doubles_from_the_base_up_to_the_max() -> None:
    """The n-th retry waits 2**n times the Penalty (Yield) Duration, at most the max backoff."""
    policy = _policy(base=100)
    assert [policy.backoff_ms(n) for n in range(5)] == [100, 200, 250, 250, 250]


def test_a_retried_flowfile_goes_back_as_taken_counted_and_penalized() -> None:
    """A FlowFile sent to a retried relationship returns to the queue unchanged but counted."""
    runner = TestRunner(Flaky())
    runner.retry_policy = _policy()
    runner.enqueue(b"data", {"fails": "9"})
    runner.run()
    runner.assert_transfer_count("failure", 0)
    (back,) = runner.penalized_flowfiles
    assert back.attributes[ATTRIBUTE] == "1"
    assert "attempted" not in back.attributes  # the processor's change is undone
    assert back.penalty_expiration == pytest.approx(runner.now() + 100, abs=50)
    assert runner.provenance_events == []  # its events went with it


def test_after_the_last_retry_the_flowfile_follows_its_relationship() -> None:
    """Past the Number of Retry Attempts the FlowFile is transferred, without the counter."""
    runner = TestRunner(Flaky())
    runner.retry_policy = _policy(count=2)
    runner.enqueue(b"data", {"fails": "9"})
    for _ in range(3):
        runner.run()
        runner.advance_time(1)
    (failed,) = runner.flowfiles_for("failure")
    assert ATTRIBUTE not in failed.attributes
    assert failed.attributes["attempted"] == "yes"
    runner.assert_queue_empty()


def test_a_flowfile_that_succeeds_on_a_retry_loses_the_counter() -> None:
    """A FlowFile that gets through on its second try leaves without ``retryCount.<id>``."""
    runner = TestRunner(Flaky())
    runner.retry_policy = _policy()
    runner.enqueue(b"data", {"fails": "1"})
    runner.run()
    runner.advance_time(1)
    runner.run()
    (done,) = runner.flowfiles_for("success")
    assert done.attributes["tries"] == "1"
    assert ATTRIBUTE not in done.attributes


def test_linked_flowfiles_go_back_together_and_children_vanish() -> None:
    """A child made from a retried FlowFile is dropped; other FlowFiles commit as usual."""
    runner = TestRunner(Splitter())
    runner.retry_policy = _policy("Splitter-1")
    runner.enqueue(b"a")
    runner.run()
    runner.assert_transfer_count("success", 0)
    (back,) = runner.penalized_flowfiles
    assert back.attributes["retryCount.Splitter-1"] == "1"
    assert runner.provenance_events == []


def test_yield_processor_backoff_yields_and_does_not_penalize() -> None:
    """Under YIELD_PROCESSOR the commit asks the processor to yield; the FlowFile waits not."""
    runner = TestRunner(Flaky())
    runner.retry_policy = _policy(penalize=False, base=40)
    runner.enqueue(b"data", {"fails": "9"})
    session = runner.create_session()
    session.transfer(session.get(), "failure")
    commit = session.commit()
    assert commit.yield_ms == 40
    (back,) = runner.queued_flowfiles
    assert back.penalty_expiration == 0
    assert back.attributes[ATTRIBUTE] == "1"


def test_flowfiles_created_without_a_parent_are_never_retried() -> None:
    """A source's new FlowFile has nothing to go back to: it follows its relationship."""
    runner = TestRunner(GenerateFlowFile())
    runner.retry_policy = RetryPolicy("GenerateFlowFile-1", {"success"}, 3, True, 100, 1000)
    runner.run()
    runner.assert_transfer_count("success", 1)


# --- engine runs ---------------------------------------------------------------------------


def _flow(fails: int, count: int, mechanism: BackoffMechanism, batch: int = 3) -> Flow:
    """GenerateFlowFile -> Flaky; success and failure wait before disabled processors."""
    flow = Flow("retry")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=batch), name="gen")
    tag = flow.add(UpdateAttribute(fails=str(fails)), name="tag")
    flaky = flow.add(
        Flaky(),
        name="flaky",
        penalty_duration="10 ms",
        yield_duration="10 ms",
        retry=RetrySettings(["failure"], count=count, backoff_mechanism=mechanism),
    )
    done = flow.add(LogAttribute(), name="done", disabled=True)
    failed = flow.add(LogAttribute(), name="failed", disabled=True)
    flow.connect(gen, tag)
    flow.connect(tag, flaky)
    flow.connect(flaky, done, "success")
    flow.connect(flaky, failed, "failure")
    return flow


def _waiting(repository: Path, flow: Flow) -> dict[str, list[FlowFile]]:
    """The FlowFiles queued before each disabled processor, by its name."""
    repos = RepositorySet.open(repository, SETTINGS)
    try:
        found: dict[str, list[FlowFile]] = {}
        for connection in flow.connections:
            name = flow.component(connection.destination).name
            found[name] = list(iter_queue(repos.flowfiles, connection.id))
        return found
    finally:
        repos.close()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    fails=st.integers(0, 3),
    count=st.integers(0, 3),
    mechanism=st.sampled_from(BackoffMechanism),
)
def test_a_flaky_processor_is_retried_count_times_in_a_batch_run(
    tmp_path_factory: pytest.TempPathFactory, fails: int, count: int, mechanism: BackoffMechanism
) -> None:
    """Failing N times then succeeding: retried up to count, the batch run waits the backoffs."""
    repository = tmp_path_factory.mktemp("repo")
    flow = _flow(fails, count, mechanism)
    result = run_flow(flow, "direct", repository=repository, settings=SETTINGS)
    assert result.finished
    assert not result.stuck
    waiting = _waiting(repository, flow)
    if fails <= count:
        assert result.count("flaky", "success") == 3
        assert [f.attributes["tries"] for f in waiting["done"]] == [str(fails)] * 3
        assert waiting["failed"] == []
    else:
        assert result.count("flaky", "failure") == 3
        assert waiting["done"] == []
        assert all(f.attributes["attempted"] == "yes" for f in waiting["failed"])
    leaving = waiting["done"] + waiting["failed"]
    assert len(leaving) == 3
    assert not any(name.startswith("retryCount.") for f in leaving for name in f.attributes)


def test_retries_leave_no_provenance_events(tmp_path: Path) -> None:
    """Each FlowFile has the same events at the processor whether it was retried or not."""

    def events(fails: int, where: Path) -> dict[ProvenanceEventType, int]:
        flow = _flow(fails, 3, BackoffMechanism.PENALIZE_FLOWFILE, batch=1)
        run_flow(flow, "direct", repository=where, settings=SETTINGS)
        repos = RepositorySet.open(where, SETTINGS)
        try:
            found = repos.provenance.search(component_id=flow.component("flaky").id)
        finally:
            repos.close()
        counts: dict[ProvenanceEventType, int] = {}
        for event in found:
            counts[event.event_type] = counts.get(event.event_type, 0) + 1
        return counts

    assert events(2, tmp_path / "retried") == events(0, tmp_path / "straight")


def test_backoffs_double_in_a_run(tmp_path: Path) -> None:
    """Three retries at a 200 ms penalty wait 200 + 400 + 800 ms before the last try."""
    slow = Flow("slow")
    gen = slow.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = slow.add(UpdateAttribute(fails="3"), name="tag")
    flaky = slow.add(
        Flaky(), name="flaky", penalty_duration="200 ms", retry=RetrySettings(["failure"], count=3)
    )
    slow.connect(gen, tag)
    slow.connect(tag, flaky)
    slow.auto_terminate(flaky, ["success", "failure"])
    started = time.monotonic()
    result = run_flow(slow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    elapsed = time.monotonic() - started
    assert result.count("flaky", "success") == 1
    assert 1.4 <= elapsed < 6


def test_a_retry_survives_a_restart_durably(tmp_path: Path) -> None:
    """A FlowFile waiting to be retried is stored with its count; a new run finishes it."""
    flow = _flow(1, 3, BackoffMechanism.PENALIZE_FLOWFILE, batch=2)
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    controller = Controller(flow, DirectRunner(), repos, SETTINGS)
    for stage in controller.compiled.stages:  # one pass: the retry is queued, not yet taken
        controller.run_stage(stage)
    controller.close()
    queued = [f for q in repos.flowfiles.queue_ids() for f in iter_queue(repos.flowfiles, q)]
    repos.close()
    assert [f.attributes.get("retryCount." + flow.component("flaky").id) for f in queued] == [
        "1",
        "1",
    ]
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("flaky", "success") == 4  # the two waiting, and two new ones
    done = _waiting(tmp_path / "repo", flow)["done"]
    assert [f.attributes["tries"] for f in done] == ["1"] * 4


@pytest.mark.spark
def test_retry_on_spark(tmp_path: Path) -> None:
    """Spark runs retry as the direct runner does: retried, then through."""
    flow = _flow(2, 3, BackoffMechanism.PENALIZE_FLOWFILE)
    result = run_flow(flow, "spark", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("flaky", "success") == 3
    assert result.finished
    assert [f.attributes["tries"] for f in _waiting(tmp_path / "repo", flow)["done"]] == ["2"] * 3
