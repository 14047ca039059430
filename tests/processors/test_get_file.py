"""Tests for GetFile: filters, attributes, provenance, exactly-once listing, deletion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowcore import ProvenanceEventType
from flowcore.processor.kinds import WorkItem
from flowcore.session.block_views import PAYLOAD_KEY, BlockView
from flowcore.session.external_files import fingerprint
from flowcore.testing import TestRunner
from processors import GetFile, SplitText
from processors._file_attributes import path_key


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.txt").write_text("A")
    (root / "b.log").write_text("BB")
    (root / ".hidden").write_text("H")
    (root / "sub" / "c.txt").write_text("CCC")
    (root / "sub" / "deeper" / "d.txt").write_text("DDDD")
    return root


def names(runner: TestRunner) -> list[str]:
    return sorted(f.attributes["filename"] for f in runner.flowfiles_for("success"))


def test_picks_up_files_recursively_skipping_hidden(tree: Path) -> None:
    """By default every visible file, in every sub-directory, is picked up."""
    runner = TestRunner(GetFile(input_directory=str(tree), keep_source_file=True))
    runner.run()
    assert names(runner) == ["a.txt", "b.log", "c.txt", "d.txt"]


def test_attributes_and_receive_events(tree: Path) -> None:
    """Files carry NiFi's attributes and a RECEIVE event with a file: URI."""
    runner = TestRunner(
        GetFile(input_directory=str(tree), keep_source_file=True, file_filter=r"c\.txt")
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals("CCC")
    out.assert_attribute_equals("path", "sub/")
    out.assert_attribute_equals("absolute.path", str(tree / "sub") + "/")
    out.assert_attribute_equals("file.size", "3")
    out.assert_attribute_equals("file.permissions", "rw-r--r--")
    for key in (
        "file.owner",
        "file.group",
        "file.lastModifiedTime",
        "file.creationTime",
        "file.lastAccessTime",
    ):
        out.assert_attribute_exists(key)
    (event,) = runner.provenance_events
    assert event.event_type is ProvenanceEventType.RECEIVE
    assert event.transit_uri == (tree / "sub" / "c.txt").as_uri()
    top = TestRunner(
        GetFile(input_directory=str(tree), keep_source_file=True, file_filter=r"a\.txt")
    )
    top.run()
    top.flowfiles_for("success")[0].assert_attribute_equals("path", "/")


def test_filters(tree: Path) -> None:
    """File Filter, Path Filter, recursion, hidden files and size limits select files."""
    cases = [
        ({"file_filter": r".*\.txt"}, ["a.txt", "c.txt", "d.txt"]),
        ({"recurse_subdirectories": False}, ["a.txt", "b.log"]),
        ({"path_filter": r"sub.*"}, ["c.txt", "d.txt"]),
        (
            {"ignore_hidden_files": False, "file_filter": ".*"},
            [".hidden", "a.txt", "b.log", "c.txt", "d.txt"],
        ),
        ({"minimum_file_size": "2 B", "maximum_file_size": "3 B"}, ["b.log", "c.txt"]),
        ({"minimum_file_age": "1 hour"}, []),
    ]
    for properties, expected in cases:
        runner = TestRunner(GetFile(input_directory=str(tree), keep_source_file=True, **properties))
        runner.run()
        assert names(runner) == expected, properties


def test_maximum_age(tree: Path) -> None:
    """Files older than Maximum File Age are skipped."""
    old = tree / "a.txt"
    os.utime(old, (0, 0))
    runner = TestRunner(
        GetFile(input_directory=str(tree), keep_source_file=True, maximum_file_age="1 day")
    )
    runner.run()
    assert "a.txt" not in names(runner)


def test_batch_size_and_exactly_once_listing(tree: Path) -> None:
    """Batch Size caps each trigger; the listing state never repeats a file, even when kept."""
    runner = TestRunner(GetFile(input_directory=str(tree), keep_source_file=True, batch_size=3))
    runner.run(1, stop_on_finish=False)
    assert len(runner.flowfiles_for("success")) == 3
    runner.run(3)
    assert names(runner) == ["a.txt", "b.log", "c.txt", "d.txt"]
    assert len(runner.state) == 4


def test_changed_file_is_picked_up_again(tree: Path) -> None:
    """A kept file that changes (size or mtime) is ingested again."""
    runner = TestRunner(
        GetFile(input_directory=str(tree), keep_source_file=True, file_filter=r"a\.txt")
    )
    runner.run()
    (tree / "a.txt").write_text("AAAA")
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"A", b"AAAA"]


