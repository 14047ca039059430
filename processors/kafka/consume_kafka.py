"""ConsumeKafka: messages of Kafka topics as FlowFiles, exactly once into the flow.

NiFi 2's ``org.apache.nifi.kafka.processors.ConsumeKafka`` (NiFi 1.x ``ConsumeKafka_2_6`` names
accepted), as a source. ``list_work`` runs on the driver: it reads each partition's watermarks
and hands out offset ranges ``[start, end)`` from the SOURCE STATE (the next offset per
``topic:partition``), the state after them committed by the engine in the same WAL transaction
as the FlowFiles. ``read_work`` assigns and seeks a consumer in the task and reads exactly that
range, so a crash re-reads a range the flow never committed and never one it did: no message is
lost or repeated into the flow. With Commit Offsets, the offsets the flow committed are also
committed to the consumer group at the next listing, so lag tools see them (they trail the flow
by one listing; the flow's own position is the source state, never the group's).

Processing Strategy: ``FLOW_FILE`` (a FlowFile per message; the batch form makes a range's
FlowFiles as one columnar batch, contents back to back in one claim, attributes as columns),
``DEMARCATOR`` (a FlowFile per run of messages) or ``RECORD`` (Record Reader / Writer, a
FlowFile per write schema of a range: :mod:`processors.kafka._consume_records`). A NiFi 1.x
``ConsumeKafkaRecord_2_6`` (no Processing Strategy, a Record Reader and Writer) is ``RECORD``.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from flowcore.errors import ProcessException
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors.kafka._consume_flowfiles import (
    attribute_columns,
    demarcated_batch,
    demarcated_runs,
    groups_messages,
    message_attributes,
)
from processors.kafka._consume_listing import (
    commit_to_group,
    list_ranges,
    ranges_left,
    watermarks,
)
from processors.kafka._consume_properties import (
    AUTO_OFFSET_RESET,
    COMMIT_OFFSETS,
    GROUP_ID,
    HEADER_ENCODING,
    HEADER_NAME_PATTERN,
    KEY_ATTRIBUTE_ENCODING,
    MAX_UNCOMMITTED_SIZE,
    MAX_UNCOMMITTED_TIME,
    MESSAGE_DEMARCATOR,
    PROCESSING_STRATEGY,
    SEPARATE_BY_KEY,
    SUCCESS,
    TOPIC_FORMAT,
    TOPICS,
)
from processors.kafka._consume_ranges import fetch_ranges
from processors.kafka._consume_records import (
    KEY_FORMAT,
    KEY_RECORD_READER,
    OUTPUT_STRATEGY,
    PARSE_FAILURE,
    RECORD_READER,
    RECORD_WRITER,
    RecordOptions,
    write_record_groups,
)
from processors.kafka._consume_topic_ids import TopicIdReader, id_key
from processors.kafka.connection_service import (
    KAFKA_CONNECTION_SERVICE,
    LEGACY_CONNECTION,
    Kafka3ConnectionService,
    connection_for,
    import_kafka,
    legacy_problems,
    service_properties,
)

__all__ = ["ConsumeKafka"]

#: Warnings a ConsumeKafka copy remembers having said (:meth:`ConsumeKafka._warn_once`).
_WARNED_MAX = 1024
#: The live consumers a copy opens on the driver (closed when it stops).
_CONSUMERS = ("_lister", "_prober", "_reader")
#: What a copy keeps on the driver only: dropped when it stops and when it is pickled.
_DRIVER_ONLY = ("_reader_topics", "_ids", "_seen", *_CONSUMERS)


class ConsumeKafka(SourceProcessor):
    """Consumes messages from Kafka topics; offsets are source state: exactly once into the flow."""

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = (
        KAFKA_CONNECTION_SERVICE,
        GROUP_ID,
        TOPIC_FORMAT,
        TOPICS,
        AUTO_OFFSET_RESET,
        COMMIT_OFFSETS,
        MAX_UNCOMMITTED_SIZE,
        MAX_UNCOMMITTED_TIME,
        HEADER_NAME_PATTERN,
        HEADER_ENCODING,
        PROCESSING_STRATEGY,
        RECORD_READER,
        RECORD_WRITER,
        OUTPUT_STRATEGY,
        KEY_ATTRIBUTE_ENCODING,
        KEY_FORMAT,
        KEY_RECORD_READER,
        MESSAGE_DEMARCATOR,
        SEPARATE_BY_KEY,
        *LEGACY_CONNECTION,
    )
    properties_elsewhere: ClassVar[Mapping[str, str]] = service_properties(property_descriptors)
    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS,)
    identifies_work: ClassVar[bool] = True
    fills_micro_batch: ClassVar[bool] = True
    tags: ClassVar[tuple[str, ...]] = (
        "Kafka",
        "Get",
        "Record",
        "csv",
        "avro",
        "json",
        "Ingest",
        "Ingress",
        "Topic",
        "PubSub",
        "Consume",
    )

    def get_relationships(self) -> tuple[Relationship, ...]:
        """``success``, and ``parse failure`` once a Record Reader is set (NiFi's)."""
        if self.configured.get(RECORD_READER.name):
            return (SUCCESS, PARSE_FAILURE)
        return (SUCCESS,)

    def strategy(self, context: ProcessContext) -> str:
        """The Processing Strategy; RECORD for a NiFi 1.x ConsumeKafkaRecord_2_6's settings."""
        chosen = context.get_property(PROCESSING_STRATEGY).value or "FLOW_FILE"
        configured = self.configured
        if PROCESSING_STRATEGY.name not in configured and configured.get(RECORD_READER.name):
            return "RECORD"
        return chosen

    # --- the driver side ------------------------------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """List and read in one session (the test harness), the service from the session.

        As NiFi's trigger polls until Max Uncommitted Time passes or its records' keys and
        values make Max Uncommitted Size, this lists again while listings give ranges, until
        either bound (a listing takes at most Max Poll Records a partition). In a flow, the
        engine's micro-batch lists until ``batch_max_flowfiles`` instead (docs/kafka.md).
        """
        service = connection_for(self, context, session.controller_service)
        committed = dict(session.get_state().values)
        state = committed
        size = context.get_property(MAX_UNCOMMITTED_SIZE).as_data_size("B")
        wait = context.get_property(MAX_UNCOMMITTED_TIME).as_time_period("s") or 0.0
        deadline = time.monotonic() + wait
        taken = 0
        while True:  # the group is told the committed offsets only: the first listing
            listing = self._list(context, service, state, commit_group=state is committed)
            for item in listing.items:
                taken += self._read(context, service, session, item)
            state = dict(listing.state)
            if not listing.items or time.monotonic() >= deadline or (size and taken >= size):
                break
        if state != committed:
            session.set_state(state)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Offset ranges per partition after the committed *state*, and the state after them."""
        service = connection_for(self, context, context.controller_service)
        return self._list(context, service, state)

    def _admin_consumer(self, context: ProcessContext, service: Kafka3ConnectionService) -> Any:
        """The driver's consumer for metadata, watermarks and group commits, made once.

        Its isolation level is the service's, as the reader's: librdkafka sends it with the
        watermarks' ListOffsets, so with ``read_committed`` the high watermark is the last
        stable offset and no range ends inside an open transaction (the reader would wait
        for that transaction until Client Timeout, and fail the range).
        """
        consumer = getattr(self, "_lister", None)
        if consumer is None:
            config = {
                "group.id": context.get_property(GROUP_ID).value,
                "enable.auto.commit": False,
                "isolation.level": service.isolation_level,
            }
            consumer = self._lister = import_kafka().Consumer(service.client_config(**config))
        return consumer

    def _probe_consumer(self, context: ProcessContext, service: Kafka3ConnectionService) -> Any:
        """The driver's consumer for leader-epoch checks and learning (:mod:`._consume_epochs`).

        Made once, apart from :meth:`_admin_consumer`: it reads uncommitted messages.
        """
        consumer = getattr(self, "_prober", None)
        if consumer is None:
            config = {
                "group.id": context.get_property(GROUP_ID).value,
                "enable.auto.commit": False,
                # a position whose leader epoch has no messages left is read from the log's
                # start, not skipped to its end
                "auto.offset.reset": "earliest",
                "enable.partition.eof": False,
                "fetch.wait.max.ms": 10,
                # a probe wants a partition's first messages only: librdkafka's default
                # fetched 1 MiB a partition
                "max.partition.fetch.bytes": 1024,
                # and any message: read_committed held back an open transaction's (a check
                # waited for them until its timeout, and a position's check is no read)
                "isolation.level": "read_uncommitted",
            }
            consumer = self._prober = import_kafka().Consumer(service.client_config(**config))
        return consumer

    def _topics(
        self, context: ProcessContext, consumer: Any, service: Kafka3ConnectionService
    ) -> list[Any]:
        """The topics' metadata: the names given, or every topic matching the pattern."""
        spec = context.get_property(TOPICS).evaluate_attribute_expressions({}).value or ""
        if context.get_property(TOPIC_FORMAT).value == "pattern":
            pattern = re.compile(spec.strip())
            metadata = _metadata(consumer, None, service)
            return [t for n, t in sorted(metadata.topics.items()) if pattern.fullmatch(n)]
        found = []
        for name in (n.strip() for n in spec.split(",") if n.strip()):
            topic = _metadata(consumer, name, service).topics.get(name)
            if topic is None or topic.error is not None:
                cause = topic.error.str() if topic is not None else "not found"
                msg = f"Kafka topic {name!r} cannot be consumed: {cause}"
                raise ProcessException(msg)
            found.append(topic)
        return found

    def _list(
        self,
        context: ProcessContext,
        service: Kafka3ConnectionService,
        state: Mapping[str, str],
        *,
        commit_group: bool = True,
    ) -> WorkListing:
        """Ranges after the *state*'s positions, each validated by its leader epoch first.

        A position whose partition's log diverged below it (:mod:`._consume_epochs`) moves back
        to where the log diverged, with a warning naming both offsets; one whose check did not
        answer within Max Metadata Wait Time is held back (no range, its state kept, warned)
        and checked again next listing. The new positions carry the leader epoch of their
        ranges' last messages, learnt by reading them.
        """
        kafka = import_kafka()
        consumer = self._admin_consumer(context, service)
        timeout = service.metadata_wait
        if commit_group and state and context.get_property(COMMIT_OFFSETS).as_boolean():
            commit_to_group(kafka, consumer, state)
        marks = watermarks(kafka, consumer, self._topics(context, consumer, service), timeout)
        reset = context.get_property(AUTO_OFFSET_RESET).value or "latest"
        self._seen = (marks, reset, service.max_poll_records)
        return list_ranges(
            kafka,
            self._probe_consumer(context, service),
            marks,
            state,
            reset=reset,
            room=service.max_poll_records,
            timeout=timeout,
            warn=context.logger.warning,
            topic_ids=functools.partial(self._topic_ids, context, service),
        )

    def _topic_ids(
        self, context: ProcessContext, service: Kafka3ConnectionService, topics: Sequence[str]
    ) -> dict[str, str]:
        """The *topics*' IDs this listing could read, by this copy's :class:`TopicIdReader`."""
        reader = self.__dict__.get("_ids")
        if reader is None:
            reader = self._ids = TopicIdReader(service.client_config())
        warn = functools.partial(self._warn_once, context)
        return reader.read(import_kafka(), topics, service.metadata_wait, warn)

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """The ranges left after the committed *state* up to the log ends the last listing saw.

        Work items, as the progress display and ``flowcore status`` count them (at most Max
        Poll Records messages each); no bytes (the listing does not know them). None before
        this copy's first listing. Messages written since that listing are not counted: this
        asks no broker, as the engine asks it after every micro-batch.
        """
        del context
        seen = self.__dict__.get("_seen")
        if seen is None:
            return None
        marks, reset, room = seen
        return PendingWork(ranges_left(marks, state, reset=reset, room=room))

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Any,
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """Put back unread ranges: their partitions' offsets return to the committed ones.

        A range of a topic made again (the listing's topic ID is not the committed one) returns
        to its start: the committed offset is the old topic's.
        """
        restored = dict(state)
        remade: dict[str, int] = {}  # a re-made topic's partition -> its lowest unread start
        for item in items:
            topic = item.payload["topic"]
            key = f"{topic}:{item.payload['partition']}"
            kept = committed.get(id_key(topic))
            if kept is not None and kept != state.get(id_key(topic)):
                start = int(item.payload["start"])
                remade[key] = min(start, remade.get(key, start))
                restored[key] = str(remade[key])
            else:
                restored[key] = committed.get(key, str(item.payload["start"]))
        return restored

    def on_stopped(self, context: ProcessContext) -> None:
        """Close the consumers this copy opened."""
        del context
        for name in _DRIVER_ONLY:
            held = self.__dict__.pop(name, None)
            if held is not None and name in _CONSUMERS:
                held.close()

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """A Kafka Connection Service, or a NiFi 1.x flow's Kafka Brokers."""
        problems = legacy_problems(values)
        record = values.get(PROCESSING_STRATEGY.name) == "RECORD"
        for needed in (RECORD_READER, RECORD_WRITER) if record else ():
            if not values.get(needed.name):
                why = f"Processing Strategy RECORD needs a {needed.name}"
                problems.append(ValidationResult(needed.name, None, False, why))
        wrapper = values.get(OUTPUT_STRATEGY.name) == "USE_WRAPPER"
        keyed = record and wrapper and values.get(KEY_FORMAT.name) == "record"
        if keyed and not values.get(KEY_RECORD_READER.name):
            why = "Key Format 'record' needs a Key Record Reader"
            problems.append(ValidationResult(KEY_RECORD_READER.name, None, False, why))
        return problems

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without live consumers (Spark ships the processor)."""
        state = dict(self.__dict__)
        for name in (*_DRIVER_ONLY, "_legacy_service"):
            state.pop(name, None)
        return state

    # --- the task side --------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Read exactly the item's offset range and make its FlowFiles."""
        service = connection_for(self, context, session.controller_service)
        self._read(context, service, session, item)

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> Sequence[tuple[str, FlowFileBatch]] | None:
        """The batch form: each range's messages as FlowFiles made in batches, no session each.

        The items' ranges are read together (:meth:`_fetch_ranges`). DEMARCATOR makes its one
        FlowFile per range here too, when no key or header tells messages apart. Declines (the
        engine then calls :meth:`read_work`) for RECORD, and DEMARCATOR with Separate By Key or
        a Header Name Pattern: they make a FlowFile per group of a range, a session each.
        """
        strategy = self.strategy(context)
        demarcated = strategy == "DEMARCATOR"
        if strategy == "RECORD" or (demarcated and groups_messages(context)):
            return None
        service = connection_for(self, context, maker.controller_service)
        made: list[tuple[str, FlowFileBatch]] = []
        for item, read in zip(items, self._fetch_ranges(context, service, items), strict=True):
            if isinstance(read, ProcessException):
                maker.unread(item, read)
                continue
            if not read:
                continue
            if demarcated:
                batch = demarcated_batch(context, maker, read)
            else:
                values = list(map(type(read[0]).value, read))
                if None in values:  # a tombstone: no content
                    sizes = np.fromiter((len(v) if v else 0 for v in values), np.int64)
                    claim = maker.write(b"".join(v for v in values if v))
                else:
                    sizes = np.fromiter(map(len, values), np.int64, len(values))
                    claim = maker.write(b"".join(values))
                shared, columns = attribute_columns(context, self.configured, read, values)
                batch = maker.create_spans(claim, sizes, shared).with_columns(columns)
            maker.report_receive(batch, f"{service.transit_uri_base}/{item.payload['topic']}")
            made.append((SUCCESS.name, batch))
        return made

    def _read(
        self,
        context: ProcessContext,
        service: Kafka3ConnectionService,
        session: ProcessSession,
        item: WorkItem,
    ) -> int:
        """Make one range's FlowFiles in *session*; returns its messages' key and value bytes."""
        messages = self._fetch(context, service, item)
        transit = f"{service.transit_uri_base}/{item.payload['topic']}"
        strategy = self.strategy(context)
        size = sum(len(m.key() or b"") + len(m.value() or b"") for m in messages)
        if strategy == "DEMARCATOR":
            demarcated_runs(context, self.configured, session, messages, transit)
            return size
        if strategy == "RECORD":
            options = self._record_options(context, session)
            write_record_groups(session, messages, options, transit, SUCCESS)
            return size
        for message in messages:
            flowfile = session.create()
            flowfile = session.write(flowfile, message.value() or b"")
            flowfile = session.put_all_attributes(
                flowfile, message_attributes(context, self.configured, message)
            )
            session.provenance.receive(flowfile, transit)
            session.transfer(flowfile, SUCCESS)
        return size

    def _reader_consumer(self, context: ProcessContext, service: Kafka3ConnectionService) -> Any:
        """The task's consumer, made once; assigned only while it reads ranges."""
        consumer = getattr(self, "_reader", None)
        if consumer is None:
            config = service.client_config(
                **{
                    "group.id": context.get_property(GROUP_ID).value,
                    "enable.auto.commit": False,
                    "isolation.level": service.isolation_level,
                    "enable.partition.eof": False,
                    # a range's reader is assigned for that range only: waiting the default
                    # 500 ms for more data at each assignment's end made reads ~45x slower
                    "fetch.wait.max.ms": 10,
                    # a range's start that retention deleted after the listing: read what is
                    # left of it, as the listing starts at the log start (librdkafka's default
                    # `latest` jumped past the range: no message came, the read timed out).
                    # A log ending below the range's start (truncated, or the topic made
                    # again) starts there too: fetch_ranges fails the range at the first offset
                    # below its start, warning once, and the listing moves the state back
                    "auto.offset.reset": "earliest",
                }
            )
            consumer = self._reader = import_kafka().Consumer(config)
            self._reader_topics: set[str] = set()  # topics whose metadata the reader holds
        return consumer

    def _fetch(
        self, context: ProcessContext, service: Kafka3ConnectionService, item: WorkItem
    ) -> list[Any]:
        """The messages of one item's range (:meth:`_fetch_ranges`), or its error raised."""
        (read,) = self._fetch_ranges(context, service, [item])
        if isinstance(read, ProcessException):
            raise read
        return read

    def _fetch_ranges(
        self, context: ProcessContext, service: Kafka3ConnectionService, items: Sequence[WorkItem]
    ) -> list[list[Any] | ProcessException]:
        """The messages of each item's range, read together (:mod:`._consume_ranges`).

        The reader first asks for the metadata of each topic it has not read yet: assigned a
        topic it knew nothing of, librdkafka waited for its next metadata refresh, ~1 s, before
        fetching (each topic but the first of a task's, each task).
        """
        consumer = self._reader_consumer(context, service)
        known = self._reader_topics
        for topic in dict.fromkeys(item.payload["topic"] for item in items):
            if topic not in known:
                _metadata(consumer, topic, service)
                known.add(topic)
        warn = functools.partial(self._warn_once, context)
        return fetch_ranges(import_kafka(), consumer, items, service.client_timeout, warn)

    def _warn_once(self, context: ProcessContext, text: str) -> None:
        """Log *text* as a warning unless this copy did lately (a range retried says it once).

        The texts said are kept in order, the oldest forgotten past :data:`_WARNED_MAX` (a
        long run of many truncated partitions grew the set without bound).
        """
        said: dict[str, None] = self.__dict__.setdefault("_warned", {})
        if text in said:
            return
        if len(said) >= _WARNED_MAX:
            del said[next(iter(said))]
        said[text] = None
        context.logger.warning(text)

    def _record_options(self, context: ProcessContext, session: ProcessSession) -> RecordOptions:
        def service(descriptor: PropertyDescriptor) -> Any:
            name = context.get_property(descriptor).value
            return session.controller_service(name) if name else None

        pattern = context.get_property(HEADER_NAME_PATTERN).value
        return RecordOptions(
            reader=service(RECORD_READER),
            writer=service(RECORD_WRITER),
            wrapper=context.get_property(OUTPUT_STRATEGY).value == "USE_WRAPPER",
            key_format=context.get_property(KEY_FORMAT).value or "byte-array",
            key_reader=service(KEY_RECORD_READER),
            header_pattern=re.compile(pattern) if pattern else None,
            header_encoding=context.get_property(HEADER_ENCODING).value or "UTF-8",
            attributes=lambda message: message_attributes(context, self.configured, message),
        )


def _metadata(consumer: Any, topic: str | None, service: Kafka3ConnectionService) -> Any:
    """The cluster's (or *topic*'s) metadata.

    Brokers that do not answer are named, with where they are set (the service's Bootstrap
    Servers), as docs/kafka.md says.
    """
    kafka = import_kafka()
    timeout = service.metadata_wait
    try:
        return consumer.list_topics(topic, timeout=timeout)
    except kafka.KafkaException as ex:
        msg = (
            f"Kafka brokers {service.config['bootstrap.servers']} unreachable (no metadata "
            f"within {timeout:g} s): {ex.args[0].str()}; check Bootstrap Servers of "
            f"Kafka3ConnectionService '{service.name}' and that the brokers run"
        )
        raise ProcessException(msg) from None
