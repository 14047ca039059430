"""Tests for JsonPath with Jayway's results: definite paths, functions, property merge."""

from __future__ import annotations

import time

import pytest

from flowcore.errors import RegexTimeoutError
from flowcore.patterns import set_time_limit, time_limit
from processors._json_text import read_json_text
from processors._jsonpath import (
    JsonPathEvaluationError,
    PathNotFoundError,
    compile_json_path,
    is_scalar,
)

STORE = {
    "store": {
        "book": [
            {"category": "reference", "author": "Nigel Rees", "price": 8.95},
            {"category": "fiction", "author": "Evelyn Waugh", "price": 12.99},
            {"category": "fiction", "author": "Herman Melville", "isbn": "0-553", "price": 8.99},
            {"category": "fiction", "author": "J. R. R. Tolkien", "isbn": "0-395", "price": 22.99},
        ],
        "bicycle": {"color": "red", "price": 19.95},
    },
    "expensive": 10,
    "numbers": [1, 2, 3, 4],
}


def read(path: str, document: object = STORE) -> object:
    """The path's result in *document*."""
    return compile_json_path(path).read(document)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "$.store.book[*].author",
            ["Nigel Rees", "Evelyn Waugh", "Herman Melville", "J. R. R. Tolkien"],
        ),
        ("$..author", ["Nigel Rees", "Evelyn Waugh", "Herman Melville", "J. R. R. Tolkien"]),
        ("$.store..price", [8.95, 12.99, 8.99, 22.99, 19.95]),
        ("$..book[2].author", ["Herman Melville"]),
        ("$..book[-1].price", [22.99]),
        ("$..book[:2].price", [8.95, 12.99]),
        ("$..book[?(@.isbn)].price", [8.99, 22.99]),
        ("$.store.book[?(@.price < 10)].price", [8.95, 8.99]),
        ("$..book[?(@.price <= $['expensive'])].price", [8.95, 8.99]),
        ("$..book[?(@.author =~ /.*REES/i)].price", [8.95]),
        ("$..book[?(@.category == 'fiction' && @.price > 20)].author", ["J. R. R. Tolkien"]),
        ("$.store.book.[0].author", "Nigel Rees"),  # Jayway's ".[" is accepted
        ("$.store.bicycle.color", "red"),
        ("store.bicycle.color", "red"),  # no "$": from the root, as Jayway
        ("$['store']['bicycle']['color']", "red"),
        ("$..book.length()", 4),
        ("$.numbers.length()", 4),
        ("$.numbers.sum()", 10.0),
        ("$.numbers.avg()", 2.5),
        ("$.numbers.min()", 1.0),
        ("$..price.max()", 22.99),
        ("$.numbers.first()", 1),
        ("$.numbers.index(-1)", 4),
        ("$.store.bicycle.keys()", ["color", "price"]),
        ("$.store.book[0]['author','price']", {"author": "Nigel Rees", "price": 8.95}),
    ],
)
def test_jayway_readme_examples(path: str, expected: object) -> None:
    """Jayway's documented examples give Jayway's results, scalars for definite paths."""
    assert read(path) == expected


def test_definite_paths_that_find_nothing_raise_and_indefinite_ones_give_a_list() -> None:
    """$.a.missing is PathNotFound; $..missing and an empty filter are []."""
    with pytest.raises(PathNotFoundError, match=r"No results for path: \$\.store\.missing"):
        read("$.store.missing")
    with pytest.raises(PathNotFoundError):
        read("$.numbers[9]")
    assert read("$..nothing") == []
    assert read("$.store.book[?(@.price > 100)]") == []
    assert compile_json_path("$.a.b").definite
    assert not compile_json_path("$.a[*]").definite


def test_null_is_a_found_value() -> None:
    """A member whose value is null is found (None), not missing."""
    assert read("$.a", {"a": None}) is None


def test_a_string_document_is_its_own_root() -> None:
    """A document that is a JSON string is a scalar root, not JSON text to parse again."""
    assert read("$", "[1]") == "[1]"
    with pytest.raises(PathNotFoundError):
        read("$.a", "{}")


def test_functions_that_cannot_apply_raise() -> None:
    """An aggregation over no numbers is Jayway's JsonPathException."""
    with pytest.raises(JsonPathEvaluationError, match="empty array"):
        read("$.store.bicycle.sum()")


@pytest.mark.parametrize(
    "bad", ["", "   ", "$..", "$.xyz.", "LoremIpsum []", "$[0]. _id", "$.a | $.b"]
)
def test_invalid_paths_are_refused_in_nifi_s_words(bad: str) -> None:
    """NiFi's validator explanations: empty, or 'specified expression was not valid'."""
    with pytest.raises(ValueError, match=r"cannot be empty|specified expression was not valid"):
        compile_json_path(bad)


def test_scalars_are_anything_but_objects_and_arrays() -> None:
    """Jayway's isJsonScalar."""
    assert all(is_scalar(v) for v in (None, 1, 1.5, "x", True))
    assert not any(is_scalar(v) for v in ({}, []))


def test_a_hostile_regex_is_stopped_by_the_time_limit() -> None:
    """=~ runs under flowcore's regex time limit, naming the pattern."""
    before = time_limit()
    set_time_limit(0.2)
    try:
        started = time.monotonic()
        with pytest.raises(RegexTimeoutError):
            read("$.a[?(@ =~ /(a|aa)+$/)]", {"a": ["a" * 40 + "!"]})
        assert time.monotonic() - started < 10
    finally:
        set_time_limit(before)


def test_a_deep_scan_walks_a_document_nested_past_the_library_s_100_levels() -> None:
    """$..a over JSON nested 150 (and 1,024) deep finds every level, in document order."""
    for depth in (150, 1_024):
        document = read_json_text('{"a":' * depth + "1" + "}" * depth)
        found = compile_json_path("$..a").read(document)
        assert len(found) == depth
        assert found[-1] == 1
        assert found[0] == document["a"]
