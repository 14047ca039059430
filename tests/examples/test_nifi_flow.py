"""Tests that examples/nifi_flow.json, a NiFi 2.x flow definition, runs unchanged on Spark."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "nifi-flow-data"


def _run(tmp_path: Path, runner: str) -> subprocess.CompletedProcess[str]:
    """``flowcore run examples/nifi_flow.json`` over a copy of the example's input."""
    shutil.copytree(DATA / "in", tmp_path / "in")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "flowcore",
            "run",
            str(ROOT / "examples" / "nifi_flow.json"),
            "--runner",
            runner,
            "--repository",
            str(tmp_path / "repository"),
            "--parameter",
            f"input.directory={tmp_path / 'in'}",
            "--parameter",
            f"output.directory={tmp_path / 'out'}",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        timeout=600,
    )


def _outputs(directory: Path) -> dict[str, list[str]]:
    """Each output file's lines, sorted (a merged bundle's order follows the queue's)."""
    return {
        path.name.removesuffix(".gz"): sorted(
            gzip.decompress(path.read_bytes()).decode().split("\n")
        )
        for path in sorted(directory.iterdir())
    }


def _expected() -> dict[str, list[str]]:
    """The orders of each status, as the checked-in expected files list them."""
    return {
        path.name: sorted(path.read_text().rstrip("\n").split("\n"))
        for path in sorted((DATA / "expected").iterdir())
    }


@pytest.mark.spark
def test_the_nifi_example_runs_on_spark_and_writes_the_expected_orders(tmp_path: Path) -> None:
    """ListFile -> FetchFile -> CompressContent -> SplitText -> a nested group (EvaluateJsonPath,
    DetectDuplicate on a NiFi map cache) -> UpdateAttribute -> AttributesToJSON -> MergeContent
    -> CryptographicHashContent -> CompressContent -> PutFile: one gzipped file per status,
    each order once although 25 lines repeat orders of other files."""
    result = _run(tmp_path, "spark")
    assert result.returncode == 0, result.stderr
    assert _outputs(tmp_path / "out") == _expected()
    assert "duplicate" in result.stdout


def test_the_nifi_example_runs_the_same_on_the_direct_runner_and_lists_once(
    tmp_path: Path,
) -> None:
    """The direct runner writes the same files; a second run on the same repository lists no
    file again (ListFile's state) and so writes nothing new."""
    first = _run(tmp_path, "direct")
    assert first.returncode == 0, first.stderr
    assert _outputs(tmp_path / "out") == _expected()
    shutil.rmtree(tmp_path / "out")
    shutil.rmtree(tmp_path / "in")
    second = _run(tmp_path, "direct")
    assert second.returncode == 0, second.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
