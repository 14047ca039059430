"""GetFile: pick up files from a directory, as NiFi's GetFile, with exactly-once listing."""

from __future__ import annotations

import hashlib
import os
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import attrs

from flowcore.clock import now_ms
from flowcore.errors import ProcessException
from flowcore.flowfile import ContentClaim
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session import block_views
from flowcore.session.external_files import file_chunks, fingerprint, fingerprint_of
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    create_directory_exists_validator,
)
from processors._file_attributes import (
    FileSelection,
    file_attributes,
    key_path,
    path_key,
    readable,
)
from processors.split_text import block_read_refusal, plan_block_reads

__all__ = ["GetFile"]

_READ_CHUNK = 1 << 20  # bytes of a file read at once by the batch form


@attrs.frozen
class _ListedFile:
    """A file of GetFile's listing, with its state key and fingerprint derived once.

    The listing is asked what it has left after every micro-batch (``pending_work``): deriving
    20,000 files' keys and fingerprints there each time cost more than listing them.
    """

    path: Path
    info: os.stat_result
    # The path as listed, links not resolved: a link is ingested with its target's content
    # (as NiFi does), but only the link itself is ever deleted.
    key: str
    fingerprint: str

    @classmethod
    def of(cls, path: Path, info: os.stat_result) -> _ListedFile:
        """The listed file at *path*, as *info* (its stat when listed) found it."""
        return cls(path, info, path_key(os.path.abspath(path)), fingerprint_of(info))


