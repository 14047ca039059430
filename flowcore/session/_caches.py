"""The session's map caches: changes kept with its commit and undone by its rollback.

A processor reaches a service's cache through ``session.map_cache(name)``. Entries it puts are
visible at once to later triggers (DetectDuplicate's ``getAndPutIfAbsent`` must see the FlowFile
before), and belong to the session: a rollback reverts them, a commit keeps them, and the host
writes the cache with the task's output, so an entry is durable exactly when its FlowFile is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowcore.services import MapCache
    from flowcore.session.host import SessionHost

__all__ = ["StagedCaches"]


class StagedCaches:
    """The caches a session has used, to keep or revert with it."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._used: dict[str, MapCache] = {}

    def map_cache(self, name: str) -> MapCache:
        """The cache of service *name*; its changes commit and roll back with the session.

        Raises:
            ConfigurationError: the flow declares no such service.
        """
        cache = self._used.get(name)
        if cache is None:
            cache = self._host.map_cache(name)
            cache.mark()  # what sessions before committed is not this one's to undo
            self._used[name] = cache
        return cache

    def keep(self) -> None:
        """The session committed: its changes stay."""
        for cache in self._used.values():
            cache.mark()
        self._used.clear()

    def revert(self) -> None:
        """The session rolled back: its changes go."""
        for cache in self._used.values():
            cache.undo()
        self._used.clear()
