"""Kafka connections: Kafka3ConnectionService, and how a Kafka processor finds its connection.

NiFi 2's ``org.apache.nifi.kafka.service.Kafka3ConnectionService``, with its property names. The
service turns its properties into a librdkafka configuration (``client_config``) that
ConsumeKafka and PublishKafka extend; the password never leaves that mapping (not in ``repr``,
logs or exports: the property is sensitive).

This module is the one home of a Kafka processor's connection: the ``Kafka Connection Service``
descriptor both processors declare, the NiFi 1.x connection properties (``bootstrap.servers``,
``sasl.*``... carried on the 1.x processors themselves, flowcore-only here) and
:func:`connection_for`, which gives a processor its enabled service: the one it names, or a
private one made from its 1.x properties, so the librdkafka configuration is built in one place
(:meth:`Kafka3ConnectionService.on_enabled`) for both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flowcore.controller_service import ControllerService, ServiceSet
from flowcore.errors import ConfigurationError
from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.validators import (
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
)

__all__ = [
    "KAFKA_CONNECTION_SERVICE",
    "LEGACY_CONNECTION",
    "LIBRDKAFKA_LOG",
    "Kafka3ConnectionService",
    "LibrdkafkaLog",
    "connection_for",
    "import_kafka",
    "legacy_problems",
]


def import_kafka() -> Any:
    """The ``confluent_kafka`` module (its ``admin`` too), or one error naming the extra."""
    try:
        import confluent_kafka  # noqa: PLC0415  (optional: only Kafka flows need it)
        import confluent_kafka.admin  # noqa: PLC0415  (ConsumeKafka's topic IDs)
    except ImportError:
        msg = "Kafka needs confluent-kafka: pip install 'flowcore[kafka]'"
        raise ConfigurationError(msg) from None
    return confluent_kafka


BOOTSTRAP_SERVERS = PropertyDescriptor(
    "Bootstrap Servers",
    "bootstrap.servers",
    description="Comma-separated list of Kafka Bootstrap Servers in the format host:port",
    default="localhost:9092",
    required=True,
)
SECURITY_PROTOCOL = PropertyDescriptor(
    "Security Protocol",
    "security.protocol",
    description="Security protocol used to communicate with brokers",
    default="PLAINTEXT",
    required=True,
    allowable_values=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
)
SASL_MECHANISM = PropertyDescriptor(
    "SASL Mechanism",
    "sasl.mechanism",
    description="SASL mechanism used for authentication",
    default="GSSAPI",
    required=True,
    allowable_values=("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM"),
)
SASL_USERNAME = PropertyDescriptor(
    "Username",
    "sasl.username",
    description="Username provided with configured password",
    aliases=("SASL Username",),  # NiFi 2's display name
)
SASL_PASSWORD = PropertyDescriptor(
    "Password",
    "sasl.password",
    description="Password provided with configured username",
    sensitive=True,
    aliases=("SASL Password",),  # NiFi 2's display name
)
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service",
    "ssl.context.service",
    description="Service supporting SSL communication with Kafka brokers",
    identifies_service="SSLContextService",
)
TRANSACTION_ISOLATION_LEVEL = PropertyDescriptor(
    "Transaction Isolation Level",
    "isolation.level",
    description="Which messages a consumer reads: only committed transactions, or all",
    default="read_committed",
    required=True,
    allowable_values=("read_committed", "read_uncommitted"),
)
MAX_POLL_RECORDS = PropertyDescriptor(
    "Max Poll Records",
    "max.poll.records",
    description="Maximum number of records Kafka should return in a single poll.",
    default="10000",
    required=True,
    validators=(POSITIVE_INTEGER_VALIDATOR,),
)
CLIENT_TIMEOUT = PropertyDescriptor(
    "Client Timeout",
    "default.api.timeout.ms",
    description="Default timeout for Kafka client operations",
    default="60 sec",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
)
MAX_METADATA_WAIT_TIME = PropertyDescriptor(
    "Max Metadata Wait Time",
    "max.block.ms",
    description="The amount of time publisher will wait to obtain metadata or wait for the "
    "buffer to flush during the 'send' call before failing the entire 'send' call.",
    default="5 sec",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
)
ACK_WAIT_TIME = PropertyDescriptor(
    "Acknowledgment Wait Time",
    "ack.wait.time",
    description="After sending a message to Kafka, this indicates the amount of time that the "
    "service will wait for a response from Kafka.",
    default="5 sec",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
)


class Kafka3ConnectionService(ControllerService):
    """Connections to Kafka brokers (NiFi 2's Kafka3ConnectionService), through librdkafka."""

    implements = ("KafkaConnectionService",)
    nifi_types = ("org.apache.nifi.kafka.service.Kafka3ConnectionService",)
    nifi_bundle = ("org.apache.nifi", "nifi-kafka-3-service-nar")
    tags = ("kafka", "message", "connection")
    property_descriptors = (
        BOOTSTRAP_SERVERS,
        SECURITY_PROTOCOL,
        SASL_MECHANISM,
        SASL_USERNAME,
        SASL_PASSWORD,
        SSL_CONTEXT_SERVICE,
        TRANSACTION_ISOLATION_LEVEL,
        MAX_POLL_RECORDS,
        CLIENT_TIMEOUT,
        MAX_METADATA_WAIT_TIME,
        ACK_WAIT_TIME,
    )

    def on_enabled(self, context: Any) -> None:
        """Check the library is there and build the client configuration once."""
        import_kafka()
        value = context.get_property
        protocol = value(SECURITY_PROTOCOL).value or "PLAINTEXT"
        config: dict[str, Any] = {
            "bootstrap.servers": value(BOOTSTRAP_SERVERS).value,
            "security.protocol": protocol.lower(),
            "socket.timeout.ms": int(value(CLIENT_TIMEOUT).as_time_period("ms") or 60_000),
            "log_level": 3,
        }
        if protocol.startswith("SASL"):
            config["sasl.mechanism"] = value(SASL_MECHANISM).value
            username, password = value(SASL_USERNAME).value, value(SASL_PASSWORD).value
            if username:
                config["sasl.username"] = username
            if password:
                config["sasl.password"] = password
        ssl_name = value(SSL_CONTEXT_SERVICE).value
        if ssl_name and protocol in {"SSL", "SASL_SSL"}:
            config.update(_ssl_config(context.controller_service(ssl_name)))
        self.config = config
        self.isolation_level = value(TRANSACTION_ISOLATION_LEVEL).value
        self.max_poll_records = value(MAX_POLL_RECORDS).as_integer() or 10_000
        self.client_timeout = (value(CLIENT_TIMEOUT).as_time_period("ms") or 60_000) / 1000
        self.metadata_wait = (value(MAX_METADATA_WAIT_TIME).as_time_period("ms") or 5000) / 1000
        self.ack_wait = (value(ACK_WAIT_TIME).as_time_period("ms") or 5000) / 1000

    def client_config(self, **more: Any) -> dict[str, Any]:
        """A fresh librdkafka configuration: this service's, plus *more*.

        librdkafka's own log lines go to Python logging (:class:`LibrdkafkaLog`), not to
        stderr: unreachable brokers made 96 ``%3|...|FAIL|...`` lines before the one line
        that says so.
        """
        return {"logger": LibrdkafkaLog(), **self.config, **more}

    @property
    def transit_uri_base(self) -> str:
        """``kafka://host:port`` of the first bootstrap server, for provenance transit URIs."""
        first = str(self.config["bootstrap.servers"]).split(",")[0].strip()
        return f"kafka://{first}"


#: librdkafka's log lines, as Python records (confluent-kafka's ``logger`` setting)
LIBRDKAFKA_LOG = logging.getLogger("flowcore.processors.librdkafka")
LIBRDKAFKA_LOG.addHandler(logging.NullHandler())  # never Python's last resort: stderr


class LibrdkafkaLog:
    """confluent-kafka's ``logger``: librdkafka's lines to :data:`LIBRDKAFKA_LOG`, a level down.

    librdkafka logs each failed attempt to reach a broker at LOG_ERR (``FAIL``), again and
    again while it retries; what the client finally fails with, the processor reports in one
    line (ConsumeKafka's listing, PublishKafka's ``failure``). Kafka's Java client, NiFi's,
    logs such attempts at WARN: so its ERROR and CRITICAL lines are WARNING records here, its
    warnings INFO and the rest DEBUG. Under ``flowcore.processors`` they become the running
    processor's bulletins (the bulletin level is WARNING); the logger's NullHandler keeps them
    off stderr when nothing else is configured, and an application that configures logging
    gets them all.
    """

    def log(self, level: int, msg: str, *args: Any) -> None:
        """Called by confluent-kafka per librdkafka line (``"%s [%s] %s"``: fac, name, buf)."""
        if level >= logging.ERROR:
            level = logging.WARNING
        elif level >= logging.WARNING:
            level = logging.INFO
        else:
            level = logging.DEBUG
        LIBRDKAFKA_LOG.log(level, "librdkafka " + msg, *args)


def _ssl_config(service: Any) -> dict[str, str]:
    """Librdkafka's SSL settings from a StandardSSLContextService (PEM or PKCS12 stores)."""
    config: dict[str, str] = {}
    trust = getattr(service, "truststore_filename", None)
    if trust:
        config["ssl.ca.location"] = trust
    keystore = getattr(service, "keystore_filename", None)
    if keystore:
        config["ssl.keystore.location"] = keystore
        password = getattr(service, "keystore_password", None)
        if password:
            config["ssl.keystore.password"] = password
    return config


# --- a processor's connection ------------------------------------------------------------------

KAFKA_CONNECTION_SERVICE = PropertyDescriptor(
    "Kafka Connection Service",
    description="Provides connections to Kafka Broker for publishing Kafka Records",
    identifies_service="KafkaConnectionService",
)


def _legacy(display: str, name: str, **more: Any) -> PropertyDescriptor:
    return PropertyDescriptor(display, name, flowcore_only=True, **more)


#: 1.x property (internal name) -> the Kafka3ConnectionService property it becomes.
_TO_SERVICE = {
    "bootstrap.servers": "bootstrap.servers",
    "security.protocol": "security.protocol",
    "sasl.mechanism": "sasl.mechanism",
    "sasl.username": "sasl.username",
    "sasl.password": "sasl.password",
    "max.block.ms": "max.block.ms",
    "ack.wait.time": "ack.wait.time",
    "Communications Timeout": "default.api.timeout.ms",
    "max.poll.records": "max.poll.records",
}

#: The NiFi 1.x ``_2_6`` processors' own connection properties (flowcore-only: not exported).
LEGACY_CONNECTION = (
    _legacy("Kafka Brokers", "bootstrap.servers", description="1.x: the brokers"),
    _legacy("Security Protocol (1.x)", "security.protocol"),
    _legacy("SASL Mechanism (1.x)", "sasl.mechanism"),
    _legacy("Username (1.x)", "sasl.username"),
    _legacy("Password (1.x)", "sasl.password", sensitive=True),
    _legacy("Max Metadata Wait Time (1.x)", "max.block.ms"),
    _legacy("Acknowledgment Wait Time (1.x)", "ack.wait.time"),
    _legacy("Communications Timeout", "Communications Timeout"),
    _legacy("Max Poll Records (1.x)", "max.poll.records"),
    _legacy("Honor Transactions", "honor-transactions"),
)


def service_properties(declared: Any) -> dict[str, str]:
    """Kafka3ConnectionService's properties a processor does not declare, by each name.

    Each says where NiFi 2 keeps it (a processor's ``properties_elsewhere``).
    """
    own = {n for d in declared for n in (d.name, d.display_name)}
    out: dict[str, str] = {}
    for descriptor in Kafka3ConnectionService.property_descriptors:
        where = (
            f"NiFi 2 keeps it on the Kafka3ConnectionService the Kafka Connection Service "
            f"names: set {descriptor.display_name!r} ({descriptor.name}) there"
        )
        for name in (descriptor.name, descriptor.display_name):
            if name not in own:
                out[name] = where
    return out


def legacy_problems(values: Any) -> list[ValidationResult]:
    """A processor names neither a connection service nor 1.x Kafka Brokers: one problem."""
    if values.get(KAFKA_CONNECTION_SERVICE.name) or values.get("bootstrap.servers"):
        return []
    why = "a Kafka Connection Service is required (or a NiFi 1.x flow's Kafka Brokers)"
    return [ValidationResult(KAFKA_CONNECTION_SERVICE.name, None, False, why)]


def connection_for(
    processor: Any, context: ProcessContext, lookup: Callable[[str], object]
) -> Kafka3ConnectionService:
    """The enabled service *processor* connects through.

    The one its Kafka Connection Service names (found with *lookup*: a session's, a context's
    or a batch maker's ``controller_service``), else a private one made once from its NiFi 1.x
    properties (kept on the processor, left out of its pickled state).

    Raises:
        ConfigurationError: the service named is not a Kafka3ConnectionService, or there are
            neither a service nor 1.x brokers.
    """
    name = context.get_property(KAFKA_CONNECTION_SERVICE).value
    if name:
        service = lookup(name)
        if not isinstance(service, Kafka3ConnectionService):
            msg = (
                f"Kafka Connection Service {name!r} is a {type(service).__name__}, "
                "not a Kafka3ConnectionService"
            )
            raise ConfigurationError(msg)
        return service
    made = processor.__dict__.get("_legacy_service")
    if made is not None:
        return made
    settings = {}
    for legacy, target in _TO_SERVICE.items():
        value = context.get_property(legacy).value
        if value:
            settings[target] = value
    if "bootstrap.servers" not in settings:
        msg = f"{type(processor).__name__} names no Kafka Connection Service"
        raise ConfigurationError(msg)
    label = f"{context.component.name or type(processor).__name__}-kafka"
    made = ServiceSet({label: Kafka3ConnectionService(label, **settings)}).get(label)
    processor.__dict__["_legacy_service"] = made
    return made
