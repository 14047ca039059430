"""Tests for the harness's batch mode helpers: FlowFiles as batches."""

from __future__ import annotations

import pytest

from flowcore.processor import Processor
from flowcore.processor.relationship import SUCCESS
from flowcore.session.host import RetryPolicy
from flowcore.testing import TestRunner
from flowcore.testing._batches import batches_of
from processors import UpdateAttribute


def _queued(runner: TestRunner) -> list:
    return runner._host.take_ready()


def test_queued_flowfiles_become_one_batch_that_gives_them_back() -> None:
    """A batch of enqueued FlowFiles (each content in its own claim) materializes the same
    FlowFiles, their contents copied into one claim."""
    runner = TestRunner(UpdateAttribute)
    runner.enqueue(b"alpha", {"k": "1", "same": "x"})
    runner.enqueue(b"", {"same": "x"})
    runner.enqueue(b"gamma!", {"k": "3", "same": "x"})
    flowfiles = _queued(runner)
    [(batch, held)] = batches_of(flowfiles, runner.content)
    assert batch.attributes["same"] == "x"
    assert "k" in batch.columns
    made = batch.flowfiles()
    assert [f.uuid for f in made] == [f.uuid for f in flowfiles]
    assert [f.id for f in made] == [f.id for f in flowfiles]
    assert [dict(f.attributes) for f in made] == [dict(f.attributes) for f in flowfiles]
    assert [f.content for f in made] == [f.content for f in held]
    contents = [runner.content.read(f.content) if f.content else b"" for f in made]
    assert contents == [b"alpha", b"", b"gamma!"]
    for flowfile in flowfiles:  # the old claims were released
        if flowfile.content is not None:
            assert not runner.content.exists(flowfile.content.resource_claim)


def test_flowfiles_of_different_dates_make_separate_batches() -> None:
    """FlowFiles enqueued before and after the clock moves cannot share a batch's dates."""
    runner = TestRunner(UpdateAttribute)
    runner.enqueue("a")
    runner.advance_time(1)
    runner.enqueue("b")
    runner.enqueue("c")
    made = batches_of(_queued(runner), runner.content)
    assert [b.count for b, _ in made] == [1, 2]


class _LastSeen(Processor):
    """Keeps the last FlowFile's ``n`` in its state; its batch form declines ``stop`` batches."""

    relationships = (SUCCESS,)
    supports_batching = True

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is None:
            return
        session.set_state({"last": flowfile.attributes["n"]})
        session.transfer(flowfile, SUCCESS)

    def transform_batch(self, context, batch):  # type: ignore[no-untyped-def]
        if "stop" in batch.attributes or "stop" in batch.columns:
            return None
        last = batch.flowfiles()[-1].attributes["n"]
        context.set_state({"last": last})
        return SUCCESS.name, batch


def test_batches_after_a_declined_one_go_one_by_one_in_order() -> None:
    """A batch form that sets state never runs ahead of FlowFiles waiting one by one: the state
    ends as one by one leaves it."""
    runner = TestRunner(_LastSeen(), batches=True)
    runner.enqueue("a", {"n": "1", "stop": "yes"})
    runner.advance_time(1)
    runner.enqueue("b", {"n": "2"})
    runner.enqueue("c", {"n": "3"})
    runner.run()
    assert runner.state == {"last": "3"}
    assert runner.batch_use.whole == 0
    assert any("an earlier batch went one by one" in d for d in runner.batch_use.declined)


def test_a_retried_relationship_sends_the_batch_one_by_one_as_the_engine_does() -> None:
    """The engine's driver runs in the harness: a batch routed to a retried relationship goes
    one by one, so each FlowFile is retried through a session and counts its tries."""
    runner = TestRunner(UpdateAttribute(), batches=True)
    runner.retry_policy = RetryPolicy("UpdateAttribute-1", frozenset({"success"}), 3, True, 1, 10)
    runner.enqueue("a")
    runner.enqueue("b")
    runner.run()
    assert runner.batch_use.whole == 0
    assert runner.batch_use.declined == [
        "a relationship it sent FlowFiles to is retried for 2 FlowFiles"
    ]
    runner.assert_transfer_count("success", 0)
    assert [f.attributes["retryCount.UpdateAttribute-1"] for f in runner.queued_flowfiles] == [
        "1",
        "1",
    ]


def test_a_batch_dropped_on_an_auto_terminated_relationship_releases_its_contents() -> None:
    """FlowFiles a batch form sends to an auto-terminated relationship are dropped as a commit
    drops them: counted, a DROP each after what the processor reported (UpdateAttribute's
    ATTRIBUTES_MODIFIED), and their content released."""
    runner = TestRunner(UpdateAttribute(), batches=True)
    runner.auto_terminate("success")
    runner.enqueue("a")
    runner.enqueue("bc")
    runner.run()
    assert runner.batch_use.whole == 2
    assert runner.auto_terminated_count("success") == 2
    kinds = [e.event_type.name for e in runner.provenance_events]
    assert kinds == ["ATTRIBUTES_MODIFIED", "ATTRIBUTES_MODIFIED", "DROP", "DROP"]
    assert list(runner.content.resource_claims()) == []


def test_a_batch_form_result_that_is_not_routes_fails_the_test() -> None:
    """What the engine reports as a bulletin (a result that is not routes at all) is an
    AssertionError in the harness, naming the processor's problem."""

    class _Lossy(UpdateAttribute):
        def transform_batch(self, context, batch):  # type: ignore[no-untyped-def]
            return [("success", batch.take([0]))]

    runner = TestRunner(_Lossy(), batches=True)
    runner.enqueue("a")
    runner.enqueue("b")
    with pytest.raises(AssertionError, match=r"_Lossy.transform_batch returned a result the "):
        runner.run()


def test_contents_a_batch_form_writes_and_then_drops_are_removed() -> None:
    """New contents of FlowFiles a batch form sends to an auto-terminated relationship are
    removed when the trigger ends, as a commit removes what nothing claims."""
    from processors import ReplaceText

    runner = TestRunner(
        ReplaceText(replacement_value="X", replacement_strategy="Always Replace"), batches=True
    )
    runner.auto_terminate("success")
    runner.enqueue("a")
    runner.enqueue("b")
    runner.run()
    assert runner.auto_terminated_count("success") == 2
    assert list(runner.content.resource_claims()) == []


def test_a_retried_relationship_bins_one_by_one_as_the_engine_does() -> None:
    """A binning processor with a retried relationship does not bin batches whole (its
    sessions take FlowFiles back one by one), in the harness as in a task."""
    from processors import MergeContent

    runner = TestRunner(MergeContent(minimum_number_of_entries=2), batches=True)
    runner.retry_policy = RetryPolicy("MergeContent-1", frozenset({"original"}), 3, True, 1, 10)
    runner.enqueue("a")
    runner.enqueue("b")
    runner.run()
    assert runner.batch_use.declined == ["a relationship is retried for 2 FlowFiles"]
    assert runner.batch_use.whole == 0
