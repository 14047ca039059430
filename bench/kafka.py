"""PublishKafka and ConsumeKafka messages/s on librdkafka's mock cluster, beside plain loops.

One mock cluster (three brokers on loopback, in this process) serves every case; the rounds are
interleaved (each round runs every case once) and each case reports its best round and the range
of its rounds. Messages are JSON objects of ``--size`` bytes (so the RECORD cases parse them).

Baselines (plain confluent-kafka):

- ``produce loop``: an idempotent ``Producer``, ``--messages`` messages, then ``flush``;
- ``consume loop``: a ``Consumer`` assigned to every partition from offset 0, polling until it
  has every message (consumer made and metadata read before the clock starts);
- ``consume loop, whole``: what a user of a plain loop waits for, the work ConsumeKafka does, all
  timed: a ``Consumer`` made with a fresh group.id (no auto commit, earliest), the topic's
  metadata, every partition assigned at the group's offsets (ConsumeKafka assigns ranges itself:
  no group management), polled until it has every message, offsets committed synchronously,
  closed;
- ``consume loop, whole, subscribe``: the same with ``subscribe`` (group management) instead of
  ``assign``, which ConsumeKafka does not do: the mock cluster's group join costs ~3 s, shown for
  scale only (no ratio is taken against it).

The consumed topic is filled before each round, untimed, round robin over enough partitions that
none holds more than ~2 MiB: the mock cluster keeps only the last 5 MiB of each partition (older
message sets are deleted), so a partition filled past that starts above offset 0 and a loop
from 0 never gets every message (a 200,000-message run "stalled" so: its loop, reset to the end,
waited forever). The bench checks the topic holds every message, and a loop that cannot get them
all within a minute fails naming what it got.

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

    .venv/bin/python bench/kafka.py [--messages N] [--size BYTES] [--repeat N] [--only TEXT]

- ``listing``: one ConsumeKafka listing (``list_work``) with every partition's position behind
  its end and carrying a leader epoch (each validated, each new range's last epoch learnt, the
  topic's ID asked: the truncation checks' cost), beside ``watermarks alone``, a plain consumer
  reading the same partitions' watermarks (the least any listing does), and ``listing, caught
  up``: a listing with every position at its log end (nothing to hand out: no probe, no topic
  ID asked, what a flow's idle listings cost); best of 10 calls a round, seconds.

``--only consume`` runs the cases whose name holds the text (any case; several texts
comma-separated, ``--only 'produce,publish'``), for long runs;
``--only listing`` runs the listing alone.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import math
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
#: Bytes of messages per partition of a consumed topic (the mock cluster keeps 5 MiB of each).
_PARTITION_BYTES = 2 * 1024 * 1024
#: Seconds a consume loop may take before the bench fails rather than wait forever.
_LOOP_DEADLINE = 60


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


def _fill(bootstrap: str, name: str, messages: int, size: int) -> list[str]:
    """Topics ``name-0``... holding *messages* in all, round robin, none past the mock's 5 MiB.

    The mock cluster makes topics of 4 partitions and cannot make others (no CreateTopics), so
    a larger run spreads over more topics: ~2 MiB of messages per partition.
    """
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0, "linger.ms": 50})
    per_topic = 4 * max(1, _PARTITION_BYTES // (size + 64))
    topics = [f"{name}-{k}" for k in range(math.ceil(messages / per_topic))]
    slots = []
    for topic in topics:  # a producer's metadata request creates the topic
        partitions = producer.list_topics(topic, timeout=10).topics[topic].partitions
        slots.extend((topic, p) for p in sorted(partitions))
    value = _message(size)
    for i in range(messages):
        topic, partition = slots[i % len(slots)]
        while True:
            try:
                producer.produce(topic, value, partition=partition)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(60) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "fill", "log_level": 0})
    marks = [consumer.get_watermark_offsets(TopicPartition(*slot), 10) for slot in slots]
    consumer.close()
    held = sum(high - low for low, high in marks)
    if held != messages or any(low for low, _ in marks):
        msg = f"topics {name}-* hold {held} of {messages} messages (watermarks {marks})"
        raise SystemExit(msg)
    return topics


def _assignment(consumer: Consumer, topics: list[str], offset: int | None) -> list[TopicPartition]:
    """Every partition of *topics* (at *offset*, or None: the group's committed offsets)."""
    found = []
    for topic in topics:
        for p in sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions):
            found.append(
                TopicPartition(topic, p) if offset is None else TopicPartition(topic, p, offset)
            )
    return found


