"""PublishKafka and ConsumeKafka messages/s on librdkafka's mock cluster, beside plain loops.

One mock cluster (three brokers on loopback, in this process) serves every case; the rounds are
interleaved (each round runs every case once) and each case reports its best round and the range
of its rounds. Messages are JSON objects of ``--size`` bytes (so the RECORD cases parse them).

Baselines (plain confluent-kafka):

- ``produce loop``: an idempotent ``Producer``, ``--messages`` messages, then ``flush``;
- ``consume loop``: a ``Consumer`` assigned to every partition from offset 0, polling until it
  has every message.

flowcore, on the direct runner, the whole flow run timed (repositories opened, FlowFiles made,
messages sent and acknowledged, provenance, the WAL commits):

- ``PublishKafka FLOW_FILE``: GenerateFlowFile (``--messages`` FlowFiles) -> PublishKafka
  (Transactions Enabled false, as the loop has none): one FlowFile per message, the hard case;
- ``PublishKafka demarcated``: FlowFiles of 1,000 lines -> PublishKafka, Message Demarcator
  ``\\n``: one message per line;
- ``PublishKafka RECORD``: FlowFiles of 1,000 JSON records -> PublishKafka with JsonTreeReader
  and JsonRecordSetWriter: one message per record;
- ``ConsumeKafka FLOW_FILE`` (one FlowFile per message), ``ConsumeKafka DEMARCATOR`` (a
  FlowFile per partition range) and ``ConsumeKafka RECORD`` (JsonTreeReader ->
  JsonRecordSetWriter, a FlowFile per range), each output auto-terminated.

The issue's target: each processor at least 0.5x its loop. What bounds the cases that miss it,
measured in the same rounds:

- ``fixed cost``: ConsumeKafka (FLOW_FILE) of a topic holding **one** message, the whole run
  (seconds; what any run pays whatever it moves);
  ``consume_vs_loop_without_fixed_cost`` is each ConsumeKafka case's best time less the best
  fixed cost, against the consume loop;
- ``JSON reader+writer alone``: JsonTreeReader over the ``--messages`` values joined by
  newlines, then JsonRecordSetWriter of its batches (no Kafka, no flow; msgs/s): the RECORD
  strategy's share.

    .venv/bin/python bench/kafka.py [--messages N] [--size BYTES] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition

from flowcore import Flow
from flowcore.controller_service import ServiceContext
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import ConsumeKafka, GenerateFlowFile, PublishKafka
from processors.kafka.connection_service import Kafka3ConnectionService
from processors.record_services import JsonRecordSetWriter, JsonTreeReader
from tests.processors.kafka.mock_cluster import MockCluster

_SETTINGS = Settings(sync=False, parallelism=1, unbounded_source_batches=1)

#: Lines (records) per FlowFile in the demarcated and RECORD publishing cases.
_PER_FLOWFILE = 1000


def _message(size: int) -> bytes:
    """A JSON object of *size* bytes (at least its fields')."""
    head = b'{"id":12345,"pad":"'
    return head + b"x" * max(0, size - len(head) - 2) + b'"}'


def _produce_loop(bootstrap: str, topic: str, messages: int, size: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    value = _message(size)
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


def _flow(bootstrap: str, name: str, record: bool) -> Flow:
    flow = Flow(name)
    flow.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=bootstrap))
    if record:
        flow.add_service(JsonTreeReader("reader"))
        flow.add_service(JsonRecordSetWriter("writer"))
    return flow


def _timed(flow: Flow, root: Path, check: Callable[[object], None]) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=_SETTINGS)
    elapsed = time.perf_counter() - started
    check(result)
    return elapsed


def _publish(
    bootstrap: str, topic: str, messages: int, size: int, root: Path, *, how: str
) -> float:
    """GenerateFlowFile -> PublishKafka; *how*: FLOW_FILE, demarcated or RECORD."""
    flow = _flow(bootstrap, f"bench-publish-{how}", how == "RECORD")
    options: dict[str, object] = {"kafka_connection_service": "kafka", "topic_name": topic}
    options["transactions_enabled"] = False
    if how == "FLOW_FILE":
        generate = GenerateFlowFile(batch_size=messages, file_size=f"{size} B")
        flowfiles = messages
    else:
        text = b"\n".join([_message(size)] * _PER_FLOWFILE).decode()
        flowfiles = messages // _PER_FLOWFILE
        generate = GenerateFlowFile(batch_size=flowfiles, data_format="Text", custom_text=text)
        if how == "RECORD":
            options.update(record_reader="reader", record_writer="writer")
        else:
            options["message_demarcator"] = "\n"
    gen = flow.add(generate, name="gen")
    publish = flow.add(PublishKafka(**options), name="publish")
    flow.connect(gen, publish)
    flow.auto_terminate(publish, ["success", "failure"])

    def check(result: object) -> None:
        sent = result.count("publish", "success")  # type: ignore[attr-defined]
        assert sent == flowfiles, result.transfers  # type: ignore[attr-defined]

    return _timed(flow, root, check)


