"""Tests for UpdateAttribute: dynamic properties, deletion, state, validation, advanced rules.

The batch form (whole batches, and its agreement with one by one, in the harness and the
engine) is in test_update_attribute_batches.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import ProcessException
from flowcore.testing import TestRunner
from processors import UpdateAttribute
from processors.update_attribute import Rule
from tests.processors._update_attribute import BIG, HUGE, rules_runner


def test_dynamic_properties_set_attributes_from_the_incoming_flowfile() -> None:
    """Each value is evaluated against the incoming attributes, not values set in this trigger."""
    runner = TestRunner(UpdateAttribute(**{"sum": "${one:plus(${two})}", "one": "10"}))
    runner.enqueue(b"", {"one": "1", "two": "2"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("sum", "3")
    out.assert_attribute_equals("one", "10")


def test_missing_attribute_renders_empty() -> None:
    """A missing attribute is null and renders as nothing."""
    runner = TestRunner(UpdateAttribute(**{"x": "${default.attr}-more-stuff"}))
    runner.enqueue(b"")
    runner.run()
    runner.flowfiles_for("success")[0].assert_attribute_equals("x", "-more-stuff")


def test_delete_is_a_full_match_and_wins() -> None:
    """Delete Attributes Expression full-matches incoming names and beats updates."""
    runner = TestRunner(
        UpdateAttribute(**{"Delete Attributes Expression": "attribute.2", "attribute.2": "set"})
    )
    runner.enqueue(b"", {"attribute.2": "a", "attributex2": "b", "attribute.22": "c"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_not_exists("attribute.2")
    out.assert_attribute_not_exists("attributex2")
    out.assert_attribute_equals("attribute.22", "c")


def test_newly_added_attributes_are_not_deleted() -> None:
    """An attribute absent on input but set here survives a matching delete expression."""
    runner = TestRunner(
        UpdateAttribute(**{"Delete Attributes Expression": "new.*", "new.one": "v"})
    )
    runner.enqueue(b"")
    runner.run()
    runner.flowfiles_for("success")[0].assert_attribute_equals("new.one", "v")


def test_delete_expression_with_el() -> None:
    """The delete expression may be built with EL."""
    expression = (
        r"${literal('(attribute\.'):append(${literal('[2-5]')}):append(${literal('|sample.*)')})}"
    )
    runner = TestRunner(UpdateAttribute(**{"Delete Attributes Expression": expression}))
    runner.enqueue(b"", {"attribute.1": "1", "attribute.3": "3", "sample.x": "s", "other": "o"})
    runner.run()
    assert set(runner.flowfiles_for("success")[0].attributes) == {
        "attribute.1",
        "other",
        "filename",
        "path",
        "uuid",
    }


@pytest.mark.parametrize("batches", [False, True])
def test_invalid_regex_at_run_time_rolls_back(batches: bool) -> None:
    """A delete expression that evaluates to a bad regex fails the trigger; nothing is lost
    (a batch declines and its FlowFiles fail one by one)."""
    runner = TestRunner(
        UpdateAttribute(**{"Delete Attributes Expression": "${bad}"}), batches=batches
    )
    runner.enqueue(b"", {"bad": "("})
    with pytest.raises(ProcessException, match="invalid regex"):
        runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.queue_size() == 1


def test_validation() -> None:
    """Bad regexes, malformed EL and missing initial state values are invalid."""
    assert not UpdateAttribute(**{"Delete Attributes Expression": "("}).is_valid()
    assert not UpdateAttribute(**{"x": "${UUID(}"}).is_valid()
    stateful = UpdateAttribute(**{"Store State": "Store state locally"})
    assert any("Stateful Variables Initial Value" in str(p) for p in stateful.validate())
    stateful.set_property("Stateful Variables Initial Value", "")
    assert stateful.is_valid()
    assert UpdateAttribute(**{"empty": ""}).is_valid()


def test_stored_state_counts_across_triggers() -> None:
    """With state, getStateValue reads the previous trigger's value and the state is updated."""
    runner = TestRunner(
        UpdateAttribute(
            **{
                "Store State": "Store state locally",
                "Stateful Variables Initial Value": "0",
                "count": "${getStateValue('count'):plus(1)}",
                "sum": "${getStateValue('sum'):plus(${pencils})}",
            }
        )
    )
    for pencils in ("2", "3"):
        runner.enqueue(b"", {"pencils": pencils})
    runner.run(2)
    outs = runner.flowfiles_for("success")
    assert [o.attributes["count"] for o in outs] == ["1", "2"]
    assert [o.attributes["sum"] for o in outs] == ["2", "5"]
    assert runner.state == {"count": "2", "sum": "5"}
    assert "set state fail" in runner.processor.relationship_names()


