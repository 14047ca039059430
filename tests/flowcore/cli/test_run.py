"""Tests for ``flowcore run``, each running the real command in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SECRET = "s3cr3t-Pa55w0rd-7f1c"

FLOW = textwrap.dedent(
    """
    from flowcore import Flow, Processor, PropertyDescriptor, Relationship
    from flowcore.parameters import Parameter, ParameterContext
    from processors import GetFile, PutFile, UpdateAttribute


    class Login(Processor):
        '''Replaces the content with the length of its sensitive Password, logging itself.'''

        PASSWORD = PropertyDescriptor("Password", sensitive=True, required=True)
        property_descriptors = (PASSWORD,)
        relationships = (Relationship("success"),)

        def on_trigger(self, context, session):
            flowfile = session.get()
            if flowfile is None:
                return
            password = context.get_property(self.PASSWORD)
            context.logger.warning("%r logs in with %r", self, password)
            flowfile = session.write(flowfile, str(len(password.value)))
            session.transfer(flowfile, "success")


    flow = Flow("secrets", parameters=ParameterContext("secrets", parameters=[
        Parameter("in", "nowhere"),
        Parameter("out", "nowhere"),
        Parameter("tag", "from-flow"),
        Parameter("db.password", sensitive=True, value_from_env="FLOWCORE_DB_PASSWORD"),
    ]))
    get = flow.add(GetFile(input_directory="#{in}"), name="get")
    login = flow.add(Login(password="#{db.password}"), name="login")
    tag = flow.add(UpdateAttribute(tag="#{tag}", filename="${filename}.#{tag}"), name="tag")
    put = flow.add(PutFile(directory="#{out}"), name="put")
    flow.connect(get, login)
    flow.connect(login, tag)
    flow.connect(tag, put)
    flow.auto_terminate(put, ["success", "failure"])
    """
)


def _flowcore(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the flowcore command of this checkout."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environment.pop("FLOWCORE_DB_PASSWORD", None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "flowcore", *args],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
        cwd=ROOT,
    )


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    """The flow above, with two input files."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("alpha")
    (tmp_path / "in" / "b.txt").write_text("beta")
    path = tmp_path / "secrets.py"
    path.write_text(FLOW)
    return path


def _files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.parametrize("runner", ["direct", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_sensitive_parameter_is_used_but_never_written(flow_file: Path, runner: str) -> None:
    """The secret reaches the processor; no repository file, output, log line or stream has it."""
    tmp = flow_file.parent
    done = _flowcore(
        "run", str(flow_file), "--runner", runner,
        "--parameter", f"in={tmp / 'in'}", "--parameter", f"out={tmp / 'out'}",
        "--parameter", "tag=from-cli",
        env={"FLOWCORE_DB_PASSWORD": SECRET},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outputs = {p.name: p.read_text() for p in (tmp / "out").iterdir()}
    assert outputs == {"a.txt.from-cli": str(len(SECRET)), "b.txt.from-cli": str(len(SECRET))}
    assert _files_holding(tmp, SECRET) == []
    assert SECRET not in done.stdout + done.stderr
    assert "Login(password='#{db.password}') logs in with PropertyValue(value='********'" in (
        done.stderr
    )


def test_a_parameters_file_in_nifis_shape(flow_file: Path) -> None:
    """--parameters takes NiFi's export (value_from_file for the secret); --parameter wins."""
    tmp = flow_file.parent
    (tmp / "pw").write_text(SECRET + "\n")
    export = {
        "name": "from-file",
        "parameters": [
            {"name": "in", "value": str(tmp / "in")},
            {"name": "tag", "value": "from-file", "description": "file wins over the flow"},
            {"name": "db.password", "sensitive": True, "value_from_file": str(tmp / "pw")},
        ],
        "inheritedParameterContexts": [
            {"name": "base", "parameters": [{"name": "out", "value": str(tmp / "out")}]}
        ],
    }
    (tmp / "params.json").write_text(json.dumps(export))
    done = _flowcore(
        "run", str(flow_file), "--runner", "direct", "--parameters", str(tmp / "params.json")
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp / "out").iterdir()) == ["a.txt.from-file", "b.txt.from-file"]
    assert _files_holding(tmp / "out", SECRET) == []
    assert _files_holding(tmp / ".flowcore", SECRET) == []


def test_parameter_env_names_the_variable(flow_file: Path) -> None:
    """--parameter-env takes a sensitive value from another environment variable."""
    tmp = flow_file.parent
    done = _flowcore(
        "run", str(flow_file), "--runner", "direct",
        "--parameter", f"in={tmp / 'in'}", "--parameter", f"out={tmp / 'out'}",
        "--parameter-env", "db.password=OTHER_SECRET",
        env={"OTHER_SECRET": "xyz"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {p.read_text() for p in (tmp / "out").iterdir()} == {"3"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--parameter", "db.password=hunter2"], "--parameter-env db.password=ENVVAR"),
        (["--parameter", "nonsense"], "must look like key=value"),
        (["--parameters", "missing.json"], "missing.json cannot be read"),
        ([], "FLOWCORE_DB_PASSWORD, which is not set"),
        (["--parameter-env", "db.password=X", "--parameter", "in=#{nope}"], "ignored"),
    ],
)
def test_parameter_mistakes_exit_2(flow_file: Path, args: list[str], expected: str) -> None:
    """Mistakes with parameters are errors with exit status 2 and no traceback."""
    done = _flowcore("run", str(flow_file), "--runner", "direct", *args, env={"X": "x"})
    if expected == "ignored":  # a value is never parsed for references
        assert "Input Directory" in done.stdout + done.stderr
        return
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert "hunter2" not in done.stderr


def test_an_undefined_parameter_names_processor_property_and_parameter(tmp_path: Path) -> None:
    """A reference to an undefined parameter fails validation: exit 2, every problem named."""
    path = tmp_path / "undefined.py"
    path.write_text(
        "from flowcore import Flow\nfrom processors import GenerateFlowFile, LogAttribute\n"
        "flow = Flow('u')\ngen = flow.add(GenerateFlowFile(batch_size='#{size}'), name='gen')\n"
        "log = flow.add(LogAttribute(), name='log')\nflow.connect(gen, log)\n"
    )
    done = _flowcore("run", str(path), "--runner", "direct")
    assert done.returncode == 2
    assert "GenerateFlowFile 'gen': 'Batch Size'" in done.stderr
    assert "parameter 'size', which is not defined" in done.stderr
    assert "Relationship 'success'" in done.stderr
    assert "Traceback" not in done.stderr
