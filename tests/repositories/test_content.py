"""Tests for the file content repository."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from flowcore.errors import ContentCorruptionError, ContentNotFoundError, RepositoryError
from flowcore.flowfile import ContentClaim, ResourceClaim, Rope
from repositories._claim_checksums import BLOCK_SIZE, MAGIC, footer_size
from repositories.content import SEALED_SUFFIX, FileContentRepository
from repositories.protocols import ContentRepository


def write(repo: FileContentRepository, chunks: list[bytes], owner: str = "task-1") -> list:
    writer = repo.writer(owner)
    claims = []
    for data in chunks:
        stream = writer.open_stream()
        stream.write(data)
        claims.append(stream.close())
    writer.close()
    return claims


def test_satisfies_the_protocol(tmp_path: Path) -> None:
    """The file repository implements the ContentRepository protocol."""
    assert isinstance(FileContentRepository(tmp_path), ContentRepository)


def test_claims_pack_into_files_and_read_back(tmp_path: Path) -> None:
    """Small contents share a claim file until the appendable size; each reads back exactly."""
    repo = FileContentRepository(tmp_path, max_appendable_size=10)
    claims = write(repo, [b"aaaa", b"bbbb", b"cccc", b"dd"])
    assert claims[0].resource_claim == claims[2].resource_claim
    assert claims[3].resource_claim != claims[0].resource_claim
    assert [repo.read(c) for c in claims] == [b"aaaa", b"bbbb", b"cccc", b"dd"]
    path = repo.path_of(claims[0].resource_claim)
    assert path.parent.parent == tmp_path
    assert int(path.parent.name) < 1024
    assert "task-1" in path.name


def test_streams_read_ranges(tmp_path: Path) -> None:
    """A read stream covers only its range, in pieces or by lines."""
    repo = FileContentRepository(tmp_path)
    first, second = write(repo, [b"line1\nline2\n", b"other"])
    with repo.open(first) as stream:
        assert stream.readline() == b"line1\n"
        assert stream.read(3) == b"lin"
        assert stream.read() == b"e2\n"
        assert stream.read() == b""
    assert repo.read(second) == b"other"


def test_content_is_readable_while_its_writer_stays_open(tmp_path: Path) -> None:
    """Closed streams are not flushed one by one; reading or sizing their claim flushes it."""
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("task-1")
    claims = []
    for data in (b"first", b"second"):
        stream = writer.open_stream()
        stream.write(data)
        claims.append(stream.close())
    resource = claims[0].resource_claim
    assert repo.path_of(resource).stat().st_size == 0  # still in the writer's buffer
    assert repo.size_of(resource) == len(b"firstsecond")
    assert [repo.read(c) for c in claims] == [b"first", b"second"]
    stream = writer.open_stream()
    stream.write(b"third")
    third = stream.close()
    assert repo.read(third) == b"third"
    writer.close()


def test_containers_round_robin(tmp_path: Path) -> None:
    """Several containers are used in turn."""
    repo = FileContentRepository([tmp_path / "disk1", tmp_path / "disk2"], max_appendable_size=1)
    claims = write(repo, [b"a", b"b", b"c"])
    assert {c.resource_claim.container for c in claims} == {"c0", "c1"}


def test_counts_gate_removal_and_missing_content_is_clear(tmp_path: Path) -> None:
    """Only unclaimed, finished claim files are removed; reading removed content names it."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    repo.increment_claimant_count(claim.resource_claim)
    assert not repo.remove(claim.resource_claim)
    repo.decrement_claimant_count(claim.resource_claim)
    assert repo.remove(claim.resource_claim)
    with pytest.raises(ContentNotFoundError, match="no longer in the content repository"):
        repo.read(claim)
    with pytest.raises(RepositoryError, match="unknown container"):
        repo.path_of(ResourceClaim("elsewhere", "1", "x"))


def test_open_writer_file_is_not_removed(tmp_path: Path) -> None:
    """A claim file still being appended to is never removed, even at zero claimants."""
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("w")
    stream = writer.open_stream()
    stream.write(b"x")
    claim = stream.close()
    assert not repo.remove(claim.resource_claim)
    writer.close()
    assert repo.remove(claim.resource_claim)


