"""Tests for MergeContent's property declarations: NiFi's names, and dependencies that hold."""

from __future__ import annotations

from processors import MergeContent
from processors import _merge_properties as props


def test_every_dependency_names_a_declared_property_and_its_allowable_values() -> None:
    """A dependency points at a MergeContent property, with values that property accepts."""
    by_name = {d.name: d for d in props.PROPERTY_DESCRIPTORS}
    for descriptor in props.PROPERTY_DESCRIPTORS:
        for dependency in descriptor.dependencies:
            target = by_name[dependency.property]
            allowed = {v.value for v in target.allowable_values}
            assert not allowed or set(dependency.values) <= allowed, descriptor.name


def test_the_class_exposes_each_declaration_under_its_own_name_in_nifi_order() -> None:
    """``MergeContent.MERGE_STRATEGY`` and the others are the module's descriptors, in order."""
    assert MergeContent.property_descriptors == props.PROPERTY_DESCRIPTORS
    assert MergeContent.MERGE_STRATEGY is props.MERGE_STRATEGY
    assert [d.name for d in props.PROPERTY_DESCRIPTORS][:4] == [
        "Merge Strategy",
        "Merge Format",
        "Attribute Strategy",
        "Correlation Attribute Name",
    ]
