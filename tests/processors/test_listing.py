"""Tests for NiFi's timestamp-tracking listing algorithm, over plain entries and state."""

from __future__ import annotations

from processors._listing import (
    Entry,
    ListingState,
    lag_of,
    state_after,
    track_timestamps,
)

NOW = 1_000_000_000


def _entries(*stamps: tuple[str, int]) -> list[Entry[None]]:
    return [Entry(name, stamp, None) for name, stamp in stamps]


def _names(decision: object) -> list[str]:
    return [e.identifier for e in decision.entries]  # type: ignore[attr-defined]


def test_state_round_trips_nifis_keys() -> None:
    """listing.timestamp, processed.timestamp and id.N read back as they were written."""
    state = ListingState(5, 4, ("a", "b"))
    assert state.values() == {
        "listing.timestamp": "5",
        "processed.timestamp": "4",
        "id.0": "a",
        "id.1": "b",
    }
    assert ListingState.of(state.values()) == state
    assert ListingState.of({}) == ListingState()


def test_precision_is_detected_as_nifi_does() -> None:
    """Any millisecond part: millis (100 ms lag); whole seconds: seconds; whole minutes: minutes."""
    assert lag_of("auto-detect", [1_001, 60_000]) == (1, 100)
    assert lag_of("auto-detect", [1_000, 60_000]) == (1_000, 1_000)
    assert lag_of("auto-detect", [120_000]) == (60_000, 60_000)
    assert lag_of("millis", [120_000]) == (1, 100)


def test_newest_are_held_back_then_listed_once_the_lag_passed() -> None:
    """Entries younger than the lag wait one listing; then they come, then nothing more."""
    entries = _entries(("old", NOW - 5_001), ("new", NOW - 11))
    first = track_timestamps(entries, ListingState(), now_ms=NOW, last_run_ms=0, precision="millis")
    assert _names(first) == ["old"]
    assert first.state == ListingState(NOW - 11, NOW - 5_001, ("old",))
    soon = track_timestamps(
        entries, first.state, now_ms=NOW + 50, last_run_ms=NOW, precision="millis"
    )
    assert _names(soon) == []
    assert soon.retry_after_ms == 50
    later = track_timestamps(
        entries, first.state, now_ms=NOW + 200, last_run_ms=NOW, precision="millis"
    )
    assert _names(later) == ["new"]
    assert later.state == ListingState(NOW - 11, NOW - 11, ("new",))
    done = track_timestamps(
        entries, later.state, now_ms=NOW + 400, last_run_ms=NOW + 200, precision="millis"
    )
    assert (_names(done), done.state) == ([], None)


def test_only_newest_held_back_asks_for_a_retry() -> None:
    """When every new entry is held back, the decision says how long until they are not."""
    decision = track_timestamps(
        _entries(("new", NOW - 10)), ListingState(), now_ms=NOW, last_run_ms=0, precision="millis"
    )
    assert _names(decision) == []
    assert decision.retry_after_ms == 100
    assert decision.state == ListingState(NOW - 10, 0, ())


def test_same_time_entries_are_told_apart_by_identifier() -> None:
    """At the processed timestamp, only identifiers not yet emitted are new."""
    state = ListingState(NOW - 1_000, NOW - 1_000, ("a",))
    entries = _entries(("a", NOW - 1_000), ("b", NOW - 1_000), ("c", NOW - 900))
    decision = track_timestamps(entries, state, now_ms=NOW, last_run_ms=0, precision="millis")
    assert _names(decision) == ["b", "c"]
    assert decision.state == ListingState(NOW - 900, NOW - 900, ("c",))


def test_state_after_a_part_resumes_exactly_after_it() -> None:
    """The state after part of a listing lists exactly the rest when listed again."""
    entries = _entries(("a", 1_000), ("b", 2_000), ("c", 2_000), ("d", 3_000))
    whole = track_timestamps(entries, ListingState(), now_ms=NOW, last_run_ms=0, precision="millis")
    part = state_after(whole.entries[:2], ListingState())
    assert part == ListingState(2_000, 2_000, ("b",))
    rest = track_timestamps(entries, part, now_ms=NOW, last_run_ms=0, precision="millis")
    assert _names(rest) == ["c", "d"]
