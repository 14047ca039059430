"""One mock Kafka cluster for the whole test session."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

pytest.importorskip("confluent_kafka")

from tests.processors.kafka.mock_cluster import MockCluster

_NAMES = itertools.count()


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[MockCluster]:
    """The mock cluster; its ``bootstrap`` string goes to Kafka3ConnectionService."""
    cluster = MockCluster()
    yield cluster
    cluster.close()


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses."""
    return f"topic-{next(_NAMES)}"
