"""NiFi Python processors loaded from directories, as NiFi loads its extensions directory.

NiFi scans ``nifi.python.extensions.source.directory.*`` (``./python/extensions`` by default):
every ``.py`` file directly in it, and every package (a subdirectory with ``__init__.py``) whose
modules see one another; a class that extends ``FlowFileTransform`` or ``FlowFileSource`` and
declares ``class Java: implements = [...]`` is a processor, named by its class. flowcore does the
same with :func:`load_python_extensions`, from ``--python-extensions DIR``, the setting
``python_extensions_source_directory`` or the environment variable ``FLOWCORE_PYTHON_EXTENSIONS``
(directories separated by ``os.pathsep``), and a NiFi flow's processor of that class name (bundle
``python-extensions``) becomes the loaded one.

Files are read first, not run: only a module that declares a processor is imported, and only
once its processors' declared dependencies (``ProcessorDetails.dependencies``, and a package's
``requirements.txt``) are installed. Missing ones are reported, one line per processor naming the
packages and the ``pip install`` command; they are installed into the running interpreter's
environment only when asked (``install_dependencies=True``, ``--install-dependencies``), since
NiFi's one virtual environment per processor has no counterpart in one Spark application.

Each module is imported under a name of its own (``nifi_python_extension_<file>_<hash>``), kept
in ``sys.modules``, by :func:`nifiapi._adapter.import_extension`, which an executor calls again
when it unpickles one of its processors.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import ConfigurationError
from flowcore.processor.base import Processor
from nifiapi._adapter import import_extension, processor_class

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "INTERFACES",
    "MissingDependencies",
    "PythonExtensions",
    "load_python_extensions",
    "loaded_processors",
    "register",
]

#: Where flowcore looks for Python extension directories when no option names them.
ENVIRONMENT_VARIABLE = "FLOWCORE_PYTHON_EXTENSIONS"
#: The interfaces a NiFi Python processor's ``Java.implements`` names, that flowcore runs.
INTERFACES = (
    "org.apache.nifi.python.processor.FlowFileTransform",
    "org.apache.nifi.python.processor.FlowFileSource",
    "org.apache.nifi.python.processor.RecordTransform",
)


@attrs.frozen
class MissingDependencies:
    """A processor whose declared dependencies are not installed.

    Attributes:
        processor: its class name.
        path: the file that declares it.
        packages: the requirements not met, as declared (``pandas``, ``numpy==1.20.0``).
    """

    processor: str
    path: str
    packages: tuple[str, ...]

    @property
    def pip_command(self) -> str:
        """The command that installs them into the running environment."""
        return shlex.join([sys.executable, "-m", "pip", "install", *self.packages])

    def message(self) -> str:
        """The one line that reports it."""
        return (
            f"Python processor {self.processor} ({self.path}) needs "
            f"{', '.join(self.packages)}, not installed: run {self.pip_command}, "
            "or give --install-dependencies"
        )


@attrs.frozen
class PythonExtensions:
    """What :func:`load_python_extensions` found.

    Attributes:
        processors: the flowcore processor class of each NiFi processor, by its class name;
            one whose dependencies are missing is there too, and raises
            :class:`~flowcore.errors.ConfigurationError` with :meth:`MissingDependencies.message`
            when made, so a flow using it says why.
        missing: the processors whose dependencies are missing.
        installed: the requirements installed on the way.
    """

    processors: Mapping[str, type[Processor]]
    missing: tuple[MissingDependencies, ...] = ()
    installed: tuple[str, ...] = ()


@attrs.frozen
class _Declared:
    """A processor class a file declares, as read from its source."""

    name: str
    dependencies: tuple[str, ...]


def _literal_strings(node: ast.expr) -> tuple[str, ...]:
    """The strings a literal list/tuple (or a 1-tuple of one, ``x = [...],``) holds."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return ()
    if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], list | tuple):
        value = value[0]
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _inner_assignment(cls: ast.ClassDef, inner: str, name: str) -> ast.expr | None:
    """The value of *name* assigned in class *inner* inside *cls*, or None."""
    for node in cls.body:
        if isinstance(node, ast.ClassDef) and node.name == inner:
            for statement in node.body:
                if isinstance(statement, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in statement.targets
                ):
                    return statement.value
    return None


def declared_processors(source: str, path: str) -> list[_Declared]:
    """The processor classes *source* declares (NiFi finds them by reading, as here).

    Raises:
        ConfigurationError: the file is not valid Python (names it and the line).
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        msg = f"Python extension {path} is not valid Python: {error.msg} (line {error.lineno})"
        raise ConfigurationError(msg) from None
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        implements = _inner_assignment(node, "Java", "implements")
        if implements is None or not set(_literal_strings(implements)) & set(INTERFACES):
            continue
        dependencies = _inner_assignment(node, "ProcessorDetails", "dependencies")
        found.append(
            _Declared(node.name, () if dependencies is None else _literal_strings(dependencies))
        )
    return found


def _requirements_file(directory: Path) -> tuple[str, ...]:
    """A package's ``requirements.txt`` lines (comments and options left out)."""
    file = directory / "requirements.txt"
    if not file.is_file():
        return ()
    lines = (line.split("#", 1)[0].strip() for line in file.read_text().splitlines())
    return tuple(line for line in lines if line and not line.startswith("-"))


