"""Tests for the session's map caches: kept by its commit, reverted by its rollback."""

from __future__ import annotations

import pytest

from flowcore.errors import ConfigurationError
from flowcore.services import MapCacheService
from flowcore.testing import TestRunner
from processors import DetectDuplicate


def test_a_rolled_back_session_leaves_no_entry() -> None:
    """Entries a session put go when it rolls back; a committed session's stay."""
    runner = TestRunner(DetectDuplicate())
    cache = runner.add_service(MapCacheService("c"))
    session = runner.create_session()
    session.map_cache("c").put("k", "v")
    session.rollback()
    assert len(cache) == 0
    session.map_cache("c").put("k", "v")
    session.commit()
    assert cache.get("k") == "v"


def test_an_unknown_service_names_the_fix() -> None:
    """A session asking for a service its host lacks is told how to add it."""
    session = TestRunner(DetectDuplicate()).create_session()
    with pytest.raises(ConfigurationError, match=r"add_service\(MapCacheService\('x'\)\)"):
        session.map_cache("x")
