"""Secrets held in sensitive properties (declared or dynamic, of processors and services) never
reach a log, a bulletin, the repository (status, provenance, flow record) or an export."""

from __future__ import annotations

import io
import json
import logging
import pickle
import threading
from collections.abc import Iterator
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
from flowcore.definition.validation import problems_of, short_secrets, validate_flow
from flowcore.driver.controller import run_flow
from flowcore.engine._bulletins import redacting
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

    def on_stopped(self, context):  # type: ignore[no-untyped-def]
        logging.getLogger("processors.lister").warning("stopped as %s", self.configured["Password"])


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
    assert "stopped as ********" in caplog.text  # on the driver, by a module's logger
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


#: The secrets of the probes below: a processor's, and the service it names (a DBCP's).
OWN = "pw-own-7d21c"
POOL = "pw-pool-e90f4"


class Pool(ControllerService):
    """A connection pool holding a password (as DBCPConnectionPool does)."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    property_descriptors: ClassVar = (PASSWORD,)


class Leaky(Processor):
    """Says its secret and its service's every way a processor can: tracebacks, a stack,
    its module's logger and a library's, through a handler of its own on a child logger."""

    PASSWORD = PropertyDescriptor("Password", sensitive=True)
    POOL = PropertyDescriptor("Pool", identifies_service=True)
    property_descriptors: ClassVar = (PASSWORD, POOL)
    relationships: ClassVar = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is None:
            return
        own = context.get_property(self.PASSWORD).value
        pool = session.controller_service(context.get_property(self.POOL).value)
        said = f"postgresql://u:{own}@h/db {pool.configured['Password']}"
        try:
            raise ValueError(said)
        except ValueError:
            context.logger.exception("could not connect")
        context.logger.warning("pool says %s", said, stack_info=True)
        logging.getLogger("processors.leaky").error("module logger: %s", said)
        logging.getLogger("psycopg.pool").warning("library: %s", said)
        context.logger.warning("Transferring data at a rate of 5 rows/s")
        session.transfer(flowfile, "success")

    def on_stopped(self, context):  # type: ignore[no-untyped-def]
        logging.getLogger("processors.leaky").warning("stopped: %s", self.configured["Password"])


def test_tracebacks_services_and_every_logger_lose_the_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A traceback, a stack, a service's password, a module's or a library's logger and a
    handler on the processor's own logger (before flowcore's): none shows a secret."""
    flow = Flow("leaky")
    flow.add_service(Pool("pool", password=POOL))
    gen = flow.add(GenerateFlowFile(), name="gen")
    leaky = flow.add(Leaky(password=OWN, pool="pool"), name="leaky")
    flow.connect(gen, leaky)
    flow.auto_terminate(leaky, "success")
    written = io.StringIO()
    own_handler = logging.StreamHandler(written)
    child = logging.getLogger("flowcore.processors.Leaky")
    child.addHandler(own_handler)
    try:
        with caplog.at_level(logging.INFO):
            run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    finally:
        child.removeHandler(own_handler)
    bulletins = json.dumps([b.message for b in read_bulletins(tmp_path / "repo")])
    for shown in (caplog.text, written.getvalue(), bulletins):
        assert OWN not in shown
        assert POOL not in shown
    assert "ValueError: postgresql://u:********@h/db ********" in caplog.text  # the traceback
    assert "Stack (most recent call last)" in caplog.text
    assert "module logger: postgresql://u:********@h/db" in caplog.text
    assert "library: postgresql://u:********@h/db" in caplog.text
    assert "stopped: ********" in caplog.text  # at the task's end, as it stops
    assert "Traceback" in written.getvalue()
    assert "a rate of 5" in bulletins
    assert _files_holding(tmp_path / "repo", POOL) == []


def test_a_thread_masks_the_secrets_of_its_own_processor_only() -> None:
    """The secrets are the running context's: another thread's records keep their text, and a
    record factory set since is wrapped again."""
    logging.setLogRecordFactory(logging.LogRecord)  # an application replacing the factory
    seen: dict[str, str] = {}
    log = logging.getLogger("tests.secrets.threads")

    def make(who: str) -> None:
        seen[who] = log.makeRecord(log.name, logging.INFO, "", 0, "%s", (OWN,), None).getMessage()

    with redacting(lambda: [OWN]):
        make("masked")
        other = threading.Thread(target=make, args=("other",))
        other.start()
        other.join()
    make("after")
    assert seen == {"masked": "********", "other": OWN, "after": OWN}