class GetFile(SourceProcessor):
    """Creates FlowFiles from the files in a directory (NiFi's GetFile).

    Each trigger lists up to Batch Size matching files (File Filter on the name, Path Filter on
    the sub-directory, age, size and hidden-file rules) and imports them, with a RECEIVE event
    and NiFi's file attributes. Without Keep Source File, a file is deleted only after the
    commit that ingested it is durable.

    Unlike NiFi's GetFile, the listing is remembered in the processor's state (path and a
    fingerprint of size, mtime and inode), committed with the FlowFiles: a file is ingested
    exactly once even with Keep Source File, and again only if it changes. A crash after the
    commit but before the source was deleted is finished on the next listing.

    Links, as NiFi: a symbolic link to a file is ingested with the target's content, wherever
    the target is; without Keep Source File only the link is deleted, never the target, so
    nothing outside Input Directory is ever changed. Links to directories are not followed
    (no loops), dangling links and FIFOs, sockets and devices are skipped. A name that is not
    valid UTF-8 is ingested as ``filename`` (invalid bytes as U+FFFD) plus ``filename.bytes``.
    """

    DIRECTORY = PropertyDescriptor(
        "Input Directory",
        description="The input directory from which to pull files",
        required=True,
        # NiFi's createDirectoryExistsValidator(true, false): it must exist unless it uses EL
        validators=(NON_EMPTY_VALIDATOR, create_directory_exists_validator()),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
    )
    FILE_FILTER = PropertyDescriptor(
        "File Filter",
        description="Only files whose names match the given regular expression will be picked up",
        required=True,
        default=r"[^\.].*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    PATH_FILTER = PropertyDescriptor(
        "Path Filter",
        description="When Recurse Subdirectories is true, then only subdirectories whose path "
        "matches the given regular expression will be scanned",
        required=False,
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    BATCH_SIZE = PropertyDescriptor(
        "Batch Size",
        description="The maximum number of files to pull in each iteration",
        required=True,
        default="10",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    KEEP_SOURCE_FILE = PropertyDescriptor(
        "Keep Source File",
        description="If true, the file is not deleted after it has been copied to the Content "
        "Repository; this causes the file to be picked up continually and is useful for testing "
        "purposes. If not keeping original NiFi will need write permissions on the directory it is "
        "pulling from otherwise it will ignore the file.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    RECURSE = PropertyDescriptor(
        "Recurse Subdirectories",
        description="Indicates whether or not to pull files from subdirectories",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    POLLING_INTERVAL = PropertyDescriptor(
        "Polling Interval",
        description="Indicates how long to wait before performing a directory listing",
        required=True,
        default="0 sec",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    IGNORE_HIDDEN_FILES = PropertyDescriptor(
        "Ignore Hidden Files",
        description="Indicates whether or not hidden files should be ignored",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    MIN_AGE = PropertyDescriptor(
        "Minimum File Age",
        description="The minimum age that a file must be in order to be pulled; any file younger "
        "than this amount of time (according to last modification date) will be ignored",
        required=True,
        default="0 sec",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    MAX_AGE = PropertyDescriptor(
        "Maximum File Age",
        description="The maximum age that a file must be in order to be pulled; any file older "
        "than this amount of time (according to last modification date) will be ignored",
        required=False,
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    MIN_SIZE = PropertyDescriptor(
        "Minimum File Size",
        description="The minimum size that a file must be in order to be pulled",
        required=True,
        default="0 B",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    MAX_SIZE = PropertyDescriptor(
        "Maximum File Size",
        description="The maximum size that a file can be in order to be pulled",
        required=False,
        validators=(DATA_SIZE_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        DIRECTORY,
        FILE_FILTER,
        PATH_FILTER,
        BATCH_SIZE,
        KEEP_SOURCE_FILE,
        RECURSE,
        POLLING_INTERVAL,
        IGNORE_HIDDEN_FILES,
        MIN_AGE,
        MAX_AGE,
        MIN_SIZE,
        MAX_SIZE,
    )
    relationships: ClassVar = (SUCCESS,)
    tags: ClassVar = ("local", "files", "filesystem", "ingest", "ingress", "get", "source", "input")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "The filename is set to the name of the file on disk",
        "path": "The path is set to the relative path of the file's directory on disk",
        "absolute.path": "The absolute path of the file's directory on disk",
        "file.creationTime": "The date and time that the file was created",
        "file.lastModifiedTime": "The date and time that the file was last modified",
        "file.lastAccessTime": "The date and time that the file was last accessed",
        "file.owner": "The owner of the file",
        "file.group": "The group owner of the file",
        "file.permissions": "The read/write/execute permissions of the file",
        "file.size": "The size of the file in bytes",
    }

    fills_micro_batch: ClassVar[bool] = True
    identifies_work: ClassVar[bool] = True

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._last_poll_ms: int | None = None
        # NiFi's file queue: one directory listing hands out Batch Size files per trigger
        # until it is used up, so 20,000 files are listed once, not once per 10 files.
        self._listed: deque[_ListedFile] = deque()
        # Files handed out in this run (key -> fingerprint) whose FlowFiles may still be in
        # flight: a new listing must not hand them out twice.
        self._handed: dict[str, str] = {}

    def __getstate__(self) -> dict[str, object]:
        """Ship without the driver's file queue: tasks read single files, not the listing."""
        state = dict(self.__dict__)
        state["_listed"] = deque()
        state["_handed"] = {}
        return state

    def _directory(self, context: ProcessContext) -> Path:
        """Input Directory as an absolute path (links kept: they are the user's names)."""
        text = context.get_property(self.DIRECTORY).evaluate_attribute_expressions().value
        return Path(os.path.abspath(text or "."))

    def _candidates(self, context: ProcessContext, root: Path) -> Iterator[_ListedFile]:
        """The readable files under *root* the filters select, in listing order."""
        for path, info in FileSelection.of(context).files(root, context.now()):
            if readable(path, context.logger):
                yield _ListedFile.of(path, info)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Hand out up to Batch Size new or changed files, and the listing state after them.

        The directory is listed when the last listing is used up and the Polling Interval has
        passed; each trigger then takes the next files of that listing (NiFi's file queue).
        """
        root = self._directory(context)
        keep = bool(context.get_property(self.KEEP_SOURCE_FILE).as_boolean())
        batch = context.get_property(self.BATCH_SIZE).as_integer() or 10
        # The first listing of a run gets the committed state; later triggers of one
        # micro-batch get the state the trigger before them left, not yet committed.
        first = self._last_poll_ms is None
        fresh = not self._listed
        if fresh and not self._list(context, root):
            return WorkListing((), state)
        items: list[WorkItem] = []
        new_state: dict[str, str] = {}
        while self._listed and len(items) < batch:
            listed = self._listed.popleft()
            key, fingerprint = listed.key, listed.fingerprint
            if self._handed.get(key) == fingerprint:
                continue  # handed out earlier in this run
            if state.get(key) == fingerprint:
                if keep:
                    new_state[key] = fingerprint
                elif first:
                    # Ingested by a committed run that crashed before deleting the source.
                    listed.path.unlink(missing_ok=True)
                continue
            self._handed[key] = fingerprint
            if keep:
                # Without Keep Source File the file's deletion, done after the commit (and
                # redone at start-up), is what marks it ingested: nothing to remember.
                new_state[key] = fingerprint
            items.append(
                WorkItem(
                    key,
                    {"root": str(root), "fingerprint": fingerprint},
                    flowfiles=1,
                    size=listed.info.st_size,
                )
            )
        if keep:
            # Forget files that are gone only when the directory was listed anew: checking
            # every remembered file on every trigger would cost a stat per file per trigger.
            new_state = {**(self._kept(state) if fresh else state), **new_state}
        return WorkListing(tuple(items), new_state)

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """The files of the current listing not handed out yet, and their sizes.

        Unknown (None) before the first listing. Files an earlier run ingested and kept (Keep
        Source File) are skipped when handed out, so they are not counted. Asked after every
        micro-batch, it looks each file up by the key and fingerprint derived when it was listed.
        """
        del context
        if self._last_poll_ms is None:
            return None
        count = size = 0
        handed = self._handed
        for listed in self._listed:
            key, fingerprint = listed.key, listed.fingerprint
            if state.get(key) != fingerprint and handed.get(key) != fingerprint:
                count += 1
                size += listed.info.st_size
        return PendingWork(count, size)

    def _list(self, context: ProcessContext, root: Path) -> bool:
        """List the directory into the file queue, if the Polling Interval allows; any found?"""
        interval_ms = context.get_property(self.POLLING_INTERVAL).as_time_period("ms") or 0
        now = context.now()
        if self._last_poll_ms is not None and now - self._last_poll_ms < interval_ms:
            return False
        self._last_poll_ms = now
        if not root.is_dir():
            context.logger.error("Input Directory %s does not exist or is not a directory", root)
            return False
        self._listed.extend(self._candidates(context, root))
        if self._handed:  # forget the handed-out files that are gone: they are done
            listed = {entry.key for entry in self._listed}
            self._handed = {k: v for k, v in self._handed.items() if k in listed}
        return bool(self._listed)

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """Files whose read failed may be handed out again by a later listing."""
        for item in items:
            self._handed.pop(item.key, None)
        return super().requeue_work(state, items, committed)

    @staticmethod
    def block_refusal(reader: Processor | None, dropped: frozenset[str]) -> str | None:
        """Why a large file cannot go to *reader* as blocks read in parallel (None: it can)."""
        return block_read_refusal(reader, dropped)

    def block_reads(
        self, item: WorkItem, reader: Processor | None, dropped: frozenset[str], parts: int
    ) -> list[WorkItem] | None:
        """*item*'s file as up to *parts* items each reading one line-aligned block, or None.

        Asked on the driver for a large file when this GetFile feeds *reader* (with *dropped*
        relationships) in the same stage: the blocks are read by parallel tasks, and the
        FlowFiles are exactly those of one task reading the whole file (see
        :mod:`flowcore.session.block_views`). None (read it whole) when *reader* is not a
        SplitText that can split blocks, the file changed since it was listed, or it has
        fewer than two blocks' worth of splits.
        """
        if block_read_refusal(reader, dropped) is not None:
            return None
        assert reader is not None
        path = key_path(item.key)
        try:
            info = path.stat()
            if fingerprint_of(info) != item.payload["fingerprint"]:
                return None
            planned = plan_block_reads(str(path), item.size, parts, reader)  # type: ignore[arg-type]
        except OSError:
            return None  # gone or unreadable: the one-task read reports it as it does
        if planned is None:
            return None
        bounds = (*(start for start, _, _ in planned.blocks), item.size)
        attributes = tuple(sorted(file_attributes(path, Path(item.payload["root"]), info).items()))
        digest = hashlib.blake2b(f"{item.key}\0{info.st_ino}".encode(), digest_size=8)
        name = f"{now_ms()}-blocks-{digest.hexdigest()}"
        return [
            WorkItem(
                item.key,
                {
                    **item.payload,
                    block_views.PAYLOAD_KEY: block_views.BlockView(
                        index,
                        bounds,
                        before,
                        planned.count,
                        name,
                        attributes,
                        planned.lf_only,
                        planned.header,
                        planned.header_trimmed,
                    ).as_payload(),
                },
                flowfiles=1,
                size=end - start,
            )
            for index, (start, end, before) in enumerate(planned.blocks)
        ]

    @staticmethod
    def _kept(state: Mapping[str, str]) -> dict[str, str]:
        """With Keep Source File: the remembered files still present (the gone are forgotten)."""
        return {key: value for key, value in state.items() if key_path(key).exists()}

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Import one file with NiFi's attributes and a RECEIVE event."""
        path = key_path(item.key)
        root = Path(item.payload["root"])  # absolute, as listed (links kept, as the path)
        keep = bool(context.get_property(self.KEEP_SOURCE_FILE).as_boolean())
        view = block_views.BlockView.of_payload(item.payload.get(block_views.PAYLOAD_KEY))
        try:
            info = path.stat()
        except FileNotFoundError:
            if view is not None:  # other tasks read its other blocks: the stage run fails
                raise
            context.logger.warning("%s disappeared before it could be read; skipping it", path)
            return
        started = time.monotonic()
        if view is None:
            flowfile = session.import_from(path, session.create(), keep_source=keep)
            attributes = file_attributes(path, root, info)
        else:
            if not keep and view.first:
                session.delete_after_commit(path)
            block = _checked_block(item, view)
            flowfile = session.import_block(session.create(), view, block.chunks())
            attributes = dict(view.attributes)
        flowfile = session.put_all_attributes(flowfile, attributes)
        elapsed_ms = int((time.monotonic() - started) * 1000)
        session.provenance.receive(flowfile, path.as_uri(), duration_ms=elapsed_ms)
        session.transfer(flowfile, SUCCESS)

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> list[tuple[str, FlowFileBatch]]:
        """Import a task's files as batches: :meth:`read_work`'s FlowFiles, a session's effects.

        Each file is copied into the task's appendable claims (one batch per claim), with
        NiFi's attributes as columns and a RECEIVE event each (one run, each event with its
        file's URI). As one by one: a file gone before it is read is skipped with a warning;
        one that fails to read is put back in the listing, read again later; without Keep
        Source File each file read is deleted once the commit is durable.
        """
        if any(block_views.PAYLOAD_KEY in item.payload for item in items):
            return None  # a block of a file read in parallel: one by one (read_work)
        keep = bool(context.get_property(self.KEEP_SOURCE_FILE).as_boolean())
        contents: list[ContentClaim | None] = []
        rows: list[dict[str, str]] = []
        uris: list[str] = []
        durations: list[int] = []
        for item in items:
            path = key_path(item.key)
            try:
                info = path.stat()
            except FileNotFoundError:
                context.logger.warning("%s disappeared before it could be read; skipping it", path)
                continue
            except OSError as error:  # as read_work's session rolls back: read again later
                maker.unread(item, error)
                continue
            started = time.monotonic()
            try:
                claim = maker.write(file_chunks(path, _READ_CHUNK))
                attributes = file_attributes(path, Path(item.payload["root"]), info)
                uri = path.as_uri()
            except Exception as error:  # a rolled-back session's item: read again later
                maker.unread(item, error)
                continue
            if not keep:
                maker.delete_after_commit(path)
            contents.append(claim)
            rows.append(attributes)
            uris.append(uri)
            durations.append(int((time.monotonic() - started) * 1000))
        made = maker.create_rows(contents, rows)
        at = 0
        for batch in made:
            stop = at + batch.count
            maker.report_receive(batch, uris[at:stop], durations_ms=durations[at:stop])
            at = stop
        return [(SUCCESS.name, batch) for batch in made]


@attrs.frozen
class _Block:
    """The byte range of a listed file one block read copies."""

    path: Path
    start: int
    end: int

    def chunks(self) -> Iterator[bytes]:
        """The range's bytes, :data:`_READ_CHUNK` at a time."""
        left = self.end - self.start
        for chunk in file_chunks(self.path, _READ_CHUNK, self.start, left):
            left -= len(chunk)
            yield chunk
        if left:
            msg = f"{self.path} is shorter than when it was listed; it is read again whole later"
            raise ProcessException(msg)


def _checked_block(item: WorkItem, view: block_views.BlockView) -> _Block:
    """The block *view* of *item*'s file, refused if the file changed since it was cut.

    Raises:
        ProcessException: the file is not the version the driver cut into blocks (the task
            fails, and with it the stage run, so no block's splits commit without the rest).
    """
    path = key_path(item.key)
    if fingerprint(path) != item.payload["fingerprint"]:
        msg = (
            f"{path} changed while its blocks were read by parallel tasks; nothing of it is "
            "committed, and the changed file is listed again"
        )
        raise ProcessException(msg)
    return _Block(path, view.start, view.end)
