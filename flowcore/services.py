"""Controller services a flow declares once and processors name: the local map cache.

NiFi's DetectDuplicate talks to a *Distributed Map Cache*: a client service
(``DistributedMapCacheClientService``, ``MapCacheClientService``) connected to a server service
(``DistributedMapCacheServer``, ``MapCacheServer``) that holds a bounded map in memory. flowcore
has one local equivalent, :class:`MapCacheService`: a flow declares it by name
(``flow.add_service(MapCacheService("dedupe"))``) and a processor's service property names it
(``DetectDuplicate(distributed_cache_service="dedupe")``); processors naming the same service
share its entries, as two NiFi processors sharing a client do.

Unlike NiFi's server, the cache lives in the repository: its entries are a component state
(:attr:`MapCacheService.state_key`) written in the write-ahead log transaction of the stage run
that changed it, together with the FlowFiles whose processing put them. A crash and redo
therefore never sees an entry without the FlowFile that put it, nor the reverse. A stage whose
members use a service runs as one task per stage run (see
:attr:`flowcore.processor.Capabilities.triggers_serially`), so no two tasks update it at once.

:class:`MapCache` is the map a task works on: bounded by ``Maximum Cache Entries`` with NiFi's
eviction orders, and an undo log so a session that rolls back leaves no trace in it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

import attrs
from sortedcontainers import SortedList

from flowcore.controller_service import ControllerService
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR

__all__ = ["DEFAULT_MAXIMUM_CACHE_ENTRIES", "EvictionStrategy", "MapCache", "MapCacheService"]

#: NiFi's DistributedMapCacheServer default for ``Maximum Cache Entries``.
DEFAULT_MAXIMUM_CACHE_ENTRIES = 10_000


class EvictionStrategy(enum.Enum):
    """Which entry a full cache evicts for a new one (NiFi's ``Eviction Strategy`` values)."""

    LFU = "Least Frequently Used"
    LRU = "Least Recently Used"
    FIFO = "First In, First Out"


def _strategy(value: EvictionStrategy | str) -> EvictionStrategy:
    if isinstance(value, EvictionStrategy):
        return value
    for strategy in EvictionStrategy:
        if value in (strategy.value, strategy.name):
            return strategy
    allowed = [s.value for s in EvictionStrategy]
    msg = f"eviction_strategy {value!r} is not one of {allowed!r} (or LFU, LRU, FIFO)"
    raise ConfigurationError(msg)


def _positive(instance: object, attribute: attrs.Attribute, value: int) -> None:
    del instance
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{attribute.name} must be a positive integer (got {value!r})"
        raise ConfigurationError(msg)


def _service_name(instance: object, attribute: attrs.Attribute, value: str) -> None:
    del instance, attribute
    if not isinstance(value, str) or not value.strip():
        msg = f"a service needs a non-empty name (got {value!r})"
        raise ConfigurationError(msg)


#: NiFi's DistributedMapCacheServer properties, as the service lists them.
MAXIMUM_CACHE_ENTRIES = PropertyDescriptor(
    "Maximum Cache Entries",
    description="The maximum number of cache entries that the cache can hold",
    default=str(DEFAULT_MAXIMUM_CACHE_ENTRIES),
    required=True,
    validators=(POSITIVE_INTEGER_VALIDATOR,),
)
EVICTION_STRATEGY = PropertyDescriptor(
    "Eviction Strategy",
    description="Determines which strategy should be used to evict values from the cache",
    default=EvictionStrategy.LFU.value,
    required=True,
    allowable_values=tuple(AllowableValue(s.value) for s in EvictionStrategy),
)


@attrs.frozen
class MapCacheService(ControllerService):
    """A local map cache that processors name by *name* (NiFi's map cache client and server).

    Args:
        name: how processors' service properties refer to it.
        maximum_cache_entries: NiFi's ``Maximum Cache Entries`` (10,000): a new entry past it
            evicts one, so the cache never holds more.
        eviction_strategy: NiFi's ``Eviction Strategy``: ``"Least Frequently Used"`` (the
            default), ``"Least Recently Used"`` or ``"First In, First Out"`` (or LFU, LRU, FIFO).

    Raises:
        ConfigurationError: a value is out of range (the message names it).
    """

    name: str = attrs.field(validator=_service_name)
    maximum_cache_entries: int = attrs.field(
        default=DEFAULT_MAXIMUM_CACHE_ENTRIES, validator=_positive
    )
    eviction_strategy: EvictionStrategy = attrs.field(
        default=EvictionStrategy.LFU, converter=_strategy
    )

    #: NiFi's types this service stands for (what ``Flow.from_nifi`` maps onto it).
    NIFI_TYPES = (
        "org.apache.nifi.distributed.cache.client.DistributedMapCacheClientService",
        "org.apache.nifi.distributed.cache.client.MapCacheClientService",
        "org.apache.nifi.distributed.cache.server.map.DistributedMapCacheServer",
        "org.apache.nifi.distributed.cache.server.map.MapCacheServer",
    )
    nifi_types = NIFI_TYPES
    implements = ("DistributedMapCacheClient", "AtomicDistributedMapCacheClient")
    holds_shared_state = True
    property_descriptors = (MAXIMUM_CACHE_ENTRIES, EVICTION_STRATEGY)
    tags = ("distributed", "cache", "state", "map", "cluster")

    @property
    def state_key(self) -> str:
        """The component id its entries are stored under in the repository's state."""
        return f"service:{self.name}"

    @property
    def raw_configured(self) -> dict[str, str]:
        """Its settings as NiFi's properties (a frozen value, validated when built)."""
        return {
            MAXIMUM_CACHE_ENTRIES.name: str(self.maximum_cache_entries),
            EVICTION_STRATEGY.name: self.eviction_strategy.value,
        }

    def fingerprint(self) -> str:
        """Its settings apart from its name (what a repository records; keep the format)."""
        return f"{type(self).__name__}/{self.maximum_cache_entries}/{self.eviction_strategy}"

    def renamed(self, name: str) -> MapCacheService:
        """This cache under another name."""
        return attrs.evolve(self, name=name)


@attrs.define(slots=True)
class _Record:
    """One entry with what eviction orders by (NiFi's ``MapCacheRecord``)."""

    value: str
    id: int
    entry_ms: int
    last_hit_ms: int
    hits: int = 0

    def encode(self) -> str:
        return f"{self.id} {self.entry_ms} {self.last_hit_ms} {self.hits} {self.value}"

    @classmethod
    def decode(cls, text: str) -> _Record:
        ident, entry, last, hits, value = text.split(" ", 4)
        return cls(value, int(ident), int(entry), int(last), int(hits))


def _order(strategy: EvictionStrategy) -> Callable[[tuple[_Record, str]], tuple[int, ...]]:
    """NiFi's eviction comparators as sort keys: the first in order is evicted first."""
    if strategy is EvictionStrategy.LFU:
        return lambda item: (item[0].hits, item[0].entry_ms, item[0].id)
    if strategy is EvictionStrategy.LRU:
        return lambda item: (item[0].last_hit_ms, item[0].id)
    return lambda item: (item[0].entry_ms, item[0].id)


#: An undo entry: a key and the record it had before (None: it was absent).
_Undo = tuple[str, "_Record | None"]


class MapCache:
    """A bounded string map with NiFi's map cache operations, eviction and an undo log.

    Every change is logged until :meth:`mark`; :meth:`undo` reverts to the last mark (a
    session's rollback). Reads count as hits, as NiFi's server counts them (LFU and LRU order).
    A read marks the cache :attr:`changed` (its state written with the session) only when its
    hit can matter to which entry is evicted: not under FIFO (hits do not order it), nor
    while the entry is the only one (a lister's own cache: a read of it rewrote the whole
    entry each time). The hit is kept in memory and written with the next change.

    Args:
        service: the service's configuration.
        state: the committed entries (:meth:`to_state` of an earlier cache), or empty.
        clock: epoch milliseconds, for entry and hit dates.
    """

    def __init__(
        self, service: MapCacheService, state: Mapping[str, str], clock: Callable[[], int]
    ) -> None:
        self.service = service
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._order: SortedList = SortedList(key=_order(service.eviction_strategy))
        for key, text in state.items():
            record = _Record.decode(text)
            self._records[key] = record
            self._order.add((record, key))
        self._next_id = max((r.id for r in self._records.values()), default=-1) + 1
        self._undo: list[_Undo] = []
        #: whether anything changed since it was loaded (its state must be written)
        self.changed = False

    def __len__(self) -> int:
        return len(self._records)

    # --- NiFi's operations ------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        """The value under *key* (a hit), or None."""
        record = self._hit(key)
        return None if record is None else record.value

    def contains_key(self, key: str) -> bool:
        """Whether *key* is cached (a hit)."""
        return self._hit(key) is not None

    def put_if_absent(self, key: str, value: str) -> bool:
        """Cache *value* unless *key* is cached (then a hit); whether it was put."""
        if self._hit(key) is not None:
            return False
        self._put(key, value)
        return True

    def get_and_put_if_absent(self, key: str, value: str) -> str | None:
        """The cached value of *key* (a hit), or None after caching *value* (atomic)."""
        record = self._hit(key)
        if record is not None:
            return record.value
        self._put(key, value)
        return None

    def put(self, key: str, value: str) -> None:
        """Cache *value* under *key*, replacing what was there."""
        self._put(key, value)

    def remove(self, key: str) -> bool:
        """Forget *key*; whether it was cached."""
        record = self._records.get(key)
        if record is None:
            return False
        self._log(key, record)
        self._order.remove((record, key))
        del self._records[key]
        return True

    # --- transactions -----------------------------------------------------------------------

    def mark(self) -> None:
        """Keep every change so far (a session committed)."""
        self._undo.clear()

    def undo(self) -> None:
        """Revert every change since the last :meth:`mark` (a session rolled back)."""
        for key, before in reversed(self._undo):
            current = self._records.pop(key, None)
            if current is not None:
                self._order.remove((current, key))
            if before is not None:
                self._records[key] = before
                self._order.add((before, key))
        self._undo.clear()

    def to_state(self) -> dict[str, str]:
        """The entries as a component state (what :class:`MapCache` loads)."""
        return {key: record.encode() for key, record in self._records.items()}

    # --- internals --------------------------------------------------------------------------

    def _log(self, key: str, before: _Record | None) -> None:
        self.changed = True
        self._undo.append((key, None if before is None else attrs.evolve(before)))

    def _hit(self, key: str) -> _Record | None:
        record = self._records.get(key)
        if record is None:
            return None
        changed = self.changed
        self._log(key, record)
        if self.service.eviction_strategy is EvictionStrategy.FIFO or len(self._records) == 1:
            self.changed = changed  # the hit cannot change which entry is evicted
        self._order.remove((record, key))
        record.hits += 1
        record.last_hit_ms = self._clock()
        self._order.add((record, key))
        return record

    def _put(self, key: str, value: str) -> None:
        existing = self._records.get(key)
        if existing is None and len(self._records) >= self.service.maximum_cache_entries:
            _, evicted = self._order[0]
            self.remove(evicted)
        if existing is not None:
            self.remove(key)
        now = self._clock()
        record = _Record(value, self._next_id, now, now)
        self._next_id += 1
        self._log(key, None)
        self._records[key] = record
        self._order.add((record, key))
