"""Tests for AttributesToJSON, ported from NiFi's TestAttributesToJSON, plus the batch form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import AttributesToJSON, GetFile, PutFile
from tests.processors._batch_flows import BatchOnly, OneByOne, agree_in_a_flow


def convert(attributes: dict[str, str] | None = None, **properties: str) -> TestRunner:
    """A runner that has converted one FlowFile with *attributes*."""
    runner = TestRunner(AttributesToJSON(**properties))
    runner.enqueue(b"content", attributes or {})
    runner.run()
    return runner


def json_of(runner: TestRunner) -> dict[str, object]:
    """The JSONAttributes of the FlowFile sent to success, parsed."""
    (out,) = runner.flowfiles_for("success")
    return json.loads(out.attributes["JSONAttributes"])


def test_invalid_settings() -> None:
    """An empty Attributes List or a non-boolean Include Core Attributes is invalid."""
    TestRunner(AttributesToJSON(attributes_list="")).assert_not_valid()
    TestRunner(AttributesToJSON(include_core_attributes="maybe")).assert_not_valid()
    TestRunner(AttributesToJSON(attributes_regular_expression="(")).assert_not_valid()


def test_missing_listed_attribute_is_empty_or_null() -> None:
    """A listed attribute the FlowFile lacks is "" or, with Null Value true, null."""
    assert json_of(convert(attributes_list="NonExisting")) == {"NonExisting": ""}
    assert json_of(convert(attributes_list="NonExisting", null_value="true")) == {
        "NonExisting": None
    }


def test_all_attributes_by_default_in_name_order() -> None:
    """No list, no regex: every attribute, core ones included, keys sorted; values escaped."""
    runner = convert({"b": "'badjson'", "a": 'say "hi"\n'})
    (out,) = runner.flowfiles_for("success")
    text = out.attributes["JSONAttributes"]
    assert text.startswith('{"a":"say \\"hi\\"\\n","b":"\'badjson\'","filename":')
    assert set(json.loads(text)) == {"a", "b", "filename", "path", "uuid"}
    out.assert_content_equals("content")


def test_core_attributes_can_be_left_out_only_of_all() -> None:
    """Include Core Attributes false drops them from "all", not from a list or a regex."""
    assert json_of(convert({"t": "v"}, include_core_attributes="false")) == {"t": "v"}
    listed = convert(
        {"t": "v", "path": "p"}, include_core_attributes="false", attributes_list=" t , path "
    )
    assert json_of(listed) == {"t": "v", "path": "p"}
    regex = convert(
        {"pathx": "v"}, include_core_attributes="false", attributes_regular_expression="path.*"
    )
    assert json_of(regex) == {"path": "target", "pathx": "v"}


def test_list_then_regex_matches() -> None:
    """The list in its order, then attributes whose whole name matches the regex."""
    runner = convert(
        {"delimited.header.a": "1", "delimited.header.b": "2", "other": "x", "t": "y"},
        attributes_list="t,missing",
        attributes_regular_expression="delimited\\.header\\..*",
    )
    (out,) = runner.flowfiles_for("success")
    assert out.attributes["JSONAttributes"] == (
        '{"t":"y","missing":"","delimited.header.a":"1","delimited.header.b":"2"}'
    )


def test_content_destination_sets_mime_type_and_pretty_prints() -> None:
    """flowfile-content: the JSON is the content, mime.type application/json, Jackson's
    pretty printer when asked; "{}" when nothing is selected."""
    runner = convert({"t": "v"}, destination="flowfile-content", attributes_list="t")
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals('{"t":"v"}')
    out.assert_attribute_equals("mime.type", "application/json")
    out.assert_attribute_not_exists("JSONAttributes")
    assert [e.event_type.value for e in runner.provenance_events] == ["CONTENT_MODIFIED"]
    runner = convert(
        {"t": "v"}, destination="flowfile-content", attributes_list="t", pretty_print="true"
    )
    runner.flowfiles_for("success")[0].assert_content_equals('{\n  "t" : "v"\n}')
    runner = convert(destination="flowfile-content", include_core_attributes="false")
    runner.flowfiles_for("success")[0].assert_content_equals("{}")


def test_nested_strategy_embeds_json_values() -> None:
    """Nested: values that look like JSON objects or arrays are embedded; invalid ones fail."""
    attributes = {"obj": ' {"a": [1, 2.5]} ', "arr": "[true]", "text": "[not json"}
    runner = convert(attributes, attributes_list="obj,arr,text", json_handling_strategy="NESTED")
    (out,) = runner.flowfiles_for("success")
    assert out.attributes["JSONAttributes"] == (
        '{"obj":{"a":[1,2.5]},"arr":[true],"text":"[not json"}'
    )
    escaped = convert(attributes, attributes_list="obj")
    assert json_of(escaped) == {"obj": ' {"a": [1, 2.5]} '}
    failing = convert({"bad": "{nope}"}, attributes_list="bad", json_handling_strategy="NESTED")
    failing.assert_all_flowfiles_transferred("failure", 1)


ATTRIBUTE_MAPS = st.dictionaries(
    st.sampled_from(["a", "b", "path", "x.y", "j"]),
    st.sampled_from(["1", "", "é\n", "[1, 2]", '{"k": null}', "{bad}"]),
    max_size=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    maps=st.lists(ATTRIBUTE_MAPS, min_size=1, max_size=6),
    listed=st.sampled_from([None, "a,b", "b,missing,a"]),
    regex=st.sampled_from([None, "x.*", "[ab]"]),
    core=st.sampled_from(["true", "false"]),
    null=st.sampled_from(["true", "false"]),
    strategy=st.sampled_from(["ESCAPED", "NESTED"]),
)
def test_batch_form_agrees_with_on_trigger(  # noqa: PLR0917 - hypothesis passes them by name
    maps: list[dict[str, str]],
    listed: str | None,
    regex: str | None,
    core: str,
    null: str,
    strategy: str,
) -> None:
    """The batch form gives each FlowFile the JSON on_trigger gives it, events included."""
    properties = {
        "include_core_attributes": core,
        "null_value": null,
        "json_handling_strategy": strategy,
    }
    if listed:
        properties["attributes_list"] = listed
    if regex:
        properties["attributes_regular_expression"] = regex
    runner = TestRunner(AttributesToJSON(**properties))
    for attributes in maps:
        runner.enqueue(b"", attributes)
    runner.assert_batch_form_agrees(allow_decline=True)


def test_batch_form_takes_uniform_batches_whole() -> None:
    """FlowFiles with the same attribute names go whole, varying values and all."""
    runner = TestRunner(AttributesToJSON())
    for index in range(20):
        runner.enqueue(b"", {"n": str(index), "kind": "odd" if index % 2 else "even"})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 20


def test_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> AttributesToJSON (content) -> PutFile, in the engine."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "a.txt").write_text("x")
    flow = Flow("attributes-json")
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    to_json = flow.add(
        AttributesToJSON(attributes_list="filename", destination="flowfile-content"),
        name="to-json",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, to_json)
    flow.connect(to_json, put, "success")
    flow.auto_terminate(to_json, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("to-json", "success") == 1
    assert (tmp_path / "out" / "a.txt").read_text() == '{"filename":"a.txt"}'


@pytest.mark.parametrize("destination", ["flowfile-attribute", "flowfile-content"])
def test_pretty_print_only_applies_to_content(destination: str) -> None:
    """Pretty Print depends on Destination flowfile-content; the attribute is always compact."""
    runner = convert({"t": "v"}, destination=destination, attributes_list="t", pretty_print="true")
    (out,) = runner.flowfiles_for("success")
    text = out.attributes.get("JSONAttributes") or out.content.decode()
    assert ("\n" in text) == (destination == "flowfile-content")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    maps=st.lists(ATTRIBUTE_MAPS, min_size=1, max_size=6),
    listed=st.sampled_from([None, "a,b", "b,missing,a,j"]),
    regex=st.sampled_from([None, "x.*", "[ab]"]),
    null=st.sampled_from(["true", "false"]),
    strategy=st.sampled_from(["ESCAPED", "NESTED"]),
    pretty=st.sampled_from(["true", "false"]),
)
def test_content_batch_form_agrees_with_on_trigger(  # noqa: PLR0917 - hypothesis passes them by name
    maps: list[dict[str, str]],
    listed: str | None,
    regex: str | None,
    null: str,
    strategy: str,
    pretty: str,
) -> None:
    """Destination flowfile-content: the batch form writes each FlowFile the JSON on_trigger
    writes (compact or pretty), mime.type application/json, a CONTENT_MODIFIED each."""
    properties = {
        "destination": "flowfile-content",
        "null_value": null,
        "json_handling_strategy": strategy,
        "pretty_print": pretty,
    }
    if listed:
        properties["attributes_list"] = listed
    if regex:
        properties["attributes_regular_expression"] = regex
    runner = TestRunner(AttributesToJSON(**properties))
    for attributes in maps:
        runner.enqueue(b"old content", {"mime.type": "text/plain", **attributes})
    runner.assert_batch_form_agrees(allow_decline=True)


@pytest.mark.parametrize("pretty", ["true", "false"])
@pytest.mark.parametrize(
    "selection",
    [{"attributes_list": "n,kind,j,missing", "attributes_regular_expression": "k.*"}, {}],
)
def test_content_batch_form_takes_uniform_batches_whole(
    pretty: str, selection: dict[str, str]
) -> None:
    """FlowFiles with the same attribute names go whole to content, nested JSON and an empty
    selection (``{}``, or ``{ }`` pretty-printed) included."""
    runner = TestRunner(
        AttributesToJSON(
            destination="flowfile-content",
            json_handling_strategy="NESTED",
            pretty_print=pretty,
            **(selection or {"attributes_regular_expression": "^$"}),
        )
    )
    for index in range(20):
        attributes = {"n": str(index), "kind": "odd" if index % 2 else "even"}
        runner.enqueue(b"x" * index, {**attributes, "j": f'{{"v": [{index}, null]}}'})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 20
    out = runner.flowfiles_for("success")[3]
    out.assert_attribute_equals("mime.type", "application/json")
    expected = {"n": "3", "kind": "odd", "j": {"v": [3, None]}, "missing": ""} if selection else {}
    assert json.loads(out.content) == expected


class _BatchOnlyAttributesToJSON(BatchOnly, AttributesToJSON):
    """AttributesToJSON whose FlowFiles must all go through its batch form."""


class _OneByOneAttributesToJSON(OneByOne, AttributesToJSON):
    """AttributesToJSON with its batch form declined."""


#: no uuid in the JSON: the contents of the two runs compared must not differ by their uuids
_FLOW_CONFIG = {
    "destination": "flowfile-content",
    "attributes_list": "filename,fragment.index,fragment.count,absent",
    "null_value": "true",
}


def test_content_batch_form_in_a_flow_agrees_with_one_by_one(tmp_path: Path) -> None:
    """GetFile -> SplitText -> AttributesToJSON (content) on the direct runner: the batch form
    records the same events (CONTENT_MODIFIED with mime.type and the bytes before and after,
    DROP) and transfers as on_trigger."""
    lines = [f"line {i}\n".encode() for i in range(300)]
    shapes, transfers = agree_in_a_flow(
        tmp_path,
        lines,
        _BatchOnlyAttributesToJSON(**_FLOW_CONFIG),
        _OneByOneAttributesToJSON(**_FLOW_CONFIG),
    )
    assert transfers["step"]["success"][0] == 300
    modified = [s for s in shapes.elements() if s[0] == "CONTENT_MODIFIED"]
    assert len(modified) == 300
    expected = b'{"filename":"lines.txt","fragment.index":"8","fragment.count":"300","absent":null}'
    assert (expected, b"line 7\n") in {s[8:10] for s in modified}
    assert all(("mime.type", "application/json") in s[7] for s in modified)


@pytest.mark.spark
def test_content_batch_form_on_spark_agrees_with_one_by_one(tmp_path: Path) -> None:
    """The same on Spark: contents written as batches in executors, events as one by one."""
    agree_in_a_flow(
        tmp_path,
        [f"line {i}\n".encode() for i in range(50)],
        _BatchOnlyAttributesToJSON(**_FLOW_CONFIG),
        _OneByOneAttributesToJSON(**_FLOW_CONFIG),
        runner="spark",
    )