def _poll_all(consumer: Consumer, messages: int) -> None:
    """Poll until *messages* messages came, or fail after the deadline saying how many did."""
    got = 0
    deadline = time.monotonic() + _LOOP_DEADLINE
    while got < messages:
        got += sum(1 for m in consumer.consume(10_000, timeout=1) if not m.error())
        if time.monotonic() > deadline:
            msg = f"consume loop got {got} of {messages} messages in {_LOOP_DEADLINE} s"
            raise SystemExit(msg)


def _consume_loop(bootstrap: str, topics: list[str], messages: int) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "loop", "log_level": 0})
    assignment = _assignment(consumer, topics, 0)
    started = time.perf_counter()
    consumer.assign(assignment)
    _poll_all(consumer, messages)
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def _consume_loop_whole(
    bootstrap: str, topics: list[str], messages: int, *, group: str, subscribe: bool = False
) -> float:
    """Consumer made, assigned (or subscribed), every message, offsets committed, closed."""
    started = time.perf_counter()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    if subscribe:
        consumer.subscribe(topics)
    else:
        consumer.assign(_assignment(consumer, topics, None))  # at the group's offsets
    _poll_all(consumer, messages)
    consumer.commit(asynchronous=False)
    consumer.close()
    return time.perf_counter() - started


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
    bootstrap: str, topics: list[str], messages: int, root: Path, *, group: str, how: str
) -> float:
    """ConsumeKafka (earliest) of *topic*, Processing Strategy *how*."""
    flow = _flow(bootstrap, f"bench-consume-{how}", how == "RECORD")
    options: dict[str, object] = {
        "kafka_connection_service": "kafka",
        "group_id": group,
        "topics": ",".join(topics),
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


def _listing(bootstrap: str, topics: list[str], calls: int) -> tuple[float, float]:
    """Best seconds of one ConsumeKafka listing with every partition's position behind its end,
    and of one with every position at its end (caught up).

    The positions (after a first listing of 100 messages a partition) carry leader epochs, so
    each listing validates every one and learns each new range's last epoch: the listing's whole
    cost, the state never advanced.
    """
    from flowcore.testing import TestRunner

    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="listing",
            topics=",".join(topics),
            auto_offset_reset="earliest",
            commit_offsets="false",
        )
    )
    service = Kafka3ConnectionService("kafka", bootstrap_servers=bootstrap, max_poll_records="100")
    runner.add_service(service)
    runner.run(iterations=0, stop_on_finish=False)
    processor, context = runner.processor, runner.context
    state = processor.list_work(context, {}).state
    best = math.inf
    for _ in range(calls):
        start = time.perf_counter()
        processor.list_work(context, state)
        best = min(best, time.perf_counter() - start)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ends", "log_level": 0})
    metadata = consumer.list_topics(timeout=10)
    ends = {
        f"{t}:{p}": str(consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1])
        for t in topics
        for p in metadata.topics[t].partitions
    }
    consumer.close()
    caught_up = math.inf
    for _ in range(calls):
        start = time.perf_counter()
        assert not processor.list_work(context, ends).items
        caught_up = min(caught_up, time.perf_counter() - start)
    runner.stop()
    return best, caught_up


