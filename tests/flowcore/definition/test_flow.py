"""Tests for flow definitions: components, connections, queue settings, the graph."""

from __future__ import annotations

import pickle

import networkx as nx
import pytest

from flowcore.builder import Flow
from flowcore.definition.component_settings import Prioritizer, QueueSettings
from flowcore.definition.flow import ComponentKind
from flowcore.errors import FlowDefinitionError
from flowcore.parameters import Parameter, ParameterContext
from processors import GenerateFlowFile, LogAttribute, SplitText, UpdateAttribute


def test_add_names_components_uniquely() -> None:
    """Components get ids and names; a repeated explicit name is refused at once."""
    flow = Flow("f")
    first = flow.add(UpdateAttribute())
    second = flow.add(UpdateAttribute())
    named = flow.add(LogAttribute(), name="log")
    assert (first.name, second.name, named.name) == (
        "UpdateAttribute",
        "UpdateAttribute-2",
        "log",
    )
    assert len({first.id, second.id, named.id}) == 3
    assert flow.component("log") is named
    assert flow.component(first.id) is first
    with pytest.raises(FlowDefinitionError, match="already has a component named 'log'"):
        flow.add(LogAttribute(), name="log")
    with pytest.raises(KeyError, match="no component 'nope'"):
        flow.component("nope")


def test_ids_can_be_given_and_stay_unique() -> None:
    """add, funnel and connect take an id (an import keeps NiFi's); a taken one is refused."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), id="0b7e-gen")
    funnel = flow.funnel("f", id="0b7e-funnel")
    link = flow.connect(gen, funnel, id="0b7e-link")
    assert (gen.id, funnel.id, link.id) == ("0b7e-gen", "0b7e-funnel", "0b7e-link")
    assert flow.add(LogAttribute()).id == "LogAttribute"  # by default, its name
    with pytest.raises(FlowDefinitionError, match="already has a component or connection"):
        flow.add(UpdateAttribute(), id="0b7e-link")
    with pytest.raises(FlowDefinitionError, match="non-empty string"):
        flow.funnel(id="")


def test_ids_come_from_names_and_endpoints_not_from_the_order_of_calls() -> None:
    """The same flow built in another order has the same component and connection ids."""

    def build(reverse: bool) -> Flow:
        flow = Flow("f")
        names = ["gen", "split", "log"]
        made = {}
        for name in reversed(names) if reverse else names:
            made[name] = flow.add(
                {"gen": GenerateFlowFile, "split": SplitText, "log": LogAttribute}[name](),
                name=name,
            )
        links = [
            (made["gen"], made["split"], None),
            (made["split"], made["log"], ["splits", "original"]),
        ]
        for source, destination, rels in reversed(links) if reverse else links:
            given = list(reversed(rels)) if rels is not None and reverse else rels
            flow.connect(source, destination, given)
        return flow

    forward, backward = build(False), build(True)
    assert {c.id for c in forward.components} == {"gen", "split", "log"}
    assert {c.id for c in forward.connections} == {
        "gen:success->split",
        "split:original,splits->log",
    }
    assert {c.id for c in forward.connections} == {c.id for c in backward.connections}


def test_a_parallel_connection_gets_its_own_id_and_a_name_cannot_take_a_given_id() -> None:
    """A second identical connection is numbered; a name equal to another's id= is refused."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    log = flow.add(LogAttribute(), name="log", id="x")
    first = flow.connect(gen, log)
    second = flow.connect(gen, log)
    assert (first.id, second.id) == ("gen:success->x", "gen:success->x#2")
    with pytest.raises(FlowDefinitionError, match="derived from its name"):
        flow.add(LogAttribute(), name="x")


def test_reidentified_keeps_old_ids_for_renamed_components() -> None:
    """A kept id replaces the new one; derived connection ids follow, given ones stay."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="generate")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(gen, log)
    flow.connect(gen, log, id="given")
    flow.auto_terminate(log, "success")
    moved = flow.reidentified({"generate": "gen"})
    assert [c.id for c in moved.components] == ["gen", "log"]
    assert [c.name for c in moved.components] == ["generate", "log"]
    assert [c.id for c in moved.connections] == ["gen:success->log", "given"]
    assert all(c.source == "gen" for c in moved.connections)
    assert moved.auto_terminated(moved.component("log")) == {"success"}
    assert [c.id for c in flow.components] == ["generate", "log"]  # the original is untouched


def test_the_same_processor_instance_cannot_be_added_twice() -> None:
    """Each placement needs its own processor instance."""
    flow = Flow("f")
    processor = UpdateAttribute()
    flow.add(processor)
    with pytest.raises(FlowDefinitionError, match="already in flow"):
        flow.add(processor)
    with pytest.raises(FlowDefinitionError, match="takes a Processor instance"):
        flow.add(UpdateAttribute)  # type: ignore[arg-type]


def test_connect_defaults_to_the_only_relationship() -> None:
    """Without relationships, a single-exit source's exit is used; several stay unnamed."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile())
    split = flow.add(SplitText(line_split_count=1))
    log = flow.add(LogAttribute())
    assert flow.connect(gen, split).relationships == ("success",)
    assert flow.connect(split, log).relationships == ()
    assert flow.connect(split, log, ["splits", "original"]).relationships == ("splits", "original")


