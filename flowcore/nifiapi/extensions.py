"""The NiFi Python processors loaded in this process, importable by class name.

``from nifiapi.extensions import UpperCase`` gives the flowcore processor class of the NiFi
processor ``UpperCase`` loaded from an extensions directory (``--python-extensions DIR``, the
setting ``python_extensions_source_directory`` or ``FLOWCORE_PYTHON_EXTENSIONS``): what
``flowcore convert --to python`` writes for a NiFi flow's Python processors, so the flow file it
writes runs with the same option. Not part of NiFi's API (NiFi has no such module).
"""

from __future__ import annotations

from typing import Any

from nifiapi._loader import ENVIRONMENT_VARIABLE, loaded_processors


def __getattr__(name: str) -> Any:
    """The loaded processor class called *name* (PEP 562)."""
    if name.startswith("__"):
        raise AttributeError(name)
    found = loaded_processors().get(name)
    if found is None:
        msg = (
            f"no NiFi Python processor {name} is loaded: give the directory its file is in "
            f"with --python-extensions DIR or {ENVIRONMENT_VARIABLE}"
        )
        raise ImportError(msg)
    return found
