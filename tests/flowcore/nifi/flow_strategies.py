"""Hypothesis strategies for small random flows, for the export and conversion tests.

Flows of the processors on main (GenerateFlowFile, GetFile, SplitText, UpdateAttribute with
dynamic properties and rules, RouteOnAttribute, MergeContent, LogAttribute, PutFile,
FileSplitter), funnels, connections with random queue and NiFi settings, auto-terminations,
per-processor settings and a parameter context with an inherited one. They need not be valid
flows: export and conversion write what was declared.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from flowcore.builder import Flow
from flowcore.definition.component_settings import (
    BackoffMechanism,
    LoadBalanceStrategy,
    Prioritizer,
    RetrySettings,
    SchedulingStrategy,
)
from flowcore.parameters import Parameter, ParameterContext
from processors import (
    FileSplitter,
    GenerateFlowFile,
    GetFile,
    LogAttribute,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from processors.update_attribute import Rule

# Text NiFi values may hold: quotes, backslashes, parameter references, non-ASCII.
texts = st.sampled_from(
    ["", "a", "x y", "#{dir}", "${filename}", 'say "hi"', "it's", "back\\slash", "é→", "1 min"]
)
names = st.text(alphabet="abcXYZ _-.1é", min_size=1, max_size=8).filter(lambda s: s.strip())
periods = st.sampled_from(["0 sec", "1 sec", "30 secs", "5 min", "250 millis"])


@st.composite
def processors(draw: Any) -> Any:
    """One configured processor of the types on main."""
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return GenerateFlowFile(custom_text=draw(texts), batch_size=str(draw(st.integers(1, 9))))
    if kind == 1:
        return GetFile(input_directory=draw(texts) or "in", keep_source_file=draw(st.booleans()))
    if kind == 2:
        return SplitText(line_split_count=draw(st.integers(0, 100)))
    if kind == 3:
        dynamic = draw(st.dictionaries(names, texts, max_size=3))
        rules = draw(
            st.lists(
                st.builds(
                    Rule,
                    name=names,
                    conditions=st.lists(st.sampled_from(["${a:equals('b')}", "${x:isEmpty()}"])),
                    actions=st.dictionaries(names, texts, max_size=2),
                    comments=st.sampled_from(["", "why"]),
                ),
                max_size=2,
            )
        )
        policy = draw(st.sampled_from(["USE_CLONE", "USE_ORIGINAL"]))
        return UpdateAttribute(rules=rules, flowfile_policy=policy, **dynamic)
    if kind == 4:
        return RouteOnAttribute(**draw(st.dictionaries(names, texts, min_size=1, max_size=3)))
    if kind == 5:
        return MergeContent(minimum_number_of_entries=draw(st.integers(1, 50)), max_bin_age="1 min")
    if kind == 6:
        return LogAttribute()
    if kind == 7:
        return PutFile(directory=draw(texts) or "out")
    return FileSplitter(input_directory="in")


@st.composite
def add_settings(draw: Any) -> dict[str, Any]:
    """Flow.add's NiFi settings, each left at its default or drawn."""
    settings: dict[str, Any] = {}
    if draw(st.booleans()):
        settings["concurrent_tasks"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        cron = draw(st.booleans())
        settings["scheduling_strategy"] = (
            SchedulingStrategy.CRON_DRIVEN if cron else SchedulingStrategy.TIMER_DRIVEN
        )
        settings["run_schedule"] = "0 0 * * * ?" if cron else draw(periods)
    if draw(st.booleans()):
        settings["penalty_duration"] = draw(periods)
    if draw(st.booleans()):
        settings["yield_duration"] = draw(periods)
    settings["disabled"] = draw(st.booleans())
    if draw(st.booleans()):
        settings["retry"] = RetrySettings(
            relationships=draw(st.lists(st.sampled_from(["failure", "success"]), min_size=1)),
            count=draw(st.integers(1, 10)),
            backoff_mechanism=draw(st.sampled_from(list(BackoffMechanism))),
            max_backoff_period=draw(periods),
        )
    settings["comments"] = draw(st.sampled_from(["", "a comment", "two\nlines"]))
    return settings


@st.composite
def connect_settings(draw: Any) -> dict[str, Any]:
    """Flow.connect's queue and NiFi settings, each left at its default or drawn."""
    settings: dict[str, Any] = {}
    if draw(st.booleans()):
        settings["back_pressure_object_threshold"] = draw(st.sampled_from([0, 5, 10_000]))
    if draw(st.booleans()):
        settings["back_pressure_data_size_threshold"] = draw(st.sampled_from(["1 GB", "10 MB"]))
    if draw(st.booleans()):
        settings["flowfile_expiration"] = draw(periods)
    if draw(st.booleans()):
        settings["prioritizers"] = draw(st.lists(st.sampled_from(list(Prioritizer)), max_size=2))
    settings["durable"] = draw(st.booleans())
    settings["name"] = draw(st.sampled_from(["", "queue"]))
    if draw(st.booleans()):
        settings["load_balance_strategy"] = LoadBalanceStrategy.PARTITION_BY_ATTRIBUTE
        settings["partitioning_attribute"] = "key"
    return settings


@st.composite
def parameter_contexts(draw: Any, name: str) -> ParameterContext:
    """A context with plain, described and sensitive parameters, maybe inheriting one."""
    own = {
        p: draw(texts) for p in draw(st.lists(st.sampled_from(["dir", "n", "x y"]), unique=True))
    }
    parameters = [Parameter(k, v) for k, v in own.items()]
    if draw(st.booleans()):
        parameters.append(Parameter("secret", value_from_env="SECRET", sensitive=True))
    if draw(st.booleans()):
        parameters.append(Parameter("described", "v", description="what it is"))
    inherited = []
    if draw(st.booleans()):
        inherited.append(ParameterContext("base", "shared", parameters={"dir": "/data"}))
    return ParameterContext(name, parameters=parameters, inherited=inherited)


@st.composite
def flows(draw: Any) -> Flow:
    """A small flow: processors and funnels, connections among them, auto-terminations."""
    name = draw(names)
    flow = Flow(name, parameters=draw(parameter_contexts(name)))
    components = []
    for n in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 5)) == 0:
            components.append(flow.funnel(f"funnel {n}"))
        else:
            components.append(flow.add(draw(processors()), name=f"p{n}", **draw(add_settings())))
    for _ in range(draw(st.integers(0, 5))):
        source = draw(st.sampled_from(components))
        destination = draw(st.sampled_from(components))
        exits = source.relationship_names()
        chosen = draw(st.lists(st.sampled_from(exits), min_size=1, max_size=2, unique=True))
        flow.connect(source, destination, chosen, **draw(connect_settings()))
    for component in components:
        if component.processor is not None and draw(st.booleans()):
            exits = component.relationship_names()
            flow.auto_terminate(component, draw(st.lists(st.sampled_from(exits), max_size=2)))
    return flow
