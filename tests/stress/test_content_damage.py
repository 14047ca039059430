"""Damaged content through the command line: `flowcore check` reports it, a run routes it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from flowcore.driver.controller import Controller
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from repositories.repository_set import RepositorySet

pytestmark = pytest.mark.stress

FLOW = """
from flowcore import Flow
from processors import GetFile, PutFile, SplitText

flow = Flow("damage")
get = flow.add(GetFile(input_directory="in", keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=100), name="split")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(get, split, durable=True)
flow.connect(split, put, "original")
flow.auto_terminate(split, ["splits", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


def _flowcore(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.run(
        [str(script), *args], cwd=workdir, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_check_reports_damage_and_a_run_fails_only_the_damaged_flowfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flipped byte: check names claim and queue (exit 1), the run sends that FlowFile to
    failure (auto-terminated: exit 4 and one `failed:` line) and writes the others, and
    neither prints a traceback."""
    monkeypatch.chdir(tmp_path)  # the flow's directories are relative to it, as for the CLI
    (tmp_path / "in").mkdir()
    contents = {}
    for number in range(3):
        line = f"file {number} line\n".encode()
        contents[f"in-{number}.txt"] = (line * 10_000)[:100_000]
        (tmp_path / "in" / f"in-{number}.txt").write_bytes(contents[f"in-{number}.txt"])
    (tmp_path / "flow.py").write_text(FLOW)
    spec = importlib.util.spec_from_file_location("damage_flow", tmp_path / "flow.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    settings = Settings(sync=False, parallelism=1)
    repos = RepositorySet.open(tmp_path / ".flowcore", settings)
    controller = Controller(module.flow, DirectRunner(), repos, settings)
    controller.run_stage(controller.compiled.stages[0])  # GetFile only: the rest stays queued
    controller.close()
    repos.close()
    (claim,) = list((tmp_path / ".flowcore" / "content").rglob("*.claim"))
    raw = bytearray(claim.read_bytes())
    raw[150_000] ^= 0x01  # block 2: inside the second file only
    claim.write_bytes(bytes(raw))

    check = _flowcore(tmp_path, "check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Traceback" not in check.stdout + check.stderr
    report = " ".join(check.stdout.split())
    assert claim.name in report
    assert "1 of 5 blocks do not match" in report
    assert "3 queued FlowFiles reference it (queue" in report
    assert claim.read_bytes() == bytes(raw)  # check without --fix wrote nothing

    run = _flowcore(tmp_path, "run", "flow.py", "--runner", "direct")
    assert run.returncode == 4, run.stdout + run.stderr
    (failed,) = [line for line in run.stderr.splitlines() if line.startswith("failed:")]
    assert failed.startswith("failed: SplitText 'split': 1 FlowFile(s) to failure: ")
    assert claim.name in failed
    assert "Traceback" not in run.stdout + run.stderr
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    damaged = {name for name, data in contents.items() if name not in written}
    assert len(damaged) == 1
    assert all(written[name] == contents[name] for name in written)

    after = _flowcore(tmp_path, "check")
    assert after.returncode == 0, after.stdout + after.stderr
