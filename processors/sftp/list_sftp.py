"""ListSFTP: list a remote directory's files over SFTP as zero-content FlowFiles (NiFi's).

NiFi's listing by tracked timestamps (``listing.timestamp``, ``processed.timestamp``, ``id.N``;
processors._listing) runs where sources list (the driver); its state commits with the listed
FlowFiles in the write-ahead log transaction, so each remote file enters the flow once across
runs, crashes and restarts (again only when modified later). Beside NiFi's keys the state holds
``flowcore.listing.configuration``, a digest of Hostname and Remote Path (NiFi's
ListFileTransfer.isListingResetNecessary): a listing whose digest differs starts over, as NiFi
clears its state when one is modified.

Time Window (NiFi's listByTimeWindow) lists the files modified from the last window's end to
now less the listing lag, and keeps that end in ``listing.timestamp`` (committed the same way).
Tracking Entities keeps NiFi's ListedEntityTracker map in a map cache, changed in the session
that commits the FlowFiles (processors._entity_tracking). With a Record Writer a listing is one
FlowFile of NiFi's FileInfo records (processors._listing_records).
"""

from __future__ import annotations

import hashlib
import posixpath
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

import attrs

from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    DATA_SIZE_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
)
from processors import _entity_tracking as tracking
from processors._entity_tracking import CONFIGURATION_KEY
from processors._listing import (
    LISTED_KEY,
    PROCESSED_KEY,
    Entry,
    ListingState,
    lag_of,
    track_timestamps,
)
from processors._listing_records import FILE_INFO_SCHEMA, write_listing, writer_set
from processors.sftp import _sftp

__all__ = ["ListSFTP", "time_window"]

BY_TIMESTAMPS = AllowableValue("timestamps", "Tracking Timestamps", "Tracks the latest "
                               "timestamp of listed entities")  # fmt: skip
BY_ENTITIES = AllowableValue("entities", "Tracking Entities", "Tracks the listed entities "
                             "within the 'Entity Tracking Time Window' in a map cache")  # fmt: skip
NO_TRACKING = AllowableValue("none", "No Tracking", "Lists every entity each time")
BY_TIME_WINDOW = AllowableValue(
    "time-window", "Time Window", "This strategy uses a sliding time window. The window "
    "starts where the previous window ended and ends with the 'current time'. One cycle will "
    "list files with modification time falling within the time window. Works even when "
    "multiple subdirectories are being written at the same time while listing is running. "
    "IMPORTANT: This strategy works properly only if the time on both the system hosting NiFi "
    "and the one hosting the files are accurate.",
)  # fmt: skip
LISTING_STRATEGY = PropertyDescriptor(
    "Listing Strategy", description="Specify how to determine new/updated entities. See each "
    "strategy descriptions for detail.", required=True, default="timestamps",
    allowable_values=(BY_TIMESTAMPS, BY_ENTITIES, NO_TRACKING, BY_TIME_WINDOW),
    aliases=("listing-strategy",),
)  # fmt: skip
REMOTE_PATH = PropertyDescriptor(
    "Remote Path", description="The path on the remote system from which to pull or push files",
    default=".", el_scope=ExpressionLanguageScope.ENVIRONMENT,
)  # fmt: skip
RECURSIVE = PropertyDescriptor(
    "Search Recursively", description="If true, will pull files from arbitrarily nested "
    "subdirectories; otherwise, will not traverse subdirectories", required=True,
    default="false", allowable_values=("true", "false"),
)  # fmt: skip
FILE_FILTER = PropertyDescriptor(
    "File Filter Regex", description="Provides a Java Regular Expression for filtering "
    "Filenames; if a filter is supplied, only files whose names match that Regular Expression "
    "will be fetched", validators=(REGULAR_EXPRESSION_VALIDATOR,),
)  # fmt: skip
PATH_FILTER = PropertyDescriptor(
    "Path Filter Regex", description="When Search Recursively is true, then only "
    "subdirectories whose path matches the given Regular Expression will be scanned",
    validators=(REGULAR_EXPRESSION_VALIDATOR,),
)  # fmt: skip
IGNORE_DOTTED = PropertyDescriptor(
    "Ignore Dotted Files", description="If true, files whose names begin with a dot (\".\") "
    "will be ignored", required=True, default="true", allowable_values=("true", "false"),
)  # fmt: skip
PRECISION = PropertyDescriptor(
    "Target System Timestamp Precision", required=True, default="auto-detect",
    allowable_values=("auto-detect", "millis", "seconds", "minutes"),
)  # fmt: skip
MIN_AGE = PropertyDescriptor(
    "Minimum File Age", required=True, default="0 sec", validators=(TIME_PERIOD_VALIDATOR,),
)  # fmt: skip
MAX_AGE = PropertyDescriptor("Maximum File Age", validators=(TIME_PERIOD_VALIDATOR,))
MIN_SIZE = PropertyDescriptor(
    "Minimum File Size", required=True, default="0 B", validators=(DATA_SIZE_VALIDATOR,),
)  # fmt: skip
MAX_SIZE = PropertyDescriptor("Maximum File Size", validators=(DATA_SIZE_VALIDATOR,))
RECORD_WRITER = PropertyDescriptor(
    "Record Writer", description="Specifies the Record Writer to use for creating the listing. "
    "If not specified, one FlowFile will be created for each entity that is listed. If the "
    "Record Writer is specified, all entities will be written to a single FlowFile instead of "
    "adding attributes to individual FlowFiles.", identifies_service="RecordSetWriterFactory",
    aliases=("record-writer",),
)  # fmt: skip


