"""Reading a repository for the UI: queue pages from the segments they fall in, no lock taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.flowfile import FlowFile
from flowcore.ui import reading
from flowcore.ui.reading import RepositoryView, UnknownItemError
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.locks import try_lock
from repositories.records import Transaction
from tests.flowcore.ui.conftest import repository_of

SEGMENTS = 3
PER_SEGMENT = 40


@pytest.fixture
def queued(tmp_path: Path) -> Path:
    """A repository whose queue ``q`` holds 3 segments of 40 FlowFiles, committed in its log."""
    log = WriteAheadFlowFileRepository(tmp_path / "flowfile", sync=False)
    summaries = []
    for segment in range(SEGMENTS):
        flowfiles = [
            FlowFile.create(n, 1_000, {"filename": f"f{n}"})
            for n in range(segment * PER_SEGMENT, (segment + 1) * PER_SEGMENT)
        ]
        summaries.append(log.write_segment("q", flowfiles))
    log.commit(Transaction(enqueued=summaries))
    log.close()
    return tmp_path


def test_a_page_reads_only_the_segments_it_falls_in(queued: Path, monkeypatch) -> None:
    """Offset 85 of 3 x 40 reads the third segment alone, and returns positions 86..90."""
    view = RepositoryView(queued)
    read: list[str] = []
    original = reading.read_segment_range

    def counting(path, start, stop):
        read.append(path.name)
        return original(path, start, stop)

    monkeypatch.setattr(reading, "read_segment_range", counting)
    page = view.list_queue("q", offset=85, limit=5)
    assert [f.position for f in page.flowfiles] == [86, 87, 88, 89, 90]
    assert [f.filename for f in page.flowfiles] == [f"f{n}" for n in range(85, 90)]
    assert (page.total_flowfiles, len(read)) == (120, 1)


def test_a_page_across_two_segments_and_past_the_end(queued: Path) -> None:
    """A page spanning a segment boundary is whole; one past the end is empty."""
    view = RepositoryView(queued)
    across = view.list_queue("q", offset=35, limit=10)
    assert [f.position for f in across.flowfiles] == list(range(36, 46))
    assert view.list_queue("q", offset=500).flowfiles == ()
    assert view.list_queue("absent").total_flowfiles == 0


def test_the_log_is_read_again_once_it_changes(queued: Path) -> None:
    """A commit after the first read (a live run) shows at the next listing."""
    view = RepositoryView(queued)
    assert view.list_queue("q").total_flowfiles == 120
    log = WriteAheadFlowFileRepository(queued / "flowfile", sync=False)
    first = log.segments("q")[0].segment_id
    log.commit(Transaction(dequeued=[first]))
    log.close()
    assert view.list_queue("q").total_flowfiles == 80


def test_a_flowfile_is_found_by_uuid_and_a_gone_one_is_unknown(queued: Path) -> None:
    """The FlowFile dialog finds a queued FlowFile; an unknown uuid raises UnknownItemError."""
    view = RepositoryView(queued)
    row = view.list_queue("q", offset=50, limit=1).flowfiles[0]
    queue, flowfile = view.flowfile(row.uuid)
    assert (queue, flowfile.attributes["filename"]) == ("q", "f50")
    with pytest.raises(UnknownItemError):
        view.flowfile("no-such-uuid")


def test_reads_beside_a_run_holding_the_lock(ran) -> None:
    """With the repository's lock held (a live run), the view still lists and searches."""
    directory = repository_of(ran)
    lock = try_lock(directory / "lock")
    assert lock is not None
    try:
        view = RepositoryView(directory)
        assert view.list_queue("tag:success->put").total_flowfiles == 6
        assert list(view.events(filename="doc.json"))
        assert view.status()["holder"] is not None
        view.close()
    finally:
        lock.close()


def test_a_lookup_without_a_listing_reads_a_bounded_number(queued: Path, monkeypatch) -> None:
    """Past MAX_SCANNED FlowFiles a lookup stops and says to list the queue first."""
    monkeypatch.setattr(reading, "MAX_SCANNED", PER_SEGMENT)
    last = RepositoryView(queued).list_queue("q", offset=110, limit=1).flowfiles[0].uuid
    with pytest.raises(UnknownItemError, match="list its queue first"):
        RepositoryView(queued).flowfile(last)  # a new view: no listing has shown it
