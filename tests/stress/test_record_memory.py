"""Memory of the record processors on large content: streamed batch by batch, never held whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.stress, pytest.mark.slow]

#: A flow converting every CSV file of ``in/`` to JSON lines in ``out/``; prints its peak RSS.
_CONVERT = """
import resource, sys
from flowcore import Flow
from processors import ConvertRecord, GetFile, PutFile
from processors.record_services import CSVReader, JsonRecordSetWriter

root = sys.argv[1]
flow = Flow("convert")
flow.add_service(CSVReader("reader", treat_first_line_as_header="true"))
flow.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
get = flow.add(GetFile(input_directory=root + "/in"), name="get")
convert = flow.add(ConvertRecord(record_reader="reader", record_writer="writer"), name="convert")
put = flow.add(PutFile(directory=root + "/out"), name="put")
flow.connect(get, convert)
flow.connect(convert, put, "success")
flow.auto_terminate(convert, "failure")
flow.auto_terminate(put, ["success", "failure"])
flow.run("direct", repository=root + "/repo")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak_mb(root: Path, rows: int) -> tuple[int, int]:
    """Convert a CSV of *rows* rows in a fresh process: its peak RSS (MB) and the CSV's size."""
    (root / "in").mkdir(parents=True)
    body = b"".join(b"%d,name-%d,%d.5\n" % (i, i, i) for i in range(rows))
    (root / "in" / "big.csv").write_bytes(b"id,name,value\n" + body)
    size = (root / "in" / "big.csv").stat().st_size
    done = subprocess.run(
        [sys.executable, "-c", _CONVERT, str(root)], capture_output=True, text=True, check=True
    )
    out = (root / "out" / "big.csv").read_bytes()
    assert out.count(b"\n") + (not out.endswith(b"\n")) == rows, out[-200:]
    return int(done.stdout.split()[-1]), size


@pytest.mark.xfail(
    strict=True,
    reason="issue 35 open: a 34 MB CSV raises the flow's peak by about 108 MB (not yet streamed "
    "end to end); this test passes once it is",
)
def test_a_large_csv_is_streamed_not_held(tmp_path: Path) -> None:
    """Converting 34 MB of CSV through a flow raises the process's peak memory, against the same
    flow on a thousand rows, by less than the content's size: the records are streamed."""
    small, _ = _peak_mb(tmp_path / "small", 1_000)
    large, size = _peak_mb(tmp_path / "large", 1_200_000)
    assert large - small < size / (1 << 20), (small, large, size)
