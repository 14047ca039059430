"""AfterCommitRunner: after-commit actions within a time budget, kept until done, retried."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from flowcore.driver import after_commit
from flowcore.driver.after_commit import AfterCommitRunner, pending_actions
from flowcore.errors import AfterCommitRetry
from flowcore.session.host import AfterCommitAction


class _Remote:
    """A remote system the actions act on: it records them, and can hang or refuse."""

    def __init__(self) -> None:
        self.done: list[tuple[str, Any]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.refuse = 0  # raise AfterCommitRetry this many more times
        self.threads: set[str] = set()

    def run(self, component_id: str, payloads: Sequence[Mapping[str, Any]]) -> None:
        self.threads.add(threading.current_thread().name)
        assert self.gate.wait(30)
        if self.refuse:
            self.refuse -= 1
            msg = "connection lost"
            raise AfterCommitRetry(msg)
        for payload in payloads:
            if payload.get("fail"):
                msg = "refused for good"
                raise ValueError(msg)
            self.done.append((component_id, payload["n"]))


def _runner(directory: Path, remote: _Remote, reports: list, budget: float = 5.0):
    return AfterCommitRunner(
        directory,
        remote.run,
        lambda c, e, n: reports.append((c, str(e), n)),
        budget_seconds=budget,
    )


def test_done_within_the_budget_leaves_nothing_behind(tmp_path: Path) -> None:
    """Actions that finish in time are done in order per processor; no pending file is made."""
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports)
    runner.hand_over([
        AfterCommitAction("a", {"n": 1}), AfterCommitAction("b", {"n": 2}),
        AfterCommitAction("a", {"n": 3}),
    ])  # fmt: skip
    assert sorted(remote.done) == [("a", 1), ("a", 3), ("b", 2)]
    assert [n for c, n in remote.done if c == "a"] == [1, 3]
    assert pending_actions(tmp_path) == []
    assert remote.threads == {"after-commit-a", "after-commit-b"}  # one worker each
    assert runner.close(1) == 0


def test_a_slow_server_holds_the_commit_only_the_budget(tmp_path: Path) -> None:
    """A hanging action: hand_over returns with it recorded in a pending file, which goes once
    the action is done; the order per processor is kept."""
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports, budget=0.05)
    remote.gate.clear()
    runner.hand_over([AfterCommitAction("a", {"n": 1})], origin="t1.effects")
    runner.hand_over([AfterCommitAction("a", {"n": 2})], origin="t2.effects")
    assert remote.done == []
    assert len(pending_actions(tmp_path)) == 2
    assert runner.outstanding() == {"a": [{"n": 1}, {"n": 2}]}
    remote.gate.set()
    assert runner.wait_for("a", timeout=30)
    assert remote.done == [("a", 1), ("a", 2)]
    assert pending_actions(tmp_path) == []
    assert runner.outstanding() == {}


def test_what_a_stop_leaves_is_carried_out_at_the_next_start(tmp_path: Path) -> None:
    """The run stops while an action hangs: it stays in a pending file, and a new runner
    (the next start) carries it out and removes the file."""
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports, budget=0.05)
    remote.gate.clear()
    runner.hand_over([AfterCommitAction("a", {"n": 7})])
    assert runner.close(0.05) == 1
    assert len(pending_actions(tmp_path)) == 1
    later = _Remote()
    restarted = _runner(tmp_path, later, reports)
    assert restarted.resume() == {}
    assert later.done == [("a", 7)]
    assert pending_actions(tmp_path) == []
    remote.gate.set()  # the first run's worker (a crashed run's, in real life) finds it done


def _until(predicate, timeout: float = 20.0) -> bool:
    """Whether *predicate* holds within *timeout* (a bound on waiting, not a timing claim)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_retry_is_kept_pending_and_tried_again_after_a_backoff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AfterCommitRetry: the action stays pending (in a file, across a stop) and its worker
    tries it again once its backoff is over, with no commit to prompt it (an idle flow)."""
    monkeypatch.setattr(after_commit, "RETRY_BASE_SECONDS", 0.05)
    remote, reports = _Remote(), []
    remote.refuse = 2
    runner = _runner(tmp_path, remote, reports)
    runner.hand_over([AfterCommitAction("db", {"n": 1})])
    assert remote.done == []
    assert len(pending_actions(tmp_path)) == 1
    assert runner.outstanding() == {"db": [{"n": 1}]}
    assert runner.pending_count() == 1
    assert _until(lambda: remote.done == [("db", 1)])  # no hand_over, no commit
    assert _until(lambda: pending_actions(tmp_path) == [])
    assert runner.outstanding() == {}
    assert runner.pending_count() == 0
    assert reports == []


def test_close_retries_an_action_in_backoff_until_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run stops while an action waits out its backoff: close() lets it be tried again
    within its timeout instead of leaving it pending at once."""
    monkeypatch.setattr(after_commit, "RETRY_BASE_SECONDS", 3600.0)  # a long backoff
    remote, reports = _Remote(), []
    remote.refuse = 1
    runner = _runner(tmp_path, remote, reports, budget=0.01)
    runner.hand_over([AfterCommitAction("db", {"n": 1})])
    assert len(pending_actions(tmp_path)) == 1
    assert runner.close(30) == 0
    assert remote.done == [("db", 1)]
    assert pending_actions(tmp_path) == []


