"""PutSFTP: send a FlowFile's content to a remote directory over SFTP (NiFi's PutSFTP).

Dot Rename (the default) uploads to ``.<filename>`` and renames it to ``<filename>`` when the
upload is whole, so a reader on the server never sees a partial file: the rename is the
publish step. It happens in the task, before the write-ahead log commit; a crash after it
sends the FlowFile again on restart, and the Conflict Resolution decides what the second
delivery does (REPLACE rewrites the same bytes: the server holds the file once).
"""

from __future__ import annotations

import contextlib
import datetime
import posixpath
import stat
import time
from typing import Any, ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from processors.sftp import _sftp

__all__ = ["PutSFTP"]

_FLOWFILE = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
SUCCESS = Relationship("success", "FlowFiles that are successfully sent will be routed to success")
REJECT = Relationship(
    "reject", "FlowFiles that were rejected by the destination system",
)  # fmt: skip
FAILURE = Relationship(
    "failure", "FlowFiles that failed to send to the remote system; failure is usually looped "
    "back to this processor",
)  # fmt: skip
CONFLICTS = ("REPLACE", "IGNORE", "RENAME", "REJECT", "FAIL", "NONE")

REMOTE_PATH = PropertyDescriptor(
    "Remote Path", description="The path on the remote system from which to pull or push files",
    el_scope=_FLOWFILE,
)  # fmt: skip
CREATE_DIRECTORY = PropertyDescriptor(
    "Create Directory", description="Specifies whether or not the remote directory should be "
    "created if it does not exist.", required=True, default="false",
    allowable_values=("true", "false"),
)  # fmt: skip
BATCH_SIZE = PropertyDescriptor(
    "Batch Size", description="The maximum number of FlowFiles to send in a single connection",
    required=True, default="500",
)  # fmt: skip
CONFLICT_RESOLUTION = PropertyDescriptor(
    "Conflict Resolution", description="Determines how to handle the problem of filename "
    "collisions", required=True, default="NONE", allowable_values=CONFLICTS,
)  # fmt: skip
REJECT_ZERO_BYTE = PropertyDescriptor(
    "Reject Zero-Byte Files", description="Determines whether or not Zero-byte files should be "
    "rejected without attempting to transfer", default="true",
    allowable_values=("true", "false"),
)  # fmt: skip
DOT_RENAME = PropertyDescriptor(
    "Dot Rename", description="If true, then the filename of the sent file is prepended with a "
    "\".\" and then renamed back to the original once the file is completely sent. Otherwise, "
    "there is no rename. This property is ignored if the Temporary Filename property is set.",
    default="true", allowable_values=("true", "false"),
)  # fmt: skip
TEMP_FILENAME = PropertyDescriptor(
    "Temporary Filename", description="If set, the filename of the sent file will be equal to "
    "the value specified during the transfer and after successful completion will be renamed "
    "to the original filename. If this value is set, the Dot Rename property is ignored.",
    el_scope=_FLOWFILE,
)  # fmt: skip
LAST_MODIFIED_TIME = PropertyDescriptor(
    "Last Modified Time", description="The lastModifiedTime to assign to the file after "
    "transferring it, as yyyy-MM-dd'T'HH:mm:ssZ; empty: the time of the transfer.",
    el_scope=_FLOWFILE,
)  # fmt: skip
REMOTE_OWNER = PropertyDescriptor(
    "Remote Owner", description="Integer value representing the User ID to set on the file "
    "after transferring it. If not set, the owner will not be set. Supports Expression "
    "Language: ${owner} will use the attribute from the FlowFile.", el_scope=_FLOWFILE,
)  # fmt: skip
REMOTE_GROUP = PropertyDescriptor(
    "Remote Group", description="Integer value representing the Group ID to set on the file "
    "after transferring it. If not set, the group will not be set. Supports Expression "
    "Language: ${group} will use the attribute from the FlowFile.", el_scope=_FLOWFILE,
)  # fmt: skip
DISABLE_DIRECTORY_LISTING = PropertyDescriptor(
    "Disable Directory Listing", description="If set to 'true', directory listing is not "
    "performed prior to create missing directories. By default, this processor executes a "
    "directory listing command to see target directory existence before creating missing "
    "directories. However, there are situations that you might need to disable the directory "
    "listing such as the following. Directory listing might fail with some permission setups "
    "(e.g. chmod 100) on a directory. Also, if any other SFTP client created the directory "
    "after this processor performed a listing and before a directory creation request by this "
    "processor is finished, then an error is returned because the directory already exists.",
    default="false", allowable_values=("true", "false"),
)  # fmt: skip
#: NiFi's RENAME tries 1.<filename> ... 99.<filename>, then rejects.
RENAME_ATTEMPTS = 99
PERMISSIONS = PropertyDescriptor(
    "Permissions", description="The permissions to assign to the file after transferring it, "
    "as octal (e.g. 644) or rwxr-x---; empty: the server's default.", el_scope=_FLOWFILE,
)  # fmt: skip


