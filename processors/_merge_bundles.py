"""MergeContent's bundles: the merged FlowFile's attributes and name, and whole fragments.

Functions of the FlowFiles in a bin, shared by the one-by-one merge (``merge_content``) and the
merge of batch cuts (``_merge_batches``), which passes FlowFiles standing for its batches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from flowcore.flowfile import FlowFile
from flowcore.processor.binning import FRAGMENT_COUNT, FRAGMENT_INDEX

__all__ = [
    "FRAGMENT_ID",
    "SEGMENT_ORIGINAL_FILENAME",
    "all_unique_attributes",
    "bundle_filename",
    "common_attributes",
    "defragment_problem",
]

FRAGMENT_ID = "fragment.identifier"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"
_INDEX = re.compile(r"\d+")


def common_attributes(flowfiles: Sequence[FlowFile]) -> dict[str, str]:
    """Keep Only Common Attributes: the first's attributes that every FlowFile has equal."""
    first = flowfiles[0].attributes
    return {
        key: value
        for key, value in first.items()
        if all(f.attributes.get(key) == value for f in flowfiles[1:])
    }


def all_unique_attributes(flowfiles: Sequence[FlowFile]) -> dict[str, str]:
    """Keep All Unique Attributes: the union, dropping keys seen with two different values."""
    result: dict[str, str] = {}
    conflicting: set[str] = set()
    for flowfile in flowfiles:
        for key, value in flowfile.attributes.items():
            if key in conflicting:
                continue
            if key in result and result[key] != value:
                conflicting.add(key)
                del result[key]
            else:
                result[key] = value
    return result


def bundle_filename(contents: Sequence[FlowFile], suffix: str | None) -> str:
    if len(contents) == 1:
        name = contents[0].attributes.get("filename", "")
    else:
        name = contents[0].attributes.get(SEGMENT_ORIGINAL_FILENAME) or _bundle_number(contents)
    return name + (suffix or "")


def _bundle_number(contents: Sequence[FlowFile]) -> str:
    """A bundle's default name: a number, as NiFi's (there ``System.nanoTime()``).

    Derived from the bundled FlowFiles rather than the clock, so the same bin merged again
    (a task attempt replayed after a crash) gets the same name.
    """
    digest = hashlib.blake2b(digest_size=8)
    for flowfile in contents:
        digest.update(flowfile.uuid.encode())
    return str(int.from_bytes(digest.digest(), "big") >> 1)


def defragment_problem(contents: Sequence[FlowFile]) -> str | None:
    """The first Defragment validation failure (reference §2.7), in NiFi's order."""
    for flowfile in contents:
        if not _INDEX.fullmatch(flowfile.attributes.get(FRAGMENT_INDEX) or ""):
            return f"{flowfile} has no integer {FRAGMENT_INDEX}"
    counts: set[str] = set()
    for flowfile in contents:
        value = flowfile.attributes.get(FRAGMENT_COUNT)
        if value is None:
            continue
        if not _INDEX.fullmatch(value):
            return f"{flowfile} has a {FRAGMENT_COUNT} that is not an integer: {value!r}"
        counts.add(value)
    if len(counts) > 1:
        return f"the fragments disagree on {FRAGMENT_COUNT}: {sorted(counts)!r}"
    if not counts:
        return f"no fragment carries {FRAGMENT_COUNT}"
    expected = int(counts.pop())
    if len(contents) < expected:
        return f"only {len(contents)} of {expected} fragments arrived"
    if len(contents) > expected:
        return f"{len(contents)} fragments arrived but {FRAGMENT_COUNT} is {expected}"
    return None
