"""Tests for ``flowcore provenance``, run as the real command in a subprocess: search by
component name and as JSON, content of events, lineage drawn compactly, unknown ids."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.flowcore.cli.conftest import run_flowcore

ROOT = Path(__file__).resolve().parents[3]

FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

flow = Flow("split-merge")
get = flow.add(GetFile(input_directory={inbox!r}, keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
tag = flow.add(UpdateAttribute(source="web"), name="tag")
merge = flow.add(MergeContent(delimiter_strategy="Text", demarcator="\\n"), name="merge")
put = flow.add(PutFile(directory={outbox!r}, conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.connect(tag, merge)
flow.connect(merge, put, "merged")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""

LINES = 1_000


def flowcore(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the flowcore command of this checkout (output as bytes)."""
    return run_flowcore(*args, cwd=cwd, text=False)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose flow has run: a 1,000-line file split, tagged, merged and written."""
    directory = tmp_path_factory.mktemp("provenance")
    (directory / "in").mkdir()
    (directory / "in" / "a.txt").write_text("".join(f"line {n}\n" for n in range(LINES)))
    flow = directory / "flow.py"
    flow.write_text(FLOW.format(inbox=str(directory / "in"), outbox=str(directory / "out")))
    done = flowcore("run", "flow.py", "--runner", "direct", cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory


def search(ran: Path, *args: str) -> list[dict]:
    done = flowcore("provenance", "search", "--json", "--repository", ".flowcore", *args, cwd=ran)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_search_json_takes_the_users_component_names(ran: Path) -> None:
    """--component tag (the name given to flow.add) finds the same events as its id; --json is
    one array of events with NiFi's field names."""
    by_name = search(ran, "--component", "tag", "--limit", "5000")
    assert len(by_name) == LINES
    assert {e["component_name"] for e in by_name} == {"tag"}
    assert by_name == search(ran, "--component", by_name[0]["component_id"], "--limit", "5000")
    first = by_name[0]
    assert first["event_type"] == "ATTRIBUTES_MODIFIED"
    assert first["updated_attributes"] == {"source": "web"}
    assert first["attributes"]["source"] == "web"
    assert {"event_id", "flowfile_uuid", "event_time", "lineage_start_date"} <= set(first)


def test_an_unknown_component_is_one_line(ran: Path) -> None:
    """A component no event names is refused in one line that says how to look."""
    done = flowcore("provenance", "search", "--component", "tga", cwd=ran)
    assert done.returncode == 2
    assert b"'tga'" in done.stderr
    assert b"flowcore provenance search" in done.stderr


@pytest.mark.parametrize(
    ("option", "expected"),
    [(("--attribute", "foo"), b"must look like NAME=VALUE"), (("--type", "BOGUS"), b"DROP")],
)
def test_a_bad_search_option_is_one_line(
    ran: Path, option: tuple[str, str], expected: bytes
) -> None:
    """A search attribute without '=' or an unknown event type: one line, exit 2."""
    done = flowcore("provenance", "search", *option, cwd=ran)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert expected in done.stderr


def test_show_content_after_and_before_an_event(ran: Path) -> None:
    """The merged FlowFile's content prints after its SEND; before the split's FORK it is the
    whole file, saved byte for byte with --output."""
    (send,) = search(ran, "--type", "SEND")
    after = flowcore("provenance", "show", str(send["event_id"]), "--content", cwd=ran)
    assert after.returncode == 0
    assert after.stdout == (ran / "out" / "a.txt").read_bytes()
    (fork,) = search(ran, "--type", "FORK")
    saved = ran / "before.bin"
    done = flowcore(
        "provenance",
        "show",
        str(fork["event_id"]),
        "--content",
        "before",
        "--output",
        str(saved),
        cwd=ran,
    )
    assert done.returncode == 0, done.stderr
    assert saved.read_bytes() == (ran / "in" / "a.txt").read_bytes()


