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
    """The fill is the larger of objects and bytes; b's in is what a sent it; task time as
    NiFi writes it."""
    status = {
        "flow": "f",
        "live": True,
        "transfers": {"a": {"success": [3, 900]}},
        "stages": {"stage-1": {"runs": 2}},
        "tasks_duration_nanos": {"a": 3_723_456_789_000},
        "connections": [{"id": "a:success->b", "flowfiles": 3, "bytes": 768}],
    }
    shown = status_for_ui(FLOW, status)
    assert shown["connections"]["a:success->b"]["back_pressure_fill"] == 75.0  # 768 of 1024
    assert shown["processors"]["b"]["in_count"] == 3
    assert shown["processors"]["a"] == {**shown["processors"]["a"], "out_bytes": 900, "tasks": 2}
    assert shown["processors"]["a"]["state"] == "RUNNING"  # live
    # NiFi's Tasks/Time: 1 h 2 min 3.456789 s, the milliseconds cut
    assert shown["processors"]["a"]["tasks_duration_nanos"] == 3_723_456_789_000
    assert shown["processors"]["a"]["tasks_duration"] == "01:02:03.456"
    assert shown["processors"]["b"]["tasks_duration"] == "00:00:00.000"
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


class _NoProvenance:
    @property
    def provenance(self) -> object:
        from flowcore.ui.reading import UnknownItemError

        msg = "no provenance"
        raise UnknownItemError(msg)


def _shown(updated: int, started: int, count: int, ended: int | None = None) -> dict:
    status = {
        "flow": "f",
        "updated": updated,
        "run": {"pid": 7, "started": started, "ended": ended},
        "transfers": {"a": {"success": [count, count * 10]}},
        "stages": {"stage-1": {"runs": count}},
        "tasks_duration_nanos": {"a": count * 1_000_000, "b": count * 2_000_000},
    }
    return status_for_ui(FLOW, status)


def test_the_five_minute_window_is_now_less_five_minutes_ago() -> None:
    """A run older than five minutes: the window counts what came since the snapshot from
    five minutes ago (task time too); a run that started within it counts whole; one that
    ended before, zero."""
    from flowcore.ui.stats import WINDOW_MS, FiveMinuteWindow

    minute = WINDOW_MS // 5
    window = FiveMinuteWindow()
    view = _NoProvenance()
    window.apply(_shown(1 * minute, 0, 10), view, now=1 * minute)
    window.apply(_shown(2 * minute, 0, 30), view, now=2 * minute)
    later = window.apply(_shown(7 * minute, 0, 100), view, now=7 * minute)
    assert later["processors"]["a"]["window"]["out_count"] == 70  # 100 now, 30 at minute 2
    assert later["processors"]["a"]["window"]["tasks"] == 70
    assert later["processors"]["b"]["window"]["tasks_duration_nanos"] == 140_000_000
    assert later["processors"]["b"]["window"]["tasks_duration"] == "00:00:00.140"
    assert later["processors"]["b"]["tasks_duration"] == "00:00:00.200"  # the run's
    assert later["processors"]["b"]["window"]["in_count"] == 70
    assert later["five_minutes"]["complete"] is True
    fresh = FiveMinuteWindow().apply(_shown(7 * minute, 6 * minute, 5), view, now=7 * minute)
    assert fresh["processors"]["a"]["window"]["out_count"] == 5  # the whole run
    over = _shown(20 * minute, 0, 9, ended=10 * minute)
    ended = FiveMinuteWindow().apply(over, view, now=20 * minute)
    assert ended["processors"]["a"]["window"]["out_count"] == 0
    assert ended["processors"]["a"]["window"]["tasks_duration_nanos"] == 0
    late = FiveMinuteWindow().apply(_shown(9 * minute, 0, 50), view, now=9 * minute)
    assert late["processors"]["a"]["window"]["out_count"] == 0  # no older snapshot: from now
    assert late["five_minutes"] == {**late["five_minutes"], "start": 9 * minute, "complete": False}


def test_bytes_read_and_written_come_from_the_windows_provenance(ran) -> None:
    """The real run's events: get wrote the four files it received (53 bytes), split read
    them (its FORKs); events older than the window count nothing."""
    from flowcore.ui.reading import RepositoryView
    from flowcore.ui.stats import WINDOW_MS, FiveMinuteWindow

    view = RepositoryView(ran.repository)
    try:
        last = max(e.event_time for e in view.events(limit=10_000))
        io, truncated = FiveMinuteWindow()._read_written(view, last + 1_000)
        assert truncated is False
        assert io["get"][1] == 53  # written: RECEIVE
        assert io["split"][0] == 53  # read: FORK of each file
        late, _ = FiveMinuteWindow()._read_written(view, last + WINDOW_MS + 1_000)
        assert late == {}
    finally:
        view.close()


def test_folded_runs_are_unfolded_for_their_sizes_within_a_limit(tmp_path, monkeypatch) -> None:
    """1,000 CREATEs of neighbouring FlowFiles stored as one run: each one's own size counts;
    past MAX_EVENTS the window says it is truncated."""
    import argparse

    import attrs
    from sqlalchemy import func, select

    from flowcore.ui import stats
    from repositories._provenance_schema import EVENTS
    from repositories.provenance import SqlProvenanceRepository
    from tests.repositories.test_provenance_runs import canonical, created

    repository = SqlProvenanceRepository(tmp_path / "p.db")
    try:
        events = [attrs.evolve(created(canonical(0, i)), file_size=i) for i in range(1_000)]
        repository.register(events)
        with repository.engine.connect() as connection:
            assert connection.execute(select(func.count()).select_from(EVENTS)).scalar() == 1
        view = argparse.Namespace(provenance=repository)
        io, truncated = stats.FiveMinuteWindow()._read_written(view, 60_000)
        assert io == {"gen-1": [0, sum(range(1_000))]}
        assert truncated is False
        monkeypatch.setattr(stats, "MAX_EVENTS", 999)
        assert stats.FiveMinuteWindow()._read_written(view, 60_000) == ({}, True)
    finally:
        repository.close()
