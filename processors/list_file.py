"""ListFile: list a directory's files as zero-content FlowFiles, as NiFi's ListFile."""

from __future__ import annotations

import hashlib
import os
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs

import processors._list_file_properties as props
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors import _entity_tracking as tracking
from processors._entity_tracking import (
    CONFIGURATION_KEY,
    ENTITIES_KEY,  # noqa: F401 - still ListFile's state key to its tests (list_file.ENTITIES_KEY)
)
from processors._file_attributes import (
    FileSelection,
    file_attributes,
    key_path,
    path_key,
    text_of,
)
from processors._list_file_properties import BY_ENTITIES, BY_TIMESTAMPS, NO_TRACKING
from processors._listing import Entry, ListingState, state_after, track_timestamps
from processors._listing_records import FILE_INFO_SCHEMA, write_listing, writer_set

__all__ = ["ListFile"]

#: Files one work item lists, at most: one FlowFile batch (one queue segment) each.
ITEM_FILES = 10_000
#: Work items one trigger hands out, at most; a micro-batch takes more triggers as it has room.
TRIGGER_ITEMS = 10
#: Attributes Include File Attributes adds (NiFi reads them from the file system per file).
_DETAILED = ("file.creationTime", "file.lastAccessTime", "file.owner", "file.group",
             "file.permissions")  # fmt: skip


@attrs.frozen
class _Stat:
    """The parts of a file's stat its attributes need, shipped to the task with its path."""

    st_size: int
    st_mtime: float
    st_atime: float
    st_ctime: float
    st_uid: int
    st_gid: int
    st_mode: int


def _listed(path: Path, info: os.stat_result) -> tuple[Any, ...]:
    """One listed file as a work item carries it: its state key and stat."""
    return (
        path_key(path),
        info.st_size,
        info.st_mtime,
        info.st_atime,
        getattr(info, "st_birthtime", info.st_ctime),
        info.st_uid,
        info.st_gid,
        info.st_mode,
    )


@attrs.frozen
class _Handout:
    """A work item ready to hand out, and the listing state once it is handed out."""

    item: WorkItem
    state: Mapping[str, str]


