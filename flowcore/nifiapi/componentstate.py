"""NiFi's ``nifiapi.componentstate``: a processor's state, through ``context.getStateManager()``.

flowcore keeps one state per processor, committed with the output it goes with (the source's
listing state): ``Scope.LOCAL`` and ``Scope.CLUSTER`` name the same state, since one Spark
application is one "node". A source's ``setState`` is committed with the FlowFile its
``create`` made; a transform's with the session of its FlowFile.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Scope", "StateException", "StateManager", "StateMap"]


class Scope(enum.Enum):
    """Where NiFi keeps state: the cluster's or the node's (one and the same here)."""

    CLUSTER = 1
    LOCAL = 2


class StateException(Exception):
    """State could not be read or written."""


class StateMap:
    """A processor's state as read: values and a version (None when never set)."""

    def __init__(self, values: Mapping[str, str], version: int | None = None) -> None:
        self._values = dict(values)
        self._state_version = version

    def getStateVersion(self) -> int | None:
        """The state's version, or None when it was never set."""
        return self._state_version

    def get(self, key: str) -> str | None:
        """One value, or None."""
        return self._values.get(key)

    def toMap(self) -> dict[str, str]:
        """The values, as a new dict."""
        return dict(self._values)


class StateManager:
    """Reads and writes a processor's state, NiFi's Python ``StateManager``.

    Args:
        read: gives the current values and version (version -1: never set).
        write: replaces the values; raises :class:`StateException` where state cannot be set.
    """

    def __init__(
        self,
        read: Callable[[], tuple[Mapping[str, str], int]],
        write: Callable[[Mapping[str, str]], None],
    ) -> None:
        self._read = read
        self._write = write

    def getState(self, scope: Scope) -> StateMap:
        """The state (either scope: flowcore has one)."""
        del scope
        values, version = self._read()
        return StateMap(values, None if version < 0 else version)

    def setState(self, state: Mapping[str, Any], scope: Scope) -> None:
        """Replace the state with *state* (values made strings, as Java's map holds them)."""
        del scope
        self._write({str(k): str(v) for k, v in state.items()})

    def replace(self, oldValue: StateMap, newValue: Mapping[str, Any], scope: Scope) -> bool:
        """Set *newValue* if the state is still *oldValue* (by version); whether it was."""
        current = self.getState(scope)
        if current.getStateVersion() != oldValue.getStateVersion():
            return False
        self.setState(newValue, scope)
        return True

    def clear(self, scope: Scope) -> None:
        """Remove every value."""
        self.setState({}, scope)
