"""The lazy registries: a processor's module is imported only when its type is asked for."""

from __future__ import annotations

import collections
import subprocess
import sys

import pytest

import processors
from flowcore.registry import BUILTIN_SERVICES
from processors._lazy_types import LazyTypes


def _imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running *code*."""
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(done.stdout.split())


def test_a_lookup_imports_the_types_module_and_iteration_imports_nothing() -> None:
    """Names, ``in`` and ``len`` come from the table; ``[]`` imports the module and returns its
    class; a value that is a type already is returned as it is."""
    types: LazyTypes[type] = LazyTypes({"OrderedDict": "collections", "Given": int})
    assert list(types) == ["OrderedDict", "Given"]
    assert "OrderedDict" in types
    assert len(types) == 2
    assert types["OrderedDict"] is collections.OrderedDict
    assert types["Given"] is int
    assert types.get("Missing") is None


def test_registering_and_removing_a_type_at_run_time() -> None:
    """A type set by name is found and can be deleted again (as a test registers its own)."""
    types: LazyTypes[type] = LazyTypes({})
    types["Mine"] = dict
    assert types["Mine"] is dict
    del types["Mine"]
    assert "Mine" not in types


def test_an_unknown_attribute_of_the_package_is_the_usual_attribute_error() -> None:
    """``processors.NoSuch`` raises AttributeError naming the package and the name."""
    with pytest.raises(AttributeError, match="'processors' has no attribute 'NoSuch'"):
        _ = processors.NoSuch


def test_importing_the_cli_and_one_processor_loads_no_other_processors_libraries() -> None:
    """The CLI and ``from processors import SplitText`` load neither the record processors'
    pyarrow and DuckDB nor the other processors' modules."""
    loaded = _imported_after(
        "import flowcore.cli._common\nimport flowcore.registry\nfrom processors import SplitText"
    )
    assert "processors.split_text" in loaded
    assert not {"duckdb", "processors.query_record", "processors.invoke_http"} & loaded
    assert not any(name.startswith("processors.record_services.") for name in loaded)


def test_every_registered_name_resolves_to_its_class() -> None:
    """Each built-in processor and service is found in the module its entry names."""
    for types in (processors.BUILTIN_PROCESSORS, BUILTIN_SERVICES):
        for name, cls in types.items():
            assert cls.__name__ == name


def test_module_attributes_look_through_the_registries_in_order() -> None:
    """A package's ``__getattr__`` finds a name in the first registry holding it and raises
    Python's AttributeError for an unknown one; its ``__dir__`` lists every exported name."""
    import processors.lookup_services as package
    from processors._lazy_types import lazy_module_attributes

    first = LazyTypes({"LookupService": "processors.lookup_services.base"})
    last = LazyTypes({"SimpleKeyValueLookupService": "processors.lookup_services.simple"})
    getattr_, dir_ = lazy_module_attributes(package.__name__, ["Exported"], first, last)
    assert getattr_("LookupService").__name__ == "LookupService"
    assert getattr_("SimpleKeyValueLookupService").__name__ == "SimpleKeyValueLookupService"
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        getattr_("Nope")
    assert {"Exported", "LOOKUP_SERVICES"} <= set(dir_())
