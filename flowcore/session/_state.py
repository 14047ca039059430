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

__all__ = ["StateAndCounters"]


class StateAndCounters:
    """Mixin of the session: its staged state and counter changes.

    The session is :class:`~flowcore.session.process_session.ProcessSession`.
    """

    _host: SessionHost
    _state: Mapping[str, str] | None
    _counters: dict[str, int]

    def get_state(self) -> StateMap:
        """The component's state, including changes staged in this session."""
        committed = self._host.get_state()
        if self._state is None:
            return committed
        return StateMap(committed.version + 1, self._state)

    def set_state(self, values: Mapping[str, str]) -> None:
        """Stage new state; it is written with the commit and discarded on rollback."""
        self._state = dict(values)

    def replace_state(self, old: StateMap, values: Mapping[str, str]) -> bool:
        """Stage *values* only if the state is still *old* (by version); return whether it was."""
        if self.get_state().version != old.version:
            return False
        self._state = dict(values)
        return True

    def clear_state(self) -> None:
        """Stage an empty state."""
        self._state = {}

    def adjust_counter(self, name: str, delta: int) -> None:
        """Add *delta* to a named counter when the session commits."""
        self._counters[name] = self._counters.get(name, 0) + delta
