"""The order controller services are enabled in: what each names, cycles, dependencies first.

Services may name other services (a reader naming a schema registry, an SSL context named by
a connection pool). A service is enabled after every service it names and disabled before them:
:func:`enabling_order` gives that order (a topological one, names breaking ties, so it is
stable), :func:`service_cycles` names the cycles validation reports, and
:func:`service_dependents` what must be disabled before a service is.

Only what a definition's properties name is read (``referenced_services``), so any object can
be ordered and a non-service names nothing. networkx is imported where services are ordered,
not with this module: a Spark worker's task path, which names services only by their
definitions, never loads it (worker start-up).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from flowcore.errors import ConfigurationError

if TYPE_CHECKING:  # imported where services are ordered (see the module docstring)
    import networkx as nx

__all__ = [
    "enabling_order",
    "secrets_with_services",
    "service_cycles",
    "service_dependencies",
    "service_dependents",
]


def service_dependencies(service: object) -> tuple[str, ...]:
    """The names of the services *service*'s properties name (none for a non-service)."""
    referenced = getattr(service, "referenced_services", None)
    return tuple(dict.fromkeys(referenced().values())) if callable(referenced) else ()


def secrets_with_services(component: object, declared: Mapping[str, object]) -> list[str]:
    """*component*'s secrets and those of every service of *declared* it names, transitively.

    A processor may log what a service it uses holds (a connection pool's password in a
    connection error), so its messages lose those too. Duck-typed as the rest of this module:
    anything with ``sensitive_values`` and ``referenced_services``.
    """
    found = list(getattr(component, "sensitive_values", list)())
    seen: set[str] = set()
    names = list(service_dependencies(component))
    while names:
        name = names.pop()
        service = declared.get(name)
        if name in seen or service is None:
            continue
        seen.add(name)
        found.extend(getattr(service, "sensitive_values", list)())
        names.extend(service_dependencies(service))
    return found


def _graph(declared: Mapping[str, object]) -> nx.DiGraph:
    """Dependency -> dependent edges between the declared services."""
    import networkx as nx  # noqa: PLC0415  (see the TYPE_CHECKING import)

    graph = nx.DiGraph()
    graph.add_nodes_from(declared)
    for name, service in declared.items():
        for needed in service_dependencies(service):
            if needed in declared:
                graph.add_edge(needed, name)
    return graph


def service_cycles(declared: Mapping[str, object]) -> list[list[str]]:
    """Each cycle of services naming each other, as the names around it (sorted, stable)."""
    import networkx as nx  # noqa: PLC0415  (see the TYPE_CHECKING import)

    cycles = [sorted(c) for c in nx.simple_cycles(_graph(declared))]
    return sorted(cycles)


def service_dependents(declared: Mapping[str, object], name: str) -> set[str]:
    """The declared services naming service *name*, directly or through others."""
    import networkx as nx  # noqa: PLC0415  (see the TYPE_CHECKING import)

    return nx.descendants(_graph(declared), name)


def enabling_order(declared: Mapping[str, object], names: Iterable[str] | None = None) -> list[str]:
    """The services to enable for *names* (all when None), dependencies first.

    Disable in the reverse order. Names not declared are left out (validation reports them).

    Raises:
        ConfigurationError: the services involved name each other in a cycle.
    """
    import networkx as nx  # noqa: PLC0415  (see the TYPE_CHECKING import)

    wanted = set(declared) if names is None else {n for n in names if n in declared}
    if not any(
        needed in declared
        for service in declared.values()
        for needed in service_dependencies(service)
    ):  # no service names another (the usual case): the graph's order is the names' own
        return sorted(wanted)
    graph = _graph(declared)
    for name in list(wanted):
        wanted |= nx.ancestors(graph, name)
    sub = graph.subgraph(wanted)
    try:
        return list(nx.lexicographical_topological_sort(sub))
    except nx.NetworkXUnfeasible:
        cycle = " -> ".join(sorted(next(iter(nx.simple_cycles(sub)))))
        msg = f"services name each other in a cycle ({cycle}); break it"
        raise ConfigurationError(msg) from None
