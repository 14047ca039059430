"""Tests for the flowcore command line."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flowcore.cli import COMMANDS, load_flow, main
from tests.flowcore.cli.conftest import into_closed_pipe

FLOW = """
from flowcore import Flow
from processors import GetFile, PutFile, SplitText

flow = Flow("cli")
get = flow.add(GetFile(input_directory={inbox!r}, keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
put = flow.add(PutFile(directory={outbox!r}, conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, put, "splits", durable=True)
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])

if __name__ == "__main__":
    raise SystemExit("the CLI imports flow files without running their main block")
"""


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("one\ntwo\n")
    path = tmp_path / "flow.py"
    path.write_text(FLOW.format(inbox=str(tmp_path / "in"), outbox=str(tmp_path / "out")))
    return path


def test_run_then_status_provenance_and_check(flow_file: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """run writes next to the flow; status, provenance and check read that repository."""
    assert main(["run", str(flow_file), "--runner", "direct"]) == 0
    out = capsys.readouterr().out
    assert "cli on direct" in out
    assert "splits" in out
    repository = str(flow_file.parent / ".flowcore")
    assert main(["status", "--repository", repository]) == 0
    assert "FlowFiles per relationship" in capsys.readouterr().out
    assert main(["provenance", "search", "--type", "RECEIVE", "--repository", repository]) == 0
    assert "1 event(s)" in capsys.readouterr().out
    assert main(["provenance", "show", "0", "--repository", repository]) == 0
    assert "event_type" in capsys.readouterr().out
    assert main(["check", "--repository", repository]) == 0
    assert "0 not fixed" in capsys.readouterr().out


def test_lineage_and_replay(flow_file: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A split's lineage reaches its parent; replaying its SEND puts it back before PutFile."""
    main(["run", str(flow_file), "--runner", "direct"])
    repository = str(flow_file.parent / ".flowcore")
    capsys.readouterr()
    from repositories.repository_set import RepositorySet

    repos = RepositorySet.open(repository)
    try:
        send = repos.provenance.search(event_type="SEND")[0]
    finally:
        repos.close()
    assert main(["provenance", "lineage", send.flowfile_uuid, "--repository", repository]) == 0
    assert "FORK event" in capsys.readouterr().out
    code = main(["provenance", "replay", str(send.event_id), str(flow_file)])
    assert code == 0
    assert "replayed event" in capsys.readouterr().out
    (flow_file.parent / "out" / "a.txt").unlink(missing_ok=True)
    assert main(["run", str(flow_file), "--runner", "direct"]) == 0
    assert "put" in capsys.readouterr().out


def test_explain_and_processors(flow_file: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """explain prints the stages; processors lists and describes processors."""
    assert main(["explain", str(flow_file)]) == 0
    out = capsys.readouterr().out
    assert "stage-1" in out
    assert "durable: marked durable=True" in out
    assert main(["processors"]) == 0
    assert "MergeContent" in capsys.readouterr().out
    assert main(["processors", "SplitText"]) == 0
    assert "Line Split Count" in capsys.readouterr().out


def test_user_mistakes_are_one_line_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A missing file, an invalid flow or an unknown processor exit with 2 and a message."""
    assert main(["run", str(tmp_path / "missing.py")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from flowcore import Flow\nfrom processors import SplitText\n"
        "flow = Flow('bad')\nflow.add(SplitText(), name='lonely')\n"
    )
    assert main(["run", str(bad), "--runner", "direct"]) == 2
    err = capsys.readouterr().err
    assert "lonely" in err
    assert "Traceback" not in err
    assert main(["processors", "SplitTxt"]) == 2
    assert "SplitText" in capsys.readouterr().err
    assert main(["status", "--repository", str(tmp_path / "nothing")]) == 2


def test_run_takes_engine_settings_by_name(flow_file: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--setting NAME=VALUE sets any engine setting; a misspelt one is refused before running."""
    code = main(
        ["run", str(flow_file), "--runner", "direct", "--setting", "provenance_max_storage_sze=1 B"]
    )
    assert code == 2
    assert "did you mean 'provenance_max_storage_size'" in capsys.readouterr().err
    assert not (flow_file.parent / "out").exists()
    settings = ["--setting", "sync=false", "--setting", "provenance_indexed_attributes=filename"]
    assert main(["run", str(flow_file), "--runner", "direct", *settings]) == 0
    assert [p.read_text() for p in (flow_file.parent / "out").iterdir()] == ["two"]  # replaced


def test_each_command_is_the_one_its_module_adds() -> None:
    """COMMANDS names each command as its module adds it: a command line naming one builds
    that module's parser alone, so another name there would be refused as an invalid choice."""
    for name, module in COMMANDS.items():
        commands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"flowcore.cli.{module}").add_command(commands)
        assert list(commands.choices) == [name]


#: What a `flowcore run` of a Python flow has no use for: the other commands, NiFi's import and
#: export, the pictures (Graphviz) and packaging. Every start of the command would pay for them.
NOT_FOR_A_RUN = (
    "flowcore.cli.convert",
    "flowcore.cli.explain",
    "flowcore.cli.serve",
    "flowcore.cli.ui",
    "flowcore.nifi.exporting",
    "flowcore.nifi.importing",
    "flowcore.pictures.flow_picture",
    "graphviz",
    "packaging",
)


def test_each_command_starts_with_only_what_it_uses(flow_file: Path) -> None:
    """`flowcore status` starts without the engine (builder, compiler, driver), and a run of a
    Python flow without the other commands, NiFi's import and export or the pictures."""
    code = textwrap.dedent(
        f"""
        import contextlib, io, sys
        from flowcore.cli import main

        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            main(["status", "--repository", sys.argv[2]])
        engine = ("flowcore.builder", "flowcore.compiler.stages")
        print(sorted(m for m in engine if m in sys.modules))
        with contextlib.redirect_stdout(quiet):
            status = main(["run", sys.argv[1], "--runner", "direct", "--repository", sys.argv[2]])
        print(status, sorted(m for m in {NOT_FOR_A_RUN!r} if m in sys.modules))
        """
    )
    repository = str(flow_file.parent / "repo")
    done = subprocess.run(
        [sys.executable, "-c", code, str(flow_file), repository],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines() == ["[]", "0 []"], done.stderr


def test_console_script_reports_without_traceback(tmp_path: Path) -> None:
    """The installed `flowcore` command prints a clear error, never a traceback, for user errors."""
    script = Path(sys.executable).parent / "flowcore"
    done = subprocess.run(
        [str(script), "explain", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_load_flow_needs_exactly_one_flow(tmp_path: Path) -> None:
    """A file with two flows and none called `flow` is refused with the fix."""
    path = tmp_path / "two.py"
    path.write_text(
        textwrap.dedent(
            """
            from flowcore import Flow
            a = Flow("a")
            b = Flow("b")
            """
        )
    )
    with pytest.raises(Exception, match="named flow"):
        load_flow(path)


def test_dataset_show_cat_mergeability_and_compact(tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    """`flowcore dataset` lists chunks, prints the bytes, changes mergeability and compacts;
    a path that is no dataset is one clear error."""
    from flowcore.datasets import Chunk, Dataset, Manifest
    from flowcore.datasets.store import write_chunk

    dataset = Dataset(tmp_path / "ds")
    chunks = []
    for name in ("a", "b", "c"):
        write_chunk(dataset.chunk_path(name), [name.encode() * 3])
        chunks.append(Chunk(name, 3, 1, 0))
    dataset.stage(Manifest(1, tuple(chunks), demarcator=b","))
    dataset.publish(1)
    assert main(["dataset", "show", str(dataset.path)]) == 0
    assert "3 chunk(s), 9 bytes" in capfd.readouterr().out
    assert main(["dataset", "mergeability", str(dataset.path), "c", "--set", "never"]) == 0
    assert main(["dataset", "compact", str(dataset.path)]) == 0
    assert "chunks 3 -> 2" in capfd.readouterr().out
    assert main(["dataset", "cat", str(dataset.path)]) == 0
    assert capfd.readouterr().out == "aaa,bbb,ccc"
    assert main(["dataset", "show", str(tmp_path)]) == 2
    assert "is not a dataset" in capfd.readouterr().err


STUCK_FLOW = """
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile


class Refuse(Processor):
    relationships = (Relationship("success", "never"),)

    def on_trigger(self, context, session):
        if session.get() is not None:
            raise RuntimeError("refused on purpose")


flow = Flow("stuck")
gen = flow.add(GenerateFlowFile(batch_size=2, unique_flowfiles=True), name="gen")
refuse = flow.add(Refuse(), name="refuse")
flow.connect(gen, refuse, durable=True)
flow.auto_terminate(refuse, "success")
"""


def test_a_batch_run_that_cannot_finish_says_so_and_exits_3(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """FlowFiles left queued after a batch run: one 'stuck:' line per queue with the reason,
    exit status 3 (not 0, not 2); with --json too."""
    flow = tmp_path / "stuck.py"
    flow.write_text(STUCK_FLOW)
    assert main(["run", str(flow), "--runner", "direct"]) == 3
    err = capsys.readouterr().err
    stuck = [line for line in err.splitlines() if line.startswith("stuck:")]
    assert len(stuck) == 1
    assert "2 FlowFile(s)" in stuck[0]
    assert "processor errors" in stuck[0]
    assert main(["run", str(flow), "--runner", "direct", "--json"]) == 3


@pytest.mark.parametrize(
    "args",
    [
        ["processors"],
        ["processors", "RouteOnAttribute"],
        ["processors", "GetFile"],
    ],
)
def test_a_closed_stdout_stops_any_command_quietly(args: list[str]) -> None:
    """Any command whose stdout reader has gone (`| head`) exits 141 with nothing on stderr."""
    err, status = into_closed_pipe(*args)
    assert err == ""
    assert status == 141


def test_a_closed_stdout_stops_explain_quietly(flow_file: Path) -> None:
    """explain of a flow file into a pipe whose reader has gone: no message, status 141."""
    assert into_closed_pipe("explain", str(flow_file)) == ("", 141)
