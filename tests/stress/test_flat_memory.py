"""Memory of a large split stays flat: bounded by batches, not by the number of splits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.stress

#: The child: splits LINES one-line FlowFiles out of one file, tags them (Expression Language)
#: and drops them, with SplitText's batches and the hand-over threshold scaled down (5,000 and
#: 10,000) so a CI-sized input crosses them many times; prints its peak RSS in MB.
_CHILD = """
import resource, sys
from pathlib import Path

import processors.split_text as split_text
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, SplitText, UpdateAttribute

split_text.BATCH_SPLITS = 5_000
lines, root = int(sys.argv[1]), Path(sys.argv[2])
(root / "in").mkdir(parents=True)
with open(root / "in" / "big.log", "wb") as out:
    for start in range(0, lines, 10_000):
        stop = min(start + 10_000, lines)
        out.write(b"".join(b"line %09d of a large log\\n" % i for i in range(start, stop)))
flow = Flow("flat")
get = flow.add(GetFile(input_directory=str(root / "in")), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
tag = flow.add(UpdateAttribute(group="${fragment.index:mod(8)}"), name="tag")
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(tag, "success")
settings = Settings(sync=False, batch_hand_over_flowfiles=10_000)
result = run_flow(flow, "direct", repository=root / "repo", settings=settings)
assert result.count("tag", "success") == lines, result.transfers
# VmHWM, not ru_maxrss: ru_maxrss survives exec, so it counts the pytest process this was forked
# from (hundreds of MB late in a full run); VmHWM is this program's own address space.
status = Path("/proc/self/status")
if status.exists():
    hwm = next(l for l in status.read_text().splitlines() if l.startswith("VmHWM"))
    print(int(hwm.split()[1]) // 1024)
else:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak_mb(root: Path, lines: int) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(lines), str(root)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split()[-1])


@pytest.mark.slow
def test_eight_times_the_splits_take_about_the_same_memory(tmp_path: Path) -> None:
    """1.6M one-line splits peak within 60 MB of 200,000 (measured: +27 MB; without the
    hand-over, +165 MB): batches go on as they are made and their events to disk."""
    small = _peak_mb(tmp_path / "small", 200_000)
    large = _peak_mb(tmp_path / "large", 1_600_000)
    assert large - small < 60, (small, large)
