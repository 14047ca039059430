"""Notify: count a release signal in the map cache for FlowFiles held at a Wait processor."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

import attrs

import processors._wait_notify as protocol
from flowcore.expression._nodes import ResultType
from flowcore.flowfile import FlowFile
from flowcore.patterns import compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
)

__all__ = ["Notify"]

NOTIFIED = "notified"
_JAVA_INT = re.compile(r"[-+]?\d+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1

REL_SUCCESS = Relationship(
    "success",
    "All FlowFiles where the release signal has been successfully entered in the cache will "
    "be routed to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "When the cache cannot be reached, or if the Release Signal Identifier evaluates to null or "
    "empty, FlowFiles will be routed to this relationship",
)


@attrs.define
class _Buffer:
    """What one trigger gathers for one signal identifier (NiFi's SignalBuffer)."""

    deltas: dict[str, int] = attrs.Factory(dict)
    attributes: dict[str, str] = attrs.Factory(dict)
    flowfiles: list[FlowFile] = attrs.Factory(list)

    def add(self, counter: str, delta: int) -> None:
        self.deltas[counter] = 0 if delta == 0 else self.deltas.get(counter, 0) + delta


def _java_int(text: str | None) -> int | None:
    """Java's ``Integer.parseInt``: an optional sign and digits within 32 bits, else None."""
    if text is None or not _JAVA_INT.fullmatch(text):
        return None
    value = int(text)
    return value if _INT_MIN <= value <= _INT_MAX else None


class Notify(Processor):
    """Caches a release signal (a counter, optionally with attributes) for Wait to find.

    NiFi's Notify over the flow's :class:`~flowcore.services.MapCacheService`: each FlowFile adds
    ``Signal Counter Delta`` (0 resets) to counter ``Signal Counter Name`` of the signal keyed by
    its ``Release Signal Identifier``; attributes matching ``Attribute Cache Regular Expression``
    (never ``uuid``) are stored with it for Wait to copy. Up to ``Signal Buffer Count``
    FlowFiles are gathered per trigger and each signal is written once. Every FlowFile gets
    ``notified`` (true on success, false on failure). The signal entries are committed with the
    FlowFiles (one write-ahead log transaction), so Wait never sees a signal whose FlowFile was
    not kept, and a crash never loses one whose FlowFile went on.
    """

    RELEASE_SIGNAL_IDENTIFIER = PropertyDescriptor(
        "Release Signal Identifier",
        description="A value, or the results of an Attribute Expression Language statement, "
        "which will be evaluated against a FlowFile in order to determine the release signal "
        "cache key",
        required=True,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
        aliases=("release-signal-id",),
    )
    SIGNAL_COUNTER_NAME = PropertyDescriptor(
        "Signal Counter Name",
        description="A value, or the results of an Attribute Expression Language statement, "
        "which will be evaluated against a FlowFile in order to determine the signal counter "
        "name. Signal counter name is useful when a corresponding Wait processor needs to know "
        "the number of occurrences of different types of events, such as success or failure, or "
        "destination data source names, etc.",
        required=True,
        default=protocol.DEFAULT_COUNT_NAME,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
        aliases=("signal-counter-name",),
    )
    SIGNAL_COUNTER_DELTA = PropertyDescriptor(
        "Signal Counter Delta",
        description="A value, or the results of an Attribute Expression Language statement, "
        "which will be evaluated against a FlowFile in order to determine the signal counter "
        "delta. Specify how much the counter should increase. For example, if multiple signal "
        "events are processed at upstream flow in batch oriented way, the number of events "
        "processed can be notified with this property at once. Zero (0) has a special meaning, "
        "it clears target count back to 0, which is especially useful when used with Wait "
        "Releasable FlowFile Count = Zero (0) mode, to provide 'open-close-gate' type of flow "
        "control. One (1) can open a corresponding Wait processor, and Zero (0) can negate it "
        "as if closing a gate.",
        required=True,
        default="1",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
        aliases=("signal-counter-delta",),
    )
    SIGNAL_BUFFER_COUNT = PropertyDescriptor(
        "Signal Buffer Count",
        description="Specify the maximum number of incoming FlowFiles that can be buffered until "
        "signals are notified to cache service. The more buffer can provide the better "
        "performance, as it reduces the number of interactions with cache service by grouping "
        "signals by signal identifier when multiple incoming FlowFiles share the same signal "
        "identifier.",
        required=True,
        default="1",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        aliases=("signal-buffer-count",),
    )
    DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
        "Distributed Cache Service",
        description="The Controller Service that is used to cache release signals in order to "
        "release files queued at a corresponding Wait processor (a MapCacheService the flow "
        "declares, by name)",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        identifies_service=True,
        aliases=("distributed-cache-service",),
    )
    ATTRIBUTE_CACHE_REGEX = PropertyDescriptor(
        "Attribute Cache Regular Expression",
        description="Any attributes whose names match this regex will be stored in the "
        "distributed cache to be copied to any FlowFiles released from a corresponding Wait "
        "processor.  Note that the uuid attribute will not be cached regardless of this value.  "
        "If blank, no attributes will be cached.",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
        aliases=("attribute-cache-regex",),
    )
    property_descriptors: ClassVar = (
        RELEASE_SIGNAL_IDENTIFIER,
        SIGNAL_COUNTER_NAME,
        SIGNAL_COUNTER_DELTA,
        SIGNAL_BUFFER_COUNT,
        DISTRIBUTED_CACHE_SERVICE,
        ATTRIBUTE_CACHE_REGEX,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("map", "cache", "notify", "distributed", "signal", "release")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        NOTIFIED: "All FlowFiles will have an attribute 'notified'. The value of this attribute "
        "is true, is the FlowFile is notified, otherwise false."
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Gather up to Signal Buffer Count FlowFiles, then write each signal once."""
        signal_id = context.get_property(self.RELEASE_SIGNAL_IDENTIFIER)
        counter_name = context.get_property(self.SIGNAL_COUNTER_NAME)
        delta_value = context.get_property(self.SIGNAL_COUNTER_DELTA)
        regex = context.get_property(self.ATTRIBUTE_CACHE_REGEX).value
        pattern = compile_pattern(regex) if regex else None
        buffers: dict[str, _Buffer] = {}
        for _ in range(context.get_property(self.SIGNAL_BUFFER_COUNT).as_integer() or 1):
            flowfile = session.get()
            if flowfile is None:
                break
            identifier = signal_id.evaluate_attribute_expressions(flowfile).value
            if not (identifier or "").strip():
                context.logger.error(
                    "FlowFile %s has no attribute for given Release Signal Identifier", flowfile
                )
                self._fail(session, flowfile)
                continue
            counter = counter_name.evaluate_attribute_expressions(flowfile).value
            delta_text = delta_value.evaluate_attribute_expressions(flowfile).value
            delta = _java_int(delta_text)
            if delta is None:
                context.logger.error(
                    "Failed to calculate delta for FlowFile %s due to For input string: %r",
                    flowfile,
                    delta_text,
                )
                self._fail(session, flowfile)
                continue
            buffer = buffers.setdefault(identifier or "", _Buffer())
            if pattern is not None:
                buffer.attributes.update(
                    (k, v)
                    for k, v in flowfile.attributes.items()
                    if k != "uuid" and pattern.fullmatch(k)
                )
            buffer.add(counter or protocol.DEFAULT_COUNT_NAME, delta)
            buffer.flowfiles.append(flowfile)
        if not buffers:
            return
        cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
        for identifier, buffer in buffers.items():
            protocol.notify(cache, identifier, buffer.deltas, buffer.attributes)
            for flowfile in buffer.flowfiles:
                session.transfer(
                    session.put_attribute(flowfile, NOTIFIED, "true"), REL_SUCCESS.name
                )

    @staticmethod
    def _fail(session: ProcessSession, flowfile: FlowFile) -> None:
        session.transfer(session.put_attribute(flowfile, NOTIFIED, "false"), REL_FAILURE.name)
