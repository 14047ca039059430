"""``import nifiapi`` in a source tree: NiFi's Python API, found in ``flowcore/nifiapi``."""

from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path
from typing import Any


class _NiFiApiFinder:
    """Finds NiFi 2's Python API, ``nifiapi``, in ``flowcore/nifiapi`` of a source tree.

    NiFi's Python processors import ``nifiapi`` as a top-level package; its code lives in
    ``flowcore/nifiapi`` so the top level stays flowcore's three packages. A built wheel ships
    that directory as the top-level ``nifiapi`` (``package-dir`` in pyproject.toml; the wheel has
    no ``flowcore/nifiapi``, so this finder finds nothing there and steps aside), and an editable
    install maps it the same way. A source tree on ``PYTHONPATH`` has no such mapping: this
    finder, registered first on ``sys.meta_path`` when flowcore is imported, loads the same
    directory under the name ``nifiapi``. Either way there is one copy, named ``nifiapi.*``
    (never ``flowcore.nifiapi``, which would be a second copy of every class), and it wins over
    any other ``nifiapi`` on the path, so NiFi processors run against flowcore's.
    """

    def __init__(self, home: Path) -> None:
        self.home = str(home)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        """The spec of ``nifiapi`` in flowcore's directory (its submodules follow its path)."""
        del path, target
        if fullname != "nifiapi":
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.home])


def install() -> None:
    """Register the finder first on ``sys.meta_path`` (once)."""
    if not any(type(f).__name__ == "_NiFiApiFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, _NiFiApiFinder(Path(__file__).resolve().parent))


install()
