"""One flow run twice, as columnar batches and forced one FlowFile at a time, for the tests of
provenance queries, replay and retention over batch runs.

The flow is GetFile -> SplitText -> UpdateAttribute -> RouteOnAttribute, whose ``drop`` route
(one input file's splits) is auto-terminated and whose ``store`` route (another's) is named and
written by PutFile, the rest merged by MergeContent: on batches it records FORKs with child
ranges, ATTRIBUTES_MODIFIED, ROUTE, DROP and SEND runs (a ROUTE run per route, PutFile's SEND run
then its DROP run) and JOINs of counted parents. Its
twin run has every batch form turned off, as tests/flowcore/engine/_batch_outcomes.py forces
the per-FlowFile path; both record the same events, each FlowFile's in the same order (how
different FlowFiles' events interleave is not promised). Uuids, ids and times differ
between the two runs; :func:`uuid_map` pairs the
FlowFiles by lineage (inputs by name, a split by its parent and place, a merge by its parents)
and :func:`canonical` writes an event with the other run's uuids, without what differs
legitimately (ids, times, where content sits, nanosecond merge names, access times).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._member import TaskMember
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from flowcore.settings import Settings
from processors import (
    GenerateFlowFile,
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from repositories.repository_set import RepositorySet

SETTINGS = Settings(
    sync=False,
    parallelism=1,
    driver_run_max_flowfiles=0,
    provenance_indexed_attributes=("source",),  # one value a batch: its events stay runs
)
PATHS = ("batches", "single")
_NANOS = re.compile(r"^\d{10,}$")  # a merged FlowFile's default name: a nanosecond clock
_VARYING = frozenset({"merge.bin.age"})
# A file's access time depends on when a run read it (the first run's read moves it), so two
# merged files' values may agree in one run and not in its twin: MergeContent keeps only the
# attributes its FlowFiles share, so even its presence varies.
_UNCOMPARED = frozenset({"file.lastAccessTime"})


def flow(inbox: Path, out: Path, lines_per_split: int) -> Flow:
    """The flow of this module: split, tag, route (drop, store or merge), merge, write."""
    made = Flow("batch-provenance")
    get = made.add(GetFile(input_directory=str(inbox), keep_source_file=True), name="get")
    split = made.add(SplitText(line_split_count=lines_per_split), name="split")
    tag = made.add(
        UpdateAttribute(group="${fragment.index:mod(2)}", source="${filename:toUpper()}"),
        name="tag",
    )
    route = made.add(
        RouteOnAttribute(
            drop="${segment.original.filename:equals('part1.log')}",
            store="${segment.original.filename:equals('part2.log')}",
        ),
        name="route",
    )
    name = made.add(UpdateAttribute(filename="${filename}.${fragment.index}"), name="name")
    store = made.add(PutFile(directory=str(out / "stored")), name="store")
    merge = made.add(
        MergeContent(correlation_attribute_name="group", minimum_number_of_entries=1_000),
        name="merge",
    )
    put = made.add(
        PutFile(directory=str(out / "merged"), conflict_resolution_strategy="replace"),
        name="put",
    )
    made.connect(get, split)
    made.connect(split, tag, "splits")
    made.connect(tag, route)
    made.connect(route, name, "store")
    made.connect(name, store)
    made.connect(route, merge, "unmatched")
    made.connect(merge, put, "merged")
    made.auto_terminate(split, ["original", "failure"])
    made.auto_terminate(route, "drop")
    made.auto_terminate(store, ["success", "failure"])
    made.auto_terminate(merge, ["original", "failure"])
    made.auto_terminate(put, ["success", "failure"])
    return made


def write_inputs(inbox: Path, files: Sequence[Sequence[bytes]]) -> None:
    """Input files ``part0.log``, ``part1.log`` ... of the given lines (newline-terminated)."""
    inbox.mkdir(parents=True, exist_ok=True)
    for number, lines in enumerate(files):
        (inbox / f"part{number}.log").write_bytes(b"".join(line + b"\n" for line in lines))


@contextmanager
def one_by_one() -> Iterator[None]:
    """Every batch form off: the per-FlowFile path the batch runs must equal."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TaskMember, "accepts_batches", False)
        for kind in (UpdateAttribute, RouteOnAttribute, PutFile):
            patch.setattr(kind, "transform_batch", lambda *_: None)
        patch.setattr(GenerateFlowFile, "read_work_batches", lambda *_: None)
        yield


