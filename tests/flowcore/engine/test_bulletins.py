"""Tests for flowcore/engine/_bulletins.py: processor warnings and errors become bulletins."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GenerateFlowFile, PutFile, UpdateAttribute
from repositories.repository_set import read_bulletins


def test_a_processor_routing_to_failure_leaves_an_error_bulletin(tmp_path: Path) -> None:
    """PutFile that cannot write logs an error and routes to failure; as in NiFi, the error is a
    bulletin on that PutFile (named), not only a log line."""
    (tmp_path / "file").write_text("not a directory")
    flow = Flow("bulletins")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = flow.add(UpdateAttribute(filename="out.txt"), name="tag")
    put = flow.add(
        PutFile(directory=str(tmp_path / "file" / "sub"), create_missing_directories="false"),
        name="write",
    )
    flow.connect(gen, tag)
    flow.connect(tag, put)
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    bulletins = read_bulletins(tmp_path / "repo")
    assert [(b.component_name, b.level) for b in bulletins] == [("write", "ERROR")]
    assert "routing to failure" in bulletins[0].message


def test_only_warnings_and_above_of_the_running_member_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """INFO lines are no bulletins; a processor's warning is its own bulletin at WARNING."""
    from flowcore.engine._bulletins import running

    class _Member:
        def __init__(self) -> None:
            self.bulletins: list[tuple[str, str]] = []

        def bulletin(self, message: str, level: str = "ERROR") -> None:
            self.bulletins.append((level, message))

    member = _Member()
    logger = logging.getLogger("flowcore.processors.Example")
    with caplog.at_level(logging.INFO), running(member):
        logger.info("fine")
        logger.warning("odd %s", "thing")
    logger.error("after the member ran")
    assert member.bulletins == [("WARNING", "odd thing")]


def test_a_processor_warning_about_every_flowfile_makes_a_bounded_number_of_bulletins(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Past MAX_LOG_BULLETINS in a task, one bulletin says how many more records there were."""
    from flowcore.engine._bulletins import MAX_LOG_BULLETINS, running

    class _Member:
        def __init__(self) -> None:
            self.bulletins: list[tuple[str, str]] = []

        def bulletin(self, message: str, level: str = "ERROR") -> None:
            self.bulletins.append((level, message))

    member = _Member()
    logger = logging.getLogger("flowcore.processors.Example")
    with caplog.at_level(logging.ERROR), running(member):  # caplog keeps them off stderr
        for n in range(1_000):
            logger.error("cannot write %d", n)
    assert len(member.bulletins) == MAX_LOG_BULLETINS + 1
    assert member.bulletins[-1][1].startswith(f"more than {MAX_LOG_BULLETINS} warnings")
    assert member.bulletins[-1] == (
        "ERROR",
        f"more than {MAX_LOG_BULLETINS} warnings in one task; 900 more like this: cannot write "
        f"{MAX_LOG_BULLETINS}",
    )


class _Member:
    """A stand-in for a task member: it keeps the bulletins it is given."""

    def __init__(self) -> None:
        self.bulletins: list[tuple[str, str]] = []

    def bulletin(self, message: str, level: str = "ERROR") -> None:
        self.bulletins.append((level, message))


def _records(messages: list[str]) -> int:
    """How many log records *messages* (a member's bulletins) stand for."""
    from flowcore.engine._bulletins import repeated

    return sum(1 if repeated(m) is None else repeated(m).count for m in messages)  # type: ignore[union-attr]


def test_a_reason_is_the_message_with_its_flowfile_uuids_and_numbers_masked() -> None:
    """Two FlowFiles failing alike have one reason; a different failure has another; brief()
    shortens the FlowFile for a count line and keeps the rest."""
    from flowcore.engine._bulletins import brief, reason_key

    first = (
        "Cannot write FlowFile[id=1, uuid=1ec7709b-3d77-4d68-b945-715600000000, filename=a, b.txt, "
        "size=10]: [Errno 13] Permission denied: '/out/1ec7709b-3d77-4d68-b945-715600000000'"
    )
    second = (
        "Cannot write FlowFile[id=22, uuid=1ec7709b-3d77-4d68-b945-715600000001, filename=c.txt, "
        "size=3]: [Errno 13] Permission denied: '/out/1ec7709b-3d77-4d68-b945-715600000001'"
    )
    other = "Cannot write FlowFile[id=2, uuid=x, filename=c, size=3]: /out is not a directory"
    assert reason_key(first) == reason_key(second) != reason_key(other)
    assert brief(other) == "Cannot write FlowFile[...]: /out is not a directory"


def test_records_past_the_limit_are_counted_by_reason_when_the_member_stops() -> None:
    """1,452 failures of two reasons: the first MAX_LOG_BULLETINS are bulletins, then one
    bulletin per reason counts the rest; together they stand for every record."""
    from flowcore.engine._bulletins import MAX_LOG_BULLETINS, repeated, running

    member = _Member()
    logger = logging.getLogger("flowcore.processors.Example")
    with running(member):
        for n in range(1_452):
            where = "/a" if n % 3 else "/b"
            logger.error(
                "Cannot write FlowFile[id=%d, uuid=u%d, filename=f, size=1]: %s", n, n, where
            )
    messages = [m for _, m in member.bulletins]
    assert len(messages) == MAX_LOG_BULLETINS + 2
    said = [repeated(m) for m in messages[MAX_LOG_BULLETINS:]]
    assert [(s.count, s.message) for s in said if s is not None] == [
        (968 - 66, "Cannot write FlowFile[id=100, uuid=u100, filename=f, size=1]: /a"),
        (484 - 34, "Cannot write FlowFile[id=102, uuid=u102, filename=f, size=1]: /b"),
    ]
    assert _records(messages) == 1_452
    with running(member):  # said once: a later run of the member says only what is new
        logger.warning("Cannot write FlowFile[id=9999, uuid=u, filename=f, size=1]: /a")
    assert member.bulletins[-1] == (
        "WARNING",
        f"more than {MAX_LOG_BULLETINS} warnings in one task; 1 more like this: Cannot write "
        "FlowFile[id=9999, uuid=u, filename=f, size=1]: /a",
    )


def test_past_the_limit_reasons_beyond_max_reasons_are_counted_together() -> None:
    """A processor whose every message differs (beyond numbers) makes MAX_REASONS counted
    bulletins and one for the other reasons: bounded, and still every record counted."""
    from flowcore.engine._bulletins import MAX_LOG_BULLETINS, MAX_REASONS, repeated, running

    member = _Member()
    logger = logging.getLogger("flowcore.processors.Example")
    words = [f"w{chr(97 + n % 26)}{chr(97 + n // 26 % 26)}" for n in range(1_000)]
    with running(member):
        for word in words:
            logger.warning("cannot parse %s", word)
    messages = [m for _, m in member.bulletins]
    assert len(messages) == MAX_LOG_BULLETINS + MAX_REASONS + 1
    assert repeated(messages[-1]) is not None
    assert repeated(messages[-1]).message is None  # type: ignore[union-attr]
    assert _records(messages) == 1_000
