"""A registry of types by name whose modules are imported at the first lookup of each.

Importing every built-in processor loads pyarrow, DuckDB, lxml, httpx and the rest: about 1.5 s
at every ``flowcore`` command and in every Spark Python worker, though a flow uses a handful.
The registries stay explicit (one line per type, NiFi's name to its module) and stay mappings;
only the import waits until a flow, a lookup or a listing asks for the type.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Generic, TypeVar

__all__ = ["LazyTypes", "lazy_module_attributes"]

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


def lazy_module_attributes(
    package: str, exported: Iterable[str], *registries: LazyTypes[Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` over its lazy registries.

    ``processors.SplitText`` then imports SplitText's module on first use, and ``dir()`` and
    completion still list every exported name.

    Args:
        package: the package's ``__name__``.
        exported: its ``__all__``.
        registries: where names are looked up, in order.
    """
    names = tuple(exported)

    def module_getattr(name: str) -> Any:
        for registry in registries[:-1]:
            if name in registry:
                return registry[name]
        return registries[-1].attribute(package, name)

    def module_dir() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return module_getattr, module_dir
