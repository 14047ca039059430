"""kill -9 of real `flowcore run`s of ConsumeKafka -> PutFile, Kafka being the mock cluster.

ConsumeKafka's offsets are source state committed in the WAL transaction with its FlowFiles, so
however often the run is killed, a rerun ends with every message of the topic written exactly
once (one RECEIVE each), as in an uninterrupted run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka")

from repositories.repository_set import RepositorySet
from tests.processors.kafka.mock_cluster import MockCluster

pytestmark = pytest.mark.stress

MESSAGES = 300

FLOW = """
from flowcore import Flow
from processors import ConsumeKafka, PutFile, UpdateAttribute
from processors.kafka.connection_service import Kafka3ConnectionService

flow = Flow("kafka-kills")
flow.add_service(Kafka3ConnectionService(
    "kafka", bootstrap_servers="{bootstrap}", max_poll_records="25", client_timeout="10 sec"))
consume = flow.add(ConsumeKafka(kafka_connection_service="kafka", group_id="kills",
                                topics="{topic}", auto_offset_reset="earliest"), name="consume")
name = flow.add(UpdateAttribute(filename="${{kafka.partition}}-${{kafka.offset}}"), name="name")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(consume, name)
flow.connect(name, put, "success", durable=True)
flow.auto_terminate(put, ["success", "failure"])
"""


@pytest.fixture(scope="module")
def cluster():
    """A mock cluster living in the test process: killing the runs leaves it up."""
    mock = MockCluster()
    yield mock
    mock.close()


def _workdir(root: Path, cluster: MockCluster, topic: str) -> None:
    root.mkdir(parents=True)
    (root / "flow.py").write_text(FLOW.format(bootstrap=cluster.bootstrap, topic=topic))


def _run(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json",
         "--setting", "batch_max_flowfiles=20"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _receives(workdir: Path) -> Counter:
    """RECEIVE events per (partition, offset) attribute pair in the committed provenance."""
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
        return Counter(e.flowfile_uuid for e in events if e.event_type.value == "RECEIVE")
    finally:
        repos.close()


def _written(workdir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (workdir / "out").iterdir()}


@pytest.mark.slow
def test_kill_9_consumes_every_message_exactly_once(tmp_path: Path, cluster) -> None:
    """Killed at random moments, then rerun: every message once in out/, one RECEIVE each."""
    topic = "kills"
    cluster.produce(topic, [f"message {n}".encode() for n in range(MESSAGES)])
    _workdir(tmp_path / "reference", cluster, topic)
    started = time.monotonic()
    done = _run(tmp_path / "reference")
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err.decode()
    duration = time.monotonic() - started
    expected = _written(tmp_path / "reference")
    assert sorted(expected.values()) == sorted(f"message {n}".encode() for n in range(MESSAGES))
    crashed = tmp_path / "crashed"
    _workdir(crashed, cluster, topic)
    rng = random.Random(5)
    killed = 0
    for _ in range(12):
        process = _run(crashed)
        time.sleep(rng.uniform(0.5, duration * 0.9))
        if process.poll() is not None:
            continue
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
        if killed == 3:
            break
    assert killed >= 2, f"only {killed} runs were still going when killed"
    final = _run(crashed)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    assert _written(crashed) == expected
    receives = _receives(crashed)
    assert sum(receives.values()) == len(receives) == MESSAGES