def unmet(requirements: Iterable[str], where: str) -> tuple[str, ...]:
    """The *requirements* the running environment does not satisfy.

    Raises:
        ConfigurationError: one is not a requirement pip understands (names it and *where*).
    """
    # imported here: every `flowcore run` imports this module, few read requirements
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

    missing = []
    for text in requirements:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            msg = f"{where}: dependency {text!r} is not a pip requirement: {error}"
            raise ConfigurationError(msg) from None
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            missing.append(text)
    return tuple(missing)


def pip_install(requirements: Sequence[str]) -> None:
    """Install *requirements* into the running interpreter's environment with pip.

    Raises:
        ConfigurationError: pip failed (its exit status and command).
    """
    command = [sys.executable, "-m", "pip", "install", *requirements]
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        msg = f"{shlex.join(command)} failed with exit status {done.returncode}"
        raise ConfigurationError(msg)
    importlib.invalidate_caches()


def _needs_packages(missing: MissingDependencies) -> type[Processor]:
    """A processor class standing for *missing*'s processor: making one says what is missing."""

    def refuse(self: Processor, **properties: Any) -> None:
        del self, properties
        raise ConfigurationError(missing.message())

    return type(  # type: ignore[return-value]
        missing.processor,
        (Processor,),
        {"__init__": refuse, "__doc__": missing.message(), "__module__": __name__},
    )


def _candidates(directory: Path) -> list[tuple[Path, Path, tuple[str, ...]]]:
    """Each module file to read: (file, the directory its siblings are in, package needs)."""
    found = []
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix == ".py" and entry.name != "__init__.py":
            found.append((entry, directory, ()))
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            needs = _requirements_file(entry)
            for module in sorted(entry.glob("*.py")):
                if module.name != "__init__.py":
                    found.append((module, entry, needs))
    return found


def load_python_extensions(
    directories: Iterable[str | os.PathLike[str]],
    *,
    install_dependencies: bool = False,
    install: Callable[[Sequence[str]], None] = pip_install,
) -> PythonExtensions:
    """Load every NiFi Python processor in *directories* (see the module's docstring).

    Args:
        directories: the extension directories, as NiFi's source directories.
        install_dependencies: install missing declared dependencies with pip first.
        install: how they are installed (pip into the running environment).

    Raises:
        ConfigurationError: a directory does not exist, a file is not valid Python or fails
            to import, two processors have the same class name, a dependency is not a pip
            requirement, or pip fails; each names the file or directory.
    """
    processors: dict[str, type[Processor]] = {}
    where: dict[str, Path] = {}
    missing: list[MissingDependencies] = []
    installed: list[str] = []
    for given in directories:
        directory = Path(given).expanduser().resolve()
        if not directory.is_dir():
            msg = f"Python extensions directory {given} does not exist or is not a directory"
            raise ConfigurationError(msg)
        for path, search, package_needs in _candidates(directory):
            declared = declared_processors(path.read_text(encoding="utf-8"), str(path))
            if not declared:
                continue
            short = []
            for processor in declared:
                needs = unmet((*package_needs, *processor.dependencies), str(path))
                if needs and install_dependencies:
                    install(needs)
                    installed.extend(needs)
                    needs = unmet(needs, str(path))
                if needs:
                    short.append(MissingDependencies(processor.name, str(path), needs))
            for name in (p.name for p in declared):
                if name in where:
                    msg = (
                        f"two Python processors are named {name}: in {where[name]} and {path}; "
                        "flows name them by class name, so rename one"
                    )
                    raise ConfigurationError(msg)
                where[name] = path
            if short:  # the module would fail to import without them
                missing.extend(short)
                for each in short:
                    processors[each.processor] = _needs_packages(each)
                continue
            module = import_extension(path, search)
            for processor in declared:
                processors[processor.name] = processor_class(getattr(module, processor.name))
    return PythonExtensions(processors, tuple(missing), tuple(installed))


#: The processors loaded for this process's flows (:func:`register`), by class name.
_REGISTERED: dict[str, type[Processor]] = {}
_FROM_ENVIRONMENT: list[bool] = []


def register(extensions: PythonExtensions) -> None:
    """Make *extensions*' processors the ones NiFi flows imported in this process may use."""
    _REGISTERED.update(extensions.processors)


def loaded_processors() -> dict[str, type[Processor]]:
    """The processors registered, those of ``FLOWCORE_PYTHON_EXTENSIONS`` loaded first.

    Raises:
        ConfigurationError: as :func:`load_python_extensions`, for the variable's directories.
    """
    if not _FROM_ENVIRONMENT:
        named = [d for d in os.environ.get(ENVIRONMENT_VARIABLE, "").split(os.pathsep) if d]
        if named:
            found = load_python_extensions(named)  # raises again next time until it loads
            for name, cls in found.processors.items():
                _REGISTERED.setdefault(name, cls)
        _FROM_ENVIRONMENT.append(True)
    return dict(_REGISTERED)
