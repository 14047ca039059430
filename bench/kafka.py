"""PublishKafka and ConsumeKafka messages/s on librdkafka's mock cluster, beside plain loops.

One mock cluster (three brokers on loopback, in this process) serves, interleaved:

- ``produce loop``: an idempotent ``confluent_kafka.Producer``, ``--messages`` messages of
  ``--size`` bytes, then ``flush``;
- ``PublishKafka``: GenerateFlowFile (``--messages`` FlowFiles of ``--size`` bytes) ->
  PublishKafka (Transactions Enabled false, as the loop has none) on the direct runner, the
  whole flow run timed (FlowFiles made, messages sent and acknowledged, provenance, commit);
- ``consume loop``: a ``Consumer`` assigned to every partition from offset 0, polling until it
  has every message;
- ``ConsumeKafka``: ConsumeKafka (earliest) with its output auto-terminated, on the direct
  runner, the whole run timed.

The issue's target: each processor at least 0.5x its loop. ``--repeat N`` reports the best.

    .venv/bin/python bench/kafka.py [--messages N] [--size BYTES] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import ConsumeKafka, GenerateFlowFile, PublishKafka
from processors.kafka.connection_service import Kafka3ConnectionService
from tests.processors.kafka.mock_cluster import MockCluster

_SETTINGS = Settings(sync=False, parallelism=1, unbounded_source_batches=1)


def _produce_loop(bootstrap: str, topic: str, messages: int, size: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    value = b"x" * size
    started = time.perf_counter()
    for _ in range(messages):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    assert producer.flush(30) == 0
    return time.perf_counter() - started


def _consume_loop(bootstrap: str, topic: str, messages: int) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "loop", "log_level": 0})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    started = time.perf_counter()
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    got = 0
    while got < messages:
        got += sum(1 for m in consumer.consume(10_000, timeout=1) if not m.error())
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def _service(bootstrap: str) -> Kafka3ConnectionService:
    return Kafka3ConnectionService("kafka", bootstrap_servers=bootstrap)


def _publish_flow(bootstrap: str, topic: str, messages: int, size: int, root: Path) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-publish")
    flow.add_service(_service(bootstrap))
    gen = flow.add(GenerateFlowFile(batch_size=messages, file_size=f"{size} B"), name="gen")
    publish = flow.add(
        PublishKafka(
            kafka_connection_service="kafka", topic_name=topic, transactions_enabled=False
        ),
        name="publish",
    )
    flow.connect(gen, publish)
    flow.auto_terminate(publish, ["success", "failure"])
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=_SETTINGS)
    elapsed = time.perf_counter() - started
    assert result.count("publish", "success") == messages, result.transfers
    return elapsed


def _consume_flow(bootstrap: str, topic: str, messages: int, root: Path, group: str) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-consume")
    flow.add_service(_service(bootstrap))
    consume = flow.add(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id=group,
            topics=topic,
            auto_offset_reset="earliest",
            commit_offsets=False,
        ),
        name="consume",
    )
    flow.auto_terminate(consume, ["success"])
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=_SETTINGS)
    elapsed = time.perf_counter() - started
    assert result.count("consume", "success") == messages, result.transfers
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cluster = MockCluster()
    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for run in range(args.repeat):
            n = args.messages
            timings = {
                "produce loop": _produce_loop(cluster.bootstrap, f"loop{run}", n, args.size),
                "PublishKafka": _publish_flow(cluster.bootstrap, f"flow{run}", n, args.size, root),
                "consume loop": _consume_loop(cluster.bootstrap, f"loop{run}", n),
                "ConsumeKafka": _consume_flow(cluster.bootstrap, f"flow{run}", n, root, f"g{run}"),
            }
            for name, seconds in timings.items():
                rates.setdefault(name, []).append(n / seconds)
    best = {name: max(values) for name, values in rates.items()}
    report = {
        "messages": args.messages,
        "size": args.size,
        "msgs_per_s": {k: round(v) for k, v in best.items()},
        "publish_vs_loop": round(best["PublishKafka"] / best["produce loop"], 2),
        "consume_vs_loop": round(best["ConsumeKafka"] / best["consume loop"], 2),
    }
    print(json.dumps(report, indent=2))
    cluster.close()


if __name__ == "__main__":
    main()
