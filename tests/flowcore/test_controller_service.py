"""Tests for controller services: definitions, runtime copies, enabling order, use in flows."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from flowcore import Flow, Processor, Relationship
from flowcore.controller_service import (
    ControllerService,
    ServiceContext,
    ServiceSet,
    disable_process_services,
    enabled_service,
    enabling_order,
    service_cycles,
)
from flowcore.driver.controller import run_flow
from flowcore.errors import ConfigurationError, FlowDefinitionError
from flowcore.parameters import Parameter
from flowcore.properties import PropertyDescriptor
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from flowcore.ssl_context import StandardSSLContextService
from flowcore.testing import TestRunner
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR
from processors import GenerateFlowFile, PutFile

#: Every ``on_enabled`` / ``on_disabled`` of the services below, in order (this process).
EVENTS: list[str] = []


class LookupTable(ControllerService):
    """A key/value table read from a JSON file when enabled (a user's lookup service)."""

    implements = ("LookupService", "StringLookupService")
    nifi_types = ("com.example.LookupTable",)
    TABLE_FILE = PropertyDescriptor("Table File", required=True)
    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    MAX_ROWS = PropertyDescriptor("Max Rows", default="100", validators=POSITIVE_INTEGER_VALIDATOR)
    FALLBACK = PropertyDescriptor("Fallback Service", identifies_service="LookupService")
    property_descriptors = (TABLE_FILE, PASSWORD, MAX_ROWS, FALLBACK)

    def on_enabled(self, context: ServiceContext) -> None:
        EVENTS.append(f"enable {self.name}")
        with open(context.get_property(self.TABLE_FILE).value or "") as handle:
            self.table = json.load(handle)
        self.pid = os.getpid()
        fallback = context.get_property(self.FALLBACK).value
        self.fallback = context.controller_service(fallback) if fallback else None

    def on_disabled(self) -> None:
        EVENTS.append(f"disable {self.name}")

    def lookup(self, key: str) -> str | None:
        found = self.table.get(key)
        if found is None and self.fallback is not None:
            return self.fallback.lookup(key)
        return found


class Writer(ControllerService):
    """A service of another interface (to name a mismatch)."""

    implements = ("RecordSetWriterFactory",)


SUCCESS = Relationship("success", "Looked up")


class LookupAttribute(Processor):
    """Writes the value its lookup service has for attribute ``code`` as the content."""

    SERVICE = PropertyDescriptor(
        "Lookup Service", required=True, identifies_service="LookupService"
    )
    property_descriptors = (SERVICE,)
    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS,)

    def on_trigger(self, context: Any, session: Any) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        service = session.controller_service(context.get_property(self.SERVICE).value)
        value = service.lookup(flowfile.attributes.get("code", ""))
        flowfile = session.write(flowfile, f"{value}|{service.pid}".encode())
        session.transfer(flowfile, SUCCESS)


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"a": "alpha", "b": "beta"}))
    return path


@pytest.fixture(autouse=True)
def _clean() -> Any:
    EVENTS.clear()
    yield
    disable_process_services()


# --- definitions -------------------------------------------------------------------------------


def test_properties_are_taken_by_display_name_internal_name_and_keyword(table: Path) -> None:
    """A service takes properties as processors do, and reads defaults and values back."""
    by_key = LookupTable("t", table_file=str(table), max_rows=5)
    by_name = LookupTable("t", **{"Table File": str(table), "Max Rows": "5"})
    assert by_key == by_name
    assert by_key.get_property("Max Rows").as_integer() == 5
    assert LookupTable("t", table_file="x").get_property(LookupTable.MAX_ROWS).value == "100"


def test_validate_returns_every_problem_at_once() -> None:
    """Missing required values, bad values and unknown names are all reported."""
    problems = LookupTable("t", max_rows="-1", colour="red").validate()
    text = " ".join(str(p) for p in problems)
    assert "'colour' is not a supported property of LookupTable" in text
    assert "Table File is required" in text
    assert "Max Rows" in text
    assert len(problems) == 3


