"""NiFi's ListedEntityTracker over a map cache (processors._entity_tracking)."""

from __future__ import annotations

import json
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from flowcore.services import MapCache, MapCacheService
from processors._entity_tracking import cache_key, track_entities, validate

KEY = cache_key("lister")
HOUR = 3_600_000
NOW = 10 * HOUR


def _cache() -> MapCache:
    return MapCache(MapCacheService("c"), {}, lambda: NOW)


def _track(
    cache: MapCache,
    entities: list[tuple[str, int, int]],
    *,
    now: int = NOW,
    window: int = 3 * HOUR,
    initial_all: bool = True,
    listing: str = "l",
    forget: bool = False,
    part: tuple[int, int] = (0, 1),
    listed_at: int = 0,
    on_missing: Callable[[], None] | None = None,
) -> list[str]:
    emitted = track_entities(
        cache, KEY, entities, identify=lambda e: e, listing=listing, now_ms=now,
        window_ms=window, initial_all=initial_all, forget=forget, part=part,
        listed_at=listed_at, on_missing=on_missing,
    )  # fmt: skip
    return [e[0] for e in emitted]


def test_cache_key_is_nifis() -> None:
    """NiFi's key format: ListedEntities::{processor id}(::{node})."""
    assert cache_key("p") == "ListedEntities::p"
    assert cache_key("p", "node3") == "ListedEntities::p::node3"


def test_new_newer_and_resized_entities_are_listed() -> None:
    """NiFi's TestListedEntityTracker: listed when unknown, newer, or of another size."""
    cache = _cache()
    assert _track(cache, [("a", NOW - 10, 1), ("b", NOW - 10, 1)]) == ["a", "b"]
    assert _track(cache, [("a", NOW - 10, 1), ("b", NOW - 10, 1)]) == []
    assert _track(cache, [("a", NOW - 5, 1), ("b", NOW - 10, 2), ("c", NOW - 20, 1)]) == [
        "a", "b", "c",
    ]  # fmt: skip
    entities = json.loads(cache.get(KEY) or "")["entities"]
    assert entities["b"] == {"timestamp": NOW - 10, "size": 2}


def test_an_older_timestamp_of_the_same_size_is_not_listed() -> None:
    """Only a newer timestamp counts as a change (NiFi compares with '>')."""
    cache = _cache()
    _track(cache, [("a", NOW - 10, 1)])
    assert _track(cache, [("a", NOW - 20, 1)]) == []


def test_initial_listing_target_window_skips_old_entities() -> None:
    """'Tracking Time Window': the first listing ignores entities older than the window;
    'All Available' lists them."""
    old, new = ("old", NOW - 4 * HOUR, 1), ("new", NOW - HOUR, 1)
    assert _track(_cache(), [old, new], initial_all=False) == ["new"]
    assert _track(_cache(), [old, new], initial_all=True) == ["old", "new"]


def test_entities_older_than_the_window_are_forgotten() -> None:
    """A tracked entity past the window leaves the cache; outside the window nothing lists."""
    cache = _cache()
    _track(cache, [("a", NOW - HOUR, 1), ("b", NOW - 2 * HOUR, 1)])
    later = NOW + 90 * 60_000  # b is now 3.5 h old, a 2.5 h
    assert _track(cache, [("a", NOW - HOUR, 1), ("b", NOW - 2 * HOUR, 1)], now=later) == []
    assert list(json.loads(cache.get(KEY) or "")["entities"]) == ["a"]


def test_another_listing_starts_over() -> None:
    """A changed listing identity, or forget (another strategy ran), drops the tracked
    entities (NiFi removes the cache key)."""
    cache = _cache()
    _track(cache, [("a", NOW - 10, 1)])
    assert _track(cache, [("a", NOW - 10, 1)], listing="other") == ["a"]
    assert _track(cache, [("a", NOW - 10, 1)], listing="other", forget=True) == ["a"]
    assert _track(cache, [("a", NOW - 10, 1)], listing="other") == []


