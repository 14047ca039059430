"""Tests for the session host contract's values."""

from __future__ import annotations

from flowcore.session.host import FlowFileFilterResult, StateMap


def test_state_map_defaults_and_lookup() -> None:
    """A fresh state map has version -1 and no values; get falls back to a default."""
    state = StateMap()
    assert state.version == -1
    assert state.get("k", "d") == "d"
    assert StateMap(3, {"k": "v"}).get("k") == "v"


def test_filter_results_accept_and_proceed() -> None:
    """Each filter result says whether to take the FlowFile and whether to keep looking."""
    assert FlowFileFilterResult.ACCEPT_AND_CONTINUE.accept
    assert FlowFileFilterResult.ACCEPT_AND_CONTINUE.proceed
    assert not FlowFileFilterResult.REJECT_AND_TERMINATE.accept
    assert not FlowFileFilterResult.REJECT_AND_TERMINATE.proceed
