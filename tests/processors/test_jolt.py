"""Tests for processors._jolt: specs read and parsed as NiFi and Jolt do, transforms built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from processors._jolt import (
    STRATEGIES,
    JoltSpecError,
    TransformCache,
    build_transform,
    parse_spec,
    read_spec_text,
    strip_comments,
)


def test_strip_comments_keeps_strings() -> None:
    """Comment markers inside JSON strings are text; an unclosed block comment is an error."""
    text = '// lead\n{"a": "//x /* y */", /* gone */ "b": "\\"//"} // tail'
    assert json.loads(strip_comments(text)) == {"a": "//x /* y */", "b": '"//'}
    with pytest.raises(JoltSpecError, match="not closed"):
        strip_comments("/* open")


def test_read_spec_text_takes_text_or_a_file(tmp_path: Path) -> None:
    """JSON text is the spec; anything else names a file, and a missing one says 'file'."""
    assert read_spec_text(' [{"operation": "sort"}]') == ' [{"operation": "sort"}]'
    spec = tmp_path / "spec.json"
    spec.write_text('{"a": "b"}')
    assert read_spec_text(str(spec)) == '{"a": "b"}'
    with pytest.raises(JoltSpecError, match="file") as caught:
        read_spec_text(str(tmp_path / "missing.json"))
    assert "missing.json" in str(caught.value)


def test_parse_spec_names_bad_json() -> None:
    """Text that is not JSON is refused with the parser's reason."""
    assert parse_spec('/* c */ {"a": 1}') == {"a": 1}
    with pytest.raises(JoltSpecError, match="not valid JSON"):
        parse_spec("{nope}")


def test_every_strategy_builds() -> None:
    """Each of NiFi's strategies builds from a fitting spec and transforms."""
    specs = {
        "jolt-transform-shift": {"a": "b"},
        "jolt-transform-chain": [{"operation": "shift", "spec": {"a": "b"}}],
        "jolt-transform-default": {"c": 1},
        "jolt-transform-remove": {"a": ""},
        "jolt-transform-card": {"a": "MANY"},
        "jolt-transform-sort": None,
        "jolt-transform-modify-default": {"c": 2},
        "jolt-transform-modify-overwrite": {"a": "=toString"},
        "jolt-transform-modify-define": {"c": 3},
    }
    outputs = {s: build_transform(s, spec).apply({"a": 1}) for s, spec in specs.items()}
    assert outputs["jolt-transform-shift"] == {"b": 1}
    assert outputs["jolt-transform-chain"] == {"b": 1}
    assert outputs["jolt-transform-default"] == {"a": 1, "c": 1}
    assert outputs["jolt-transform-remove"] == {}
    assert outputs["jolt-transform-card"] == {"a": [1]}
    assert outputs["jolt-transform-modify-overwrite"] == {"a": "1"}
    assert set(specs) | {"jolt-transform-custom"} == set(STRATEGIES)


def test_bad_specs_say_why() -> None:
    """A chain that is no list, an unknown operation or strategy, a missing custom class."""
    with pytest.raises(JoltSpecError, match="non-empty JSON array"):
        build_transform("jolt-transform-chain", {"a": "b"})
    with pytest.raises(JoltSpecError, match="unknown operation 'spin'"):
        build_transform("jolt-transform-chain", [{"operation": "spin"}])
    with pytest.raises(JoltSpecError, match="unknown Jolt Transform"):
        build_transform("jolt-transform-nope", {})
    with pytest.raises(JoltSpecError, match="custom transformation class should be provided"):
        build_transform("jolt-transform-custom", {})
    with pytest.raises(JoltSpecError, match="not an importable Python class"):
        build_transform("jolt-transform-custom", {}, custom_class="com.example.Nope")
    with pytest.raises(JoltSpecError):
        build_transform("jolt-transform-shift", [1, 2])


def test_transform_cache_is_lru() -> None:
    """The least recently used transform goes first; a hit is not rebuilt."""
    cache = TransformCache(2)
    built: list[str] = []

    def make(key: str):
        def build():
            built.append(key)
            return build_transform("jolt-transform-shift", {"a": key})

        return build

    for key in ("x", "y", "x", "z", "x", "y"):
        cache.get(key, make(key))
    assert built == ["x", "y", "z", "y"]