def test_check_reports_missing_files(tmp_path: Path) -> None:
    """check() lists claimed files that are gone; fix cannot invent them, so they stay listed."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    repo.increment_claimant_count(claim.resource_claim)
    repo.path_of(claim.resource_claim).unlink()
    (finding,) = repo.check()
    assert "1 claimants but the file is missing" in finding.problem
    assert not repo.check(fix=True)[0].fixed
    assert len(repo.check()) == 1


def test_check_archives_unclaimed_files_with_fix(tmp_path: Path) -> None:
    """A live file nothing claims is reported, and archived by check(fix=True)."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    (finding,) = repo.check()
    assert finding.problem == "file that nothing claims"
    assert repo.check(fix=True)[0].fixed
    assert repo.check() == []
    assert repo.archive_path_of(claim.resource_claim).exists()
    assert repo.read(claim) == b"data"


def test_recover_adopts_counts_and_sweeps_unclaimed_files(tmp_path: Path) -> None:
    """At start-up, claimed files stay; files of uncommitted task attempts are archived."""
    repo = FileContentRepository(tmp_path, archive=False)
    kept, orphan = write(repo, [b"keep"], "committed")[0], write(repo, [b"x"], "crashed")[0]
    restarted = FileContentRepository(tmp_path, archive=False)
    findings = restarted.recover({kept.resource_claim: 2})
    assert [f.location for f in findings] == [str(orphan.resource_claim)]
    assert findings[0].problem == "unclaimed file removed"
    assert restarted.claimant_count(kept.resource_claim) == 2
    assert restarted.read(kept) == b"keep"
    assert not restarted.exists(orphan.resource_claim)
    assert restarted.check() == []


def test_recover_reports_claimed_content_that_is_gone(tmp_path: Path) -> None:
    """A FlowFile repository naming a missing claim file is reported, not hidden."""
    repo = FileContentRepository(tmp_path)
    ghost = ResourceClaim("default", "3", "123-gone")
    (finding,) = repo.recover({ghost: 1})
    assert finding.problem == "1 claimants but the file is missing"
    assert not finding.fixed


def test_sweep_orphans_spares_claimed_and_recent_files(tmp_path: Path) -> None:
    """After a commit, only unclaimed files older than the cutoff (dead attempts) are swept."""
    repo = FileContentRepository(tmp_path, archive=False)
    (committed,) = write(repo, [b"c"], "attempt-0")
    (dead,) = write(repo, [b"d"], "attempt-1")
    repo.increment_claimant_count(committed.resource_claim)
    cutoff = int(dead.resource_claim.id.split("-")[0]) + 1
    (running,) = write(repo, [b"r"], "attempt-2")
    running_path = repo.path_of(running.resource_claim)
    later = f"{cutoff + 10}-attempt-2-x"
    running_path.rename(running_path.with_name(later))  # created after the cutoff
    swept = repo.sweep_orphans(created_before=cutoff)
    assert [f.location for f in swept] == [str(dead.resource_claim)]
    assert repo.read(committed) == b"c"
    assert running_path.with_name(later).exists()


