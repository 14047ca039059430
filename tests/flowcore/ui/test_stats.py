"""What the canvas writes on boxes and connections, from a status.json."""

from __future__ import annotations

from flowcore.ui.stats import status_for_ui

FLOW = {
    "name": "f",
    "components": [
        {"id": "a", "name": "a", "state": "STOPPED", "stage": "stage-1"},
        {"id": "b", "name": "b", "state": "DISABLED", "stage": "stage-2"},
    ],
    "connections": [
        {
            "id": "a:success->b",
            "source": "a",
            "destination": "b",
            "relationships": ["success"],
            "back_pressure_object_threshold": 10,
            "back_pressure_data_size_threshold": "1 KB",
        }
    ],
}


def test_fill_is_the_fuller_threshold_and_counts_flow_through() -> None:
    """The fill is the larger of objects and bytes; b's in is what a sent it."""
    status = {
        "flow": "f",
        "live": True,
        "transfers": {"a": {"success": [3, 900]}},
        "stages": {"stage-1": {"runs": 2}},
        "connections": [{"id": "a:success->b", "flowfiles": 3, "bytes": 768}],
    }
    shown = status_for_ui(FLOW, status)
    assert shown["connections"]["a:success->b"]["back_pressure_fill"] == 75.0  # 768 of 1024
    assert shown["processors"]["b"]["in_count"] == 3
    assert shown["processors"]["a"] == {**shown["processors"]["a"], "out_bytes": 900, "tasks": 2}
    assert shown["processors"]["a"]["state"] == "RUNNING"  # live
    assert shown["processors"]["b"]["state"] == "DISABLED"


def test_no_run_and_another_flows_status_show_zeros() -> None:
    """Before any run, or with another flow's status.json, every count is zero."""
    for status in ({}, {"flow": "other", "transfers": {"a": {"success": [3, 9]}}}):
        shown = status_for_ui(FLOW, status)
        assert shown["processors"]["a"]["out_count"] == 0
        assert shown["connections"]["a:success->b"]["queued_count"] == 0
        assert shown["processors"]["a"]["state"] == "STOPPED"


def test_a_fan_out_splits_the_clones_between_its_connections() -> None:
    """Two connections on one relationship each carried half of what it counted (the clones)."""
    flow = {
        "name": "f",
        "components": [
            {"id": n, "name": n, "state": "STOPPED", "stage": None} for n in ("a", "b", "c")
        ],
        "connections": [
            {
                "id": f"a:success->{d}",
                "source": "a",
                "destination": d,
                "relationships": ["success"],
                "back_pressure_object_threshold": 0,
                "back_pressure_data_size_threshold": None,
            }
            for d in ("b", "c")
        ],
    }
    shown = status_for_ui(flow, {"flow": "f", "transfers": {"a": {"success": [12, 94]}}})
    assert shown["processors"]["a"]["out_count"] == 12
    assert (shown["processors"]["b"]["in_count"], shown["processors"]["b"]["in_bytes"]) == (6, 47)
    assert shown["connections"]["a:success->c"]["carried_count"] == 6
