"""Tests for flow validation: every problem found at once, each named with its fix."""

from __future__ import annotations

import socket
import threading

import pytest

from flowcore.builder import Flow
from flowcore.controller_service import ControllerService
from flowcore.definition.component_settings import RetrySettings
from flowcore.definition.validation import CHECKS, problems_of
from flowcore.errors import FlowValidationError
from flowcore.parameters import Parameter, ParameterContext
from flowcore.processor import InputRequirement, Processor
from flowcore.processor.relationship import SUCCESS, Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR
from processors import GenerateFlowFile, LogAttribute, SplitText, UpdateAttribute


def valid_flow() -> Flow:
    flow = Flow("ok")
    gen = flow.add(GenerateFlowFile(), name="gen")
    split = flow.add(SplitText(line_split_count=1), name="split")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(gen, split)
    flow.connect(split, log, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(log, "success")
    return flow


def test_a_valid_flow_passes() -> None:
    """A complete flow validates quietly."""
    flow = valid_flow()
    flow.validate()
    assert problems_of(flow) == []


def test_every_problem_is_reported_at_once() -> None:
    """One error lists bad properties, relationships, inputs and queue settings together."""
    flow = Flow("broken")
    gen = flow.add(GenerateFlowFile(), name="gen")
    split = flow.add(SplitText(), name="split")  # Line Split Count is required
    log = flow.add(LogAttribute(), name="log")
    flow.add(UpdateAttribute(), name="orphan")
    flow.connect(gen, split, back_pressure_object_threshold=-1, flowfile_expiration="soon")
    flow.connect(split, log, "splitz")
    flow.connect(log, gen)  # GenerateFlowFile is a source
    flow.auto_terminate(log, "nonsense")
    with pytest.raises(FlowValidationError) as caught:
        flow.validate()
    text = str(caught.value)
    problems = [str(p) for p in caught.value.problems]
    assert "flow 'broken' is invalid" in text
    expected = [
        "Line Split Count",
        "has no relationship 'splitz'",
        "Relationship 'splits' is not connected to any component and is not auto-terminated",
        "auto-terminates 'nonsense'",
        "requires an upstream connection",  # orphan
        "is a source and does not accept incoming connections",
        "back_pressure_object_threshold -1",
        "flowfile_expiration",
    ]
    for fragment in expected:
        assert any(fragment in p for p in problems), (fragment, problems)
    assert any(p.startswith("UpdateAttribute 'orphan'") for p in problems)


def test_an_ambiguous_connection_asks_for_its_relationship() -> None:
    """Connecting a multi-exit processor without naming relationships is a problem with a fix."""
    flow = valid_flow()
    split, log = flow.component("split"), flow.component("log")
    flow.connect(split, log)
    (problem,) = problems_of(flow)
    assert "names no relationship" in problem.problem
    assert problem.fix == "pass the relationship(s) to flow.connect()"


def test_a_dangling_funnel_is_valid_as_in_nifi() -> None:
    """A funnel with no outgoing or no incoming connection is no problem (NiFi's rule)."""
    flow = valid_flow()
    flow.funnel("lonely")
    hold = flow.funnel("hold")
    flow.connect(flow.component("log"), hold, "success")
    assert problems_of(flow) == []
    flow.auto_terminate(hold, "nonsense")
    (problem,) = problems_of(flow)
    assert problem.problem == "auto-terminates 'nonsense', which it does not have"


class _Tee(Processor):
    """Sends each FlowFile on and a copy to ``copies``, auto-terminated by default."""

    relationships = (SUCCESS, Relationship("copies", "extra copies", auto_terminated=True))

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        """Unused: validation never triggers it."""


def test_a_relationship_auto_terminated_by_default_needs_no_connection() -> None:
    """A relationship the processor declares auto-terminated passes; the others still count."""
    flow = Flow("tee")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tee = flow.add(_Tee(), name="tee")
    flow.connect(gen, tee)
    problems = [str(p) for p in problems_of(flow)]
    assert problems == [
        "_Tee 'tee': Relationship 'success' is not connected to any component and is not "
        "auto-terminated; connect it or call flow.auto_terminate('tee', 'success')"
    ]


def test_an_empty_flow_is_invalid() -> None:
    """A flow without processors says so."""
    (problem,) = problems_of(Flow("empty"))
    assert problem.problem == "has no processors"


def test_checks_are_an_explicit_ordered_registry() -> None:
    """Each check is a named function in CHECKS."""
    assert [c.__name__ for c in CHECKS][:2] == ["check_not_empty", "check_properties"]


def test_run_schedules_must_parse_on_any_processor() -> None:
    """A Run Schedule that does not parse is a problem; a period on any processor is honoured."""
    flow = Flow("scheduled")
    gen = flow.add(GenerateFlowFile(), name="gen", run_schedule="often")
    log = flow.add(LogAttribute(), name="log", run_schedule="1 min")
    flow.connect(gen, log)
    flow.auto_terminate(log, "success")
    found = {p.subject: p for p in problems_of(flow) if "run_schedule" in p.problem}
    assert set(found) == {str(gen)}
    assert found[str(gen)].fix == "e.g. '0 sec' or '1 min'"
    ok = Flow("fine")
    every = ok.add(GenerateFlowFile(), name="gen", run_schedule="1 min")
    ok.auto_terminate(every, "success")
    assert problems_of(ok) == []


def test_an_invalid_cron_schedule_is_one_line() -> None:
    """A CRON driven Run Schedule that does not parse is one problem naming the expression."""
    flow = Flow("cron")
    gen = flow.add(
        GenerateFlowFile(), name="gen", scheduling_strategy="CRON_DRIVEN", run_schedule="0 0 25 * *"
    )
    log = flow.add(
        LogAttribute(), name="log", scheduling_strategy="CRON_DRIVEN", run_schedule="0 0 * * * ?"
    )
    flow.connect(gen, log)
    flow.auto_terminate(log, "success")
    (problem,) = problems_of(flow)
    assert problem.subject == str(gen)
    assert "'0 0 25 * *' has 5 fields" in problem.problem
    assert "\n" not in str(problem)


def test_retry_and_durations_are_checked() -> None:
    """Retried relationships must exist; durations and the max backoff must parse."""
    flow = Flow("retry")
    gen = flow.add(GenerateFlowFile(), name="gen")
    log = flow.add(
        LogAttribute(),
        name="log",
        penalty_duration="soon",
        yield_duration="1 sec",
        retry=RetrySettings(["success", "nope"], count=-1, max_backoff_period="later"),
    )
    flow.connect(gen, log)
    flow.auto_terminate(log, "success")
    found = [p.problem for p in problems_of(flow)]
    assert any(p.startswith("penalty_duration:") for p in found)
    assert "retries relationship 'nope', which it does not have" in found
    assert "retry count -1 is not a whole number >= 0" in found
    assert any(p.startswith("max_backoff_period:") for p in found)
    assert len(found) == 4


def test_a_disabled_processor_is_not_validated_but_the_flow_around_it_is() -> None:
    """Missing properties and loose ends of a disabled processor pass; its connections do not."""
    flow = Flow("disabled")
    gen = flow.add(GenerateFlowFile(), name="gen")
    split = flow.add(SplitText(line_split_count="#{undefined}"), name="split", disabled=True)
    log = flow.add(LogAttribute(), name="log")
    flow.connect(gen, split)
    flow.connect(split, log, "nonsense")
    flow.auto_terminate(log, "success")
    found = [str(p) for p in problems_of(flow)]
    assert len(found) == 1
    assert "SplitText 'split' has no relationship 'nonsense'" in found[0]


class _Vault(LogAttribute):
    """LogAttribute with a sensitive property, to reference sensitive parameters from."""

    TOKEN = PropertyDescriptor("Token", sensitive=True, validators=POSITIVE_INTEGER_VALIDATOR)
    property_descriptors = (*LogAttribute.property_descriptors, TOKEN)


def test_parameter_problems_come_with_every_other_problem(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Undefined, unreadable and literal sensitive parameters are listed with the rest."""
    monkeypatch.delenv("FLOWCORE_TEST_UNSET", raising=False)
    parameters = ParameterContext(
        parameters=[
            Parameter("n", "2"),
            Parameter("literal", "hunter2", sensitive=True),
            Parameter("unset", sensitive=True, value_from_env="FLOWCORE_TEST_UNSET"),
        ]
    )
    flow = Flow("params", parameters=parameters)
    gen = flow.add(GenerateFlowFile(batch_size="#{n}"), name="gen")
    split = flow.add(SplitText(line_split_count="#{lines}"), name="split")
    log = flow.add(_Vault(token="#{unset}"), name="log")
    vault = flow.add(_Vault(token="#{literal}"), name="vault")
    flow.connect(gen, split)
    flow.connect(split, log, "splits")
    flow.connect(split, vault, "original")
    flow.auto_terminate(split, "failure")
    flow.auto_terminate(log, "success")
    found = [str(p) for p in problems_of(flow)]
    assert any("SplitText 'split'" in p and "parameter 'lines'" in p for p in found)
    assert any("'unset'" in p and "FLOWCORE_TEST_UNSET, which is not set" in p for p in found)
    assert any("'literal': is sensitive and its value is written in the flow" in p for p in found)
    assert any("_Vault 'vault'" in p and "Relationship 'success'" in p for p in found)
    assert not any("'Batch Size'" in p for p in found)


def test_sensitive_values_never_show_in_problems(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A sensitive value that fails a validator shows as ********."""
    monkeypatch.setenv("FLOWCORE_TEST_TOKEN", "not-a-number-hunter2")
    flow = Flow("p", parameters=ParameterContext(parameters=[
        Parameter("token", sensitive=True, value_from_env="FLOWCORE_TEST_TOKEN")
    ]))  # fmt: skip
    gen = flow.add(GenerateFlowFile(), name="gen")
    log = flow.add(_Vault(token="#{token}"), name="log")
    flow.connect(gen, log)
    flow.auto_terminate(log, "success")
    with pytest.raises(FlowValidationError) as caught:
        flow.validate()
    assert "'Token' validated against '********'" in str(caught.value)
    assert "hunter2" not in str(caught.value)


class _Holder:
    """An object holding something deeper down."""

    def __init__(self, held: object) -> None:
        self.held = held


def _flow_with(log: LogAttribute) -> Flow:
    flow = Flow("pickling")
    gen = flow.add(GenerateFlowFile(), name="gen")
    added = flow.add(log, name="log")
    flow.connect(gen, added)
    flow.auto_terminate(added, "success")
    return flow


def test_a_processor_that_cannot_be_pickled_names_the_attribute() -> None:
    """A socket held by a processor, or two levels down, is named with its type and the fix."""
    with socket.socket() as conn:
        log = LogAttribute()
        log.conn = conn  # type: ignore[attr-defined]
        [problem] = problems_of(_flow_with(log))
        assert problem.subject == "LogAttribute 'log'"
        assert problem.problem.startswith(
            "attribute 'conn' holds a socket.socket, which cannot be pickled to Spark executors"
        )
        assert "open it in on_scheduled" in problem.fix
        nested = LogAttribute()
        nested.clients = {"main": _Holder(conn)}  # type: ignore[attr-defined]
        [problem] = problems_of(_flow_with(nested))
        assert problem.problem.startswith("attribute \"clients['main'].held\" holds a socket")


def test_what_cloudpickle_ships_by_value_is_not_a_problem() -> None:
    """A lambda or a class defined in a function cannot be found by name, but Spark's
    cloudpickle ships it by value: no problem; a lock beside it still is."""

    class Local:
        pass

    log = LogAttribute()
    log.key = lambda flowfile: flowfile  # type: ignore[attr-defined]
    log.local = Local()  # type: ignore[attr-defined]
    assert problems_of(_flow_with(log)) == []
    log.guard = threading.Lock()  # type: ignore[attr-defined]
    [problem] = problems_of(_flow_with(log))
    assert "attribute 'guard' holds a _thread.lock" in problem.problem


# --- controller services -----------------------------------------------------------------------


class _Reader(ControllerService):
    """A record reader that names a schema registry."""

    implements = ("RecordReaderFactory",)
    REGISTRY = PropertyDescriptor("Schema Registry", identifies_service="SchemaRegistry")
    SECRET = PropertyDescriptor("Secret", sensitive=True)
    LIMIT = PropertyDescriptor("Limit", validators=POSITIVE_INTEGER_VALIDATOR)
    property_descriptors = (REGISTRY, SECRET, LIMIT)


class JsonRecordSetWriter(ControllerService):
    """A writer (of the wrong interface for a reader's property)."""

    implements = ("RecordSetWriterFactory",)


class _Registry(ControllerService):
    """A schema registry that may name a reader (to make a cycle)."""

    implements = ("SchemaRegistry",)
    READER = PropertyDescriptor("Reader", identifies_service="RecordReaderFactory")
    property_descriptors = (READER,)


class _ReadRecords(Processor):
    """Names a record reader."""

    READER = PropertyDescriptor(
        "Record Reader", required=True, identifies_service="RecordReaderFactory"
    )
    property_descriptors = (READER,)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.INPUT_ALLOWED


def _service_flow(reader: str, *services: ControllerService) -> Flow:
    flow = valid_flow()
    for service in services:
        flow.add_service(service)
    read = flow.add(_ReadRecords(record_reader=reader), name="read")
    flow.auto_terminate(read, "success")
    return flow


def test_a_service_of_the_wrong_interface_is_named_with_its_type() -> None:
    """A property asking for a RecordReaderFactory naming a writer says so, naming both."""
    flow = _service_flow("w", JsonRecordSetWriter("w"))
    assert [str(p) for p in problems_of(flow)] == [
        "_ReadRecords 'read': 'Record Reader' names service 'w' of type JsonRecordSetWriter, "
        "which is not a RecordReaderFactory; name a service implementing RecordReaderFactory"
    ]


def test_service_problems_come_all_at_once_with_the_flows_others() -> None:
    """A missing service, a service's invalid property (its secret masked), a service naming
    a service it lacks, and the flow's other problems, in one report."""
    flow = _service_flow(
        "reader", _Reader("reader", schema_registry="nowhere", secret="hunter2", limit="-1")
    )
    flow.add(SplitText(), name="broken")
    problems = [str(p) for p in problems_of(flow)]
    text = "\n".join(problems)
    assert "hunter2" not in text
    assert "_Reader service 'reader': 'Limit' validated against '-1' is invalid" in text
    assert (
        "_Reader service 'reader': 'Schema Registry' names service 'nowhere', which flow "
        "'ok' does not declare (it has ['reader']); declare it: flow.add_service(<a "
        "SchemaRegistry>('nowhere'))"
    ) in problems
    assert any(p.startswith("SplitText 'broken'") for p in problems)


def test_services_naming_each_other_in_a_cycle_are_named() -> None:
    """A reader naming a registry naming the reader is one problem naming the cycle."""
    flow = _service_flow(
        "reader",
        _Reader("reader", schema_registry="registry"),
        _Registry("registry", reader="reader"),
    )
    assert [str(p) for p in problems_of(flow)] == [
        "service 'reader': services name each other in a cycle ('reader' -> 'registry' -> "
        "'reader'), so none can be enabled first; break the cycle: one of them must not name "
        "the other"
    ]


def test_a_sensitive_service_parameter_is_checked_as_a_processors() -> None:
    """A service property referencing an undefined parameter is a problem of the service."""
    flow = _service_flow("reader", _Reader("reader", limit="#{limit}"))
    assert next(str(p) for p in problems_of(flow)).startswith(
        "_Reader service 'reader': 'Limit' validated against '#{limit}' is invalid because "
        "it references parameter 'limit', which is not defined"
    )