def run_both(
    root: Path,
    lines_per_split: int,
    runner: str = "direct",
    settings: Settings = SETTINGS,
    inbox: Path | None = None,
) -> dict[str, Path]:
    """Run the flow over ``root/in`` on batches (on *runner*) and one by one (directly).

    Returns each path's directory (``repo`` and ``out`` in it). Running again adds a run to
    the same repositories.
    """
    inbox = inbox or root / "in"
    places = {name: root / name for name in PATHS}
    for name, place in places.items():
        made = flow(inbox, place / "out", lines_per_split)
        if name == "batches":
            run_flow(made, runner, repository=place / "repo", settings=settings)
        else:
            with one_by_one():
                run_flow(made, "direct", repository=place / "repo", settings=settings)
    return places


@contextmanager
def opened(place: Path, settings: Settings = SETTINGS) -> Iterator[RepositorySet]:
    """A path's repositories, open."""
    repos = RepositorySet.open(place / "repo", settings)
    try:
        yield repos
    finally:
        repos.close()


def all_events(place: Path) -> list[ProvenanceEvent]:
    """Every event of a path's repository, oldest first."""
    with opened(place) as repos:
        return repos.provenance.search(limit=10_000_000)


def uuid_map(batches: Sequence[ProvenanceEvent], single: Sequence[ProvenanceEvent]) -> dict:
    """The single run's uuid of each FlowFile of the batch run, paired by lineage.

    Inputs pair by file name, splits by parent and place among its children (a parent split in
    parts has several FORKs), merges and replays by their (paired) parents.
    """
    pairs: dict[str, str] = {}
    sides = [_lineage_of(batches), _lineage_of(single)]
    for (name, index), uuid in sides[0][0].items():
        if (name, index) in sides[1][0]:
            pairs[uuid] = sides[1][0][name, index]
    changed = True
    while changed:
        changed = False
        for parent, children in sides[0][1].items():
            twin = sides[1][1].get(pairs.get(parent, ""), [])
            for child, other in zip(children, twin, strict=False):
                if child not in pairs:
                    pairs[child] = other
                    changed = True
        for parents, child in sides[0][2].items():
            other = sides[1][2].get(frozenset(pairs.get(p, p) for p in parents))
            if other is not None and child not in pairs:
                pairs[child] = other
                changed = True
    return pairs


def _lineage_of(events: Iterable[ProvenanceEvent]) -> tuple[dict, dict, dict]:
    """Sources by (file name, nth), children of each parent in order, each JOIN's child."""
    sources: dict[tuple[str, int], str] = {}
    seen: dict[str, int] = defaultdict(int)
    children: dict[str, list[str]] = defaultdict(list)
    joins: dict[frozenset, str] = {}
    for found in sorted(events, key=lambda e: e.event_id):
        kind = found.event_type
        if kind in {ProvenanceEventType.RECEIVE, ProvenanceEventType.CREATE}:
            name = f"{found.component_name}:{found.filename}"
            sources[name, seen[name]] = found.flowfile_uuid
            seen[name] += 1
        elif kind in {ProvenanceEventType.FORK, ProvenanceEventType.CLONE}:
            children[found.flowfile_uuid].extend(found.child_uuids)
        elif kind in {ProvenanceEventType.JOIN, ProvenanceEventType.REPLAY}:
            joins[frozenset(found.parent_uuids)] = found.flowfile_uuid
    return sources, children, joins


