"""NiFi 2 Python processors in flowcore: load a directory of them, or adapt one class.

NiFi's Python API is the package ``nifiapi`` (its code in ``flowcore/nifiapi``); a processor file
written for NiFi 2 imports it unchanged. This module is flowcore's side of it:

* :func:`load_python_extensions` scans directories as NiFi scans
  ``nifi.python.extensions.source.directory`` and gives each processor's flowcore class by class
  name, reporting (or installing) declared dependencies;
* :func:`register` makes them the ones NiFi flows imported in this process find (bundle
  ``python-extensions``), as ``--python-extensions DIR`` does;
* :func:`processor_class` adapts one NiFi class already imported (a test's), for ``TestRunner``
  and Python flows.
"""

from __future__ import annotations

from nifiapi._adapter import processor_class
from nifiapi._loader import (
    ENVIRONMENT_VARIABLE,
    MissingDependencies,
    PythonExtensions,
    load_python_extensions,
    loaded_processors,
    register,
)

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "MissingDependencies",
    "PythonExtensions",
    "load_python_extensions",
    "loaded_processors",
    "processor_class",
    "register",
]
