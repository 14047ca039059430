"""Old module paths still import, and pickles naming them still load, after the package moves.

The moves put the flow definition into :mod:`flowcore.definition` and the processor API into
:mod:`flowcore.processor`. Code written against the old paths (``from flowcore.flow import
FlowDefinition``, as issue 34's warnings told users to write) and pickles that name a class by
its old module (``flowcore.relationship.Relationship``) keep working: importing an old path
returns the module it became, the same object, with a DeprecationWarning naming the new path.
``flowcore.processor`` kept its name (the package re-exports what the module exported).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings

#: Old module path -> the module it became.
MOVED_MODULES = {
    "flowcore.binning": "flowcore.processor.binning",
    "flowcore.component_settings": "flowcore.definition.component_settings",
    "flowcore.flow": "flowcore.definition.flow",
    "flowcore.process_context": "flowcore.processor.context",
    "flowcore.processor_kinds": "flowcore.processor.kinds",
    "flowcore.queues": "flowcore.definition.queues",
    "flowcore.relationship": "flowcore.processor.relationship",
    "flowcore.validation": "flowcore.definition.validation",
}


class _MovedModuleFinder:
    """Finds an old module path and loads it as the module it became.

    A meta path finder and its loader, by their methods: ``importlib.abc``'s base classes would
    load ``importlib.resources`` on every ``import flowcore``.
    """

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        """A spec for an old path, loaded by this finder; None for any other name."""
        del path, target
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        """The module the old path became (imported if it was not yet), with a warning."""
        new = MOVED_MODULES[spec.name]
        warnings.warn(f"{spec.name} moved to {new}: import {new}", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__  # the import system sets the alias spec on it
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: only the spec the import system set is put back."""
        module.__spec__ = module.__spec__.loader_state  # it stays the module it is


def install() -> None:
    """Register the finder first on ``sys.meta_path`` (once).

    First, so an old path is always the moved module, never a stale copy another finder might
    still find (an editable install of an older checkout).
    """
    if not any(type(f).__name__ == "_MovedModuleFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())


install()
