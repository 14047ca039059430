"""Tests for flowcore.nifi.python_source: flows written back as Python flow files."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from flowcore.builder import Flow
from flowcore.definition.component_settings import RetrySettings
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import FlowDefinitionError
from flowcore.nifi.python_source import flow_to_python
from flowcore.parameters import Parameter, ParameterContext
from flowcore.processor import Processor
from flowcore.processor.relationship import SUCCESS
from processors import MergeContent, PutFile, RouteOnAttribute, SplitText, UpdateAttribute
from processors.update_attribute import Rule
from tests.flowcore.nifi.flow_strategies import flows


def executed(source: str) -> FlowDefinition:
    """The module-level ``flow`` of *source*, run as a flow file is."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "converted.py", "exec"), namespace)
    return namespace["flow"]


def sample() -> Flow:
    """A flow using keywords, display names, rules, settings and queue settings."""
    flow = Flow("sample", parameters={"out": "/tmp/out"})
    split = flow.add(SplitText(line_split_count=10), name="split lines", concurrent_tasks=2)
    tag = flow.add(
        UpdateAttribute(
            rules=[Rule("big", ["${fileSize:gt(9)}"], {"size": "big"})], **{"a b": "1"}
        ),
        name="tag",
        retry=RetrySettings(["success"], count=3),
    )
    route = flow.add(RouteOnAttribute(big="${size:equals('big')}"), name="route", disabled=True)
    funnel = flow.funnel("join")
    put = flow.add(PutFile(directory="#{out}"), name="put", penalty_duration="5 sec")
    flow.connect(split, tag, "splits", prioritizers=["OldestFlowFileFirstPrioritizer"])
    flow.connect(tag, route)
    flow.connect(route, funnel, ["big", "unmatched"], name="all")
    flow.connect(funnel, put, durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_written_flow_equals_the_flow() -> None:
    """Executing the written file gives a flow with the same structure."""
    flow = sample()
    assert executed(flow_to_python(flow)).describe_structure() == flow.describe_structure()


def test_written_flow_reads_as_a_person_writes_one() -> None:
    """Imports, keyword properties, display names where no keyword fits, only non-defaults."""
    source = flow_to_python(sample(), origin="sample.py")
    assert source.startswith('"""The flow "sample", written by flowcore convert from sample.py.')
    assert "from flowcore import Flow, RetrySettings" in source
    assert "from processors import PutFile, RouteOnAttribute, SplitText, UpdateAttribute" in source
    assert "from processors.update_attribute import Rule" in source
    assert 'flow = Flow("sample", parameters={"out": "/tmp/out"})' in source
    assert 'SplitText(line_split_count="10")' in source
    assert '**{"a b": "1"}' in source
    assert 'join = flow.funnel("join")' in source
    assert "flow.connect(join, put, durable=True)" in source
    assert 'flow.auto_terminate(split_lines, ["failure", "original"])' in source
    assert "concurrent_tasks=1" not in source  # defaults are left out


def test_sensitive_values_are_never_written() -> None:
    """A sensitive parameter keeps its source; a value written in the flow is dropped."""
    context = ParameterContext(
        "secrets",
        parameters=[
            Parameter("token", "hunter2", sensitive=True),
            Parameter("key", value_from_env="KEY", sensitive=True),
        ],
    )
    flow = Flow("s", parameters=context)
    flow.add(SplitText(line_split_count=1), name="split")
    source = flow_to_python(flow)
    assert "hunter2" not in source
    assert 'value_from_env="KEY"' in source
    assert executed(source).same_as(flow)


def test_queue_settings_equal_to_defaults_stay_set() -> None:
    """A connection given default queue settings keeps them (they make it durable)."""
    flow = Flow("q")
    split = flow.add(SplitText(line_split_count=1), name="split")
    merge = flow.add(MergeContent(), name="merge")
    flow.connect(split, merge, "splits", back_pressure_object_threshold=10_000)
    written = executed(flow_to_python(flow))
    assert written.connections[0].settings is not None


class Local(Processor):
    """A processor class that lives in the flow file itself."""

    relationships = (SUCCESS,)


Local.__module__ = "flowcore_flow_myflow"


def test_processor_defined_in_the_flow_file_is_refused() -> None:
    """A class another file cannot import is named, with the fix."""
    flow = Flow("local")
    flow.add(Local(), name="mine")
    with pytest.raises(FlowDefinitionError, match="Local is defined in the flow file itself"):
        flow_to_python(flow)


def test_names_that_are_not_python_get_variables() -> None:
    """Component names with spaces, digits or keywords become valid, unique variables."""
    flow = Flow("v")
    flow.add(SplitText(line_split_count=1), name="1 split")
    flow.add(SplitText(line_split_count=1), name="class")
    flow.add(SplitText(line_split_count=1), name="flow")
    source = flow_to_python(flow)
    assert "c_1_split = flow.add(" in source
    assert "class_ = flow.add(" in source
    assert "flow_2 = flow.add(" in source
    assert executed(source).same_as(flow)


@given(flows())
def test_any_flow_written_as_python_equals_itself(flow: Flow) -> None:
    """Every random small flow survives being written as Python and executed."""
    source = flow_to_python(flow)
    assert executed(source).describe_structure() == flow.describe_structure()
    assert flow_to_python(executed(source)) == source  # writing is a fixpoint


def test_services_are_declared_before_the_processors_that_name_them() -> None:
    """A flow's map cache services are written as ``flow.add_service(...)`` calls, so the
    written file declares what DetectDuplicate names and equals the flow."""
    from flowcore.services import MapCacheService
    from processors import DetectDuplicate

    flow = Flow("dedupe")
    flow.add_service(MapCacheService("seen", maximum_cache_entries=500, eviction_strategy="LRU"))
    detect = flow.add(DetectDuplicate(distributed_cache_service="seen"), name="detect")
    flow.auto_terminate(detect, ["duplicate", "non-duplicate", "failure"])
    source = flow_to_python(flow)
    assert "from flowcore.services import MapCacheService" in source
    assert 'eviction_strategy="Least Recently Used"' in source
    written = executed(source)
    assert written.services == flow.services
    assert written.describe_structure() == flow.describe_structure()


def test_ids_other_than_the_derived_ones_are_written() -> None:
    """NiFi's identifiers survive a conversion (queues hang on them); derived ids are left out."""
    flow = Flow("ids")
    split = flow.add(SplitText(line_split_count=1), name="split", id="0b7e-split")
    join = flow.funnel("join", id="0b7e-join")
    put = flow.add(PutFile(directory="/tmp/out"), name="put")
    flow.connect(split, join, "splits", id="0b7e-link")
    flow.connect(join, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    source = flow_to_python(flow)
    written = executed(source)
    assert [c.id for c in written.components] == ["0b7e-split", "0b7e-join", "put"]
    assert [c.id for c in written.connections] == ["0b7e-link", "0b7e-join:success->put"]
    assert source.count("id=") == 3


def test_any_service_is_written_with_its_properties_but_no_secret() -> None:
    """A user's service is written as its class called with its name and properties (dynamic
    ones too); a sensitive value is left out, a parameter reference kept."""
    from tests.flowcore.nifi._nifi_json import KeyValueLookup

    flow = Flow("lookups")
    flow.add_service(KeyValueLookup("back", token="hunter2", b="2"))
    flow.add_service(KeyValueLookup("front", fallback_lookup="back", token="#{token}"), id="f1")
    source = flow_to_python(flow)
    assert "hunter2" not in source
    assert "from tests.flowcore.nifi._nifi_json import KeyValueLookup" in source
    assert 'KeyValueLookup("back", **{"b": "2"})' in source
    written = executed(source)
    assert written.services["front"] == flow.services["front"]
    assert written.service_ids == {"front": "f1"}
