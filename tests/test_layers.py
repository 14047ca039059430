"""Tests for the package layout: layers import only downwards, no import cycles, no re-exports
used internally (function-level imports and imports under ``TYPE_CHECKING`` included)."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flowcore", "processors", "repositories")

#: The layers, lowest first; a module may import modules of its own layer or below. Each entry
#: is a module name, or a package name ending in ``.*`` for all of its modules.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "values and storage formats",
        (
            "flowcore.errors",
            "flowcore._nifiapi_finder",
            "flowcore._moved_modules",
            "flowcore.clock",
            "flowcore.units",
            "flowcore.cron",
            "flowcore.settings",
            "flowcore.flowfile",
            "flowcore.flowfile_batch",
            "flowcore.flowfile_batch.*",
            "flowcore.ropes",
            "flowcore.processor.relationship",
            "flowcore.provenance_events",
            "flowcore.faults",
            "flowcore.patterns",
            "flowcore.parameters",
            "flowcore.ids",
            "flowcore.datasets.*",
            "repositories",
            "repositories.records",
            "repositories.protocols",
            "flowcore.session.external_files",
            "repositories.locks",
            "repositories._files",
        ),
    ),
    (
        "processor API",
        (
            "flowcore.properties",
            "flowcore.controller_service",
            "flowcore.service_order",
            "flowcore.services",
            "flowcore.ssl_context",
            "flowcore.validators",
            "flowcore.expression.*",
            "flowcore.processor",
            "flowcore.processor.base",
            "flowcore.processor.kinds",
            "flowcore.processor.context",
            "flowcore.processor.binning",
            "flowcore.record_path.*",
            "flowcore.records.*",
            "flowcore.session.*",
        ),
    ),
    # NiFi's Python API runs NiFi processors on the processor API and the records SDK alone.
    ("NiFi's Python API", ("flowcore.nifiapi.*",)),
    ("built-in processors", ("processors.*",)),
    (
        "flow definition and validation",
        (
            "flowcore.definition",
            "flowcore.definition.component_settings",
            "flowcore.definition.flow",
            "flowcore.definition.validation",
            "flowcore.definition.queues",
        ),
    ),
    ("compiler", ("flowcore.compiler.*",)),
    ("pictures of flows and lineage", ("flowcore.pictures.*",)),
    (
        "execution and repositories",
        ("flowcore.engine.*", "flowcore.runners.*", "repositories.*"),
    ),
    ("driver", ("flowcore.driver.*",)),
    (
        "faces",
        (
            "flowcore",
            "flowcore.batch",
            "flowcore.__main__",
            "flowcore.builder",
            "flowcore.cli",
            "flowcore.cli.*",
            "flowcore.registry",
            "flowcore.testing.*",
            "flowcore.nifi.*",
            "flowcore.ui.*",
        ),
    ),
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _layer_of(module: str) -> int:
    """The layer of *module*: an exact entry wins over a package wildcard."""
    wildcard = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if member == module:
                return index
            inside = module == member[:-2] or module.startswith(member[:-1])
            if member.endswith(".*") and inside and wildcard is None:
                wildcard = index
    if wildcard is None:
        msg = f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}"
        raise AssertionError(msg)
    return wildcard


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@functools.cache
def _tree(module: str) -> ast.Module:
    """*module*'s syntax tree, parsed once for every test here."""
    return ast.parse(MODULES[module].read_text())


def _imports(
    module: str, *, type_checking: bool = True
) -> Iterator[tuple[ast.ImportFrom | ast.Import, str]]:
    """Each import statement of *module*, with what it names.

    Imports under ``TYPE_CHECKING`` count (a dependency for the reader and the type checker is
    a dependency); *type_checking* False leaves them out, for what only matters when the
    import runs.
    """
    tree = _tree(module)
    skipped = (
        set()
        if type_checking
        else {
            id(sub)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _type_checking(node)
            for sub in ast.walk(node)
        }
    )
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                yield node, f"{base}.{alias.name}"