def _consume(
    bootstrap: str, topic: str, messages: int, root: Path, *, group: str, how: str
) -> float:
    """ConsumeKafka (earliest) of *topic*, Processing Strategy *how*."""
    flow = _flow(bootstrap, f"bench-consume-{how}", how == "RECORD")
    options: dict[str, object] = {
        "kafka_connection_service": "kafka",
        "group_id": group,
        "topics": topic,
        "auto_offset_reset": "earliest",
        "commit_offsets": False,
        "processing_strategy": how,
    }
    if how == "RECORD":
        options.update(record_reader="reader", record_writer="writer")
    if how == "DEMARCATOR":
        options["message_demarcator"] = "\n"
    consume = flow.add(ConsumeKafka(**options), name="consume")
    flow.auto_terminate(consume, ["success", "parse failure"] if how == "RECORD" else ["success"])

    def check(result: object) -> None:
        if how == "FLOW_FILE":
            got = result.count("consume", "success")  # type: ignore[attr-defined]
            assert got == messages, result.transfers  # type: ignore[attr-defined]

    return _timed(flow, root, check)


def _reader_writer(messages: int, size: int) -> float:
    """JsonTreeReader over the joined values, JsonRecordSetWriter of its batches: seconds."""
    reader, writer = (
        s.enable(ServiceContext(s)) for s in (JsonTreeReader("r"), JsonRecordSetWriter("w"))
    )
    joined = b"\n".join([_message(size)] * messages)
    started = time.perf_counter()
    batches = list(reader.create_reader({}, io.BytesIO(joined)))
    out = io.BytesIO()
    record_writer = writer.create_writer(batches[0].schema, {}, out)
    for batch in batches:
        record_writer.write(batch)
    record_writer.finish()
    elapsed = time.perf_counter() - started
    assert sum(b.num_rows for b in batches) == messages
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cluster = MockCluster()
    boot, n, size = cluster.bootstrap, args.messages, args.size
    rates: dict[str, list[float]] = {}
    fixed: list[float] = []
    _produce_loop(boot, "one", 1, size)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for run in range(args.repeat):
            source = f"loop{run}"
            cases: dict[str, Callable[[], float]] = {
                "produce loop": lambda t=source: _produce_loop(boot, t, n, size),
                "consume loop": lambda t=source: _consume_loop(boot, t, n),
            }
            for how in ("FLOW_FILE", "demarcated", "RECORD"):
                cases[f"PublishKafka {how}"] = lambda how=how, t=f"pub-{how}-{run}": _publish(
                    boot, t, n, size, root, how=how
                )
            for how in ("FLOW_FILE", "DEMARCATOR", "RECORD"):
                cases[f"ConsumeKafka {how}"] = lambda how=how, t=source, g=f"g-{how}-{run}": (
                    _consume(boot, t, n, root, group=g, how=how)
                )
            cases["JSON reader+writer alone"] = lambda: _reader_writer(n, size)
            for name, case in cases.items():
                gc.collect()  # each case starts without the last one's garbage
                rates.setdefault(name, []).append(n / case())
            gc.collect()
            fixed.append(_consume(boot, "one", 1, root, group=f"one-{run}", how="FLOW_FILE"))
    best = {name: max(values) for name, values in rates.items()}
    report = {
        "messages": n,
        "size": size,
        "rounds": args.repeat,
        "msgs_per_s_best": {k: round(v) for k, v in best.items()},
        "msgs_per_s_range": {k: [round(min(v)), round(max(v))] for k, v in rates.items()},
        "fixed_cost_s_best_range": [round(min(fixed), 3), round(max(fixed), 3)],
        # a consume case's best time less the best fixed cost, vs the consume loop's best
        # (None: the case took no longer than a run of one message)
        "consume_vs_loop_without_fixed_cost": {
            k: round(n / (n / v - min(fixed)) / best["consume loop"], 2)
            if n / v > min(fixed)
            else None
            for k, v in best.items()
            if k.startswith("ConsumeKafka")
        },
        "vs_loop_best": {
            k: round(v / best["produce loop" if k.startswith("Publish") else "consume loop"], 2)
            for k, v in best.items()
            if "Kafka" in k or "alone" in k
        },
    }
    print(json.dumps(report, indent=2))
    cluster.close()


if __name__ == "__main__":
    main()
