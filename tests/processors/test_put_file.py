"""Tests for PutFile: writing, conflicts, limits, attributes, escapes, GetFile round trips."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import GetFile, PutFile


def put(
    directory: Path,
    content: bytes = b"data",
    attributes: dict[str, str] | None = None,
    **properties: object,
) -> TestRunner:
    runner = TestRunner(PutFile(directory=str(directory), **properties))
    runner.enqueue(content, {"filename": "out.txt", **(attributes or {})})
    runner.run()
    return runner


def test_writes_file_and_reports_send(tmp_path: Path) -> None:
    """The content lands under its filename, with a SEND event and no temporary file left."""
    runner = put(tmp_path / "new" / "dir")
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (tmp_path / "new" / "dir" / "out.txt").read_bytes() == b"data"
    assert [p.name for p in (tmp_path / "new" / "dir").iterdir()] == ["out.txt"]
    (event,) = runner.provenance_events
    assert event.event_type is ProvenanceEventType.SEND
    assert event.transit_uri == (tmp_path / "new" / "dir" / "out.txt").as_uri()


def test_missing_directory_without_create_fails(tmp_path: Path) -> None:
    """With Create Missing Directories false, a missing directory routes to failure, penalized."""
    runner = put(tmp_path / "missing", create_missing_directories=False)
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].flowfile.penalty_expiration > 0


def test_a_directory_made_beside_the_check_is_used(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A directory another task creates between PutFile's check and its mkdir takes the file.

    Two Spark tasks writing into one new directory raced there: the second saw no directory,
    then an existing path, and routed its FlowFile to failure as "not a directory".
    """
    target = tmp_path / "made"
    real_is_dir = Path.is_dir

    def made_just_after(path: Path) -> bool:
        if path == target and not real_is_dir(path):
            path.mkdir()  # the other task, just after this check
            return False
        return real_is_dir(path)

    monkeypatch.setattr(Path, "is_dir", made_just_after)
    runner = put(target)
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (target / "out.txt").read_bytes() == b"data"


def test_a_file_where_the_directory_should_be_fails(tmp_path: Path) -> None:
    """A file in place of the directory routes to failure, naming it."""
    (tmp_path / "taken").write_bytes(b"")
    runner = put(tmp_path / "taken")
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_conflict_strategies(tmp_path: Path) -> None:
    """replace overwrites, ignore leaves the file and succeeds, fail routes to failure."""
    (tmp_path / "out.txt").write_bytes(b"old")
    put(tmp_path, b"new", conflict_resolution_strategy="ignore").assert_all_flowfiles_transferred(
        "success", 1
    )
    assert (tmp_path / "out.txt").read_bytes() == b"old"
    put(tmp_path, b"new", conflict_resolution_strategy="fail").assert_all_flowfiles_transferred(
        "failure", 1
    )
    put(tmp_path, b"new", conflict_resolution_strategy="replace").assert_all_flowfiles_transferred(
        "success", 1
    )
    assert (tmp_path / "out.txt").read_bytes() == b"new"


def test_maximum_file_count(tmp_path: Path) -> None:
    """A directory already holding Maximum File Count files refuses more."""
    (tmp_path / "one").write_text("1")
    put(tmp_path, maximum_file_count=1).assert_all_flowfiles_transferred("failure", 1)


def test_permissions_and_last_modified_time(tmp_path: Path) -> None:
    """Permissions (octal or symbolic) and Last Modified Time are applied to the file."""
    put(tmp_path, permissions="rw-r-----", last_modified_time="2024-01-01T00:00:00+0000")
    written = (tmp_path / "out.txt").stat()
    assert stat.S_IMODE(written.st_mode) == 0o640
    assert int(written.st_mtime) == 1704067200
    put(tmp_path / "b", permissions="600")
    assert stat.S_IMODE((tmp_path / "b" / "out.txt").stat().st_mode) == 0o600
    put(tmp_path / "c", permissions="nonsense").assert_all_flowfiles_transferred("failure", 1)


def test_escapes_go_to_failure(tmp_path: Path) -> None:
    """'..' in the filename or directory, absolute filenames and symlinks out are refused."""
    base = tmp_path / "base"
    base.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (base / "link").symlink_to(outside)
    for attributes, directory in (
        ({"filename": "../escape.txt"}, str(base)),
        ({"filename": "/etc/passwd"}, str(base)),
        ({"filename": "x.txt", "sub": "../../outside"}, str(base) + "/${sub}"),
        ({"filename": "link/x.txt"}, str(base)),
    ):
        runner = TestRunner(PutFile(directory=directory))
        runner.enqueue(b"nope", attributes)
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "escape.txt").exists()


