"""GetSFTP: pull files from an SFTP server, deleting them once they are kept (NiFi's GetSFTP).

NiFi's GetFileTransfer polls the remote directory every Polling Interval into a queue, hands
out up to Max Selects files per trigger over one connection, and deletes the originals in
``session.commitAsync``: after the session commit. Here the listing runs where sources list
(the driver) and the files are read in a task; Delete Original is an after-commit action,
carried out after the write-ahead log transaction that makes the FlowFiles durable, and again
at start-up should a crash come in between. So with Delete Original each remote file enters
the flow exactly once: a file whose FlowFile was not committed is still there to pull again,
one whose FlowFile was is deleted before anything is listed again.
"""

from __future__ import annotations

import posixpath
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from flowcore.errors import ProcessException
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
)
from processors.sftp import _sftp

__all__ = ["GetSFTP"]

_TRUE_FALSE = ("true", "false")
REMOTE_PATH = PropertyDescriptor(
    "Remote Path", description="The path on the remote system from which to pull or push files",
    validators=(NON_EMPTY_VALIDATOR,), el_scope=ExpressionLanguageScope.ENVIRONMENT,
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
POLLING_INTERVAL = PropertyDescriptor(
    "Polling Interval", description="Determines how long to wait between fetching the listing "
    "for new files", required=True, default="60 sec", validators=(TIME_PERIOD_VALIDATOR,),
)  # fmt: skip
RECURSIVE = PropertyDescriptor(
    "Search Recursively", description="If true, will pull files from arbitrarily nested "
    "subdirectories; otherwise, will not traverse subdirectories", required=True,
    default="false", allowable_values=_TRUE_FALSE,
)  # fmt: skip
FOLLOW_SYMLINK = _sftp.FOLLOW_SYMLINK
IGNORE_DOTTED = PropertyDescriptor(
    "Ignore Dotted Files", description="If true, files whose names begin with a dot (\".\") "
    "will be ignored", required=True, default="true", allowable_values=_TRUE_FALSE,
)  # fmt: skip
DELETE_ORIGINAL = PropertyDescriptor(
    "Delete Original", description="Determines whether or not the file is deleted from the "
    "remote system after it has been successfully transferred", required=True,
    default="true", allowable_values=_TRUE_FALSE,
)  # fmt: skip
MAX_SELECTS = PropertyDescriptor(
    "Max Selects", description="The maximum number of files to pull in a single connection",
    required=True, default="100", validators=(POSITIVE_INTEGER_VALIDATOR,),
)  # fmt: skip
REMOTE_POLL_BATCH_SIZE = _sftp.REMOTE_POLL_BATCH_SIZE
USE_NATURAL_ORDERING = PropertyDescriptor(
    "Use Natural Ordering", description="If true, will pull files in the order in which they "
    "are naturally listed; otherwise, the order in which the files will be pulled is not "
    "defined", required=True, default="false", allowable_values=_TRUE_FALSE,
)  # fmt: skip
#: NiFi's queue of listed files holds at most this many (GetFileTransfer's 25000).
QUEUE_LIMIT = 25_000


class GetSFTP(SourceProcessor):
    """Fetches files from an SFTP Server and creates FlowFiles from them (NiFi's GetSFTP).

    Attributes as NiFi's: ``filename``, ``path`` (the file's directory as listed, ending in
    ``/``), ``absolute.path`` (that directory as the server resolves it), ``file.owner``,
    ``file.group``, ``file.permissions``, ``file.lastModifiedTime``, ``getsftp.remote.source``
    (the Hostname); and ``sftp.remote.host``, ``sftp.remote.port`` as FetchSFTP's. A RECEIVE
    event names ``sftp://<hostname>/<listed path>``. Delete Original (the default) deletes the
    file after the FlowFile is durable (see the module's docstring); without it every poll pulls
    the files again, as in NiFi.
    """

    property_descriptors: ClassVar = (
        *_sftp.CONNECTION[:6], REMOTE_PATH, FILE_FILTER, PATH_FILTER, POLLING_INTERVAL,
        RECURSIVE, FOLLOW_SYMLINK, IGNORE_DOTTED, DELETE_ORIGINAL, _sftp.CONNECTION_TIMEOUT,
        _sftp.DATA_TIMEOUT, _sftp.HOST_KEY_FILE, MAX_SELECTS, REMOTE_POLL_BATCH_SIZE,
        _sftp.STRICT_HOST_KEY_CHECKING, _sftp.KEEP_ALIVE, _sftp.COMPRESSION, USE_NATURAL_ORDERING,
        *_sftp.PROXY, *_sftp.ALGORITHMS,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS,)
    tags: ClassVar = ("sftp", "get", "retrieve", "files", "fetch", "remote", "ingest", "source",
                      "input")  # fmt: skip
    identifies_work: ClassVar[bool] = True
    writes_attributes: ClassVar = {
        "filename": "The filename is set to the name of the file on the remote server",
        "path": "The path is set to the path of the file's directory on the remote server",
        "file.lastModifiedTime": "The date and time that the source file was last modified",
        "file.owner": "The numeric owner id of the source file",
        "file.group": "The numeric group id of the source file",
        "file.permissions": "The read/write/execute permissions of the source file",
        "absolute.path": "The full/absolute path from where a file was picked up. The current "
        "'path' attribute is still populated, but may be a relative path",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._last_poll = -1.0  # monotonic seconds of the last listing
        self._queue: list[tuple[Any, ...]] = []  # listed files not handed out yet
        self._handed: set[str] = set()  # handed out, not committed yet: never listed again

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """A password or a private key (NiFi's rule)."""
        if values.get(_sftp.PASSWORD.name) or values.get(_sftp.PRIVATE_KEY_PATH.name):
            return []
        return [ValidationResult("Password", None, False,
                                 "Either the Private Key Passphrase or the Password must be "
                                 "supplied")]  # fmt: skip

    def on_scheduled(self, context: ProcessContext) -> None:
        """A new start drops the queued listing (as NiFi's; the polling clock runs on)."""
        del context
        self._queue, self._handed = [], set()

    # --- the driver side --------------------------------------------------------------------

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Up to Max Selects queued files as one item; the directory is listed when due."""
        interval = context.get_property(POLLING_INTERVAL).as_time_period("s") or 0
        if (self._last_poll < 0 or time.monotonic() >= self._last_poll + interval) and len(
            self._queue
        ) < 100:  # NiFi's: no listing while 100 or more files wait
            self._poll(context)
        if not self._queue:
            return WorkListing((), state)
        selects = context.get_property(MAX_SELECTS).as_integer() or 100
        files, self._queue = self._queue[:selects], self._queue[selects:]
        self._handed.update(f[0] for f in files)
        first = files[0]
        item = WorkItem(
            f"{first[0]}@{first[3]}:{first[2]}+{len(files)}",
            {"files": tuple(files)},
            flowfiles=len(files),
            size=sum(f[2] for f in files),
        )
        return WorkListing((item,), state)

    def _poll(self, context: ProcessContext) -> None:
        """List the remote directory into the queue (files not queued or handed out yet)."""
        with _sftp.connect(context) as connection:
            listed = list(self._listing(context, connection.sftp))
        self._last_poll = time.monotonic()
        if context.get_property(USE_NATURAL_ORDERING).as_boolean():
            listed.sort(key=lambda f: f[0])
        known = self._handed | {f[0] for f in self._queue}
        for entry in listed:
            if len(self._queue) >= QUEUE_LIMIT:
                break
            if entry[0] not in known:
                self._queue.append(entry)

    def _listing(self, context: ProcessContext, sftp: Any) -> Iterator[tuple[Any, ...]]:
        """``(full path, directory, size, mtime ms, mode, uid, gid, absolute directory)``."""
        root = context.get_property(REMOTE_PATH).evaluate_attribute_expressions().value or "."
        how = _sftp.walk_of(
            context, file_filter=FILE_FILTER, path_filter=PATH_FILTER, dotted=IGNORE_DOTTED,
            recursive=RECURSIVE,
        )  # fmt: skip
        absolute: dict[str, str] = {}
        for directory, attr in _sftp.walk(sftp, root, how):
            if directory not in absolute:
                absolute[directory] = sftp.normalize(directory)
            yield (posixpath.join(directory, attr.filename), directory, int(attr.st_size or 0),
                   int(attr.st_mtime or 0) * 1000, attr.st_mode or 0, attr.st_uid, attr.st_gid,
                   absolute[directory])  # fmt: skip

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork:
        """The listed files not handed out yet."""
        del context, state
        return PendingWork(len(self._queue), sum(f[2] for f in self._queue))

    def requeue_work(
        self, state: Mapping[str, str], items: Sequence[WorkItem], committed: Mapping[str, str]
    ) -> Mapping[str, str]:
        """Files that could not be read are listed again at the next poll."""
        del items, committed
        self._handed.clear()
        return dict(state)

    def after_commit(self, context: ProcessContext, items: Sequence[WorkItem]) -> None:
        """The handed-out files are committed (and deleted by then): the next poll decides."""
        del context, items
        self._handed.clear()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """List and read in one session (the test harness's path)."""
        super().on_trigger(context, session)
        self._handed.clear()

    # --- the task side ----------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Pull the item's files over one connection; Delete Original after the commit."""
        delete = bool(context.get_property(DELETE_ORIGINAL).as_boolean())
        hostname = context.get_property(_sftp.HOSTNAME).evaluate_attribute_expressions().value or ""
        try:
            connection = _sftp.connect(context)
        except Exception as error:
            if not _sftp.is_sftp_error(error):
                raise
            msg = f"GetSFTP could not connect to SFTP {hostname}: {type(error).__name__}: {error}"
            raise ProcessException(msg, processor="GetSFTP") from error
        with connection:
            where = _sftp.address(context).payload()
            for full, directory, size, modified, mode, uid, gid, absolute in item.payload["files"]:
                started = time.monotonic()
                flowfile = session.create()
                try:
                    with connection.sftp.open(full, "rb") as handle:
                        handle.prefetch(size)
                        flowfile = session.write(
                            flowfile, iter(lambda h=handle: h.read(1 << 20), b"")
                        )
                except Exception as error:
                    if not _sftp.is_sftp_error(error):
                        raise
                    msg = (
                        f"GetSFTP could not retrieve {full} from SFTP {hostname}: "
                        f"{type(error).__name__}: {error}"
                    )
                    raise ProcessException(msg, processor="GetSFTP") from error
                when = datetime.fromtimestamp(modified / 1000, tz=UTC)
                flowfile = session.put_all_attributes(flowfile, {
                    "file.lastModifiedTime": when.strftime("%Y-%m-%dT%H:%M:%S+0000"),
                    "file.permissions": stat.filemode(mode)[1:],
                    "file.owner": str(uid), "file.group": str(gid),
                    "getsftp.remote.source": hostname,
                    "sftp.remote.host": connection.host,
                    "sftp.remote.port": str(connection.port),
                    "path": directory.rstrip("/") + "/",
                    "filename": posixpath.basename(full),
                    "absolute.path": absolute.rstrip("/") + "/",
                })  # fmt: skip
                session.provenance.receive(
                    flowfile, f"sftp://{hostname}/{full}",
                    duration_ms=int((time.monotonic() - started) * 1000),
                )  # fmt: skip
                session.transfer(flowfile, SUCCESS)
                if delete:
                    session.after_commit({**where, "remote": full, "flowfile": str(flowfile)})

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        """Delete Original: delete the pulled files, now that their FlowFiles are durable."""
        _sftp.complete_remotely(context, actions, _failed)


def _failed(context: ProcessContext, action: Mapping[str, Any], error: BaseException) -> None:
    """NiFi's error when a delete fails: the file will be pulled again."""
    context.logger.error(
        "Failed to remove remote file %s due to %s. This file may be duplicated in a "
        "subsequent run", action["remote"], error,
    )  # fmt: skip