def test_components_of_another_flow_are_refused() -> None:
    """Connecting a handle from a different flow is an immediate, named error."""
    one, other = Flow("one"), Flow("other")
    a = one.add(GenerateFlowFile())
    b = other.add(LogAttribute())
    with pytest.raises(FlowDefinitionError, match="not a component of flow 'one'"):
        one.connect(a, b)


def test_a_component_can_be_named_where_a_handle_is_taken() -> None:
    """connect() and auto_terminate() take a component's name or id, as validation's messages
    suggest; a name that matches none is a named error listing the flow's components."""
    flow = Flow("named")
    flow.add(GenerateFlowFile(), name="gen")
    log = flow.add(LogAttribute(), name="log")
    assert flow.connect("gen", log.id).relationships == ("success",)
    flow.auto_terminate("log", "success")
    assert flow.auto_terminated(log) == {"success"}
    with pytest.raises(
        FlowDefinitionError, match=r"'nope' names no component.*it has: 'gen', 'log'"
    ):
        flow.auto_terminate("nope", "success")


def test_queue_settings_follow_nifi_defaults_and_accept_python_values() -> None:
    """Defaults are 10,000 / 1 GB / never; Python numbers become NiFi strings."""
    assert QueueSettings() == QueueSettings(10_000, "1 GB", "0 sec", ())
    flow = Flow("f")
    gen, log = flow.add(GenerateFlowFile()), flow.add(LogAttribute())
    plain = flow.connect(gen, log)
    assert plain.settings is None
    assert plain.queue_settings == QueueSettings()
    tuned = flow.connect(
        gen,
        log,
        flowfile_expiration=60,
        back_pressure_data_size_threshold="10 MB",
        prioritizers=["OldestFlowFileFirstPrioritizer", Prioritizer.PRIORITY_ATTRIBUTE],
    )
    assert tuned.settings is not None
    assert tuned.settings.flowfile_expiration == "60 secs"
    assert tuned.settings.prioritizers == (
        Prioritizer.OLDEST_FLOWFILE_FIRST,
        Prioritizer.PRIORITY_ATTRIBUTE,
    )
    with pytest.raises(FlowDefinitionError, match="unknown prioritizer 'Random'"):
        flow.connect(gen, log, prioritizers=["Random"])


def test_graph_holds_loops_and_parallel_connections() -> None:
    """The graph is a MultiDiGraph with one edge per connection, self-loops included."""
    flow = Flow("f")
    gen, update = flow.add(GenerateFlowFile()), flow.add(UpdateAttribute())
    funnel = flow.funnel()
    flow.connect(gen, funnel)
    flow.connect(funnel, update)
    flow.connect(update, update, "success")
    flow.connect(update, funnel, "success")
    graph = flow.graph()
    assert isinstance(graph, nx.MultiDiGraph)
    assert graph.number_of_edges() == 4
    assert graph.has_edge(update.id, update.id)
    assert funnel.kind is ComponentKind.FUNNEL
    assert funnel.relationship_names() == ("success",)
    assert len(flow.incoming(funnel)) == 2
    assert len(flow.outgoing(update)) == 2


def test_flows_pickle() -> None:
    """A flow definition pickles (Spark ships what it holds)."""
    flow = Flow("f")
    gen, log = flow.add(GenerateFlowFile()), flow.add(LogAttribute())
    flow.connect(gen, log, back_pressure_object_threshold=5)
    copy = pickle.loads(pickle.dumps(flow))
    assert [c.name for c in copy.components] == ["GenerateFlowFile", "LogAttribute"]
    assert copy.connections == flow.connections


def test_concurrent_tasks_must_be_a_positive_integer() -> None:
    """Concurrent Tasks is a scheduling setting of the placement; zero, text or True are refused."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen", concurrent_tasks=2)
    assert gen.concurrent_tasks == 2
    assert flow.add(GenerateFlowFile(), name="other").concurrent_tasks == 1
    for bad in (0, -1, "2", True):
        with pytest.raises(FlowDefinitionError, match="concurrent_tasks of GenerateFlowFile"):
            flow.add(GenerateFlowFile(), concurrent_tasks=bad)  # type: ignore[arg-type]


def test_run_schedule_defaults_to_nifis_zero_and_takes_seconds_as_numbers() -> None:
    """Run Schedule is NiFi's ``0 sec`` unless given; a number means seconds, as elsewhere."""
    flow = Flow("f")
    assert flow.add(GenerateFlowFile(), name="gen").run_schedule == "0 sec"
    assert flow.add(GenerateFlowFile(), name="slow", run_schedule="5 mins").run_schedule == (
        "5 mins"
    )
    assert flow.add(GenerateFlowFile(), name="num", run_schedule=60).run_schedule == "60 secs"


def test_flows_hold_parameters_and_bind_them_to_processors() -> None:
    """Flow(parameters=dict) makes a context; resolved_processor binds what a processor uses."""
    flow = Flow("p", parameters={"n": "2", "unused": "x"})
    assert flow.parameters == ParameterContext(
        "p", parameters=[Parameter("n", "2"), Parameter("unused", "x")]
    )
    split = flow.add(SplitText(line_split_count="#{n}"), name="split")
    funnel = flow.funnel()
    bound = flow.resolved_processor(split)
    assert bound is not None
    assert bound is not split.processor
    assert bound.parameter_values == {"n": "2"}
    assert bound.effective_value(SplitText.LINE_SPLIT_COUNT) == "2"
    assert flow.resolved_processor(funnel) is None
    log = flow.add(LogAttribute(), name="log")
    assert flow.resolved_processor(log) is log.processor
