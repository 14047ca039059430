"""Tests for JoltTransformJSON: NiFi's TestJoltTransformJSON cases and Jolt's published examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowcore.testing import TestRunner
from processors import JoltTransformJSON
from processors._jolt import JoltSpecError, build_transform, parse_spec

FIXTURES = Path(__file__).parent / "jolt_fixtures"
NIFI = FIXTURES / "nifi"
JOLT = FIXTURES / "jolt"
INPUT = NIFI / "input.json"
CHAINR_SPEC = NIFI / "chainrSpec.json"

#: Jolt's test directory -> NiFi's Jolt Transform value
_STRATEGY = {
    "shiftr": "jolt-transform-shift",
    "defaultr": "jolt-transform-default",
    "removr": "jolt-transform-remove",
    "cardinality": "jolt-transform-card",
    "integration": "jolt-transform-chain",
}
_MODIFY = {
    "OVERWRITR": "jolt-transform-modify-overwrite",
    "DEFAULTR": "jolt-transform-modify-default",
    "DEFINR": "jolt-transform-modify-define",
}


def _load(path: Path) -> Any:
    return parse_spec(path.read_text(encoding="utf-8"))


def _runner(spec: str | None = None, strategy: str | None = None) -> TestRunner:
    runner = TestRunner(JoltTransformJSON())
    if spec is not None:
        runner.set_property("Jolt Specification", spec)
    if strategy is not None:
        runner.set_property("Jolt Transform", strategy)
    return runner


def _transformed(runner: TestRunner) -> Any:
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", "application/json")
    return json.loads(out.content)


def _assert_output(runner: TestRunner, expected_file: str) -> None:
    assert _transformed(runner) == _load(NIFI / expected_file)


# --- NiFi's TestJoltTransformJSON ------------------------------------------------------------


def test_relationships() -> None:
    """NiFi's testRelationshipsCreated: success and failure only."""
    assert {r.name for r in JoltTransformJSON.relationships} == {"success", "failure"}


def test_invalid_spec() -> None:
    """NiFi's testInvalidJOLTSpec: '[{}]' is not a chain; the chain spec is valid."""
    runner = _runner("[{}]")
    runner.assert_not_valid()
    runner.set_property("Jolt Specification", CHAINR_SPEC.read_text())
    runner.assert_valid()


def test_non_existing_spec_file(tmp_path: Path) -> None:
    """NiFi's testNonExistingJOLTSpec: a missing spec file is invalid, the reason names 'file'."""
    runner = _runner(str(tmp_path / "nonExistingSpec.json"))
    runner.assert_not_valid()
    assert "file" in str(runner.validation_problems()[0])


def test_chain_spec_is_not_a_shift_spec() -> None:
    """NiFi's testIncorrectJOLTSpec (and FromFile): a chain spec under Shift is invalid."""
    _runner(CHAINR_SPEC.read_text(), "jolt-transform-shift").assert_not_valid()
    _runner(str(CHAINR_SPEC), "jolt-transform-shift").assert_not_valid()


def test_spec_required_unless_sort() -> None:
    """NiFi's testSpecIsNotSet / testSpecIsEmpty / testSpecNotRequired."""
    _runner(None, "jolt-transform-shift").assert_not_valid()
    _runner("", "jolt-transform-shift").assert_not_valid()
    _runner(None, "jolt-transform-sort").assert_valid()


def test_no_flowfile() -> None:
    """NiFi's testNoFlowFileContent: nothing queued, nothing transferred."""
    runner = _runner(CHAINR_SPEC.read_text())
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)


def test_invalid_json_content() -> None:
    """NiFi's testInvalidFlowFileContentJson (and FromFile): not JSON goes to failure."""
    for spec in (CHAINR_SPEC.read_text(), str(CHAINR_SPEC)):
        runner = _runner(spec)
        runner.enqueue("invalid json")
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        runner.flowfiles_for("failure")[0].assert_content_equals("invalid json")


