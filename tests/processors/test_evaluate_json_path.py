"""Tests for EvaluateJsonPath, ported from NiFi's TestEvaluateJsonPath, plus the batch form."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import ProcessException
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import AttributesToJSON, EvaluateJsonPath, GetFile, PutFile
from tests.processors._batch_flows import BatchOnly, OneByOne, agree_in_a_flow

PEOPLE = json.dumps(
    [
        {
            "_id": "54df94072d5dbf7dc6340cc5",
            "index": 0,
            "balance": 1234.5,
            "isActive": True,
            "name": {"first": "Shaffer", "last": "Pearson"},
            "friends": [{"id": 0, "name": "Holden"}, {"id": 1, "name": "Reyna"}, {"id": 2}],
            "nothing": None,
        }
    ]
).encode()


def attribute_runner(**paths: str) -> TestRunner:
    """EvaluateJsonPath to attributes with *paths* as dynamic properties."""
    return TestRunner(EvaluateJsonPath(destination="flowfile-attribute", **paths))


def test_invalid_paths_and_path_counts_are_invalid() -> None:
    """A bad path, a blank one, or two paths for content make the processor invalid."""
    TestRunner(EvaluateJsonPath(destination="flowfile-attribute", bad="$..")).assert_not_valid()
    TestRunner(EvaluateJsonPath(destination="flowfile-attribute", bad="  ")).assert_not_valid()
    two = EvaluateJsonPath(JsonPath1="$[0]._id", JsonPath2="$[0].name")
    assert [p.subject for p in two.validate()] == ["JsonPaths"]
    TestRunner(EvaluateJsonPath(JsonPath1="$[0]. _id")).assert_not_valid()


def test_content_that_is_not_json_goes_to_failure() -> None:
    """XML (or JSON null) cannot be read: failure, unchanged."""
    runner = attribute_runner(id="$[0]._id")
    runner.enqueue(b"<a><b/></a>")
    runner.enqueue(b"null")
    runner.run(2)
    runner.assert_all_flowfiles_transferred("failure", 2)


def test_scalar_paths_to_attributes() -> None:
    """Scalars become attributes as Java prints them; an object fails the scalar return type."""
    runner = attribute_runner(id="$[0]._id", balance="$[0].balance", active="$[0].isActive")
    runner.enqueue(PEOPLE)
    runner.run()
    (out,) = runner.flowfiles_for("matched")
    out.assert_attribute_equals("id", "54df94072d5dbf7dc6340cc5")
    out.assert_attribute_equals("balance", "1234.5")
    out.assert_attribute_equals("active", "true")
    runner = attribute_runner(id="$[0]._id", name="$[0].name")
    runner.enqueue(PEOPLE)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_not_exists("id")


def test_json_return_type_writes_objects_as_compact_json() -> None:
    """Return Type json: an object becomes Jackson's compact JSON."""
    runner = TestRunner(
        EvaluateJsonPath(
            destination="flowfile-attribute",
            return_type="json",
            **{"evaluatejson.id": "$[0]._id", "evaluatejson.name": "$[0].name"},
        )
    )
    runner.enqueue(PEOPLE)
    runner.run()
    (out,) = runner.flowfiles_for("matched")
    out.assert_attribute_equals("evaluatejson.id", "54df94072d5dbf7dc6340cc5")
    out.assert_attribute_equals("evaluatejson.name", '{"first":"Shaffer","last":"Pearson"}')


