"""FetchSFTP: fetch a remote file's content over SFTP (NiFi's FetchSFTP)."""

from __future__ import annotations

import errno
import logging
import posixpath
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from processors.sftp import _sftp

__all__ = ["FetchSFTP"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
SUCCESS = Relationship("success", "All FlowFiles that are received are routed to success")
COMMS_FAILURE = Relationship(
    "comms.failure", "Any FlowFile that could not be fetched from the remote server due to a "
    "communications failure will be transferred to this Relationship.",
)  # fmt: skip
NOT_FOUND = Relationship(
    "not.found", "Any FlowFile for which we receive a 'Not Found' message from the remote "
    "server will be transferred to this Relationship.",
)  # fmt: skip
PERMISSION_DENIED = Relationship(
    "permission.denied", "Any FlowFile that could not be fetched from the remote server due "
    "to insufficient permissions will be transferred to this Relationship.",
)  # fmt: skip

REMOTE_FILENAME = PropertyDescriptor(
    "Remote File", description="The fully qualified filename on the remote system",
    required=True, el_scope=_FLOWFILE,
)  # fmt: skip
NONE = AllowableValue("None", "None", "Leave the file as-is")
MOVE = AllowableValue(
    "Move File", "Move File", "Move the file to the directory specified by the <Move "
    "Destination Directory> property",
)  # fmt: skip
DELETE = AllowableValue(
    "Delete File", "Delete File", "Deletes the original file from the remote system"
)
COMPLETION_STRATEGY = PropertyDescriptor(
    "Completion Strategy", description="Specifies what to do with the original file on the "
    "server once it has been pulled into NiFi. If the Completion Strategy fails, a warning "
    "will be logged but the data will still be transferred.", required=True,
    default="None", allowable_values=(NONE, MOVE, DELETE),
)  # fmt: skip
MOVE_DESTINATION_DIR = PropertyDescriptor(
    "Move Destination Directory", description="The directory on the remote server to move the "
    "original file to once it has been ingested into NiFi. This property is ignored unless the "
    "Completion Strategy is set to 'Move File'. The specified directory must already exist on "
    "the remote system if 'Create Directory' is disabled, or the rename will fail.",
    el_scope=_FLOWFILE,
)  # fmt: skip
CREATE_DIRECTORY = PropertyDescriptor(
    "Create Directory", description="Used when 'Completion Strategy' is 'Move File'. Specifies "
    "whether or not the remote directory should be created if it does not exist.",
    required=True, default="false", allowable_values=("true", "false"),
)  # fmt: skip

DISABLE_DIRECTORY_LISTING = PropertyDescriptor(
    "Disable Directory Listing", description="Control how 'Move Destination Directory' is "
    "created when 'Completion Strategy' is 'Move File' and 'Create Directory' is enabled. If "
    "set to 'true', directory listing is not performed prior to create missing directories. "
    "By default, this processor executes a directory listing command to see target directory "
    "existence before creating missing directories. However, there are situations that you "
    "might need to disable the directory listing such as the following. Directory listing "
    "might fail with some permission setups (e.g. chmod 100) on a directory. Also, if any "
    "other SFTP client created the directory after this processor performed a listing and "
    "before a directory creation request by this processor is finished, then an error is "
    "returned because the directory already exists.", default="false",
    allowable_values=("true", "false"),
)  # fmt: skip
MOVE_CONFLICT_RESOLUTION = PropertyDescriptor(
    "Move Conflict Resolution", description="Specifies how to handle the case when the "
    "destination file already exists when Completion Strategy is set to Move files",
    required=True, default="FAIL",
    allowable_values=(
        AllowableValue("FAIL", "Fail", "Leave the source file unchanged and log failure status"),
        AllowableValue(
            "REPLACE", "Replace", "When the destination file already exists, delete it and "
            "rename the source file to the destination. This option supports SFTP servers "
            "such as OpenSSH that do not implement atomic overwrite on rename.",
        ),
    ),
    dependencies=((COMPLETION_STRATEGY, MOVE.value),),
)  # fmt: skip


#: NiFi's LogLevel values, as Python's logging levels (NONE: not logged).
_LOG_LEVELS = {
    "TRACE": logging.DEBUG,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "NONE": None,
}
FILE_NOT_FOUND_LOG_LEVEL = PropertyDescriptor(
    "Log Level When File Not Found", description="Log level to use in case the file does not "
    "exist when the processor is triggered",
    required=True, default="ERROR", allowable_values=tuple(_LOG_LEVELS),
    aliases=("fetchfiletransfer-notfound-loglevel",),
)  # fmt: skip


class FetchSFTP(Processor):
    """Fetches the content of a file from a remote SFTP server (NiFi's FetchSFTP).

    The file streams into the content repository; ``sftp.remote.host``, ``sftp.remote.port``,
    ``sftp.listing.user``, ``path`` and ``filename`` are set and a FETCH event names
    ``sftp://host:port/path``. A missing file goes to ``not.found``, a refused one to
    ``permission.denied``, an unreachable server, refused credentials or a timeout to
    ``comms.failure`` (penalized, with ``fetch.failure.reason``). The Completion Strategy
    (Move File, Delete File) runs once the FlowFile is durable, as NiFi's ``commitAsync``: the
    session records it as an after-commit action, and the engine carries it out after the
    write-ahead log commit, and again at start-up after a crash in between. So the remote
    file is removed only once its content is kept, and each file is fetched once.
    """

    property_descriptors: ClassVar = (
        *_sftp.CONNECTION, REMOTE_FILENAME, COMPLETION_STRATEGY, MOVE_DESTINATION_DIR,
        MOVE_CONFLICT_RESOLUTION, CREATE_DIRECTORY, DISABLE_DIRECTORY_LISTING,
        _sftp.CONNECTION_TIMEOUT, _sftp.DATA_TIMEOUT, _sftp.KEEP_ALIVE, _sftp.HOST_KEY_FILE,
        _sftp.STRICT_HOST_KEY_CHECKING, _sftp.COMPRESSION, *_sftp.PROXY,
        FILE_NOT_FOUND_LOG_LEVEL, *_sftp.ALGORITHMS,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS, COMMS_FAILURE, NOT_FOUND, PERMISSION_DENIED)
    tags: ClassVar = ("sftp", "get", "retrieve", "files", "fetch", "remote", "ingest", "source",
                      "input")  # fmt: skip
    writes_attributes: ClassVar = {
        "sftp.remote.host": "The hostname or IP address from which the file was pulled",
        "sftp.remote.port": "The port that was used to communicate with the remote SFTP server",
        "sftp.remote.filename": "The name of the remote file that was pulled",
        "filename": "The filename is updated to point to the filename fo the remote file",
        "path": "If the Remote File contains a directory name, that directory name will be "
        "added to the FlowFile using the 'path' attribute",
        "fetch.failure.reason": "The name of the failure relationship applied when routing to "
        "any failure relationship",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fetch one FlowFile's remote file."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        remote = (
            context.get_property(REMOTE_FILENAME).evaluate_attribute_expressions(flowfile).value
            or ""
        )
        try:
            connection = _sftp.connect(context, flowfile)
        except Exception as error:
            if not _sftp.is_sftp_error(error):
                raise
            self._fail(context, session, flowfile, COMMS_FAILURE, remote, error)
            return
        with connection:
            try:
                with connection.sftp.open(remote, "rb") as handle:
                    handle.prefetch()
                    flowfile = session.write(flowfile, iter(lambda: handle.read(1 << 20), b""))
            except Exception as error:
                if not _sftp.is_sftp_error(error):
                    raise
                code = getattr(error, "errno", None)
                relationship = {errno.ENOENT: NOT_FOUND, errno.EACCES: PERMISSION_DENIED}.get(
                    code,
                    COMMS_FAILURE,  # type: ignore[arg-type]
                )
                self._fail(context, session, flowfile, relationship, remote, error)
                return
            self._complete(context, session, flowfile, remote)
        attributes = {
            "sftp.remote.host": connection.host,
            "sftp.remote.port": str(connection.port),
            "sftp.remote.filename": remote,
            "filename": posixpath.basename(remote),
        }
        parent = posixpath.dirname(remote)
        if parent:
            attributes["path"] = parent
        flowfile = session.put_all_attributes(flowfile, attributes)
        uri = _sftp.transit_uri(connection.host, connection.port, remote)
        session.provenance.fetch(
            flowfile, uri, duration_ms=int((time.monotonic() - started) * 1000)
        )
        session.transfer(flowfile, SUCCESS)

    @staticmethod
    def _complete(
        context: ProcessContext, session: ProcessSession, flowfile: Any, remote: str
    ) -> None:
        """Record Move File or Delete File, carried out once the FlowFile is durable."""
        strategy = context.get_property(COMPLETION_STRATEGY).value or "None"
        if strategy not in {DELETE.value, MOVE.value}:
            return
        action: dict[str, Any] = {
            **_sftp.address(context, flowfile).payload(), "remote": remote,
            "flowfile": str(flowfile),
        }  # fmt: skip
        if strategy == MOVE.value:
            target_dir = (
                context.get_property(MOVE_DESTINATION_DIR)
                .evaluate_attribute_expressions(flowfile).value or ""
            )  # fmt: skip
            action["move_to"] = posixpath.join(target_dir, posixpath.basename(remote))
            action["create"] = bool(context.get_property(CREATE_DIRECTORY).as_boolean())
            if context.get_property(DISABLE_DIRECTORY_LISTING).as_boolean():
                action["blind"] = True
            if context.get_property(MOVE_CONFLICT_RESOLUTION).value == "REPLACE":
                action["replace"] = True
        session.after_commit(action)

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        """Delete or move the fetched remote files, one connection per server.

        Idempotent, as a start-up may do it again: a file already deleted, or already at
        its move target, is done. A failure is a warning, as in NiFi: the data is kept.
        """
        _sftp.complete_remotely(context, actions, _warn)

    @staticmethod
    def _fail(  # noqa: PLR0917 (the failure's parts)
        context: ProcessContext, session: ProcessSession, flowfile: Any,
        relationship: Relationship, remote: str, error: BaseException,
    ) -> None:  # fmt: skip
        """Route to *relationship*, penalized, with fetch.failure.reason; log the cause.

        A missing file is logged at Log Level When File Not Found (NiFi's, NONE: not at all).
        """
        level: int | None = logging.ERROR
        if relationship is NOT_FOUND:
            level = _LOG_LEVELS[context.get_property(FILE_NOT_FOUND_LOG_LEVEL).value or "ERROR"]
        if level is not None:
            context.logger.log(
                level, "Failed to fetch content for %s from SFTP %s; routing to %s: %s: %s",
                flowfile, remote, relationship.name, type(error).__name__, error,
            )  # fmt: skip
        flowfile = session.put_attribute(flowfile, "fetch.failure.reason", relationship.name)
        session.transfer(session.penalize(flowfile), relationship)


def _warn(context: ProcessContext, action: Mapping[str, Any], error: BaseException) -> None:
    """NiFi's warning: the data was kept, the remote file was not completed."""
    context.logger.warning(
        "Successfully fetched the content for %s from %s:%s%s but failed to perform "
        "Completion Action due to %s", action.get("flowfile", ""), action["host"],
        action["port"], action["remote"], error,
    )  # fmt: skip
