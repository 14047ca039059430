"""Tests for flowcore.nifi.groups: nested process groups flattened, dead-end ports pruned."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

from _nifi_json import connection, download, funnel, group, port, processor, service
from hypothesis import given
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.nifi.groups import FlatFlow, NodeKind, flatten, prune
from flowcore.processor import ProcessorKind


def _processor_edges(flat: FlatFlow) -> set[tuple[str, str]]:
    """Processor to processor links, through any funnels and ports, by processor name."""
    found = set()
    for key, node in flat.nodes.items():
        if node.kind is not NodeKind.PROCESSOR:
            continue
        todo, seen = [e.destination for e in flat.outgoing(key)], set()
        while todo:
            target = todo.pop()
            if target in seen:
                continue
            seen.add(target)
            reached = flat.nodes[target]
            if reached.kind is NodeKind.PROCESSOR:
                found.add((node.name, reached.name))
            else:
                todo.extend(e.destination for e in flat.outgoing(target))
    return found


class _Tree:
    """A NiFi group tree under construction: members per group, ids handed out in order."""

    def __init__(self, parents: list[int]) -> None:
        self.parents = [-1, *parents]  # group 0 is the top; group g > 0 has parents[g] < g
        self.members: dict[int, dict[str, list[Any]]] = {
            g: {"processors": [], "inputPorts": [], "outputPorts": [], "funnels": [],
                "connections": []}
            for g in range(len(self.parents))
        }  # fmt: skip
        self.count = 0

    def gid(self, g: int) -> str:
        return f"g{g}"

    def new_id(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def chain(self, g: int) -> list[int]:
        """Group *g* and its ancestors, *g* first."""
        found = [g]
        while self.parents[found[-1]] >= 0:
            found.append(self.parents[found[-1]])
        return found

    def connect(self, container: int, source: tuple, destination: tuple, rels: list[str]) -> None:
        ident = self.new_id("c")
        self.members[container]["connections"].append(
            connection(ident, source, destination, rels, group=self.gid(container))
        )

    def link(self, a: tuple[str, int], b: tuple[str, int], via_funnel: bool) -> None:
        """Route a's success to b through output ports up and input ports down."""
        (pa, ga), (pb, gb) = a, b
        up, down = self.chain(ga), self.chain(gb)
        common = next(g for g in up if g in down)
        current, container, rels = (pa, "PROCESSOR", self.gid(ga)), ga, ["success"]
        for g in up[: up.index(common)]:
            out = self.new_id("o")
            self.members[g]["outputPorts"].append(port(out, out, "OUTPUT_PORT", group=self.gid(g)))
            self.connect(container, current, (out, "OUTPUT_PORT", self.gid(g)), rels)
            current, container, rels = (out, "OUTPUT_PORT", self.gid(g)), self.parents[g], [""]
        if via_funnel:
            f = self.new_id("f")
            self.members[container]["funnels"].append(funnel(f, group=self.gid(container)))
            self.connect(container, current, (f, "FUNNEL", self.gid(container)), rels)
            current, rels = (f, "FUNNEL", self.gid(container)), [""]
        for g in reversed(down[: down.index(common)]):
            entry = self.new_id("i")
            self.members[g]["inputPorts"].append(
                port(entry, entry, "INPUT_PORT", group=self.gid(g))
            )
            self.connect(container, current, (entry, "INPUT_PORT", self.gid(g)), rels)
            current, container, rels = (entry, "INPUT_PORT", self.gid(g)), g, [""]
        self.connect(container, current, (pb, "PROCESSOR", self.gid(gb)), rels)

    def json(self, g: int = 0) -> dict[str, Any]:
        children = [self.json(c) for c in range(len(self.parents)) if self.parents[c] == g]
        return group(self.gid(g), f"G{g}", processGroups=children, **self.members[g])


@st.composite
def nested_chains(draw: st.DrawFn) -> tuple[dict[str, Any], list[str], list[str]]:
    """A chain of processors spread over a random group tree: (top group, names, paths)."""
    groups = draw(st.integers(0, 5))
    parents = [draw(st.integers(0, g)) for g in range(groups)]
    tree = _Tree(parents)
    length = draw(st.integers(2, 6))
    placed = [draw(st.integers(0, groups)) for _ in range(length)]
    names = [f"p{i}" for i in range(length)]
    for name, g in zip(names, placed, strict=True):
        tree.members[g]["processors"].append(
            processor(name, name, "UpdateAttribute", group=tree.gid(g))
        )
    for i in range(length - 1):
        tree.link((names[i], placed[i]), (names[i + 1], placed[i + 1]), draw(st.booleans()))
    paths = ["/".join(f"G{g}" for g in reversed(tree.chain(p)[:-1])) for p in placed]
    return tree.json(), names, paths


