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
    """Past MAX_LOG_BULLETINS in a task, one bulletin says the rest are in the log only."""
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