def test_close_over_an_action_in_backoff_sleeps_not_spins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """close() while an action keeps failing and waits out its backoff waits for the next try
    asleep: the process's CPU time over close() stays far under its timeout (no busy loop)."""
    monkeypatch.setattr(after_commit, "RETRY_BASE_SECONDS", 3600.0)
    remote, reports = _Remote(), []
    remote.refuse = 10
    runner = _runner(tmp_path, remote, reports, budget=0.01)
    runner.hand_over([AfterCommitAction("db", {"n": 1})])
    timeout = 0.6
    cpu = time.process_time()
    assert runner.close(timeout) == 1
    assert time.process_time() - cpu < timeout / 4
    assert remote.refuse == 8  # tried at the handover and once more by close()
    assert len(pending_actions(tmp_path)) == 1


def test_an_action_that_fails_for_good_is_reported_not_kept(tmp_path: Path) -> None:
    """Anything but AfterCommitRetry is reported (a bulletin) and dropped: the processor says
    which errors are final (an SFTP delete refused for good); one whose action must complete
    (PutDatabaseRecord's COMMIT PREPARED) raises AfterCommitRetry for every error instead."""
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports)
    runner.hand_over([AfterCommitAction("a", {"n": 1, "fail": True})])
    assert reports == [("a", "refused for good", 1)]
    assert pending_actions(tmp_path) == []
    assert runner.outstanding() == {}


def test_kept_on_disk_names_what_pending_files_hold(tmp_path: Path) -> None:
    """kept_on_disk reads the pending files (what a sweep must spare) and says when one cannot
    be read (then nothing may be swept)."""
    (tmp_path / "1-good.actions").write_text('{"component": "a", "actions": [{"n": 4}]}')
    runner = _runner(tmp_path, _Remote(), [])
    assert runner.kept_on_disk() == ({"a": [{"n": 4}]}, True)
    (tmp_path / "0-bad.actions").write_text("{not json")
    assert runner.kept_on_disk() == ({"a": [{"n": 4}]}, False)


def test_a_torn_pending_file_is_skipped(tmp_path: Path) -> None:
    """An unreadable pending file is left with a warning, a torn partial one removed (its
    effect file was still there); readable ones still run."""
    (tmp_path / "0-bad.actions").write_text("{not json")
    (tmp_path / "2-torn.actions.partial").write_text('{"component": "a", "act')
    (tmp_path / "1-good.actions").write_text('{"component": "a", "actions": [{"n": 4}]}')
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports)
    runner.resume()
    assert remote.done == [("a", 4)]
    assert [p.name for p in tmp_path.iterdir()] == ["0-bad.actions"]


def test_the_tasks_of_one_commit_share_its_deadline(tmp_path: Path) -> None:
    """A later task's actions handed over past the commit's deadline are not waited for: they
    are recorded at once (the commit's wait is one budget, not one per task)."""
    remote, reports = _Remote(), []
    runner = _runner(tmp_path, remote, reports, budget=3600)
    remote.gate.clear()
    deadline = time.monotonic()  # the commit's budget is spent already
    runner.hand_over([AfterCommitAction("a", {"n": 1})], deadline=deadline)
    runner.hand_over([AfterCommitAction("b", {"n": 2})], deadline=deadline)
    assert len(pending_actions(tmp_path)) == 2
    remote.gate.set()
    assert runner.wait_for("a", timeout=30)
    assert runner.wait_for("b", timeout=30)
    assert pending_actions(tmp_path) == []