@given(nested_chains())
def test_any_group_tree_flattens_to_the_same_chain(case: tuple[dict, list[str], list[str]]) -> None:
    """However processors are nested in groups (ports and funnels between), the processors keep
    their group paths and link exactly as the chain does, and nothing is pruned."""
    root, names, paths = case
    flat = flatten(root)
    assert prune(flat).notes == ()
    full = [f"{path}/{name}" if path else name for name, path in zip(names, paths, strict=True)]
    assert _processor_edges(flat) == set(itertools.pairwise(full))
    kept = [n.name for n in flat.nodes.values() if n.kind is NodeKind.PROCESSOR]
    assert sorted(kept) == sorted(full)


def test_connection_ends_find_components_by_group_id_or_unique_id() -> None:
    """An end's groupId finds the component; an end whose groupId is off still finds a unique id."""
    a = processor("a", "A", "UpdateAttribute")
    b = processor("b", "B", "UpdateAttribute")
    right = connection("c1", ("a", "PROCESSOR", "top"), ("b", "PROCESSOR", "top"), ["success"])
    off = connection("c2", ("b", "PROCESSOR", "elsewhere"), ("a", "PROCESSOR", "top"), ["success"])
    flat = flatten(group("top", "T", processors=[a, b], connections=[right, off]))
    assert [(e.source[1], e.destination[1]) for e in flat.edges] == [("a", "b"), ("b", "a")]
    assert flat.dangling == []


def test_a_connection_to_a_missing_component_is_dangling() -> None:
    """An end the flow does not hold is reported with the connection, not followed."""
    a = processor("a", "A", "UpdateAttribute")
    lost = connection("c1", ("a", "PROCESSOR", "top"), ("zz", "PROCESSOR", "top"), ["success"])
    flat = flatten(group("top", "T", processors=[a], connections=[lost]))
    assert flat.edges == []
    [(_, data, why)] = flat.dangling
    assert data["identifier"] == "c1"
    assert "'zz', which the flow does not hold" in why


def test_ports_leading_nowhere_are_pruned_and_their_flowfiles_dropped() -> None:
    """A top output port (and the funnel before it) goes, auto-terminating what fed it; an input
    port nothing feeds and leading nowhere goes too, and so does one leading only to them."""
    a = processor("a", "A", "UpdateAttribute")
    f = funnel("f")
    out = port("out", "to parent", "OUTPUT_PORT")
    lone = port("lone", "unused", "INPUT_PORT")
    through = port("through", "passed on", "INPUT_PORT")
    root = group(
        "top",
        "T",
        processors=[a],
        funnels=[f],
        outputPorts=[out],
        inputPorts=[lone, through],
        connections=[
            connection("c2", ("a", "PROCESSOR", "top"), ("f", "FUNNEL", "top"), ["success"]),
            connection("c3", ("f", "FUNNEL", "top"), ("out", "OUTPUT_PORT", "top"), [""]),
            connection("c4", ("through", "INPUT_PORT", "top"), ("f", "FUNNEL", "top"), [""]),
        ],
    )
    flat = flatten(root)
    pruned = prune(flat)
    assert list(flat.nodes) == [("top", "a")]
    assert flat.edges == []
    assert pruned.terminate == {("top", "a"): frozenset({"success"})}
    subjects = sorted(subject for subject, _ in pruned.notes)
    assert subjects == [
        "funnel 'funnel'",
        "input port 'passed on'",
        "input port 'unused'",
        "output port 'to parent'",
    ]


def test_an_unfed_port_leading_to_a_processor_stays_its_incoming_connection() -> None:
    """An input port nothing feeds that leads (through a funnel) to a processor stays with its
    connections, as NiFi counts them as the processor's incoming ones; a note names it."""
    a = processor("a", "A", "UpdateAttribute", autoTerminatedRelationships=["success"])
    f = funnel("f")
    entry = port("in", "from parent", "INPUT_PORT")
    root = group(
        "top",
        "T",
        processors=[a],
        funnels=[f],
        inputPorts=[entry],
        connections=[
            connection("c1", ("in", "INPUT_PORT", "top"), ("f", "FUNNEL", "top"), [""]),
            connection("c2", ("f", "FUNNEL", "top"), ("a", "PROCESSOR", "top"), [""]),
        ],
    )
    flat = flatten(root)
    pruned = prune(flat)
    assert sorted(flat.nodes) == [("top", "a"), ("top", "f"), ("top", "in")]
    assert [e.data["identifier"] for e in flat.edges] == ["c1", "c2"]
    assert pruned.terminate == {}
    [(subject, note)] = pruned.notes
    assert subject == "input port 'from parent'"
    assert "kept as a funnel nothing feeds" in note
    assert "incoming connections of 'A'" in note


