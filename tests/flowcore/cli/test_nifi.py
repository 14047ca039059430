"""Tests for ``flowcore run`` / ``explain`` on NiFi flow definitions: the real command, in a
subprocess."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.flowcore.cli.conftest import run_flowcore

SAMPLES = Path(__file__).resolve().parents[1] / "nifi" / "samples"

TYPES = textwrap.dedent(
    """
    import hashlib
    from flowcore.processor.kinds import FlowFileTransform, TransformResult
    from flowcore.properties import PropertyDescriptor
    from flowcore.processor.relationship import SUCCESS


    class SignContent(FlowFileTransform):
        '''Writes a signature of each FlowFile's content made with a secret key.'''

        KEY = PropertyDescriptor("Signing Key", required=True, sensitive=True)
        property_descriptors = (KEY,)
        relationships = (SUCCESS,)

        def transform(self, context, flowfile):
            key = context.get_property(self.KEY).value
            digest = hashlib.sha256(key.encode() + flowfile.read()).hexdigest()[:8]
            return TransformResult(attributes={"signature": digest})


    TYPES = {"com.example.nifi.SignContent": SignContent}
    """
)


def _copy(tmp_path: Path, name: str) -> Path:
    """The sample in *tmp_path*, so the repository beside it is made there."""
    return Path(shutil.copy(SAMPLES / name, tmp_path / name))


def test_run_a_1x_flow_definition(tmp_path: Path) -> None:
    """``flowcore run flow.json`` runs it; --parameter wins over the file's context; the
    import's notes come first on stderr as note: lines."""
    flow = _copy(tmp_path, "download-1x.json")
    out = tmp_path / "out"
    done = run_flowcore("run", str(flow), "--runner", "direct", "--parameter", f"output.dir={out}")
    assert done.returncode == 0, done.stderr
    assert sorted(p.read_text() for p in out.iterdir()) == ["a line\n", "a line\n"]
    assert done.stderr.startswith("note: Tag: scheduling strategy EVENT_DRIVEN")
    assert "Plain lines on direct" in done.stdout
    assert (tmp_path / ".flowcore").is_dir()


@pytest.mark.parametrize("name", ["flow.json.gz", "flow.xml.gz"])
def test_run_an_instances_flow_json_gz(tmp_path: Path, name: str) -> None:
    """A gzipped instance flow (NiFi 2's flow.json.gz, or 1.x's flow.xml.gz) runs the same
    way, its notes one line each."""
    flow = _copy(tmp_path, name)
    out = tmp_path / "out"
    done = run_flowcore("run", str(flow), "--runner", "direct", "--parameter", f"output.dir={out}")
    assert done.returncode == 0, done.stderr
    assert len(list(out.iterdir())) == 1
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("note: process group 'Pipeline': flattened into one flow")
    assert notes[1] == (
        "note: input port 'From edge': allows remote access (site-to-site), which flowcore does "
        "not serve: it runs as a port of its group; nothing else feeds it, so it receives nothing"
    )
    assert len(notes) == 4


def test_unsupported_types_exit_2_in_one_error_without_a_traceback(tmp_path: Path) -> None:
    """A flow using a type flowcore lacks fails before running: one error, a line per problem."""
    done = run_flowcore("run", str(_copy(tmp_path, "download-2x.json")), "--runner", "direct")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: NiFi flow 'Greetings' (")
    assert lines[1].startswith("  - processor type com.example.nifi.SignContent:")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".flowcore").exists()


def test_a_mistyped_field_exits_2_in_one_line_naming_its_path(tmp_path: Path) -> None:
    """``flowcore run`` on a hand-edited definition whose properties became a list: one line
    naming the field's JSON path, exit 2, nothing run."""
    document = json.loads((SAMPLES / "download-1x.json").read_text())
    document["flowContents"]["processors"][0]["properties"] = ["oops"]
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(document))
    done = run_flowcore("run", str(flow), "--runner", "direct")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "flowContents.processors[0].properties must be an object, got a list" in done.stderr
    assert not (tmp_path / ".flowcore").exists()


