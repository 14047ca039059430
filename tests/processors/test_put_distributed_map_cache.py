"""Tests for PutDistributedMapCache: NiFi's TestPutDistributedMapCache cases and a flow run."""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.services import MapCache, MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import FetchDistributedMapCache, GetFile, PutDistributedMapCache, SplitText
from processors._cache_values import from_bytes, to_bytes
from repositories.repository_set import RepositorySet


def _runner(**properties: str) -> tuple[TestRunner, MapCache]:
    """A runner with the cache service 'service' and Cache Entry Identifier ${cacheKeyAttribute}."""
    runner = TestRunner(PutDistributedMapCache())
    cache = runner.add_service(MapCacheService("service"))
    runner.set_property("Distributed Cache Service", "service")
    runner.set_property("Cache Entry Identifier", "${cacheKeyAttribute}")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner, cache


def _cached(cache: MapCache, key: str) -> bytes | None:
    found = cache.get(key)
    return None if found is None else to_bytes(found)


def test_no_cache_key() -> None:
    """NiFi's testNoCacheKey: no key attribute goes to failure."""
    runner, _ = _runner()
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].flowfile.penalty_expiration > 0


def test_single_flowfile() -> None:
    """NiFi's testSingleFlowFile: the content is cached, cached=true, content unchanged."""
    runner, cache = _runner()
    runner.enqueue(b"content", {"cacheKeyAttribute": "1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert _cached(cache, "1") == b"content"
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("cached", "true")
    out.assert_content_equals("content")


def test_nothing_to_cache() -> None:
    """NiFi's testNothingToCache: empty content goes to failure."""
    runner, cache = _runner()
    runner.enqueue(b"", {"cacheKeyAttribute": "2"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert len(cache) == 0


def test_max_cache_entry_size() -> None:
    """NiFi's testMaxCacheEntrySize: 20 bytes over a 10 B limit fail, without 'cached'."""
    runner, cache = _runner(**{"Cache Entry Identifier": "${uuid}", "Max Cache Size": "10 B"})
    runner.enqueue(b"contentwhichistoobig")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_not_exists("cached")
    out.assert_content_equals("contentwhichistoobig")
    assert len(cache) == 0


def test_cache_strategy_replace() -> None:
    """NiFi's testCacheStrategyReplace: a second put replaces the entry."""
    runner, cache = _runner(**{"Cache Update Strategy": "replace"})
    runner.enqueue(b"original", {"cacheKeyAttribute": "replaceme"})
    runner.run()
    assert _cached(cache, "replaceme") == b"original"
    runner.clear_transfer_state()
    runner.enqueue(b"replaced", {"cacheKeyAttribute": "replaceme"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("cached", "true")
    assert _cached(cache, "replaceme") == b"replaced"


def test_cache_strategy_keep_original() -> None:
    """NiFi's testCacheStrategyKeepOriginal: a second put fails with cached=false."""
    runner, cache = _runner(**{"Cache Update Strategy": "keeporiginal"})
    runner.enqueue(b"original", {"cacheKeyAttribute": "replaceme"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.clear_transfer_state()
    runner.enqueue(b"replaced", {"cacheKeyAttribute": "replaceme"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_equals("cached", "false")
    out.assert_content_equals("replaced")
    assert _cached(cache, "replaceme") == b"original"


def test_binary_content_round_trips() -> None:
    """Bytes that are not UTF-8 are cached reversibly (the cache holds text)."""
    data = bytes(range(256)) * 2
    runner, cache = _runner()
    runner.enqueue(data, {"cacheKeyAttribute": "bin"})
    runner.run()
    assert _cached(cache, "bin") == data
    assert from_bytes(data) == cache.get("bin")


def test_nifi_1x_property_names() -> None:
    """NiFi's migrateProperties names: 'Cache update strategy', 'Max cache entry size'."""
    runner = TestRunner(
        PutDistributedMapCache(
            **{"Cache update strategy": "keeporiginal", "Max cache entry size": "3 B"}
        )
    )
    processor = runner.processor
    assert processor.effective_value(PutDistributedMapCache.CACHE_UPDATE_STRATEGY) == "keeporiginal"
    assert processor.effective_value(PutDistributedMapCache.CACHE_ENTRY_MAX_BYTES) == "3 B"


def test_a_rollback_leaves_no_entry() -> None:
    """A session that rolls back takes its cache entries with it."""
    runner, cache = _runner()
    runner.enqueue(b"content", {"cacheKeyAttribute": "k"})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    assert cache.get("k") is not None
    session.rollback()
    assert cache.get("k") is None


# --- in the engine -----------------------------------------------------------------------------

SETTINGS = Settings(sync=False, batch_max_flowfiles=10, batch_max_batched_flowfiles=10)


def test_put_then_fetch_in_a_flow_commits_entries_with_flowfiles(tmp_path: Path) -> None:
    """GetFile -> SplitText -> Put -> Fetch: each line is cached, fetched back, and the entries
    are in the repository's committed state after the run."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("".join(f"line {i}\n" for i in range(25)))
    flow = Flow("put-fetch")
    flow.add_service(MapCacheService("cache"))
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    put = flow.add(
        PutDistributedMapCache(
            cache_entry_identifier="k${fragment.index}", distributed_cache_service="cache"
        ),
        name="put",
    )
    fetch = flow.add(
        FetchDistributedMapCache(
            cache_entry_identifier="k${fragment.index}",
            distributed_cache_service="cache",
            put_cache_value_in_attribute="fetched",
        ),
        name="fetch",
    )
    flow.connect(get, split)
    flow.connect(split, put, "splits")
    flow.connect(put, fetch, "success", durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, "failure")
    flow.auto_terminate(fetch, ["success", "not-found", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.transfers["fetch"]["success"][0] == 25
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        entries = repos.flowfiles.state("service:cache")
        events = repos.provenance.search(limit=1_000)
    finally:
        repos.close()
    assert len(entries) == 25
    fetched = {
        e.updated_attributes.get("fetched")
        for e in events
        if e.component_name == "fetch" and "fetched" in e.updated_attributes
    }
    assert "line 7" in fetched
    assert len(fetched) == 25
