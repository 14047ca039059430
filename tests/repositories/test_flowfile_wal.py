"""Tests for the write-ahead FlowFile repository: commits, recovery rules, a crash state machine."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim
from repositories.flowfile_wal import WriteAheadFlowFileRepository, iter_queue
from repositories.protocols import FlowFileRepository
from repositories.records import Transaction


def enqueue(repo: WriteAheadFlowFileRepository, queue: str, n: int = 2, **txn: object) -> str:
    ids = repo.next_flowfile_ids(n)
    summary = repo.write_segment(queue, [FlowFile.create(i, 0, {"n": str(i)}) for i in ids])
    repo.commit(Transaction(enqueued=[summary], **txn))  # type: ignore[arg-type]
    return summary.segment_id


def queues(repo: WriteAheadFlowFileRepository) -> dict[str, list[str]]:
    return {q: [s.segment_id for s in repo.segments(q)] for q in repo.queue_ids()}


def test_satisfies_the_protocol(tmp_path: Path) -> None:
    """The durable repository implements the FlowFileRepository protocol."""
    assert isinstance(WriteAheadFlowFileRepository(tmp_path), FlowFileRepository)


def test_commits_survive_a_crash(tmp_path: Path) -> None:
    """Committed queues, state and pending provenance come back after an unclean stop."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    first = enqueue(repo, "q1", state={"GetFile": {"seen": "a"}}, provenance_files=["events-1"])
    second = enqueue(repo, "q1")
    repo.commit(Transaction(dequeued=[first]))
    recovered = WriteAheadFlowFileRepository(tmp_path)  # no close(): a crash
    assert queues(recovered) == {"q1": [second]}
    assert recovered.state("GetFile") == {"seen": "a"}
    assert recovered.pending_provenance == ("events-1",)
    assert [f.attributes["n"] for f in iter_queue(recovered, "q1")] == ["3", "4"]
    assert recovered.next_flowfile_ids(1).start >= 5
    recovered.mark_provenance_indexed(["events-1"])
    assert WriteAheadFlowFileRepository(tmp_path).pending_provenance == ()


def test_dequeued_segment_files_are_deleted_at_the_next_checkpoint(tmp_path: Path) -> None:
    """A consumed segment's file stays until a checkpoint no longer names it."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    segment = enqueue(repo, "q")
    path = repo.segment_dir / f"{segment}.seg"
    repo.commit(Transaction(dequeued=[segment]))
    assert path.exists()
    repo.checkpoint()
    assert not path.exists()


def test_invalid_transactions_change_nothing(tmp_path: Path) -> None:
    """Unknown dequeues, double enqueues and unwritten segments are refused."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    segment = enqueue(repo, "q")
    summary = repo.segments("q")[0]
    with pytest.raises(RepositoryError, match="not queued"):
        repo.commit(Transaction(dequeued=["ghost"]))
    with pytest.raises(RepositoryError, match="already queued"):
        repo.commit(Transaction(enqueued=[summary]))
    ghost = summary.__class__("never-written", "q", 1, 0)
    with pytest.raises(RepositoryError, match="never written"):
        repo.commit(Transaction(enqueued=[ghost]))
    assert queues(repo) == {"q": [segment]}


def test_orphan_segments_are_swept_at_start(tmp_path: Path) -> None:
    """Segments no commit named (failed task attempts) are removed when the repository starts."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    kept = enqueue(repo, "q")
    orphan = repo.write_segment("q", [FlowFile.create(99, 0)])
    (repo.segment_dir / "half.seg.part").write_bytes(b"x")
    assert [f.problem for f in repo.check()].count(
        "orphan segment file (no queue references it)"
    ) == 2
    recovered = WriteAheadFlowFileRepository(tmp_path)
    names = sorted(p.name for p in recovered.segment_dir.iterdir())
    assert names == [f"{kept}.seg"]
    assert orphan.segment_id not in names
    assert recovered.check() == []


def test_a_crashed_runs_shuffle_spills_are_removed_at_start(tmp_path: Path) -> None:
    """Records a shuffle's map tasks left for a job that never ended go when the repository
    starts; read-only opens leave them."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    kept = enqueue(repo, "q")
    spilled = repo.shuffle_dir / "0123456789abcdef" / "seg-1"
    spilled.parent.mkdir(parents=True)
    spilled.write_bytes(b"records")
    WriteAheadFlowFileRepository(tmp_path, read_only=True)
    assert spilled.exists()
    recovered = WriteAheadFlowFileRepository(tmp_path)
    assert not recovered.shuffle_dir.exists()
    assert sorted(p.name for p in recovered.segment_dir.iterdir()) == [f"{kept}.seg"]


