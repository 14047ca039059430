"""NiFi property names on the codecs' option values, and options from a service's properties.

Each option field that is a NiFi property says so in its attrs metadata (``nifi``: the property's
name as NiFi 2 names it), so a service wrapper builds the options from its properties without a
table of its own::

    options = from_properties(CsvReaderOptions, {"CSV Format": "rfc-4180",
                                                 "Treat First Line as Header": "true"})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from flowcore.errors import ConfigurationError

__all__ = ["from_properties", "nifi", "nifi_properties"]

#: An options class (CsvReaderOptions, JsonWriterOptions...).
Options = TypeVar("Options")


def nifi(name: str, default: Any, **kwargs: Any) -> Any:
    """An attrs field for the NiFi property *name* with NiFi's *default*."""
    return attrs.field(default=default, metadata={"nifi": name}, **kwargs)


def nifi_properties(cls: type) -> dict[str, str]:
    """NiFi property name -> option field name, for an options class."""
    return {f.metadata["nifi"]: f.name for f in attrs.fields(cls) if "nifi" in f.metadata}


def from_properties(cls: type[Options], properties: Mapping[str, str | None]) -> Options:
    """*cls* built from NiFi property values (text, as a flow holds them).

    Unset properties (absent or None) keep NiFi's defaults; ``true``/``false`` become booleans
    for boolean options. A property *cls* does not have is refused, naming those it has.
    """
    by_name = nifi_properties(cls)
    fields = {f.name: f for f in attrs.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for name, text in properties.items():
        if name not in by_name:
            msg = f"{cls.__name__} has no property {name!r}; its properties are {sorted(by_name)!r}"
            raise ConfigurationError(msg)
        if text is None:
            continue
        field = fields[by_name[name]]
        if isinstance(field.default, bool):
            if text.lower() not in ("true", "false"):
                msg = f"{name} must be true or false, not {text!r}"
                raise ConfigurationError(msg)
            values[field.name] = text.lower() == "true"
        elif isinstance(field.default, int):
            try:
                values[field.name] = int(text)
            except ValueError:
                msg = f"{name} must be a whole number, not {text!r}"
                raise ConfigurationError(msg) from None
        else:
            values[field.name] = text
    try:
        return cls(**values)
    except ValueError as exc:  # attrs' in_ validator: a value outside the allowable ones
        msg = str(exc.args[0] if exc.args else exc)
        for name, field_name in by_name.items():
            msg = msg.replace(repr(field_name), repr(name))
        msg = f"{cls.__name__}: {msg}"
        raise ConfigurationError(msg) from None