@pytest.mark.parametrize("spec_file", ["chainrSpec.json", "chainrSpecWithSingleLineComment.json"])
def test_chain(spec_file: str) -> None:
    """NiFi's testTransformInputWithChainrContents: plain and commented chain specs."""
    runner = _runner((NIFI / spec_file).read_text())
    runner.enqueue(INPUT)
    runner.run()
    _assert_output(runner, "chainrOutput.json")


def test_chain_with_leading_block_comment() -> None:
    """NiFi's leading multi-line Java comment case: /* */ before the spec is allowed."""
    runner = _runner("/*\n    Multiline Java comment\n*/\n" + CHAINR_SPEC.read_text())
    runner.enqueue(INPUT)
    runner.run()
    _assert_output(runner, "chainrOutput.json")


@pytest.mark.parametrize(
    ("strategy", "spec_file", "expected"),
    [
        ("jolt-transform-shift", "shiftrSpec.json", "shiftrOutput.json"),
        ("jolt-transform-default", "defaultrSpec.json", "defaultrOutput.json"),
        ("jolt-transform-remove", "removrSpec.json", "removrOutput.json"),
        ("jolt-transform-card", "cardrSpec.json", "cardrOutput.json"),
        ("jolt-transform-modify-default", "modifierDefaultSpec.json", "modifierDefaultOutput.json"),
        ("jolt-transform-modify-default", "modifierDefineSpec.json", "modifierDefineOutput.json"),
        (
            "jolt-transform-modify-default",
            "modifierOverwriteSpec.json",
            "modifierOverwriteOutput.json",
        ),
    ],
)
def test_single_operations(strategy: str, spec_file: str, expected: str) -> None:
    """NiFi's testTransformInputWith{Shiftr,Defaultr,Removr,Cardinality,Modifier*}."""
    runner = _runner((NIFI / spec_file).read_text(), strategy)
    runner.enqueue(INPUT)
    runner.run()
    _assert_output(runner, expected)


def test_shift_spec_from_file_named_by_expression() -> None:
    """NiFi's testTransformInputWithShiftrFromFileExpression: the spec path uses ${filename}."""
    runner = _runner(f"{NIFI}/${{filename}}", "jolt-transform-shift")
    runner.enqueue(INPUT, {"filename": "shiftrSpec.json"})
    runner.run()
    _assert_output(runner, "shiftrOutput.json")


def test_shift_accented_characters() -> None:
    """NiFi's testTransformInputWithShiftrAccentedChars: non-ASCII keys pass through."""
    spec = (NIFI / "shiftrSpec.json").read_text().replace('"primary"', '"primaryÄÖÜ"')
    runner = _runner(spec, "jolt-transform-shift")
    runner.enqueue(INPUT.read_text().replace('"primary"', '"primaryÄÖÜ"'))
    runner.run()
    _assert_output(runner, "shiftrOutput.json")


@pytest.mark.parametrize("spec", [None, "abcd"])
def test_sort(spec: str | None) -> None:
    """NiFi's testTransformInputWithSortr (and PopulatedSpec): keys sorted, any spec ignored."""
    runner = _runner(spec, "jolt-transform-sort")
    runner.enqueue(INPUT)
    runner.run()
    out = _transformed(runner)
    expected = _load(NIFI / "sortrOutput.json")
    assert json.dumps(out) == json.dumps(expected)


def test_default_with_environment_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    """NiFi's testTransformInputWithDefaultrExpressionLanguage: ${quota} from the environment."""
    monkeypatch.setenv("quota", "5")
    runner = _runner((NIFI / "defaultrELSpec.json").read_text(), "jolt-transform-default")
    runner.enqueue(INPUT)
    runner.run()
    _assert_output(runner, "defaultrELOutput.json")


def test_spec_from_attribute() -> None:
    """NiFi's testJoltSpecEL: the whole spec comes from a FlowFile attribute."""
    spec = (
        '{"RatingRange":5,"rating":{"*":{"MaxLabel":"High","MinLabel":"Low",'
        '"DisplayType":"NORMAL"}}}'
    )
    runner = _runner("${joltSpec}", "jolt-transform-default")
    runner.enqueue(INPUT, {"joltSpec": spec})
    runner.run()
    _assert_output(runner, "defaultrOutput.json")


