"""Tests for DetectDuplicate: NiFi's cases, the shared cache service, and runs in the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import FlowValidationError
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import DetectDuplicate, GetFile, SplitText, UpdateAttribute
from repositories.repository_set import RepositorySet

HASH = {"hash.value": "1000"}


def _runner(**properties: str) -> TestRunner:
    """A runner with the cache service 'client' and NiFi's test properties."""
    runner = TestRunner(DetectDuplicate())
    runner.add_service(MapCacheService("client"))
    runner.set_property("Distributed Cache Service", "client")
    runner.set_property("FlowFile Description", "The original flow file")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def test_duplicate() -> None:
    """NiFi's testDuplicate: the second FlowFile with the same hash.value is a duplicate."""
    runner = _runner(**{"Age Off Duration": "48 hours"})
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("non-duplicate", 1)
    runner.clear_transfer_state()
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("duplicate", 1)
    out = runner.flowfiles_for("duplicate")[0]
    out.assert_attribute_equals("original.flowfile.description", "The original flow file")
    assert runner.get_counter_value("Duplicates Detected") == 1
    assert runner.get_counter_value("Non-Duplicate Files Processed") == 1


def test_duplicate_with_age_off() -> None:
    """NiFi's testDuplicateWithAgeOff: an entry older than Age Off Duration is forgotten."""
    runner = _runner(**{"Age Off Duration": "2 secs"})
    runner.enqueue(b"", HASH)
    runner.run()
    runner.clear_transfer_state()
    runner.advance_time(3)
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("non-duplicate", 1)


def test_duplicate_no_cache() -> None:
    """NiFi's testDuplicateNoCache: with Cache The Entry Identifier false nothing is cached."""
    runner = _runner(**{"Age Off Duration": "48 hours", "Cache The Entry Identifier": "false"})
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("non-duplicate", 1)
    runner.clear_transfer_state()
    runner.set_property("Cache The Entry Identifier", "true")
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("non-duplicate", 1)
    runner.clear_transfer_state()
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("duplicate", 1)


def test_duplicate_no_cache_with_age_off() -> None:
    """NiFi's testDuplicateNoCacheWithAgeOff: an aged entry is removed, not found again."""
    runner = _runner(**{"Age Off Duration": "2 secs"})
    runner.enqueue(b"", HASH)
    runner.run()
    runner.clear_transfer_state()
    runner.advance_time(3)
    runner.set_property("Cache The Entry Identifier", "false")
    runner.enqueue(b"", HASH)
    runner.run()
    runner.assert_all_flowfiles_transferred("non-duplicate", 1)


def test_an_empty_identifier_goes_to_failure_penalized() -> None:
    """No hash.value: the FlowFile is penalized and routed to failure, nothing is cached."""
    runner = _runner()
    runner.enqueue(b"", {})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].flowfile.penalty_expiration > 0


def test_route_events_say_where_each_went() -> None:
    """Each FlowFile gets a ROUTE event; a duplicate's names the description attribute."""
    runner = _runner()
    runner.enqueue(b"", HASH)
    runner.enqueue(b"", HASH)
    runner.run(2)
    events = [(e.event_type.value, e.relationship, e.details) for e in runner.provenance_events]
    assert ("ROUTE", "non-duplicate", None) in events
    assert ("ROUTE", "duplicate", "Duplicate of: original.flowfile.description") in events


def test_duplicates_within_one_session_are_found() -> None:
    """Triggers batched in one session see each other's entries (NiFi's getAndPutIfAbsent)."""
    runner = _runner(**{"Cache Entry Identifier": "${k}", "FlowFile Description": "${d}"})
    for key, description in [("a", "1"), ("b", "2"), ("a", "3"), ("a", "4")]:
        runner.enqueue(b"", {"k": key, "d": description})
    runner.run(4)
    duplicates = runner.flowfiles_for("duplicate")
    assert [f.attributes["original.flowfile.description"] for f in duplicates] == ["1", "1"]
    runner.assert_transfer_count("non-duplicate", 2)


def test_the_cache_holds_at_most_maximum_cache_entries() -> None:
    """A full cache evicts (least frequently used first): it never grows past its bound."""
    runner = TestRunner(DetectDuplicate(cache_entry_identifier="${k}"))
    cache = runner.add_service(MapCacheService("small", maximum_cache_entries=3))
    runner.set_property("Distributed Cache Service", "small")
    for key in ["a", "a", "b", "c", "d", "a"]:
        runner.enqueue(b"", {"k": key})
    runner.run(6)
    assert len(cache) == 3
    assert cache.contains_key("a")  # hit, so b (no hits, oldest) went for d
    assert not cache.contains_key("b")
    runner.assert_transfer_count("duplicate", 2)