def test_an_expression_completing_a_directory_name_writes_under_its_parent(
    tmp_path: Path,
) -> None:
    """``out/country=${country}`` writes into ``out/country=IT`` (the base is ``out``, not the
    partial name ``country=``), and still refuses an attribute that climbs out of ``out``."""
    runner = TestRunner(PutFile(directory=str(tmp_path / "out") + "/country=${country}"))
    runner.enqueue(b"it", {"filename": "a.parquet", "country": "IT"})
    runner.enqueue(b"no", {"filename": "b.parquet", "country": "/../../escaped"})
    runner.run(2)
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    assert (tmp_path / "out" / "country=IT" / "a.parquet").read_bytes() == b"it"
    assert not (tmp_path / "escaped").exists()


def test_directory_expression_inside_base(tmp_path: Path) -> None:
    """EL in Directory may create sub-directories under the configured base."""
    runner = TestRunner(PutFile(directory=str(tmp_path) + "/${kind}"))
    runner.enqueue(b"x", {"filename": "f", "kind": "logs/2024"})
    runner.run()
    assert (tmp_path / "logs" / "2024" / "f").read_bytes() == b"x"


file_names = st.from_regex(r"[a-z0-9][a-z0-9_\-]{0,7}(\.[a-z]{1,3})?", fullmatch=True)
trees = st.dictionaries(
    st.tuples(
        st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), max_size=2).map(tuple), file_names
    ),
    st.binary(max_size=64),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trees)
