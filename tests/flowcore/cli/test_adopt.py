"""Tests for ``flowcore adopt``, and ``flowcore run`` refusing another flow's repository."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.flowcore.cli.conftest import run_flowcore

FLOW = textwrap.dedent(
    """
    from flowcore import Flow
    from processors import GetFile, PutFile

    flow = Flow({name!r})
    get = flow.add(GetFile(input_directory="in", keep_source_file=True), name="get")
    put = flow.add(PutFile(directory={out!r}), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    """
)


def _write(tmp_path: Path, file: str, name: str, out: str) -> Path:
    path = tmp_path / file
    path.write_text(FLOW.format(name=name, out=out))
    return path


def test_run_refuses_another_flows_repository_in_one_line_and_adopt_hands_it_over(
    tmp_path: Path,
) -> None:
    """Exit 2 and one line naming both flows; after adopt, B runs and keeps A's GetFile state."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a")
    _write(tmp_path, "a.py", "flow-a", "out-a")
    _write(tmp_path, "b.py", "flow-b", "out-b")
    common = ("--runner", "direct", "--repository", "repo")
    first = run_flowcore("run", "a.py", *common, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    refused = run_flowcore("run", "b.py", *common, cwd=tmp_path)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert "belongs to flow 'flow-a', not 'flow-b'" in lines[0]
    assert "flowcore adopt" in lines[0]
    assert not (tmp_path / "out-b").exists()
    adopted = run_flowcore("adopt", "b.py", "--repository", "repo", cwd=tmp_path)
    assert adopted.returncode == 0, adopted.stderr
    assert "now belongs to flow 'flow-b' (it had flow 'flow-a')" in adopted.stdout
    second = run_flowcore("run", "b.py", *common, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert not (tmp_path / "out-b").exists()  # 'get' kept its state: a.txt was read already
