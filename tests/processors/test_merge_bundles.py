"""Tests for MergeContent's bundle helpers: attributes, names and whole fragments."""

from __future__ import annotations

from flowcore.flowfile import FlowFile
from processors._merge_bundles import (
    all_unique_attributes,
    bundle_filename,
    common_attributes,
    defragment_problem,
)


def _flowfile(number: int, **attributes: str) -> FlowFile:
    return FlowFile.create(number, 0, attributes)


def test_common_attributes_keep_only_what_every_flowfile_has_equal() -> None:
    """A key missing from one FlowFile, or different on it, is dropped."""
    flowfiles = [_flowfile(1, a="1", b="2", c="3"), _flowfile(2, a="1", b="x")]
    common = common_attributes(flowfiles)
    assert common["a"] == "1"
    assert "b" not in common
    assert "c" not in common


def test_all_unique_attributes_drop_only_conflicts() -> None:
    """Keys on some FlowFiles are kept; a key seen with two values is dropped."""
    flowfiles = [_flowfile(1, a="1", b="2"), _flowfile(2, a="1", b="x", c="3")]
    unique = all_unique_attributes(flowfiles)
    assert (unique["a"], unique["c"]) == ("1", "3")
    assert "b" not in unique


def test_a_bundle_is_named_after_its_only_flowfile_or_the_original_file() -> None:
    """One FlowFile lends its filename; several use segment.original.filename, or a clock."""
    assert bundle_filename([_flowfile(1, filename="a.log")], ".tar") == "a.log.tar"
    pieces = [_flowfile(n, **{"segment.original.filename": "whole.log"}) for n in (1, 2)]
    assert bundle_filename(pieces, None) == "whole.log"
    assert bundle_filename([_flowfile(1), _flowfile(2)], None).isdigit()


def test_defragment_problems_are_named_in_nifi_order() -> None:
    """Missing index, disagreeing counts, and too few fragments are each reported."""
    whole = [_flowfile(n, **{"fragment.index": str(n), "fragment.count": "2"}) for n in (1, 2)]
    assert defragment_problem(whole) is None
    assert "no integer fragment.index" in str(defragment_problem([_flowfile(1)]))
    odd = [whole[0], _flowfile(2, **{"fragment.index": "2", "fragment.count": "3"})]
    assert "disagree" in str(defragment_problem(odd))
    assert "only 1 of 2" in str(defragment_problem(whole[:1]))