def test_checkpoint_and_partial_both_present(tmp_path: Path) -> None:
    """With checkpoint and checkpoint.partial, the partial is discarded (old snapshot wins)."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    segment = enqueue(repo, "q")
    (tmp_path / "checkpoint.partial").write_bytes(b"half-written garbage")
    recovered = WriteAheadFlowFileRepository(tmp_path)
    assert queues(recovered) == {"q": [segment]}
    assert not (tmp_path / "checkpoint.partial").exists()
    assert any("interrupted checkpoint" in w for w in recovered.warnings)


def test_only_partial_is_used(tmp_path: Path) -> None:
    """A lone checkpoint.partial (crash before the rename) is the snapshot."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    segment = enqueue(repo, "q")
    repo.checkpoint()
    repo.close()
    os.replace(tmp_path / "checkpoint", tmp_path / "checkpoint.partial")
    recovered = WriteAheadFlowFileRepository(tmp_path)
    assert queues(recovered) == {"q": [segment]}
    assert (tmp_path / "checkpoint").exists()


def test_empty_checkpoint_is_skipped(tmp_path: Path) -> None:
    """A zero-byte checkpoint is skipped with a warning; the journals still recover."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    (tmp_path / "checkpoint").write_bytes(b"")
    segment = enqueue(repo, "q")
    recovered = WriteAheadFlowFileRepository(tmp_path)
    assert queues(recovered) == {"q": [segment]}
    assert any("empty" in w for w in recovered.warnings)


def test_corrupt_journal_refuses_to_start_and_changes_nothing(tmp_path: Path) -> None:
    """Damage that is not a torn tail stops recovery, naming the file; no file is touched."""
    repo = WriteAheadFlowFileRepository(tmp_path, checkpoint_every=1000)
    enqueue(repo, "q")
    enqueue(repo, "q")
    (journal,) = repo.journals.iterdir()
    data = bytearray(journal.read_bytes())
    data[30] ^= 0xFF
    journal.write_bytes(bytes(data))
    (tmp_path / "checkpoint.partial").write_bytes(b"x")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(WalCorruptionError, match=journal.name):
        WriteAheadFlowFileRepository(tmp_path)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_torn_tail_and_zeros_recover_with_warnings(tmp_path: Path) -> None:
    """A torn last transaction is dropped; trailing zeros are ignored; both are reported."""
    repo = WriteAheadFlowFileRepository(tmp_path, checkpoint_every=1000)
    kept = enqueue(repo, "q")
    enqueue(repo, "q")
    (journal,) = repo.journals.iterdir()
    journal.write_bytes(journal.read_bytes()[:-3] + b"\x00" * 100)
    recovered = WriteAheadFlowFileRepository(tmp_path)
    assert queues(recovered) == {"q": [kept]}
    assert recovered.warnings


def test_check_reports_damaged_segments(tmp_path: Path) -> None:
    """check() names a queued segment whose file is missing."""
    repo = WriteAheadFlowFileRepository(tmp_path)
    segment = enqueue(repo, "q")
    (repo.segment_dir / f"{segment}.seg").unlink()
    (finding,) = repo.check()
    assert segment in finding.location
    assert "missing" in finding.problem


class WalMachine(RuleBasedStateMachine):
    """Random commits, checkpoints and crashes; the recovered queues always equal a model."""

    @initialize()
    def start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="wal-machine-"))
        self.repo = WriteAheadFlowFileRepository(self.dir, checkpoint_every=4)
        self.model: dict[str, list[str]] = {}
        self.state_model: dict[str, dict[str, str]] = {}
        self.base = self._snapshot()
        self.log: list[tuple[int, tuple]] = []  # (journal bytes after commit, model after it)

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _snapshot(self) -> tuple:
        return (
            {q: list(s) for q, s in self.model.items()},
            {c: dict(v) for c, v in self.state_model.items()},
        )

    def _after_commit(self) -> None:
        if self.repo._since_checkpoint == 0:  # the commit triggered a checkpoint
            self.base, self.log = self._snapshot(), []
        else:
            self.log.append((self.repo._journal_bytes, self._snapshot()))

    @rule(queue=st.sampled_from(["a", "b", "c"]), n=st.integers(0, 5))
    def enqueue(self, queue: str, n: int) -> None:
        segment = enqueue(self.repo, queue, n)
        self.model.setdefault(queue, []).append(segment)
        self._after_commit()

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data(), move_to=st.sampled_from(["a", "b", "c", None]))
    def dequeue(self, data: st.DataObject, move_to: str | None) -> None:
        queue = data.draw(st.sampled_from(sorted(q for q, s in self.model.items() if s)))
        segment = self.model[queue][0]
        enqueued = []
        if move_to is not None:
            flowfiles = self.repo.read_segment(segment)
            enqueued = [self.repo.write_segment(move_to, flowfiles)]
        self.repo.commit(Transaction(dequeued=[segment], enqueued=enqueued))
        self.model[queue].pop(0)
        if not self.model[queue]:
            del self.model[queue]
        for summary in enqueued:
            self.model.setdefault(summary.queue_id, []).append(summary.segment_id)
        self._after_commit()

    @rule(component=st.sampled_from(["GetFile", "Counter"]), value=st.text(max_size=3) | st.none())
    def set_state(self, component: str, value: str | None) -> None:
        state = None if value is None else {"v": value}
        self.repo.commit(Transaction(state={component: state}))
        if state is None:
            self.state_model.pop(component, None)
        else:
            self.state_model[component] = state
        self._after_commit()

    @rule()
    def checkpoint(self) -> None:
        self.repo.checkpoint()
        self.base, self.log = self._snapshot(), []

    @rule(
        kind=st.sampled_from(["truncate", "zeros", "partial", "unrenamed", "none"]), data=st.data()
    )
    def crash_and_recover(self, kind: str, data: st.DataObject) -> None:
        self.repo._journal.close()  # die without the completion marker
        (journal,) = self.repo.journals.iterdir()
        size = journal.stat().st_size
        survived = self.log[-1][1] if self.log else self.base
        if kind == "truncate":
            cut = data.draw(st.integers(14, size))
            with open(journal, "r+b") as f:
                f.truncate(cut)
            survived = next((m for end, m in reversed(self.log) if end <= cut), self.base)
        elif kind == "zeros":
            with open(journal, "ab") as f:
                f.write(b"\x00" * data.draw(st.integers(1, 4096)))
        elif kind == "partial":
            (self.dir / "checkpoint.partial").write_bytes(b"interrupted")
        elif kind == "unrenamed":
            os.replace(self.dir / "checkpoint", self.dir / "checkpoint.partial")
        self.repo = WriteAheadFlowFileRepository(self.dir, checkpoint_every=4)
        self.model = {q: list(s) for q, s in survived[0].items()}
        self.state_model = {c: dict(v) for c, v in survived[1].items()}
        self.base, self.log = self._snapshot(), []

    @invariant()
    def queues_equal_the_model(self) -> None:
        assert queues(self.repo) == {q: s for q, s in self.model.items() if s}
        for component in ("GetFile", "Counter"):
            assert self.repo.state(component) == self.state_model.get(component, {})

    @invariant()
    def every_queued_segment_is_readable(self) -> None:
        assert self.repo.check() == []


TestWalMachine = WalMachine.TestCase
TestWalMachine.settings = settings(
    max_examples=int(os.environ.get("WAL_MACHINE_EXAMPLES", "60")),
    stateful_step_count=25,
    deadline=None,
)


def test_referenced_claims_count_every_queued_flowfile_without_reading_segments(
    tmp_path: Path,
) -> None:
    """Claimant counts come from the summaries: FlowFiles sharing a claim each count once."""
    shared = ResourceClaim("default", "1", "shared")
    other = ResourceClaim("default", "2", "other")
    repo = WriteAheadFlowFileRepository(tmp_path)
    ids = iter(repo.next_flowfile_ids(4))
    contents = [ContentClaim(shared, 0, 1), ContentClaim(shared, 1, 1), ContentClaim(other, 0, 1)]
    first = repo.write_segment("a", [FlowFile.create(next(ids), 0, content=c) for c in contents])
    second = repo.write_segment("b", [FlowFile.create(next(ids), 0, content=contents[0])])
    repo.commit(Transaction(enqueued=[first, second]))
    for path in repo.segment_dir.iterdir():
        path.unlink()  # proves no segment is read
    assert WriteAheadFlowFileRepository(tmp_path).referenced_claims() == {shared: 3, other: 1}


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under *root* with its bytes (to prove nothing changed)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _queued_after_checkpoint(tmp_path: Path) -> WriteAheadFlowFileRepository:
    """A log with FlowFiles queued before its last checkpoint and transactions after it."""
    repo = WriteAheadFlowFileRepository(tmp_path, checkpoint_every=1000)
    enqueue(repo, "q")
    enqueue(repo, "q")
    repo.checkpoint()
    enqueue(repo, "q")
    repo.close()
    return repo


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_a_missing_checkpoint_with_queued_flowfiles_refuses_to_start(
    tmp_path: Path, damage: str
) -> None:
    """A deleted or emptied checkpoint is not a new repository: the start refuses, naming the
    file and the fix, and changes nothing on disk; check --fix accepts the loss, reporting it."""
    _queued_after_checkpoint(tmp_path)
    checkpoint = tmp_path / "checkpoint"
    if damage == "deleted":
        checkpoint.unlink()
    else:
        checkpoint.write_bytes(b"")
    before = _tree(tmp_path)
    with pytest.raises(WalCorruptionError, match=r"checkpoint is (missing|empty).*check --fix"):
        WriteAheadFlowFileRepository(tmp_path)
    assert _tree(tmp_path) == before
    accepted = WriteAheadFlowFileRepository(tmp_path, accept_loss=True)
    assert accepted.losses
    assert "checkpoint" in accepted.losses[0]


def test_a_deleted_journal_refuses_to_start(tmp_path: Path) -> None:
    """The journal after the checkpoint deleted: its transactions would be lost; refused."""
    repo = _queued_after_checkpoint(tmp_path)
    (journal,) = repo.journals.iterdir()
    journal.unlink()
    before = _tree(tmp_path)
    with pytest.raises(WalCorruptionError, match=r"\.journal is missing"):
        WriteAheadFlowFileRepository(tmp_path)
    assert _tree(tmp_path) == before


def test_a_new_repository_starts_empty(tmp_path: Path) -> None:
    """A directory with no state files at all is a new repository, not a damaged one."""
    repo = WriteAheadFlowFileRepository(tmp_path / "new")
    assert queues(repo) == {}
    assert (tmp_path / "new" / "checkpoint").exists()


def test_read_only_recovery_writes_nothing(tmp_path: Path) -> None:
    """read_only recovers the queues in memory and leaves every file as it was."""
    _queued_after_checkpoint(tmp_path)
    (tmp_path / "segments" / "orphan.seg").write_bytes(b"x")
    before = _tree(tmp_path)
    repo = WriteAheadFlowFileRepository(tmp_path, read_only=True)
    assert len(queues(repo)["q"]) == 3
    assert _tree(tmp_path) == before


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_any_flipped_byte_is_refused_or_only_the_last_transaction_is_lost(
    data: st.DataObject,
) -> None:
    """Flip one byte anywhere in a journal of five transactions: recovery refuses loudly, or
    (damage inside the last transaction) recovers exactly the four before it. Never fewer."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = WriteAheadFlowFileRepository(root, checkpoint_every=1000)
        segments = [enqueue(repo, "q") for _ in range(5)]
        repo._journal.close()
        (journal,) = repo.journals.iterdir()
        raw = bytearray(journal.read_bytes())
        position = data.draw(st.integers(0, len(raw) - 1))
        raw[position] ^= data.draw(st.integers(1, 255))
        journal.write_bytes(bytes(raw))
        try:
            recovered = WriteAheadFlowFileRepository(root)
        except WalCorruptionError:
            return
        got = queues(recovered).get("q", [])
        assert got in (segments, segments[:4])
