"""DetectDuplicate: route FlowFiles whose cache key was seen before to 'duplicate'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.expression._nodes import ResultType
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.services import MapCache
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR, TIME_PERIOD_VALIDATOR

__all__ = ["DetectDuplicate"]

ORIGINAL_DESCRIPTION = "original.flowfile.description"

REL_DUPLICATE = Relationship(
    "duplicate", "If a FlowFile has been detected to be a duplicate, it will be routed here"
)
REL_NON_DUPLICATE = Relationship(
    "non-duplicate",
    "If a FlowFile's Cache Entry Identifier was not found in the cache, it will be routed here",
)
REL_FAILURE = Relationship(
    "failure",
    "A FlowFile whose Cache Entry Identifier is empty is penalized and routed here",
)


def _cache_value(description: str, entry_ms: int) -> str:
    """What the cache holds for a key: NiFi's ``CacheValue`` (entry time, description)."""
    return f"{entry_ms} {description}"


def _parse_value(text: str) -> tuple[int, str]:
    entry, _, description = text.partition(" ")
    return int(entry), description


class DetectDuplicate(Processor):
    """Caches a value computed from each FlowFile's attributes and routes repeats to 'duplicate'.

    NiFi's DetectDuplicate over a :class:`~flowcore.services.MapCacheService` the flow declares
    (``flow.add_service(MapCacheService("dedupe"))``) and ``Distributed Cache Service`` names.
    The first FlowFile with a given ``Cache Entry Identifier`` goes to ``non-duplicate`` and its
    ``FlowFile Description`` is cached; later ones go to ``duplicate`` with that description in
    ``original.flowfile.description``. ``Age Off Duration`` forgets entries older than it.

    The cache's entries are committed with the FlowFiles that put them (one write-ahead log
    transaction), so a crash and redo never finds a FlowFile to be its own duplicate, and never
    lets a duplicate through; the stage runs serially for that (one task per stage run).
    """

    CACHE_ENTRY_IDENTIFIER = PropertyDescriptor(
        "Cache Entry Identifier",
        description="A FlowFile attribute, or the results of an Attribute Expression Language "
        "statement, which will be evaluated against a FlowFile in order to determine the value "
        "used to identify duplicates; it is this value that is cached",
        required=True,
        default="${hash.value}",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
    )
    FLOWFILE_DESCRIPTION = PropertyDescriptor(
        "FlowFile Description",
        description="When a FlowFile is added to the cache, this value is stored along with it "
        "so that if a duplicate is found, this description of the original FlowFile will be "
        f'added to the duplicate\'s "{ORIGINAL_DESCRIPTION}" attribute',
        required=True,
        default="",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
    )
    AGE_OFF_DURATION = PropertyDescriptor(
        "Age Off Duration",
        description="Time interval to age off cached FlowFiles",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
        "Distributed Cache Service",
        description="The map cache service (a MapCacheService the flow declares, by name) used "
        "to cache unique identifiers, used to determine duplicates",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        identifies_service=True,
    )
    CACHE_IDENTIFIER = PropertyDescriptor(
        "Cache The Entry Identifier",
        description="When true this cause the processor to check for duplicates and cache the "
        "Entry Identifier. When false, the processor would only check for duplicates and not "
        "cache the Entry Identifier, requiring another processor to add identifiers to the "
        "distributed cache.",
        default="true",
        allowable_values=(AllowableValue("true"), AllowableValue("false")),
    )
    property_descriptors: ClassVar = (
        CACHE_ENTRY_IDENTIFIER,
        FLOWFILE_DESCRIPTION,
        AGE_OFF_DURATION,
        DISTRIBUTED_CACHE_SERVICE,
        CACHE_IDENTIFIER,
    )
    relationships: ClassVar = (REL_DUPLICATE, REL_NON_DUPLICATE, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("hash", "dupe", "duplicate", "dedupe")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        ORIGINAL_DESCRIPTION: "On FlowFiles routed to duplicate: the FlowFile Description "
        "cached for the original copy of the data"
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Look one FlowFile's identifier up in the cache (caching it) and route it."""
        flowfile = session.get()
        if flowfile is None:
            return
        key = context.get_property(self.CACHE_ENTRY_IDENTIFIER).evaluate_attribute_expressions(
            flowfile
        )
        if not (key.value or "").strip():
            context.logger.error(
                "FlowFile %s has no attribute for given Cache Entry Identifier", flowfile
            )
            session.transfer(session.penalize(flowfile), REL_FAILURE.name)
            return
        cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
        now = context.now()
        description = context.get_property(self.FLOWFILE_DESCRIPTION)
        value = _cache_value(description.evaluate_attribute_expressions(flowfile).value or "", now)
        original = self._look_up(context, cache, key.value or "", value, now)
        if original is not None:
            session.provenance.route(
                flowfile, REL_DUPLICATE.name, details=f"Duplicate of: {ORIGINAL_DESCRIPTION}"
            )
            flowfile = session.put_attribute(flowfile, ORIGINAL_DESCRIPTION, original)
            session.transfer(flowfile, REL_DUPLICATE.name)
            context.logger.info(
                "Found %s to be a duplicate of FlowFile with description %s", flowfile, original
            )
            session.adjust_counter("Duplicates Detected", 1)
        else:
            session.provenance.route(flowfile, REL_NON_DUPLICATE.name)
            session.transfer(flowfile, REL_NON_DUPLICATE.name)
            context.logger.info(
                "Could not find a duplicate entry in cache for %s; routing to non-duplicate",
                flowfile,
            )
            session.adjust_counter("Non-Duplicate Files Processed", 1)

    def _look_up(
        self, context: ProcessContext, cache: MapCache, key: str, value: str, now: int
    ) -> str | None:
        """The original's description when *key* is a duplicate, else None (NiFi's steps).

        Caching: ``getAndPutIfAbsent``; else ``get``. An entry older than Age Off Duration is
        removed and the look-up done again (``putIfAbsent``, or ``containsKey``).
        """
        caching = context.get_property(self.CACHE_IDENTIFIER).as_boolean() is not False
        found = cache.get_and_put_if_absent(key, value) if caching else cache.get(key)
        if found is None:
            return None
        entry_ms, description = _parse_value(found)
        age_off = context.get_property(self.AGE_OFF_DURATION).as_time_period("ms")
        if age_off is not None and now >= entry_ms + age_off:
            cache.remove(key)
            duplicate = not cache.put_if_absent(key, value) if caching else cache.contains_key(key)
            if not duplicate:
                return None
        return description