def test_a_definition_is_frozen_and_hashable(table: Path) -> None:
    """Setting an attribute on a definition fails, naming on_enabled; equal ones hash alike."""
    service = LookupTable("t", table_file=str(table))
    with pytest.raises(attrs.exceptions.FrozenInstanceError, match="on_enabled"):
        service.table = {}  # type: ignore[attr-defined]
    assert hash(service) == hash(LookupTable("t", table_file=str(table)))


def test_sensitive_values_never_show_in_repr_or_the_recorded_fingerprint() -> None:
    """A sensitive property's value is masked in repr and left out of the fingerprint a
    repository records of the flow."""
    service = LookupTable("t", table_file="x", password="hunter2")
    assert "hunter2" not in repr(service)
    assert "********" in repr(service)
    assert "hunter2" not in service.fingerprint()
    assert "Table File" in service.fingerprint()


class DriverOptions(ControllerService):
    """Takes driver options as dynamic properties, ``SENSITIVE.`` ones secrets (as DBCP's)."""

    supports_dynamic_properties: ClassVar = True
    URL = PropertyDescriptor("URL")
    property_descriptors: ClassVar = (URL,)

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        return PropertyDescriptor(name, sensitive=name.startswith("SENSITIVE."), dynamic=True)


def test_sensitive_dynamic_properties_are_secrets_of_any_service() -> None:
    """The base class redacts and leaves out of the fingerprint every value its dynamic
    descriptor calls sensitive, not only declared ones (no override needed)."""
    service = DriverOptions("d", url="db://x", **{"SENSITIVE.key": "hunter2", "timeout": "5"})
    assert service.sensitive_values() == ["hunter2"]
    assert service.sensitive_names() == {"SENSITIVE.key"}
    assert "hunter2" not in service.fingerprint()
    assert "timeout" in service.fingerprint()


def test_a_service_property_takes_the_service_itself(table: Path) -> None:
    """A processor's service property given the service object keeps its name (the handle)."""
    service = LookupTable("codes", table_file=str(table))
    assert LookupAttribute(lookup_service=service).configured["Lookup Service"] == "codes"


# --- runtime -----------------------------------------------------------------------------------


def test_enable_runs_on_enabled_on_a_runtime_copy(table: Path) -> None:
    """The definition stays untouched; the runtime copy holds what on_enabled opened."""
    service = LookupTable("t", table_file=str(table))
    runtime = service.enable(ServiceContext(service))
    assert runtime.is_enabled
    assert not service.is_enabled
    assert runtime.lookup("a") == "alpha"  # type: ignore[attr-defined]
    assert not hasattr(service, "table")


def test_a_runtime_copy_pickles_as_its_definition_only(table: Path) -> None:
    """What on_enabled opened is not pickled: the copy arrives as a definition, to enable."""
    service = LookupTable("t", table_file=str(table))
    runtime = service.enable(ServiceContext(service))
    shipped = pickle.loads(pickle.dumps(runtime))
    assert shipped == service
    assert not shipped.is_enabled
    assert not hasattr(shipped, "table")
    assert shipped.enable(ServiceContext(shipped)).lookup("b") == "beta"  # type: ignore[attr-defined]


def test_a_failing_on_enabled_is_one_line_naming_the_service_without_secrets(
    tmp_path: Path,
) -> None:
    """on_enabled's error names the service; a sensitive value in it is masked."""
    missing = tmp_path / "hunter2.json"
    service = LookupTable("t", table_file=str(missing), password="hunter2")
    with pytest.raises(ConfigurationError, match=r"service 't' \(LookupTable\) could not be") as e:
        service.enable(ServiceContext(service))
    assert "hunter2" not in str(e.value)


