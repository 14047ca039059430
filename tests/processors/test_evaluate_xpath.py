"""Tests for EvaluateXPath: NiFi's TestEvaluateXPath cases, return types, safe parsing."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from flowcore import ProvenanceEventType
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import EvaluateXPath

LICENSE = "<!-- Licensed to the Apache Software Foundation (ASF) -->\n"
BODY = """<node>
        <subNode>
            <value>Hello</value>
        </subNode>
        <subNode>
            <value>World!</value>
        </subNode>
    </node>"""
# NiFi's TestXml/xml-snippet.xml, xml-snippet-embedded-doctype.xml, xml-snippet-external-doctype.xml
SNIPPET = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n{LICENSE}'
    f'<ns:bundle xmlns:ns="http://namespace/1">\n    {BODY}\n</ns:bundle>'
)
EMBEDDED_DOCTYPE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE bundle\n[\n<!ELEMENT bundle (node)>\n'
    "<!ELEMENT node (subNode*)>\n<!ELEMENT subNode (value)>\n<!ELEMENT value (#PCDATA)>\n]>\n\n"
    f"{LICENSE}<bundle>\n    {BODY}\n</bundle>"
)
EXTERNAL_DOCTYPE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE bundle SYSTEM "non-existent-doctype.dtd">\n'
    f"{LICENSE}<bundle>\n    {BODY}\n</bundle>"
)


def evaluate(content: str | bytes = SNIPPET, **properties: object) -> TestRunner:
    runner = TestRunner(EvaluateXPath(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def test_as_attribute() -> None:
    """String results into attributes; '/' is the whole document's text (testAsAttribute)."""
    runner = evaluate(
        destination="flowfile-attribute",
        **{"xpath.result1": "/", "xpath.result2": "/*:bundle/node/subNode/value/text()"},
    )
    runner.assert_all_flowfiles_transferred("matched", 1)
    out = runner.flowfiles_for("matched")[0]
    out.assert_attribute_equals("xpath.result2", "Hello")
    assert "Hello" in out.attributes["xpath.result1"]
    assert "World!" in out.attributes["xpath.result1"]
    out.assert_content_equals(SNIPPET)


def test_check_if_element_exists() -> None:
    """boolean() gives 'true'/'false'; nothing found is an empty string, still matched."""
    runner = evaluate(
        destination="flowfile-attribute",
        **{
            "exist.1": "boolean(/*:bundle/node)",
            "exist.2": "boolean(/*:bundle/node2)",
            "count": "count(//subNode)",
            "missing": "/*:bundle/node2",
        },
    )
    out = runner.flowfiles_for("matched")[0]
    out.assert_attribute_equals("exist.1", "true")
    out.assert_attribute_equals("exist.2", "false")
    out.assert_attribute_equals("count", "2")
    out.assert_attribute_equals("missing", "")


def test_unmatched_content_is_unchanged() -> None:
    """A node-set that is empty sends the FlowFile to unmatched unchanged (testUnmatched)."""
    runner = evaluate(destination="flowfile-content", **{"x": "/*:bundle/node2"})
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    runner.flowfiles_for("unmatched")[0].assert_content_equals(SNIPPET)


def test_content_takes_exactly_one_xpath() -> None:
    """Destination flowfile-content with two XPaths (or none) is invalid."""
    two = {"a": "/*:bundle/node/subNode[1]", "b": "/*:bundle/node/subNode[2]"}
    TestRunner(EvaluateXPath(destination="flowfile-content", **two)).assert_not_valid()
    TestRunner(EvaluateXPath(destination="flowfile-content")).assert_not_valid()
    TestRunner(EvaluateXPath(destination="flowfile-attribute", **two)).assert_valid()
    TestRunner(EvaluateXPath(**{"bad": "/a[["})).assert_not_valid()


