"""Helpers of the kill -9 tests: a real ``flowcore run`` in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def start_flowcore_run(workdir: Path) -> subprocess.Popen:
    """``flowcore run flow.py --runner direct --json`` in *workdir*, its stderr piped."""
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