def test_content_that_is_gone_or_never_was_is_one_line(ran: Path, tmp_path: Path) -> None:
    """An event without content before it, and content removed from the repository, each end in
    one line with exit status 2."""
    (receive,) = search(ran, "--type", "RECEIVE")
    done = flowcore("provenance", "show", str(receive["event_id"]), "--content", "before", cwd=ran)
    assert done.returncode == 2
    assert b"has no content before it" in done.stderr
    copy = tmp_path / "copy"
    shutil.copytree(ran / ".flowcore", copy)
    for claim in (copy / "content").rglob("*.claim"):
        claim.unlink()
    (send,) = search(ran, "--type", "SEND")
    done = flowcore(
        "provenance", "show", str(send["event_id"]), "--content", "--repository", str(copy), cwd=ran
    )
    assert done.returncode == 2
    assert b"is gone from the content repository and its archive" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_lineage_of_a_split_child_is_a_short_tree(ran: Path) -> None:
    """A child of a 1,000-way split: the tree shows the root, the first and last children, the
    child asked about and a count of the others, in a few dozen lines."""
    (fork,) = search(ran, "--type", "FORK")
    child = fork["child_uuids"][500]
    done = flowcore("provenance", "lineage", child, "--repository", ".flowcore", cwd=ran)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) < 60
    assert any(line.endswith(f"FlowFile {child}  <- this FlowFile") for line in lines)
    assert any("FORK" in line and f"{LINES:,} children" in line for line in lines)
    assert any("more FlowFiles" in line for line in lines)


def test_lineage_as_json_and_dot(ran: Path) -> None:
    """JSON is the graph's facts for scripts; --output writes the DOT picture."""
    (send,) = search(ran, "--type", "SEND")
    uuid = send["flowfile_uuid"]
    done = flowcore("provenance", "lineage", uuid, "--format", "json", cwd=ran)
    document = json.loads(done.stdout)
    events = {n["event_type"] for n in document["nodes"] if n["kind"] == "event"}
    assert {"FORK", "JOIN", "SEND"} <= events
    assert any(n.get("uuid") == uuid for n in document["nodes"])
    drawn = ran / "lineage.dot"
    done = flowcore(
        "provenance", "lineage", uuid, "--format", "dot", "--output", str(drawn), cwd=ran
    )
    assert done.returncode == 0, done.stderr
    assert drawn.read_text().startswith("digraph picture {")


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (["show", "99999"], b"no provenance event with id 99999"),
        (["show", "x"], b"'x' is not a provenance event id"),
        (["replay", "99999", "flow.py"], b"no provenance event with id 99999"),
        (["lineage", "no-such-uuid"], b"no provenance event names FlowFile no-such-uuid"),
    ],
)
def test_unknown_ids_are_one_line_naming_them(ran: Path, command: list[str], named: bytes) -> None:
    """show, replay and lineage of what no event names: one line, how to find ids, exit 2."""
    done = flowcore("provenance", *command, "--repository", ".flowcore", cwd=ran)
    assert done.returncode == 2
    assert named in done.stderr
    assert b"flowcore provenance search" in done.stderr
    assert b"Traceback" not in done.stderr


ONE_BY_ONE = """
from flowcore.engine._member import TaskMember
from processors import PutFile, UpdateAttribute

TaskMember.accepts_batches = False  # the per-FlowFile path the batch forms must equal
UpdateAttribute.transform_batch = PutFile.transform_batch = lambda *_: None
"""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_VARYING = ("event_id", "event_time", "entry_date", "lineage_start_date", "event_duration")


def _printed(event: dict, directory: Path) -> str:
    """A searched event as JSON, without what differs between two runs of a flow: ids, times,
    uuids, where content sits, the output directory, the input's access time, the merge's
    nanosecond name."""
    kept = {k: v for k, v in event.items() if k not in _VARYING}
    for key in ("content_claim", "previous_content_claim"):
        kept[key] = None if kept[key] is None else kept[key].rsplit("[", 1)[1]
    for key in ("attributes", "previous_attributes", "updated_attributes"):
        kept[key] = {
            k: v for k, v in kept[key].items() if k not in {"file.lastAccessTime", "merge.bin.age"}
        }
    text = json.dumps(kept, sort_keys=True).replace(f"{directory}/out", "<out>")
    return re.sub(r'"\d{10,}"', '"<nanos>"', _UUID.sub("<uuid>", text))


def test_search_of_a_batch_run_prints_what_a_one_by_one_run_prints(
    ran: Path, tmp_path: Path
) -> None:
    """The same flow forced one FlowFile at a time: `provenance search --json` prints the same
    events (in the same order per component and type), `show` the same fields."""
    flow = FLOW.format(inbox=str(ran / "in"), outbox=str(tmp_path / "out"))
    (tmp_path / "flow.py").write_text(ONE_BY_ONE + flow)
    done = flowcore("run", "flow.py", "--runner", "direct", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    printed = []
    for directory in (ran, tmp_path):
        events = search(directory, "--limit", "10000")
        events.sort(key=lambda e: (e["component_name"], e["event_type"]))
        printed.append([_printed(e, directory) for e in events])
    assert printed[0] == printed[1]
    assert len(printed[0]) > 2 * LINES