def test_write_to_content() -> None:
    """One node becomes the content, as XML (testWriteToContent); one CONTENT_MODIFIED."""
    runner = evaluate(destination="flowfile-content", **{"p": "/*:bundle/node/subNode[1]"})
    runner.assert_all_flowfiles_transferred("matched", 1)
    out = runner.flowfiles_for("matched")[0]
    assert out.content.decode() == (
        "<subNode>\n            <value>Hello</value>\n        </subNode>"
    )
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.CONTENT_MODIFIED) == 1


def test_failure_if_content_matches_multiple_nodes() -> None:
    """A node-set of several nodes is a failure (testFailureIfContentMatchesMultipleNodes)."""
    runner = evaluate(destination="flowfile-content", **{"p": "/*:bundle/node/subNode"})
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(SNIPPET)


def test_write_string_to_content() -> None:
    """Return Type string writes the string value (testWriteStringToContent)."""
    runner = evaluate(
        destination="flowfile-content",
        return_type="string",
        **{"p": "/*:bundle/node/subNode[1]/value/text()"},
    )
    runner.flowfiles_for("matched")[0].assert_content_equals("Hello")


def test_write_node_set_to_attribute() -> None:
    """Return Type nodeset into an attribute: the node as XML (testWriteNodeSetToAttribute)."""
    runner = evaluate(
        destination="flowfile-attribute",
        return_type="nodeset",
        **{"p": "/*:bundle/node/subNode[1]", "t": "//subNode[2]/value/text()"},
    )
    out = runner.flowfiles_for("matched")[0]
    assert out.attributes["p"].startswith("<subNode>")
    assert "Hello" in out.attributes["p"]
    out.assert_attribute_equals("t", "World!")
    types = [e.event_type for e in runner.provenance_events]
    assert types == [ProvenanceEventType.ATTRIBUTES_MODIFIED]


def test_node_set_of_no_node_type_fails() -> None:
    """Return Type nodeset with an expression giving a number is a failure, not a crash."""
    runner = evaluate(destination="flowfile-attribute", return_type="nodeset", n="count(//a)")
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_doctype_rules() -> None:
    """An embedded DOCTYPE passes only with Allow DTD; an external one always fails."""
    props = {"destination": "flowfile-content", "return_type": "string"}
    xpath = {"p": "/*:bundle/node/subNode[1]/value/text()"}
    runner = evaluate(EMBEDDED_DOCTYPE, allow_dtd="true", **props, **xpath)
    runner.flowfiles_for("matched")[0].assert_content_equals("Hello")
    evaluate(
        EMBEDDED_DOCTYPE, allow_dtd="false", **props, **xpath
    ).assert_all_flowfiles_transferred("failure", 1)
    evaluate(EXTERNAL_DOCTYPE, **props, **xpath).assert_all_flowfiles_transferred("failure", 1)
    evaluate(EXTERNAL_DOCTYPE, allow_dtd="true", **props, **xpath).assert_all_flowfiles_transferred(
        "failure", 1
    )
    legacy = EvaluateXPath(**{"Validate DTD": "true"}, **props, **xpath)
    assert legacy.effective_value(EvaluateXPath.VALIDATE_DTD) == "true"


def test_not_xml_fails() -> None:
    """Content that is not well-formed XML goes to failure unchanged."""
    runner = evaluate(b"<a><b></a>", destination="flowfile-attribute", x="/a")
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(b"<a><b></a>")


def _lol(levels: int) -> str:
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, levels):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * 10}">')
    doctype = f"<!DOCTYPE lolz [{''.join(entities)}]>"
    return f'<?xml version="1.0"?>\n{doctype}\n<lolz>&lol{levels - 1};</lolz>'


@pytest.mark.parametrize("allow", ["true", "false"])
def test_billion_laughs_fails_fast(allow: str) -> None:
    """The billion laughs (10**9 'lol's) ends in failure at once, with or without Allow DTD."""
    began = time.monotonic()
    runner = evaluate(_lol(10), allow_dtd=allow, destination="flowfile-attribute", x="string(/)")
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert time.monotonic() - began < 5