def canonical(event: ProvenanceEvent, pairs: Mapping[str, str], root: Path) -> tuple:
    """*event* as the other run would record it: uuids paired, paths under *root* as ``<root>``,
    without ids, times, dates and where its content sits."""

    def text(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value in pairs:
            return pairs[value]
        return _NANOS.sub("<nanos>", value.replace(str(root), "<root>"))

    def plain(attributes: Mapping[str, str]) -> tuple:
        return tuple(
            sorted(
                (k, "<varies>" if k in _VARYING else text(v))
                for k, v in attributes.items()
                if k not in _UNCOMPARED
            )
        )

    def place(claim: Any) -> Any:
        return None if claim is None else (claim.offset, claim.length)

    return (
        event.event_type.value,
        text(event.flowfile_uuid),
        event.component_id,
        event.component_type,
        event.component_name,
        event.file_size,
        event.previous_file_size,
        event.event_duration >= 0,
        tuple(text(u) for u in event.parent_uuids),
        tuple(text(u) for u in event.child_uuids),
        event.relationship,
        event.details,
        text(event.transit_uri),
        event.source_system_flowfile_identifier,
        event.alternate_identifier_uri,
        event.source_queue_identifier,
        plain(event.previous_attributes),
        plain(event.updated_attributes),
        place(event.previous_content_claim),
        place(event.content_claim),
    )


def canonical_all(
    events: Iterable[ProvenanceEvent], pairs: Mapping[str, str], root: Path
) -> list[tuple]:
    """:func:`canonical` of each event, in order."""
    return [canonical(e, pairs, root) for e in events]


def _queries(events: list, pairs: Mapping[str, str], since: int) -> list[tuple[dict, dict]]:
    """Each search of the batch run with its twin of the one-by-one run."""
    same: list[dict[str, Any]] = [
        {},
        {"start": since},
        {"end": since - 1},
        {"attributes": {"source": "PART0.LOG"}},  # indexed
        {"attributes": {"group": "0"}},  # matched on the stored maps
        {"attributes": {"group": "1", "source": "PART3.LOG"}, "event_type": "ROUTE"},
        {"event_type": "DROP", "start": since},
    ]
    same += [{"event_type": kind} for kind in sorted({e.event_type.value for e in events})]
    same += [{"filename": name} for name in sorted({e.filename for e in events} - {None})]
    components = sorted({e.component_id for e in events})
    same += [{"component_id": c} for c in components]
    kinds = sorted({(e.component_id, e.event_type.value) for e in events})
    same += [{"component_id": c, "event_type": t, "limit": 3} for c, t in kinds]
    # limits cutting across kinds: the same first events in the same order
    same += [{"limit": n} for n in (1, 5, 17, len(events) // 2)]
    same += [{"start": since, "limit": 7}, {"attributes": {"group": "1"}, "limit": 6}]
    same += [{"component_id": c, "limit": 5} for c in components]
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


def per_flowfile(events: Iterable[ProvenanceEvent], pairs: Mapping[str, str], root: Path) -> dict:
    """:func:`canonical` of each event, FlowFile by FlowFile (by the paired uuid), each
    FlowFile's in order: what provenance promises of the order of events (DESIGN §3)."""
    grouped: dict[str, list[tuple]] = defaultdict(list)
    for event in events:
        grouped[pairs.get(event.flowfile_uuid, event.flowfile_uuid)].append(
            canonical(event, pairs, root)
        )
    return dict(grouped)


def assert_queries_agree(
    places: Mapping[str, Path], since: int, pairs: Mapping[str, str] | None = None
) -> None:
    """Every search of the batch run finds the events the one-by-one run's twin search finds,
    each FlowFile's in the same order; a limited search finds the first of its unlimited
    search's events, in id order, on each path.

    *pairs* are the FlowFiles paired before retention removed the events that paired some (by
    default, paired now).
    """
    batches, single = all_events(places["batches"]), all_events(places["single"])
    pairs = uuid_map(batches, single) if pairs is None else pairs
    assert {e.flowfile_uuid for e in batches} <= set(pairs)
    with opened(places["batches"]) as ours, opened(places["single"]) as theirs:
        for query, twin in _queries(batches, pairs, since):
            limit = query.get("limit")
            unlimited = {k: v for k, v in query.items() if k != "limit"}
            unlimited_twin = {k: v for k, v in twin.items() if k != "limit"}
            found = ours.provenance.search(**{"limit": 100_000, **unlimited})
            expected = theirs.provenance.search(**{"limit": 100_000, **unlimited_twin})
            got = per_flowfile(found, pairs, places["batches"])
            want = per_flowfile(expected, {}, places["single"])
            assert got == want, query
            if limit is not None:  # the first events in id order, on each path
                assert ours.provenance.search(**query) == found[:limit], query
                assert theirs.provenance.search(**twin) == expected[:limit], twin
        for uuid in sorted(pairs)[:: max(1, len(pairs) // 8)]:
            mine = ours.provenance.lineage(uuid)
            other = theirs.provenance.lineage(pairs[uuid])
            inverse = {v: k for k, v in pairs.items()}
            assert _lineage_edges(mine, pairs) == _lineage_edges(other, {}), uuid
            assert {inverse.get(n, n) for n in other if other.nodes[n]["kind"] == "flowfile"} == {
                n for n in mine if mine.nodes[n]["kind"] == "flowfile"
            }
