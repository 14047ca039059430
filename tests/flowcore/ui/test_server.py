"""The UI app's token gate: off loopback every request needs the token."""

from __future__ import annotations

import warnings

from flowcore.cli.ui import prepare
from flowcore.ui.server import COOKIE
from tests.flowcore.ui.conftest import args_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette suggests httpx2; httpx is what is installed
    from starlette.testclient import TestClient


def test_off_loopback_a_token_is_generated_and_required(ran) -> None:
    """Bound to 0.0.0.0 the app makes a token; without it every path answers 401."""
    app, token = prepare(args_for(ran, host="0.0.0.0"))
    assert token
    assert len(token) >= 24
    client = TestClient(app, base_url="http://127.0.0.1")
    for path in ("/", "/api/flow", "/api/status", "/api/events?once=1", "/static/app.js"):
        response = client.get(path)
        assert response.status_code == 401, path
    assert client.get("/api/flow", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_the_token_in_a_header_in_the_query_then_a_cookie(ran) -> None:
    """A header works on each request; ?token= once sets an HttpOnly cookie the page then uses."""
    app, token = prepare(args_for(ran, host="0.0.0.0", token="given-token"))
    assert token == "given-token"
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/api/flow", headers={"X-Flowcore-Token": "given-token"}).status_code == 200
    assert client.get("/api/flow", headers={"Authorization": "Bearer given-token"}).is_success
    first = client.get("/", params={"token": "given-token"})
    assert first.status_code == 200
    assert "HttpOnly" in first.headers["set-cookie"]
    assert client.cookies.get(COOKIE) == "given-token"
    assert client.get("/api/status").status_code == 200  # the cookie carries it now


def test_loopback_needs_no_token(ran) -> None:
    """On 127.0.0.1 (the default) no token is made and requests pass."""
    app, token = prepare(ran)
    assert token is None
    assert TestClient(app, base_url="http://127.0.0.1").get("/api/flow").status_code == 200


def test_a_loopback_ui_refuses_requests_naming_another_host(ran) -> None:
    """Without a token, a request whose Host is not this machine's loopback (a page that
    rebound its own domain to 127.0.0.1) is refused; localhost and [::1] with ports pass."""
    app, token = prepare(ran)
    assert token is None
    with TestClient(app, base_url="http://attacker.example:8080") as client:
        assert client.get("/api/flow").status_code == 421
        assert client.post("/api/flow/save", json={}).status_code == 421
    for base in ("http://localhost:8080", "http://[::1]:8080", "http://127.0.0.1:9"):
        assert TestClient(app, base_url=base).get("/api/flow").status_code == 200, base


def test_host_names_drop_their_port() -> None:
    """Host headers as browsers send them, port and case removed."""
    from flowcore.ui.server import host_name

    assert host_name("LocalHost:8080") == "localhost"
    assert host_name("[::1]:8080") == "[::1]"
    assert host_name("127.0.0.1") == "127.0.0.1"
    assert host_name("") == ""


def test_the_token_comes_from_the_environment(ran, monkeypatch) -> None:
    """FLOWCORE_UI_TOKEN gives the token (kept out of ps); --token wins; empty means generate."""
    monkeypatch.setenv("FLOWCORE_UI_TOKEN", "from-the-env")
    app, token = prepare(args_for(ran, host="0.0.0.0"))
    assert token == "from-the-env"
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/api/flow", headers={"X-Flowcore-Token": "from-the-env"}).is_success
    assert client.get("/api/flow").status_code == 401
    assert prepare(args_for(ran, host="0.0.0.0", token="given"))[1] == "given"
    monkeypatch.setenv("FLOWCORE_UI_TOKEN", "")
    generated = prepare(args_for(ran, host="0.0.0.0"))[1]
    assert generated
    assert generated != "from-the-env"
