"""NiFi 1.x Kafka processors (``ConsumeKafka_2_6``, ``PublishKafka_2_6``) as NiFi 2's.

The 1.x processors carry their brokers and security on the processor itself; NiFi 2 moved them
to Kafka3ConnectionService. An imported 1.x processor keeps them as flowcore-only properties
(left out of NiFi exports) and, without a Kafka Connection Service, gets a private service made
from them, so 1.x flows run unchanged.
"""

from __future__ import annotations

from typing import Any

from flowcore.controller_service import ServiceSet
from flowcore.errors import ConfigurationError
from flowcore.process_context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.validators import ValidationResult
from processors.kafka.connection_service import Kafka3ConnectionService

__all__ = ["LEGACY_CONNECTION", "legacy_problems", "legacy_service"]


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


def legacy_problems(values: Any, service_property: str) -> list[ValidationResult]:
    """A processor names neither a connection service nor 1.x Kafka Brokers: one problem."""
    if values.get(service_property) or values.get("bootstrap.servers"):
        return []
    why = "a Kafka Connection Service is required (or a NiFi 1.x flow's Kafka Brokers)"
    return [ValidationResult(service_property, None, False, why)]


def legacy_service(processor: Any, context: ProcessContext) -> Kafka3ConnectionService:
    """The enabled private service made from a 1.x processor's own properties (made once)."""
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
    name = f"{context.component.name or type(processor).__name__}-kafka"
    service = ServiceSet({name: Kafka3ConnectionService(name, **settings)}).get(name)
    processor.__dict__["_legacy_service"] = service
    return service
