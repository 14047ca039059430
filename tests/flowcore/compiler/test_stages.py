"""Tests for the compiler phases: durable connections, stage formation, stage order."""

from __future__ import annotations

import pytest

from flowcore.builder import Flow
from flowcore.compiler.stages import (
    DurableReason,
    compile_flow,
    explain,
    form_stages,
    mark_durable,
    stage_notes,
)
from flowcore.definition.component_settings import RetrySettings
from flowcore.errors import FlowValidationError
from flowcore.processor import ProcessorKind
from flowcore.settings import Settings
from processors import (
    ControlRate,
    GenerateFlowFile,
    LogAttribute,
    MergeContent,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch
from tests.flowcore.driver._controller_runs import Tee


def web_logs() -> tuple[Flow, dict]:
    flow = Flow("web-logs")
    c = {
        "gen": flow.add(GenerateFlowFile(), name="gen"),
        "split": flow.add(SplitText(line_split_count=1), name="split"),
        "tag": flow.add(UpdateAttribute(source="web"), name="tag"),
        "merge": flow.add(MergeContent(), name="merge"),
        "log": flow.add(LogAttribute(), name="log"),
    }
    flow.connect(c["gen"], c["split"])
    flow.connect(c["split"], c["tag"], "splits")
    flow.connect(c["tag"], c["merge"])
    flow.connect(c["merge"], c["log"], "merged")
    flow.auto_terminate(c["split"], ["original", "failure"])
    flow.auto_terminate(c["merge"], ["original", "failure"])
    flow.auto_terminate(c["log"], "success")
    return flow, c


def test_connections_into_binning_processors_are_durable() -> None:
    """Only the queue feeding MergeContent is durable in a plain linear flow."""
    flow, c = web_logs()
    durable = mark_durable(flow)
    (into_merge,) = flow.incoming(c["merge"])
    assert durable == {into_merge.id: (DurableReason.INTO_BINNING,)}


def test_every_reason_is_recorded() -> None:
    """Queue settings and durable=True make a connection durable, with each reason kept."""
    flow = Flow("f")
    gen, a, b = (flow.add(p) for p in (GenerateFlowFile(), UpdateAttribute(), MergeContent()))
    flagged = flow.connect(gen, a, durable=True)
    both = flow.connect(a, b, back_pressure_object_threshold=5, durable=True)
    durable = mark_durable(flow)
    assert durable[flagged.id] == (DurableReason.MARKED_DURABLE,)
    assert durable[both.id] == (
        DurableReason.INTO_BINNING,
        DurableReason.MARKED_DURABLE,
        DurableReason.QUEUE_SETTINGS,
    )


def test_the_connection_closing_a_cycle_is_durable() -> None:
    """In a retry loop, the connection going back upstream is the one cut."""
    flow = Flow("retry")
    gen = flow.add(GenerateFlowFile(), name="gen")
    route = flow.add(RouteOnAttribute(**{"retry": "${retry:isEmpty():not()}"}), name="route")
    fix = flow.add(UpdateAttribute(), name="fix")
    flow.connect(gen, route)
    flow.connect(route, fix, "retry")
    back = flow.connect(fix, route)
    loop = flow.connect(fix, fix)
    flow.auto_terminate(route, "unmatched")
    assert mark_durable(flow) == {
        back.id: (DurableReason.CLOSES_CYCLE,),
        loop.id: (DurableReason.CLOSES_CYCLE,),
    }


def test_stages_are_pipelined_groups_upstream_first() -> None:
    """Source to MergeContent is one stage; MergeContent onwards another."""
    flow, c = web_logs()
    compiled = compile_flow(flow)
    names = [[flow.component(m).name for m in s.members] for s in compiled.stages]
    assert names == [["gen", "split", "tag"], ["merge", "log"]]
    first, second = compiled.stages
    assert first.is_source_stage
    assert first.outputs == second.inputs == tuple(compiled.durable)
    assert compiled.stage_of(c["log"]) is second


def test_funnels_merge_streams_inside_a_stage() -> None:
    """Two branches joined by a funnel form one stage with it."""
    flow = Flow("f")
    gen1, gen2 = flow.add(GenerateFlowFile()), flow.add(GenerateFlowFile())
    funnel = flow.funnel()
    log = flow.add(LogAttribute())
    flow.connect(gen1, funnel)
    flow.connect(gen2, funnel)
    flow.connect(funnel, log)
    flow.auto_terminate(log, "success")
    groups = form_stages(flow, mark_durable(flow))
    assert groups == [(gen1.id, gen2.id, funnel.id, log.id)]


def test_cycles_through_durable_queues_are_ordered_as_units() -> None:
    """A loop between two stages keeps both after their upstream and before their downstream."""
    flow = Flow("loop")
    gen = flow.add(GenerateFlowFile(), name="gen")
    merge = flow.add(MergeContent(), name="merge")
    tag = flow.add(UpdateAttribute(), name="tag")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(gen, merge)
    flow.connect(merge, tag, "merged")
    flow.connect(tag, merge)  # back into the bin: closes a cycle
    flow.connect(merge, log, "original")
    flow.auto_terminate(merge, "failure")
    flow.auto_terminate(log, "success")
    compiled = compile_flow(flow)
    order = [[flow.component(m).name for m in s.members] for s in compiled.stages]
    assert order == [["gen"], ["merge", "tag", "log"]]


def test_explain_names_stages_members_and_why_queues_are_durable() -> None:
    """explain() prints each stage with its members, inputs and the durable reasons (the
    run's plan; ``flow.explain()`` draws the whole graph, tests/flowcore/pictures)."""
    flow, _ = web_logs()
    assert explain(compile_flow(flow)) == "\n".join(
        [
            "flow 'web-logs': 2 stage(s)",
            "stage-1: GenerateFlowFile 'gen' -> SplitText 'split' -> UpdateAttribute 'tag'",
            "  input: source work",
            "  output: tag -[success]-> merge (durable: feeds a binning processor)",
            "stage-2: MergeContent 'merge' -> LogAttribute 'log'",
            "  input: tag -[success]-> merge (durable: feeds a binning processor)",
        ]
    )


def test_explain_shows_a_sources_scheduling_when_not_nifis_default() -> None:
    """Concurrent tasks above one and a Run Schedule other than 0 sec appear on the input line."""
    flow = Flow("paced")
    gen = flow.add(GenerateFlowFile(), name="gen", concurrent_tasks=2, run_schedule="1 min")
    flow.auto_terminate(gen, "success")
    assert (
        "  input: source work, GenerateFlowFile 'gen' x2 concurrent tasks, "
        "GenerateFlowFile 'gen' every 1 min (continuous runs)"
    ) in flow.explain()


def test_compilation_validates_first() -> None:
    """An invalid flow never compiles."""
    flow = Flow("bad")
    flow.add(SplitText())
    with pytest.raises(FlowValidationError):
        compile_flow(flow)


def test_the_last_phase_plans_every_stage() -> None:
    """compile_flow ends with each stage's shippable plan: its members in stage order, and the
    durable queues it reads, mapped to the member that reads each."""
    flow = Flow("planned")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    merge = flow.add(MergeContent(), name="merge")
    flow.connect(gen, tag)
    queue = flow.connect(tag, merge)
    flow.auto_terminate(merge, ["merged", "original", "failure"])
    compiled = compile_flow(flow)
    assert set(compiled.plans) == {s.id for s in compiled.stages}
    for stage in compiled.stages:
        plan = compiled.plans[stage.id]
        assert [m.component_id for m in plan.members] == list(stage.members)
    reader = compiled.plans[compiled.stage_of(merge).id]
    assert reader.queue_members[queue.id] == merge.id


def test_plans_ship_processors_with_their_parameters_bound() -> None:
    """A stage plan's processor has the flow's parameters substituted; the flow's keeps #{}."""
    flow = Flow("p", parameters={"n": "3", "who": "web"})
    gen = flow.add(GenerateFlowFile(), name="gen")
    split = flow.add(SplitText(line_split_count="#{n}"), name="split")
    tag = flow.add(UpdateAttribute(source="#{who}-${filename}"), name="tag")
    flow.connect(gen, split)
    flow.connect(split, tag, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    compiled = compile_flow(flow)
    members = {m.name: m for plan in compiled.plans.values() for m in plan.members}
    assert members["split"].processor.configured == {"Line Split Count": "3"}
    assert members["tag"].processor.configured == {"source": "web-${filename}"}
    assert repr(split.processor) == "SplitText(line_split_count='#{n}')"


def test_a_stage_with_a_serial_member_says_why_it_is_one_task() -> None:
    """A processor that triggers serially gets a stage of its own, which is serial (one task
    per stage run), so what comes before and after it stays parallel; explain names it."""
    flow = Flow("serial")
    tag = flow.add(GenerateFlowFile(), name="tag")
    rate = flow.add(ControlRate(maximum_rate="1 MB"), name="rate")
    end = flow.add(UpdateAttribute(), name="end")
    into = flow.connect(tag, rate)
    out = flow.connect(rate, end, "success")
    flow.auto_terminate(rate, "failure")
    flow.auto_terminate(end, "success")
    compiled = compile_flow(flow)
    assert [s.members for s in compiled.stages] == [(tag.id,), (rate.id,), (end.id,)]
    assert compiled.durable[into.id] == (DurableReason.SERIAL,)
    assert compiled.durable[out.id] == (DurableReason.SERIAL,)
    plans = [compiled.plans[s.id] for s in compiled.stages]
    assert [p.serial for p in plans] == [False, True, False]
    assert "serial: one task per stage run" in explain(compiled)
    assert "ControlRate 'rate' triggers serially" in explain(compiled)


def test_a_disabled_processor_gets_durable_input_and_shows_in_explain() -> None:
    """Connections into a disabled processor are queues; explain marks it and never plans it."""
    flow = Flow("off")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag", disabled=True)
    log = flow.add(LogAttribute(), name="log")
    into = flow.connect(gen, tag)
    flow.connect(tag, log)
    flow.auto_terminate(log, "success")
    compiled = compile_flow(flow)
    assert compiled.durable[into.id] == (DurableReason.INTO_DISABLED,)
    text = explain(compiled)
    assert "UpdateAttribute 'tag' (disabled)" in text
    assert "gen -[success]-> tag (durable: feeds a disabled processor)" in text
    assert "UpdateAttribute 'tag' DISABLED (never runs; its input waits queued)" in text
    plan = compiled.plans[compiled.stage_of(tag).id]
    assert plan.disabled_queues == {into.id: tag.id, f"park:{tag.id}": tag.id}
    assert into.id not in plan.queue_members


def test_a_funnel_with_no_way_out_holds_its_input_as_a_disabled_processor_does() -> None:
    """Connections into a funnel with no outgoing connection are queues it never reads; a
    funnel with no connection at all is a stage with no input; explain says both."""
    flow = Flow("held")
    gen = flow.add(GenerateFlowFile(), name="gen")
    hold = flow.funnel("hold")
    flow.funnel("lone")
    into = flow.connect(gen, hold)
    compiled = compile_flow(flow)
    assert compiled.durable[into.id] == (DurableReason.INTO_DEAD_END,)
    plan = compiled.plans[compiled.stage_of(hold).id]
    assert plan.disabled_queues == {into.id: hold.id, f"park:{hold.id}": hold.id}
    text = explain(compiled)
    assert "Funnel 'hold' (no outgoing connection)" in text
    assert "gen -[success]-> hold (durable: feeds a funnel with no outgoing connection)" in text
    assert "input: none (a funnel with no incoming connection never runs)" in text


def test_a_processors_default_auto_terminated_relationship_is_dropped_unless_connected() -> None:
    """The plan drops a relationship the processor auto-terminates by default, not one a
    connection takes; a queue holding FlowFiles is durable though nothing else makes it so."""
    flow = Flow("tee")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tee = flow.add(Tee(), name="tee")
    flow.connect(gen, tee)
    flow.auto_terminate(tee, "success")
    (member,) = [m for p in compile_flow(flow).plans.values() for m in p.members if m.name == "tee"]
    assert member.dropped == {"success", "copies"}
    log = flow.add(LogAttribute(), name="log")
    copies = flow.connect(tee, log, "copies")
    flow.auto_terminate(log, "success")
    (member,) = [m for p in compile_flow(flow).plans.values() for m in p.members if m.name == "tee"]
    assert member.dropped == {"success"}
    held = compile_flow(flow, holding={copies.id})
    assert held.durable == {copies.id: (DurableReason.HOLDS_FLOWFILES,)}
    assert compile_flow(flow).durable == {}


def test_a_scheduled_processor_runs_in_a_stage_of_its_own() -> None:
    """A Run Schedule (period or cron) on a processor with input cuts the connections around it."""
    flow = Flow("paced")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag", run_schedule="5 min")
    log = flow.add(
        LogAttribute(), name="log", scheduling_strategy="CRON_DRIVEN", run_schedule="0 0 * * * ?"
    )
    flow.connect(gen, tag)
    flow.connect(tag, log)
    flow.auto_terminate(log, "success")
    compiled = compile_flow(flow)
    assert all(DurableReason.SCHEDULED in r for r in compiled.durable.values())
    assert [s.members for s in compiled.stages] == [(gen.id,), (tag.id,), (log.id,)]
    plan = compiled.plans[compiled.stage_of(log).id]
    assert [m.cron for m in plan.scheduled_members] == ["0 0 * * * ?"]
    text = explain(compiled)
    assert "UpdateAttribute 'tag' every 5 min (continuous runs)" in text
    assert "LogAttribute 'log' on cron '0 0 * * * ?' (continuous runs)" in text


def test_explain_shows_retry_durations_and_load_balancing() -> None:
    """Retry, penalty and yield settings and a non-default load balance strategy are shown."""
    flow = Flow("nifi")
    gen = flow.add(GenerateFlowFile(), name="gen")
    log = flow.add(
        LogAttribute(),
        name="log",
        penalty_duration="5 sec",
        yield_duration="2 sec",
        retry=RetrySettings(["success"], count=3, backoff_mechanism="YIELD_PROCESSOR"),
    )
    flow.connect(
        gen, log, load_balance_strategy="PARTITION_BY_ATTRIBUTE", partitioning_attribute="k"
    )
    flow.auto_terminate(log, "success")
    text = flow.explain()
    assert (
        "LogAttribute 'log' penalty 5 sec, LogAttribute 'log' yield 2 sec, LogAttribute 'log' "
        "retries success x3 (yield processor, backoff up to 10 mins)"
    ) in text
    assert (
        "      load balance: PARTITION_BY_ATTRIBUTE on 'k' (Spark spreads every stage over its "
        "tasks)"
    ) in text
    assert (
        "  pipelined: gen -[success]-> log [load balance PARTITION_BY_ATTRIBUTE on 'k': Spark "
        "spreads every stage over its tasks]"
    ) in explain(compile_flow(flow))


DRIVER_NOTE = (
    "in the driver: runs taking at most 20,000 queued FlowFiles / 16 MB (a Spark job's "
    "scheduling costs more than they do; settings driver_run_max_flowfiles, driver_run_max_size)"
)


def test_explain_on_spark_says_which_runs_of_a_queue_fed_stage_go_to_the_driver() -> None:
    """On Spark the stage after the durable queue gets one line: its small runs run in the
    driver, why, and the settings that change it; the source stage gets none."""
    flow, _ = web_logs()
    assert explain(compile_flow(flow), runner="spark") == "\n".join(
        [
            "flow 'web-logs': 2 stage(s)",
            "stage-1: GenerateFlowFile 'gen' -> SplitText 'split' -> UpdateAttribute 'tag'",
            "  input: source work",
            "  output: tag -[success]-> merge (durable: feeds a binning processor)",
            "stage-2: MergeContent 'merge' -> LogAttribute 'log'",
            "  input: tag -[success]-> merge (durable: feeds a binning processor)",
            f"  {DRIVER_NOTE}",
        ]
    )


def test_explain_has_no_driver_note_on_the_direct_runner_nor_without_a_runner() -> None:
    """The direct runner runs every stage in the driver anyway; an unknown runner says nothing;
    a limit of 0 sends every run to Spark."""
    compiled = compile_flow(web_logs()[0])
    assert "in the driver" not in explain(compiled, runner="direct")
    assert "in the driver" not in explain(compiled)
    off = Settings(driver_run_max_flowfiles=0)
    assert "in the driver" not in explain(compiled, runner="spark", settings=off)


def test_the_driver_note_quotes_the_settings_values() -> None:
    """The limits in the note are the run's settings, not the defaults."""
    settings = Settings(driver_run_max_flowfiles=5_000, driver_run_max_size="2 MB")
    text = explain(compile_flow(web_logs()[0]), runner="spark", settings=settings)
    assert "in the driver: runs taking at most 5,000 queued FlowFiles / 2 MB (" in text


def test_a_stage_with_sources_and_a_queue_notes_that_only_runs_without_source_work_qualify() -> (
    None
):
    """A stage that also starts at a source sends a run with source work to Spark whatever its
    size, and its note says so; a stage whose queue feeds only a disabled processor never
    runs and gets no note."""
    flow = Flow("loop")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    route = flow.add(RouteOnAttribute(again="${retry:equals('yes')}"), name="route")
    off = flow.add(LogAttribute(), name="off", disabled=True)
    flow.connect(gen, tag)
    flow.connect(tag, route)
    flow.connect(route, tag, "again")  # closes a cycle: a durable queue into the source's stage
    flow.connect(route, off, "unmatched")
    flow.auto_terminate(off, "success")
    compiled = compile_flow(flow)
    notes = stage_notes(compiled, compiled.stage_of(gen), runner="spark")
    assert "in the driver: runs taking no source work and at most 20,000 queued" in notes[-1]
    disabled = stage_notes(compiled, compiled.stage_of(off), runner="spark")
    assert not [n for n in disabled if "in the driver" in n]


def test_a_map_cache_named_through_a_parameter_makes_its_processor_serial() -> None:
    """A processor naming a map cache through ``#{name}`` gets a stage of its own, as when it
    names it directly; one naming a configuration-only service (SSL) stays in its stage."""
    from flowcore.services import MapCacheService
    from processors import DetectDuplicate

    flow = Flow("dedupe", parameters={"cache": "seen"})
    flow.add_service(MapCacheService("seen"))
    gen = flow.add(GenerateFlowFile(), name="gen")
    dedupe = flow.add(
        DetectDuplicate(distributed_cache_service="#{cache}", cache_entry_identifier="${uuid}"),
        name="dedupe",
    )
    into = flow.connect(gen, dedupe)
    flow.auto_terminate(dedupe, ["duplicate", "non-duplicate", "failure"])
    compiled = compile_flow(flow)
    assert compiled.durable[into.id] == (DurableReason.SERIAL,)
    assert [compiled.plans[s.id].serial for s in compiled.stages] == [False, True]


def test_a_processor_whose_kind_depends_on_its_input_is_settled_per_flow() -> None:
    """GenerateTableFetch (INPUT_ALLOWED) is a source alone and, fed by a connection, a
    per-FlowFile processor in a serial stage of its own; its configured instance is unchanged."""
    flow = Flow("gtf")
    flow.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": "jdbc:sqlite:x"}))
    pool = {"Database Connection Pooling Service": "dbcp"}
    alone = flow.add(GenerateTableFetch(**pool, table_name="t"), name="alone")
    gen = flow.add(GenerateFlowFile(), name="gen")
    fed = flow.add(GenerateTableFetch(**pool, table_name="${table}"), name="fed")
    into = flow.connect(gen, fed)
    flow.auto_terminate(alone, ["success", "failure"])
    flow.auto_terminate(fed, ["success", "failure"])
    compiled = compile_flow(flow)
    assert flow.kind_of(alone) is ProcessorKind.SOURCE
    assert flow.kind_of(fed) is ProcessorKind.PER_FLOWFILE
    assert compiled.durable[into.id] == (DurableReason.SERIAL,)
    members = {m.name: m for p in compiled.plans.values() for m in p.members}
    assert members["alone"].kind is ProcessorKind.SOURCE
    assert members["fed"].kind is ProcessorKind.PER_FLOWFILE
    assert compiled.plans[compiled.stage_of(fed).id].serial
    assert not compiled.plans[compiled.stage_of(alone).id].serial
    assert fed.processor is not None
    assert fed.processor.kind is ProcessorKind.SOURCE
    assert "GenerateTableFetch 'fed' triggers serially" in explain(compiled)
