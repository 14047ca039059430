"""Tests for the RecordPath syntax tree: printing back to text (quoting, escapes, forms)."""

from __future__ import annotations

import pickle

import pytest

from flowcore.record_path import parse, to_text
from flowcore.record_path._nodes import ROOT, Child, Indices, Literal, MapKeys, Path, Range

PRINTED = [
    (Path(ROOT), "/"),
    (Path(ROOT, (Child("name"),)), "/name"),
    (Path(ROOT, (Child("full name"),)), "/'full name'"),
    (Path(ROOT, (Child("0abc"),)), "/'0abc'"),
    (Path(ROOT, (Child("it's"),)), "/'it\\'s'"),
    (Path(ROOT, (Child(""),)), "/''"),
    (Path(ROOT, (Child(None),)), "/*"),
    (Path(ROOT, (Child("a"), Indices((1, Range(2, -1))))), "/a[1, 2..-1]"),
    (Path(ROOT, (Child("m"), MapKeys(("a\tb", "c")))), "/m['a\\tb', 'c']"),
    (Literal("line\nbreak"), "'line\\nbreak'"),
    (Literal(-42), "-42"),
]


@pytest.mark.parametrize(("tree", "text"), PRINTED, ids=[t for _, t in PRINTED])
def test_to_text(tree: object, text: str) -> None:
    """Trees print as NiFi writes paths, quoting names the lexer would not read raw."""
    assert to_text(tree) == text
    assert parse(text) == tree


def test_single_index_versus_list() -> None:
    """``[0]`` is one plain index (NiFi's ArrayIndexPath); ``[0..0]`` and ``[0, 1]`` are not."""
    assert parse("/a[0]").steps[1].single
    assert not parse("/a[0..0]").steps[1].single
    assert not parse("/a[0, 1]").steps[1].single


def test_trees_are_frozen_and_picklable() -> None:
    """Trees are frozen values: hashable, comparable and picklable."""
    tree = parse("/a[./b = 'x']/c")
    assert pickle.loads(pickle.dumps(tree)) == tree
    assert hash(tree) == hash(parse("/a[./b = 'x']/c"))
    with pytest.raises(AttributeError):
        tree.start = "current"  # type: ignore[misc]


def test_not_a_node_is_a_type_error() -> None:
    """to_text of something that is not a tree is a TypeError naming it."""
    with pytest.raises(TypeError, match="not a RecordPath node"):
        to_text("/a")  # type: ignore[arg-type]