def test_dependencies_are_enabled_first_and_disabled_last(table: Path) -> None:
    """A service naming another is enabled after it and disabled before it."""
    services = {
        "front": LookupTable("front", table_file=str(table), fallback_service="back"),
        "back": LookupTable("back", table_file=str(table)),
    }
    assert enabling_order(services) == ["back", "front"]
    held = ServiceSet(services)
    assert held.get("front").fallback.name == "back"  # type: ignore[attr-defined]
    held.disable_all()
    assert EVENTS == ["enable back", "enable front", "disable front", "disable back"]


def test_cycles_are_named_and_refused() -> None:
    """Services naming each other in a cycle are named; enabling them fails in one line."""
    services = {
        "x": LookupTable("x", table_file="f", fallback_service="y"),
        "y": LookupTable("y", table_file="f", fallback_service="x"),
    }
    assert service_cycles(services) == [["x", "y"]]
    with pytest.raises(ConfigurationError, match="cycle"):
        enabling_order(services)


def test_a_process_enables_an_equal_definition_once(table: Path) -> None:
    """Tasks of one process share the enabled copy of one definition."""
    services = {"t": LookupTable("t", table_file=str(table))}
    first = enabled_service("t", services)
    again = enabled_service("t", {"t": pickle.loads(pickle.dumps(services["t"]))})
    assert first is again
    assert EVENTS == ["enable t"]
    with pytest.raises(ConfigurationError, match="no service named 'u'"):
        enabled_service("u", services)


def test_a_process_enables_a_service_again_when_what_it_names_changed(
    table: Path, tmp_path: Path
) -> None:
    """An equal definition naming a changed service (a later run's) is enabled anew over the
    new one, never handed the runtime built over the old one."""
    other = tmp_path / "other.json"
    other.write_text('{"z": "zeta"}')
    old = {
        "front": LookupTable("front", table_file=str(table), fallback_service="back"),
        "back": LookupTable("back", table_file=str(table)),
    }
    new = {**old, "back": LookupTable("back", table_file=str(other))}
    assert enabled_service("front", old).lookup("z") is None
    assert enabled_service("front", new).lookup("z") == "zeta"


def test_the_built_in_services_are_controller_services() -> None:
    """MapCacheService and StandardSSLContextService keep their API and declare interfaces."""
    cache = MapCacheService("c", maximum_cache_entries=3)
    assert cache.implements_interface("DistributedMapCacheClient")
    assert cache.raw_configured["Maximum Cache Entries"] == "3"
    assert pickle.loads(pickle.dumps(cache)) == cache
    assert StandardSSLContextService.implements_interface.__doc__
    assert "SSLContextService" in StandardSSLContextService.implements


# --- in a flow ---------------------------------------------------------------------------------


def test_add_service_takes_any_service_and_refuses_other_values(table: Path) -> None:
    """Flow.add_service takes a user's service, renames on request, refuses a non-service."""
    flow = Flow("f")
    flow.add_service(LookupTable("t", table_file=str(table)), name="codes")
    flow.add_service(LookupTable(table_file=str(table)))  # named after its type
    assert list(flow.services) == ["codes", "LookupTable"]
    with pytest.raises(FlowDefinitionError, match="takes a controller service"):
        flow.add_service(object())  # type: ignore[arg-type]
    with pytest.raises(FlowDefinitionError, match="already has a service named 'codes'"):
        flow.add_service(LookupTable("codes", table_file=str(table)))


def test_parameters_are_bound_in_service_properties(table: Path) -> None:
    """A ``#{name}`` in a service property reads the flow's parameter."""
    flow = Flow("f", parameters={"table": Parameter("table", str(table))})
    flow.add_service(LookupTable("t", table_file="#{table}"))
    assert flow.resolved_service("t").get_property("Table File").value == str(table)
    assert flow.services["t"].raw_configured["Table File"] == "#{table}"


def _lookup_flow(root: Path, table: Path) -> Flow:
    flow = Flow("lookup", parameters={"table": Parameter("table", str(table))})
    service = flow.add_service(LookupTable("codes", table_file="#{table}"))
    gen = flow.add(GenerateFlowFile(batch_size=2, code="b"), name="gen")
    look = flow.add(LookupAttribute(lookup_service=service), name="look")
    out = flow.add(PutFile(directory=str(root / "out")), name="out")
    flow.connect(gen, look)
    flow.connect(look, out)
    flow.auto_terminate(out, ["success", "failure"])
    return flow


