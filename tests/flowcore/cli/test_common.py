"""Tests for what the commands share: loading a flow file, and its errors as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.cli import main
from tests.flowcore.cli.conftest import Flowcore


def one_error_line(stderr: str) -> str:
    """The only line of *stderr*, which must be an ``error:`` line and no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from flowcore import Flow\nflow = Flow('x'\n", ":2: SyntaxError: '(' was never closed"),
        ("import flowcore\n  flow = 1\n", ":2: IndentationError: unexpected indent"),
        (
            "from flowcore import Flow\nflow = Flow('x')\nprint(undefined)\n",
            ":3: NameError: name 'undefined' is not defined",
        ),
        (
            "from flowcore import Flow\nimport no_such_module_here\n",
            ":2: ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        ("x = 1\n\n\nraise ValueError('bad\\nvalue')\n", ":4: ValueError: bad value"),
    ],
)
def test_a_broken_flow_file_is_one_line_naming_file_and_line(
    tmp_path: Path, flowcore_cmd: Flowcore, source: str, expected: str
) -> None:
    """A flow file that does not compile or raises while it runs: one line with file:line, the
    exception and the fix, exit status 2, for run and explain alike."""
    path = tmp_path / "broken_flow.py"
    path.write_text(source)
    for command in (["explain", str(path)], ["run", str(path), "--runner", "direct"]):
        done = flowcore_cmd(*command)
        assert done.returncode == 2
        line = one_error_line(done.stderr)
        assert f"{path}{expected}" in line
        assert "fix that line" in line or "install it" in line
        assert not (tmp_path / ".flowcore").exists()


def test_an_error_in_a_module_beside_the_flow_names_the_flow_line(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """An exception raised in a helper the flow imports names the flow file's line that led to it;
    a syntax error in the helper names the helper's own line."""
    (tmp_path / "helper.py").write_text("def build():\n    return 1 / 0\n")
    path = tmp_path / "flow.py"
    path.write_text("import helper\n\nflow = helper.build()\n")
    done = flowcore_cmd("explain", str(path))
    assert done.returncode == 2
    assert f"{path}:3: ZeroDivisionError: division by zero" in one_error_line(done.stderr)
    (tmp_path / "helper.py").write_text("def build(:\n    pass\n")
    done = flowcore_cmd("explain", str(path))
    assert done.returncode == 2
    assert f"{tmp_path / 'helper.py'}:1: SyntaxError" in one_error_line(done.stderr)


def test_a_flowcore_error_while_the_flow_is_built_keeps_its_message(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """A flowcore error raised by the flow file's own code is prefixed with where it was raised."""
    path = tmp_path / "flow.py"
    path.write_text(
        "from flowcore import Flow\nfrom processors import SplitText\n"
        "flow = Flow('x')\nflow.add(SplitText(), name='a')\nflow.add(SplitText(), name='a')\n"
    )
    done = flowcore_cmd("explain", str(path))
    assert done.returncode == 2
    line = one_error_line(done.stderr)
    assert line.startswith(f"error: {path}:5: ")
    assert "'a'" in line


def test_json_flow_files_are_nifi_flow_definitions() -> None:
    """.json and .json.gz name NiFi flows, read with Flow.from_nifi; .py stays a Python flow."""
    from flowcore.cli._common import is_nifi_flow, load_flow

    assert is_nifi_flow("flow.json")
    assert is_nifi_flow("conf/FLOW.JSON.GZ")
    assert not is_nifi_flow("flow.py")
    samples = Path(__file__).resolve().parents[1] / "nifi" / "samples"
    assert load_flow(samples / "download-1x.json").name == "Plain lines"


def test_a_malformed_nifi_flow_is_one_error_line(tmp_path: Path, flowcore_cmd: Flowcore) -> None:
    """A .json that is not a NiFi flow ends in one line naming it, exit 2."""
    (tmp_path / "flow.json").write_text('{"hello": 1}')
    done = flowcore_cmd("run", str(tmp_path / "flow.json"))
    assert done.returncode == 2
    assert "is not a NiFi flow definition: it has hello" in one_error_line(done.stderr)


SHORT_SECRET_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile
from processors.sql.dbcp import DBCPConnectionPool

flow = Flow("short")
flow.add_service(DBCPConnectionPool("dbcp", **{{
    "Database Connection URL": "jdbc:sqlite:/tmp/x.db", "Password": {password!r}
}}))
gen = flow.add(GenerateFlowFile(), name="gen")
flow.auto_terminate(gen, "success")
"""


def test_a_secret_too_short_to_mask_is_a_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """explain (and run, which shares print_warnings) says so on stderr, once, not only in a log."""

    path = tmp_path / "flow.py"
    path.write_text(SHORT_SECRET_FLOW.format(password="xy"))
    assert main(["explain", str(path)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "too short" in line]
    assert warnings == [
        "warning: DBCPConnectionPool service 'dbcp': the value of 'Password' is too short to be "
        "masked in logs; use a secret of at least 4 characters"
    ]
    path.write_text(SHORT_SECRET_FLOW.format(password="long-enough"))
    assert main(["explain", str(path)]) == 0
    assert "too short" not in capsys.readouterr().err