def test_source_is_deleted_only_after_commit(tree: Path) -> None:
    """Without Keep Source File the file disappears once its FlowFile is committed."""
    runner = TestRunner(GetFile(input_directory=str(tree), file_filter=r"a\.txt"))
    runner.run()
    assert not (tree / "a.txt").exists()
    runner.flowfiles_for("success")[0].assert_content_equals("A")


def test_leftover_of_a_crash_is_cleaned_not_duplicated(tree: Path) -> None:
    """A file already recorded as ingested (crash before delete) is deleted, not re-ingested."""
    runner = TestRunner(GetFile(input_directory=str(tree), file_filter=r"a\.txt"))
    info = (tree / "a.txt").stat()
    runner.set_state(
        {str((tree / "a.txt").resolve()): f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"}
    )
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert not (tree / "a.txt").exists()


def test_missing_directory_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """A missing Input Directory is invalid (NiFi's validator), naming the absolute path; one
    removed after the processor was validated yields nothing and is logged."""
    runner = TestRunner(GetFile(input_directory=str(tmp_path / "nope")))
    runner.assert_not_valid()
    assert f"Directory {tmp_path / 'nope'} does not exist" in str(runner.validation_problems()[0])
    (tmp_path / "gone").mkdir()
    runner = TestRunner(GetFile(input_directory=str(tmp_path / "gone")))
    runner.assert_valid()
    (tmp_path / "gone").rmdir()
    runner.trigger_once()
    assert runner.flowfiles_for("success") == []


def test_input_directory_relative_or_with_el(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative Input Directory is checked from the working directory, which the message names;
    one with Expression Language is checked only when the flow runs; a file is no directory."""
    monkeypatch.chdir(tmp_path)
    problem = str(TestRunner(GetFile(input_directory="in")).validation_problems()[0])
    assert f"Directory {tmp_path / 'in'} (relative to the working directory {tmp_path})" in problem
    (tmp_path / "in").mkdir()
    TestRunner(GetFile(input_directory="in")).assert_valid()
    TestRunner(GetFile(input_directory="${NO_SUCH_VARIABLE}/in")).assert_valid()
    (tmp_path / "file.txt").write_text("x")
    problem = str(TestRunner(GetFile(input_directory="file.txt")).validation_problems()[0])
    assert "does not point to a directory" in problem


def test_polling_interval(tree: Path) -> None:
    """As NiFi's file queue: one listing is handed out Batch Size files per trigger; a new
    listing (which sees files added since) waits for the Polling Interval (harness clock)."""
    runner = TestRunner(
        GetFile(
            input_directory=str(tree), keep_source_file=True, batch_size=1, polling_interval="1 min"
        )
    )
    runner.run(3, stop_on_finish=False)
    assert len(runner.flowfiles_for("success")) == 3
    runner.run(1, stop_on_finish=False)
    assert len(runner.flowfiles_for("success")) == 4  # the listing is used up
    (tree / "late.txt").write_text("L")
    runner.run(1, stop_on_finish=False)
    assert len(runner.flowfiles_for("success")) == 4  # no new listing within the interval
    runner.advance_time(61)
    runner.run()
    assert "late.txt" in names(runner)
    assert len(runner.flowfiles_for("success")) == 5


def test_links_never_lead_to_changes_outside_the_directory(tmp_path: Path) -> None:
    """A link to a file outside is ingested with the target's content; only the link is
    deleted. A link to a directory outside is not followed; a dangling link is skipped."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import PutFile

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_bytes(b"keep me")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.txt").write_bytes(b"not mine")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "own.txt").write_bytes(b"own")
    (inputs / "link.txt").symlink_to(outside / "precious.txt")
    (inputs / "dir").symlink_to(outside / "sub", target_is_directory=True)
    (inputs / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    flow = Flow("links")
    get = flow.add(GetFile(input_directory=str(inputs), keep_source_file=False), name="get")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {"own.txt": b"own", "link.txt": b"keep me"}
    assert (outside / "precious.txt").read_bytes() == b"keep me"
    assert (outside / "sub" / "deep.txt").read_bytes() == b"not mine"
    assert sorted(p.name for p in inputs.iterdir()) == ["dangling.txt", "dir"]


def test_pending_work_counts_what_is_left_as_the_state_changes(tree: Path) -> None:
    """pending_work counts the listed files not handed out, not in flight and not kept before,
    exactly, as files are handed out, committed, requeued and listed again."""
    from flowcore.processor.kinds import PendingWork
    from flowcore.session.external_files import fingerprint

    runner = TestRunner(GetFile(input_directory=str(tree), keep_source_file=True, batch_size=1))
    processor, context = runner.processor, runner.context
    assert processor.pending_work(context, {}) is None  # nothing listed yet
    first = processor.list_work(context, {})
    assert [i.key for i in first.items] == [str(tree / "a.txt")]
    assert processor.pending_work(context, first.state) == PendingWork(3, 9)
    kept = {str(tree / "b.log"): fingerprint(tree / "b.log")}  # an earlier run's, committed
    assert processor.pending_work(context, kept) == PendingWork(2, 7)
    second = processor.list_work(context, kept)
    assert [i.key for i in second.items] == [str(tree / "sub" / "c.txt")]
    assert processor.pending_work(context, second.state) == PendingWork(1, 4)
    state = processor.requeue_work(second.state, first.items, {})  # a.txt's read failed
    assert processor.pending_work(context, state) == PendingWork(1, 4)  # listed again later
    third = processor.list_work(context, state)
    assert processor.pending_work(context, third.state) == PendingWork(0, 0)
    fourth = processor.list_work(context, third.state)  # a new listing: a.txt again
    assert [i.key for i in fourth.items] == [str(tree / "a.txt")]
    # b.log is kept, c.txt and d.txt are in flight (not committed): none is left to read.
    assert processor.pending_work(context, fourth.state) == PendingWork(0, 0)
    assert processor.pending_work(context, {}) == PendingWork(1, 2)  # b.log, if not kept


def _listed(path: Path) -> WorkItem:
    """The work item GetFile's listing makes for *path*."""
    key = path_key(os.path.abspath(path))
    payload = {"root": str(path.parent), "fingerprint": fingerprint(path)}
    return WorkItem(key, payload, flowfiles=1, size=path.stat().st_size)


def test_block_reads_cut_a_file_for_split_text(tmp_path: Path) -> None:
    """A file for SplitText becomes one item per block, numbered and counted across the file."""
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1_000)))
    items = GetFile(input_directory=str(tmp_path)).block_reads(
        _listed(path), SplitText(line_split_count=1), frozenset({"original", "failure"}), 3
    )
    assert items is not None
    views = [BlockView.of_payload(i.payload[PAYLOAD_KEY]) for i in items]
    assert [(v.index, v.blocks, v.count, v.size) for v in views if v] == [
        (n, 3, 1_000, path.stat().st_size) for n in range(3)
    ]
    assert sum(i.size for i in items) == path.stat().st_size