class PutSFTP(Processor):
    """Sends FlowFiles to an SFTP Server (NiFi's PutSFTP).

    Conflict Resolution when the file exists: REPLACE overwrites it, IGNORE leaves it
    (success), RENAME sends it as ``1.<filename>`` ... ``99.<filename>`` (then rejects), REJECT
    routes to ``reject``, FAIL to ``failure`` (penalized); NONE does not look and sends it over
    the existing file. A directory of that name rejects (except under NONE, where the rename
    fails). Permissions, Remote Owner and Remote Group are set on the uploaded file before
    the rename, Last Modified Time after it; a server refusing them is logged, the file kept.
    A SEND event names ``sftp://host:port/path``. An unreachable server, refused credentials
    or a timeout route to ``failure``, penalized.
    """

    property_descriptors: ClassVar = (
        *_sftp.CONNECTION, REMOTE_PATH, CREATE_DIRECTORY, DISABLE_DIRECTORY_LISTING, BATCH_SIZE,
        _sftp.CONNECTION_TIMEOUT, _sftp.DATA_TIMEOUT, CONFLICT_RESOLUTION, REJECT_ZERO_BYTE,
        DOT_RENAME, TEMP_FILENAME, _sftp.HOST_KEY_FILE, LAST_MODIFIED_TIME, PERMISSIONS,
        REMOTE_OWNER, REMOTE_GROUP, _sftp.STRICT_HOST_KEY_CHECKING, _sftp.KEEP_ALIVE,
        _sftp.COMPRESSION, *_sftp.PROXY, *_sftp.ALGORITHMS,
    )  # fmt: skip
    relationships: ClassVar = (SUCCESS, REJECT, FAILURE)
    tags: ClassVar = ("remote", "copy", "egress", "put", "sftp", "archive", "files")

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Send up to Batch Size FlowFiles (NiFi's batch per trigger), one connection per server.

        NiFi keeps its client while the host stays the same; a connection per FlowFile would
        pay an SSH handshake and authentication for each.
        """
        connections: dict[str, _sftp.Connection] = {}
        try:
            for flowfile in session.get(context.get_property(BATCH_SIZE).as_integer() or 1):
                self._put(context, session, flowfile, connections)
        finally:
            for connection in connections.values():
                with contextlib.suppress(Exception):
                    connection.close()

    def _put(
        self, context: ProcessContext, session: ProcessSession, flowfile: Any,
        connections: dict[str, _sftp.Connection],
    ) -> None:  # fmt: skip
        """Send one FlowFile; one that fails goes to failure alone.

        An error routes this FlowFile only, never the batch: the ones sent before it are on
        the server, and a rollback would send them again (twice with RENAME).
        """
        if flowfile.size == 0 and context.get_property(REJECT_ZERO_BYTE).as_boolean():
            context.logger.warning("Rejecting %s because it is zero bytes", flowfile)
            session.transfer(session.penalize(flowfile), REJECT)
            return
        started = time.monotonic()
        key = host = ""
        try:
            to = _sftp.address(context, flowfile)
            key, host = repr(sorted(to.payload().items())), to.host
            connection = connections.get(key)
            if connection is None:
                connection = connections[key] = _sftp.connect(context, to=to)
            directory = (
                context.get_property(REMOTE_PATH).evaluate_attribute_expressions(flowfile).value
            ) or ""
            name = flowfile.attributes.get("filename", "")
            outcome, target = self._send(context, session, connection, flowfile, directory, name)
        except Exception as error:
            stale = connections.pop(key, None)  # it may be broken: the next FlowFile reconnects
            if stale is not None:
                with contextlib.suppress(Exception):
                    stale.close()
            context.logger.error(
                "Unable to transfer %s to remote SFTP host %s due to %s: %s; routing to failure",
                flowfile, host, type(error).__name__, error,
            )  # fmt: skip
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        if outcome is REJECT or outcome is FAILURE:
            context.logger.warning("Resource %s already exists: routing %s to %s",
                                   target, flowfile, outcome.name)  # fmt: skip
            # NiFi penalizes FAIL only: a rejected conflict is final, not retried
            session.transfer(session.penalize(flowfile) if outcome is FAILURE else flowfile,
                             outcome)  # fmt: skip
            return
        if target is not None:
            uri = _sftp.transit_uri(connection.host, connection.port, target)
            ms = int((time.monotonic() - started) * 1000)
            session.provenance.send(flowfile, uri, duration_ms=ms)
        session.transfer(flowfile, SUCCESS)

    @staticmethod
    def _send(  # noqa: PLR0917 (the upload's parts)
        context: ProcessContext, session: ProcessSession, connection: Any, flowfile: Any,
        directory: str, name: str,
    ) -> tuple[Relationship | None, str | None]:  # fmt: skip
        """Upload (dot-named, then renamed); the outcome and the final remote path."""
        sftp = connection.sftp
        target = posixpath.join(directory, name) if directory else name
        conflict = context.get_property(CONFLICT_RESOLUTION).value or "NONE"
        # NONE sends without looking (NiFi's): the server decides; the others look first
        exists = conflict != "NONE" and _exists(sftp, target)
        if exists and _is_directory(sftp, target):
            return REJECT, target  # NiFi's rule: a directory of that name rejects
        if exists:
            if conflict == "REJECT":
                return REJECT, target
            if conflict == "FAIL":
                return FAILURE, target
            if conflict == "IGNORE":
                return None, None
            if conflict == "RENAME":
                free = next((f"{n}.{name}" for n in range(1, RENAME_ATTEMPTS + 1)
                             if not _exists(sftp, posixpath.join(directory, f"{n}.{name}"))),
                            None)  # fmt: skip
                if free is None:
                    context.logger.warning(
                        "Could not determine a unique name after %d attempts for %s: "
                        "rejecting", RENAME_ATTEMPTS, flowfile,
                    )  # fmt: skip
                    return REJECT, target
                name = free
                target = posixpath.join(directory, name) if directory else name
        if directory and context.get_property(CREATE_DIRECTORY).as_boolean():
            blind = bool(context.get_property(DISABLE_DIRECTORY_LISTING).as_boolean())
            _sftp.make_dirs(sftp, directory, blind=blind)
        temporary = (
            context.get_property(TEMP_FILENAME).evaluate_attribute_expressions(flowfile).value
        )
        if not temporary and context.get_property(DOT_RENAME).as_boolean():
            temporary = f".{name}"
        upload = target
        if temporary:  # NiFi's buildFullPath: under the Remote Path, even with a leading /
            upload = posixpath.join(directory, temporary.lstrip("/")) if directory else temporary
        with sftp.open(upload, "wb") as handle, session.read(flowfile) as source:
            handle.set_pipelined(True)
            while chunk := source.read(1 << 20):
                handle.write(chunk)
        permissions = (
            context.get_property(PERMISSIONS).evaluate_attribute_expressions(flowfile).value
        )
        if permissions:
            try:
                sftp.chmod(upload, _mode(permissions))
            except Exception as error:  # NiFi logs it: the content is delivered all the same
                if not _sftp.is_sftp_error(error):
                    raise
                context.logger.error(
                    "Failed to set permission on %s to %s due to %s", upload, permissions, error
                )
        _set_owner(context, sftp, flowfile, upload)
        if upload != target:
            _replace(sftp, upload, target)
        modified = (
            context.get_property(LAST_MODIFIED_TIME).evaluate_attribute_expressions(flowfile).value
        )
        if modified:
            try:
                when = datetime.datetime.strptime(modified, "%Y-%m-%dT%H:%M:%S%z").timestamp()
            except ValueError:
                context.logger.error(
                    "Failed to set lastModifiedTime on %s to %s: not yyyy-MM-dd'T'HH:mm:ssZ",
                    target, modified,
                )  # fmt: skip
            else:
                try:
                    sftp.utime(target, (when, when))
                except Exception as error:  # a server refusing setstat: the file is delivered
                    if not _sftp.is_sftp_error(error):
                        raise
                    context.logger.error(
                        "Failed to set lastModifiedTime on %s to %s due to %s",
                        target, modified, error,
                    )  # fmt: skip
        return None, target


def _replace(sftp: Any, upload: str, target: str) -> None:
    """Rename *upload* over *target* (REPLACE and NONE), the temporary file removed on failure.

    OpenSSH's ``posix-rename@openssh.com`` replaces in one step, so a failing rename leaves
    the old file; when it fails with the upload still there (a server without the extension,
    whatever words its error uses), SFTP v3's remove-then-rename (NiFi's) runs, which loses
    both when that rename fails too.
    """
    try:
        sftp.posix_rename(upload, target)
    except OSError:  # servers word a missing extension in their own ways: the upload decides
        try:
            sftp.stat(upload)
        except OSError:
            raise  # the upload is gone: nothing to rename
    else:
        return
    with contextlib.suppress(OSError):  # none there, or a directory: the rename says
        sftp.remove(target)
    try:
        sftp.rename(upload, target)
    except OSError:
        sftp.remove(upload)
        raise


def _set_owner(context: ProcessContext, sftp: Any, flowfile: Any, path: str) -> None:
    """Remote Owner and Remote Group (numeric ids); a failure is logged, the file delivered."""
    value = lambda d: context.get_property(d).evaluate_attribute_expressions(flowfile).value  # noqa: E731
    owner, group = value(REMOTE_OWNER), value(REMOTE_GROUP)
    if not owner and not group:
        return
    try:
        current = sftp.stat(path) if not (owner and group) else None
        uid = int(owner) if owner else current.st_uid
        gid = int(group) if group else current.st_gid
        sftp.chown(path, uid, gid)
    except ValueError:
        context.logger.error(
            "Failed to set owner and group on %s to %s:%s: Remote Owner and Remote Group "
            "take numeric ids", path, owner, group,
        )  # fmt: skip
    except Exception as error:  # a server refusing setstat: the file is delivered
        if not _sftp.is_sftp_error(error):
            raise
        context.logger.error(
            "Failed to set owner and group on %s to %s:%s due to %s", path, owner, group, error
        )


def _is_directory(sftp: Any, path: str) -> bool:
    return stat.S_ISDIR(sftp.stat(path).st_mode or 0)


def _exists(sftp: Any, path: str) -> bool:
    try:
        sftp.stat(path)
    except FileNotFoundError:
        return False
    return True


def _mode(text: str) -> int:
    """NiFi's Permissions: octal digits or rwxrwxrwx."""
    if text.isdigit():
        return int(text, 8)
    bits = 0
    for i, char in enumerate(text[-9:]):
        if char != "-":
            bits |= 1 << (8 - i)
    return bits
