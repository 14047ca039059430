"""Run control: `flowcore run --continuous` as a child, a second start refused, SIGINT stops it."""

from __future__ import annotations

import time

import pytest

from flowcore.ui.control import RunConflictError, RunControl
from repositories.repository_set import live_run


def test_a_continuous_run_starts_holds_the_repository_and_stops_cleanly(nifi_flow) -> None:
    """Start --continuous; a second start and a replay are refused; Stop ends it (SIGINT)."""
    control = RunControl(nifi_flow.flow, nifi_flow.repository)
    state = control.start(continuous=True)
    try:
        assert state["running"] is True
        assert state["mode"] == "continuous"
        deadline = time.monotonic() + 60
        while live_run(control.repository) is None and time.monotonic() < deadline:
            assert control.state()["running"], control.state()["output"]
            time.sleep(0.2)
        assert live_run(control.repository) is not None
        with pytest.raises(RunConflictError, match="stop it first"):
            control.start(continuous=False)
        with pytest.raises(RunConflictError, match="holds the repository"):
            control.replay(1)
        stopping = control.stop(grace=20)
        assert stopping["pid"] == state["pid"]
        exit_status = control.wait(30)
    finally:
        control.close(grace=5)
    assert exit_status == 0, control.state()["output"]
    assert control.state()["running"] is False
    assert live_run(control.repository) is None


def test_without_a_flow_file_there_is_nothing_to_run(nifi_flow) -> None:
    """A UI over a recorded flow (no file) refuses runs and replays in one line."""
    control = RunControl(None, nifi_flow.repository)
    with pytest.raises(RunConflictError, match="flowcore ui FLOW"):
        control.start(continuous=False)
    with pytest.raises(RunConflictError, match="flowcore ui FLOW"):
        control.replay(1)
    assert control.state()["pid"] is None