def test_type_map_and_a_sensitive_parameter_from_the_environment(tmp_path: Path) -> None:
    """--type-map FILE:DICT maps the NiFi type; the sensitive parameter comes from the
    environment; the flow runs end to end."""
    (tmp_path / "my_types.py").write_text(TYPES)
    flow = _copy(tmp_path, "download-2x.json")
    out = tmp_path / "out"
    done = run_flowcore(
        "run", str(flow), "--runner", "direct", "--type-map", f"{tmp_path / 'my_types.py'}:TYPES",
        "--parameter", f"output.dir={out}", "--parameter-env", "signing.key=TEST_KEY",
        env={"TEST_KEY": "k3y"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [written] = out.iterdir()
    assert written.read_text() == "hello one\nhello two"


def test_explain_a_flow_definition(tmp_path: Path) -> None:
    """``flowcore explain flow.json`` draws the flattened flow; a missing sensitive parameter
    is named (exit 2), and given, the flow is valid."""
    (tmp_path / "my_types.py").write_text(TYPES)
    flow = _copy(tmp_path, "download-2x.json")
    args = ("explain", str(flow), "--type-map", f"{tmp_path / 'my_types.py'}:TYPES")
    missing = run_flowcore(*args)
    assert missing.returncode == 2
    assert "Funnel 'Ingest/Tagging/raw'" in missing.stdout
    assert "parameter 'signing.key': has no value" in missing.stderr
    given = run_flowcore(*args, "--parameter-env", "signing.key=TEST_KEY", env={"TEST_KEY": "k"})
    assert given.returncode == 0, given.stderr
    assert given.stderr.startswith("note: process groups 'Ingest', 'Ingest/Tagging': flattened")
    assert "note: output port 'to parent'" in given.stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "must look like MODULE:DICT"),
        ("missing_module_xyz:TYPES", "does not load: ModuleNotFoundError"),
        ("json:TYPES", "json has no dict named 'TYPES'"),
    ],
)
def test_a_bad_type_map_exits_2(tmp_path: Path, spec: str, message: str) -> None:
    """A --type-map that is not MODULE:DICT, or names nothing, is one line and exit 2."""
    flow = _copy(tmp_path, "download-2x.json")
    done = run_flowcore("run", str(flow), "--runner", "direct", "--type-map", spec)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_convert_a_nifi_flow_to_python_gives_the_same_flow(tmp_path: Path) -> None:
    """``flowcore convert flow.json --to python`` writes a flow file defining the same flow,
    the import's notes on stderr."""
    flow = _copy(tmp_path, "download-1x.json")
    out = tmp_path / "plain.py"
    done = run_flowcore("convert", str(flow), "--to", "python", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("note: Tag: scheduling strategy EVENT_DRIVEN")
    from flowcore.builder import Flow
    from flowcore.cli._common import load_flow

    assert load_flow(out).same_as(Flow.from_nifi(flow))


def test_xml_that_is_no_nifi_flow_says_what_to_download_instead(tmp_path: Path) -> None:
    """XML other than a NiFi 1.x template or flow.xml is refused in one line pointing to a
    flow definition (JSON)."""
    document = tmp_path / "ingest.xml"
    document.write_text("<beans><bean/></beans>")
    result = run_flowcore("run", str(document), "--runner", "direct")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "flow definition (JSON)" in result.stderr


def _invalid_flow(tmp_path: Path) -> Path:
    """The flow with three invalid processors (``with_invalid_processors``) as a file."""
    from tests.flowcore.nifi._nifi_json import with_invalid_processors

    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(with_invalid_processors()))
    return flow


def test_run_leaves_invalid_processors_stopped(tmp_path: Path) -> None:
    """``flowcore run``: one note per invalid processor with NiFi's reasons, the rest runs, a
    'stopped:' line per processor whose input waits, exit 0; --strict exits 2 in one error.
    (test_invalid runs the fixed flow over what waited.)"""
    flow = _invalid_flow(tmp_path)
    done = run_flowcore("run", str(flow), "--runner", "direct")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    notes = [line for line in lines if "so it stays stopped" in line]
    assert [line.split(":")[1] for line in notes] == [" Split", " Tag", " Route"]
    assert notes[0].endswith("'Line Split Count' is invalid because Line Split Count is required")
    assert (
        "stopped: 1 FlowFile(s), 3 bytes wait for invalid processor 'Split'; fix it (see its "
        "note) to process them"
    ) in lines
    assert not [line for line in lines if line.startswith("disabled:")]
    strict = run_flowcore("run", str(flow), "--runner", "direct", "--strict")
    assert strict.returncode == 2
    assert strict.stderr.startswith("error: flow 'Top' is invalid (3 problems):")
    assert "Traceback" not in strict.stderr


def test_explain_and_convert_note_invalid_processors_and_strict_refuses(tmp_path: Path) -> None:
    """``explain`` draws the flow with a note per invalid processor (exit 0); ``convert``
    notes them and writes them as drawn; ``convert --strict`` exits 2 naming them."""
    flow = _invalid_flow(tmp_path)
    explained = run_flowcore("explain", str(flow), "--runner", "direct")
    assert explained.returncode == 0, explained.stderr
    assert explained.stderr.count("so it stays stopped") == 3
    out = tmp_path / "flow.py"
    converted = run_flowcore("convert", str(flow), "--to", "python", "--output", str(out))
    assert converted.returncode == 0, converted.stderr
    assert converted.stderr.count("so it stays stopped") == 3
    assert "disabled=True" not in out.read_text()
    refused = run_flowcore("convert", str(flow), "--to", "nifi", "--strict")
    assert refused.returncode == 2
    assert "SplitText 'Split': 'Line Split Count' is invalid" in refused.stderr
    assert refused.stdout == ""
