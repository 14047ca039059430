"""SimpleKeyValueLookupService: the key/value pairs are the service's dynamic properties."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from flowcore.controller_service import ServiceContext
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from processors.lookup_services.base import KEY, StringLookupService

__all__ = ["SimpleKeyValueLookupService"]


class SimpleKeyValueLookupService(StringLookupService):
    """Allows users to add key/value pairs as User-defined Properties (NiFi's service).

    Each property that is added can be looked up by Property Name; the coordinates passed to
    the lookup must contain the key ``key``. Values may use Expression Language (environment
    scope), evaluated once when the service is enabled.
    """

    nifi_types: ClassVar = ("org.apache.nifi.lookup.SimpleKeyValueLookupService",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-lookup-services-nar")
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("lookup", "enrich", "key", "value")

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """Any value (NiFi's ``Validator.VALID``), with Expression Language."""
        return PropertyDescriptor(
            name,
            description="A key/value pair to look up by its name",
            el_scope=ExpressionLanguageScope.ENVIRONMENT,
            dynamic=True,
        )

    def on_enabled(self, context: ServiceContext) -> None:
        """Cache the configured values (NiFi's ``cacheConfiguredValues``)."""
        self.values = {name: context.get_property(name).value for name in self.dynamic_properties}

    def lookup(
        self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None
    ) -> str | None:
        """The value of the property named by the ``key`` coordinate, or None."""
        del context
        if not coordinates or coordinates.get(KEY) is None:
            return None
        return self.values.get(str(coordinates[KEY]))
