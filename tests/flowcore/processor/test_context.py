"""Tests for the ProcessContext: properties, state and relationships as a processor sees them."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from flowcore.engine._bulletins import _RUNNING, running
from flowcore.errors import ConfigurationError
from flowcore.processor.context import ProcessContext, carry_context
from flowcore.session.host import ComponentInfo, StateMap
from processors import UpdateAttribute


def _context(**options: object) -> ProcessContext:
    processor = UpdateAttribute(**{"Delete Attributes Expression": "tmp.*", "source": "web"})
    return ProcessContext(
        processor,
        component=ComponentInfo("tag-1", "UpdateAttribute", "tag"),
        clock=lambda: 1_000,
        state=lambda: StateMap(3, {"seen": "7"}),
        **options,  # type: ignore[arg-type]
    )


def test_properties_resolve_by_descriptor_nifi_name_or_default() -> None:
    """Configured values, defaults and dynamic properties come back with NiFi's accessors."""
    context = _context()
    processor = context.processor
    assert context.get_property("Delete Attributes Expression").value == "tmp.*"
    assert context.get_property(processor.STORE_STATE).value == "Do not store state"
    assert context.dynamic_properties == {"source": "web"}
    assert context.properties[processor.STORE_STATE] == "Do not store state"


def test_an_unknown_property_names_the_processor_and_the_closest_spelling() -> None:
    """A misspelt property name is a ConfigurationError that suggests the real one."""
    with pytest.raises(ConfigurationError, match="Delete Attributes Expression"):
        _context().get_property("Delete Attribute Expression")


def test_state_reads_through_and_writes_only_where_the_runner_can_store_it() -> None:
    """State is read from the host; setting it outside a session needs the runner's setter."""
    context = _context()
    assert context.get_state().get("seen") == "7"
    with pytest.raises(ConfigurationError, match=r"session\.set_state"):
        context.set_state({"seen": "8"})
    stored: list[dict[str, str]] = []
    _context(set_state=lambda values: stored.append(dict(values))).set_state({"seen": "8"})
    assert stored == [{"seen": "8"}]


def test_relationships_input_clock_and_yield_are_reported_as_configured() -> None:
    """Auto-terminated relationships, incoming connections, the clock and a yield request."""
    context = _context(auto_terminated=["success"], has_incoming_connection=False)
    assert context.is_auto_terminated("success")
    assert not context.is_auto_terminated("failure")
    assert not context.has_incoming_connection()
    assert (context.name, context.now(), context.yielded) == ("tag", 1_000, False)
    context.yield_()
    assert context.yielded


def test_controller_services_only_where_the_runner_gives_them() -> None:
    """A source's listing context looks services up; elsewhere asking names the component."""
    context = _context()
    with pytest.raises(ConfigurationError, match=r"UpdateAttribute: no controller services"):
        context.controller_service("pool")
    context.service_lookup = {"pool": "the pool"}.__getitem__
    assert context.controller_service("pool") == "the pool"


def test_a_carried_callable_keeps_the_masking_in_threads_but_not_the_task() -> None:
    """A thread or a pool running a carried callable masks the processor's secrets (at once in
    two threads), and its records make no bulletins of the task's member (it may outlive it)."""
    secret = "pw-carried-91d3f"
    log = logging.getLogger("tests.process_context.carried")
    both = threading.Barrier(2, timeout=10)

    class Member:
        def bulletin(self, message: str, level: str) -> None:
            raise AssertionError(message)

        def secrets(self) -> list[str]:
            return [secret]

    def say(_: object = None) -> tuple[str, object]:
        both.wait()
        record = log.makeRecord(log.name, logging.INFO, "", 0, "%s", (secret,), None)
        return record.getMessage(), _RUNNING.get()

    with running(Member()):  # type: ignore[arg-type]
        carried = carry_context(say)
        plain = say
    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(carried, range(2))) == [("********", None)] * 2
        assert list(pool.map(plain, range(2))) == [(secret, None)] * 2
