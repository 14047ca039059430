"""Tests for flowcore._nifiapi_finder: ``import nifiapi`` finds flowcore/nifiapi, one copy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import flowcore

ROOT = Path(flowcore.__file__).resolve().parent.parent


def test_nifiapi_is_flowcores_directory_under_its_own_name() -> None:
    """In a fresh interpreter with the source tree on PYTHONPATH, after flowcore, NiFi's
    imports work and name one copy: nifiapi.*, from flowcore/nifiapi, never flowcore.nifiapi."""
    code = (
        "import sys, flowcore\n"
        "from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult\n"
        "from nifiapi.properties import PropertyDescriptor, StandardValidators\n"
        "import nifiapi\n"
        "print(nifiapi.__file__)\n"
        "print(FlowFileTransform.__module__)\n"
        "print(any(m.startswith('flowcore.nifiapi') for m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    where, module, twice = done.stdout.split()
    assert Path(where) == ROOT / "flowcore" / "nifiapi" / "__init__.py"
    assert (module, twice) == ("nifiapi.flowfiletransform", "False")


def test_importing_it_as_flowcore_nifiapi_is_refused() -> None:
    """A second copy under flowcore.nifiapi would make every class twice: it says so."""
    with pytest.raises(ImportError, match="import NiFi's Python API as 'nifiapi'"):
        __import__("flowcore.nifiapi")
    sys.modules.pop("flowcore.nifiapi", None)