@pytest.mark.parametrize(("behavior", "expected"), [("ignore", ""), ("warn", ""), ("skip", None)])
def test_path_not_found_behaviors(
    behavior: str, expected: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    """Not found: an empty attribute (ignore, warn with a warning) or none (skip); matched."""
    runner = TestRunner(
        EvaluateJsonPath(
            destination="flowfile-attribute",
            path_not_found_behavior=behavior,
            id="$[0]._id",
            missing="$[0].name.nonexistent",
        )
    )
    runner.enqueue(PEOPLE)
    with caplog.at_level(logging.WARNING):
        runner.run()
    (out,) = runner.flowfiles_for("matched")
    out.assert_attribute_equals("id", "54df94072d5dbf7dc6340cc5")
    assert out.attributes.get("missing") == expected
    assert ("could not find path" in caplog.text) == (behavior == "warn")


def test_null_value_representation() -> None:
    """A JSON null is '' or 'null' as configured; a missing path stays ''."""
    for option, expected in (("empty string", ""), ("the string 'null'", "null")):
        runner = TestRunner(
            EvaluateJsonPath(
                destination="flowfile-attribute",
                return_type="json",
                null_value_representation=option,
                stringField="$.stringField",
                missingField="$.missingField",
                nullField="$.nullField",
            )
        )
        runner.enqueue(b'{"stringField": "String Value", "nullField": null}')
        runner.run()
        (out,) = runner.flowfiles_for("matched")
        assert [out.attributes[k] for k in ("stringField", "missingField", "nullField")] == [
            "String Value",
            "",
            expected,
        ]


def test_content_destination() -> None:
    """flowfile-content: the result replaces the content (CONTENT_MODIFIED); a list for an
    indefinite path; not found goes to unmatched unchanged; scalar return of a list fails."""
    runner = TestRunner(EvaluateJsonPath(JsonPath="$[0]._id"))
    runner.enqueue(PEOPLE)
    runner.run()
    runner.flowfiles_for("matched")[0].assert_content_equals("54df94072d5dbf7dc6340cc5")
    assert [e.event_type.value for e in runner.provenance_events] == ["CONTENT_MODIFIED"]
    for path, relationship, content in (
        ("$[0].friends.[*].id", "matched", b"[0,1,2]"),
        ("$[0].friends[?(@.id < 2)].name", "matched", b'["Holden","Reyna"]'),
        ("$[0].nonexistent.key", "unmatched", PEOPLE),
    ):
        runner = TestRunner(EvaluateJsonPath(list=path))
        runner.enqueue(PEOPLE)
        runner.run()
        runner.flowfiles_for(relationship)[0].assert_content_equals(content)
    runner = TestRunner(EvaluateJsonPath(return_type="scalar", list="$[0].friends[*].id"))
    runner.enqueue(PEOPLE)
    runner.run()
    runner.flowfiles_for("failure")[0].assert_content_equals(PEOPLE)


def test_a_function_that_cannot_apply_keeps_the_flowfile_queued() -> None:
    """As NiFi's uncaught JsonPathException: the session rolls back, nothing is lost."""
    runner = attribute_runner(total="$[0].name.sum()")
    runner.enqueue(PEOPLE)
    with pytest.raises(ProcessException, match="empty array"):
        runner.run()
    assert runner.queue_size() == 1


DOCUMENTS = st.sampled_from(
    [
        b'{"a": 1, "b": {"c": [1, 2]}}',
        b'{"a": "x"}',
        b'{"a": null, "b": 2.5}',
        b"[1, 2]",
        b"not json",
        b'{"b": {"c": []}}',
    ]
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=st.lists(DOCUMENTS, min_size=1, max_size=8),
    behavior=st.sampled_from(["ignore", "skip", "warn"]),
    return_type=st.sampled_from(["auto-detect", "json", "scalar"]),
)
def test_batch_form_agrees_with_on_trigger(
    documents: list[bytes], behavior: str, return_type: str
) -> None:
    """The batch form gives each FlowFile what on_trigger gives it, events included."""
    runner = TestRunner(
        EvaluateJsonPath(
            destination="flowfile-attribute",
            path_not_found_behavior=behavior,
            return_type=return_type,
            a="$.a",
            c="$.b.c",
        )
    )
    for index, document in enumerate(documents):
        runner.enqueue(document, {"a": "old", "n": str(index)})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == len(documents)


def _write_inputs(root: Path) -> Path:
    inbox = root / "in"
    inbox.mkdir(parents=True)
    (inbox / "a.json").write_text('{"user": {"name": "ada", "id": 7}}')
    (inbox / "b.json").write_text('{"user": {"id": 8}}')
    (inbox / "c.json").write_text("not json")
    return inbox


def test_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> EvaluateJsonPath (attributes) -> AttributesToJSON -> PutFile, in the engine:
    the attributes reach the output and each FlowFile has its ATTRIBUTES_MODIFIED event."""
    from repositories.repository_set import RepositorySet

    inbox = _write_inputs(tmp_path)
    flow = Flow("json-attributes")
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    evaluate = flow.add(
        EvaluateJsonPath(destination="flowfile-attribute", name="$.user.name", id="$.user.id"),
        name="evaluate",
    )
    to_json = flow.add(
        AttributesToJSON(attributes_list="filename,name,id", destination="flowfile-content"),
        name="to-json",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, evaluate)
    flow.connect(evaluate, to_json, "matched")
    flow.connect(to_json, put, "success")
    flow.auto_terminate(evaluate, ["unmatched", "failure"])
    flow.auto_terminate(to_json, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    settings_ = Settings(sync=False, parallelism=1)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings_)
    assert (result.count("evaluate", "matched"), result.count("evaluate", "failure")) == (2, 1)
    outputs = {p.name: json.loads(p.read_text()) for p in (tmp_path / "out").iterdir()}
    assert outputs == {
        "a.json": {"filename": "a.json", "name": "ada", "id": "7"},
        "b.json": {"filename": "b.json", "name": "", "id": "8"},
    }
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = [
            e.event_type.value
            for e in repos.provenance.search(limit=100)
            if e.component_name == "evaluate"
        ]
    finally:
        repos.close()
    assert sorted(events) == ["ATTRIBUTES_MODIFIED", "ATTRIBUTES_MODIFIED", "DROP"]


CONTENT_DOCUMENTS = st.sampled_from(
    [
        b'{"a": 1, "b": {"c": [1, 2]}}',
        b'{"a": "\\u00e9\\n\\u0001", "b": {"c": "x"}}',
        b'{"a": null, "b": 2.5}',
        b'{"a": "", "b": {"c": null}}',
        b'{"a": 1.0E10, "b": {"c": {"d": [true, false]}}}',
        b'  {"a": {"k": [1, "two"]}}  trailing',
        b"[1,2]",
        b'{"b": {}}',
    ]
)
FAILING_DOCUMENTS = st.sampled_from([b"not json", b"null"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=st.lists(CONTENT_DOCUMENTS, min_size=1, max_size=8),
    path=st.sampled_from(["$.a", "$.b.c", "$", "$..c", "$.b[*]", "$.b.c.length()", "$['a','b']"]),
    return_type=st.sampled_from(["auto-detect", "json"]),
    null=st.sampled_from(["empty string", "the string 'null'"]),
)
def test_content_batch_form_agrees_with_on_trigger(
    documents: list[bytes], path: str, return_type: str, null: str
) -> None:
    """Destination flowfile-content: the batch form writes each FlowFile the content on_trigger
    writes (matched, CONTENT_MODIFIED) or leaves it as it was (unmatched), taking them whole."""
    runner = TestRunner(
        EvaluateJsonPath(return_type=return_type, null_value_representation=null, path=path)
    )
    for index, document in enumerate(documents):
        runner.enqueue(document, {"n": str(index)})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == len(documents)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=st.lists(st.one_of(CONTENT_DOCUMENTS, FAILING_DOCUMENTS), min_size=1, max_size=8),
    path=st.sampled_from(["$.a", "$.b.c", "$.b"]),
    return_type=st.sampled_from(["json", "scalar"]),
    behavior=st.sampled_from(["ignore", "warn"]),
)
def test_content_batch_form_declines_what_would_log(
    documents: list[bytes], path: str, return_type: str, behavior: str
) -> None:
    """A batch in which a FlowFile would go to failure, or warn of a path not found, goes one
    by one, with the same outcome; the others go whole."""
    runner = TestRunner(
        EvaluateJsonPath(return_type=return_type, path_not_found_behavior=behavior, path=path)
    )
    for document in documents:
        runner.enqueue(document)
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.whole in {0, len(documents)}
    if runner.batch_use.whole:
        assert not runner.flowfiles_for("failure")
    if runner.flowfiles_for("failure"):
        assert runner.batch_use.declined


def test_content_batch_logs_each_warning_once(caplog: pytest.LogCaptureFixture) -> None:
    """Declined for a path not found under warn: one warning per FlowFile, from on_trigger."""
    runner = TestRunner(EvaluateJsonPath(path_not_found_behavior="warn", path="$.x"), batches=True)
    for index in range(3):
        runner.enqueue(f'{{"a": {index}}}'.encode())
    runner.enqueue(b'{"x": 1}')
    with caplog.at_level(logging.WARNING):
        runner.run()
    assert caplog.text.count("could not find path $.x") == 3
    assert "FlowFile[" in caplog.text  # the FlowFile as on_trigger names it
    runner.assert_transfer_count("unmatched", 3)
    runner.flowfiles_for("matched")[0].assert_content_equals("1")
    assert runner.batch_use.whole == 0


def test_attribute_batch_logs_each_line_once_when_a_later_flowfile_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A batch form that meets a function that cannot apply after a failure logged nothing:
    the batch goes one by one, which logs the failure once."""
    runner = TestRunner(
        EvaluateJsonPath(destination="flowfile-attribute", total="$[0].name.sum()"),
        batches=True,
    )
    runner.enqueue(b"not json")
    runner.enqueue(PEOPLE)
    with caplog.at_level(logging.WARNING), pytest.raises(ProcessException, match="empty array"):
        runner.run()
    assert caplog.text.count("did not have valid JSON content") == 1
    runner.assert_transfer_count("failure", 1)
    assert runner.queue_size() == 1


class _BatchOnlyEvaluateJsonPath(BatchOnly, EvaluateJsonPath):
    """EvaluateJsonPath whose FlowFiles must all go through its batch form."""

    marked_to = "matched"


class _OneByOneEvaluateJsonPath(OneByOne, EvaluateJsonPath):
    """EvaluateJsonPath with its batch form declined."""


def _json_lines(count: int) -> list[bytes]:
    return [
        (
            f'{{"id": {i}, "user": {{"name": "u{i % 7}"}}}}\n' if i % 5 else f'{{"id": {i}}}\n'
        ).encode()
        for i in range(count)
    ]


def test_content_batch_form_in_a_flow_agrees_with_one_by_one(tmp_path: Path) -> None:
    """GetFile -> SplitText -> EvaluateJsonPath (content) on the direct runner: the batch form
    records the same events (CONTENT_MODIFIED with the bytes before and after, DROP) and
    transfers as on_trigger."""
    config = {"user": "$.user"}
    shapes, transfers = agree_in_a_flow(
        tmp_path,
        _json_lines(300),
        _BatchOnlyEvaluateJsonPath(**config),
        _OneByOneEvaluateJsonPath(**config),
    )
    assert (transfers["step"]["matched"][0], transfers["step"]["unmatched"][0]) == (240, 60)
    modified = {s[8:10] for s in shapes.elements() if s[0] == "CONTENT_MODIFIED"}
    assert len(modified) == 240
    assert (b'{"name":"u1"}', b'{"id": 1, "user": {"name": "u1"}}\n') in modified


@pytest.mark.spark
def test_content_batch_form_on_spark_agrees_with_one_by_one(tmp_path: Path) -> None:
    """The same on Spark: contents written as batches in executors, events as one by one."""
    config = {"name": "$.user.name"}
    agree_in_a_flow(
        tmp_path,
        _json_lines(50),
        _BatchOnlyEvaluateJsonPath(**config),
        _OneByOneEvaluateJsonPath(**config),
        runner="spark",
    )


def test_json_nested_deep_is_evaluated_not_stuck() -> None:
    """$..a over 150 levels and $ over 990 levels match; 1,025 levels go to failure."""
    deep = '{"a":' * 150 + "1" + "}" * 150
    runner = TestRunner(EvaluateJsonPath(destination="flowfile-content", found="$..a"))
    runner.enqueue(deep)
    runner.run()
    runner.assert_all_flowfiles_transferred("matched", 1)
    assert runner.flowfiles_for("matched")[0].content.endswith(b',{"a":1},1]')
    valid = "[" * 990 + "1" + "]" * 990
    runner = TestRunner(EvaluateJsonPath(destination="flowfile-content", found="$"))
    runner.enqueue(valid)
    runner.enqueue("[" * 1_025 + "]" * 1_025)
    runner.run(2)
    runner.assert_transfer_count("matched", 1)
    runner.flowfiles_for("matched")[0].assert_content_equals(valid)
    runner.assert_transfer_count("failure", 1)
