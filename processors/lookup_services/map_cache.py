"""DistributedMapCacheLookupService: look keys up in the flow's map cache."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from flowcore.controller_service import ServiceContext
from flowcore.properties import AllowableValue, PropertyDescriptor
from processors._cache_values import to_bytes
from processors.lookup_services.base import KEY, LookupService, StringLookupService

if TYPE_CHECKING:
    from flowcore.services import MapCache
    from flowcore.session.process_session import ProcessSession

__all__ = ["DistributedMapCacheLookupService"]

#: NiFi's choice of charsets (Java's StandardCharsets, by their display names).
STANDARD_CHARSETS = ("UTF-8", "US-ASCII", "ISO-8859-1", "UTF-16", "UTF-16LE", "UTF-16BE")

PROP_DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
    "Distributed Cache Service",
    description="The Controller Service that is used to get the cached values.",
    required=True,
    identifies_service="DistributedMapCacheClient",
    aliases=("distributed-map-cache-service",),
)
CHARACTER_ENCODING = PropertyDescriptor(
    "Character Encoding",
    description="Specifies a character encoding to use.",
    required=True,
    default="UTF-8",
    allowable_values=tuple(AllowableValue(c) for c in STANDARD_CHARSETS),
    aliases=("character-encoding",),
)


class DistributedMapCacheLookupService(StringLookupService):
    """Looks the ``key`` coordinate up in a map cache service (NiFi's service of that name).

    flowcore's map cache (:class:`~flowcore.services.MapCacheService`) keeps its entries in
    the repository, committed with the sessions that change them; so a processor looks up
    through :meth:`for_session` (LookupRecord does), which reads the cache of its session. A
    lookup counts as a hit in the cache's eviction order, as NiFi's server counts it; so this
    service ``holds_shared_state`` too, and processors naming it run one task at a time. The
    cached bytes are decoded with ``Character Encoding``; an empty value is none, as NiFi's
    deserializer reads it.
    """

    nifi_types: ClassVar = ("org.apache.nifi.lookup.DistributedMapCacheLookupService",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-lookup-services-nar")
    property_descriptors: ClassVar = (PROP_DISTRIBUTED_CACHE_SERVICE, CHARACTER_ENCODING)
    holds_shared_state: ClassVar = True
    tags: ClassVar = ("lookup", "enrich", "key", "value", "map", "cache", "distributed")

    def on_enabled(self, context: ServiceContext) -> None:
        """Remember which cache to read and the charset."""
        self.cache_name = context.get_property(PROP_DISTRIBUTED_CACHE_SERVICE).value or ""
        charset = context.get_property(CHARACTER_ENCODING).value or "UTF-8"
        self.charset = codecs.lookup(charset).name

    def for_session(self, session: ProcessSession) -> LookupService:
        """A view reading the cache of *session* (its reads commit with the session)."""
        view = _SessionView(self.name)
        object.__setattr__(view, "_runtime", True)
        view.cache = session.map_cache(self.cache_name)
        view.charset = self.charset
        return view

    def lookup(
        self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None
    ) -> str | None:
        """Not without a session: a processor looks up through :meth:`for_session`."""
        del coordinates, context
        msg = (
            f"DistributedMapCacheLookupService {self.name!r} reads the map cache of a "
            "session; look up through service.for_session(session)"
        )
        raise NotImplementedError(msg)


class _SessionView(StringLookupService):
    """The lookup service bound to one session's map cache."""

    cache: MapCache
    charset: str

    def lookup(
        self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None
    ) -> str | None:
        """The cached value of the ``key`` coordinate, decoded, or None."""
        del context
        if not coordinates or coordinates.get(KEY) is None:
            return None
        found = self.cache.get(str(coordinates[KEY]))
        if not found:
            return None
        return to_bytes(found).decode(self.charset, "replace")
