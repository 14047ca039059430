"""Tests for StandardHttpContextMap: held requests, NiFi's limits, expiry, one answer each."""

from __future__ import annotations

import time

import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ProcessException
from processors.http_server.context_map import (
    SERVICE_UNAVAILABLE,
    Answer,
    Exchange,
    StandardHttpContextMap,
)


def _enabled(**properties: str) -> StandardHttpContextMap:
    service = StandardHttpContextMap("map", **properties)
    runtime = service.enable(ServiceContext(service))
    assert isinstance(runtime, StandardHttpContextMap)
    return runtime


def test_nifi_properties_and_defaults() -> None:
    """Maximum Outstanding Requests 5000 and Request Expiration 1 min, as NiFi's."""
    service = StandardHttpContextMap("map")
    assert service.effective_values() == {
        "Maximum Outstanding Requests": "5000",
        "Request Expiration": "1 min",
    }
    assert service.validate() == ()
    assert StandardHttpContextMap("m", maximum_outstanding_requests="0").validate()
    runtime = _enabled()
    assert runtime.request_timeout_s() == 60.0
    runtime.on_disabled()


def test_register_get_complete_and_the_limit() -> None:
    """A request is held until completed; past the maximum, registering fails (False); an
    identifier held twice is an error; completing one not held is NiFi's error."""
    runtime = _enabled(**{"Maximum Outstanding Requests": "2"})
    first, second = Exchange(), Exchange()
    assert runtime.register("a", first)
    with pytest.raises(ProcessException, match="already registered with identifier a"):
        runtime.register("a", Exchange())
    assert runtime.register("b", second)
    assert not runtime.register("c", Exchange())
    assert runtime.get_response("a") is first
    assert runtime.get_response("c") is None
    assert runtime.complete("a") is first
    assert runtime.get_response("a") is None
    with pytest.raises(ProcessException, match="No HTTP Request registered with identifier a"):
        runtime.complete("a")
    assert runtime.size() == 1
    runtime.on_disabled()
    assert second.wait(0) == Answer(
        SERVICE_UNAVAILABLE, body=b"Service Unavailable", reason="Service Unavailable"
    )


def test_an_expired_request_is_answered_503_once() -> None:
    """Past Request Expiration the sweep answers 503 'Timeout occurred' and forgets the
    request; a response coming later is refused, so the client gets one answer."""
    runtime = _enabled(**{"Request Expiration": "200 millis"})
    exchange = Exchange("127.0.0.1")
    runtime.register("late", exchange)
    answer = exchange.wait(5)
    assert answer is not None
    assert (answer.status, answer.reason) == (503, "Timeout occurred")
    assert runtime.get_response("late") is None
    assert not exchange.answer(Answer(200))
    assert exchange.wait(0) == answer
    runtime.on_disabled()


def test_expire_now_keeps_young_requests() -> None:
    """Only requests older than the expiration are swept."""
    runtime = _enabled(**{"Request Expiration": "10 secs"})
    runtime.register("young", Exchange())
    old = Exchange()
    old.created = time.monotonic() - 11
    runtime.register("old", old)
    assert runtime.expire_now() == 1
    assert runtime.get_response("young") is not None
    assert old.answered
    runtime.on_disabled()


def test_the_process_holding_requests_is_known() -> None:
    """A fresh map (a task on an executor) holds no requests until a server or the driver
    side says this process is the one."""
    runtime = _enabled()
    assert not runtime.holds_requests()
    runtime.serve_here()
    assert runtime.holds_requests()
    runtime.on_disabled()


def test_a_nifi_export_names_nifis_service_type() -> None:
    """The service is NiFi's StandardHttpContextMap for export and import."""
    assert StandardHttpContextMap.nifi_types == ("org.apache.nifi.http.StandardHttpContextMap",)
    assert StandardHttpContextMap.implements == ("HttpContextMap",)


def test_an_exchange_is_claimed_once() -> None:
    """The first claim of a held request wins; a second (another part of it) is refused."""
    exchange = Exchange()
    assert exchange.claim()
    assert not exchange.claim()