def test_cleanup_archives_unclaimed_content_for_replay(tmp_path: Path) -> None:
    """A claim released after commit is archived, still readable, and aged off after 3 hours."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    rc = claim.resource_claim
    repo.increment_claimant_count(rc, 2)
    repo.decrement_claimant_count(rc)
    assert repo.cleanup() == 0
    repo.decrement_claimant_count(rc)
    created = int(rc.id.split("-")[0])
    assert repo.cleanup(now=created) == 1
    assert not repo.path_of(rc).exists()
    assert repo.exists(rc)
    assert repo.read(claim) == b"data"
    repo.cleanup(now=created + 3 * 3_600_000)
    assert repo.exists(rc)
    repo.cleanup(now=created + 3 * 3_600_000 + 1)
    assert not repo.exists(rc)


def test_a_revived_claim_is_not_destroyed(tmp_path: Path) -> None:
    """A claim that regains a claimant before cleanup (a replay) stays live."""
    repo = FileContentRepository(tmp_path, archive=False)
    (claim,) = write(repo, [b"data"])
    repo.increment_claimant_count(claim.resource_claim)
    repo.decrement_claimant_count(claim.resource_claim)
    repo.increment_claimant_count(claim.resource_claim)
    assert repo.cleanup() == 0
    assert repo.read(claim) == b"data"


def test_disk_pressure_ages_off_the_oldest_archive_first(tmp_path: Path) -> None:
    """Above the max usage, archived files go oldest first until 2 points below it."""
    usage = {"used": 0}

    def disk(_path: Path) -> tuple[int, int, int]:
        return 100, usage["used"], 100 - usage["used"]

    repo = FileContentRepository(tmp_path, max_appendable_size=1, disk_usage=disk)
    claims = write(repo, [b"a", b"b", b"c"])
    for c in claims:
        repo.increment_claimant_count(c.resource_claim)
        repo.decrement_claimant_count(c.resource_claim)
    repo.cleanup()

    def age(c: ContentClaim) -> tuple[int, Path]:
        return int(c.resource_claim.id.split("-")[0]), repo.archive_path_of(c.resource_claim)

    archived = sorted(claims, key=age)
    usage["used"] = 95
    real_unlink = Path.unlink

    def unlink_and_free(self: Path, missing_ok: bool = False) -> None:
        real_unlink(self, missing_ok=missing_ok)
        usage["used"] -= 4

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "unlink", unlink_and_free)
        repo.cleanup()
    assert usage["used"] == 87
    assert [repo.exists(c.resource_claim) for c in archived] == [False, False, True]


def test_back_pressure_skips_a_full_container(tmp_path: Path) -> None:
    """A container over max usage + 2 points with archived content gets no new claims."""
    full = tmp_path / "disk1"

    def disk(path: Path) -> tuple[int, int, int]:
        used = 95 if path == full else 10
        return 100, used, 100 - used

    repo = FileContentRepository([full, tmp_path / "disk2"], max_appendable_size=1, disk_usage=disk)
    (claim,) = write(repo, [b"x"])
    repo.increment_claimant_count(claim.resource_claim)
    repo.decrement_claimant_count(claim.resource_claim)
    repo._archive_or_remove(claim.resource_claim)  # archived without the age-off pass
    later = write(repo, [b"a", b"b", b"c", b"d"])
    assert {c.resource_claim.container for c in later} == {"c1"}


def test_when_every_container_is_full_the_writer_ages_off_the_archive(tmp_path: Path) -> None:
    """With no container under the mark, a new claim frees archived content instead of waiting."""
    repo = FileContentRepository(
        tmp_path, max_appendable_size=1, disk_usage=lambda _p: (100, 95, 5)
    )
    (old,) = write(repo, [b"x"])
    repo.increment_claimant_count(old.resource_claim)
    repo.decrement_claimant_count(old.resource_claim)
    repo._archive_or_remove(old.resource_claim)
    (new,) = write(repo, [b"y"])
    assert repo.read(new) == b"y"
    assert not repo.exists(old.resource_claim)


def test_archive_settings_are_validated(tmp_path: Path) -> None:
    """A usage percentage that is not NiFi's 'NN%' form is refused with the setting named."""
    with pytest.raises(RepositoryError, match="archive_max_usage"):
        FileContentRepository(tmp_path, archive_max_usage="0.9")


