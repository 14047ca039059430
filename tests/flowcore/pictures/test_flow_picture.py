"""Tests for drawing a compiled flow: every connection and exit, queues, stages and counts."""

from __future__ import annotations

from flowcore.builder import Flow
from flowcore.compiler.stages import compile_flow, stage_notes
from flowcore.pictures.flow_picture import FlowCounts, flow_picture, format_bytes
from flowcore.pictures.model import EdgeKind, NodeKind
from flowcore.settings import Settings
from processors import GenerateFlowFile, LogAttribute, MergeContent, RouteOnAttribute
from tests.flowcore.driver._controller_runs import Tee


def branching() -> Flow:
    """gen -> route, whose two relationships lead to two processors, one through a funnel
    into a queue with settings, the other into MergeContent."""
    flow = Flow("branches")
    gen = flow.add(GenerateFlowFile(), name="gen")
    route = flow.add(RouteOnAttribute(big="${size:gt(10)}"), name="route")
    small = flow.add(LogAttribute(), name="small")
    funnel = flow.funnel("join")
    merge = flow.add(MergeContent(), name="merge")
    flow.connect(gen, route)
    flow.connect(route, small, "unmatched")
    flow.connect(route, funnel, "big")
    flow.connect(
        funnel,
        merge,
        back_pressure_object_threshold=500,
        back_pressure_data_size_threshold="10 MB",
        flowfile_expiration="5 min",
        prioritizers=["OldestFlowFileFirstPrioritizer"],
    )
    flow.auto_terminate(small, "success")
    flow.auto_terminate(merge, ["merged", "original", "failure"])
    return flow


def test_parallel_branches_stay_parallel_and_every_exit_is_drawn() -> None:
    """Each connection is its own edge (route's two relationships lead two ways), and
    auto-terminated relationships end in a drop node of their component."""
    picture = flow_picture(compile_flow(branching()))
    edges = {
        (picture.node(e.source).label[0], e.label, picture.node(e.target).label[0])
        for e in picture.edges
    }
    assert edges == {
        ("gen", "success", "route"),
        ("route", "unmatched", "small"),
        ("route", "big", "join"),
        ("join", "success", "merge"),
        ("small", "success", "dropped"),
        ("merge", "original, merged, failure", "dropped"),
    }
    kinds = {n.label[0]: n.kind for n in picture.nodes if n.kind is not NodeKind.DROP}
    assert kinds == {
        "gen": NodeKind.SOURCE,
        "route": NodeKind.PROCESSOR,
        "small": NodeKind.PROCESSOR,
        "join": NodeKind.FUNNEL,
        "merge": NodeKind.PROCESSOR,
    }


def test_durable_queues_show_why_and_their_nifi_settings() -> None:
    """The queue into MergeContent is durable, with its thresholds, expiration and prioritizer."""
    picture = flow_picture(compile_flow(branching()))
    (queue,) = [e for e in picture.edges if e.kind is EdgeKind.DURABLE]
    assert queue.notes == (
        "durable: feeds a binning processor, has queue settings",
        "back pressure: 500 FlowFiles / 10 MB",
        "prioritizers: OldestFlowFileFirstPrioritizer",
        "expires after 5 min",
    )
    assert queue.data["back_pressure_object_threshold"] == 500
    assert queue.data["reasons"] == ["into_binning", "queue_settings"]


def test_stages_are_clusters_holding_every_node() -> None:
    """Each node sits in exactly one stage's cluster, stages in execution order."""
    compiled = compile_flow(branching())
    picture = flow_picture(compiled)
    assert [c.label for c in picture.clusters] == [s.id for s in compiled.stages]
    clustered = [n for c in picture.clusters for n in c.nodes]
    assert sorted(clustered) == sorted(n.id for n in picture.nodes)
    assert picture.clusters[0].notes[0] == "input: source work"


