"""Wait: hold FlowFiles until Notify has counted enough release signals in the map cache."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import ClassVar

import processors._wait_notify as protocol
from flowcore.expression._nodes import ResultType
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.host import FlowFileFilterResult
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
)

__all__ = ["Wait"]

WAIT_START_TIMESTAMP = "wait.start.timestamp"
_JAVA_LONG = re.compile(r"[-+]?\d+")

COPY_REPLACE = AllowableValue(
    "replace",
    "Replace if present",
    "When cached attributes are copied onto released FlowFiles, they replace any matching "
    "attributes.",
)
COPY_KEEP_ORIGINAL = AllowableValue(
    "keeporiginal",
    "Keep original",
    "Attributes on released FlowFiles are not overwritten by copied cached attributes.",
)
MODE_TRANSFER_TO_WAIT = AllowableValue(
    "wait",
    "Transfer to wait relationship",
    "Transfer a FlowFile to the 'wait' relationship when whose release signal has not been "
    "notified yet. This mode allows other incoming FlowFiles to be enqueued by moving FlowFiles "
    "into the wait relationship. It is recommended to set a prioritizer (for instance First In "
    "First Out) on the 'wait' relationship.",
)
MODE_KEEP_IN_UPSTREAM = AllowableValue(
    "keep",
    "Keep in the upstream connection",
    "Transfer a FlowFile to the upstream connection where it comes from when whose release "
    "signal has not been notified yet. This mode helps keeping upstream connection being full "
    "so that the upstream source processor will not be scheduled while back-pressure is active "
    "and limit incoming FlowFiles. ",
)

REL_SUCCESS = Relationship(
    "success",
    "A FlowFile with a matching release signal in the cache will be routed to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "When the cache cannot be reached, or if the Release Signal Identifier evaluates to null or "
    "empty, FlowFiles will be routed to this relationship",
)
REL_WAIT = Relationship(
    "wait",
    "A FlowFile with no matching release signal in the cache will be routed to this relationship",
)
REL_EXPIRED = Relationship(
    "expired",
    "A FlowFile that has exceeded the configured Expiration Duration will be routed to this "
    "relationship",
)


def _java_long(text: str | None) -> int | None:
    return int(text) if text is not None and _JAVA_LONG.fullmatch(text) else None


class Wait(Processor):
    """Routes FlowFiles to 'wait' until Notify has stored their release signal, then releases them.

    NiFi's Wait over the flow's :class:`~flowcore.services.MapCacheService`. Each trigger takes
    up to ``Wait Buffer Count`` FlowFiles sharing one ``Release Signal Identifier`` (the first
    one's; others stay queued), stamps ``wait.start.timestamp`` on first arrival, routes those
    past ``Expiration Duration`` to ``expired``, and releases to ``success`` as many as the
    signal allows: every ``Target Signal Count`` signals (of ``Signal Counter Name``, or all
    counters) let ``Releasable FlowFile Count`` FlowFiles go (0: all of them while the count is
    reached, the signal kept: an open gate). The rest go to ``wait`` (or back to the incoming
    queue with ``Keep in the upstream connection``). Released, expired and still-waiting
    FlowFiles get the signal's cached attributes (``Attribute Copy Mode``) and
    ``wait.counter.<name>`` / ``wait.counter.total`` counts. A signal used up is removed.

    The classic fork-join: SplitX's splits go through Notify (``${fragment.identifier}``), its
    original to Wait with ``Target Signal Count`` ``${fragment.count}``. The signal's updates
    are committed with the FlowFiles they released (one write-ahead log transaction), so a crash
    never releases a FlowFile twice nor consumes a signal without releasing.
    """

    RELEASE_SIGNAL_IDENTIFIER = PropertyDescriptor(
        "Release Signal Identifier",
        description="A value that specifies the key to a specific release signal cache. To "
        "decide whether the FlowFile that is being processed by the Wait processor should be "
        "sent to the 'success' or the 'wait' relationship, the processor checks the signals in "
        "the cache specified by this key.",
        required=True,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
        aliases=("release-signal-id",),
    )
    TARGET_SIGNAL_COUNT = PropertyDescriptor(
        "Target Signal Count",
        description="The number of signals that need to be in the cache (specified by the "
        "Release Signal Identifier) in order for the FlowFile processed by the Wait processor "
        "to be sent to the 'success' relationship. If the number of signals in the cache has "
        "reached this number, the FlowFile is routed to the 'success' relationship and the "
        "number of signals in the cache is decreased by this value. If Signal Counter Name is "
        "specified, this processor checks a particular counter, otherwise checks against the "
        "total number of signals in the cache.",
        required=True,
        default="1",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("target-signal-count",),
    )
    SIGNAL_COUNTER_NAME = PropertyDescriptor(
        "Signal Counter Name",
        description="Within the cache (specified by the Release Signal Identifier) the signals "
        "may belong to different counters. If this property is specified, the processor checks "
        "the number of signals in the cache that belong to this particular counter. If not "
        "specified, the processor checks the total number of signals in the cache.",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
        aliases=("signal-counter-name",),
    )
    WAIT_BUFFER_COUNT = PropertyDescriptor(
        "Wait Buffer Count",
        description="Specify the maximum number of incoming FlowFiles that can be buffered to "
        "check whether it can move forward. The more buffer can provide the better performance, "
        "as it reduces the number of interactions with cache service by grouping FlowFiles by "
        "signal identifier. Only a signal identifier can be processed at a processor execution.",
        required=True,
        default="1",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        aliases=("wait-buffer-count",),
    )
    RELEASABLE_FLOWFILE_COUNT = PropertyDescriptor(
        "Releasable FlowFile Count",
        description="A value, or the results of an Attribute Expression Language statement, "
        "which will be evaluated against a FlowFile in order to determine the releasable "
        "FlowFile count. This specifies how many FlowFiles can be released when a target count "
        "reaches target signal count. Zero (0) has a special meaning, any number of FlowFiles "
        "can be released as long as signal count matches target.",
        required=True,
        default="1",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("releasable-flowfile-count",),
    )
    EXPIRATION_DURATION = PropertyDescriptor(
        "Expiration Duration",
        description="Indicates the duration after which waiting FlowFiles will be routed to the "
        "'expired' relationship",
        required=True,
        default="10 min",
        validators=(TIME_PERIOD_VALIDATOR,),
        aliases=("expiration-duration",),
    )
    DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
        "Distributed Cache Service",
        description="The Controller Service that is used to check for release signals from a "
        "corresponding Notify processor (a MapCacheService the flow declares, by name)",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        identifies_service=True,
        aliases=("distributed-cache-service",),
    )
    ATTRIBUTE_COPY_MODE = PropertyDescriptor(
        "Attribute Copy Mode",
        description="Specifies how to handle attributes copied from FlowFiles entering the "
        "Notify processor",
        required=True,
        default=COPY_KEEP_ORIGINAL.value,
        allowable_values=(COPY_REPLACE, COPY_KEEP_ORIGINAL),
        aliases=("attribute-copy-mode",),
    )
    WAIT_MODE = PropertyDescriptor(
        "Wait Mode",
        description="Specifies how to handle a FlowFile waiting for a notify signal",
        required=True,
        default=MODE_TRANSFER_TO_WAIT.value,
        allowable_values=(MODE_TRANSFER_TO_WAIT, MODE_KEEP_IN_UPSTREAM),
        aliases=("wait-mode",),
    )
    WAIT_PENALTY_DURATION = PropertyDescriptor(
        "Wait Penalty Duration",
        description="If configured, after a signal identifier got processed but did not meet "
        "the release criteria, the signal identifier is penalized and FlowFiles having the "
        "signal identifier will not be processed again for the specified period of time, so "
        "that the signal identifier will not block others to be processed. This can be useful "
        "for use cases where a Wait processor is expected to process multiple signal "
        "identifiers, and each signal identifier has multiple FlowFiles, and also the order of "
        "releasing FlowFiles is important within a signal identifier. The FlowFile order can be "
        "configured with Prioritizers. IMPORTANT: There is a limitation of number of queued "
        "signals can be processed, and Wait processor may not be able to check all queued "
        "signal ids. See additional details for the best practice.",
        validators=(TIME_PERIOD_VALIDATOR,),
        aliases=("wait-penalty-duration",),
    )
    property_descriptors: ClassVar = (
        RELEASE_SIGNAL_IDENTIFIER,
        TARGET_SIGNAL_COUNT,
        SIGNAL_COUNTER_NAME,
        WAIT_BUFFER_COUNT,
        RELEASABLE_FLOWFILE_COUNT,
        EXPIRATION_DURATION,
        DISTRIBUTED_CACHE_SERVICE,
        ATTRIBUTE_COPY_MODE,
        WAIT_MODE,
        WAIT_PENALTY_DURATION,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_WAIT, REL_EXPIRED, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("map", "cache", "wait", "hold", "distributed", "signal", "release")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        WAIT_START_TIMESTAMP: "All FlowFiles will have an attribute 'wait.start.timestamp', "
        "which sets the initial epoch timestamp when the file first entered this processor.  "
        "This is used to determine the expiration time of the FlowFile.  This attribute is not "
        "written when the FlowFile is transferred to failure, expired or success",
        "wait.counter.<counterName>": "The name of each counter for which at least one signal "
        "has been present in the cache since the last time the cache was empty gets copied to "
        "the current FlowFile as an attribute.",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._penalties: dict[str, int] = {}  # signal id -> epoch ms it is penalized until

    def on_stopped(self, context: ProcessContext) -> None:
        """Penalties last while the processor runs (NiFi clears them when stopped)."""
        del context
        self._penalties.clear()

    def _take(
        self, context: ProcessContext, session: ProcessSession
    ) -> tuple[str | None, list[FlowFile], set[int]]:
        """The trigger's signal id, its FlowFiles (up to Wait Buffer Count) and the failed ids."""
        now = context.now()
        self._penalties = {k: v for k, v in self._penalties.items() if v >= now}
        signal_id = context.get_property(self.RELEASE_SIGNAL_IDENTIFIER)
        limit = context.get_property(self.WAIT_BUFFER_COUNT).as_integer() or 1
        target: list[str] = []
        failed: set[int] = set()
        buffered = [0]

        def accepted() -> FlowFileFilterResult:
            buffered[0] += 1
            if buffered[0] == limit:
                return FlowFileFilterResult.ACCEPT_AND_TERMINATE
            return FlowFileFilterResult.ACCEPT_AND_CONTINUE

        def choose(flowfile: FlowFile) -> FlowFileFilterResult:
            identifier = signal_id.evaluate_attribute_expressions(flowfile).value
            if not (identifier or "").strip():
                context.logger.error(
                    "FlowFile %s has no attribute for given Release Signal Identifier", flowfile
                )
                failed.add(flowfile.id)
                return FlowFileFilterResult.ACCEPT_AND_CONTINUE
            if identifier in self._penalties:
                return FlowFileFilterResult.REJECT_AND_CONTINUE
            if not target:
                target.append(identifier or "")
                return accepted()
            if target[0] == identifier:
                return accepted()
            return FlowFileFilterResult.REJECT_AND_CONTINUE

        flowfiles = session.get(choose)
        return (target[0] if target else None), flowfiles, failed

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Release, keep waiting, expire or fail one signal id's buffered FlowFiles."""
        identifier, flowfiles, failed = self._take(context, session)
        routed: dict[str, list[FlowFile]] = {}
        signal: protocol.Signal | None = None
        original_counts: dict[str, int] = {}

        def route(flowfile: FlowFile, relationship: str) -> None:
            routed.setdefault(relationship, []).append(flowfile)

        def fail(flowfile: FlowFile) -> None:
            flowfile = session.remove_attribute(session.penalize(flowfile), WAIT_START_TIMESTAMP)
            route(flowfile, REL_FAILURE.name)

        candidates: list[FlowFile] = []
        releasable = 1
        for flowfile in [f for f in flowfiles if f.id in failed]:
            fail(flowfile)
        waiting = [f for f in flowfiles if f.id not in failed]
        if waiting and identifier is not None:
            cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
            signal = protocol.get_signal(cache, identifier)
            if signal is not None:
                original_counts = dict(signal.counts)
            target_counter, target_count = None, 1
            expiration = context.get_property(self.EXPIRATION_DURATION).as_time_period("ms") or 0
            for arrived in waiting:
                flowfile = arrived
                started = flowfile.attributes.get(WAIT_START_TIMESTAMP)
                if started is None:
                    started = str(context.now())
                    flowfile = session.put_attribute(flowfile, WAIT_START_TIMESTAMP, started)
                start_ms = _java_long(started)
                if start_ms is None:
                    context.logger.error(
                        "%s has an invalid value '%s' on FlowFile %s",
                        WAIT_START_TIMESTAMP,
                        started,
                        flowfile,
                    )
                    fail(flowfile)
                    continue
                now = context.now()
                if now > start_ms + expiration:
                    context.logger.info("FlowFile %s expired after %dms", flowfile, now - start_ms)
                    route(flowfile, REL_EXPIRED.name)
                    continue
                if signal is None:
                    route(flowfile, REL_WAIT.name)
                    continue
                if not candidates:
                    target_counter = (
                        context.get_property(self.SIGNAL_COUNTER_NAME)
                        .evaluate_attribute_expressions(flowfile)
                        .value
                    )
                    count_text = (
                        context.get_property(self.TARGET_SIGNAL_COUNT)
                        .evaluate_attribute_expressions(flowfile)
                        .value
                    )
                    releasable_text = (
                        context.get_property(self.RELEASABLE_FLOWFILE_COUNT)
                        .evaluate_attribute_expressions(flowfile)
                        .value
                    )
                    parsed_count = _java_long(count_text)
                    parsed_releasable = _java_long(releasable_text)
                    if parsed_count is None or parsed_releasable is None:
                        context.logger.error(
                            "Failed to parse targetCount (%r) or releasableFlowFileCount (%r) "
                            "when processing %s",
                            count_text,
                            releasable_text,
                            flowfile,
                        )
                        fail(flowfile)
                        continue
                    target_count, releasable = parsed_count, parsed_releasable
                candidates.append(flowfile)
            if signal is not None and candidates:
                self._release(
                    signal,
                    candidates,
                    counter=target_counter,
                    target=target_count,
                    releasable=releasable,
                    route=route,
                )
        self._transfer(context, session, routed, signal, original_counts)
        penalty = context.get_property(self.WAIT_PENALTY_DURATION)
        if identifier is not None and penalty.is_set() and not routed.get(REL_SUCCESS.name):
            until = context.now() + int(penalty.as_time_period("ms") or 0)
            self._penalties[identifier] = until
        if signal is not None and candidates:
            cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
            if releasable > 0 and signal.total_count == 0 and signal.releasable_count == 0:
                protocol.complete(cache, signal)
            elif releasable > 0 and routed.get(REL_SUCCESS.name):
                protocol.replace(cache, signal)

    @staticmethod
    def _release(
        signal: protocol.Signal,
        candidates: list[FlowFile],
        *,
        counter: str | None,
        target: int,
        releasable: int,
        route: Callable[[FlowFile, str], None],
    ) -> None:
        """Route the candidates: the signal's passes to success, the rest to wait."""
        if releasable > 0:
            released = signal.release_candidates(counter, target, releasable, len(candidates))
        else:  # an open gate: everyone passes while the count is reached, nothing consumed
            released = len(candidates) if signal.is_count_reached(counter, target) else 0
        for index, flowfile in enumerate(candidates):
            route(flowfile, REL_SUCCESS.name if index < released else REL_WAIT.name)

    def _transfer(
        self,
        context: ProcessContext,
        session: ProcessSession,
        routed: dict[str, list[FlowFile]],
        signal: protocol.Signal | None,
        original_counts: dict[str, int],
    ) -> None:
        """Copy the signal's attributes and counts onto the routed FlowFiles and transfer them."""
        replace = context.get_property(self.ATTRIBUTE_COPY_MODE).value == COPY_REPLACE.value
        keep_upstream = context.get_property(self.WAIT_MODE).value == MODE_KEEP_IN_UPSTREAM.value
        for relationship, flowfiles in routed.items():
            for flowfile in flowfiles:
                current = flowfile
                if relationship in (REL_SUCCESS.name, REL_EXPIRED.name):
                    current = session.remove_attribute(current, WAIT_START_TIMESTAMP)
                if signal is not None:
                    current = session.put_all_attributes(
                        current, _copied(current, signal, original_counts, replace=replace)
                    )
                if relationship == REL_WAIT.name and keep_upstream:
                    session.transfer(current)  # back to the queue it came from
                else:
                    session.transfer(current, relationship)


def _copied(
    flowfile: FlowFile, signal: protocol.Signal, counts: dict[str, int], *, replace: bool
) -> dict[str, str]:
    """The attributes a FlowFile gets from *signal* (NiFi's copySignalAttributes)."""
    if replace:
        copied = {k: v for k, v in signal.attributes.items() if k != "uuid"}
    else:
        copied = {k: v for k, v in signal.attributes.items() if k not in flowfile.attributes}
    for name, count in counts.items():
        copied[f"wait.counter.{name}"] = str(count)
    copied["wait.counter.total"] = str(sum(counts.values()))
    return copied
