"""Codec options from a service's properties (the codecs name their NiFi properties)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from flowcore.controller_service import ControllerService
from flowcore.records.options import from_properties, nifi_properties

Options = TypeVar("Options")


def options_from(
    service: ControllerService,
    cls: type[Options],
    attributes: Mapping[str, str] | None = None,
    **extra: Any,
) -> Options:
    """*cls* built from *service*'s values of the properties *cls* names (NiFi's defaults else).

    With *attributes*, properties supporting Expression Language are evaluated against them
    (NiFi's CSV services take their separators from FlowFile attributes).

    Raises:
        ConfigurationError: a value the codec refuses, naming the property.
    """
    values: dict[str, str | None] = {}
    for name in nifi_properties(cls):
        if service.resolve_descriptor(name) is not None:
            value = service.get_property(name)
            descriptor = value.descriptor
            if attributes is not None and getattr(descriptor, "supports_expressions", False):
                value = value.evaluate_attribute_expressions(dict(attributes))
            values[name] = value.value
    options = from_properties(cls, values)
    if extra:
        import attrs  # noqa: PLC0415

        options = attrs.evolve(options, **extra)  # type: ignore[misc]
    return options
