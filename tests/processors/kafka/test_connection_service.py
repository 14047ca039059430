"""Kafka3ConnectionService: librdkafka configuration, secrets, the missing-library error."""

from __future__ import annotations

import json
import sys

import pytest

from flowcore import Flow
from flowcore.controller_service import ServiceSet
from flowcore.errors import ConfigurationError
from processors.kafka.connection_service import Kafka3ConnectionService, import_kafka


def _enabled(**properties) -> Kafka3ConnectionService:
    return ServiceSet({"k": Kafka3ConnectionService("k", **properties)}).get("k")


def test_sasl_settings_become_librdkafka_configuration():
    """SASL_SSL with SCRAM gives librdkafka's keys; timeouts come from the properties."""
    service = _enabled(
        bootstrap_servers="b1:9092,b2:9092",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        username="u",
        password="pw-123",
        client_timeout="7 sec",
    )
    config = service.client_config(**{"group.id": "g"})
    assert config["bootstrap.servers"] == "b1:9092,b2:9092"
    assert config["security.protocol"] == "sasl_ssl"
    assert config["sasl.mechanism"] == "SCRAM-SHA-512"
    assert (config["sasl.username"], config["sasl.password"]) == ("u", "pw-123")
    assert config["socket.timeout.ms"] == 7000
    assert service.client_timeout == 7
    assert service.transit_uri_base == "kafka://b1:9092"


def test_nifi_2_display_names_set_the_sasl_credentials():
    """NiFi 2 shows SASL Username and SASL Password: either name sets the same property."""
    service = _enabled(
        **{
            "Bootstrap Servers": "b:1",
            "Security Protocol": "SASL_PLAINTEXT",
            "SASL Mechanism": "PLAIN",
            "SASL Username": "u",
            "SASL Password": "pw-2",
        }
    )
    config = service.client_config()
    assert (config["sasl.username"], config["sasl.password"]) == ("u", "pw-2")


def test_plaintext_leaves_credentials_out():
    """PLAINTEXT (the default) sends no SASL settings even if a password is set."""
    config = _enabled(bootstrap_servers="b:1", password="x").client_config()
    assert "sasl.password" not in config


def test_password_is_never_exported_or_shown():
    """The Password is sensitive: not in repr, not in a NiFi export of the flow."""
    service = Kafka3ConnectionService("kafka", bootstrap_servers="b:1", password="top-secret")
    assert "top-secret" not in repr(service)
    flow = Flow("f")
    flow.add_service(service)
    assert "top-secret" not in json.dumps(flow.to_nifi())


def test_missing_library_names_the_extra(monkeypatch):
    """Without confluent-kafka, one error names pip install 'flowcore[kafka]'."""
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'flowcore\[kafka\]'"):
        import_kafka()


def test_a_service_property_set_on_the_processor_says_where_nifi_2_keeps_it() -> None:
    """Max Poll Records set on ConsumeKafka (or a client property on PublishKafka) names the
    Kafka3ConnectionService, where NiFi 2 keeps it, not the flowcore-only 1.x property."""
    from processors.kafka.consume_kafka import ConsumeKafka
    from processors.kafka.publish_kafka import PublishKafka

    consume = ConsumeKafka(
        **{"Kafka Connection Service": "k", "Topics": "t", "Group ID": "g", "Max Poll Records": "5"}
    )
    (problem,) = [str(p) for p in consume.validate()]
    assert "'Max Poll Records' is not a property of ConsumeKafka" in problem
    assert "Kafka3ConnectionService" in problem
    assert "(1.x)" not in problem
    publish = PublishKafka(**{"Kafka Connection Service": "k", "Topic Name": "t"})
    assert "Kafka3ConnectionService" in publish.unknown_property_message("Client Timeout")