def _watermarks(bootstrap: str, topics: list[str], calls: int) -> float:
    """Best seconds of a plain consumer reading every partition's watermarks (made untimed)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "marks", "log_level": 0})
    metadata = consumer.list_topics(timeout=10)
    parts = [TopicPartition(t, p) for t in topics for p in metadata.topics[t].partitions]
    best = math.inf
    for _ in range(calls):
        start = time.perf_counter()
        for tp in parts:
            consumer.get_watermark_offsets(tp, timeout=10)
        best = min(best, time.perf_counter() - start)
    consumer.close()
    return best


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


def _ratios(best: dict[str, float], cases: str, baseline: str) -> dict[str, float]:
    """Each of *cases*' best rate against *baseline*'s best (none when it was not run)."""
    if baseline not in best:
        return {}
    return {k: round(v / best[baseline], 2) for k, v in best.items() if k.startswith(cases)}


def _table(report: dict, rates: dict[str, list[float]]) -> str:
    """The short table: each case's best and range, and the ratios the report took."""
    loop, whole = report["vs_loop_best"], report["vs_loop_whole_best"]
    lines = [
        f"{report['messages']:,} messages of {report['size']} B, best of {report['rounds']}",
        f"{'case':34} {'msgs/s best':>12} {'range':>21} {'vs loop':>8} {'vs whole':>9}",
    ]
    for name, values in rates.items():
        low, high = min(values), max(values)
        ratio = f"{loop[name]:.2f}x" if name in loop else ""
        ratio_whole = f"{whole[name]:.2f}x" if name in whole else ""
        lines.append(
            f"{name:34} {high:12,.0f} {f'{low:,.0f}-{high:,.0f}':>21} {ratio:>8} {ratio_whole:>9}"
        )
    low, high = report["fixed_cost_s_best_range"]
    lines.append(f"fixed cost (one message, whole run): {low:.3f}-{high:.3f} s")
    if report["listing_s_best_range"]:
        low, high = report["listing_s_best_range"]
        marks_low, marks_high = report["watermarks_s_best_range"]
        idle_low, idle_high = report["listing_caught_up_s_best_range"]
        lines.append(
            f"listing (positions validated, epochs learnt, topic IDs): {low:.4f}-{high:.4f} s; "
            f"caught up: {idle_low:.4f}-{idle_high:.4f} s; "
            f"watermarks alone: {marks_low:.4f}-{marks_high:.4f} s"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", default="", help="run only the cases whose name holds this (or any of a,b)"
    )
    args = parser.parse_args()
    cluster = MockCluster()
    boot, n, size = cluster.bootstrap, args.messages, args.size
    rates: dict[str, list[float]] = {}
    fixed: list[float] = []
    listing: list[float] = []
    idle: list[float] = []
    marks: list[float] = []
    _produce_loop(boot, "one", 1, size)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for run in range(args.repeat):
            source = _fill(boot, f"src{run}", n, size)
            cases: dict[str, Callable[[], float]] = {
                "produce loop": lambda t=f"loop{run}": _produce_loop(boot, t, n, size),
                "consume loop": lambda t=source: _consume_loop(boot, t, n),
                "consume loop, whole": lambda t=source, g=f"whole-{run}": _consume_loop_whole(
                    boot, t, n, group=g
                ),
                "consume loop, whole, subscribe": lambda t=source, g=f"sub-{run}": (
                    _consume_loop_whole(boot, t, n, group=g, subscribe=True)
                ),
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
                if not any(part in name.lower() for part in args.only.lower().split(",")):
                    continue
                gc.collect()  # each case starts without the last one's garbage
                rates.setdefault(name, []).append(n / case())
            gc.collect()
            fixed.append(_consume(boot, ["one"], 1, root, group=f"one-{run}", how="FLOW_FILE"))
            if "listing" in args.only.lower() or not args.only:
                moving, caught_up = _listing(boot, source, 10)
                listing.append(moving)
                idle.append(caught_up)
                marks.append(_watermarks(boot, source, 10))
    best = {name: max(values) for name, values in rates.items()}
    loop = best.get("consume loop")
    report = {
        "messages": n,
        "size": size,
        "rounds": args.repeat,
        "msgs_per_s_best": {k: round(v) for k, v in best.items()},
        "msgs_per_s_range": {k: [round(min(v)), round(max(v))] for k, v in rates.items()},
        "fixed_cost_s_best_range": [round(min(fixed), 3), round(max(fixed), 3)],
        # one listing, each partition's position validated and its range's epoch learnt, and
        # a plain consumer reading the same partitions' watermarks (the least a listing does)
        "listing_s_best_range": [round(min(listing), 4), round(max(listing), 4)]
        if listing
        else None,
        # a listing with every position at its log end: no probe, no topic ID asked
        "listing_caught_up_s_best_range": [round(min(idle), 4), round(max(idle), 4)]
        if idle
        else None,
        "watermarks_s_best_range": [round(min(marks), 4), round(max(marks), 4)] if marks else None,
        # a consume case's best time less the best fixed cost, vs the consume loop's best
        # (None: the case took no longer than a run of one message)
        "consume_vs_loop_without_fixed_cost": {
            k: round(n / (n / v - min(fixed)) / loop, 2) if n / v > min(fixed) else None
            for k, v in best.items()
            if k.startswith("ConsumeKafka") and loop
        },
        "vs_loop_best": {
            **_ratios(best, "PublishKafka", "produce loop"),
            **_ratios(best, "ConsumeKafka", "consume loop"),
            **_ratios(best, "consume loop, whole", "consume loop"),
            **_ratios(best, "JSON reader+writer alone", "consume loop"),
        },
        # the ConsumeKafka cases against what a plain loop's user waits for (same work)
        "vs_loop_whole_best": _ratios(best, "ConsumeKafka", "consume loop, whole"),
    }
    print(json.dumps(report))
    print(_table(report, rates))
    cluster.close()


if __name__ == "__main__":
    main()
