"""Tests for UpdateAttribute: dynamic properties, deletion, state, validation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import ProcessException
from flowcore.testing import TestRunner
from processors import UpdateAttribute


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


def test_invalid_regex_at_run_time_rolls_back() -> None:
    """A delete expression that evaluates to a bad regex fails the trigger; nothing is lost."""
    runner = TestRunner(UpdateAttribute(**{"Delete Attributes Expression": "${bad}"}))
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
