"""Tests for SplitJson, ported from NiFi's TestSplitJson, plus a run in a flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutFile, SplitJson, split_json
from processors.split_json import MAX_SPLITS

PEOPLE = json.dumps(
    [
        {"_id": "a1", "name": {"first": "Shaffer", "last": "Pearson"}, "tags": ["x", "y"]},
        {"_id": "b2", "name": {"first": "Kathie", "last": "Wilkinson"}, "tags": []},
        {"_id": "c3", "name": {"first": "Holden", "last": "Rivera"}, "tags": [None, 1.0e7]},
    ]
).encode()


def split(path: str, content: bytes = PEOPLE, **properties: str) -> TestRunner:
    """A SplitJson runner that has split *content* with *path*."""
    runner = TestRunner(SplitJson(jsonpath_expression=path, **properties))
    runner.enqueue(content, {"filename": "people.json"})
    runner.run()
    return runner


def test_invalid_expressions_are_refused() -> None:
    """A path that does not compile is invalid, with NiFi's explanation."""
    (problem,) = SplitJson(jsonpath_expression="$..").validate()
    assert problem.subject == "JsonPath Expression"
    assert "specified expression was not valid" in problem.explanation
    TestRunner(SplitJson()).assert_not_valid()


def test_split_root_array() -> None:
    """Each element of the root array is a split, in order, with fragment attributes from 0."""
    runner = split("$")
    runner.assert_transfer_count("original", 1)
    splits = runner.flowfiles_for("split")
    assert [json.loads(s.content)["_id"] for s in splits] == ["a1", "b2", "c3"]
    assert [s.attributes["fragment.index"] for s in splits] == ["0", "1", "2"]
    fragment = splits[0].attributes["fragment.identifier"]
    for piece in splits:
        piece.assert_attribute_equals("fragment.count", "3")
        piece.assert_attribute_equals("fragment.identifier", fragment)
        piece.assert_attribute_equals("segment.original.filename", "people.json")
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("fragment.identifier", fragment)
    original.assert_attribute_equals("fragment.count", "3")
    original.assert_content_equals(PEOPLE)


def test_splits_hold_compact_json_and_scalars() -> None:
    """Objects as Jackson's compact JSON, strings bare, null as Null Value Representation."""
    runner = split("$[0].name")
    runner.assert_all_flowfiles_transferred("failure", 1)  # an object is not an array
    runner = split("$[*].name")
    assert runner.flowfiles_for("split")[0].content == (b'{"first":"Shaffer","last":"Pearson"}')
    runner = split("$[2].tags", null_value_representation="the string 'null'")
    assert [s.content for s in runner.flowfiles_for("split")] == [b"null", b"1.0E7"]
    runner = split("$[2].tags")
    assert [s.content for s in runner.flowfiles_for("split")] == [b"", b"1.0E7"]


def test_an_empty_array_makes_no_split() -> None:
    """An empty array: the original with fragment.count 0, and no split."""
    runner = split("$[1].tags")
    runner.assert_transfer_count("split", 0)
    runner.flowfiles_for("original")[0].assert_attribute_equals("fragment.count", "0")


@pytest.mark.parametrize(
    ("content", "path"),
    [(b"<xml/>", "$"), (PEOPLE, "$[0].missing"), (b'{"a": 1}', "$.a"), (b"null", "$")],
)
def test_failures_make_no_split(content: bytes, path: str) -> None:
    """Not JSON, a path not found, a scalar result: failure, unchanged, nothing else."""
    runner = split(path, content)
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(content)


def test_splits_are_forked_children_of_the_original() -> None:
    """One FORK event names the original as parent and every split as a child."""
    runner = split("$")
    (fork,) = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.FORK]
    assert list(fork.child_uuids) == [s.attributes["uuid"] for s in runner.flowfiles_for("split")]


def test_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> SplitJson -> PutFile, in the engine: one file per element, a FORK event."""
    from repositories.repository_set import RepositorySet

    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "people.json").write_bytes(PEOPLE)
    flow = Flow("split-json")
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    splitter = flow.add(SplitJson(jsonpath_expression="$[*]._id"), name="split")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, splitter)
    flow.connect(splitter, put, "split")
    flow.auto_terminate(splitter, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("split", "split") == 3
    assert (tmp_path / "out" / "people.json").read_text() in {"a1", "b2", "c3"}
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        forks = [
            e
            for e in repos.provenance.search(limit=100)
            if e.component_name == "split" and e.event_type is ProvenanceEventType.FORK
        ]
    finally:
        repos.close()
    assert len(forks) == 1
    assert len(list(forks[0].child_uuids)) == 3


def test_a_deep_scan_of_json_nested_150_deep_splits() -> None:
    """$..a over JSON nested 150 deep splits its 150 matches (python-jsonpath stopped at 100)."""
    runner = split("$..a", ('{"a":' * 150 + "1" + "}" * 150).encode())
    runner.assert_transfer_count("failure", 0)
    splits = runner.flowfiles_for("split")
    assert len(splits) == 150
    splits[-1].assert_content_equals("1")


def test_json_nested_990_deep_is_valid_and_deeper_than_1024_fails_naming_the_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """990 levels split as valid JSON; 1,025 go to failure with a bulletin naming the limit."""
    runner = split("$", ("[" * 990 + "1" + "]" * 990).encode())
    runner.assert_transfer_count("failure", 0)
    runner.flowfiles_for("split")[0].assert_content_equals("[" * 989 + "1" + "]" * 989)
    split("$", ("[" * 1_025 + "]" * 1_025).encode()).assert_all_flowfiles_transferred("failure", 1)
    assert "more than the 1024 levels" in caplog.text


def test_an_array_past_the_split_bound_fails_before_any_split(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An array of more than MAX_SPLITS elements goes to failure, saying how many and how to
    split it in parts; at the bound it splits (the bound lowered to 3 for the second part)."""
    runner = split("$", json.dumps(list(range(MAX_SPLITS + 1))).encode())
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert f"array of {MAX_SPLITS + 1} elements, more than the {MAX_SPLITS}" in caplog.text
    monkeypatch.setattr(split_json, "MAX_SPLITS", 3)
    split("$", b"[1,2,3]").assert_transfer_count("split", 3)
    split("$", b"[1,2,3,4]").assert_all_flowfiles_transferred("failure", 1)