@pytest.mark.parametrize(
    ("splitter", "dropped"),
    [
        (SplitText(line_split_count=1, header_line_marker_characters="#"), frozenset({"original"})),
        (SplitText(line_split_count=1, maximum_fragment_size="1 KB"), frozenset({"original"})),
        (SplitText(line_split_count=1), frozenset({"failure"})),
    ],
)
def test_block_reads_refuse_what_blocks_would_change(
    tmp_path: Path, splitter: SplitText, dropped: frozenset[str]
) -> None:
    """A header found by its marker, a size limit or a connected original: one task (None)."""
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1_000)))
    getter = GetFile(input_directory=str(tmp_path))
    assert getter.block_reads(_listed(path), splitter, dropped, 3) is None
    assert getter.block_refusal(splitter, dropped) is not None


def test_block_reads_carry_the_header_to_every_block(tmp_path: Path) -> None:
    """With Header Line Count, each block's item holds the header the driver read once."""
    path = tmp_path / "big.log"
    path.write_bytes(b"h1\r\nh2\n" + b"".join(b"line %d\n" % i for i in range(1_000)))
    items = GetFile(input_directory=str(tmp_path)).block_reads(
        _listed(path),
        SplitText(line_split_count=10, header_line_count=2),
        frozenset({"original", "failure"}),
        3,
    )
    assert items is not None
    views = [BlockView.of_payload(i.payload[PAYLOAD_KEY]) for i in items]
    assert [(v.header, v.header_trimmed, v.count) for v in views if v] == [
        (b"h1\r\nh2\n", 6, 100)
    ] * 3
    assert views[1] is not None
    assert views[1].start > 7