class ListFile(SourceProcessor):
    """Lists the files of a directory, one zero-content FlowFile each (NiFi's ListFile).

    Each FlowFile carries ``filename``, ``path`` (relative to Input Directory, ``./`` for its
    top), ``absolute.path``, ``file.size``, ``file.lastModifiedTime`` and, with Include File
    Attributes, owner, group, permissions, creation and last access times, in NiFi's formats;
    FetchFile's default File to Fetch reads them back. The framework records a CREATE event
    for each, as NiFi's does. Nothing on disk is changed.

    Listing Strategy ``Tracking Timestamps`` (the default) keeps NiFi's state (the newest
    modification time listed and processed, and the paths processed at that time), committed
    in the write-ahead log transaction that commits the FlowFiles: a file is listed once across
    runs, crashes and restarts, and again only if it is modified later. The newest files are
    held back until the listing lag of the timestamp precision has passed (100 ms for
    milliseconds), as NiFi does, so that a file written in the same instant is not missed; a
    batch run waits that long rather than end without them. ``No Tracking`` lists every file
    each time (once in a batch run). ``Tracking Entities`` keeps NiFi's ListedEntityTracker
    map in the MapCacheService Entity Tracking State Cache names, changed in the session that
    commits the FlowFiles (processors._entity_tracking): a file is listed when it is new, newer
    or of another size (once in a batch run). With a Record Writer each part of a listing is
    one FlowFile of NiFi's FileInfo records (``record.count``, ``mime.type``).

    A listing is handed out in work items of up to 10,000 files, each read as one FlowFile
    batch where the flow allows (no object per file), the state after each part committed
    with it. Changing Input Directory, a filter, an age or size limit, recursion or Ignore
    Hidden Files starts the listing over, as in NiFi.
    """

    DIRECTORY = props.DIRECTORY
    LISTING_STRATEGY = props.LISTING_STRATEGY
    RECORD_WRITER = props.RECORD_WRITER
    INCLUDE_FILE_ATTRIBUTES = props.INCLUDE_FILE_ATTRIBUTES
    TIMESTAMP_PRECISION = props.TIMESTAMP_PRECISION
    MAX_LISTING_TIME = props.MAX_LISTING_TIME
    property_descriptors: ClassVar = props.PROPERTY_DESCRIPTORS
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "The name of the file that was read from filesystem.",
        "path": "The path is set to the relative path of the file's directory on filesystem "
        "compared to the Input Directory property (./ for the Input Directory itself).",
        "absolute.path": "The absolute.path is set to the absolute path of the file's directory "
        "on filesystem, ending in /.",
        "file.owner": "The user that owns the file in filesystem",
        "file.group": "The group that owns the file in filesystem",
        "file.size": "The number of bytes in the file in filesystem",
        "file.permissions": "The permissions for the file in filesystem, as rw-rw-r--",
        "file.lastModifiedTime": "The timestamp of when the file in filesystem was last "
        "modified as 'yyyy-MM-dd'T'HH:mm:ssZ'",
        "file.lastAccessTime": "The timestamp of when the file in filesystem was last "
        "accessed as 'yyyy-MM-dd'T'HH:mm:ssZ'",
        "file.creationTime": "The timestamp of when the file in filesystem was created as "
        "'yyyy-MM-dd'T'HH:mm:ssZ'",
    }

    tags: ClassVar = ("file", "get", "list", "ingest", "source", "filesystem")
    relationships: ClassVar = (SUCCESS,)
    fills_micro_batch: ClassVar[bool] = True
    identifies_work: ClassVar[bool] = True

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._handouts: deque[_Handout] = deque()  # the current listing's parts not handed out
        self._expected: Mapping[str, str] | None = None  # the state the last part left
        self._last_run_ms = 0  # when a listing last got past NiFi's early yields
        self._before: dict[str, Mapping[str, str]] = {}  # item key -> the state before it
        self._entities_listed = ""  # the last entity listing handed out (its digest)

    def __getstate__(self) -> dict[str, object]:
        """Ship without the driver's listing: tasks read their items, not the listing."""
        state = dict(self.__dict__)
        state["_handouts"] = deque()
        state["_before"] = {}
        return state

    @property
    def unbounded(self) -> bool:  # type: ignore[override]
        """No Tracking and Tracking Entities never run out: a batch run lists once.

        (``unbounded_source_batches`` times.)
        """
        strategy = self.effective_value(self.LISTING_STRATEGY)
        return strategy in {NO_TRACKING.value, BY_ENTITIES.value}

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Tracking Entities needs Entity Tracking State Cache (NiFi's check)."""
        if values.get(self.LISTING_STRATEGY.name) == BY_ENTITIES.value:
            return tracking.validate(values, props.TRACKING_STATE_CACHE)
        return []

    # --- the driver's side -------------------------------------------------------------------

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Hand out the next parts of the current listing, listing the directory when none is left.

        A listing whose newest files are held back, with nothing else new, is tried again once
        the listing lag has passed (at most a minute, for minute precision), so that a batch run
        does not end without them.
        """
        listed: Mapping[str, str] | None = None
        if not self._handouts or dict(state) != dict(self._expected or {}):
            self._handouts.clear()
            retry, listed = self._list(context, state)
            if retry:
                time.sleep(retry / 1000)
                _, listed = self._list(context, state)
        items: list[WorkItem] = []
        new_state = state if listed is None or self._handouts else listed
        by_timestamps = context.get_property(self.LISTING_STRATEGY).value == BY_TIMESTAMPS.value
        while self._handouts and (len(items) < TRIGGER_ITEMS or not by_timestamps):
            handout = self._handouts.popleft()
            self._before[handout.item.key] = new_state
            items.append(handout.item)
            new_state = handout.state
        self._expected = new_state
        return WorkListing(tuple(items), new_state)

    def _list(
        self, context: ProcessContext, state: Mapping[str, str]
    ) -> tuple[int, Mapping[str, str] | None]:
        """List the directory into parts to hand out.

        Returns:
            How long to wait before the held-back files may be listed (ms), and the state
            after the listing when it changed though nothing is handed out.
        """
        root = self._directory(context)
        if not root.is_dir():
            context.logger.error("Input Directory %s does not exist or is not a directory", root)
            return 0, None
        now = context.now()
        started = time.monotonic()
        entries = list(self._entries(context, root, now))
        self._warn_if_slow(context, root, time.monotonic() - started)
        strategy = context.get_property(self.LISTING_STRATEGY).value
        kept = tracking.timestamp_keys(state)
        if strategy == BY_ENTITIES.value:  # everything: the task picks what is new (read_work)
            entries.sort(key=lambda e: e.timestamp)
            identity = f"entities:{self._configuration(context)}"
            digest = tracking.new_listing(
                state,
                identity,
                ((e.identifier, e.timestamp, e.item[1].st_size) for e in entries),
                self._entities_listed,
            )
            if digest is None:
                return 0, None  # as the last listing, which committed: nothing can be new
            self._entities_listed = digest
            marker = tracking.entity_marker(state, identity, digest)
            tracked = {
                "listing": identity,
                "now": now,
                "forget": tracking.forget_tracked(state, identity),
            }
            self._hand_out(context, root, entries, ListingState(), marker, tracked=tracked)
            return 0, None
        if strategy != BY_TIMESTAMPS.value:  # No Tracking: everything, every time, no state
            entries.sort(key=lambda e: e.timestamp)  # (NiFi's listByNoTracking clears it)
            self._hand_out(context, root, entries, ListingState(), {})
            return 0, ({} if state else None)
        configuration = self._configuration(context)
        same = state.get(CONFIGURATION_KEY) in (None, configuration)
        before = ListingState.of(state if same else {})
        precision = context.get_property(self.TIMESTAMP_PRECISION).value or "auto-detect"
        decision = track_timestamps(
            entries, before, now_ms=now, last_run_ms=self._last_run_ms, precision=precision
        )
        if decision.ran:
            self._last_run_ms = now
        final = None if kept == dict(state) else kept
        if decision.state is not None:
            final = {**decision.state.values(), CONFIGURATION_KEY: configuration}
        self._hand_out(context, root, list(decision.entries), before, final)
        return decision.retry_after_ms, final

    def _configuration(self, context: ProcessContext) -> str:
        """A digest of the properties whose change starts the listing over."""
        values = [str(self._directory(context))]
        values += [context.get_property(d).value or "" for d in props.RESET_BY[1:]]
        return hashlib.blake2b("\0".join(values).encode(), digest_size=8).hexdigest()

    def _directory(self, context: ProcessContext) -> Path:
        """Input Directory as an absolute path (links kept: they are the user's names)."""
        text = context.get_property(self.DIRECTORY).evaluate_attribute_expressions().value
        return Path(os.path.abspath(text or "."))

    def _entries(
        self, context: ProcessContext, root: Path, now: int
    ) -> Iterator[Entry[tuple[Path, os.stat_result]]]:
        """The files the filters select that can be read (NiFi skips the others quietly)."""
        for path, info in FileSelection.of(context).files(root, now, skip_hidden_directories=False):
            if os.access(path, os.R_OK):
                yield Entry(path_key(path), info.st_mtime_ns // 1_000_000, (path, info))

    def _hand_out(
        self,
        context: ProcessContext,
        root: Path,
        entries: Sequence[Entry[tuple[Path, os.stat_result]]],
        before: ListingState,
        final: Mapping[str, str] | None,
        *,
        tracked: Mapping[str, Any] | None = None,
    ) -> None:
        """Cut *entries* into work items, each with the state once it is handed out.

        *tracked* (Tracking Entities: the listing's identity, time and whether to forget
        the tracked entities) goes into each item, with the item's part of the listing; such
        an item says nothing of its FlowFiles (``flowfiles`` None): the task emits only the
        files the cache does not know.
        """
        include = bool(context.get_property(self.INCLUDE_FILE_ATTRIBUTES).as_boolean())
        parts = -(-len(entries) // ITEM_FILES)
        for start in range(0, len(entries), ITEM_FILES):
            part = entries[start : start + ITEM_FILES]
            done = start + ITEM_FILES >= len(entries)
            if done or tracked:
                values = final
            else:
                after = state_after(entries[: start + len(part)], before).values()
                values = {**after, CONFIGURATION_KEY: self._configuration(context)}
            first = part[0]
            suffix = f"#{tracked['now']}" if tracked else ""
            more: dict[str, Any] = {}
            if tracked:
                index = start // ITEM_FILES
                more = {**tracked, "part": index, "parts": parts}
                more["forget"] = bool(tracked["forget"]) and not index
            item = WorkItem(
                f"{first.identifier}@{first.timestamp}+{len(part)}{suffix}",
                {
                    "root": str(root),
                    "include": include,
                    "files": tuple(_listed(*e.item) for e in part),
                    **more,
                },
                flowfiles=None if tracked else len(part),
                batched=tracked is None,
            )
            self._handouts.append(_Handout(item, {} if values is None else values))

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """The files of the current listing not handed out yet (None before the first listing)."""
        del context, state
        if self._expected is None:
            return None
        files = [f for h in self._handouts for f in h.item.payload.get("files", ())]
        return PendingWork(len(files), sum(f[1] for f in files))

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """The state before the first item that could not be read; the directory is listed again.

        Later items of the same micro-batch that were read may then be listed a second time:
        only a failing read (a bug; a full disk stops the run instead) takes this path.
        """
        del state, committed
        self._handouts.clear()
        self._expected = None
        self._entities_listed = ""
        earliest = min(
            (self._before[i.key] for i in items if i.key in self._before),
            key=lambda s: ListingState.of(s).processed,
            default=None,
        )
        return dict(earliest or {})

    def _warn_if_slow(self, context: ProcessContext, root: Path, seconds: float) -> None:
        """Max Directory Listing Time: a warning when listing took longer (NiFi's bulletin)."""
        limit = context.get_property(self.MAX_LISTING_TIME).as_time_period("s")
        if limit is not None and seconds > limit:
            context.logger.warning(
                "Listing %s took %.1f s, longer than Max Directory Listing Time", root, seconds
            )

    # --- the task's side ---------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One FlowFile per listed file, with its attributes (CREATE events by the session).

        Under Tracking Entities only the files the map cache does not know (or knows older or
        of another size) are emitted; with a Record Writer they are one FlowFile of records.
        """
        if "listing" in item.payload:
            files = self._untracked(context, session, item)
            if not files:
                context.yield_()  # nothing new: NiFi's tracker yields
                return
            item = attrs.evolve(item, payload={**item.payload, "files": tuple(files)})
        if writer_set(context, self.RECORD_WRITER):
            rows = [_record(f) for f in item.payload.get("files", ())]
            write_listing(context, session, self.RECORD_WRITER, FILE_INFO_SCHEMA, rows=rows)
            return
        for attributes in _attributes_of(item):
            flowfile = session.put_all_attributes(session.create(), attributes)
            session.transfer(flowfile, SUCCESS)

    def _untracked(
        self, context: ProcessContext, session: ProcessSession, item: WorkItem
    ) -> list[tuple[Any, ...]]:
        """NiFi's ListedEntityTracker: the item's files new or changed since the cache's entry.

        The key is NiFi's, ``ListedEntities::{component id}``, without NiFi's
        ``::{node}`` suffix for a 'Local' Input Directory Location: flowcore keeps one state per
        repository, listed on the driver, so Entity Tracking Node Identifier (``${hostname()}``,
        evaluated wherever the task runs) would only start the tracking over whenever a task
        or the driver runs on another host.
        """
        return tracking.track_in_session(
            context,
            session,
            item.payload,
            item.payload.get("files", ()),
            lambda f: (str(key_path(f[0])), int(f[2] * 1000), f[1]),
            now_ms=context.now(),
            descriptors=(
                props.TRACKING_STATE_CACHE,
                props.TRACKING_TIME_WINDOW,
                props.INITIAL_LISTING_TARGET,
            ),
        )

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> list[tuple[str, FlowFileBatch]] | None:
        """One item's FlowFiles as one batch: :meth:`read_work`'s attributes as columns.

        Given several items (a task's parts of a listing), it declines, and the engine hands
        them over one by one.
        """
        if len(items) != 1 or writer_set(context, self.RECORD_WRITER):
            return None
        if "listing" in items[0].payload:  # Tracking Entities: the session's map cache decides
            return None
        rows = list(_attributes_of(items[0]))
        if not rows:
            return None
        names = list(dict.fromkeys(name for row in rows for name in row))
        batch = maker.create(len(rows), {}, None)
        columns = {name: column_of([row.get(name) for row in rows]) for name in names}
        return [(SUCCESS.name, batch.with_columns(columns))]


def _record(listed: Sequence[Any]) -> dict[str, Any]:
    """One listed file as NiFi's ListFile FileInfo.toRecord() writes it.

    NiFi's ListFile gives its FileInfo no permissions, owner or group: they stay null.
    """
    path = key_path(listed[0])
    return {
        "filename": text_of(path.name),  # as the filename attribute: any name is UTF-8 text
        "path": text_of(str(path.parent)),
        "directory": False,
        "size": listed[1],
        "lastModified": int(listed[2] * 1000),
        "permissions": None,
        "owner": None,
        "group": None,
    }


def _attributes_of(item: WorkItem) -> Iterator[dict[str, str]]:
    """NiFi's ListFile attributes of each file an item lists."""
    root = Path(item.payload.get("root", "/"))
    include = item.payload.get("include", True)
    for key, *facts in item.payload.get("files", ()):
        attributes = file_attributes(key_path(key), root, _Stat(*facts))  # type: ignore[arg-type]
        if attributes["path"] == "/":
            attributes["path"] = "./"  # ListFile's path for the top directory (GetFile: "/")
        if not include:
            for name in _DETAILED:
                del attributes[name]
        yield attributes