def test_every_part_of_an_initial_listing_is_initial() -> None:
    """All Available over a listing in three parts lists the old entities of each part."""
    cache = _cache()
    old = [[(f"{p}{i}", NOW - 5 * HOUR, 1) for i in range(2)] for p in "abc"]
    got = [_track(cache, old[p], part=(p, 3), listed_at=1, forget=not p) for p in range(3)]
    assert got == [["a0", "a1"], ["b0", "b1"], ["c0", "c1"]]
    assert "initial" not in json.loads(cache.get(KEY) or "")  # the last part cleared it
    more = [("d", NOW - 5 * HOUR, 1)]  # the next listing applies the window
    assert _track(cache, [*old[0], *more], listed_at=2) == []


def test_parts_in_any_order_and_a_crash_between_them_keep_the_listing_initial() -> None:
    """The mark names the parts left: the last part read clears it, whichever it is; a
    listing after a crash that committed only part 0 is initial again."""
    cache = _cache()
    old = [[(f"{p}{i}", NOW - 5 * HOUR, 1) for i in range(2)] for p in "abc"]
    assert _track(cache, old[2], part=(2, 3), listed_at=1, forget=True) == ["c0", "c1"]
    assert _track(cache, old[0], part=(0, 3), listed_at=1) == ["a0", "a1"]
    # crash: part 1 never committed; the next listing (two parts) starts a mark of its own
    everything = [e for part in old for e in part]
    assert _track(cache, everything[:3], part=(0, 2), listed_at=2) == ["b0"]
    assert _track(cache, everything[3:], part=(1, 2), listed_at=2) == ["b1"]
    assert "initial" not in json.loads(cache.get(KEY) or "")


def test_a_missing_entry_of_a_committed_listing_is_reported() -> None:
    """An entry gone though the lister's state says it committed one (evicted): on_missing;
    not on a first listing (forget) nor when the entry is there."""
    missing: list[int] = []
    cache = MapCache(MapCacheService("shared", maximum_cache_entries=3, eviction_strategy="FIFO"),
                     {}, lambda: NOW)  # fmt: skip
    files = [(f"f{i}", NOW - 5 * HOUR, 1) for i in range(4)]
    assert len(_track(cache, files, forget=True, on_missing=lambda: missing.append(1))) == 4
    assert _track(cache, files, on_missing=lambda: missing.append(2)) == []
    for i in range(3):  # DetectDuplicate on the same service evicts the entry
        cache.put_if_absent(f"dedupe-{i}", "x")
    assert len(_track(cache, files, on_missing=lambda: missing.append(3))) == 4
    assert missing == [3]


def test_a_rolled_back_session_leaves_no_trace() -> None:
    """The entry changes in the session's cache: undone with it, so nothing is skipped."""
    cache = _cache()
    cache.mark()
    _track(cache, [("a", NOW - 10, 1)])
    cache.undo()
    assert _track(cache, [("a", NOW - 10, 1)]) == ["a"]


def test_validate_needs_a_state_cache() -> None:
    """No Entity Tracking State Cache: one problem naming the property."""
    (problem,) = validate({})
    assert "'Entity Tracking State Cache' is required" in problem.explanation
    assert validate({"Entity Tracking State Cache": "c"}) == []


@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from("abcdef"), st.integers(0, 5), st.integers(0, 2)),
            max_size=6,
            unique_by=lambda e: e[0],
        ),
        max_size=6,
    )
)
def test_each_version_of_an_entity_is_listed_once(listings: list[list]) -> None:
    """Across listings (all in the window), an entity is emitted exactly when it is unseen,
    newer than, or differently sized from what was last emitted for it."""
    cache = _cache()
    seen: dict[str, tuple[int, int]] = {}
    for listing in listings:
        entities = [(name, NOW - t, size) for name, t, size in listing]
        expected = [
            name
            for name, ts, size in entities
            if name not in seen or ts > seen[name][0] or size != seen[name][1]
        ]
        assert _track(cache, entities) == expected
        for name, ts, size in entities:
            if name in expected:
                seen[name] = (ts, size)