class ContentGarbageCollection(RuleBasedStateMachine):
    """Random writes, commits, drops, crashes, restarts and cleanups against a claim model."""

    RETENTION_MS = 1_000

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp())
        self.usage = 10
        self.now = time.time_ns() // 1_000_000
        self.queued: dict[int, tuple[ContentClaim, bytes]] = {}
        self.released: dict[ResourceClaim, int] = {}  # claim -> release (drop) time
        self.exempt: set[ResourceClaim] = set()  # lost to disk pressure, allowed
        self.next_id = 0
        self.repo = self._open()

    def _open(self) -> FileContentRepository:
        return FileContentRepository(
            self.root,
            max_appendable_size=16,
            archive_max_retention="1 sec",
            disk_usage=lambda _p: (100, self.usage, 100 - self.usage),
        )

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _counts(self) -> dict[ResourceClaim, int]:
        counts: dict[ResourceClaim, int] = {}
        for claim, _ in self.queued.values():
            counts[claim.resource_claim] = counts.get(claim.resource_claim, 0) + 1
        return counts

    @rule(chunks=st.lists(st.binary(min_size=1, max_size=12), min_size=1, max_size=4))
    def commit_writes(self, chunks: list[bytes]) -> None:
        for claim, data in zip(write(self.repo, chunks, f"t{self.next_id}"), chunks, strict=True):
            self.repo.increment_claimant_count(claim.resource_claim)
            self.released.pop(claim.resource_claim, None)
            self.queued[self.next_id] = (claim, data)
            self.next_id += 1

    @rule(chunks=st.lists(st.binary(min_size=1, max_size=12), min_size=1, max_size=3))
    def crashed_task_writes(self, chunks: list[bytes]) -> None:
        write(self.repo, chunks, "crashed-attempt")

    @precondition(lambda self: self.queued)
    @rule(data=st.data())
    def drop_after_commit(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.queued)))
        claim, _ = self.queued.pop(key)
        rc = claim.resource_claim
        if self.repo.decrement_claimant_count(rc) == 0:
            self.released[rc] = self.now

    @rule(advance=st.integers(0, 700))
    def cleanup(self, advance: int) -> None:
        self.now += advance
        self.repo.cleanup(now=self.now)

    @rule()
    def cleanup_under_disk_pressure(self) -> None:
        self.usage = 95
        self.repo.cleanup(now=self.now)
        self.usage = 10
        self.exempt.update(self.released)

    @rule()
    def restart(self) -> None:
        self.repo = self._open()
        self.repo.recover(self._counts())

    @invariant()
    def queued_content_is_readable(self) -> None:
        for claim, data in self.queued.values():
            assert self.repo.read(claim) == data

    @invariant()
    def unexpired_archive_is_kept(self) -> None:
        for rc in self.released:
            created = int(rc.id.split("-")[0])
            if rc not in self.exempt and self.now - created <= self.RETENTION_MS:
                assert self.repo.exists(rc), rc


TestContentGarbageCollection = ContentGarbageCollection.TestCase
TestContentGarbageCollection.settings = settings(
    max_examples=int(os.environ.get("CONTENT_GC_EXAMPLES", "40")),
    stateful_step_count=30,
    deadline=None,
)


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=20), st.integers(1, 500))
def test_anything_written_reads_back(
    tmp_path_factory, chunks: list[bytes], appendable: int
) -> None:  # type: ignore[no-untyped-def]
    """Whatever the appendable size, every content reads back byte for byte."""
    repo = FileContentRepository(tmp_path_factory.mktemp("content"), max_appendable_size=appendable)
    claims = write(repo, chunks)
    for data, claim in zip(chunks, claims, strict=True):
        assert (repo.read(claim) if claim is not None else b"") == data


@settings(max_examples=int(os.environ.get("RANGE_EXAMPLES", "60")), deadline=None)
@given(
    prefix=st.binary(max_size=50),
    body=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"x" * 70_000]), max_size=8).map(b"".join),
    reads=st.lists(st.tuples(st.booleans(), st.integers(-1, 80_000)), max_size=12),
)
def test_range_streams_behave_like_a_file(
    tmp_path_factory: pytest.TempPathFactory, prefix: bytes, body: bytes, reads: list
) -> None:
    """read(n) and readline(n) over a claim range give exactly what io.BytesIO gives."""
    repo = FileContentRepository(tmp_path_factory.mktemp("ranges"), max_appendable_size=1 << 30)
    writer = repo.writer("w")
    for data in (prefix, body, b"after"):
        stream = writer.open_stream()
        stream.write(data)
        claim = stream.close()
        if data is body:
            wanted = claim
    writer.close()
    if wanted is None:
        return
    expected = io.BytesIO(body)
    with repo.open(wanted) as actual:
        for is_line, size in reads:
            if is_line:
                assert actual.readline(size) == expected.readline(size)
            else:
                assert actual.read(size) == expected.read(size)
        assert actual.read() == expected.read()