def test_state_is_initialised_when_scheduled() -> None:
    """Scheduling with Store State gives every variable its initial value."""
    runner = TestRunner(
        UpdateAttribute(
            **{
                "Store State": "Store state locally",
                "Stateful Variables Initial Value": "0",
                "v": "1",
            }
        )
    )
    runner.run()
    assert runner.state == {"v": "0"}


@given(
    st.binary(max_size=64),
    st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), st.text(max_size=5)),
)
def test_content_is_never_changed(content: bytes, attributes: dict[str, str]) -> None:
    """Whatever it sets or deletes, UpdateAttribute leaves content untouched."""
    runner = TestRunner(
        UpdateAttribute(**{"k": "${filename:toUpper()}", "Delete Attributes Expression": "[a-c].*"})
    )
    runner.enqueue(content, attributes)
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(content)


# --- advanced rules ----------------------------------------------------------------------------


def test_no_matching_rule_applies_defaults_only() -> None:
    """Without a match the defaults apply alone and no matchedRule is written."""
    runner = rules_runner(**{"class": "small"})
    runner.enqueue(b"", {"size": "5"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals("class", "small")
    out.assert_attribute_not_exists("UpdateAttribute.matchedRule")


def test_use_clone_gives_one_flowfile_per_matching_rule() -> None:
    """USE_CLONE: the first match updates the input, each further match a clone taken before."""
    runner = rules_runner(**{"class": "small", "seen": "yes"})
    queued = runner.enqueue(b"data", {"size": "500"})
    runner.run()
    first, second = runner.flowfiles_for("success")
    assert first.uuid == queued.uuid
    expected = {"class": "big", "tag": "B", "seen": "yes", "UpdateAttribute.matchedRule": "big"}
    assert {k: first.attributes.get(k) for k in expected} == expected
    second.assert_attribute_equals("class", "huge")
    second.assert_attribute_equals("seen", "yes")
    second.assert_attribute_not_exists("tag")  # cloned before big's actions applied
    second.assert_attribute_equals("UpdateAttribute.matchedRule", "huge")
    second.assert_content_equals("data")
    assert [e.event_type.value for e in runner.provenance_events].count("CLONE") == 1


def test_use_original_applies_every_match_in_order() -> None:
    """USE_ORIGINAL: one FlowFile, later rules beat earlier ones, matchedRule is the last."""
    runner = rules_runner("USE_ORIGINAL", **{"class": "small"})
    runner.enqueue(b"", {"size": "500"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals("class", "huge")
    out.assert_attribute_equals("tag", "B")
    out.assert_attribute_equals("UpdateAttribute.matchedRule", "huge")


def test_conditions_are_anded_and_values_see_the_incoming_flowfile() -> None:
    """All conditions must hold; action values read incoming attributes, not new ones."""
    both = Rule(
        name="both",
        conditions=["${a:equals('1')}", "${b:equals('2')}"],
        actions={"a": "changed", "copy": "${a}"},
    )
    runner = TestRunner(UpdateAttribute(rules=[both]))
    runner.enqueue(b"", {"a": "1", "b": "2"})
    runner.enqueue(b"", {"a": "1", "b": "3"})
    runner.run(2)
    matched, unmatched = runner.flowfiles_for("success")
    matched.assert_attribute_equals("a", "changed")
    matched.assert_attribute_equals("copy", "1")
    unmatched.assert_attribute_equals("a", "1")


def test_rule_delete_expression_overrides_the_property() -> None:
    """A rule action on Delete Attributes Expression replaces the property for its FlowFile."""
    rule = Rule(
        name="strip",
        conditions=["${strip:equals('yes')}"],
        actions={"Delete Attributes Expression": "tmp\\..*"},
    )
    runner = TestRunner(UpdateAttribute(rules=[rule], **{"Delete Attributes Expression": "other"}))
    runner.enqueue(b"", {"strip": "yes", "tmp.a": "1", "other": "2"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_not_exists("tmp.a")
    out.assert_attribute_equals("other", "2")


def test_rule_actions_are_stateful_variables() -> None:
    """With state, rule actions write state too (matchedRule excluded) and start initialised."""
    counter = Rule(
        name="count",
        conditions=["${kind:equals('x')}"],
        actions={"xs": "${getStateValue('xs'):plus(1)}"},
    )
    runner = TestRunner(
        UpdateAttribute(
            rules=[counter],
            **{"Store State": "Store state locally", "Stateful Variables Initial Value": "0"},
        )
    )
    for kind in ("x", "y", "x"):
        runner.enqueue(b"", {"kind": kind})
    runner.run(3)
    assert runner.state == {"xs": "2"}


def test_rule_validation() -> None:
    """Blank names, non-boolean conditions and malformed action values are invalid."""
    problems = UpdateAttribute(
        rules=[
            Rule(name=" ", conditions=["${a:equals('b')}"]),
            Rule(name="r", conditions=["${a}"]),
            Rule(name="s", conditions=["not an expression"]),
            Rule(name="t", actions={"x": "${UUID(}"}),
        ]
    ).validate()
    assert len(problems) == 4
    assert not UpdateAttribute(flowfile_policy="USE_BOTH").is_valid()
    with pytest.raises(ValueError, match="Rule values"):
        UpdateAttribute(rules=["not a rule"])  # type: ignore[list-item]


def test_processor_with_rules_pickles() -> None:
    """Rules travel with the processor when Spark pickles it."""
    import pickle

    processor = UpdateAttribute(rules=[BIG, HUGE], flowfile_policy="USE_ORIGINAL", x="1")
    assert pickle.loads(pickle.dumps(processor)).same_configuration(processor)


class _TwoConnections(TestRunner):
    """A harness whose ``success`` has two connections (the framework fans out a clone)."""

    def destinations(self, relationship: str) -> int:
        return 2 if relationship == "success" else 0


def test_fan_out_records_nifis_attributes_modified_then_clone() -> None:
    """success on two connections: NiFi records the reported ATTRIBUTES_MODIFIED, then CLONE."""
    runner = _TwoConnections(UpdateAttribute(tag="yes"))
    runner.enqueue(b"x", {"a": "1"})
    runner.run()
    clone, updated = runner.flowfiles_for("success")
    events = runner.provenance_events
    assert [e.event_type.value for e in events] == ["ATTRIBUTES_MODIFIED", "CLONE"]
    assert {e.flowfile_uuid for e in events} == {updated.uuid}
    assert list(events[1].child_uuids) == [clone.uuid]
    assert all(dict(e.updated_attributes) == {"tag": "yes"} for e in events)


@pytest.mark.parametrize("properties", [{}, {"same": "${same}"}, {"tag": "yes"}])
def test_each_flowfile_sent_gets_an_attributes_modified_event_changed_or_not(
    properties: dict[str, str],
) -> None:
    """NiFi's UpdateAttribute reports modifyAttributes for every FlowFile it sends to success,
    whether or not an attribute changed (none set, or set to its value); the batch form records
    the same events as one run."""
    runner = TestRunner(UpdateAttribute(**properties))
    runner.enqueue(b"x", {"same": "1"})
    runner.enqueue(b"y", {"same": "2"})
    runner.assert_batch_form_agrees()
    events = runner.provenance_events
    assert [e.event_type.value for e in events] == ["ATTRIBUTES_MODIFIED"] * 2
    assert [e.flowfile_uuid for e in events] == [f.uuid for f in runner.flowfiles_for("success")]
    expected = {"tag": "yes"} if "tag" in properties else {}
    assert all(dict(e.updated_attributes) == expected for e in events)