def test_spec_with_invalid_expression() -> None:
    """NiFi's testJoltSpecInvalidEL: an unknown EL function makes the processor invalid."""
    _runner("${joltSpec:nonExistingFunction()}").assert_not_valid()


def test_json_source_attribute() -> None:
    """NiFi's testJsonSourceAttribute: missing and invalid attributes fail, valid ones change."""
    valid = '{"rating":{"primary":{"value":3},"series":{"value":[5,4]},"quality":{"value":3}}}'
    invalid = '{"rating":{"primary":{"value":3},"series":{"value":[5,4]},"quality":{"value":}}}'
    for attributes, ok in (({}, False), ({"jsonSourceAttr": invalid}, False)):
        runner = _runner(str(NIFI / "shiftrSpec.json"), "jolt-transform-shift")
        runner.set_property("JSON Source", "ATTRIBUTE")
        runner.set_property("JSON Source Attribute", "jsonSourceAttr")
        runner.enqueue(INPUT, attributes)
        runner.run()
        runner.assert_all_flowfiles_transferred("success" if ok else "failure", 1)
    runner = _runner(str(CHAINR_SPEC))
    runner.set_property("JSON Source", "ATTRIBUTE")
    runner.set_property("JSON Source Attribute", "jsonSourceAttr")
    runner.enqueue(INPUT, {"jsonSourceAttr": valid})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    assert json.loads(out.attributes["jsonSourceAttr"]) == _load(NIFI / "chainrOutput.json")
    out.assert_content_equals(INPUT)  # the content is left as it was


def test_json_lines() -> None:
    """NiFi's testTransformInputWithJsonLines: each line transformed, mime.type jsonl."""
    lines = (
        '{"rating":{"primary":{"value":3},"series":{"value":[5,4]},"quality":{"value":3}}}\n'
        '{"rating":{"primary":{"value":7},"series":{"value":[2,1]},"quality":{"value":8}}}\n'
    )
    runner = _runner(CHAINR_SPEC.read_text())
    runner.set_property("JSON Source", "JSON_LINES")
    runner.enqueue(lines)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", "application/jsonl")
    first, second = out.content.decode().strip().split("\n")
    assert json.loads(first) == _load(NIFI / "chainrOutput.json")
    assert json.loads(second)["Rating"] == 7


def test_invalid_json_lines() -> None:
    """NiFi's testInvalidJsonLinesContent: one bad line fails the FlowFile."""
    runner = _runner(CHAINR_SPEC.read_text())
    runner.set_property("JSON Source", "JSON_LINES")
    runner.enqueue('{"rating":{"primary":{"value":3}}}\nnot valid json\n')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


@pytest.mark.parametrize(
    ("retain", "expected"),
    [
        (
            "true",
            "\\u011F\\u00FC\\u015F\\u0131\\u00F6\\u00E7\\u011E\\u00DC\\u015E\\u0130\\u00D6\\u00C7",
        ),
        ("false", "ğüşıöçĞÜŞİÖÇ"),
    ],
)
def test_unicode_escaping(retain: str, expected: str) -> None:
    """NiFi's testWithUnicodeEscaping: escapes kept (Jackson's upper case) or resolved."""
    runner = _runner('[{"operation": "shift", "spec": {"*": "&"}}]')
    runner.set_property("Retain Unicode Escape Sequences", retain)
    escaped = "\\u011f\\u00fc\\u015f\\u0131\\u00f6\\u00e7\\u011e\\u00dc\\u015e\\u0130\\u00d6\\u00c7"
    runner.enqueue('{"value": "' + escaped + '"}')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert expected in runner.flowfiles_for("success")[0].content.decode()


