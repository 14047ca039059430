"""NiFi's Wait/Notify protocol over flowcore's map cache: signals as NiFi's JSON.

A signal is one cache entry per Release Signal Identifier, holding what NiFi's
``WaitNotifyProtocol.Signal`` serialises with Jackson: ``{"counts":{"<counter>":n,...},
"attributes":{...},"releasableCount":n}``. Notify adds deltas to counters (a delta of 0 clears
one) and merges attributes; Wait turns whole multiples of the target count into releasable
passes, releases that many waiting FlowFiles, and writes the signal back, or removes it when
nothing is left.

NiFi needs compare-and-set revisions and retries because several nodes and threads update one
signal. flowcore's stages that use a service run as one task per stage run and commit the
cache entries in the write-ahead log transaction of their FlowFiles, so a signal is only ever
read and written by one session at a time, and a crash never shows a signal without the
FlowFiles that made it (nor releases FlowFiles whose signal consumption was not kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import attrs

from flowcore.errors import ProcessException
from flowcore.services import MapCache
from processors._json_text import to_json

__all__ = [
    "CONSUMED_COUNT_NAME",
    "DEFAULT_COUNT_NAME",
    "Signal",
    "complete",
    "get_signal",
    "notify",
    "replace",
]

DEFAULT_COUNT_NAME = "default"
CONSUMED_COUNT_NAME = "consumed"


@attrs.define
class Signal:
    """One release signal as a session works on it (NiFi's ``WaitNotifyProtocol.Signal``)."""

    identifier: str
    counts: dict[str, int] = attrs.Factory(dict)
    attributes: dict[str, str] = attrs.Factory(dict)
    releasable_count: int = 0

    @property
    def total_count(self) -> int:
        """The sum of every counter (NiFi's getTotalCount)."""
        return sum(self.counts.values())

    def count(self, counter: str | None) -> int:
        """One counter's count, or the total when *counter* is empty."""
        if not counter:
            return self.total_count
        return self.counts.get(counter, 0)

    def is_count_reached(self, counter: str | None, target: int) -> bool:
        """Whether *counter* (the total when empty) has reached *target*."""
        return self.count(counter) >= target

    def release_candidates(
        self, counter: str | None, required: int, per_pass: int, candidates: int
    ) -> int:
        """How many of *candidates* waiting FlowFiles go now (NiFi's releaseCandidates).

        Whole multiples of *required* signals become *per_pass* releasable FlowFiles each; the
        counter keeps the remainder (with no counter, a ``consumed`` counter subtracts what was
        used from the total). Releasing uses up releasable count.
        """
        if self.releasable_count < candidates:
            signals = self.count(counter)
            passes, remainder = divmod(signals, required) if required > 0 else (0, signals)
            self.releasable_count += passes * per_pass
            if counter:
                self.counts[counter] = remainder
            else:
                consumed = self.counts.get(CONSUMED_COUNT_NAME, 0)
                self.counts[CONSUMED_COUNT_NAME] = consumed - (signals - remainder)
        released = min(self.releasable_count, candidates)
        self.releasable_count -= released
        return released

    def to_json(self) -> str:
        """The cache value, as NiFi's Jackson ObjectMapper writes the Signal."""
        return to_json(
            {
                "counts": self.counts,
                "attributes": self.attributes,
                "releasableCount": self.releasable_count,
            }
        )


def get_signal(cache: MapCache, identifier: str) -> Signal | None:
    """The signal cached under *identifier*, or None.

    Raises:
        ProcessException: the entry is not a signal (NiFi's DeserializationException).
    """
    text = cache.get(identifier)
    if text is None:
        return None
    try:
        value = json.loads(text)
        counts = {str(k): int(v) for k, v in (value.get("counts") or {}).items()}
        attributes = {str(k): str(v) for k, v in (value.get("attributes") or {}).items()}
        releasable = int(value.get("releasableCount") or 0)
    except (ValueError, TypeError, AttributeError) as ex:
        msg = (
            f"Cached value for {identifier} was not a serialized Signal: {ex}; another "
            "processor wrote this key of the cache: give Wait/Notify signals keys of their own"
        )
        raise ProcessException(msg) from ex
    return Signal(identifier, counts, attributes, releasable)


def notify(
    cache: MapCache, identifier: str, deltas: Mapping[str, int], attributes: Mapping[str, str]
) -> Signal:
    """Add *deltas* to the signal's counters (0 clears one), merge *attributes*, store it."""
    signal = get_signal(cache, identifier) or Signal(identifier)
    signal.attributes.update(attributes)
    for counter, delta in deltas.items():
        signal.counts[counter] = 0 if delta == 0 else signal.counts.get(counter, 0) + delta
    replace(cache, signal)
    return signal


def replace(cache: MapCache, signal: Signal) -> None:
    """Write *signal* back to the cache."""
    cache.put(signal.identifier, signal.to_json())


def complete(cache: MapCache, signal: Signal) -> None:
    """Finish the protocol: the signal's entry is removed."""
    cache.remove(signal.identifier)