def test_an_instances_root_ports_are_site_to_site() -> None:
    """With root_ports_remote, the top group's ports are marked site-to-site (and not pruned)."""
    entry = port("in", "From edge", "INPUT_PORT")
    flat = flatten(group("top", "NiFi Flow", inputPorts=[entry]), root_ports_remote=True)
    assert flat.nodes[("top", "in")].site_to_site
    assert prune(flat).notes == ()


def test_remote_process_groups_and_their_ports_are_kept_for_the_caller() -> None:
    """A remote process group is listed and its ports are nodes marked site-to-site."""
    remote = {
        "identifier": "rpg",
        "name": "Edge",
        "inputPorts": [{"identifier": "rin", "name": "ingest"}],
        "outputPorts": [],
    }
    flat = flatten(group("top", "T", remoteProcessGroups=[remote]))
    assert [data["name"] for _, data in flat.remote_groups] == ["Edge"]
    assert flat.nodes[("rpg", "rin")].kind is NodeKind.REMOTE_PORT


def test_an_imported_funnel_with_no_way_out_holds_its_flowfiles(tmp_path: Path) -> None:
    """A NiFi flow whose funnel has no outgoing connection (and one with none at all) imports
    and runs, as NiFi keeps it: FlowFiles wait queued before the funnel, the run finished."""
    gen = processor("gen", "Generate", "GenerateFlowFile", {"Custom Text": "hi", "Batch Size": "3"})
    held = funnel("held")
    lone = funnel("lone")
    link = connection("c1", ("gen", "PROCESSOR", "top"), ("held", "FUNNEL", "top"), ["success"])
    root = group("top", "Top", processors=[gen], funnels=[held, lone], connections=[link])
    flow = Flow.from_nifi(download(root))
    assert sorted(c.kind.value for c in flow.components) == ["funnel", "funnel", "processor"]
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.finished
    assert result.stuck == {}
    [(label, name)] = result.dead_ends.items()
    assert result.queued == {label: (3, 6)}
    assert result.waiting_before_funnels() == {name: (3, 6)}


def _queries_behind_a_port(db: Path, out: Path) -> dict[str, Any]:
    """A group whose input port feeds ExecuteSQL, and a disabled Generate feeding
    GenerateTableFetch: both results go to PutFile."""
    pool = service("pool", "pool", "org.apache.nifi.dbcp.DBCPConnectionPool")
    pool["properties"] = {"Database Connection URL": f"jdbc:sqlite:{db}"}
    entry = port("in", "from parent", "INPUT_PORT")
    query = processor("q", "Run query", "ExecuteSQL", {
        "Database Connection Pooling Service": "pool",
        "SQL Query": "select * from orders where id > ${last.id:replaceNull(-1)}",
    }, autoTerminatedRelationships=["failure"])  # fmt: skip
    gen = processor("gen", "Generate", "GenerateFlowFile", scheduledState="DISABLED")
    fetch = processor("gtf", "Fetch pages", "GenerateTableFetch", {
        "Database Connection Pooling Service": "pool", "Table Name": "orders",
    }, autoTerminatedRelationships=["failure"])  # fmt: skip
    put = processor("put", "Write", "PutFile", {"Directory": str(out)},
                    autoTerminatedRelationships=["success", "failure"])  # fmt: skip
    links = [
        connection("c1", ("in", "INPUT_PORT", "top"), ("q", "PROCESSOR", "top"), [""]),
        connection("c2", ("q", "PROCESSOR", "top"), ("put", "PROCESSOR", "top"), ["success"]),
        connection("c3", ("gen", "PROCESSOR", "top"), ("gtf", "PROCESSOR", "top"), ["success"]),
        connection("c4", ("gtf", "PROCESSOR", "top"), ("put", "PROCESSOR", "top"), ["success"]),
    ]
    return download(
        group(
            "top",
            "Group",
            processors=[query, gen, fetch, put],
            inputPorts=[entry],
            controllerServices=[pool],
            connections=links,
        )
    )


def test_processors_fed_by_an_unfed_port_or_a_disabled_one_wait_as_in_nifi(tmp_path: Path) -> None:
    """ExecuteSQL behind an input port nothing feeds, and GenerateTableFetch behind a disabled
    processor, keep their incoming connections: per-FlowFile, idle, nothing written."""
    db = tmp_path / "db.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("create table orders (id int)")
        c.executemany("insert into orders values (?)", [(i,) for i in range(5)])
    flow = Flow.from_nifi(_queries_behind_a_port(db, tmp_path / "out"))
    kinds = {c.name: flow.kind_of(c) for c in flow.components if c.processor is not None}
    assert kinds["Run query"] is ProcessorKind.PER_FLOWFILE
    assert kinds["Fetch pages"] is ProcessorKind.PER_FLOWFILE
    assert flow.component("from parent").processor is None  # kept, as a funnel
    notes = {n.subject: n.note for n in flow.notes}
    assert "incoming connections of 'Run query'" in notes["input port 'from parent'"]
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.finished
    assert not (tmp_path / "out").exists()