def test_an_unknown_service_is_a_validation_problem() -> None:
    """A flow naming a service it does not declare is invalid, with the fix in the message."""
    flow = Flow("dedupe")
    dedupe = flow.add(DetectDuplicate(distributed_cache_service="nowhere"), name="dedupe")
    gen = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, dedupe)
    flow.auto_terminate(dedupe, ["duplicate", "non-duplicate", "failure"])
    with pytest.raises(FlowValidationError, match=r"names service 'nowhere'.*add_service"):
        flow.validate()


# --- in the engine -----------------------------------------------------------------------------

SETTINGS = Settings(
    sync=False,
    parallelism=3,
    batch_max_flowfiles=10,
    batch_max_batched_flowfiles=10,
    driver_run_max_flowfiles=0,
)


def _dedupe_flow(root: Path, *, second_check: bool = False) -> tuple[Flow, object]:
    """GetFile -> SplitText (lines) -[durable]-> DetectDuplicate on key fragment.index % 7.

    With *second_check*, non-duplicates go on to a second DetectDuplicate naming the same
    service without caching: every one of them is found there (the first cached it).
    """
    flow = Flow("dedupe")
    flow.add_service(MapCacheService("seen"))
    get = flow.add(GetFile(input_directory=str(root / "in"), batch_size=1), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    key = flow.add(UpdateAttribute(key="${fragment.index:mod(7)}"), name="key")
    dedupe = flow.add(
        DetectDuplicate(
            cache_entry_identifier="${key}",
            flowfile_description="${fragment.index}",
            distributed_cache_service="seen",
        ),
        name="dedupe",
    )
    flow.connect(get, split)
    flow.connect(split, key, "splits")
    flow.connect(key, dedupe, durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(dedupe, ["duplicate", "failure"])
    if second_check:
        check = flow.add(
            DetectDuplicate(
                cache_entry_identifier="${key}",
                distributed_cache_service="seen",
                cache_the_entry_identifier="false",
            ),
            name="check",
        )
        flow.connect(dedupe, check, "non-duplicate", durable=True)
        flow.auto_terminate(check, ["duplicate", "non-duplicate", "failure"])
    else:
        flow.auto_terminate(dedupe, "non-duplicate")
    return flow, dedupe


def _write(root: Path, name: str, lines: int) -> None:
    (root / "in").mkdir(parents=True, exist_ok=True)
    (root / "in" / name).write_text("".join(f"{name} {i}\n" for i in range(lines)))


def test_duplicates_are_found_across_micro_batches_and_runs(tmp_path: Path, runner: str) -> None:
    """Micro-batches of 10 FlowFiles share the committed cache, and so does a later run on the
    same repository: 7 keys, so 7 non-duplicates in all, the rest duplicates of the first."""
    for name in ("a1.txt", "a2.txt", "a3.txt"):
        _write(tmp_path, name, 10)
    flow, _ = _dedupe_flow(tmp_path)
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.transfers["dedupe"]["non-duplicate"][0] == 7
    assert result.transfers["dedupe"]["duplicate"][0] == 23
    assert result.micro_batches >= 3  # a file per micro-batch
    _write(tmp_path, "b.txt", 10)
    again = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.transfers["dedupe"]["duplicate"][0] == 10
    assert "non-duplicate" not in again.transfers["dedupe"]
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        entries = repos.flowfiles.state("service:seen")
        events = repos.provenance.search(limit=1_000)
    finally:
        repos.close()
    assert len(entries) == 7
    routed = [e for e in events if e.component_name == "dedupe" and e.event_type.value == "ROUTE"]
    originals = {
        e.updated_attributes.get("original.flowfile.description")
        for e in routed
        if e.relationship == "duplicate"
    }
    assert originals == {str(i) for i in range(1, 8)}  # indexes 1..7 came first
    assert len(routed) == 40


def test_two_processors_naming_one_service_share_its_entries(tmp_path: Path) -> None:
    """A second DetectDuplicate on the same service finds every key the first one cached."""
    _write(tmp_path, "a.txt", 20)
    flow, _ = _dedupe_flow(tmp_path, second_check=True)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert set(result.transfers["check"]) == {"duplicate"}
    assert result.transfers["check"]["duplicate"][0] == 7
    assert "uses service 'seen'" in flow.explain()
