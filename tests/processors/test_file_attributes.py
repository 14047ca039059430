"""Tests for processors/_file_attributes.py: file names that are not valid UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import FileSplitter, GetFile, MergeContent, PutFile
from processors._file_attributes import (
    RAW_FILENAME,
    exact_name,
    file_attributes,
    key_path,
    path_key,
    text_of,
)

LATIN1 = os.fsdecode(b"caf\xe9 \xff.txt")  # not UTF-8: Python holds it with lone surrogates


@given(
    st.binary(min_size=1, max_size=40).filter(
        lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")  # as listed
    )
)
def test_listing_keys_and_exact_names_round_trip_any_bytes(name: bytes) -> None:
    """Any file name survives as a listing-state key and as filename + filename.bytes."""
    text = os.fsdecode(name)
    key = path_key("/in/" + text)
    assert key.encode("utf-8")  # storable anywhere
    assert os.fsencode(key_path(key)) == b"/in/" + name
    info = os.stat(".")
    attributes = file_attributes(Path("/in") / text, Path("/in"), info)
    assert attributes["filename"].encode("utf-8")
    assert os.fsencode(exact_name(attributes)) == name


#: every stage run on the runner under test, however small (see driver_run_max_flowfiles)
EVERY_RUN_ON_RUNNER = Settings(sync=False, driver_run_max_flowfiles=0)


def test_a_changed_filename_wins_over_the_original_bytes(tmp_path: Path) -> None:
    """Once a flow renames the FlowFile, PutFile writes the new name, not the old bytes."""
    attributes = file_attributes(tmp_path / LATIN1, tmp_path, os.stat(tmp_path))
    assert attributes["filename"] == "caf\ufffd \ufffd.txt"
    assert attributes[RAW_FILENAME] == "caf%E9%20%FF.txt"
    assert exact_name({**attributes, "filename": "renamed.txt"}) == "renamed.txt"
    assert text_of("plain") == "plain"


def _write_inputs(directory: Path) -> dict[bytes, bytes]:
    directory.mkdir()
    files = {os.fsencode(LATIN1): b"latin-1 name\n" * 50, b"ok.txt": b"fine\n" * 50}
    for name, data in files.items():
        (directory / os.fsdecode(name)).write_bytes(data)
    return files


def _written(directory: Path) -> dict[bytes, bytes]:
    return {os.fsencode(p.name): p.read_bytes() for p in directory.iterdir()}


def test_get_file_ingests_and_put_file_restores_a_name_that_is_not_utf8(
    tmp_path: Path, runner: str
) -> None:
    """GetFile -> PutFile with a Latin-1 file name: nothing blocks, the exact name and
    content come out, and the source is deleted after the commit."""
    files = _write_inputs(tmp_path / "in")
    flow = Flow("names")
    get = flow.add(
        GetFile(input_directory=str(tmp_path / "in"), keep_source_file=False), name="get"
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow,
        runner,
        repository=tmp_path / "repo",
        settings=Settings(sync=False, driver_run_max_flowfiles=0),
    )
    assert result.count("put", "success") == 2
    assert _written(tmp_path / "out") == files
    assert list((tmp_path / "in").iterdir()) == []


def test_file_splitter_reads_a_file_whose_name_is_not_utf8(tmp_path: Path, runner: str) -> None:
    """FileSplitter -> MergeContent Defragment -> PutFile round-trips the same file."""
    files = _write_inputs(tmp_path / "in")
    flow = Flow("split-names")
    split = flow.add(
        FileSplitter(input_directory=str(tmp_path / "in"), block_size="128 B"), name="split"
    )
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(split, merge, "blocks")
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(
        flow,
        runner,
        repository=tmp_path / "repo",
        settings=Settings(sync=False, driver_run_max_flowfiles=0),
    )
    assert _written(tmp_path / "out") == files