def test_a_users_service_runs_in_a_flow_on_the_direct_runner(tmp_path: Path, table: Path) -> None:
    """A processor gets the enabled service by name, its parameter bound; each output holds
    the looked-up value; the service is enabled once in the process."""
    flow = _lookup_flow(tmp_path, table)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("look", "success") == 2
    contents = {p.read_text().split("|")[0] for p in (tmp_path / "out").iterdir()}
    assert contents == {"beta"}
    assert EVENTS.count("enable codes") == 1


@pytest.mark.spark
def test_a_users_service_is_shipped_and_enabled_on_the_executor(
    tmp_path: Path, table: Path
) -> None:
    """On Spark the definition travels pickled and is enabled in the executor's process."""
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    from flowcore.runners.spark import SparkRunner

    flow = _lookup_flow(tmp_path, table)
    settings = Settings(sync=False, parallelism=2, driver_run_max_flowfiles=0)
    run_flow(flow, SparkRunner(), repository=tmp_path / "repo", settings=settings)
    outputs = [p.read_text().split("|") for p in (tmp_path / "out").iterdir()]
    assert [value for value, _ in outputs] == ["beta", "beta"]
    assert all(int(pid) != os.getpid() for _, pid in outputs)  # enabled on the executor
    assert "enable codes" not in EVENTS  # never enabled in the driver


# --- the test harness --------------------------------------------------------------------------


def test_the_harness_enables_services_before_run_and_disables_them_after(table: Path) -> None:
    """TestRunner.add_service takes any service, enabled around run as NiFi's harness does."""
    runner = TestRunner(LookupAttribute(lookup_service="codes"))
    runner.add_service(LookupTable("codes", table_file=str(table)))
    runner.enqueue(b"", {"code": "a"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert runner.flowfiles_for("success")[0].content.startswith(b"alpha|")
    assert EVENTS == ["enable codes", "disable codes"]
    enabled = runner.enable_controller_service("codes")
    assert enabled.lookup("b") == "beta"  # type: ignore[attr-defined]
    runner.disable_controller_service("codes")
    assert EVENTS[-1] == "disable codes"


def test_a_service_naming_an_undeclared_service_fails_to_enable_in_one_line(table: Path) -> None:
    """Enabling a service whose property names a service not declared names both."""
    held = ServiceSet({"front": LookupTable("front", table_file=str(table), fallback_service="x")})
    with pytest.raises(ConfigurationError, match="names service 'x', which is not declared"):
        held.get("front")


def test_a_misspelled_sensitive_property_is_named_without_its_value(table: Path) -> None:
    """An unknown property that looks like a misspelled sensitive one is reported masked: a
    typo never puts a password in a validation message."""
    service = LookupTable("codes", table_file=str(table), pasword="hunter2")
    [problem] = service.validate()
    assert "hunter2" not in str(problem)
    assert "did you mean 'Password' (password)?" in str(problem)


def test_the_harness_binds_parameters_in_services_and_refuses_an_invalid_one(table: Path) -> None:
    """A service added to TestRunner reads the runner's parameters when enabled, and an invalid
    one (a required property missing) is refused, naming the property, as NiFi's harness does."""
    runner = TestRunner(LookupAttribute(lookup_service="codes"), parameters={"t": str(table)})
    runner.add_service(LookupTable("codes", table_file="#{t}"))
    runner.enqueue(b"", {"code": "a"})
    runner.run()
    assert runner.flowfiles_for("success")[0].content.startswith(b"alpha|")
    broken = TestRunner(LookupAttribute(lookup_service="codes"))
    broken.add_service(LookupTable("codes"))
    with pytest.raises(ConfigurationError, match=r"'codes' cannot be enabled.*Table File"):
        broken.enable_controller_service("codes")
