"""Tests for running a task in the driver's working directory on an executor."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from flowcore.errors import ConfigurationError
from flowcore.runners.places import DriverPlace, at_driver_place


def test_a_task_runs_in_the_drivers_directory_and_the_workers_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative paths inside the block resolve against the driver's directory; the worker's
    own directory is restored after it."""
    driver, worker = tmp_path / "driver", tmp_path / "worker"
    driver.mkdir()
    worker.mkdir()
    monkeypatch.chdir(driver)
    place = DriverPlace.here("repo")
    assert place == DriverPlace(str(driver), str(driver / "repo"))
    (driver / "repo").mkdir()
    monkeypatch.chdir(worker)
    with at_driver_place(place):
        Path("out.txt").write_text("x")
        assert os.path.abspath("out.txt") == str(driver / "out.txt")
    assert Path.cwd() == worker
    assert not (worker / "out.txt").exists()


def test_an_executor_without_the_repository_fails_naming_it_and_the_host(tmp_path: Path) -> None:
    """A host that cannot see the repository directory stops the task before it writes."""
    place = DriverPlace(str(tmp_path), str(tmp_path / "gone"))
    with pytest.raises(ConfigurationError) as caught, at_driver_place(place):
        pytest.fail("the block must not run")
    message = str(caught.value)
    assert str(tmp_path / "gone") in message
    assert socket.gethostname() in message
    assert "every executor mounts" in message


def test_an_executor_without_the_drivers_directory_fails_naming_it(tmp_path: Path) -> None:
    """A host that lacks the driver's working directory stops the task, naming it."""
    place = DriverPlace(str(tmp_path / "elsewhere"))
    with (
        pytest.raises(ConfigurationError, match=r"working directory .*elsewhere"),
        at_driver_place(place),
    ):
        pytest.fail("the block must not run")
