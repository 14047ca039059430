"""Tests for the packaging layouts shared by MergeContent and UnpackContent."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from processors._packaging import (
    PackagingError,
    contained,
    flowfile_stream_header,
    properties_xml,
    read_flowfile_stream,
    read_properties_xml,
)

_ATTRIBUTES = st.dictionaries(st.text(min_size=1), st.text(), min_size=1, max_size=5)


@given(
    st.lists(st.tuples(_ATTRIBUTES, st.binary(max_size=300)), max_size=4), st.sampled_from([2, 3])
)
def test_stream_round_trip(flowfiles: list[tuple[dict[str, str], bytes]], version: int) -> None:
    """What the header writer packs, the reader gives back: attributes and content."""
    package = b"".join(
        flowfile_stream_header(a, len(c), magic=version == 3) + c for a, c in flowfiles
    )
    read = [
        (p.attributes, p.content.read())
        for p in read_flowfile_stream(io.BytesIO(package), version=version)
    ]
    assert read == flowfiles


def test_unread_content_is_skipped() -> None:
    """A consumer that leaves an entry's content unread still gets the next entry."""
    package = b"".join(
        flowfile_stream_header({"n": str(i)}, 3, magic=True) + b"abc" for i in range(2)
    )
    assert [p.attributes["n"] for p in read_flowfile_stream(io.BytesIO(package), version=3)] == [
        "0",
        "1",
    ]


def test_a_huge_declared_length_costs_only_the_bytes_present() -> None:
    """A 2 GiB string length with 3 bytes behind it is a PackagingError, not an allocation."""
    hostile = b"NiFiFF3" + b"\x00\x01" + b"\xff\xff\x7f\xff\xff\xff" + b"abc"
    with pytest.raises(PackagingError, match="ends inside"):
        list(read_flowfile_stream(io.BytesIO(hostile), version=3))


def test_zero_attributes_and_bad_magic_are_refused() -> None:
    """NiFi's rules: no FlowFile has zero attributes; v3 needs its magic."""
    with pytest.raises(PackagingError, match="no attributes"):
        list(read_flowfile_stream(io.BytesIO(b"NiFiFF3\0\0" + bytes(8)), version=3))
    with pytest.raises(PackagingError, match="NiFiFF3"):
        list(read_flowfile_stream(io.BytesIO(b"NiFiFF2\0\1"), version=3))


@given(_ATTRIBUTES)
def test_properties_xml_round_trip(attributes: dict[str, str]) -> None:
    """FlowFile Tar v1's attributes document reads back (XML-safe text)."""
    safe = {k: v for k, v in attributes.items() if all(c.isprintable() for c in k + v)}
    assert read_properties_xml(properties_xml(safe)) == safe


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", "etc/passwd"),
        ("/abs/x", "abs/x"),
        ("a\\..\\..\\b", "b"),
        ("C:x", "Cx"),
        ("..", ""),
    ],
)
def test_contained_names(name: str, expected: str) -> None:
    """Names never climb above the extraction directory."""
    assert contained(name) == expected
