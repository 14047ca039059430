"""Tests for ``flowcore run`` (and ``explain``), each running the real command in a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.flowcore.cli.conftest import Flowcore, run_flowcore

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

        def on_scheduled(self, context):
            import os
            if os.environ.get("FLOWCORE_FAIL") == "schedule":
                secret = context.get_property(self.PASSWORD).value
                raise ConnectionError(f"login to db://admin:{secret}@db refused")

        def on_trigger(self, context, session):
            import os
            flowfile = session.get()
            if flowfile is None:
                return
            password = context.get_property(self.PASSWORD)
            if os.environ.get("FLOWCORE_FAIL") == "trigger":
                raise ValueError(f"wrong password {password.value}")
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
    """Run the flowcore command of this checkout, without the secret's variable unless given."""
    return run_flowcore(*args, cwd=ROOT, env=env, unset=("FLOWCORE_DB_PASSWORD",))


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


@pytest.mark.parametrize("fail", ["schedule", "trigger"])
def test_a_processor_error_holding_the_secret_is_redacted(flow_file: Path, fail: str) -> None:
    """A processor whose on_scheduled or on_trigger raises with the secret in its message: the
    bulletins, the log and the streams show ******** instead."""
    tmp = flow_file.parent
    done = _flowcore(
        "run", str(flow_file), "--runner", "direct",
        "--parameter", f"in={tmp / 'in'}", "--parameter", f"out={tmp / 'out'}",
        env={"FLOWCORE_DB_PASSWORD": SECRET, "FLOWCORE_FAIL": fail},
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "********" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert _files_holding(tmp, SECRET) == []


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


MISSING_INPUT_FLOW = """
from flowcore import Flow
from processors import FileSplitter, GetFile, PutFile

flow = Flow("missing-input")
get = flow.add(GetFile(input_directory="in"), name="get")
blocks = flow.add(FileSplitter(input_directory="also-missing"), name="blocks")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(get, put)
flow.connect(blocks, put, "blocks")
flow.auto_terminate(blocks, ["files", "failure"])
flow.auto_terminate(put, "success")
"""


def test_a_missing_input_directory_is_refused_before_anything_runs(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """run and explain refuse a source whose directory is missing, naming the absolute path and
    the working directory it was resolved from, with the flow's other problems; exit 2."""
    flow = tmp_path / "flow.py"
    flow.write_text(MISSING_INPUT_FLOW)
    work = tmp_path / "elsewhere"
    work.mkdir()
    for command in (["run", str(flow), "--runner", "direct"], ["explain", str(flow)]):
        done = flowcore_cmd(*command, cwd=work)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "(3 problems)" in done.stderr
        assert (
            f"GetFile 'get': 'Input Directory' validated against 'in' is invalid because "
            f"Directory {work / 'in'} (relative to the working directory {work}) does not exist"
        ) in done.stderr
        assert f"Directory {work / 'also-missing'} (relative to" in done.stderr
        assert "Relationship 'failure' is not connected" in done.stderr
        assert not (tmp_path / ".flowcore").exists()
    (work / "in").mkdir()
    (work / "also-missing").mkdir()
    flow.write_text(MISSING_INPUT_FLOW.replace('"success"', '["success", "failure"]'))
    done = flowcore_cmd("run", str(flow), "--runner", "direct", cwd=work)
    assert done.returncode == 0, done.stderr


UNPICKLABLE_FLOW = """
import socket

from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile


class MyParser(Processor):
    relationships = (Relationship("success", "parsed"),)

    def __init__(self, **properties):
        super().__init__(**properties)
        self.conn = socket.socket()

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")


flow = Flow("unpicklable")
gen = flow.add(GenerateFlowFile(), name="gen")
parse = flow.add(MyParser(), name="parse")
flow.connect(gen, parse)
flow.auto_terminate(parse, "success")
"""


def test_a_processor_that_cannot_be_pickled_is_named_before_anything_runs(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """explain and run name the processor and the attribute that cannot travel to executors,
    with the fix, instead of a long pickling traceback; exit 2."""
    flow = tmp_path / "flow.py"
    flow.write_text(UNPICKLABLE_FLOW)
    for command in (["explain", str(flow)], ["run", str(flow), "--runner", "direct"]):
        done = flowcore_cmd(*command)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert (
            "MyParser 'parse': attribute 'conn' holds a socket.socket, which cannot be pickled "
            "to Spark executors"
        ) in done.stderr
        assert "open it in on_scheduled instead" in done.stderr


ON_SCHEDULED_FLOW = """
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile, GetFile, UpdateAttribute


class Connect(Processor):
    relationships = (Relationship("success", "sent"),)

    def on_scheduled(self, context):
        raise ConnectionError("database at db:5432 refused the connection")

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")


class Unmounted(GetFile):
    def on_scheduled(self, context):
        raise PermissionError("the share is not mounted")


flow = Flow("on-scheduled")
gen = flow.add(GenerateFlowFile(batch_size=2, unique_flowfiles=True), name="gen")
connect = flow.add(Connect(), name="connect")
tag = flow.add(UpdateAttribute(), name="tag")
get = flow.add(Unmounted(input_directory={inbox!r}), name="get")
flow.connect(gen, connect)
flow.connect(gen, tag)
flow.connect(get, tag)
flow.auto_terminate(connect, "success")
flow.auto_terminate(tag, "success")
"""


def test_an_on_scheduled_failure_is_a_bulletin_and_a_stuck_line_not_a_traceback(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """A processor and a source whose on_scheduled raises: one line each on stderr (the
    bulletin as logged, then a `stuck:` line naming the failure), the rest of the flow runs,
    exit status 3."""
    (tmp_path / "in").mkdir()
    flow = tmp_path / "flow.py"
    flow.write_text(ON_SCHEDULED_FLOW.format(inbox=str(tmp_path / "in")))
    done = flowcore_cmd("run", str(flow), "--runner", "direct")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    stuck = sorted(line for line in done.stderr.splitlines() if line.startswith("stuck:"))
    assert stuck == [
        "stuck: 2 FlowFile(s), 0 bytes in connect (returned after errors): connect could not be "
        "scheduled: on_scheduled raised ConnectionError: database at db:5432 refused the "
        "connection (see the bulletins); fix what on_scheduled needs, a later run schedules it "
        "again",
        "stuck: get never ran: it could not be scheduled: on_scheduled raised PermissionError: "
        "the share is not mounted (see the bulletins); fix what on_scheduled needs, a later run "
        "schedules it again",
    ]
    assert len(done.stderr.strip().splitlines()) == 4  # two bulletins logged, two stuck lines
    assert "│ tag       │ success      │         2 │" in done.stdout


TINY_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, PutFile

flow = Flow("tiny")
gen = flow.add(GenerateFlowFile(custom_text="hi"), name="gen")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(gen, put)
flow.auto_terminate(put, ["success", "failure"])
"""


def _run_tiny(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "flow.py").write_text(TINY_FLOW)
    return subprocess.run(
        [sys.executable, "-m", "flowcore", "run", "flow.py", *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("master", ["foo://x", "local[x]", "spark://host-without-port"])
def test_a_bad_master_url_is_one_line_naming_it_and_the_forms(tmp_path: Path, master: str) -> None:
    """A master Spark would refuse ends in one line, exit 2, before any JVM starts."""
    done = _run_tiny(tmp_path, "--master", master)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert master in lines[0]
    assert "local[*]" in lines[0]
    assert "spark://HOST:7077" in lines[0]
    assert not (tmp_path / "out").exists()


def test_an_unreachable_master_is_one_line_within_the_connect_timeout(tmp_path: Path) -> None:
    """Nothing listens on the master's port: one line naming it and the setting, exit 2, at
    once rather than after Spark's minute of retries."""
    started = time.monotonic()
    done = _run_tiny(
        tmp_path, "--master", "spark://127.0.0.1:1", "--setting", "spark_connect_timeout=2 sec"
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "cannot reach the Spark master spark://127.0.0.1:1" in lines[0]
    assert "spark_connect_timeout" in lines[0]
    assert time.monotonic() - started < 30


def test_a_bad_connect_timeout_is_refused_by_name(tmp_path: Path) -> None:
    """``--setting spark_connect_timeout=soon`` is refused in one line naming the setting."""
    done = _run_tiny(tmp_path, "--setting", "spark_connect_timeout=soon")
    assert done.returncode == 2
    assert "spark_connect_timeout" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_a_master_that_never_answers_ends_after_the_connect_timeout(tmp_path: Path) -> None:
    """Something accepts connections on the master's port but is no Spark master: the run
    gives up after spark_connect_timeout with one line of its own (not Spark's minute of
    retries, then a trace), exit 2."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        held: list[socket.socket] = []

        def accept() -> None:
            with contextlib.suppress(OSError):  # the server closes at the end of the test
                held.extend(server.accept()[0] for _ in range(8))

        accepting = threading.Thread(target=accept, daemon=True)
        accepting.start()
        port = server.getsockname()[1]
        started = time.monotonic()
        done = _run_tiny(
            tmp_path,
            "--master",
            f"spark://127.0.0.1:{port}",
            "--setting",
            "spark_connect_timeout=3 sec",
        )
        elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert f"spark://127.0.0.1:{port} accepted a connection but did not start" in last
    assert "spark_connect_timeout" in last
    assert "Traceback" not in done.stderr
    assert elapsed < 45  # Spark alone retries for over a minute


MARKUP_FLOW = """
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile, UpdateAttribute


class Picky(Processor):
    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):
        if session.get() is not None:
            raise ValueError("no key [/data] in record")


flow = Flow("markup")
gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
tag = flow.add(UpdateAttribute(odd="[/oops]"), name="tag")
picky = flow.add(Picky(), name="picky")
flow.connect(gen, tag)
flow.connect(tag, picky)
flow.auto_terminate(picky, "success")
"""


def test_bracketed_text_in_messages_and_attributes_prints_as_it_is(tmp_path: Path) -> None:
    """Text like [/data] in a bulletin or an attribute is printed, not read as console markup
    (which crashed the summary and provenance show)."""
    (tmp_path / "flow.py").write_text(MARKUP_FLOW)
    done = run_flowcore("run", "flow.py", "--runner", "direct", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "no key [/data] in record" in done.stdout
    shown = run_flowcore("provenance", "show", "1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "'odd': '[/oops]'" in shown.stdout


LONG_NAMED_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile

flow = Flow("a-flow-whose-name-alone-takes-most-of-the-eighty-columns-a-pipe-is-given")
gen = flow.add(GenerateFlowFile(custom_text="hi", batch_size=2), name="gen")
flow.auto_terminate(gen, "success")
"""


def test_the_summary_line_is_one_line_in_a_pipe(tmp_path: Path) -> None:
    """In a pipe (rich assumes 80 columns) the summary is not hard-wrapped: one grep finds it."""
    (tmp_path / "flow.py").write_text(LONG_NAMED_FLOW)
    done = run_flowcore("run", "flow.py", "--runner", "direct", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("a-flow-whose-name-alone-takes-most-of-the-eighty-columns"), first
    assert "micro-batch(es)" in first, done.stdout


DISABLED_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, PutFile, UpdateAttribute

flow = Flow("half-off")
gen = flow.add(GenerateFlowFile(custom_text="hi", batch_size=2), name="gen")
tag = flow.add(UpdateAttribute(kind="greeting"), name="tag")
put = flow.add(PutFile(), name="put", disabled=True)
flow.connect(gen, tag)
flow.connect(tag, put)
"""


def test_flowfiles_left_for_a_disabled_processor_are_a_note_not_a_failure(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """A batch run whose only leftovers wait for a disabled processor exits 0, with one
    `disabled:` line saying how many wait for which processor; explain marks it."""
    flow = tmp_path / "flow.py"
    flow.write_text(DISABLED_FLOW)
    done = flowcore_cmd(
        "run", str(flow), "--runner", "direct", "--repository", str(tmp_path / "repo")
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "disabled: 2 FlowFile(s), 4 bytes wait for disabled processor 'put'; enable it to "
        "process them"
    ]
    explained = flowcore_cmd("explain", str(flow))
    assert "PutFile 'put' DISABLED (never runs; its input waits queued)" in explained.stdout
    assert "durable: feeds a disabled processor" in explained.stdout


DEAD_END_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("held")
gen = flow.add(GenerateFlowFile(custom_text="hi", batch_size=2), name="gen")
tag = flow.add(UpdateAttribute(kind="greeting"), name="tag")
flow.connect(gen, tag)
flow.connect(tag, flow.funnel("hold"))
"""


def test_flowfiles_before_a_funnel_with_no_way_out_wait_and_the_run_exits_0(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """A batch run whose leftovers wait before a funnel with no outgoing connection exits 0
    with one `waiting:` line per funnel; explain notes the funnel, status lists its queue."""
    flow = tmp_path / "flow.py"
    flow.write_text(DEAD_END_FLOW)
    repository = tmp_path / "repo"
    done = flowcore_cmd("run", str(flow), "--runner", "direct", "--repository", str(repository))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "waiting: 2 FlowFile(s), 4 bytes wait before funnel 'hold', which has no outgoing "
        "connection; connect it to process them"
    ]
    assert "still queued: tag -[success]-> hold: 2 FlowFiles (4 bytes)" in done.stdout
    explained = flowcore_cmd("explain", str(flow))
    assert "Funnel 'hold' has no outgoing connection (never runs; its input waits queued)" in (
        explained.stdout
    )
    assert "durable: feeds a funnel with no outgoing connection" in explained.stdout
    status = flowcore_cmd("status", "--json", "--repository", str(repository))
    queues = {q["label"]: q["flowfiles"] for q in json.loads(status.stdout)["queues"].values()}
    assert queues["tag -[success]-> hold"] == 2


FAILING_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, PutFile, UpdateAttribute

flow = Flow("fails")
put = flow.add(PutFile(directory={directory!r}), name="put", penalty_duration=0)
for name, count in {batches!r}.items():
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=count), name="gen-" + name)
    tag = flow.add(UpdateAttribute(sub=name), name="tag-" + name)
    flow.connect(gen, tag)
    flow.connect(tag, put)
flow.auto_terminate(put, "success")
if {connected!r}:
    mark = flow.add(UpdateAttribute(handled="yes"), name="mark")
    flow.connect(put, mark, "failure")
    flow.auto_terminate(mark, "success")
else:
    flow.auto_terminate(put, "failure")
"""


def _failing_flow(
    tmp_path: Path, batches: dict[str, int], *, connected: bool = False
) -> tuple[Path, Path]:
    """A flow whose PutFile cannot write (its directory is under a file): the flow file and
    that file. Each batch's FlowFiles go to a directory of their own, one reason each."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    flow = tmp_path / "flow.py"
    flow.write_text(
        FAILING_FLOW.format(
            directory=str(blocker) + "/${sub}", batches=batches, connected=connected
        )
    )
    return flow, blocker


@pytest.mark.parametrize("runner", ["direct", pytest.param("spark", marks=pytest.mark.spark)])
def test_flowfiles_dropped_at_failure_are_one_line_and_exit_status_4(
    tmp_path: Path, flowcore_cmd: Flowcore, runner: str
) -> None:
    """1,452 FlowFiles PutFile cannot write, failure auto-terminated: not 1,452 stderr lines
    but the first as logged and one `failed:` line with the count and reason; the summary
    says so and the status is 4 (the routing is NiFi's: they were dropped)."""
    flow, blocker = _failing_flow(tmp_path, {"a": 1452})
    done = flowcore_cmd(
        "run", str(flow), "--runner", runner, "--repository", str(tmp_path / "repo")
    )
    assert done.returncode == 4, done.stderr
    lines = done.stderr.strip().splitlines()
    reason = (
        f"{blocker} is a file, not a directory, so {blocker}/a cannot be made; routing to failure"
    )
    assert [line for line in lines if line.startswith("failed:")] == [
        f"failed: PutFile 'put': 1452 FlowFile(s) to failure: Cannot write FlowFile[...]: {reason}"
    ]
    logged = [line for line in lines if line.startswith("Cannot write FlowFile[id=")]
    assert 1 <= len(logged) <= 2, lines  # once per process that ran it (Spark: per worker)
    assert all(line.endswith(reason) for line in logged)
    others = [line for line in lines if line not in logged and not line.startswith("failed:")]
    assert all(line.startswith("WARNING: Using incubator modules") for line in others), lines
    assert "failed PutFile 'put': 1,452 FlowFiles (1,452 bytes) dropped at its" in done.stdout
    assert "(1,452 like this)" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_each_distinct_reason_has_its_own_line_and_count(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """Two ways to fail (two unwritable directories) give two `failed:` lines whose counts
    add up to the FlowFiles dropped; --json carries the same figures."""
    flow, blocker = _failing_flow(tmp_path, {"a": 1000, "b": 452})
    done = flowcore_cmd(
        "run", str(flow), "--runner", "direct", "--repository", str(tmp_path / "repo"), "--json"
    )
    assert done.returncode == 4, done.stderr
    failed = sorted(line for line in done.stderr.splitlines() if line.startswith("failed:"))
    assert failed == [
        f"failed: PutFile 'put': {count} FlowFile(s) to failure: Cannot write FlowFile[...]: "
        f"{blocker} is a file, not a directory, so {blocker}/{sub} cannot be made; "
        "routing to failure"
        for sub, count in (("a", 1000), ("b", 452))
    ]
    assert len(done.stderr.strip().splitlines()) == 4  # and the first of each, as logged
    report = json.loads(done.stdout)["failed"]["put"]
    assert (report["processor_type"], report["count"]) == ("PutFile", 1452)
    assert sorted(r["count"] for r in report["reasons"]) == [452, 1000]


def test_a_failure_connected_to_another_processor_is_handled_and_exits_0(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """The same failures with `failure` connected onward: the flow handles them, so no
    `failed:` line and status 0 (the processor's first error is still logged once)."""
    flow, _ = _failing_flow(tmp_path, {"a": 1200}, connected=True)
    done = flowcore_cmd(
        "run", str(flow), "--runner", "direct", "--repository", str(tmp_path / "repo")
    )
    assert done.returncode == 0, done.stderr
    assert "failed:" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "│ mark      │ success      │     1,200 │" in done.stdout


def test_a_continuous_run_reports_failures_and_still_exits_0(tmp_path: Path) -> None:
    """A continuous run stopped by SIGTERM reports what went to failure and exits 0, as it
    does without failures."""
    flow, _ = _failing_flow(tmp_path, {"a": 300})
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    command = [sys.executable, "-m", "flowcore", "run", str(flow), "--runner", "direct"]
    command += ["--continuous", "--repository", str(tmp_path / "repo")]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    ) as running:
        assert running.stderr is not None
        first = running.stderr.readline()  # the first failure, as logged: it runs
        running.send_signal(signal.SIGTERM)
        out, err = running.communicate(timeout=120)
    assert running.returncode == 0, first + err
    assert first.startswith("Cannot write FlowFile[id=")
    failed = [line for line in err.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1
    assert re.fullmatch(r"failed: PutFile 'put': \d+ FlowFile\(s\) to failure: .*", failed[0])
    assert "failed PutFile 'put'" in out


STUCK_AND_FAILING_FLOW = """
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile, PutFile


class Boom(Processor):
    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):
        if session.get() is not None:
            raise RuntimeError("boom")


flow = Flow("both")
gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=3), name="gen")
put = flow.add(PutFile(directory={directory!r}), name="put")
boom = flow.add(Boom(), name="boom")
flow.connect(gen, put)
flow.connect(gen, boom)
flow.auto_terminate(put, ["success", "failure"])
flow.auto_terminate(boom, "success")
"""


def test_unfinished_work_wins_over_failures_for_the_exit_status(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """A run that both left FlowFiles stuck and dropped some at failure exits 3 (a later run
    may finish the stuck ones) and still gives both the `stuck:` and the `failed:` line."""
    (tmp_path / "file").write_text("not a directory")
    flow = tmp_path / "flow.py"
    flow.write_text(STUCK_AND_FAILING_FLOW.format(directory=str(tmp_path / "file" / "sub")))
    done = flowcore_cmd(
        "run", str(flow), "--runner", "direct", "--repository", str(tmp_path / "repo")
    )
    assert done.returncode == 3, done.stderr
    assert [line[:25] for line in done.stderr.splitlines() if line.startswith("stuck:")] == [
        "stuck: 3 FlowFile(s), 3 b"
    ]
    failed = [line for line in done.stderr.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1
    assert failed[0].startswith("failed: PutFile 'put': 3 FlowFile(s) to failure: Cannot write")


RAISING_FLOW = """
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile


class Raises(Processor):
    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is not None:
            raise ValueError(f"cannot parse {flowfile.attributes['uuid']}")


flow = Flow("raising")
gen = flow.add(GenerateFlowFile(batch_size=300), name="gen")
parse = flow.add(Raises(), name="parse")
flow.connect(gen, parse)
flow.auto_terminate(parse, "success")
"""


def test_a_processor_raising_on_every_flowfile_writes_one_traceback(
    tmp_path: Path, flowcore_cmd: Flowcore
) -> None:
    """300 FlowFiles that each raise: one traceback on stderr (the bulletins keep every one),
    and the run ends stuck (status 3) with them queued."""
    flow = tmp_path / "flow.py"
    flow.write_text(RAISING_FLOW)
    done = flowcore_cmd(
        "run", str(flow), "--runner", "direct", "--repository", str(tmp_path / "repo")
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("Traceback") == 1, done.stderr
    assert done.stderr.count("Raises 'parse' failed: ValueError: cannot parse") == 1
    assert "300 FlowFiles" in done.stderr + done.stdout