def _target(name: str) -> str | None:
    """The project module *name* refers to (its longest known prefix), or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in MODULES:
            return candidate
    return None


def _graph() -> nx.DiGraph:
    """Who imports whom. ``from package import module`` runs the package's ``__init__`` too
    (``from processors import _codecs`` loads every processor the package imports), so the
    package counts as imported, as ``../shared/tools/import_cycles.py`` counts it."""
    graph = nx.DiGraph()
    for module in MODULES:
        graph.add_node(module)
        for node, name in _imports(module):
            loaded = {_target(name)}
            if isinstance(node, ast.ImportFrom):
                loaded.add(_target(name.rsplit(".", 1)[0]))
            for target in loaded - {None, module}:
                graph.add_edge(module, target)
    return graph


@functools.cache
def _reexported(module: str) -> frozenset[str]:
    """Names *module* only imports from elsewhere (bound by an import, not defined there)."""
    tree = _tree(module)
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    return frozenset(imported - defined)


def test_every_module_has_a_layer() -> None:
    """A new module must be placed in a layer before it can be imported anywhere."""
    assert all(_layer_of(module) >= 0 for module in MODULES)


def test_layers_import_only_downwards() -> None:
    """No module imports one of a higher layer, function-level and TYPE_CHECKING ones included."""
    upward = [
        f"{a} ({LAYERS[_layer_of(a)][0]}) imports {b} ({LAYERS[_layer_of(b)][0]})"
        for a, b in _graph().edges
        if _layer_of(b) > _layer_of(a)
    ]
    assert upward == []


def test_there_is_no_import_cycle() -> None:
    """The import graph, ``TYPE_CHECKING`` imports included, is acyclic."""
    cycles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert cycles == []


def test_internal_code_imports_the_defining_module() -> None:
    """Inside the packages, a name is imported from the module that defines it, never through
    another module's or a package's re-export (which loads more and hides the real dependency)."""
    found = []
    for module in MODULES:
        for node, name in _imports(module):
            if not isinstance(node, ast.ImportFrom) or name in MODULES:
                continue
            source, _, attribute = name.rpartition(".")
            if source in MODULES and source != module and attribute in _reexported(source):
                found.append(f"{module}: {name}")
    assert found == []


def test_importing_flowcore_loads_neither_spark_nor_the_driver() -> None:
    """``import flowcore`` (what every Spark worker does) loads no pyspark, no in-memory
    repositories and no driver; ``flowcore.Flow`` loads the engine when first used."""
    code = (
        "import sys, flowcore; "
        "print(sorted(m for m in ('pyspark', 'repositories.memory', 'flowcore.driver.controller') "
        "if m in sys.modules)); flowcore.Flow; print('flowcore.driver.controller' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["[]", "True"]


def test_modules_flowcore_loads_import_on_their_own() -> None:
    """Importing any ``flowcore.x`` runs ``flowcore/__init__`` first, so a module outside the
    package that it loads would be loaded half-way when imported first (``repositories.external``
    was, through the session): each of them imports on its own in a fresh interpreter."""

    def run(code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
        )
        return done.stdout + done.stderr[-500:]

    loaded = run(
        "import sys, flowcore; print(' '.join(m for m in sys.modules "
        "if m.split('.')[0] in ('repositories', 'processors')))"
    ).split()
    failed = [f"{m}: {run(f'import {m}')}" for m in loaded if run(f"import {m}").strip()]
    assert failed == []


#: The only modules that may import pyspark: the Spark runner and the Data Sources it registers
#: (both load only when Spark is used; ``import flowcore`` stays Spark-free).
PYSPARK_MODULES = frozenset(
    {
        "flowcore.runners.class_archive",
        "flowcore.runners.sessions",
        "flowcore.runners.spark",
        "flowcore.runners.spark_sources",
    }
)


def test_only_the_spark_runners_modules_import_pyspark() -> None:
    """pyspark is imported (at any level, TYPE_CHECKING aside) by the Spark runner's modules
    alone."""
    importing = {
        module
        for module in MODULES
        for _, name in _imports(module, type_checking=False)
        if name == "pyspark" or name.startswith("pyspark.")
    }
    assert importing <= PYSPARK_MODULES
    assert importing == PYSPARK_MODULES  # the list stays exact