def test_getfile_then_putfile_round_trips_random_trees(tmp_path_factory, files: dict) -> None:  # type: ignore[no-untyped-def]
    """Any tree of files read by GetFile and written by PutFile to ${path} comes out identical."""
    root = tmp_path_factory.mktemp("round")
    source, target = root / "in", root / "out"
    expected = {}
    for (dirs, name), data in files.items():
        relative = Path(*dirs, name)
        if any(
            str(relative).startswith(str(other) + os.sep)
            or str(other).startswith(str(relative) + os.sep)
            for other in expected
        ):
            continue  # a name used both as a file and as a directory
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_bytes(data)
        expected[relative] = data
    getter = TestRunner(GetFile(input_directory=str(source), batch_size=100))
    getter.run()
    putter = TestRunner(PutFile(directory=str(target) + "/${path}"))
    for flowfile in getter.flowfiles_for("success"):
        putter.enqueue(flowfile.content, dict(flowfile.attributes))
    putter.run(len(expected))
    putter.assert_all_flowfiles_transferred("success", len(expected))
    written = {p.relative_to(target): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert written == expected


def test_a_name_of_the_file_systems_maximum_length_is_written(tmp_path: Path) -> None:
    """A 255-byte name works (the temporary's name is short); a longer one goes to failure
    with the limit named, and nothing is left behind."""
    longest = "n" * 255
    runner = put(tmp_path, b"long", {"filename": longest})
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (tmp_path / longest).read_bytes() == b"long"
    runner = put(tmp_path / "more", b"longer", {"filename": "n" * 256})
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["more", longest]
    assert list((tmp_path / "more").iterdir()) == []


def test_a_nul_in_the_name_goes_to_failure(tmp_path: Path) -> None:
    """A filename or directory with a NUL byte is refused, not retried forever."""
    put(tmp_path, attributes={"filename": "a\x00b"}).assert_all_flowfiles_transferred("failure", 1)
    runner = TestRunner(PutFile(directory=str(tmp_path) + "/${dir}"))
    runner.enqueue(b"data", {"filename": "out.txt", "dir": "x\x00y"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert list(tmp_path.iterdir()) == []


def test_a_file_in_the_directory_path_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file where a directory of the path should be: the failure names that file."""
    (tmp_path / "a").write_bytes(b"a file")
    runner = put(tmp_path / "a" / "b" / "c")
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert f"{tmp_path / 'a'} is a file, not a directory" in caplog.text
    assert "exists and is not a directory" not in caplog.text


@contextlib.contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """*directory* made so that no file can be created in it, for root too.

    Mode 555 is enough for other users; root ignores permission bits, so it gets the immutable
    attribute (``chattr +i``), and the test is skipped where neither works.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root without chattr: no way to make a directory unwritable")
    done = subprocess.run([chattr, "+i", str(directory)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"running as root and chattr +i fails here: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(directory)], check=True)


def test_an_unwritable_directory_fails_naming_it_and_the_permission(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Writing in, or creating a directory under, an unwritable one goes to failure, naming
    that directory and the permission (not a hidden temporary, not the full target)."""
    locked = tmp_path / "locked"
    with unwritable(locked):
        put(locked).assert_all_flowfiles_transferred("failure", 1)
        assert f"cannot write in the directory {locked}: " in caplog.text
        assert "permission" in caplog.text
        assert ".part" not in caplog.text
        caplog.clear()
        put(locked / "sub" / "deeper").assert_all_flowfiles_transferred("failure", 1)
        assert f"cannot create the directory 'sub' in {locked}: " in caplog.text
    assert list(locked.iterdir()) == []


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    """A write that fails midway (bad Permissions) removes its temporary and goes to failure."""
    runner = put(tmp_path, permissions="not-a-mode")
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert list(tmp_path.iterdir()) == []


def _tree_of(root: Path) -> dict[str, tuple[bytes, int, int | None]]:
    """Every file under *root*: content, permission bits and a modification time that was set
    (one in 2020; the others are when the file was written)."""
    set_before = 1_600_000_000

    def moment(path: Path) -> int | None:
        when = int(path.stat().st_mtime)
        return when if when < set_before else None

    return {
        str(p.relative_to(root)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode), moment(p))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


_FILE_NAMES = st.sampled_from(["a.txt", "b.txt", "c", "sub/d.txt", "..", "", "e.log"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(  # found by CI: a Maximum File Count counted the batch's unpublished temporaries
    flowfiles=[
        (b"", "a.txt", "", None, None),
        (b"", "a.txt", "x", None, None),
        (b"", "a.txt", "", None, None),
    ],
    existing=["a.txt", "b.txt"],
    conflict="replace",
    create=True,
    limit=3,
)
@given(
    flowfiles=st.lists(
        st.tuples(
            st.binary(max_size=20),
            _FILE_NAMES,
            st.sampled_from(["", "x", "y/z"]),
            st.sampled_from([None, "644", "rw-r-----", "bad"]),
            st.sampled_from([None, "2020-01-02T03:04:05+0000", "not a time"]),
        ),
        min_size=1,
        max_size=10,
    ),
    existing=st.lists(_FILE_NAMES.filter(lambda n: n not in ("", "..")), max_size=2),
    conflict=st.sampled_from(["replace", "ignore", "fail"]),
    create=st.booleans(),
    limit=st.sampled_from([None, 3]),
)
def test_the_batch_form_writes_the_one_by_one_files(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    flowfiles: list[tuple[bytes, str, str, str | None, str | None]],
    existing: list[str],
    conflict: str,
    create: bool,
    limit: int | None,
) -> None:
    """Random names (repeated, nested, invalid), directories by Expression Language, files
    already there, each conflict strategy, permissions, times and a file count limit: the batch
    form (or, where a FlowFile fails, its decline) gives on_trigger's files, routes and events."""
    root = tmp_path_factory.mktemp("put")
    for side in ("batch", "single"):
        for name in existing:
            (root / side / name).parent.mkdir(parents=True, exist_ok=True)
            (root / side / name).write_bytes(b"old")
    properties: dict[str, object] = {
        "conflict_resolution_strategy": conflict,
        "create_missing_directories": str(create).lower(),
        "permissions": "${perm}",
        "last_modified_time": "${mtime}",
    }
    if limit is not None:
        properties["maximum_file_count"] = limit
    runner = TestRunner(PutFile(directory=f"{root / 'batch'}/${{dir}}", **properties))
    for content, name, directory, permissions, modified in flowfiles:
        attributes = {"filename": name, "dir": directory}
        if permissions:
            attributes["perm"] = permissions
        if modified:
            attributes["mtime"] = modified
        runner.enqueue(content, attributes)
    runner.assert_batch_form_agrees(
        allow_decline=True, twin_properties={"Directory": f"{root / 'single'}/${{dir}}"}
    )
    assert _tree_of(root / "batch") == _tree_of(root / "single")
    for event in runner.provenance_events:
        if event.event_type is ProvenanceEventType.SEND:
            assert event.transit_uri is not None
            assert Path(event.transit_uri.removeprefix("file://")).is_file()
    if (
        not any(f[1] in ("", "..") or f[3] == "bad" for f in flowfiles)
        and conflict == "replace"
        and limit is None
        and create
    ):
        assert runner.batch_use.whole == len(flowfiles)  # nothing fails: the batch went whole


def test_a_batch_writes_from_windows_of_its_claim_and_stages_until_the_commit(
    tmp_path: Path,
) -> None:
    """Many small FlowFiles of one claim, written by the batch form: one file each, a SEND
    each naming its file, and no temporary left."""
    runner = TestRunner(PutFile(directory=str(tmp_path)), batches=True)
    for index in range(300):
        runner.enqueue(f"line {index}\n", {"filename": f"f{index}.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 300)
    assert runner.batch_use.whole == 300
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"f{i}.txt" for i in range(300))
    assert (tmp_path / "f7.txt").read_bytes() == b"line 7\n"
    sends = {
        e.transit_uri for e in runner.provenance_events if e.event_type is ProvenanceEventType.SEND
    }
    assert sends == {(tmp_path / f"f{i}.txt").as_uri() for i in range(300)}