def test_readers_share_a_bounded_set_of_descriptors(tmp_path: Path) -> None:
    """Reading many claims keeps at most 64 claim files open; removed content is not served."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1)
    claims = write(repo, [bytes([i]) * 3 for i in range(100)])
    before = len(os.listdir("/proc/self/fd"))
    assert [repo.read(c) for c in claims] == [bytes([i]) * 3 for i in range(100)]
    assert len(os.listdir("/proc/self/fd")) - before <= 64
    repo.read(claims[-1])
    assert repo.remove(claims[-1].resource_claim)
    with pytest.raises(ContentNotFoundError, match="no longer in the content repository"):
        repo.read(claims[-1])


# --- integrity: checksums, damage, check ------------------------------------------------------


def _flip(path: Path, position: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[position] ^= 0x40
    path.write_bytes(bytes(raw))


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_claim_files_are_sealed_with_a_footer_that_size_of_does_not_count(tmp_path: Path) -> None:
    """A retired claim file ends with its checksum footer; size_of gives the data's bytes."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"payload" * 10])
    resource = claim.resource_claim
    assert resource.id.endswith(SEALED_SUFFIX)
    path = repo.path_of(resource)
    assert path.stat().st_size == 70 + footer_size(70)
    assert path.read_bytes().endswith(MAGIC)
    assert repo.size_of(resource) == 70
    assert repo.read(claim) == b"payload" * 10


def test_a_flipped_byte_is_refused_naming_the_claim_block_and_fix(tmp_path: Path) -> None:
    """A flipped byte fails the reads of its block only, naming claim, bytes and what to do."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    chunks = [os.urandom(100_000), os.urandom(100_000), os.urandom(100_000)]
    claims = write(repo, chunks)
    path = repo.path_of(claims[1].resource_claim)
    _flip(path, 150_000)  # block 2 holds bytes 131072..196607: only the middle content
    fresh = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    assert fresh.read(claims[0]) == chunks[0]
    assert fresh.read(claims[2]) == chunks[2]
    with pytest.raises(ContentCorruptionError) as caught:
        fresh.read(claims[1])
    error = caught.value
    assert (error.claim, error.offset, error.length) == (claims[1].resource_claim, 131072, 65536)
    assert str(path) in str(error)
    assert "block 2 (bytes 131072 to 196607)" in error.reason
    assert "flowcore check" in str(error)
    assert isinstance(error, RepositoryError)
    with fresh.open(claims[1]) as stream:  # a stream hands out verified blocks up to the damage
        assert stream.read(30_000) == chunks[1][:30_000]
        with pytest.raises(ContentCorruptionError):
            stream.read()


def test_a_sealed_claim_cut_short_is_refused_whole(tmp_path: Path) -> None:
    """A claim file cut short loses its footer: none of it is trusted, every read says so."""
    repo = FileContentRepository(tmp_path)
    claims = write(repo, [b"a" * 1000, b"b" * 1000])
    path = repo.path_of(claims[0].resource_claim)
    os.truncate(path, 1500)
    fresh = FileContentRepository(tmp_path)
    for claim in claims:
        with pytest.raises(ContentCorruptionError, match="no checksum footer") as caught:
            fresh.read(claim)
        assert caught.value.offset is None  # the whole claim
    fresh.increment_claimant_count(claims[0].resource_claim, 2)
    (finding,) = fresh.check()
    assert "no checksum footer, so it was cut short" in finding.problem
    assert "2 queued FlowFiles reference it" in finding.problem
    assert not finding.fixed


def test_a_range_past_the_recorded_data_is_refused(tmp_path: Path) -> None:
    """A FlowFile range beyond the data the footer records is damage, not a short read."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"0123456789"])
    beyond = ContentClaim(claim.resource_claim, 5, 20)
    with pytest.raises(ContentCorruptionError, match="records in its footer 10 bytes") as caught:
        repo.read(beyond)
    assert (caught.value.offset, caught.value.length) == (10, None)