def test_pretty_print_is_jacksons() -> None:
    """Pretty Print writes Jackson's default pretty printer; compact output has no spaces."""
    runner = _runner('[{"operation": "shift", "spec": {"a": "x.y"}}]')
    runner.set_property("Pretty Print", "true")
    runner.enqueue('{"a": [1, 2]}')
    runner.run()
    assert runner.flowfiles_for("success")[0].content == b'{\n  "x" : {\n    "y" : [ 1, 2 ]\n  }\n}'
    compact = _runner('[{"operation": "shift", "spec": {"a": "x.y"}}]')
    compact.enqueue('{"a": [1, 2]}')
    compact.run()
    assert compact.flowfiles_for("success")[0].content == b'{"x":{"y":[1,2]}}'


def test_provenance_content_modified() -> None:
    """A content transform gives one CONTENT_MODIFIED event (the session's own)."""
    runner = _runner(CHAINR_SPEC.read_text())
    runner.enqueue(INPUT)
    runner.run()
    kinds = [e.event_type.name for e in runner.provenance_events]
    assert kinds == ["CONTENT_MODIFIED"]


def test_nifi_1x_property_names() -> None:
    """NiFi 1.x flows name the properties jolt-transform / jolt-spec / pretty_print."""
    processor = JoltTransformJSON(
        **{
            "jolt-transform": "jolt-transform-shift",
            "jolt-spec": '{"a": "b"}',
            "pretty_print": "false",
        }
    )
    runner = TestRunner(processor)
    runner.enqueue('{"a": 1}')
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals('{"b":1}')


class UpperKeys:
    """A custom transform (the Custom strategy): upper-cases top-level keys."""

    def __init__(self, spec: Any = None) -> None:
        self.spec = spec

    def transform(self, value: Any) -> Any:
        return {k.upper(): v for k, v in value.items()}


def test_custom_python_transform() -> None:
    """Custom loads a Python class by dotted name, alone or inside a chain."""
    name = f"{__name__}.UpperKeys"
    runner = _runner('{"ignored": true}', "jolt-transform-custom")
    runner.set_property("Custom Transformation Class Name", name)
    runner.enqueue('{"a": 1}')
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals('{"A":1}')
    chain = f'[{{"operation": "shift", "spec": {{"a": "b"}}}}, {{"operation": "{name}"}}]'
    runner = _runner(chain)
    runner.enqueue('{"a": 1}')
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals('{"B":1}')


def test_custom_java_class_is_invalid() -> None:
    """A Java class name (NiFi's custom jars) is refused at validation, naming the class."""
    runner = _runner(CHAINR_SPEC.read_text(), "jolt-transform-custom")
    runner.set_property("Custom Transformation Class Name", "org.example.FakeCustomJoltTransform")
    runner.assert_not_valid()
    assert "org.example.FakeCustomJoltTransform" in str(runner.validation_problems()[0])
    _runner(CHAINR_SPEC.read_text(), "jolt-transform-custom").assert_not_valid()


def test_a_custom_class_that_is_no_transform_is_never_made(tmp_path: Path) -> None:
    """A class named by a FlowFile's attribute that is not a transform is refused before it
    is made: subprocess.Popen never runs its command."""
    probe = tmp_path / "made"
    runner = _runner(json.dumps(["touch", str(probe)]), "jolt-transform-custom")
    runner.set_property("Custom Transformation Class Name", "${class}")
    runner.enqueue('{"a": 1}', {"class": "subprocess.Popen"})
    runner.enqueue('{"a": 1}', {"class": "pathlib.Path"})
    runner.run(2)
    runner.assert_all_flowfiles_transferred("failure", 2)
    assert not probe.exists()


def test_transform_cache_builds_each_spec_once() -> None:
    """Transform Cache Size keeps built transforms per evaluated spec (LRU)."""
    runner = _runner("${spec}", "jolt-transform-shift")
    runner.set_property("Transform Cache Size", "2")
    for target in ("x", "y", "x"):
        runner.enqueue('{"a": 1}', {"spec": f'{{"a": "{target}"}}'})
    runner.run(3)
    outs = [json.loads(f.content) for f in runner.flowfiles_for("success")]
    assert outs == [{"x": 1}, {"y": 1}, {"x": 1}]
    cache = runner.processor._cache
    assert cache is None or len(cache._entries) <= 2


