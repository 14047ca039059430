"""PutDistributedMapCache: put each FlowFile's content into the map cache under a computed key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.expression._nodes import ResultType
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import DATA_SIZE_VALIDATOR, NON_EMPTY_VALIDATOR
from processors._cache_values import from_bytes

__all__ = ["PutDistributedMapCache"]

CACHED = "cached"

REPLACE = AllowableValue(
    "replace",
    "Replace if present",
    "Adds the specified entry to the cache, replacing any value that is currently set.",
)
KEEP_ORIGINAL = AllowableValue(
    "keeporiginal",
    "Keep original",
    "Adds the specified entry to the cache, if the key does not exist.",
)

REL_SUCCESS = Relationship(
    "success",
    "Any FlowFile that is successfully inserted into cache will be routed to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "Any FlowFile that cannot be inserted into the cache will be routed to this relationship",
)


class PutDistributedMapCache(Processor):
    """Puts a FlowFile's content into a map cache under its ``Cache Entry Identifier``.

    NiFi's PutDistributedMapCache over the flow's :class:`~flowcore.services.MapCacheService`
    that ``Distributed Cache Service`` names. ``Cache Update Strategy`` ``replace`` overwrites
    an entry, ``keeporiginal`` leaves an existing one (the FlowFile then goes to ``failure``
    with ``cached=false``). Empty content and content larger than ``Max Cache Size`` go to
    ``failure`` without a ``cached`` attribute. The entry is committed with the FlowFile (one
    write-ahead log transaction), so after a crash the cache holds it exactly when the FlowFile
    went on; FetchDistributedMapCache in the same flow reads it back byte for byte.
    """

    CACHE_ENTRY_IDENTIFIER = PropertyDescriptor(
        "Cache Entry Identifier",
        description="A FlowFile attribute, or the results of an Attribute Expression Language "
        "statement, which will be evaluated against a FlowFile in order to determine the cache "
        "key",
        required=True,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        expected_type=ResultType.STRING,
    )
    DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
        "Distributed Cache Service",
        description="The Controller Service that is used to cache FlowFiles (a MapCacheService "
        "the flow declares, by name)",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        identifies_service=True,
    )
    CACHE_UPDATE_STRATEGY = PropertyDescriptor(
        "Cache Update Strategy",
        description="Determines how the cache is updated if the cache already contains the entry",
        required=True,
        default=REPLACE.value,
        allowable_values=(REPLACE, KEEP_ORIGINAL),
        aliases=("Cache update strategy",),
    )
    CACHE_ENTRY_MAX_BYTES = PropertyDescriptor(
        "Max Cache Size",
        description="The maximum amount of data to put into cache",
        default="1 MB",
        validators=(DATA_SIZE_VALIDATOR,),
        aliases=("Max cache entry size",),
    )
    property_descriptors: ClassVar = (
        CACHE_ENTRY_IDENTIFIER,
        DISTRIBUTED_CACHE_SERVICE,
        CACHE_UPDATE_STRATEGY,
        CACHE_ENTRY_MAX_BYTES,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = ("map", "cache", "put", "distributed")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        CACHED: "All FlowFiles will have an attribute 'cached'. The value of this attribute is "
        "true, is the FlowFile is cached, otherwise false."
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Cache one FlowFile's content under its key."""
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
        limit = context.get_property(self.CACHE_ENTRY_MAX_BYTES).as_data_size("B")
        if limit is not None and flowfile.size > limit:
            context.logger.warning(
                "FlowFile %s size %s exceeds the max cache entry size (%d B).",
                flowfile,
                flowfile.size,
                int(limit),
            )
            session.transfer(flowfile, REL_FAILURE.name)
            return
        if flowfile.size == 0:
            context.logger.warning("FlowFile %s is empty, there is nothing to cache.", flowfile)
            session.transfer(flowfile, REL_FAILURE.name)
            return
        value = from_bytes(session.read_bytes(flowfile))
        cache = session.map_cache(context.get_property(self.DISTRIBUTED_CACHE_SERVICE).value)
        if context.get_property(self.CACHE_UPDATE_STRATEGY).value == KEEP_ORIGINAL.value:
            cached = cache.get_and_put_if_absent(key.value or "", value) is None
        else:
            cache.put(key.value or "", value)
            cached = True
        flowfile = session.put_attribute(flowfile, CACHED, "true" if cached else "false")
        session.transfer(flowfile, REL_SUCCESS.name if cached else REL_FAILURE.name)
