"""Tests for processors/_merge_formats.py: archive entry names that cannot escape."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore.flowfile import FlowFile
from flowcore.testing import TestRunner
from processors import MergeContent
from processors._merge_formats import entry_name


def _flowfile(filename: str, path: str = "./") -> FlowFile:
    return FlowFile.create(1, 0, {"filename": filename, "path": path})


@pytest.mark.parametrize(
    ("filename", "path", "expected"),
    [
        ("a.txt", "./", "a.txt"),
        ("a.txt", "dir/sub", "dir/sub/a.txt"),
        ("../../x", "./", "x"),
        ("/etc/x", "./", "etc/x"),
        ("x", "/abs/../../..", "x"),
        ("..\\..\\win.ini", "./", "win.ini"),
        ("C:\\Windows\\x", "./", "C/Windows/x"),
        ("a\0b", "./", "a_b"),
        ("a/./b/../c", "./", "a/c"),
        ("..", "..", ""),
    ],
)
def test_entry_names_are_normalised(filename: str, path: str, expected: str) -> None:
    """Keep Path names lose roots, '..' above the name, backslashes and NULs (unlike NiFi)."""
    flowfile = _flowfile(filename, path)
    assert entry_name(flowfile, keep_path=True) == (expected or flowfile.uuid)


_SEGMENTS = st.sampled_from(["..", ".", "", "a", "b", "/", "\\", "C:", "x\0y", "é", "../.."])


def _extract_all(data: bytes, merge_format: str, into: Path) -> list[Path]:
    # What a careless user does: no filter, entry names joined to the directory as they are.
    # (Entries such as "a" and "a/b" in one archive cannot both be written; that is fine.)
    if merge_format == "TAR":
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            names = archive.getnames()
            for member in archive.getmembers():
                with contextlib.suppress(OSError):
                    archive.extract(member, into, filter="fully_trusted")
    else:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            for name in names:
                target = Path(os.path.normpath(into / name))
                with contextlib.suppress(OSError):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
    return [Path(os.path.normpath(into / n)) for n in names]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(
    names=st.lists(
        st.tuples(st.lists(_SEGMENTS, max_size=5), st.lists(_SEGMENTS, max_size=5)),
        min_size=1,
        max_size=4,
    ),
    merge_format=st.sampled_from(["TAR", "ZIP"]),
)
def test_no_entry_lands_outside_the_extraction_directory(
    tmp_path_factory: pytest.TempPathFactory, names: list, merge_format: str
) -> None:
    """Whatever filename and path attributes hold, extracting the archive, even naively,
    writes only inside the extraction directory."""
    runner = TestRunner(
        MergeContent(merge_format=merge_format, keep_path="true", minimum_number_of_entries=1)
    )
    for filename_parts, path_parts in names:
        runner.enqueue(b"x", {"filename": "/".join(filename_parts), "path": "/".join(path_parts)})
    runner.run()
    root = tmp_path_factory.mktemp("extract")
    into = root / "into"
    into.mkdir()
    for merged in runner.flowfiles_for("merged"):
        for target in _extract_all(merged.content, merge_format, into):
            assert target == into or into in target.parents
    assert list(root.iterdir()) == [into]


def _merge(fmt: str, names: list[tuple[str, str]], **properties: object) -> TestRunner:
    runner = TestRunner(
        MergeContent(
            merge_format=fmt,
            keep_path=True,
            minimum_number_of_entries=len(names),
            maximum_number_of_entries=len(names),
            **properties,
        )
    )
    for index, (path, filename) in enumerate(names):
        runner.enqueue(f"content {index}", {"filename": filename, "path": path})
    runner.run()
    return runner


def test_tar_leaves_unmerged_a_name_that_collides_only_after_normalising() -> None:
    """'x' and '../x' differ, but both become 'x': the later would overwrite the earlier on
    extraction, so it goes to failure; true duplicates go in, as in NiFi."""
    runner = _merge("TAR", [("", "x"), ("", "../x"), ("/", "x"), ("", "x")])
    (bundle,) = runner.flowfiles_for("merged")
    with tarfile.open(fileobj=io.BytesIO(bundle.content)) as archive:
        assert archive.getnames() == ["x", "x"]
    assert [f.attributes["filename"] for f in runner.flowfiles_for("failure")] == ["../x", "x"]
    assert [f.attributes["path"] for f in runner.flowfiles_for("failure")] == ["", "/"]


def test_tar_permissions_cannot_make_a_setuid_file() -> None:
    """tar.permissions keeps rwxrwxrwx only (NiFi's decimal parsing kept): no setuid bit."""
    runner = TestRunner(
        MergeContent(merge_format="TAR", minimum_number_of_entries=1, maximum_number_of_entries=1)
    )
    runner.enqueue("x", {"filename": "f", "tar.permissions": str(0o4755)})
    runner.run()
    (bundle,) = runner.flowfiles_for("merged")
    with tarfile.open(fileobj=io.BytesIO(bundle.content)) as archive:
        assert archive.getmembers()[0].mode == 0o755


HOSTILE = ["../../escaped-1", "/tmp/escaped-2", "..\\..\\escaped-3", "nul\0../escaped-4", "C:x"]


@pytest.mark.parametrize(("fmt", "command"), [("TAR", ["tar", "-xf"]), ("ZIP", ["unzip", "-q"])])
def test_gnu_tar_and_unzip_extract_hostile_names_inside(
    fmt: str, command: list[str], tmp_path: Path
) -> None:
    """The tools a user reaches for find nothing to strip or refuse, and write only inside."""
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    runner = _merge(fmt, [("../../up", name) for name in HOSTILE])
    archive = tmp_path / "bundle"
    archive.write_bytes(runner.flowfiles_for("merged")[0].content)
    into = tmp_path / "sandbox" / "into"
    into.mkdir(parents=True)
    done = subprocess.run([*command, str(archive)], cwd=into, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert b"leading" not in done.stderr.lower()  # GNU tar: "Removing leading `../'"
    written = [p for p in (tmp_path / "sandbox").rglob("*") if p.is_file()]
    assert len(written) == len(HOSTILE)
    assert all(into in p.parents for p in written)


@pytest.mark.parametrize("fmt", ["FlowFile Stream, v3", "FlowFile Tar, v1"])
def test_packaged_attributes_are_written_in_name_order(fmt: str) -> None:
    """A FlowFile's attributes are packaged by name, whatever order it holds them in, so a
    FlowFile carried in a batch (shared attributes apart from columns) packs the same bytes."""
    bundles = []
    for order in (["z", "a", "m"], ["a", "m", "z"]):
        runner = TestRunner(
            MergeContent(merge_format=fmt, minimum_number_of_entries=1, maximum_number_of_entries=1)
        )
        runner.enqueue("x", {**{k: k.upper() for k in order}, "filename": "f", "path": "p"})
        runner.run()
        bundles.append(runner.flowfiles_for("merged")[0].content)
    if fmt == "FlowFile Tar, v1":  # a tar: the entries' times are the clock's, which moved
        bundles = [_v1_attributes(b) for b in bundles]
        assert bundles[0].index(b'key="a"') < bundles[0].index(b'key="m"')
    else:
        assert bundles[0].index(b"\x00\x01a") < bundles[0].index(b"\x00\x01m")
    assert _without_uuid(bundles[0]) == _without_uuid(bundles[1])


def _v1_attributes(data: bytes) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return archive.extractfile("flowfile.attributes").read()  # type: ignore[union-attr]


def _without_uuid(data: bytes) -> bytes:
    """*data* with each uuid blanked (two runners give the FlowFile different ones)."""
    import re

    return re.sub(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", b"<u>", data)