def test_a_secret_too_short_to_mask_is_a_warning_and_left_in_messages(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A password "a" would turn every "a" into ********: it is left, and validation warns once."""
    flow = Flow("short")
    flow.add_service(Pool("pool", password="xy"))
    gen = flow.add(GenerateFlowFile(), name="gen")
    leaky = flow.add(Leaky(password="a", pool="pool"), name="leaky")
    flow.connect(gen, leaky)
    flow.auto_terminate(leaky, "success")
    assert [str(w) for w in short_secrets(flow)] == [
        "Leaky 'leaky': the value of 'Password' is too short to be masked in logs; use a "
        "secret of at least 4 characters",
        "Pool service 'pool': the value of 'Password' is too short to be masked in logs; use "
        "a secret of at least 4 characters",
    ]
    with caplog.at_level(logging.WARNING, logger="flowcore.definition.validation"):
        validate_flow(flow)
        validate_flow(flow)
    assert caplog.text.count("too short to be masked") == 2
    with redacting(lambda: ["a"]):
        logging.getLogger("tests.secrets.short").warning("at a rate of 5")
    assert "at a rate of 5" in caplog.text


def test_a_sensitive_value_beside_a_reference_is_neither_exported_nor_shown() -> None:
    """``#{other}hunter2`` is a secret in clear: the Python export leaves it out, as the NiFi
    one does, and validation shows it as ******** (NiFi's way)."""
    flow = Flow("mixed", parameters={"other": _sensitive_parameter()})
    flow.add_service(
        Vault("vault", url="https://vault", **{"SENSITIVE.key": "#{other}hunter2-svc"})
    )
    gen = flow.add(GenerateFlowFile(), name="gen")
    login = flow.add(Login(password="#{other}hunter2-proc", vault="vault"), name="login")
    flow.connect(gen, login)
    flow.auto_terminate(login, "success")
    shown = flow_to_python(flow) + json.dumps(export_flow(flow).document)
    problems = [str(p) for p in problems_of(flow)]
    assert "hunter2" not in shown
    assert not any("hunter2" in p for p in problems)
    assert any("'Password' validated against '********'" in p for p in problems)


class _Kept(logging.Handler):
    """Keeps the records it handles, as they reach a handler."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def kept() -> Iterator[tuple[logging.Logger, _Kept]]:
    """A library's logger whose records a handler keeps, not passed to the root's."""
    log = logging.getLogger("tests.secrets.kept")
    handler = _Kept()
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        yield log, handler
    finally:
        log.removeHandler(handler)
        log.propagate = True


def _connect(password: str) -> None:
    """A driver's connect: the password is a local of the frame that raises."""
    msg = f"authentication failed ({len(password)} characters)"
    raise ConnectionError(msg)


def test_an_exception_goes_and_its_masked_traceback_stays(
    kept: tuple[logging.Logger, _Kept],
) -> None:
    """While secrets are active exc_info goes, whether or not its text held one: a handler
    reading the exception (Sentry's captures frames' locals) would show the password passed
    to a connect call; the masked exc_text is what formatters write."""
    log, handler = kept
    with redacting(lambda: [OWN]):
        try:
            _connect("".join(OWN))
        except ConnectionError:
            log.exception("failed")
        try:
            msg = f"bad password {OWN}"
            raise ValueError(msg)
        except ValueError:
            log.exception("failed")
    clean, leaky = handler.records
    assert clean.exc_info is None  # its frames held the password as a local
    assert "ConnectionError: authentication failed" in (clean.exc_text or "")
    assert OWN not in logging.Formatter().format(clean)
    assert leaky.exc_info is None
    assert "ValueError: bad password ********" in (leaky.exc_text or "")
    assert OWN not in logging.Formatter().format(leaky)


def test_secrets_that_cannot_be_looked_up_withhold_the_message(
    kept: tuple[logging.Logger, _Kept],
) -> None:
    """A lookup that raises neither escapes the logging call nor lets the record through."""
    log, handler = kept

    def unavailable() -> list[str]:
        msg = "parameter 'other' not found"
        raise KeyError(msg)

    with redacting(unavailable):
        log.warning("pw=%s", OWN, extra={"pw": OWN}, stack_info=True)
    (record,) = handler.records
    assert record.getMessage() == "message withheld: secrets unavailable"
    assert record.stack_info is None
    assert OWN not in repr(record.__dict__)


def test_secrets_are_looked_up_once_per_block(kept: tuple[logging.Logger, _Kept]) -> None:
    """A driver listing logging for each item does not walk the services for each record."""
    log, _ = kept
    calls: list[int] = []

    def secrets() -> list[str]:
        calls.append(1)
        return [OWN]

    with redacting(secrets):
        for item in range(3):
            log.info("item %d", item)
    assert calls == [1]


def test_extra_fields_lose_the_secrets(kept: tuple[logging.Logger, _Kept]) -> None:
    """``extra={...}`` fields (a JSON handler writes them) are masked; they pickle as a dict."""
    log, handler = kept
    with redacting(lambda: [OWN]):
        log.info("connecting", extra={"dsn": f"u:{OWN}@h", "opts": {"pw": OWN}, "port": 5432})
    (record,) = handler.records
    assert record.__dict__["dsn"] == "u:********@h"
    assert record.__dict__["opts"] == "{'pw': '********'}"
    assert record.__dict__["port"] == 5432
    assert OWN not in pickle.dumps(record.__dict__).decode("latin-1")
    assert type(pickle.loads(pickle.dumps(record.__dict__))) is dict


def test_an_exception_holding_a_secret_only_in_its_arguments_loses_exc_info(
    kept: tuple[logging.Logger, _Kept],
) -> None:
    """A handler reading the exception (its args, as Sentry does) must not find the secret the
    formatted traceback does not show."""

    class Quiet(Exception):
        def __str__(self) -> str:
            return "login refused"

    log, handler = kept
    with redacting(lambda: [OWN]):
        try:
            raise Quiet(OWN)
        except Quiet:
            log.exception("failed")
    (record,) = handler.records
    assert record.exc_info is None
    assert "login refused" in (record.exc_text or "")
