"""Tests for nifiapi.componentstate: NiFi's StateManager over a state read and written."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from nifiapi.componentstate import Scope, StateException, StateManager


class _Store:
    """A state with a version, as flowcore's sessions keep one."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.version = -1

    def read(self) -> tuple[Mapping[str, str], int]:
        return self.values, self.version

    def write(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.version += 1


def test_set_get_replace_and_clear() -> None:
    """Values become strings; replace applies only to the version read; both scopes are one."""
    store = _Store()
    manager = StateManager(store.read, store.write)
    assert manager.getState(Scope.CLUSTER).getStateVersion() is None
    manager.setState({"n": 1}, Scope.CLUSTER)
    read = manager.getState(Scope.LOCAL)
    assert (read.get("n"), read.toMap(), read.getStateVersion()) == ("1", {"n": "1"}, 0)
    assert manager.replace(read, {"n": "2"}, Scope.CLUSTER) is True
    assert manager.replace(read, {"n": "3"}, Scope.CLUSTER) is False  # stale
    assert manager.getState(Scope.CLUSTER).toMap() == {"n": "2"}
    manager.clear(Scope.CLUSTER)
    assert manager.getState(Scope.CLUSTER).toMap() == {}


def test_a_write_that_cannot_happen_is_a_state_exception() -> None:
    """Processors catch StateException, as NiFi's guide shows: it passes through."""

    def refuse(values: Mapping[str, str]) -> None:
        msg = "not here"
        raise StateException(msg)

    manager = StateManager(lambda: ({}, -1), refuse)
    with pytest.raises(StateException, match="not here"):
        manager.setState({"a": "b"}, Scope.LOCAL)
