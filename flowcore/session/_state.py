"""The session's processor state and counters: staged with the session, written by its commit.

NiFi's ``getState``/``setState``/``replace``/``clear`` (scope LOCAL) and ``adjustCounter``: a
change is staged in the session, becomes part of its commit, and is forgotten on rollback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from flowcore.session.host import StateMap

if TYPE_CHECKING:
    from flowcore.session.host import SessionHost

__all__ = ["StagedState"]


class StagedState:
    """A session's staged state and counter changes, over its host's committed state."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        #: the state to write at commit; None when unchanged
        self.state: Mapping[str, str] | None = None
        #: counter name -> the delta to add at commit
        self.counters: dict[str, int] = {}

    def clear(self) -> None:
        """Forget staged changes (committed, or rolled back)."""
        self.state = None
        self.counters = {}

    def get_state(self) -> StateMap:
        """The component's state, including changes staged in this session."""
        committed = self._host.get_state()
        if self.state is None:
            return committed
        return StateMap(committed.version + 1, self.state)

    def set_state(self, values: Mapping[str, str]) -> None:
        """Stage new state; it is written with the commit and discarded on rollback."""
        self.state = dict(values)

    def replace_state(self, old: StateMap, values: Mapping[str, str]) -> bool:
        """Stage *values* only if the state is still *old* (by version); return whether it was."""
        if self.get_state().version != old.version:
            return False
        self.state = dict(values)
        return True

    def clear_state(self) -> None:
        """Stage an empty state."""
        self.state = {}

    def adjust_counter(self, name: str, delta: int) -> None:
        """Add *delta* to a named counter when the session commits."""
        self.counters[name] = self.counters.get(name, 0) + delta
