"""Tests for the provenance queries over batch runs: a flow run on columnar batches and the same
flow forced one FlowFile at a time give the same answer to every search (each searchable field,
alone and combined, time ranges and limits) and the same lineage.

The two runs' uuids, ids and times differ; tests/repositories/_batch_runs.py pairs their
FlowFiles by lineage and compares events field by field.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore.clock import now_ms
from tests.repositories._batch_runs import (
    all_events,
    canonical_all,
    in_kind_order,
    opened,
    run_both,
    uuid_map,
    write_inputs,
)

_LINE = st.text(st.sampled_from("ab 5"), max_size=6).map(str.encode)
_FILES = st.lists(st.lists(_LINE, min_size=1, max_size=12), min_size=1, max_size=4)


def _queries(events: list, pairs: Mapping[str, str], since: int) -> list[tuple[dict, dict]]:
    """Each search of the batch run with its twin of the one-by-one run."""
    same: list[dict[str, Any]] = [
        {},
        {"start": since},
        {"end": since - 1},
        {"attributes": {"group": "0"}},  # indexed
        {"attributes": {"source": "PART0.LOG"}},  # matched on the stored maps
        {"attributes": {"group": "1", "source": "PART3.LOG"}, "event_type": "ROUTE"},
        {"event_type": "DROP", "start": since},
    ]
    same += [{"event_type": kind} for kind in sorted({e.event_type.value for e in events})]
    same += [{"filename": name} for name in sorted({e.filename for e in events} - {None})]
    same += [{"component_id": c} for c in sorted({e.component_id for e in events})]
    kinds = sorted({(e.component_id, e.event_type.value) for e in events})
    same += [{"component_id": c, "event_type": t, "limit": 3} for c, t in kinds]
    queries = [(query, query) for query in same]
    uuids = sorted({e.flowfile_uuid for e in events})
    for uuid in uuids[:: max(1, len(uuids) // 25)]:
        queries.append(({"flowfile_uuid": uuid}, {"flowfile_uuid": pairs[uuid]}))
        queries.append(
            (
                {"flowfile_uuid": uuid, "start": since},
                {"flowfile_uuid": pairs[uuid], "start": since},
            )
        )
    return queries


def _lineage_edges(graph: nx.DiGraph, pairs: Mapping[str, str]) -> set[tuple]:
    """A lineage graph's edges between FlowFiles (paired) and events (by type and component)."""

    def name(node: str) -> tuple:
        data = graph.nodes[node]
        if data["kind"] == "flowfile":
            return ("flowfile", pairs.get(node, node))
        linked = (*graph.predecessors(node), *graph.successors(node))
        return (
            "event",
            data["event_type"],
            data["component"],
            *sorted(pairs.get(n, n) for n in linked),
        )

    return {(name(a), name(b)) for a, b in graph.edges}


def assert_queries_agree(places: Mapping[str, Path], since: int) -> None:
    """Every search of the batch run finds the events the one-by-one run's twin search finds.

    Results compare in component and type order (see :func:`in_kind_order`); one FlowFile's
    events compare in their exact order.
    """
    batches, single = all_events(places["batches"]), all_events(places["single"])
    pairs = uuid_map(batches, single)
    assert {e.flowfile_uuid for e in batches} <= set(pairs)
    with opened(places["batches"]) as ours, opened(places["single"]) as theirs:
        for query, twin in _queries(batches, pairs, since):
            found = ours.provenance.search(**{"limit": 100_000, **query})
            expected = theirs.provenance.search(**{"limit": 100_000, **twin})
            got = canonical_all(found, pairs, places["batches"])
            want = canonical_all(expected, {}, places["single"])
            if "flowfile_uuid" in query:
                assert got == want, query
            else:
                assert in_kind_order(got) == in_kind_order(want), query
        for uuid in sorted(pairs)[:: max(1, len(pairs) // 8)]:
            mine = ours.provenance.lineage(uuid)
            other = theirs.provenance.lineage(pairs[uuid])
            inverse = {v: k for k, v in pairs.items()}
            assert _lineage_edges(mine, pairs) == _lineage_edges(other, {}), uuid
            assert {inverse.get(n, n) for n in other if other.nodes[n]["kind"] == "flowfile"} == {
                n for n in mine if mine.nodes[n]["kind"] == "flowfile"
            }


def _two_runs(root: Path, files: list[list[bytes]], lines_per_split: int, runner: str) -> int:
    """Run both paths over *files*, then again over later files; return when the later began."""
    write_inputs(root / "in", files)
    run_both(root, lines_per_split, runner)
    time.sleep(0.005)
    since = now_ms()
    for number, lines in enumerate(files[:2]):
        (root / "in" / f"late{number}.log").write_bytes(b"".join(b"%s\n" % x for x in lines))
    run_both(root, lines_per_split, runner)
    return since


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=_FILES, lines_per_split=st.integers(1, 3))
def test_every_search_of_a_batch_run_finds_what_the_one_by_one_run_finds(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[bytes]], lines_per_split: int
) -> None:
    """By uuid, filename, event type, component, time range, indexed and stored attributes and
    limit, alone and combined: the same events, in the same order per component and type; and
    the same lineage around sampled FlowFiles."""
    root = tmp_path_factory.mktemp("search")
    since = _two_runs(root, files, lines_per_split, "direct")
    assert_queries_agree({name: root / name for name in ("batches", "single")}, since)


def test_searches_of_a_batch_run_on_spark_find_what_the_one_by_one_run_finds(
    tmp_path: Path, runner: str
) -> None:
    """The batch run on this runner answers every search as the direct one-by-one run."""
    files = [[b"line %d" % i for i in range(n)] for n in (40, 9, 13, 21)]
    since = _two_runs(tmp_path, files, 2, runner)
    assert_queries_agree({name: tmp_path / name for name in ("batches", "single")}, since)
