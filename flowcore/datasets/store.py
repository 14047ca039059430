"""A dataset directory: immutable chunk files and atomically published manifest versions.

Layout::

    <dataset>/chunks/<id>              chunk files, written once (``<id>.part`` while written)
    <dataset>/manifests/v00000007.json published versions; the highest is the current one
    <dataset>/manifests/v00000008.json.pending   a staged version not yet published
    <dataset>/.lock                    held by the one writer or compactor at a time

Publishing is a rename of a staged manifest, so a reader sees a whole version or the previous
one. A flow's PutDataset stages a version, commits the version number in its processor state
inside the FlowFile repository's transaction, then publishes; on restart the committed number
says whether a staged version is to be published or thrown away. The last
:data:`RETAINED_VERSIONS` versions stay readable; chunk files no retained or staged version
names are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from flowcore.datasets.model import Chunk, Manifest, Mergeability
from flowcore.errors import DatasetError
from repositories._files import fsync_directory, write_atomically
from repositories.locks import try_lock

__all__ = ["DATASET_FORMAT", "RETAINED_VERSIONS", "Dataset", "demarcated", "write_chunk"]

#: Published versions kept readable (older manifests go, and chunks only they named).
RETAINED_VERSIONS = 2
#: The Spark format that reads datasets (flowcore/runners/spark_sources.py registers it).
DATASET_FORMAT = "flowcore-dataset"
_MANIFEST = re.compile(r"v(\d{8})\.json")
_PENDING = re.compile(r"v(\d{8})\.json\.pending")
_COPY = 1 << 20


class Dataset:
    """One dataset directory (it need not exist yet: an absent dataset is empty, version 0)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.chunk_dir = self.path / "chunks"
        self.manifest_dir = self.path / "manifests"
        self._lock_file: BinaryIO | None = None

    # --- versions ---------------------------------------------------------------------------

    def _numbers(self, pattern: re.Pattern[str]) -> list[int]:
        if not self.manifest_dir.is_dir():
            return []
        found = (pattern.fullmatch(p.name) for p in self.manifest_dir.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def versions(self) -> list[int]:
        """Published versions still on disk, oldest first."""
        return self._numbers(_MANIFEST)

    def pending_versions(self) -> list[int]:
        """Staged versions not published yet."""
        return self._numbers(_PENDING)

    def latest_version(self) -> int:
        """The current version (0 for an empty or absent dataset)."""
        versions = self.versions()
        return versions[-1] if versions else 0

    def _manifest_path(self, version: int, *, pending: bool = False) -> Path:
        return self.manifest_dir / (f"v{version:08d}.json" + (".pending" if pending else ""))

    def manifest(self, version: int | None = None) -> Manifest:
        """A published version (the current one by default).

        Raises:
            DatasetError: that version is not (or no longer) published.
        """
        number = self.latest_version() if version is None else version
        if number == 0:
            return Manifest(0)
        try:
            return Manifest.from_bytes(self._manifest_path(number).read_bytes())
        except FileNotFoundError:
            msg = (
                f"dataset {self.path} has no version {number}; published: "
                f"{self.versions() or 'none'} (only the last {RETAINED_VERSIONS} are kept)"
            )
            raise DatasetError(msg) from None

    def require_exists(self) -> None:
        """Refuse a directory that holds no dataset (a mistyped path reads as nothing).

        Raises:
            DatasetError: it has no ``manifests/`` directory.
        """
        if not self.manifest_dir.is_dir():
            msg = f"{self.path} is not a dataset (it has no manifests/ directory)"
            raise DatasetError(msg)

    def next_version(self, at_least: int = 0) -> int:
        """The number the next staged version takes."""
        return max([self.latest_version(), *self.pending_versions(), at_least]) + 1

    def stage(self, manifest: Manifest) -> None:
        """Write *manifest* as a staged version; every chunk it names must be written already.

        Raises:
            DatasetError: a chunk file is missing.
        """
        self._require_chunks(manifest, "stage")
        self.manifest_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(self._manifest_path(manifest.version, pending=True), manifest.to_bytes())

    def _require_chunks(self, manifest: Manifest, action: str) -> None:
        for chunk in manifest.chunks:
            if not self.chunk_path(chunk.id).is_file():
                msg = (
                    f"cannot {action} version {manifest.version} of {self.path}: chunk "
                    f"{chunk.id} is missing"
                )
                raise DatasetError(msg)

    def publish(self, version: int) -> bool:
        """Make a staged version current (a rename).

        Returns False when it was not staged (published already: recovery may repeat this).
        """
        staged = self._manifest_path(version, pending=True)
        if not staged.exists():
            return False
        os.replace(staged, self._manifest_path(version))
        fsync_directory(self.manifest_dir)
        self.collect_garbage()
        return True

    def discard_pending(self, above: int = 0) -> list[int]:
        """Remove staged versions numbered above *above* (never committed); return them."""
        dropped = [v for v in self.pending_versions() if v > above]
        for version in dropped:
            self._manifest_path(version, pending=True).unlink(missing_ok=True)
        if dropped:
            self.collect_garbage()
        return dropped

    def collect_garbage(self) -> list[str]:
        """Drop manifests past retention and chunk files no kept or staged version names."""
        versions = self.versions()
        for old in versions[:-RETAINED_VERSIONS]:
            self._manifest_path(old).unlink(missing_ok=True)
        named: set[str] = set()
        for version in versions[-RETAINED_VERSIONS:]:
            named.update(c.id for c in self.manifest(version).chunks)
        for version in self.pending_versions():
            staged = self._manifest_path(version, pending=True).read_bytes()
            named.update(c.id for c in Manifest.from_bytes(staged).chunks)
        for leftover in self.manifest_dir.glob("*.part") if self.manifest_dir.is_dir() else ():
            leftover.unlink(missing_ok=True)  # a publication cut short by a crash
        removed = []
        if self.chunk_dir.is_dir():
            for path in self.chunk_dir.iterdir():
                if path.name not in named:
                    path.unlink(missing_ok=True)
                    removed.append(path.name)
        return removed

    # --- chunks -----------------------------------------------------------------------------

    def chunk_path(self, chunk_id: str) -> Path:
        """Where a chunk's file is."""
        return self.chunk_dir / chunk_id

    @staticmethod
    def new_chunk_id(owner: str) -> str:
        """A unique chunk file name naming its writer (a task attempt)."""
        return f"{owner}-{uuid.uuid4().hex[:16]}.chunk"

    def open_chunk(self, chunk: Chunk) -> BinaryIO:
        """A chunk's bytes.

        Raises:
            DatasetError: the chunk file is gone (its version is past retention).
        """
        try:
            return open(self.chunk_path(chunk.id), "rb")
        except FileNotFoundError:
            msg = (
                f"chunk {chunk.id} of {self.path} is gone; its version is no longer retained, "
                "so open the dataset again to read the current version"
            )
            raise DatasetError(msg) from None

    def iter_bytes(self, version: int | None = None) -> Iterator[bytes]:
        """The dataset's bytes in order, the demarcator between chunks, as one version."""
        manifest = self.manifest(version)
        return self.iter_chunk_bytes(manifest.chunks, manifest.demarcator)

    def to_spark(self, spark: Any, version: int | None = None, **options: str) -> Any:
        """The dataset as a Spark DataFrame: a row per record, a partition per chunk.

        ``spark.read.format("flowcore-dataset")`` with this path, a version and *options*
        (``binary``, ``lineSep``, ``wholetext``: see :mod:`flowcore.runners.spark_sources`).
        Sessions flowcore starts find the format by themselves; register it on another with
        ``flowcore.register_spark_sources(spark)``. Spark is driven through
        *spark* alone: nothing here imports pyspark.

        Raises:
            DatasetError: the version is not published, or the session lacks the format.
        """
        self.require_exists()
        chosen = self.manifest(version).version  # refuses a missing version here, in one line
        reader = spark.read.format(DATASET_FORMAT).option("version", str(chosen))
        for key, value in options.items():
            reader = reader.option(key, value)
        try:
            return reader.load(str(self.path.resolve()))
        except Exception as error:  # Spark's own error type, not importable here
            if "DATA_SOURCE_NOT_FOUND" not in str(error):
                raise
            msg = (
                f"this SparkSession cannot read format {DATASET_FORMAT!r}: register it with "
                "flowcore.register_spark_sources(spark)"
            )
            raise DatasetError(msg) from None

    def iter_chunk_bytes(self, chunks: Sequence[Chunk], demarcator: bytes) -> Iterator[bytes]:
        """The bytes of *chunks* in order with *demarcator* between them, streamed in blocks.

        This is what a reader sees of a version, and what a merge job writes.
        """
        return demarcated(((lambda c=c: self.open_chunk(c)) for c in chunks), demarcator)

    def add_file(
        self,
        source: str | os.PathLike[str],
        *,
        mergeability: Mergeability = Mergeability.NEVER,  # type: ignore[attr-defined]
        records: int = 1,
        now_ms: int = 0,
    ) -> Manifest:
        """Add a user's file as a chunk at the end (NEVER mergeable by default) and publish."""
        with self.locked("add a chunk to"):
            self.refuse_unfinished("add a chunk to")
            chunk_id = self.new_chunk_id("user")
            size = write_chunk(self.chunk_path(chunk_id), _read_chunks(Path(source)))
            current = self.manifest()
            chunk = Chunk(chunk_id, size, records, now_ms, mergeability)
            return self._replace(current, (*current.chunks, chunk), now_ms)

    def set_mergeability(
        self, chunk_ids: Sequence[str], mergeability: Mergeability, *, now_ms: int = 0
    ) -> Manifest:
        """Publish a version where *chunk_ids* have *mergeability*.

        Raises:
            DatasetError: an id names no chunk of the current version.
        """
        with self.locked("change"):
            self.refuse_unfinished("change")
            current = self.manifest()
            known = {c.id for c in current.chunks}
            unknown = [i for i in chunk_ids if i not in known]
            if unknown:
                msg = (
                    f"dataset {self.path} has no chunk {unknown[0]!r} in version {current.version}"
                )
                raise DatasetError(msg)
            wanted = set(chunk_ids)
            chunks = tuple(
                attrs.evolve(c, mergeability=mergeability) if c.id in wanted else c
                for c in current.chunks
            )
            return self._replace(current, chunks, now_ms)

    def _replace(self, current: Manifest, chunks: tuple[Chunk, ...], now_ms: int) -> Manifest:
        version = self.commit_version(attrs.evolve(current, chunks=chunks), now_ms=now_ms)
        return self.manifest(version)

    def commit_version(self, manifest: Manifest, *, now_ms: int = 0) -> int:
        """Publish *manifest*'s chunks as the next version at once (one rename); its number.

        For changes made under the lock outside a flow: compaction, mergeability, added files.
        """
        version = self.next_version()
        final = attrs.evolve(manifest, version=version, created_ms=now_ms)
        self._require_chunks(final, "publish")
        self.manifest_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(self._manifest_path(version), final.to_bytes(), sync_directory=True)
        self.collect_garbage()
        return version

    # --- exclusive use ----------------------------------------------------------------------

    def refuse_unfinished(self, action: str) -> None:
        """Refuse to *action* a dataset with a staged version a flow has not settled.

        Raises:
            DatasetError: a staged version exists; only the flow that wrote it knows whether it
                was committed.
        """
        pending = self.pending_versions()
        if pending:
            msg = (
                f"cannot {action} dataset {self.path}: version {pending[0]} was staged by a flow "
                "run that stopped before publishing it; run that flow again (it publishes or "
                "discards the version), then retry"
            )
            raise DatasetError(msg)

    @contextlib.contextmanager
    def locked(self, action: str) -> Iterator[None]:
        """Hold the dataset's lock for the block.

        Raises:
            DatasetError: another writer or compactor holds it.
        """
        self.acquire(action)
        try:
            yield
        finally:
            self.release()

    def acquire(self, action: str) -> None:
        """Take the dataset's lock until :meth:`release` (a flow run holds it throughout).

        Raises:
            DatasetError: another writer or compactor holds it.
        """
        if self._lock_file is not None:
            return
        handle = try_lock(self.path / ".lock")  # held until release()
        if handle is None:
            msg = (
                f"cannot {action} dataset {self.path}: another flow run or compaction is using "
                "it; wait for it to finish"
            )
            raise DatasetError(msg) from None
        self._lock_file = handle

    def release(self) -> None:
        """Give the lock back."""
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None


def _read_chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as source:
        while data := source.read(_COPY):
            yield data


def demarcated(
    sources: Iterable[Callable[[], AbstractContextManager[BinaryIO]]], demarcator: bytes
) -> Iterator[bytes]:
    """The bytes of each source (opened in turn) with *demarcator* between them.

    This is how a chunk lays out its records, whether a task writes them or a merge job joins
    chunks.
    """
    for index, source in enumerate(sources):
        if index and demarcator:
            yield demarcator
        with source() as stream:
            while data := stream.read(_COPY):
                yield data


def write_chunk(path: Path, pieces: Iterator[bytes] | Sequence[bytes]) -> int:
    """Write a chunk file through ``<name>.part``, fsynced, then renamed; return its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    size = 0
    with open(partial, "wb") as out:
        for data in pieces:
            out.write(data)
            size += len(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)
    return size