def test_a_claim_being_written_reads_back_unverified(tmp_path: Path) -> None:
    """The task still appending to a claim reads what it wrote: there is no footer yet."""
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("task")
    stream = writer.open_stream()
    stream.write(b"first")
    first = stream.close()
    assert not repo.path_of(first.resource_claim).read_bytes().endswith(MAGIC)
    assert repo.read(first) == b"first"
    writer.close()
    assert repo.path_of(first.resource_claim).read_bytes().endswith(MAGIC)
    assert FileContentRepository(tmp_path).read(first) == b"first"


def _legacy_claim(repo: FileContentRepository, data: bytes) -> ContentClaim:
    """A claim file as an older flowcore wrote it: no footer, no sealed suffix."""
    resource = ResourceClaim("default", "7", "1700000000000-old-task-0123456789ab")
    path = repo.path_of(resource)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return ContentClaim(resource, 0, len(data))


def test_claims_of_older_flowcores_are_read_reported_and_sealed_by_fix(tmp_path: Path) -> None:
    """Footer-less old claims read as before; check reports them until --fix seals them."""
    repo = FileContentRepository(tmp_path)
    claim = _legacy_claim(repo, b"old bytes " * 10)
    assert repo.read(claim) == b"old bytes " * 10
    with pytest.raises(ContentCorruptionError, match="it was cut short"):
        repo.read(ContentClaim(claim.resource_claim, 90, 50))
    repo.increment_claimant_count(claim.resource_claim)
    before = _tree(tmp_path)
    (finding,) = repo.check()
    assert "without content checksums" in finding.problem
    assert "check --fix" in finding.problem
    assert _tree(tmp_path) == before  # check without --fix changes nothing
    (fixed,) = repo.check(fix=True)
    assert fixed.fixed
    assert repo.check() == []
    assert repo.size_of(claim.resource_claim) == 100
    assert FileContentRepository(tmp_path).read(claim) == b"old bytes " * 10
    _flip(repo.path_of(claim.resource_claim), 3)  # from now on its bytes are verified
    with pytest.raises(ContentCorruptionError, match="block 0"):
        FileContentRepository(tmp_path).read(claim)


