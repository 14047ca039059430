"""Sources that make FlowFile batches: a task's work items read at once, without a session each.

A source reads its work items in a task one by one, a session each (``read_work``): GetFile's
20,000 small files cost 20,000 sessions. A source with a batch form reads them as
:class:`~flowcore.flowfile_batch.FlowFileBatch` es instead, through a :class:`TaskBatchMaker`:

- ``read_work_batches(context, items, maker)`` gets every item the task holds for it (GetFile's
  files, FileSplitter's blocks); a source that reads one item at a time (GenerateFlowFile's
  "make N", ListFile's part of a listing) declines several, and the engine offers each alone,
  then reads an item declined alone with ``read_work``.
- The maker writes contents as a session writes them (:meth:`TaskBatchMaker.write`: one content
  after the other in the task's appendable claims) or points at a file's range
  (:meth:`TaskBatchMaker.reference`), makes the FlowFiles with their attributes as columns
  (:meth:`TaskBatchMaker.create_rows`, one batch per resource claim), and takes what a session
  would take: RECEIVE reports (:meth:`TaskBatchMaker.report_receive`), source files to delete
  after the commit (:meth:`TaskBatchMaker.delete_after_commit`) and items that could not be read
  (:meth:`TaskBatchMaker.unread`, put back in the listing as a rolled-back session's item is).
- When the batch form returns its batches, the engine records what the sessions would have
  recorded, in their order: a RECEIVE run for the FlowFiles reported (cut where the events'
  details or durations differ, so each event keeps its own), a CREATE run for the others, a DROP
  run on an auto-terminated relationship; the disposals, bulletins and unread items; then the
  batches go on whole. When it returns None or raises, nothing of it is kept and the items are
  read the next way. When it made a batch it did not return (its FlowFiles would be lost), the
  task fails with :class:`~flowcore.errors.FlowFileHandlingError` naming the processor.

Uuids. A session reading one item derives its FlowFiles' uuids from the item (its key and a
digest of its payload: a file's path and fingerprint), so a replayed task attempt makes the same
ones (:mod:`flowcore.session._uuids`). A batch holds one uuid prefix, so a batch spanning several
items derives it from all of them: the digest of every item's identity, in order. A replay of the
same task (a Spark retry, a speculative attempt, the same listing after a crash) reads the same
items and makes the same uuids; another grouping of the same files makes other uuids, which is
harmless since an attempt's FlowFiles, and names made from their uuids, become visible only with
its commit. One item alone gets exactly the uuids its session would give it: the batch form
makes FlowFiles in the order its ``read_work`` creates them (FileSplitter: a file's FlowFile
before its first block's), and numbers taken by a batch form that declined or raised are not
the member's, so the session then reading the item numbers from where one by one would.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from flowcore.clock import now_ms
from flowcore.engine._contracts import Member
from flowcore.engine._driver import BatchDriver, with_transit_uris
from flowcore.errors import FlowFileHandlingError
from flowcore.faults import storage_fault
from flowcore.flowfile import Attributes, ContentClaim, ResourceClaim, new_uuids, sequence_uuid
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.kinds import SourceProcessor, WorkItem
from flowcore.provenance_events import ProvenanceEventRun, ProvenanceEventType
from flowcore.session import block_views, external_files
from flowcore.session._effects import StagedEffects
from flowcore.session._support import ContentSource, emit
from flowcore.session._uuids import UuidSource
from flowcore.session.host import ComponentInfo
from flowcore.session.streams import WriteStream

__all__ = ["SourceDriver", "TaskBatchMaker", "work_identity"]

log = logging.getLogger(__name__)

#: Bytes written to the content repository per call when a batch's content is repeated.
_WRITE_CHUNK = 1 << 20


def work_identity(item: WorkItem) -> str:
    """What a source work item is, as text: the seed of the uuids of the FlowFiles it makes.

    The payload goes in as a digest: the seed is part of every derived uuid's scope, and a
    payload listing 10,000 files (ListFile's) would make each uuid hash a megabyte. A block of
    a file read by parallel tasks is the whole file's item without its block: every block's
    task makes the same FlowFile (:mod:`flowcore.session.block_views`).
    """
    payload = {k: v for k, v in item.payload.items() if k != block_views.PAYLOAD_KEY}
    described = repr(sorted(payload.items(), key=lambda kv: kv[0]))
    digest = hashlib.blake2b(described.encode("utf-8", "surrogatepass"), digest_size=16)
    return f"{item.key}\0{digest.hexdigest()}"


def _items_identity(items: Sequence[Any]) -> str:
    """The seed of the uuids of FlowFiles made from *items* together (see the module's doc)."""
    if len(items) == 1:
        return work_identity(items[0])
    digest = hashlib.blake2b(digest_size=16)
    for item in items:
        digest.update(work_identity(item).encode("utf-8", "surrogatepass"))
        digest.update(b"\n")
    return f"items\0{len(items)}\0{digest.hexdigest()}"


@attrs.frozen(eq=False)
class _Received:
    """FlowFiles of a made batch a source reports as received (a RECEIVE event each)."""

    batch: FlowFileBatch
    transit_uris: str | tuple[str, ...]
    details: str | tuple[str | None, ...] | None
    durations_ms: tuple[int, ...] | None


class TaskBatchMaker:
    """Creates FlowFile batches for a source member: ids, uuids, content, and a session's rest.

    The batches the source returns get their events as a session's commit would record them
    (:func:`read_work_batches`), so each run names the attributes its FlowFiles end with.

    Args:
        member: the source's member in the task.
        items: the work items being read: with a source whose items name the data they read
            (``identifies_work``), the FlowFiles' uuids derive from them.
    """

    def __init__(self, member: Member, items: Sequence[Any] = ()) -> None:
        self.member = member
        self._uuids: UuidSource | None = None
        self._sequences = _OwnSequences(member.component, member.uuid_salt)
        if items and type(member.processor).capabilities.identifies_work:
            self._uuids = UuidSource(self._sequences)
            self._uuids.derive_uuids_from(_items_identity(items))
        #: the batches made, (uuid key, ids), to know the returned batch for one of them
        self._made: list[tuple[str, np.ndarray]] = []
        self._effects = StagedEffects(member)
        self.received: list[_Received] = []
        self.unread_items: list[tuple[Any, Exception]] = []

    # --- FlowFiles alike (a generator's) ------------------------------------------------------

    def create(
        self, count: int, attributes: Mapping[str, str], content: bytes | None
    ) -> FlowFileBatch:
        """*count* new FlowFiles sharing *attributes* and each holding *content*."""
        size = len(content) if content else 0
        claim = None
        if content and count:
            per_write = max(1, _WRITE_CHUNK // size)
            claim = self._write_all(
                content * min(per_write, count - start) for start in range(0, count, per_write)
            )
        return self._alike(count, attributes, claim, size)

    def create_each(
        self, count: int, attributes: Mapping[str, str], size: int, contents: Iterable[bytes]
    ) -> list[FlowFileBatch]:
        """*count* new FlowFiles of *size* bytes each, their bytes *contents* back to back.

        One batch per content claim, each claim at most the repository's maximum appendable
        size (and at least one FlowFile), as writing them one by one would fill claim files.
        """
        if not size or not count:
            return [self._alike(count, attributes, None, size)]
        member = self.member
        per_claim = max(1, member.content.max_appendable_size // size)
        chunks, pending = iter(contents), memoryview(b"")
        batches = []
        for start in range(0, count, per_claim):
            made = min(per_claim, count - start)
            want = made * size
            stream = member.content.writer(member.component.id).open_stream()
            try:
                while want:
                    if not pending:
                        pending = memoryview(next(chunks, b""))
                        if not pending:
                            msg = f"too few bytes of contents for {count} FlowFiles of {size} B"
                            raise ValueError(msg)
                    taken = pending[:want]
                    stream.write(bytes(taken))
                    want -= len(taken)
                    pending = pending[len(taken) :]
            finally:  # sealed even when the contents fall short: the claim file stays whole
                claim = stream.close()
            batches.append(self._alike(made, attributes, claim, size))
        if pending or next(chunks, b""):
            msg = f"more than {count * size} bytes of contents for {count} FlowFiles of {size}"
            raise ValueError(msg)
        return batches

    def create_spans(
        self,
        claim: ContentClaim | None,
        sizes: Sequence[int] | np.ndarray,
        attributes: Mapping[str, str],
    ) -> FlowFileBatch:
        """New FlowFiles whose contents lie back to back in one written *claim*.

        FlowFile *i* holds the next ``sizes[i]`` bytes of *claim* (none when 0). For many small
        contents written at once (a Kafka range's messages): one array of sizes, where
        :meth:`create_rows` would take a ``ContentClaim`` per FlowFile. Every FlowFile has
        *attributes*; per-FlowFile ones go on with ``FlowFileBatch.with_columns``.

        Raises:
            ValueError: the sizes do not add up to the claim's length.
        """
        lengths = np.asarray(sizes, dtype=np.int64)
        count = len(lengths)
        total = int(lengths.sum())
        held = claim.length if claim is not None else 0
        if total != held or (lengths < 0).any():
            msg = f"{count} contents of {total} bytes in all for a claim of {held} bytes"
            raise ValueError(msg)
        ends = np.cumsum(lengths)
        offsets = np.where(lengths > 0, ends - lengths + (claim.offset if claim else 0), 0)
        member, now = self.member, now_ms()
        first_id = member.task.take_ids(count)
        key, first_uuid = self._take_uuids(count)
        steps = np.arange(count, dtype=np.int64)
        shared = {"path": "./", **attributes}
        shared.pop("uuid", None)
        batch = FlowFileBatch(
            ids=first_id + steps,
            uuid_key=key,
            uuid_numbers=first_uuid + steps,
            attributes=Attributes(shared),
            uuid_named=() if "filename" in shared else ("filename",),
            resource_claim=claim.resource_claim if claim is not None else None,
            offsets=offsets,
            sizes=lengths,
            entry_date=now,
            lineage_start_date=now,
            lineage_start_indices=first_id + steps,
            queue_date=now,
        )
        self._made.append((key, batch.ids))
        return batch

    def _write_all(self, chunks: Iterable[bytes]) -> ContentClaim:
        claim = self.write(chunks)
        assert claim is not None
        return claim

    def _alike(
        self, count: int, attributes: Mapping[str, str], claim: ContentClaim | None, size: int
    ) -> FlowFileBatch:
        member, now = self.member, now_ms()
        first_id = member.task.take_ids(count)
        key, first_uuid = self._take_uuids(count)
        shared = {"path": "./", **attributes}
        shared.pop("uuid", None)
        named = () if "filename" in shared else ("filename",)
        batch = FlowFileBatch.alike(
            count=count,
            first_id=first_id,
            uuid_key=key,
            uuid_first=first_uuid,
            attributes=Attributes(shared),
            uuid_named=named,
            resource_claim=claim.resource_claim if claim is not None else None,
            offset=claim.offset if claim is not None else 0,
            stride=size,
            size=size,
            entry_date=now,
            lineage_start_date=now,
            queue_date=now,
        )
        self._made.append((key, batch.ids))
        return batch

    def _take_uuids(self, count: int) -> tuple[str, int]:
        """The uuid prefix and first number of *count* new FlowFiles: derived, else random."""
        derived = self._uuids.run("root", count) if self._uuids is not None else None
        return derived if derived is not None else new_uuids(count)

    # --- FlowFiles of their own (files, blocks) -----------------------------------------------

    def write(self, content: ContentSource) -> ContentClaim | None:
        """Write one FlowFile's content, as ``session.write`` writes it; its claim (None: empty).

        *content* is bytes, an iterable of byte chunks or a callback given an output stream.
        Consecutive contents pack into the task's claim files, as a session's do.
        """
        member = self.member
        stream = member.content.writer(member.component.id).open_stream()
        try:
            emit(WriteStream(stream), content)
        finally:  # closed even when writing fails: the claim file stays whole
            claim = stream.close()
        return claim

    def reference(
        self, path: str | os.PathLike[str], offset: int, length: int, fingerprint: str
    ) -> ContentClaim | None:
        """A byte range of a file as content, without copying it (``import_by_reference``).

        Raises:
            ContentChangedError: the file is no longer the version *fingerprint* names.
            ValueError: the range does not lie inside the file.
        """
        return external_files.range_claim(path, offset, length, fingerprint)

    def create_rows(
        self, contents: Sequence[ContentClaim | None], attributes: Sequence[Mapping[str, str]]
    ) -> list[FlowFileBatch]:
        """New FlowFiles, one per entry: content ``contents[i]``, attributes ``attributes[i]``.

        Attributes every FlowFile has with one value are shared, the others become columns
        (absent where a FlowFile lacks them). A batch holds one resource claim, so they come
        as one batch per run of contents in the same claim (FlowFiles without content join
        any), in order; their uuids count up across the batches.
        """
        count = len(contents)
        if len(attributes) != count:
            msg = f"{len(attributes)} attribute maps for {count} FlowFiles"
            raise ValueError(msg)
        if not count:
            return []
        key, first_uuid = self._take_uuids(count)
        batches = []
        for start, stop, resource in _claim_runs(contents):
            batches.append(
                self._rows(
                    contents[start:stop], attributes[start:stop], resource, key, first_uuid + start
                )
            )
        return batches

    def _rows(
        self,
        contents: Sequence[ContentClaim | None],
        attributes: Sequence[Mapping[str, str]],
        resource: ResourceClaim | None,
        key: str,
        first_uuid: int,
    ) -> FlowFileBatch:
        member, now, count = self.member, now_ms(), len(contents)
        first_id = member.task.take_ids(count)
        steps = np.arange(count, dtype=np.int64)
        named = sum("filename" in row for row in attributes)
        if named and named < count:  # the others are named by their uuid, as session.create's
            attributes = [
                row
                if "filename" in row
                else {**row, "filename": sequence_uuid(key, first_uuid + i)}
                for i, row in enumerate(attributes)
            ]
        shared, columns = _shared_and_columns(attributes)
        if "path" in columns:  # session.create's path where a FlowFile has none
            columns["path"] = column_of([row.get("path", "./") for row in attributes])
        batch = FlowFileBatch(
            ids=first_id + steps,
            uuid_key=key,
            uuid_numbers=first_uuid + steps,
            attributes=Attributes({"path": "./", **shared}),
            uuid_named=() if named else ("filename",),
            resource_claim=resource,
            offsets=[c.offset if c is not None else 0 for c in contents],
            sizes=[c.length if c is not None else 0 for c in contents],
            entry_date=now,
            lineage_start_date=now,
            lineage_start_indices=first_id + steps,
            queue_date=now,
        )
        batch = batch.with_columns(columns) if columns else batch
        self._made.append((key, batch.ids))
        return batch

    # --- what a session would take ------------------------------------------------------------

    def report_receive(
        self,
        batch: FlowFileBatch,
        transit_uri: str | Sequence[str],
        *,
        details: str | Sequence[str | None] | None = None,
        durations_ms: Sequence[int] | None = None,
    ) -> None:
        """Report the FlowFiles of a made *batch* received: ``session.provenance.receive`` each.

        Args:
            batch: a batch made here (its FlowFiles get no CREATE then, as in a session).
            transit_uri: where they came from: one URI, or one per FlowFile.
            details: the events' details: one text, or one per FlowFile.
            durations_ms: how long each took to receive (None: 0).
        """
        for name, values in (("transit URIs", transit_uri), ("details", details)):
            if values is not None and not isinstance(values, str) and len(values) != batch.count:
                msg = f"{len(values)} {name} for {batch.count} FlowFiles received"
                raise ValueError(msg)
        if durations_ms is not None and len(durations_ms) != batch.count:
            msg = f"{len(durations_ms)} durations for {batch.count} FlowFiles received"
            raise ValueError(msg)
        self.received.append(
            _Received(
                batch,
                transit_uri if isinstance(transit_uri, str) else tuple(transit_uri),
                details if details is None or isinstance(details, str) else tuple(details),
                None if durations_ms is None else tuple(int(d) for d in durations_ms),
            )
        )

    def delete_after_commit(self, path: str | os.PathLike[str]) -> None:
        """Delete the source file *path* once the commit is durable, as ``import_from`` does.

        Only the version there now is deleted (a file rewritten before the commit is left).
        """
        self._effects.delete_after_commit(path)

    def unread(self, item: Any, error: Exception) -> None:
        """*item* could not be read (*error*): put back in the listing, read again later.

        A rolled-back session's item is reported so (a bulletin names it), and so is this one,
        once the batches are taken. A full disk or a read-only repository stops the run, as it
        does one by one: *error* is raised again at once.
        """
        if storage_fault(error) is not None:
            raise error
        self.unread_items.append((item, error))

    def controller_service(self, name: str) -> object:
        """The enabled controller service *name* (the task's, as the member's context has)."""
        return self.member.task.controller_service(name)

    # --- the engine's side --------------------------------------------------------------------

    def made_it(self, batch: FlowFileBatch) -> bool:
        """Whether *batch* holds the FlowFiles of a batch made here (attributes aside)."""
        return any(_holds(batch, key, ids) for key, ids in self._made)

    def left_out(self, returned: Sequence[FlowFileBatch]) -> tuple[int, int]:
        """The batches made here that are not among *returned*, and their FlowFiles.

        A source that forgets one would lose it: its contents written, its FlowFiles never
        queued. Batches of no FlowFile do not count.
        """
        missing = [
            ids
            for key, ids in self._made
            if len(ids) and not any(_holds(batch, key, ids) for batch in returned)
        ]
        return len(missing), sum(len(ids) for ids in missing)

    def keep_uuids(self) -> None:
        """The batches are taken: the uuids they hold are the member's (see ``_OwnSequences``)."""
        self.member.uuid_sequences.update(self._sequences.uuid_sequences)

    def take_disposals(self) -> tuple[Any, ...]:
        """The source files to delete after the commit, taken (the maker forgets them)."""
        _, _, disposals = self._effects.take()
        return disposals

    def discard(self) -> None:
        """The batches are not taken: forget what a session would have taken."""
        self._effects.discard()
        self.received.clear()
        self.unread_items.clear()


def _holds(batch: FlowFileBatch, key: str, ids: np.ndarray) -> bool:
    """Whether *batch* holds the FlowFiles a maker made as (*key*, *ids*)."""
    return key == batch.uuid_key and np.array_equal(ids, batch.ids)


@attrs.frozen
class _OwnSequences:
    """A member's uuid scope with numbers of its own, for a batch form's uuids.

    They become the member's only when its batches are taken (``keep_uuids``): an item whose
    batch form declined or raised is read by a session that numbers its FlowFiles from where
    one by one would, so it gets one by one's uuids.
    """

    component: ComponentInfo
    uuid_salt: str
    uuid_sequences: dict[str, list] = attrs.field(factory=dict)


def _claim_runs(
    contents: Sequence[ContentClaim | None],
) -> list[tuple[int, int, ResourceClaim | None]]:
    """``(start, stop, resource claim)`` of each run of *contents* in one resource claim."""
    runs: list[tuple[int, int, ResourceClaim | None]] = []
    start, resource = 0, None
    for index, claim in enumerate(contents):
        if claim is None or claim.resource_claim == resource:
            continue
        if resource is not None:
            runs.append((start, index, resource))
            start = index
        resource = claim.resource_claim
    runs.append((start, len(contents), resource))
    return runs


def _shared_and_columns(
    rows: Sequence[Mapping[str, str]],
) -> tuple[dict[str, str], dict[str, Any]]:
    """The attributes every row has with one value, and the others as columns."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    shared: dict[str, str] = {}
    columns = {}
    for name in names:
        if name == "uuid":
            continue
        values = [row.get(name) for row in rows]
        first = values[0]
        if first is not None and values.count(first) == len(values):
            shared[name] = first
        else:
            columns[name] = column_of(values)
    return shared, columns


# --- reading ------------------------------------------------------------------------------------


class SourceDriver(BatchDriver):
    """Drives a source's work items as batches: ``read_work_batches``, a :class:`TaskBatchMaker`."""

    def _routes_apart(self) -> bool:
        """Whether the member's batches can go on whole: the same FlowFiles as its sessions'.

        Each relationship leads to one connection or is auto-terminated (nothing is cloned), and
        no two relationships share a connection or lead to one member of the task (a session's
        outputs there interleave in the order it transferred them, which batches per relationship
        would not keep).
        """
        member = self.member
        plan = member.plan
        if not plan.routes_or_drops_whole:
            return False
        places = [
            routes[0].member or routes[0].connection_id for routes in plan.routes.values() if routes
        ]
        return len(places) == len(set(places))

    def read(self, items: Sequence[Any]) -> bool:
        """Read a task's work items for a source as batches, if the source can; whether it did."""
        member = self.member
        source = member.processor
        if not items or not isinstance(source, SourceProcessor) or not self._routes_apart():
            return False
        if len(items) > 1 and not self._one_route():
            return False  # each item is then read as a batch of its own
        maker = TaskBatchMaker(member, items)
        return self._take(maker, source, items)

    def _take(self, maker: TaskBatchMaker, source: SourceProcessor, items: Sequence[Any]) -> bool:
        """Run the source's batch form over *items* and take its batches.

        They are taken as its sessions' commits would take their FlowFiles.

        Raises:
            FlowFileHandlingError: the batch form made a batch it did not return.
        """
        member = self.member
        named = items[0].key
        try:
            made = source.read_work_batches(member.context, items, maker)
        except Exception as error:  # the one-by-one path reads it again and reports what goes wrong
            maker.discard()
            fault = storage_fault(error)
            if fault is not None:
                raise fault from error  # the run stops, as it does one by one: nothing is lost
            log.debug("reading %s as batches failed; reading it one by one", named, exc_info=True)
            return False
        if made is None:  # declined: the items are read the next way
            maker.discard()
            return False
        routes = [made] if made and isinstance(made[0], str) else list(made)
        if not all(maker.made_it(batch) for _, batch in routes):
            log.debug("%s: the source returned a batch it did not make; one by one", named)
            maker.discard()
            return False
        self._check_all_returned(maker, [batch for _, batch in routes])
        maker.keep_uuids()
        for item, error in maker.unread_items:
            member.not_read(item, error)
        member.carry_out_after_commit((), (), maker.take_disposals())
        for _, batch in routes:  # every FlowFile's CREATE or RECEIVE, then DROPs: a session's order
            if batch.count:
                member.task.events.extend(self._origin_events(maker, batch))
        for relationship, batch in routes:
            if not batch.count:
                continue
            if member.plan.routes.get(relationship):
                self.route_whole(relationship, batch)
            else:
                self.drop_whole(relationship, None, batch, None)
        return True

    def _check_all_returned(self, maker: TaskBatchMaker, returned: Sequence[FlowFileBatch]) -> None:
        """Fail the task when the batch form made a batch it did not return (see ``left_out``).

        Nothing of the batch form is kept and the task fails, as a session's commit fails with a
        FlowFile not transferred (NiFi's FlowFileHandlingException): reading the items one by one
        instead would hide the mistake, and every task would pay for a wasted read.
        """
        member = self.member
        batches, flowfiles = maker.left_out(returned)
        if not batches:
            return
        maker.discard()
        plan = member.plan
        msg = (
            f"{plan.type_name} '{plan.name}': read_work_batches made {flowfiles} FlowFile(s) in "
            f"{batches} batch(es) it did not return, so they would be lost; return every batch the "
            "maker made, each as (relationship, batch) (create_rows and create_each make one batch "
            "per content claim), or return None to have the items read one by one"
        )
        raise FlowFileHandlingError(msg, processor=plan.name)

    def _one_route(self) -> bool:
        """Whether the source has one relationship, connected: what several items in one batch need.

        One by one, each item is a session, which records its RECEIVE or CREATE and then the DROPs
        of what it auto-terminated before the next item's: GetFile's files dropped give RECEIVE,
        DROP, RECEIVE, DROP, and FileSplitter's blocks and file FlowFiles alternate item by item.
        Batches of several items record each kind at once, so they are made only where every item's
        FlowFiles go one way; otherwise each item is a batch of its own.
        """
        member = self.member
        plan = member.plan
        relationships = member.processor.relationship_names()
        return len(relationships) == 1 and bool(plan.routes.get(next(iter(relationships))))

    def _origin_events(
        self, maker: TaskBatchMaker, batch: FlowFileBatch
    ) -> list[ProvenanceEventRun]:
        """RECEIVE runs for a batch reported received, else one CREATE run (a session's rule)."""
        received = next((r for r in maker.received if np.array_equal(r.batch.ids, batch.ids)), None)
        if received is None:
            return [self.batch_run(ProvenanceEventType.CREATE, None, batch, batch.entry_date)]
        now = now_ms()
        count = batch.count
        uris, details = received.transit_uris, received.details
        durations = received.durations_ms or (0,) * count
        runs = []
        for start, stop in _alike_spans(count, details, durations):
            part = batch.cut(start, stop)
            run = self.batch_run(
                ProvenanceEventType.RECEIVE,
                None,
                part,
                now,
                transit_uri=uris if isinstance(uris, str) else uris[start],
                details=details if details is None or isinstance(details, str) else details[start],
                event_duration=durations[start],
            )
            runs.append(with_transit_uris(run, uris if isinstance(uris, str) else uris[start:stop]))
        return runs


def _alike_spans(
    count: int, details: str | tuple[str | None, ...] | None, durations: Sequence[int]
) -> list[tuple[int, int]]:
    """Spans of FlowFiles whose events share details and duration: one run each.

    A run has one value of each but the transit URI, so events that differ in them are cut
    apart (a small file's read takes 0 ms: almost always one run).
    """
    if (details is None or isinstance(details, str)) and len(set(durations)) <= 1:
        return [(0, count)]  # one value of each: one run, without a look at every FlowFile
    spans, start = [], 0

    def key(index: int) -> tuple[object, int]:
        detail = details if details is None or isinstance(details, str) else details[index]
        return detail, durations[index]

    for index in range(1, count):
        if key(index) != key(start):
            spans.append((start, index))
            start = index
    spans.append((start, count))
    return spans