def test_counts_from_status_are_written_on_edges() -> None:
    """A status.json's transfers give each edge the FlowFiles and bytes its relationships
    carried, and what a durable queue still holds."""
    flow = branching()
    compiled = compile_flow(flow)
    queue_id = next(iter(compiled.durable))
    status = {
        "flow": "branches",
        "transfers": {
            "route": {"big": [3, 3072], "unmatched": [1, 5]},
            "merge": {"original": [2, 10]},
        },
        "queues": {queue_id: {"label": "q", "flowfiles": 1, "bytes": 1024}},
    }
    picture = flow_picture(compiled, FlowCounts.from_status(status))
    notes = {e.label: e.notes[-1] for e in picture.edges if e.kind is not EdgeKind.DURABLE}
    assert notes["big"] == "3 FlowFiles, 3.0 KB"
    assert notes["unmatched"] == "1 FlowFile, 5 B"
    assert notes["original, merged, failure"] == "2 FlowFiles, 10 B"
    (queue,) = [e for e in picture.edges if e.kind is EdgeKind.DURABLE]
    assert queue.notes[-1] == "queued: 1 FlowFile, 1.0 KB"
    assert picture.notes == ("counts: the last run's, from the repository",)


def test_format_bytes_uses_nifis_binary_units() -> None:
    """Bytes read as B, KB, MB, GB with 1 KB = 1,024 B."""
    assert [format_bytes(n) for n in (0, 1023, 1536, 5 * 1024**3)] == [
        "0 B",
        "1,023 B",
        "1.5 KB",
        "5.0 GB",
    ]


def test_stage_frames_carry_the_compilers_notes_with_the_driver_note_on_spark() -> None:
    """Each frame's notes are the compiler's stage_notes (queues without their reasons, which
    the edges carry); on Spark the queue-fed stage says which runs go to the driver, with the
    settings' values, and on the direct runner it does not."""
    compiled = compile_flow(branching())
    settings = Settings(driver_run_max_flowfiles=1_000, driver_run_max_size="1 MB")
    picture = flow_picture(compiled, runner="spark", settings=settings)
    for cluster, stage in zip(picture.clusters, compiled.stages, strict=True):
        expected = stage_notes(compiled, stage, reasons=False, runner="spark", settings=settings)
        assert cluster.notes == tuple(expected)
    assert picture.clusters[1].notes == (
        "input: join -[success]-> merge",
        "in the driver: runs taking at most 1,000 queued FlowFiles / 1 MB (a Spark job's "
        "scheduling costs more than they do; settings driver_run_max_flowfiles, "
        "driver_run_max_size)",
    )
    direct = flow_picture(compiled, runner="direct")
    assert direct.clusters[1].notes == ("input: join -[success]-> merge",)


def test_a_default_auto_terminated_relationship_is_drawn_dropped_unless_connected() -> None:
    """A relationship the processor auto-terminates by default ends in its drop node; once a
    connection takes it, only that connection is drawn (NiFi: the connection wins)."""

    def tee(connected: bool) -> Flow:
        flow = Flow("tee")
        gen = flow.add(GenerateFlowFile(), name="gen")
        split = flow.add(Tee(), name="tee")
        flow.connect(gen, split)
        flow.auto_terminate(split, "success")
        if connected:
            log = flow.add(LogAttribute(), name="log")
            flow.connect(split, log, "copies")
            flow.auto_terminate(log, "success")
        return flow

    picture = flow_picture(compile_flow(tee(False)))
    dropped = [e for e in picture.edges if e.kind is EdgeKind.DROPPED]
    assert [(e.label, e.data["relationships"]) for e in dropped] == [
        ("success, copies", ["success", "copies"])
    ]
    picture = flow_picture(compile_flow(tee(True)))
    labels = {(picture.node(e.source).label[0], e.label) for e in picture.edges}
    assert ("tee", "success") in labels
    assert ("tee", "copies") in labels
    assert ("tee", "success, copies") not in labels


def test_a_funnel_with_no_way_out_is_marked_and_its_input_is_durable() -> None:
    """The funnel's node says it has no outgoing connection; its input queue is durable, why
    said; its stage notes say its input waits queued."""
    flow = Flow("held")
    gen = flow.add(GenerateFlowFile(), name="gen")
    hold = flow.funnel("hold")
    flow.connect(gen, hold)
    compiled = compile_flow(flow)
    picture = flow_picture(compiled)
    node = picture.node(hold.id)
    assert node.label == ("hold", "Funnel", "no outgoing connection")
    assert node.data["dead_end"] is True
    (into,) = [e for e in picture.edges if e.target == hold.id]
    assert into.kind is EdgeKind.DURABLE
    assert "feeds a funnel with no outgoing connection" in " ".join(into.notes)
    notes = [n for s in compiled.stages for n in stage_notes(compiled, s)]
    assert (
        "settings: Funnel 'hold' has no outgoing connection (never runs; its input waits "
        "queued)" in notes
    )
