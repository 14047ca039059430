"""Tests for comparing a batch-form run with a one-by-one run."""

from __future__ import annotations

import attrs

from flowcore.testing._agreement import RunRecord, SeenFlowFile, disagreements

_INPUT = "00000000-0000-4000-8000-000000000001"


def _record(out: str, bundle: str, points_at: str) -> RunRecord:
    """A run that merged the input into *bundle* and sent it on as *out* pointing at it."""
    original = SeenFlowFile(out, {"filename": "a", "merge.uuid": points_at}, b"x")
    merged = SeenFlowFile(bundle, {"filename": "m"}, b"x")
    return RunRecord(
        inputs=(_INPUT,),
        transfers={"original": (original,), "merged": (merged,)},
        events=(),
        queued=(),
        state={},
        counters={},
    )


def test_uuids_compare_by_the_flowfile_they_name() -> None:
    """Two runs that differ only by the uuids they made agree."""
    one = _record(
        _INPUT, "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000a"
    )
    other = _record(
        _INPUT, "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000b"
    )
    assert disagreements(one, other) == []


def test_a_uuid_naming_another_flowfile_is_a_difference() -> None:
    """An attribute that names the input instead of the bundle is reported by FlowFile name."""
    one = _record(
        _INPUT, "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000a"
    )
    other = _record(_INPUT, "00000000-0000-4000-8000-00000000000b", _INPUT)
    assert disagreements(one, other) == [
        "original[0] (a): attribute 'merge.uuid' is '<uuid of merged[0]>' one by one, "
        "'<uuid of queued[0]>' in the batch form"
    ]


def test_flowfiles_dropped_apart_are_a_difference() -> None:
    """Runs that dropped different numbers of FlowFiles on a relationship are told apart."""
    same = _record(_INPUT, _INPUT, _INPUT)
    one = attrs.evolve(same, dropped={"splits": (3, 9)})
    other = attrs.evolve(same, dropped={"splits": (2, 6)})
    assert disagreements(one, attrs.evolve(one)) == []
    assert disagreements(one, other) == [
        "auto-terminated 'splits': 3 FlowFiles (9 B) dropped one by one, "
        "2 FlowFiles (6 B) dropped in the batch form"
    ]