class ListSFTP(SourceProcessor):
    """Lists the files on an SFTP server, one zero-content FlowFile each (NiFi's ListSFTP).

    Attributes: ``sftp.remote.host``, ``sftp.remote.port``, ``sftp.listing.user``,
    ``file.owner``, ``file.group``, ``file.permissions``, ``file.size``,
    ``file.lastModifiedTime``, ``filename``, ``path``: FetchSFTP's defaults read them back.
    With a Record Writer one FlowFile per listing holds NiFi's FileInfo records (filename,
    path, directory, size, lastModified, permissions, owner, group) with ``record.count`` and
    ``mime.type``.
    """

    property_descriptors: ClassVar = (
        LISTING_STRATEGY, *_sftp.CONNECTION, REMOTE_PATH, RECORD_WRITER, RECURSIVE,
        _sftp.FOLLOW_SYMLINK, FILE_FILTER, PATH_FILTER, IGNORE_DOTTED,
        _sftp.REMOTE_POLL_BATCH_SIZE, _sftp.STRICT_HOST_KEY_CHECKING, _sftp.HOST_KEY_FILE,
        _sftp.CONNECTION_TIMEOUT, _sftp.DATA_TIMEOUT, _sftp.KEEP_ALIVE, PRECISION,
        _sftp.COMPRESSION, *_sftp.PROXY, tracking.TRACKING_STATE_CACHE,
        tracking.TRACKING_TIME_WINDOW, tracking.INITIAL_LISTING_TARGET, MIN_AGE, MAX_AGE,
        MIN_SIZE, MAX_SIZE, *_sftp.ALGORITHMS,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS,)
    tags: ClassVar = ("list", "sftp", "remote", "ingest", "source", "input", "files")
    identifies_work: ClassVar[bool] = True

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._last_run_ms = 0
        self._entities_listed = ""  # the last entity listing handed out (its digest)
        self._waited = False  # Time Window: waited for files younger than the lag already

    @property
    def unbounded(self) -> bool:  # type: ignore[override]
        """No Tracking and Tracking Entities never run out: a batch run lists once.

        Tracking Timestamps and Time Window run out once their state has passed every file.
        """
        return self.effective_value(LISTING_STRATEGY) not in (
            BY_TIMESTAMPS.value,
            BY_TIME_WINDOW.value,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Tracking Entities needs Entity Tracking State Cache (NiFi's check)."""
        if values.get(LISTING_STRATEGY.name) == BY_ENTITIES.value:
            return tracking.validate(values)
        return []

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """List the remote directory; the new files in one work item with the state after.

        Tracking Entities hands out every file: the task decides against the map cache.
        """
        with _sftp.connect(context) as connection:
            entries = list(self._entries(context, connection))
            host, port, user = connection.host, connection.port, connection.user
        payload: dict[str, Any] = {"host": host, "port": port, "user": user}
        strategy = context.get_property(LISTING_STRATEGY).value
        configuration = self._configuration(context)
        kept = tracking.timestamp_keys(state)
        if strategy == BY_ENTITIES.value:
            identity = f"entities:{configuration}"  # in the state: a run otherwise is seen
            payload["listing"] = identity
            payload["now"] = int(time.time() * 1000)  # each listing's item its own key
            payload["forget"] = tracking.forget_tracked(state, identity)
            digest = tracking.new_listing(
                state,
                identity,
                ((e.identifier, e.timestamp, e.item[2]) for e in entries),
                self._entities_listed,
            )
            if digest is None:
                return WorkListing((), state)  # as the last listing, committed: nothing new
            self._entities_listed = digest
            marker = tracking.entity_marker(state, identity, digest) if entries else state
            return self._listing(entries, payload, marker)
        if strategy not in (BY_TIMESTAMPS.value, BY_TIME_WINDOW.value):
            return self._listing(entries, payload, {})  # No Tracking: no state (NiFi clears it)
        state = kept
        if state.get(CONFIGURATION_KEY) not in (None, configuration):
            state = {}  # another host or directory: NiFi clears the state on the change
        precision = context.get_property(PRECISION).value or "auto-detect"
        if strategy == BY_TIME_WINDOW.value:
            return self._list_window(context, state, entries, payload, precision)
        now = int(time.time() * 1000)
        decision = track_timestamps(
            entries, ListingState.of(state), now_ms=now, last_run_ms=self._last_run_ms,
            precision=precision,
        )  # fmt: skip
        if decision.ran:
            self._last_run_ms = now
        if decision.retry_after_ms and not decision.entries:
            time.sleep(decision.retry_after_ms / 1000)  # the held-back files, once the lag passed
            return self.list_work(context, state)
        new_state = decision.state.values() if decision.state is not None else state
        new_state = {**new_state, CONFIGURATION_KEY: configuration}
        return self._listing(list(decision.entries), payload, new_state)

    def _list_window(
        self, context: ProcessContext, state: Mapping[str, str], entries: Sequence[Entry[Any]],
        payload: dict[str, Any], precision: str,
    ) -> WorkListing:  # fmt: skip
        """Time Window: the files modified in [the last window's end, now - lag), in time order.

        An empty window keeps the state (NiFi yields without persisting), so the next window
        still starts where the last listed one ended. In a batch run, files too new for this
        window (younger than the lag) are waited for once, as Tracking Timestamps waits for
        the files it holds back.
        """
        now = int(time.time() * 1000)
        min_age = context.get_property(MIN_AGE).as_time_period("ms") or 0
        emitted, upper = time_window(
            entries, state, now_ms=now, precision=precision, min_age_ms=min_age
        )
        if not emitted:
            # the files the lag holds back (not those listed already, nor those too young)
            lower = int(state.get(LISTED_KEY) or 0)
            held = [e.timestamp for e in entries
                    if max(upper, lower) <= e.timestamp < now - min_age]  # fmt: skip
            wait = (min(held) - upper + 1) if held else 0
            if held and wait <= now - upper and not self._waited:  # at most the lag
                self._waited = True  # once: a file stamped in the future is not waited for
                time.sleep(wait / 1000)
                return self.list_work(context, state)
            self._waited = False
            return WorkListing((), state)
        self._waited = False
        configuration = self._configuration(context)
        after = {LISTED_KEY: str(upper), PROCESSED_KEY: str(upper),
                 CONFIGURATION_KEY: configuration}  # fmt: skip
        return self._listing(emitted, payload, after)

    @staticmethod
    def _configuration(context: ProcessContext) -> str:
        """A digest of Hostname and Remote Path (NiFi's isListingResetNecessary)."""
        host = context.get_property(_sftp.HOSTNAME).evaluate_attribute_expressions().value
        path = context.get_property(REMOTE_PATH).evaluate_attribute_expressions().value
        text = f"{host or ''}\0{path or '.'}"
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    @staticmethod
    def _listing(
        entries: Sequence[Entry[Any]], payload: dict[str, Any], state: Mapping[str, str]
    ) -> WorkListing:
        if not entries:
            return WorkListing((), state)
        first = entries[0]
        suffix = f"#{payload['now']}" if "now" in payload else ""
        item = WorkItem(
            f"{first.identifier}@{first.timestamp}+{len(entries)}{suffix}",
            {**payload, "files": tuple(e.item for e in entries)},
            # Tracking Entities: the task emits only what the cache does not know
            flowfiles=None if "listing" in payload else len(entries),
        )
        return WorkListing((item,), state)

    def _entries(self, context: ProcessContext, connection: Any) -> Iterator[Entry[Any]]:
        """The files the filters select, as listing entries (identifier: the full path)."""
        root = context.get_property(REMOTE_PATH).evaluate_attribute_expressions().value or "."
        how = _sftp.walk_of(
            context, file_filter=FILE_FILTER, path_filter=PATH_FILTER, dotted=IGNORE_DOTTED,
            recursive=RECURSIVE,
        )  # fmt: skip
        strategy = context.get_property(LISTING_STRATEGY).value
        tracked = strategy in (BY_TIMESTAMPS.value, BY_TIME_WINDOW.value)
        if tracked and how.limit is not None:
            # The walk's order is not time order: a listing stopped at the cap would move the
            # timestamp (or window) past files it never saw, losing them for good
            how = attrs.evolve(how, limit=None)
        now = int(time.time() * 1000)
        min_age = context.get_property(MIN_AGE).as_time_period("ms") or 0
        max_age = context.get_property(MAX_AGE).as_time_period("ms")
        min_size = context.get_property(MIN_SIZE).as_data_size("B") or 0
        max_size = context.get_property(MAX_SIZE).as_data_size("B")
        walked = list(_sftp.walk(connection.sftp, root, how))
        cap = context.get_property(_sftp.REMOTE_POLL_BATCH_SIZE).as_integer()
        if tracked and cap is not None and len(walked) > cap:
            context.logger.warning(
                "Remote Poll Batch Size %s: %s files found under %s; all are listed, as %s "
                "would otherwise move its state past the files not listed", cap, len(walked),
                root, strategy,
            )  # fmt: skip
        if strategy == BY_TIME_WINDOW.value:
            min_age = 0  # the window ends Minimum File Age ago: its files are old enough
        # NiFi filters age and size after the listing (Remote Poll Batch Size counts before)
        for directory, attr in walked:
            name = attr.filename
            modified = int(attr.st_mtime or 0) * 1000
            size = int(attr.st_size or 0)
            if now - modified < min_age or (max_age is not None and now - modified > max_age):
                continue
            if size < min_size or (max_size is not None and size > max_size):
                continue
            item = (directory, name, size, modified, attr.st_mode or 0, attr.st_uid, attr.st_gid)
            yield Entry(posixpath.join(directory, name), modified, item)

    def requeue_work(
        self, state: Mapping[str, str], items: Sequence[WorkItem], committed: Mapping[str, str]
    ) -> Mapping[str, str]:
        """A failed read leaves the committed state: the directory is listed again from there."""
        del state, items
        self._entities_listed = ""
        return dict(committed)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One FlowFile per listed file with NiFi's attributes, or one of records.

        Under Tracking Entities only the files the map cache does not know (or knows older or
        of another size) are emitted; the cache entry changes in this session.
        """
        host, port, user = item.payload["host"], item.payload["port"], item.payload["user"]
        files = list(item.payload["files"])
        if "listing" in item.payload:
            files = _untracked(context, session, item.payload, files)
            if not files:
                context.yield_()  # nothing new: NiFi's tracker yields
                return
        if writer_set(context, RECORD_WRITER):
            rows = [_record(f) for f in files]
            write_listing(context, session, RECORD_WRITER, FILE_INFO_SCHEMA, rows=rows)
            return
        for directory, name, size, modified, mode, uid, gid in files:
            when = datetime.fromtimestamp(modified / 1000, tz=UTC)
            attributes = {
                "sftp.remote.host": host,
                "sftp.remote.port": str(port),
                "sftp.listing.user": user,
                "file.owner": str(uid),
                "file.group": str(gid),
                "file.permissions": stat.filemode(mode)[1:],
                "file.size": str(size),
                "file.lastModifiedTime": when.strftime("%Y-%m-%dT%H:%M:%S+0000"),
                "filename": name,
                "path": directory,
            }
            flowfile = session.put_all_attributes(session.create(), attributes)
            session.transfer(flowfile, SUCCESS)


def time_window(
    entries: Sequence[Entry[Any]], state: Mapping[str, str], *, now_ms: int, precision: str,
    min_age_ms: int = 0,
) -> tuple[list[Entry[Any]], int]:  # fmt: skip
    """NiFi's ``listByTimeWindow``: the entries in this window, oldest first, and its end.

    The window starts at the last one's end (``listing.timestamp``, inclusive; 0 at first)
    and ends, exclusive, at *now_ms* less the listing lag of the Target System Timestamp
    Precision (detected from the entries at or after the start, as NiFi's listing drops
    older ones first), or Minimum File Age ago when that is longer: a file too young for
    this window is in the next one (filtered out by age while the window moved past its
    time, it would never be listed).
    """
    lower = int(state.get(LISTED_KEY) or 0)
    candidates = [e for e in entries if e.timestamp >= lower]
    _, lag = lag_of(precision, [e.timestamp for e in candidates])
    upper = now_ms - int(max(lag, min_age_ms))
    inside = [e for e in candidates if e.timestamp < upper]
    inside.sort(key=lambda e: e.timestamp)  # stable: entries of one time stay as listed
    return inside, upper


def _untracked(
    context: ProcessContext,
    session: ProcessSession,
    payload: Mapping[str, Any],
    files: Sequence[Any],
) -> list[Any]:
    """NiFi's ListedEntityTracker: the files new or changed since the cache's entry."""
    return tracking.track_in_session(
        context,
        session,
        payload,
        files,
        lambda f: (posixpath.join(f[0], f[1]), f[3], f[2]),
        now_ms=int(time.time() * 1000),
    )


def _record(listed: Sequence[Any]) -> dict[str, Any]:
    """One listed file as NiFi's FileInfo.toRecord() writes it (path: the file's directory)."""
    directory, name, size, modified, mode, uid, gid = listed
    return {
        "filename": name,
        "path": directory,
        "directory": False,
        "size": size,
        "lastModified": modified,
        "permissions": stat.filemode(mode)[1:],
        "owner": None if uid is None else str(uid),
        "group": None if gid is None else str(gid),
    }
