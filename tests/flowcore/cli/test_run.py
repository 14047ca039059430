"""Tests for ``flowcore run`` (and ``explain``), run as the real command in a subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.flowcore.cli.conftest import Flowcore

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
