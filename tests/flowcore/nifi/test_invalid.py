"""Tests for flowcore.nifi.invalid: an imported NiFi flow's invalid processors stay stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from _nifi_json import connection, download, group, processor, with_invalid_processors

from flowcore.builder import Flow
from flowcore.errors import FlowValidationError
from flowcore.nifi.invalid import invalid_processors, stopped_notes
from flowcore.parameters import layered
from processors import SplitText

#: NiFi's reasons for the three invalid processors of ``with_invalid_processors()``.
REASONS = {
    "Split": ("'Line Split Count' is invalid because Line Split Count is required",),
    "Tag": (
        "'day' validated against '${now():format(}' is invalid because invalid Expression "
        "Language at position 15: expected an argument (a quoted string, number, boolean or "
        "${...}) but found '}' (in '${now():format(}')",
    ),
    "Route": (
        "'Relationship unmatched' is invalid because Relationship 'unmatched' is not connected "
        "to any component and is not auto-terminated",
    ),
}


def test_invalid_processors_are_found_with_nifis_reasons() -> None:
    """A missing required property, a broken expression and an unconnected relationship: each
    processor once, with NiFi's 'X' is invalid because ... wording."""
    flow = Flow.from_nifi(with_invalid_processors())
    assert flow.stopped == REASONS
    notes = [str(note) for note in stopped_notes(flow.stopped)]
    assert notes[0] == (
        "Split: is invalid, so it stays stopped, as in NiFi (FlowFiles queued for it wait, "
        "durably, until it is fixed): 'Line Split Count' is invalid because Line Split Count "
        "is required"
    )


def test_the_rest_runs_and_their_input_waits_until_they_are_fixed(tmp_path: Path) -> None:
    """The valid processors run; FlowFiles for the invalid ones stay queued in the repository
    (the run is finished, nothing failed), and a later run of the fixed flow takes them."""
    repository = tmp_path / "repo"
    first = Flow.from_nifi(with_invalid_processors()).run("direct", repository=repository)
    assert first.transfers == {"Generate": {"success": (4, 12)}, "Log": {"success": (1, 3)}}
    assert first.waiting_for_disabled() == {"Split": (1, 3), "Tag": (1, 3), "Route": (1, 3)}
    assert first.finished
    assert not first.failed
    fixed = Flow.from_nifi(with_invalid_processors(fixed=True))
    assert fixed.stopped == {}
    second = fixed.run("direct", repository=repository)
    assert second.transfers["Split"] == {"original": (1, 3), "splits": (2, 2)}
    assert second.transfers["Tag"] == {"success": (1, 3)}
    assert second.transfers["Route"] == {"unmatched": (1, 3)}
    assert second.transfers["Log"] == {"success": (2, 2)}
    assert second.queued == {}


def test_strict_makes_them_validation_errors_all_at_once() -> None:
    """from_nifi(strict=True) leaves nothing stopped: validation reports the three together."""
    flow = Flow.from_nifi(with_invalid_processors(), strict=True)
    assert flow.stopped == {}
    with pytest.raises(FlowValidationError) as raised:
        flow.validate()
    assert [p.subject for p in raised.value.problems] == [
        "SplitText 'Split'",
        "UpdateAttribute 'Tag'",
        "RouteOnAttribute 'Route'",
    ]


def test_the_flow_keeps_them_as_drawn_and_only_the_running_copy_disables_them() -> None:
    """The imported flow is unchanged (an export writes them ENABLED, as NiFi keeps a stopped
    processor); runnable() is a copy with them disabled, and it validates."""
    flow = Flow.from_nifi(with_invalid_processors())
    running = flow.runnable()
    assert running is not flow
    assert not any(c.disabled for c in flow.components)
    assert sorted(c.name for c in running.components if c.disabled) == ["Route", "Split", "Tag"]
    running.validate()
    states = {p["name"]: p["scheduledState"] for p in flow.to_nifi()["flowContents"]["processors"]}
    assert set(states.values()) == {"ENABLED"}
    assert Flow.from_nifi(flow.to_nifi()).same_as(flow)


def test_parameters_decide_what_is_invalid_when_it_is_judged() -> None:
    """A property naming a parameter the flow lacks is invalid; once the parameter is given
    (after the import, as the command line gives it) the processor is valid and runs."""
    put = processor("put", "Write", "PutFile", {"Directory": "#{out}"},
                    autoTerminatedRelationships=["success", "failure"])  # fmt: skip
    gen = processor("gen", "Generate", "GenerateFlowFile")
    link = connection("c1", ("gen", "PROCESSOR", "top"), ("put", "PROCESSOR", "top"), ["success"])
    flow = Flow.from_nifi(download(group("top", "T", processors=[gen, put], connections=[link])))
    [reason] = flow.stopped["Write"]
    assert reason.startswith("'Directory' validated against '#{out}' is invalid because it "
                             "references parameter 'out', which is not defined")  # fmt: skip
    flow.parameters = layered(flow.parameters, values={"out": "/tmp/out"})
    assert flow.stopped == {}
    assert flow.runnable() is flow


def test_a_disabled_processor_is_not_judged() -> None:
    """As on main and in NiFi, a DISABLED processor is not validated, so it is not noted."""
    document = with_invalid_processors()
    document["flowContents"]["processors"][1]["scheduledState"] = "DISABLED"
    assert set(invalid_processors(Flow.from_nifi(document))) == {"Tag", "Route"}


def test_python_flows_still_fail_fast() -> None:
    """A flow built in Python stops nothing: its invalid processor is a validation error."""
    flow = Flow("py")
    flow.add(SplitText(), name="Split")
    assert flow.stopped == {}
    with pytest.raises(FlowValidationError, match="'Line Split Count' is invalid"):
        flow.validate()
