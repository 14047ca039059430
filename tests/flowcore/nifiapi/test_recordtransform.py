"""Tests for nifiapi.recordtransform: NiFi's RecordTransform API classes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nifiapi.recordtransform import CachingAttributeMap, RecordTransform, RecordTransformResult


class _Counting:
    """An attribute map that counts lookups."""

    def __init__(self) -> None:
        self.lookups = 0

    def getAttribute(self, name: str) -> str:
        self.lookups += 1
        return name.upper()

    def getAttributes(self) -> dict[str, str]:
        return {"a": "A"}


class _Tag(RecordTransform):
    def transform(
        self, context: Any, record: dict[str, Any], schema: Any, attributemap: Any
    ) -> RecordTransformResult:
        record["tag"] = attributemap.getAttribute("x")
        return RecordTransformResult(record, relationship="tagged", partition={"p": 1})


def test_result_defaults_and_getters() -> None:
    """success, no schema, no partition unless given; getters return what was given."""
    result = RecordTransformResult({"a": 1})
    assert (result.getRecord(), result.getSchema(), result.getRelationship()) == (
        {"a": 1},
        None,
        "success",
    )
    assert result.getPartition() is None
    assert RecordTransformResult().getRecord() is None


def test_caching_attribute_map_looks_each_name_up_once() -> None:
    """NiFi's CachingAttributeMap asks its delegate once per name."""
    delegate = _Counting()
    attributes = CachingAttributeMap(delegate)
    assert [attributes.getAttribute("x"), attributes.getAttribute("x")] == ["X", "X"]
    assert delegate.lookups == 1
    assert attributes.getAttributes() == {"a": "A"}


def test_transform_record_runs_transform_per_record_of_a_json_array() -> None:
    """transformRecord (NiFi's bridge entry point) parses the array and transforms each."""
    transform = _Tag()
    transform.setContext("context")
    results = transform.transformRecord(json.dumps([{"n": 1}, {"n": 2}]), None, _Counting())
    assert [r.getRecord() for r in results] == [{"n": 1, "tag": "X"}, {"n": 2, "tag": "X"}]
    assert {r.getRelationship() for r in results} == {"tagged"}


def test_the_base_class_is_abstract() -> None:
    """transform must be implemented, as in NiFi."""
    with pytest.raises(TypeError):
        RecordTransform()  # type: ignore[abstract]
