"""Tests for the settings values components and connections carry (NiFi's names and defaults)."""

from __future__ import annotations

import pytest

from flowcore.definition.component_settings import (
    BackoffMechanism,
    LoadBalanceStrategy,
    Prioritizer,
    QueueSettings,
    RetrySettings,
    enum_member,
    period_text,
)
from flowcore.errors import FlowDefinitionError
from flowcore.processor.relationship import Relationship


def test_queue_settings_default_to_nifis_and_take_python_numbers() -> None:
    """10,000 FlowFiles, 1 GB, never expire, FIFO; numbers become NiFi's strings."""
    assert QueueSettings() == QueueSettings(10_000, "1 GB", "0 sec", ())
    tuned = QueueSettings(5, 1024, 90, ["NewestFlowFileFirstPrioritizer"])
    assert tuned.back_pressure_data_size_threshold == "1024 B"
    assert tuned.flowfile_expiration == period_text(90)
    assert tuned.prioritizers == (Prioritizer.NEWEST_FLOWFILE_FIRST,)


def test_an_enum_setting_is_read_by_member_value_or_name_in_any_case() -> None:
    """NiFi's value (as in a flow definition), the member's name and any case all convert."""
    convert = enum_member(LoadBalanceStrategy, "load balance strategy")
    assert convert("round_robin") is LoadBalanceStrategy.ROUND_ROBIN
    assert convert(LoadBalanceStrategy.SINGLE_NODE) is LoadBalanceStrategy.SINGLE_NODE
    assert enum_member(Prioritizer, "prioritizer")("PriorityAttributePrioritizer") is (
        Prioritizer.PRIORITY_ATTRIBUTE
    )


def test_an_unknown_enum_value_names_itself_and_the_values_known() -> None:
    """The error names the setting, the value given and every value that would do."""
    with pytest.raises(FlowDefinitionError, match=r"unknown backoff mechanism 'SOMETIMES'.*"):
        enum_member(BackoffMechanism, "backoff mechanism")("SOMETIMES")


def test_retry_settings_follow_nifi_and_take_relationships_or_names() -> None:
    """10 attempts, penalize, 10 mins; one name, names or Relationship values."""
    one = RetrySettings("failure")
    assert (one.relationships, one.count, one.max_backoff_period) == (("failure",), 10, "10 mins")
    assert one.backoff_mechanism is BackoffMechanism.PENALIZE_FLOWFILE
    many = RetrySettings([Relationship("retry"), "failure"], backoff_mechanism="YIELD_PROCESSOR")
    assert many.relationships == ("retry", "failure")
    assert many.backoff_mechanism is BackoffMechanism.YIELD_PROCESSOR
