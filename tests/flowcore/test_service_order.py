"""Tests for the order controller services are enabled in: dependencies first, cycles named."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ConfigurationError
from flowcore.service_order import (
    enabling_order,
    secrets_with_services,
    service_cycles,
    service_dependencies,
    service_dependents,
)


@attrs.frozen
class Named:
    """A definition naming other services by property, as a controller service does."""

    names: tuple[str, ...] = ()

    def referenced_services(self) -> dict[str, str]:
        return {f"Service {index}": name for index, name in enumerate(self.names)}


def test_dependencies_come_first_and_ties_go_by_name() -> None:
    """A service follows those it names; services unrelated to each other sort by name."""
    declared = {"reader": Named(("registry", "ssl")), "ssl": Named(), "registry": Named(("ssl",))}
    declared["alone"] = Named()
    assert enabling_order(declared) == ["alone", "ssl", "registry", "reader"]


def test_asking_for_one_service_brings_what_it_names_and_no_more() -> None:
    """Only the named services and their dependencies are ordered; undeclared names are left out."""
    declared = {"reader": Named(("registry", "missing")), "registry": Named(), "other": Named()}
    assert enabling_order(declared, ["reader", "nowhere"]) == ["registry", "reader"]
    assert enabling_order({"b": Named(), "a": Named()}, ["b"]) == ["b"]


def test_a_non_service_names_nothing_and_a_repeated_name_counts_once() -> None:
    """An object without referenced_services names nothing; a name given twice is one dependency."""
    assert service_dependencies(object()) == ()
    assert service_dependencies(Named(("a", "b", "a"))) == ("a", "b")


def test_cycles_are_named_and_refused() -> None:
    """Each cycle is listed by its sorted names, and ordering services in one fails in one line."""
    declared = {"x": Named(("y",)), "y": Named(("x",)), "z": Named(("z",)), "free": Named()}
    assert service_cycles(declared) == [["x", "y"], ["z"]]
    with pytest.raises(ConfigurationError, match=r"cycle \(x -> y\); break it"):
        enabling_order(declared, ["x"])
    assert enabling_order(declared, ["free"]) == ["free"]


def test_dependents_are_found_through_other_services() -> None:
    """What must be disabled before a service: every service naming it, directly or not."""
    declared = {"ssl": Named(), "pool": Named(("ssl",)), "lookup": Named(("pool",)), "x": Named()}
    assert service_dependents(declared, "ssl") == {"pool", "lookup"}
    assert service_dependents(declared, "lookup") == set()


@given(
    st.dictionaries(
        st.sampled_from("abcdefgh"),
        st.lists(st.sampled_from("abcdefgh"), max_size=3),
        max_size=8,
    )
)
def test_every_service_follows_what_it_names(names: dict[str, list[str]]) -> None:
    """Acyclic services are each ordered once, after every declared service they name."""
    declared = {name: Named(tuple(n for n in named if n < name)) for name, named in names.items()}
    order = enabling_order(declared)
    assert sorted(order) == sorted(declared)
    for name, service in declared.items():
        assert all(order.index(n) < order.index(name) for n in service.names if n in declared)


@attrs.frozen
class Holding(Named):
    """A definition holding secrets, as a controller service or processor does."""

    secrets: tuple[str, ...] = ()

    def sensitive_values(self) -> list[str]:
        return list(self.secrets)


def test_a_components_secrets_take_those_of_the_services_it_names_transitively() -> None:
    """Its own, then each named service's and theirs in turn (once, whatever cycle); the
    services it does not reach and names not declared add nothing."""
    declared = {
        "pool": Holding(("ssl", "missing"), ("pool-pw",)),
        "ssl": Holding(("pool",), ("keystore-pw",)),
        "other": Holding((), ("other-pw",)),
    }
    found = secrets_with_services(Holding(("pool",), ("own-pw",)), declared)
    assert sorted(found) == ["keystore-pw", "own-pw", "pool-pw"]
    assert found[0] == "own-pw"
    assert secrets_with_services(object(), declared) == []
