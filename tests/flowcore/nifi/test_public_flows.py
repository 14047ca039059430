"""Tests on the public NiFi flow definitions kept in ``public_flows/`` (``sources.md`` says where
each comes from): each parses into flowcore's model or is refused with flowcore's one error,
never a traceback. ``bench/nifi_flows.py`` runs them and measures what each lacks."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from pathlib import Path

import pytest

from flowcore.builder import Flow
from flowcore.cli import main
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import NiFiFormatError, NiFiImportError

PUBLIC = Path(__file__).parent / "public_flows"
FILES = sorted(path for path in PUBLIC.iterdir() if path.name != "sources.md")
#: A row of sources.md's table of kept files: file, repository, path, commit, blob, licence.
SOURCE_ROW = re.compile(
    r"^\| `([^`]+)` \| ([\w.-]+/[\w.-]+) \| `[^`]+` \| ([0-9a-f]{40}) \| "
    r"`([0-9a-f]{40})` \| (.+) \|$",
    re.MULTILINE,
)


def _explain(file: Path) -> tuple[int, str]:
    """``flowcore explain FILE`` in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(["explain", str(file)])
    return status, err.getvalue()


def test_ten_or_more_flows_each_with_its_source() -> None:
    """At least ten flows are kept, and sources.md names each one's repository, commit and
    licence (and no file that is not there)."""
    table = (PUBLIC / "sources.md").read_text()
    listed = SOURCE_ROW.findall(table)
    assert len(FILES) >= 10
    assert sorted(name for name, *_ in listed) == [path.name for path in FILES]
    assert all(licence.strip() for *_, licence in listed)


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_each_flow_parses_or_is_refused_in_flowcores_terms(path: Path) -> None:
    """``Flow.from_nifi`` (no type map) gives a flow, or raises flowcore's NiFi error naming what
    is missing; nothing else escapes."""
    refused: Exception | None = None
    try:
        flow = Flow.from_nifi(path)
    except (NiFiFormatError, NiFiImportError) as error:
        refused = error
    if refused is None:
        assert isinstance(flow, FlowDefinition)
    else:
        assert str(refused).strip()


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_explain_ends_in_one_error_line_never_a_traceback(path: Path) -> None:
    """``flowcore explain`` on each flow exits 0, or 2 with one ``error:`` line (an import's
    problems listed under it, one line each) and never a traceback."""
    status, stderr = _explain(path)
    assert status in (0, 2), stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("note: ")]
    if status == 2:
        assert [line for line in lines if line.startswith("error: ")] == lines[:1], stderr
        assert all(line.startswith(("error: ", "  - ")) for line in lines), stderr


def test_the_files_are_kept_unchanged() -> None:
    """Each file is byte for byte the one its repository holds at the commit named: its git
    blob id is the one sources.md gives; the JSON ones parse, the templates are templates."""
    table = (PUBLIC / "sources.md").read_text()
    blobs = {name: blob for name, _, _, blob, _ in SOURCE_ROW.findall(table)}
    for path in FILES:
        data = path.read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blobs[path.name], path
        text = data.decode("utf-8")
        if text.lstrip().startswith("<"):
            assert "<template" in text
        else:
            json.loads(text)
