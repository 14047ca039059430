"""Relative directories on a Spark master whose executors run elsewhere (local-cluster)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flowcore.datasets.store import Dataset

pytestmark = [
    pytest.mark.stress,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

# Executors of a local-cluster master are JVMs started by a worker in its own folder
# (pyspark's work/app-.../N), the way a standalone cluster's are: every path a task makes
# relative resolves there unless the task runs in the driver's directory.
MASTER = "local-cluster[1,1,512]"

FLOW = """
from flowcore import Flow
from processors import (
    FetchFile, FileSplitter, GetFile, ListFile, PutDataset, PutFile, UpdateAttribute,
)

flow = Flow("relative")
get = flow.add(GetFile(input_directory="in"), name="get")
tag = flow.add(UpdateAttribute(target="out/${filename:substringBefore('.')}"), name="tag")
put = flow.add(PutFile(directory="${target}"), name="put")
flow.connect(get, tag)
flow.connect(tag, put)
flow.auto_terminate(put, ["success", "failure"])

listed = flow.add(ListFile(input_directory="listed"), name="list")
fetch = flow.add(FetchFile(), name="fetch")
copy = flow.add(PutFile(directory="fetched"), name="copy")
flow.connect(listed, fetch)
flow.connect(fetch, copy, "success")
flow.auto_terminate(fetch, ["not.found", "permission.denied", "failure"])
flow.auto_terminate(copy, ["success", "failure"])

split = flow.add(FileSplitter(input_directory="big", block_size="1 KB"), name="split")
dataset = flow.add(PutDataset(directory="lines", demarcator="\\n"), name="dataset")
flow.connect(split, dataset, "blocks")
flow.auto_terminate(split, ["files", "failure"])
flow.auto_terminate(dataset, ["success", "failure"])
"""


def _flowcore(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "flowcore"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [str(script), *args], cwd=cwd, capture_output=True, timeout=600, check=False, env=env
    )


def test_relative_directories_resolve_on_the_driver(tmp_path: Path) -> None:
    """On local-cluster, relative and EL-evaluated directories of GetFile, PutFile, ListFile,
    FetchFile, FileSplitter and PutDataset, and a relative repository, are the driver's."""
    (tmp_path / "flow.py").write_text(FLOW)
    for name in ("in", "listed", "big"):
        (tmp_path / name).mkdir()
    for n in range(3):
        (tmp_path / "in" / f"f{n}.txt").write_text(f"in {n}\n")
        (tmp_path / "listed" / f"l{n}.txt").write_text(f"listed {n}\n")
    lines = "".join(f"line {i:05d}\n" for i in range(500)).encode()
    (tmp_path / "big" / "big.log").write_bytes(lines)

    done = _flowcore(
        "run", "flow.py", "--runner", "spark", "--master", MASTER,
        "--conf", "spark.executor.memory=512m", "--setting", "driver_run_max_flowfiles=0",
        "--repository", ".flowcore", cwd=tmp_path,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 0, err
    for n in range(3):
        assert (tmp_path / "out" / f"f{n}" / f"f{n}.txt").read_text() == f"in {n}\n"
        assert (tmp_path / "fetched" / f"l{n}.txt").read_text() == f"listed {n}\n"
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == []
    written = b"".join(Dataset(tmp_path / "lines").iter_bytes()).splitlines(keepends=True)
    assert sorted(line for line in written if line != b"\n") == lines.splitlines(keepends=True)
    assert (tmp_path / ".flowcore" / "flowfile").is_dir()
