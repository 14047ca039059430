"""Tests for RetryFlowFile: NiFi's TestRetryFlowFile cases, reuse modes, legacy names, a loop."""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, RetryFlowFile, UpdateAttribute


def run_one(attributes: dict[str, str] | None = None, **properties: object) -> TestRunner:
    runner = TestRunner(RetryFlowFile(**properties))
    runner.enqueue("", attributes or {})
    runner.run()
    return runner


def assert_failed(runner: TestRunner) -> None:
    """The FlowFile went to failure, which NiFi auto-terminates by default: dropped there."""
    assert runner.auto_terminated_count("failure") == 1
    runner.assert_transfer_count("retry", 0)
    runner.assert_transfer_count("retries_exceeded", 0)


def test_no_retry_attribute() -> None:
    """A FlowFile without the attribute goes to retry with count 1 and the processor's uuid."""
    runner = run_one()
    runner.assert_all_flowfiles_transferred("retry", 1)
    out = runner.flowfiles_for("retry")[0]
    out.assert_attribute_equals("flowfile.retries", "1")
    out.assert_attribute_equals("flowfile.retries.uuid", runner.component.id)


def test_retry_penalizes_by_default_and_not_when_told() -> None:
    """The count goes up by one; Penalize Retries (default true) penalizes the retried FlowFile."""
    runner = run_one({"flowfile.retries": "2"})
    out = runner.flowfiles_for("retry")[0]
    out.assert_attribute_equals("flowfile.retries", "3")
    assert out.is_penalized(runner.now())
    runner = run_one({"flowfile.retries": "2"}, penalize_retries="false")
    out = runner.flowfiles_for("retry")[0]
    out.assert_attribute_equals("flowfile.retries", "3")
    assert not out.is_penalized(runner.now())


def test_non_numerical_count_resets_or_fails() -> None:
    """A count that is not a number restarts at 1, or fails with Fail on Nonnumerical Overwrite."""
    runner = run_one({"flowfile.retries": "ZZAaa"})
    runner.flowfiles_for("retry")[0].assert_attribute_equals("flowfile.retries", "1")
    runner = run_one({"flowfile.retries": "ZZAaa"}, fail_on_nonnumerical_overwrite="true")
    assert_failed(runner)
    runner = run_one({"flowfile.retries": "99999999999"}, fail_on_nonnumerical_overwrite="true")
    assert_failed(runner)  # beyond Java's int: not a number


def test_retries_exceeded_adds_dynamic_attributes() -> None:
    """Above the maximum: retries_exceeded, dynamic properties evaluated, counters removed."""
    runner = run_one(
        {"flowfile.retries": "3", "flowfile.retries.uuid": "RetryFlowFile-1"},
        **{"exceeded.time": "${now():toString()}", "reason": "${uuid} exceeded retries", "e": " "},
    )
    runner.assert_all_flowfiles_transferred("retries_exceeded", 1)
    out = runner.flowfiles_for("retries_exceeded")[0]
    out.assert_attribute_exists("exceeded.time")
    assert out.attributes["reason"] == f"{out.uuid} exceeded retries"
    out.assert_attribute_not_exists("e")  # a blank value is not added
    out.assert_attribute_not_exists("flowfile.retries")
    out.assert_attribute_not_exists("flowfile.retries.uuid")
    assert not out.is_penalized(runner.now())


def test_reuse_modes() -> None:
    """Another processor's count: failure (default), or a count from 1 with warn and reset."""
    theirs = {"flowfile.retries": "2", "flowfile.retries.uuid": "1122334455"}
    assert_failed(run_one(theirs))
    for mode in ("warn", "reset"):
        runner = run_one(theirs, reuse_mode=mode)
        runner.assert_all_flowfiles_transferred("retry", 1)
        runner.flowfiles_for("retry")[0].assert_attribute_equals("flowfile.retries", "1")
    TestRunner(RetryFlowFile(reuse_mode="Fail on Reuse")).assert_not_valid()  # values, not names


def test_maximum_retries_from_an_attribute() -> None:
    """Maximum Retries takes EL per FlowFile; one that is not an integer sends it to failure."""
    runner = run_one({"retry.max": "3", "flowfile.retries": "2"}, maximum_retries="${retry.max}")
    runner.flowfiles_for("retry")[0].assert_attribute_equals("flowfile.retries", "3")
    runner = run_one({"retry.max": "NiFi", "flowfile.retries": "2"}, maximum_retries="${retry.max}")
    assert_failed(runner)
    TestRunner(RetryFlowFile(maximum_retries="0")).assert_not_valid()


def test_custom_attribute_and_legacy_names() -> None:
    """Retry Attribute names the counter and its .uuid companion; NiFi 1 names are accepted."""
    processor = RetryFlowFile(
        **{"retry-attribute": "tries", "Fail on Non-numerical Overwrite": "true"}
    )
    runner = TestRunner(processor)
    runner.enqueue("", {"tries": "x"})
    runner.run()
    assert_failed(runner)
    runner = run_one({"tries": "1"}, retry_attribute="tries")
    out = runner.flowfiles_for("retry")[0]
    out.assert_attribute_equals("tries", "2")
    out.assert_attribute_exists("tries.uuid")
    out.assert_attribute_not_exists("flowfile.retries")


def test_failure_is_auto_terminated_in_a_flow(tmp_path: Path) -> None:
    """A flow that connects only retry and retries_exceeded is valid: failure auto-terminates."""
    flow = Flow("retries")
    gen = flow.add(GenerateFlowFile(batch_size=2, custom_text="x"), name="gen")
    retry = flow.add(RetryFlowFile(maximum_retries="2", penalize_retries="false"), name="retry")
    mark = flow.add(UpdateAttribute(done="yes"), name="mark")
    flow.connect(gen, retry)
    flow.connect(retry, retry, "retry")
    flow.connect(retry, mark, "retries_exceeded")
    flow.auto_terminate(mark, "success")
    result = flow.run("direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("mark", "success") == 2
    assert result.count("retry", "retry") == 4
