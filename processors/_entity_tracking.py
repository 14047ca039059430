"""NiFi's ListedEntityTracker ("Tracking Entities") over flowcore's map cache.

The entities already listed (identifier -> timestamp and size) are one map cache entry under
NiFi's key ``ListedEntities::{processor id}`` (the component's stable id; NiFi appends
``::{node}`` where the state is local, flowcore's listers do not: one state per repository),
its value JSON: ``{"listing": ..., "entities": {id: {"timestamp": ms, "size": bytes}}}``. An
entity is listed when it is not tracked, is newer than the tracked one, or has another size;
tracked entities older than the window are forgotten. The first listing (no entry) lists every
entity, or with Initial Listing Target "Tracking Time Window" only those inside the window;
when it is handed out in several parts, each part is initial (``initial`` in the entry names
the parts left, see :func:`track_entities`).

flowcore changes the entry through the session's map cache (``session.map_cache``), so it is
written in the write-ahead-log transaction that commits the listed FlowFiles: a crash neither
repeats nor loses an entity (NiFi persists it after its commit, at least once). ``listing`` is
a digest of the properties that identify the listing: when they change the tracked entities
are dropped, as NiFi deletes its cache key; so are they when the lister ran with another
strategy in between (the lister's state tells: ``forget``). The cache's Maximum Cache Entries
and eviction may evict the entry when the cache is shared with other processors and full: the
next listing is then an initial one again (every entity listed again, with a warning:
:func:`warn_missing`). Give a lister its own MapCacheService.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import NON_EMPTY_VALIDATOR, TIME_PERIOD_VALIDATOR, ValidationResult

__all__ = [
    "CONFIGURATION_KEY",
    "ENTITIES_KEY",
    "INITIAL_ALL",
    "INITIAL_LISTING_TARGET",
    "INITIAL_WINDOW",
    "LISTED_KEY",
    "NODE_IDENTIFIER",
    "TRACKING_STATE_CACHE",
    "TRACKING_TIME_WINDOW",
    "cache_key",
    "entity_marker",
    "forget_tracked",
    "listing_digest",
    "new_listing",
    "same_listing",
    "timestamp_keys",
    "track_entities",
    "validate",
    "warn_missing",
]

T = TypeVar("T")

#: A lister's state key beside NiFi's: a digest of the properties whose change starts the
#: listing over (NiFi resets the state when one is modified).
CONFIGURATION_KEY = "flowcore.listing.configuration"
#: The state key of a Tracking Entities listing: the digest of the listing it tracked. Kept
#: apart from the timestamp keys so that switching back to Tracking Timestamps resumes (NiFi
#: keeps that state); a run with another strategy drops it, so Tracking Entities then forgets
#: the tracked entities (NiFi clears them when scheduled with another strategy).
ENTITIES_KEY = "flowcore.listing.entities"
#: A lister's state key beside NiFi's: the digest of the entity listing it last handed out
#: (:func:`listing_digest`), committed with that listing's FlowFiles.
LISTED_KEY = "flowcore.listing.entities.listed"

_NOTE = "Used by 'Tracking Entities' strategy."
TRACKING_STATE_CACHE = PropertyDescriptor(
    "Entity Tracking State Cache",
    description="Listed entities are stored in the specified cache storage so that this "
    "processor can resume listing across restarts. 'Tracking Entities' strategy require "
    "tracking information of all listed entities within the last 'Tracking Time Window'. "
    "Cache key format is 'ListedEntities::{processorId}(::{nodeId})'. The cache key will be "
    f"deleted when target listing configuration is changed. {_NOTE}",
    identifies_service="DistributedMapCacheClient",
    aliases=("et-state-cache",),
)
TRACKING_TIME_WINDOW = PropertyDescriptor(
    "Entity Tracking Time Window",
    description="Specify how long this processor should track already-listed entities. "
    "'Tracking Entities' strategy can pick any entity whose timestamp is inside the specified "
    "time window. A listed entity is considered 'new/updated' and a FlowFile is emitted if one "
    "of following condition meets: 1. does not exist in the already-listed entities, 2. has "
    "newer timestamp than the cached entity, 3. has different size than the cached entity. If "
    "a cached entity's timestamp becomes older than specified time window, that entity will be "
    f"removed from the cached already-listed entities. {_NOTE}",
    default="3 hours",
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("et-time-window",),
)
INITIAL_WINDOW = AllowableValue(
    "window",
    "Tracking Time Window",
    "Ignore entities having timestamp older than the specified 'Tracking Time Window' at the "
    "initial listing activity.",
)
INITIAL_ALL = AllowableValue(
    "all",
    "All Available",
    "Regardless of entities timestamp, all existing entities will be listed at the initial "
    "listing activity.",
)
INITIAL_LISTING_TARGET = PropertyDescriptor(
    "Entity Tracking Initial Listing Target",
    description=f"Specify how initial listing should be handled. {_NOTE}",
    default=INITIAL_ALL.value,
    allowable_values=(INITIAL_WINDOW, INITIAL_ALL),
    aliases=("et-initial-listing-target",),
)
NODE_IDENTIFIER = PropertyDescriptor(
    "Entity Tracking Node Identifier",
    description="The configured value will be appended to the cache key so that listing state "
    f"can be tracked per NiFi node rather than cluster wide when tracking state is scoped to "
    f"LOCAL. {_NOTE}",
    default="${hostname()}",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("et-node-identifier",),
)


def validate(
    values: Mapping[str, str | None], cache: PropertyDescriptor = TRACKING_STATE_CACHE
) -> list[ValidationResult]:
    """NiFi's checks for Tracking Entities: a state cache (*cache*, the lister's) is required."""
    if values.get(cache.name):
        return []
    return [
        ValidationResult(
            cache.display_name,
            None,
            False,
            f"'{TRACKING_STATE_CACHE.display_name}' is required to use 'Tracking Entities' "
            "listing strategy: name a MapCacheService the flow declares",
        )
    ]


def cache_key(component_id: str, node: str | None = None) -> str:
    """NiFi's cache key: ``ListedEntities::{processor id}`` (``::{node}`` for local state).

    The id is the component's stable id (its ``id``, by default its name; NiFi's id on
    import), what its state is kept under too: an edit that keeps the id keeps the entry.
    """
    return f"ListedEntities::{component_id}" + (f"::{node}" if node else "")


def listing_digest(listing: str, entities: Iterable[tuple[Any, ...]]) -> str:
    """A digest of a listing (its identity and each entity's identifier, time and size).

    A lister hands out no work when a listing is the same as the one it last handed out and
    that one committed: the tracker would emit nothing (the window only narrows with time),
    and a continuous run would otherwise list and run a micro-batch as fast as it can.
    """
    digest = hashlib.blake2b(listing.encode("utf-8", "surrogateescape"), digest_size=16)
    for entity in entities:
        digest.update(repr(entity).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def same_listing(state: Mapping[str, str], digest: str, handed_out: str) -> bool:
    """Whether a listing (*digest*) is the one this lister last handed out and committed.

    *state* (committed, or left by the trigger before in the same micro-batch) says the
    listing committed; *handed_out* (the lister's memory) that this lister handed it out
    whole. A restarted lister lists once more: a listing whose first parts committed before a
    crash is then read to its end.
    """
    return state.get(LISTED_KEY) == digest == handed_out


def new_listing(
    state: Mapping[str, str], identity: str, entities: Iterable[tuple[Any, ...]], handed_out: str
) -> str | None:
    """The digest of an entity listing (:func:`listing_digest`); None when it is not new.

    None when it is the listing this lister last handed out (*handed_out*) and *state* says
    it committed (:func:`same_listing`): the lister then hands out nothing.
    """
    digest = listing_digest(identity, entities)
    return None if same_listing(state, digest, handed_out) else digest


def timestamp_keys(state: Mapping[str, str]) -> dict[str, str]:
    """A lister's *state* without the Tracking Entities keys (what the other strategies keep)."""
    return {k: v for k, v in state.items() if k not in (ENTITIES_KEY, LISTED_KEY)}


def entity_marker(state: Mapping[str, str], identity: str, digest: str) -> dict[str, str]:
    """The state an entity listing (*identity*, *digest*) leaves: the timestamp keys kept.

    ``ENTITIES_KEY`` holds the identity, so that a run with another strategy is seen.
    """
    return {**timestamp_keys(state), ENTITIES_KEY: identity, LISTED_KEY: digest}


def forget_tracked(state: Mapping[str, str], identity: str) -> bool:
    """Whether an entity listing (*identity*) forgets the tracked entities first.

    Another strategy ran since (or none did): NiFi clears them. An entity listing committed
    before ``ENTITIES_KEY`` existed left its identity in ``CONFIGURATION_KEY`` (no timestamp
    listing writes an ``entities:`` one).
    """
    return identity not in (state.get(ENTITIES_KEY), state.get(CONFIGURATION_KEY))


def warn_missing(context: Any, cache: str, key: str) -> None:
    """The warning (a bulletin) when the entry of a committed entity listing is gone."""
    context.logger.warning(
        "The Tracking Entities entry %s is missing from map cache %s though this lister "
        "committed an entity listing: it was evicted (or removed), so every entity is listed "
        "again; give the lister a MapCacheService of its own, or raise its Maximum Cache "
        "Entries",
        key,
        cache,
    )


def track_in_session(
    context: Any,
    session: Any,
    payload: Mapping[str, Any],
    entities: Sequence[T],
    identify: Callable[[T], tuple[str, int, int]],
    *,
    now_ms: int,
    descriptors: tuple[PropertyDescriptor, PropertyDescriptor, PropertyDescriptor] | None = None,
) -> list[T]:
    """:func:`track_entities` for a lister's work item, set up from the processor's properties.

    The cache, window and target come from the processor's properties; the entry lives in the
    session's map cache (committed with the item's FlowFiles), keyed by the component's id.

    Args:
        context: the processor's context.
        session: the item's session.
        payload: the work item's payload (``listing``, ``forget``, ``part``/``parts``, ``now``).
        entities: the item's entities.
        identify: an entity's (identifier, timestamp ms, size).
        now_ms: the time the window ends at.
        descriptors: the processor's State Cache, Time Window and Initial Listing Target
            descriptors when not this module's (ListFile names its own).
    """
    cache_prop, window_prop, target_prop = descriptors or (
        TRACKING_STATE_CACHE,
        TRACKING_TIME_WINDOW,
        INITIAL_LISTING_TARGET,
    )
    name = context.get_property(cache_prop).value or ""
    key = cache_key(context.component.id)
    window = context.get_property(window_prop).evaluate_attribute_expressions()
    return track_entities(
        session.map_cache(name),
        key,
        entities,
        identify=identify,
        listing=payload["listing"],
        now_ms=now_ms,
        window_ms=int(window.as_time_period("ms") or 0),
        initial_all=context.get_property(target_prop).value != INITIAL_WINDOW.value,
        forget=bool(payload.get("forget")),
        part=(payload.get("part", 0), payload.get("parts", 1)),
        listed_at=payload.get("now", 0),
        on_missing=lambda: warn_missing(context, name, key),
    )


def track_entities(
    cache: Any,
    key: str,
    entities: Sequence[T],
    *,
    identify: Callable[[T], tuple[str, int, int]],
    listing: str,
    now_ms: int,
    window_ms: int,
    initial_all: bool,
    forget: bool = False,
    part: tuple[int, int] = (0, 1),
    listed_at: int = 0,
    on_missing: Callable[[], None] | None = None,
) -> list[T]:
    """NiFi's ``trackEntities``: which *entities* are new or updated; the cache entry updated.

    A listing handed out in several parts (work items, each its own session) is an initial
    one for every part, not just the first: the first part of an initial listing writes an
    ``initial`` mark (the listing's time and its parts not read yet) that the last of them
    clears. A crash after some parts committed leaves the mark, so the next listing is an
    initial one too (NiFi lists a listing in one session, so it never sees half of one).

    Args:
        cache: the session's map cache (its changes commit with the session).
        key: the cache key (:func:`cache_key`).
        entities: everything this part of the listing found (filters applied), in order.
        identify: an entity's identifier, timestamp (ms) and size.
        listing: a digest of the properties that identify the listing.
        now_ms: the current time.
        window_ms: Entity Tracking Time Window.
        initial_all: Initial Listing Target is All Available.
        forget: drop what the cache holds first (the lister tracked otherwise in between:
            NiFi clears the tracked entities when scheduled with another strategy).
        part: this part's index and the listing's number of parts.
        listed_at: when the listing was made (which listing the parts belong to).
        on_missing: called when the entry is missing though the lister's state says an
            entity listing committed (the entry was evicted: everything is listed again).

    Returns:
        The entities to emit, in listing order.
    """
    text = cache.get(key)
    stored = json.loads(text) if text else None
    if stored is not None and (forget or stored.get("listing") != listing):
        stored = None  # the listing's configuration changed: NiFi deletes the cache key
    elif stored is None and not forget and on_missing is not None:
        on_missing()
    pending = stored.get("initial") if stored else None
    initial = stored is None or pending is not None
    tracked: dict[str, dict[str, int]] = dict(stored["entities"]) if stored else {}
    minimum = -1 if initial and initial_all else now_ms - window_ms
    emitted = []
    for entity in entities:
        identifier, timestamp, size = identify(entity)
        if timestamp < minimum:
            continue
        known = tracked.get(identifier)
        if known is None or timestamp > known["timestamp"] or size != known["size"]:
            emitted.append(entity)
    old = [i for i, e in tracked.items() if e["timestamp"] < minimum]
    if not emitted and not old and not initial:
        return []
    for identifier in old:
        del tracked[identifier]
    for entity in emitted:
        identifier, timestamp, size = identify(entity)
        tracked[identifier] = {"timestamp": timestamp, "size": size}
    entry: dict[str, Any] = {"listing": listing}
    if initial:
        index, parts = part
        same = pending is not None and pending.get("at") == listed_at
        left = set(pending["left"]) if same else set(range(parts))
        left.discard(index)
        if left:  # parts of this initial listing still to read: they are initial too
            entry["initial"] = {"at": listed_at, "left": sorted(left)}
    entry["entities"] = tracked
    value = json.dumps(entry, separators=(",", ":"))
    if value != text:
        cache.put(key, value)
    return emitted
