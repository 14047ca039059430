"""Secrets held in sensitive properties (declared or dynamic, of processors and services) never
reach a log, a bulletin, the repository (status, provenance, flow record) or an export."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import ClassVar

import pytest

from flowcore import (
    Flow,
    Processor,
    PropertyDescriptor,
    Relationship,
    SourceProcessor,
    WorkListing,
)
from flowcore.controller_service import ControllerService
from flowcore.driver.controller import run_flow
from flowcore.nifi.exporting import export_flow
from flowcore.nifi.python_source import flow_to_python
from flowcore.parameters import Parameter
from flowcore.settings import Settings
from processors import GenerateFlowFile
from repositories.repository_set import read_bulletins

#: Distinct secrets, one per place a secret can be given.
DECLARED = "pw-declared-5f0e1"
DYNAMIC = "pw-dynamic-83ab2"
SERVICE_DYNAMIC = "pw-service-dynamic-c41d7"
PARAMETER = "pw-parameter-0b9e4"
SECRETS = (DECLARED, DYNAMIC, SERVICE_DYNAMIC, PARAMETER)


def _secret_name(name: str) -> bool:
    return name.startswith("SENSITIVE.")


class Vault(ControllerService):
    """A service whose ``SENSITIVE.`` dynamic properties are secrets (as DBCP's are)."""

    supports_dynamic_properties: ClassVar = True
    URL = PropertyDescriptor("URL", required=True)
    property_descriptors: ClassVar = (URL,)

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        return PropertyDescriptor(name, sensitive=_secret_name(name), dynamic=True)


class Login(Processor):
    """Logs in with a password and sensitive dynamic properties, and fails saying them all."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    VAULT = PropertyDescriptor("Vault", identifies_service=True)
    property_descriptors: ClassVar = (PASSWORD, VAULT)
    relationships: ClassVar = (Relationship("success"),)
    supports_dynamic_properties: ClassVar = True

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        return PropertyDescriptor(name, sensitive=_secret_name(name), dynamic=True)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is None:
            return
        said = " ".join(
            str(context.get_property(name).value)
            for name in ("Password", "SENSITIVE.token", "SENSITIVE.other")
        )
        context.logger.info("logging in with %s", said)  # below the bulletin level
        context.logger.error("login refused for %s", said)
        msg = f"login refused: {said}"
        raise RuntimeError(msg)


class Lister(SourceProcessor):
    """A source whose listing, on the driver, logs its password."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    property_descriptors: ClassVar = (PASSWORD,)

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        context.logger.warning("listing as %s", context.get_property(self.PASSWORD).value)
        return WorkListing((), state)

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        raise AssertionError(item)


def _flow() -> Flow:
    flow = Flow("secrets", parameters={"other": _sensitive_parameter()})
    flow.add_service(Vault("vault", url="https://vault", **{"SENSITIVE.key": SERVICE_DYNAMIC}))
    gen = flow.add(GenerateFlowFile(), name="gen")
    login = flow.add(
        Login(
            password=DECLARED,
            vault="vault",
            **{"SENSITIVE.token": DYNAMIC, "SENSITIVE.other": "#{other}"},
        ),
        name="login",
    )
    flow.connect(gen, login)
    flow.auto_terminate(login, "success")
    lister = flow.add(Lister(password=DECLARED), name="lister")
    flow.auto_terminate(lister, "success")
    return flow


def _sensitive_parameter() -> Parameter:
    return Parameter("other", value_from_env="SECRETS_TEST_OTHER", sensitive=True)


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_no_secret_reaches_logs_bulletins_or_the_repository(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing processor saying its secrets: logs, bulletins and every repository file
    (status, provenance, WAL, flow record with the service's settings) show none of them."""
    monkeypatch.setenv("SECRETS_TEST_OTHER", PARAMETER)
    repository = tmp_path / "repo"
    with caplog.at_level(logging.DEBUG):
        run_flow(_flow(), "direct", repository=repository, settings=Settings(sync=False))
    bulletins = read_bulletins(repository)
    assert any("login refused" in b.message for b in bulletins)
    shown = caplog.text + json.dumps([b.message for b in bulletins])
    assert "login refused" in caplog.text
    assert "logging in with ********" in caplog.text
    assert "listing as ********" in caplog.text
    for secret in SECRETS:
        assert secret not in shown
        assert _files_holding(repository, secret) == []


def test_no_secret_reaches_a_nifi_or_python_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """NiFi's JSON and flowcore's Python keep sensitive values only as parameter references."""
    monkeypatch.setenv("SECRETS_TEST_OTHER", PARAMETER)
    flow = _flow()
    exported = export_flow(flow)
    document = json.dumps(exported.document)
    source = flow_to_python(flow)
    for secret in SECRETS:
        assert secret not in document
        assert secret not in source
    assert "#{other}" in document
    assert "#{other}" in source
    assert any("'SENSITIVE.token' of" in note for note in exported.notes)
