"""Tests for FetchFile: content, relationships, provenance, and its completion after commit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowcore import ProvenanceEventType
from flowcore.processor.context import ProcessContext
from flowcore.session.process_session import ProcessSession
from flowcore.testing import TestRunner
from processors import FetchFile
from processors.fetch_file import alternative_name


@pytest.fixture
def source(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "a.txt"
    path.write_text("content")
    return path


def _runner(source: Path, **properties: object) -> TestRunner:
    runner = TestRunner(FetchFile(**properties))
    runner.enqueue(b"old", {"absolute.path": f"{source.parent}/", "filename": source.name})
    return runner


def test_fetch_replaces_content_with_a_fetch_event_and_leaves_the_file(source: Path) -> None:
    """NiFi's testSimpleSuccess: the content is the file's; FETCH names its URI; None keeps it."""
    runner = _runner(source)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("content")
    fetch, modified = runner.provenance_events
    assert fetch.event_type is ProvenanceEventType.FETCH
    assert fetch.transit_uri == source.as_uri()
    assert fetch.details == f"Replaced content of FlowFile with contents of {source.as_uri()}"
    assert modified.event_type is ProvenanceEventType.CONTENT_MODIFIED  # as NiFi's session
    assert source.read_text() == "content"


def test_delete_file_deletes_after_the_commit(source: Path) -> None:
    """Delete File removes the file once the FlowFile is committed."""
    runner = _runner(source, completion_strategy="Delete File")
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals("content")
    assert not source.exists()


def test_nothing_is_moved_or_deleted_when_the_session_rolls_back(source: Path) -> None:
    """A session that fails after fetching keeps the file where it was: the completion is an
    effect of the commit, never of the fetch."""

    class FailsAfterFetching(FetchFile):
        def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
            super().on_trigger(context, session)
            msg = "after the fetch, before the commit"
            raise RuntimeError(msg)

    runner = TestRunner(FailsAfterFetching(completion_strategy="Delete File"))
    runner.enqueue(b"", {"absolute.path": f"{source.parent}/", "filename": source.name})
    with pytest.raises(RuntimeError):
        runner.run()
    assert source.read_text() == "content"


def test_move_file_creates_the_directory(source: Path, tmp_path: Path) -> None:
    """NiFi's testMoveOnCompleteWithTargetDirThatDoesNotExist: the directory is made."""
    target = tmp_path / "done" / "deeper"
    runner = _runner(
        source, completion_strategy="Move File", move_destination_directory=str(target)
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (target / "a.txt").read_text() == "content"
    assert not source.exists()


@pytest.mark.parametrize(
    ("conflict", "kept", "moved_as"),
    [("Replace File", "content", None), ("Keep Existing", "old", None), ("Rename", "old", "a-")],
)
def test_move_conflict_strategies(
    source: Path, tmp_path: Path, conflict: str, kept: str, moved_as: str | None
) -> None:
    """An existing target is replaced, kept (the source deleted) or renamed around it."""
    done = tmp_path / "done"
    done.mkdir()
    (done / "a.txt").write_text("old")
    runner = _runner(
        source,
        completion_strategy="Move File",
        move_destination_directory=str(done),
        move_conflict_strategy=conflict,
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (done / "a.txt").read_text() == kept
    assert not source.exists()
    others = [p.name for p in done.iterdir() if p.name != "a.txt"]
    if moved_as:
        (other,) = others
        assert other.startswith(moved_as)
        assert other.endswith(".txt")
        assert (done / other).read_text() == "content"
    else:
        assert others == []


def test_move_conflict_fail_routes_to_failure_before_reading(source: Path, tmp_path: Path) -> None:
    """NiFi's testMoveOnCompleteWithFileExistsButFail: failure (not penalized), file untouched."""
    done = tmp_path / "done"
    done.mkdir()
    (done / "a.txt").write_text("old")
    runner = _runner(
        source,
        completion_strategy="Move File",
        move_destination_directory=str(done),
        move_conflict_strategy="Fail",
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_content_equals("old")
    assert not out.is_penalized(runner.now())
    assert source.exists()


def test_move_destination_that_is_a_file_fails(source: Path, tmp_path: Path) -> None:
    """A Move Destination Directory that is a file sends the FlowFile to failure."""
    (tmp_path / "plain").write_text("x")
    runner = _runner(
        source, completion_strategy="Move File", move_destination_directory=str(tmp_path / "plain")
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert source.exists()


def test_not_found_and_permission_denied_route_with_a_route_event(
    source: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A missing file goes to not.found, an unreadable one to permission.denied, penalized,
    each with a ROUTE event, logged at the configured level (NONE: not at all)."""
    runner = _runner(source.with_name("missing.txt"), log_level_when_file_not_found="NONE")
    runner.run()
    runner.assert_all_flowfiles_transferred("not.found", 1)
    assert runner.flowfiles_for("not.found")[0].is_penalized(runner.now())
    assert [e.event_type for e in runner.provenance_events] == [ProvenanceEventType.ROUTE]
    assert "Could not fetch" not in caplog.text
    real_access = os.access
    monkeypatch.setattr(  # the tests run as root, whom no mode bits stop
        os, "access", lambda p, mode: False if Path(p) == source else real_access(p, mode)
    )
    denied = _runner(source, log_level_when_permission_denied="WARN")
    denied.run()
    denied.assert_all_flowfiles_transferred("permission.denied", 1)
    assert denied.provenance_events[0].relationship == "permission.denied"
    assert "may not read it; routing to permission.denied" in caplog.text


def test_a_directory_or_fifo_goes_to_failure(tmp_path: Path) -> None:
    """What cannot be read as a file (a directory, a FIFO that would block) fails, penalized."""
    os.mkfifo(tmp_path / "pipe")
    for name in ("pipe", ""):
        runner = TestRunner(FetchFile(file_to_fetch=f"{tmp_path}/{name}"))
        runner.enqueue(b"")
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)


def test_validation_and_nifi_names() -> None:
    """Move File needs a Move Destination Directory; defaults and relationships are NiFi's."""
    assert not FetchFile(completion_strategy="Move File").is_valid()
    assert FetchFile(completion_strategy="Move File", move_destination_directory="/x").is_valid()
    processor = FetchFile()
    assert processor.effective_value(FetchFile.FILENAME) == "${absolute.path}/${filename}"
    assert processor.relationship_names() == (
        "success",
        "not.found",
        "permission.denied",
        "failure",
    )
    assert alternative_name("a.tar.gz", "u") == "a.tar-u.gz"
    assert alternative_name("README", "u") == "README-u"
