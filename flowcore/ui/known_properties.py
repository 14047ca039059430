"""What flowcore knows of a NiFi component's properties: its own class's descriptors.

A flow definition's ``propertyDescriptors`` may be missing or trimmed (a hand-written file, a
NiFi 1.x instance's flow), so they alone cannot say which property is sensitive: a service
whose JSON lacks the descriptor would have its Password sent to the browser in clear. As NiFi's
own masking keys off the component's type, the UI asks flowcore's class for the NiFi type too
(the registries: :func:`flowcore.registry.service_for_nifi_type` for a service,
:func:`flowcore.nifi.components.processor_class` for a processor, as ``flowcore run`` imports
them) and treats a property as sensitive when EITHER source says so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from flowcore.properties import PropertyDescriptor

__all__ = ["KnownProperties", "is_sensitive", "known_properties"]


@attrs.frozen
class KnownProperties:
    """The descriptors flowcore has for one NiFi type (none when flowcore has no class for it).

    Attributes:
        declared: the class's declared properties.
        dynamic: describes a user-defined property by name (None: the class takes none).
    """

    declared: tuple[PropertyDescriptor, ...] = ()
    dynamic: Callable[[str], PropertyDescriptor | None] | None = None

    def find(self, name: str) -> PropertyDescriptor | None:
        """The descriptor for *name* (any spelling of a declared one, else a dynamic one)."""
        for descriptor in self.declared:
            if name in descriptor.names():
                return descriptor
        return self.dynamic(name) if self.dynamic is not None else None


_NONE = KnownProperties()


@functools.lru_cache(maxsize=256)
def _for_type(nifi_type: str, service: bool) -> KnownProperties:
    """The flowcore class for *nifi_type*: its descriptors, its dynamic properties' describer."""
    if not nifi_type:
        return _NONE
    if service:
        from flowcore.registry import service_for_nifi_type  # noqa: PLC0415

        cls: Any = service_for_nifi_type(nifi_type)
    else:
        from flowcore.nifi.components import processor_class  # noqa: PLC0415
        from flowcore.registry import available_processors  # noqa: PLC0415

        cls = processor_class(nifi_type, {}, available_processors())
    if cls is None:
        return _NONE
    declared = tuple(getattr(cls, "property_descriptors", ()) or ())
    dynamic = None
    if getattr(cls, "supports_dynamic_properties", False):
        try:  # an unconfigured instance describes dynamic properties (InvokeHTTP's headers)
            instance = cls()
        except Exception:  # a class that needs arguments: its declared properties only
            instance = None
        if instance is not None:
            dynamic = (
                instance.dynamic_descriptor if service else instance.get_dynamic_property_descriptor
            )
    return KnownProperties(declared, dynamic)


def known_properties(item: Mapping[str, Any], *, service: bool) -> KnownProperties:
    """The descriptors flowcore has for the component *item* (NiFi JSON) by its ``type``."""
    return _for_type(str(item.get("type") or ""), service)


def is_sensitive(
    item: Mapping[str, Any], name: str, *, service: bool, known: KnownProperties | None = None
) -> bool:
    """Whether property *name* of *item* is sensitive: its JSON descriptor or flowcore says so."""
    descriptor = (item.get("propertyDescriptors") or {}).get(name) or {}
    if descriptor.get("sensitive"):
        return True
    found = (known or known_properties(item, service=service)).find(name)
    return found is not None and found.sensitive
