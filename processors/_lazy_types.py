"""A registry of types by name whose modules are imported at the first lookup of each.

Importing every built-in processor loads pyarrow, DuckDB, lxml, httpx and the rest: about 1.5 s
at every ``flowcore`` command and in every Spark Python worker, though a flow uses a handful.
The registries stay explicit (one line per type, NiFi's name to its module) and stay mappings;
only the import waits until a flow, a lookup or a listing asks for the type.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Generic, TypeVar

__all__ = ["LazyTypes"]

T = TypeVar("T")


class LazyTypes(MutableMapping[str, T], Generic[T]):
    """Types by name: ``name -> module``, the class named *name* in *module*, loaded when asked.

    A value may also be the type itself (a plugin loaded already, or one registered at run
    time: ``types[name] = cls``, as a test registers its own service).

    Iterating, ``in`` and ``len`` import nothing; ``types[name]``, ``.get``, ``.values()`` and
    ``.items()`` import the modules of the types they return.
    """

    def __init__(self, modules: Mapping[str, str | T]) -> None:
        self._modules = dict(modules)

    def __getitem__(self, name: str) -> T:
        where = self._modules[name]
        if not isinstance(where, str):
            return where
        return getattr(importlib.import_module(where), name)

    def __setitem__(self, name: str, value: T) -> None:
        self._modules[name] = value

    def __delitem__(self, name: str) -> None:
        del self._modules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __repr__(self) -> str:
        return f"LazyTypes({sorted(self._modules)})"

    @property
    def modules(self) -> dict[str, str | T]:
        """``name -> module`` for every type (a copy), to build a larger registry from this one."""
        return dict(self._modules)

    def attribute(self, package: str, name: str) -> T:
        """*name* for a package's module ``__getattr__``: the type, or NiFi's AttributeError."""
        if name not in self._modules:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        return self[name]