# --- Jolt's published examples ---------------------------------------------------------------


def _jolt_cases() -> list[Any]:
    cases = []
    for path in sorted(JOLT.rglob("*.json")):
        folder = path.parent.name
        if folder in _STRATEGY:
            cases.append(pytest.param(path, _STRATEGY[folder], "expected", id=path.stem))
        elif folder in ("modifier", "functions"):
            for key, strategy in _MODIFY.items():
                if key in _load(path):
                    cases.append(pytest.param(path, strategy, key, id=f"{path.stem}-{key}"))
    return cases


@pytest.mark.filterwarnings("ignore:Unknown modify function 'nonnull'")  # testListOfFunction's
@pytest.mark.parametrize(("path", "strategy", "key"), _jolt_cases())
def test_jolt_examples(path: Path, strategy: str, key: str) -> None:
    """Jolt's own input/spec/expected triples give the expected output through the processor."""
    case = _load(path)
    if path.stem == "negativeTestCases":
        with pytest.raises(JoltSpecError):  # Jolt refuses this spec (a negative case)
            build_transform(strategy, case["spec"])
        return
    context = case.get("context")
    if context:  # modify specs reading ^context: NiFi passes none, so apply directly
        transform = build_transform(strategy, case["spec"])
        assert transform.apply(case["input"], context=context) == case[key]
        return
    runner = _runner(json.dumps(case["spec"]), strategy)
    runner.enqueue(json.dumps(case["input"]))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert json.loads(runner.flowfiles_for("success")[0].content) == case[key]


def test_jolt_sort_example() -> None:
    """Jolt's sortr/simple: keys sorted recursively, in order."""
    runner = _runner(None, "jolt-transform-sort")
    runner.enqueue((JOLT / "sortr" / "simple-input.json").read_bytes())
    runner.run()
    out = runner.flowfiles_for("success")[0].content.decode()
    assert out == json.dumps(_load(JOLT / "sortr" / "simple-output.json"), separators=(",", ":"))


def test_jolt_examples_cover_the_wildcards() -> None:
    """The copied Jolt cases use every shift wildcard the brief names, and 25+ cases in all."""
    shift_specs = " ".join(
        (JOLT / "shiftr" / p.name).read_text() for p in (JOLT / "shiftr").iterdir()
    )
    for token in ('"*"', "&1", "&(", '"$"', "#", "@", "|", "[]", "[&"):
        assert token in shift_specs, token
    assert len(_jolt_cases()) >= 25


def test_modify_functions_the_copied_cases_miss() -> None:
    """toString, firstElement, lastElement, recursivelySquashNulls and friends (Jolt's
    ModifierTest checks some in Java code, not in its JSON files), through the processor."""
    spec = {
        "first": "=firstElement(@(1,arr))",
        "last": "=lastElement(@(1,arr))",
        "str": "=toString(@(1,num))",
        "nested": "=recursivelySquashNulls",
        "list": "=squashNulls",
        "upper": "=toUpper(@(1,name))",
        "joined": "=join('-',@(1,arr))",
        "n": "=toInteger(@(1,s))",
        "sum": "=intSum(@(1,arr))",
        "count": "=size(@(1,arr))",
    }
    document = {
        "arr": [5, 4],
        "num": 3,
        "nested": {"a": None, "b": {"c": None, "d": 1}},
        "list": [1, None, 2],
        "name": "ab",
        "s": "12",
    }
    runner = _runner(json.dumps(spec), "jolt-transform-modify-overwrite")
    runner.enqueue(json.dumps(document))
    runner.run()
    out = json.loads(runner.flowfiles_for("success")[0].content)
    assert out == {
        **document,
        "nested": {"b": {"d": 1}},
        "list": [1, 2],
        "first": 5,
        "last": 4,
        "str": "3",
        "upper": "AB",
        "joined": "5-4",
        "n": 12,
        "sum": 9,
        "count": 2,
    }