def test_check_verifies_every_block_read_only_and_names_the_queues(tmp_path: Path) -> None:
    """check reports damaged blocks, footers and cuts of claimed files, and writes nothing."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1)
    flipped, footer, cut, fine = write(repo, [os.urandom(70_000) for _ in range(4)])
    _flip(repo.path_of(flipped.resource_claim), 69_999)
    _flip(
        repo.path_of(footer.resource_claim), repo.path_of(footer.resource_claim).stat().st_size - 20
    )
    os.truncate(repo.path_of(cut.resource_claim), 1000)
    orphan = write(repo, [b"never committed"], owner="crashed")[0]
    os.truncate(repo.path_of(orphan.resource_claim), 5)  # an attempt killed mid-write
    references = {
        c.resource_claim: {"queue-a": 2, "queue-b": 1} for c in (flipped, footer, cut, fine)
    }
    before = _tree(tmp_path)
    findings = {f.location: f for f in repo.check(references=references)}
    assert _tree(tmp_path) == before
    assert set(findings) == {str(c.resource_claim) for c in (flipped, footer, cut, orphan)}
    assert "1 of 2 blocks do not match" in findings[str(flipped.resource_claim)].problem
    assert "bytes 65536 to 69999" in findings[str(flipped.resource_claim)].problem
    assert "footer is damaged" in findings[str(footer.resource_claim)].problem
    assert "cut short" in findings[str(cut.resource_claim)].problem
    assert "3 queued FlowFiles reference it (queue 'queue-a': 2, queue 'queue-b': 1)" in (
        findings[str(cut.resource_claim)].problem
    )
    assert findings[str(orphan.resource_claim)].problem == "file that nothing claims"
    fixed = repo.check(fix=True, references=references)
    assert [f.fixed for f in fixed if "nothing claims" in f.problem] == [True]
    assert not any(f.fixed for f in fixed if "nothing claims" not in f.problem)


@settings(max_examples=int(os.environ.get("DAMAGE_EXAMPLES", "40")), deadline=None)
@given(
    sizes=st.lists(st.integers(1, 150_000), min_size=1, max_size=5),
    appendable=st.sampled_from([1, 100_000, 1 << 30]),
    where=st.floats(0, 1, exclude_max=True),
)
def test_a_flipped_byte_anywhere_is_never_delivered(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], appendable: int, where: float
) -> None:
    """A flipped byte fails exactly the contents touching its block (all, when in the footer)."""
    root = tmp_path_factory.mktemp("damage")
    repo = FileContentRepository(root, max_appendable_size=appendable)
    chunks = [os.urandom(size) for size in sizes]
    claims = write(repo, chunks)
    target = claims[0].resource_claim
    path = repo.path_of(target)
    position = int(where * path.stat().st_size)
    # the data's length from the sound file: a damaged footer no longer tells it
    in_data = position < repo.size_of(target)  # type: ignore[operator]
    _flip(path, position)
    fresh = FileContentRepository(root, max_appendable_size=appendable)
    for data, claim in zip(chunks, claims, strict=True):
        block = position // BLOCK_SIZE
        first = claim.offset // BLOCK_SIZE
        last = (claim.offset + claim.length - 1) // BLOCK_SIZE
        hit = claim.resource_claim == target and (not in_data or first <= block <= last)
        try:
            delivered = fresh.read(claim)
        except ContentCorruptionError as error:
            failed = error
        else:
            failed = None
            assert delivered == data
        assert (failed is not None) == hit, "a damaged block was delivered, or a sound one refused"
        assert failed is None or failed.claim == target
    fresh.increment_claimant_count(target)
    assert [f.location for f in fresh.check() if f.location == str(target)] == [str(target)]


def test_named_claims_are_known_before_they_are_written(tmp_path: Path) -> None:
    """Two writers each write a named claim; a rope of both, named beforehand, reads back."""
    repo = FileContentRepository([tmp_path / "a", tmp_path / "b"])
    names = ["1795856641328-blocks-x-b0", "1795856641328-blocks-x-b1"]
    claims = [repo.named_claim(name) for name in names]
    assert claims == [repo.named_claim(name) for name in names]  # the same, every time
    rope = Rope(ContentClaim(claim, 0, 5) for claim in claims)
    for name, data in zip(reversed(names), [b"world", b"hello"], strict=True):
        writer = repo.writer(f"task-{name}")
        stream = writer.open_named_stream(name)
        stream.write(data)
        assert stream.close() == ContentClaim(repo.named_claim(name), 0, 5)
        writer.close()
    assert repo.read(rope) == b"helloworld"
    for claim in claims:
        repo.increment_claimant_count(claim)
    assert not repo.check()  # sealed: every block has its checksum


def test_a_named_claim_written_again_holds_the_last_write(tmp_path: Path) -> None:
    """A retried task writes its named claim again: the earlier attempt's bytes are gone."""
    repo = FileContentRepository(tmp_path)
    for data in (b"partial attempt, longer", b"retry"):
        writer = repo.writer("task")
        stream = writer.open_named_stream("1795856641328-blocks-y-b0")
        stream.write(data)
        claim = stream.close()
        writer.close()
    assert repo.read(claim) == b"retry"
    assert FileContentRepository(tmp_path).read(claim) == b"retry"  # verified from its footer


def test_close_releases_the_cached_read_descriptors(tmp_path: Path) -> None:
    """Reads keep descriptors open for the next read; close gives them back, and reads go on."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1)
    claims = write(repo, [b"a", b"b", b"c"])
    before = len(os.listdir("/proc/self/fd"))
    assert [repo.read(c) for c in claims] == [b"a", b"b", b"c"]
    assert len(os.listdir("/proc/self/fd")) == before + 3  # one per claim file, cached
    repo.close()
    assert len(os.listdir("/proc/self/fd")) == before
    assert repo.read(claims[0]) == b"a"  # opened afresh
    repo.close()