@pytest.mark.parametrize("allow", ["true", "false"])
def test_external_entities_are_never_read(tmp_path: Path, allow: str) -> None:
    """An external entity (XXE) or parameter entity naming a local file fails; nothing is read."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    uri = secret.as_uri()
    for doc in (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "{uri}">]><r>&x;</r>',
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "{uri}"> %p;]><r>a</r>',
        f'<?xml version="1.0"?><!DOCTYPE r SYSTEM "{uri}"><r>a</r>',
    ):
        runner = evaluate(doc, allow_dtd=allow, destination="flowfile-attribute", x="string(/)")
        runner.assert_all_flowfiles_transferred("failure", 1)
        assert "TOP-SECRET" not in str(runner.flowfiles_for("failure")[0].attributes)


def test_many_flowfiles_per_trigger() -> None:
    """Up to 50 FlowFiles per trigger, each evaluated against its own content."""
    runner = TestRunner(EvaluateXPath(destination="flowfile-attribute", v="/r/@v"))
    for index in range(60):
        runner.enqueue(f'<r v="{index}"/>')
    runner.run()
    assert runner.queue_size() == 10
    runner.run()
    values = sorted(int(f.attributes["v"]) for f in runner.flowfiles_for("matched"))
    assert values == list(range(60))


def test_a_nifi_flow_with_xpath_retry_and_log_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A NiFi 2 flow definition (NiFi 1 property names in it) runs: GenerateFlowFile ->
    EvaluateXPath -> RetryFlowFile (looping on retry) -> LogMessage."""
    from flowcore.builder import Flow

    sample = Path(__file__).parent / "samples" / "xpath-retry-log.json"
    flow = Flow.from_nifi(sample)
    flow.validate()
    xpath = flow.resolved_processor(flow.component("Read title"))
    assert xpath.dynamic_properties == {"title": "/book/title", "year": "number(/book/year) + 1"}
    assert xpath.configured["Allow DTD"] == "false"  # NiFi 1's Validate DTD, not an XPath
    retry = flow.resolved_processor(flow.component("Retry twice"))
    assert retry.dynamic_properties == {"gave.up": "${title}"}
    assert retry.configured["Retry Attribute"] == "tries"
    with caplog.at_level(logging.WARNING, logger="flowcore.processors.LogMessage"):
        result = flow.run("direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("Read title", "matched") == 3
    assert result.count("Retry twice", "retry") == 6  # two retries each, then exceeded
    assert result.count("Retry twice", "retries_exceeded") == 3
    assert result.count("Log give-up", "success") == 3
    lines = [r.getMessage() for r in caplog.records if r.name == "flowcore.processors.LogMessage"]
    assert lines == ["books: Dune (1966) gave up"] * 3
    exported = flow.to_nifi()["flowContents"]["processors"]
    assert {p["type"] for p in exported} == {  # exported under NiFi's own classes
        f"org.apache.nifi.processors.standard.{name}"
        for name in ("GenerateFlowFile", "EvaluateXPath", "RetryFlowFile", "LogMessage")
    }


MIXED = [
    b"<r><a>1</a></r>",
    b"<r><a>2</a><a>3</a></r>",
    b"<r><b/></r>",
    b"<r><a>broken",
    b"<!DOCTYPE r [<!ENTITY e 'v'>]><r><a>&e;</a></r>",
    b"<r><a x='y'>4</a></r>",
]


@pytest.mark.parametrize(
    "properties",
    [
        {"destination": "flowfile-attribute", "a": "/r/a", "n": "count(//a)"},
        {"destination": "flowfile-attribute", "return_type": "nodeset", "a": "/r/a"},
        {"destination": "flowfile-content", "a": "/r/a"},
        {"destination": "flowfile-content", "return_type": "string", "a": "/r/a/@x"},
    ],
)
def test_batch_form_agrees_with_one_by_one(properties: dict[str, str]) -> None:
    """The batch form routes, writes and records what one by one does, failures included."""
    runner = TestRunner(EvaluateXPath(**properties), batches=True)
    for content in MIXED:
        runner.enqueue(content, {"a": "old"})
    runner.assert_batch_form_agrees()
