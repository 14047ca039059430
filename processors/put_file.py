"""PutFile: write FlowFile content to the local file system, safely."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, ClassVar, Protocol

import attrs

from flowcore.errors import RepositoryError
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext
from flowcore.session.process_session import ProcessSession
from flowcore.validators import BOOLEAN_VALIDATOR, NON_EMPTY_VALIDATOR, POSITIVE_INTEGER_VALIDATOR
from processors._file_attributes import RAW_FILENAME, exact_name

__all__ = ["PutFile"]

REPLACE = "replace"
IGNORE = "ignore"
FAIL = "fail"
_OCTAL = re.compile(r"[0-7]{3,4}")
_SYMBOLIC = re.compile(r"[r-][w-][x-][r-][w-][x-][r-][w-][x-]")


class _Refused(Exception):
    """The FlowFile cannot be written as configured; it goes to failure with this reason."""


def _mode(text: str) -> int:
    if _OCTAL.fullmatch(text):
        return int(text, 8)
    if _SYMBOLIC.fullmatch(text):
        return sum(
            bit
            for char, bit in zip(text, (256, 128, 64, 32, 16, 8, 4, 2, 1), strict=True)
            if char != "-"
        )
    msg = f"Permissions {text!r} must be octal like '750' or symbolic like 'rwxr-x---'"
    raise _Refused(msg)


def _name_max(directory: Path) -> int:
    """The longest file name (bytes) *directory*'s file system takes (255 where it cannot say)."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


class PutFile(Processor):
    """Writes the contents of a FlowFile to the local file system (NiFi's PutFile).

    The content is written to a short hidden temporary name in the target directory
    (``.flowcore-<16 hex>.part``) and renamed into place only after the FlowFile's transaction is
    durable (:meth:`~flowcore.session.process_session.ProcessSession.stage_file`): a crash never
    leaves a half file under the final name, and a task attempt replayed after a crash writes each
    committed FlowFile's file exactly once. A Directory or filename that would escape the configured
    directory (``..``, an absolute filename, a symlink pointing outside) sends the FlowFile to
    ``failure`` with the reason; the configured directory is the Directory property up to its first
    Expression Language (up to the last ``/`` before it when the expression completes a name, as
    in ``out/country=${country}``). Each written file gets a SEND provenance event.
    """

    DIRECTORY = PropertyDescriptor(
        "Directory",
        description="The directory to which files should be written. You may use expression "
        "language such as /aa/bb/${path}",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CONFLICT_RESOLUTION = PropertyDescriptor(
        "Conflict Resolution Strategy",
        description="Indicates what should happen when a file with the same name already exists "
        "in the output directory",
        required=True,
        default=FAIL,
        allowable_values=(REPLACE, IGNORE, FAIL),
    )
    CREATE_DIRS = PropertyDescriptor(
        "Create Missing Directories",
        description="If true, then missing destination directories will be created. If false, "
        "flowfiles are penalized and sent to failure.",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    MAX_DESTINATION_FILES = PropertyDescriptor(
        "Maximum File Count",
        description="Specifies the maximum number of files that can exist in the output directory",
        required=False,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    CHANGE_LAST_MODIFIED_TIME = PropertyDescriptor(
        "Last Modified Time",
        description="Sets the lastModifiedTime on the output file to the value of this attribute. "
        "Format must be yyyy-MM-dd'T'HH:mm:ssZ. You may also use expression language such as "
        "${file.lastModifiedTime}.",
        required=False,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CHANGE_PERMISSIONS = PropertyDescriptor(
        "Permissions",
        description="Sets the permissions on the output file to the value of this attribute. "
        "Format must be either UNIX rwxrwxrwx with a - in place of denied permissions (e.g. "
        "rw-r--r--) or an octal number (e.g. 644). You may also use expression language such as "
        "${file.permissions}.",
        required=False,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CHANGE_OWNER = PropertyDescriptor(
        "Owner",
        description="Sets the owner on the output file to the value of this attribute. You may "
        "also use expression language such as ${file.owner}.",
        required=False,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CHANGE_GROUP = PropertyDescriptor(
        "Group",
        description="Sets the group on the output file to the value of this attribute. You may "
        "also use expression language such as ${file.group}.",
        required=False,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    property_descriptors: ClassVar = (
        DIRECTORY,
        CONFLICT_RESOLUTION,
        CREATE_DIRS,
        MAX_DESTINATION_FILES,
        CHANGE_LAST_MODIFIED_TIME,
        CHANGE_PERMISSIONS,
        CHANGE_OWNER,
        CHANGE_GROUP,
    )
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("put", "local", "copy", "archive", "files", "filesystem")
    reads_attributes = {"filename": "The filename to use when writing the FlowFile to disk."}

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Write one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        try:
            target, written = self._put(
                context, session, self._order_of(context, session, flowfile)
            )
        except _Refused as ex:
            context.logger.error("Cannot write %s: %s; routing to failure", flowfile, ex)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        except RepositoryError:
            raise  # the repository (not the output directory) failed: the engine stops the run
        except (OSError, ValueError) as ex:  # ValueError: a path the OS cannot take
            context.logger.error("Failed to write %s: %s; routing to failure", flowfile, ex)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        if written:
            session.provenance.send(flowfile, target.as_uri())
        session.transfer(flowfile, SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> tuple[str, FlowFileBatch] | None:
        """Write every FlowFile of the batch, as ``on_trigger`` does, from its claim ranges.

        Each file is staged (a hidden temporary, renamed after the commit) with its bytes
        picked from windows of the batch's claim; a SEND is reported for each file written.
        A FlowFile that would go to ``failure`` raises, so the batch declines: its
        temporaries are discarded and ``on_trigger`` takes the FlowFiles one by one.

        A Maximum File Count declines too: the count of a directory depends on when staged
        files are published (each session's commit one by one, the whole batch's at once), so
        the batch could refuse a FlowFile one by one would write.
        """
        if context.get_property(self.MAX_DESTINATION_FILES).as_integer() is not None:
            return None
        orders = self._batch_orders(context, batch)
        written_rows: list[int] = []
        uris: list[str] = []
        for row, (planned, pieces) in enumerate(zip(orders, context.contents(batch), strict=True)):
            order = attrs.evolve(planned, write=_writer(pieces), subject=_Lazy(batch, row))
            target, written = self._put(context, context, order)
            if written:
                written_rows.append(row)
                uris.append(target.as_uri())
        if written_rows:
            context.report_send(batch, uris, rows=written_rows)
        return SUCCESS.name, batch

    def _order_of(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile
    ) -> _Order:
        """What to write for one FlowFile: its properties evaluated, its content to copy."""

        def value(descriptor: PropertyDescriptor) -> str | None:
            return context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value

        def write(out: BinaryIO) -> None:
            session.export_to(flowfile, out)  # copied by the kernel where it can

        return _Order(
            directory=value(self.DIRECTORY),
            filename=exact_name(flowfile.attributes),
            modified=value(self.CHANGE_LAST_MODIFIED_TIME),
            permissions=value(self.CHANGE_PERMISSIONS),
            owner=value(self.CHANGE_OWNER),
            group=value(self.CHANGE_GROUP),
            write=write,
            subject=flowfile,
        )

    def _batch_orders(self, context: ProcessContext, batch: FlowFileBatch) -> list[_Order]:
        """What to write for each FlowFile of *batch*, its properties evaluated over columns."""
        count = batch.count

        def values(descriptor: PropertyDescriptor) -> list[str | None]:
            text = context.get_property(descriptor).value
            if text is None or "{" not in text:
                return [text] * count
            column = evaluate_column(compile_expression(text), batch, clock=context.now)
            return column.values()

        def attribute(name: str) -> list[str | None]:
            column = batch.column(name)
            return [None] * count if column is None else column.values()

        names, raws = attribute("filename"), attribute(RAW_FILENAME)
        return [
            _Order(*row, write=None, subject=None)
            for row in zip(
                values(self.DIRECTORY),
                [_exact(name, raw) for name, raw in zip(names, raws, strict=True)],
                values(self.CHANGE_LAST_MODIFIED_TIME),
                values(self.CHANGE_PERMISSIONS),
                values(self.CHANGE_OWNER),
                values(self.CHANGE_GROUP),
                strict=True,
            )
        ]

    def _base(self, context: ProcessContext) -> Path:
        configured = context.get_property(self.DIRECTORY).value or "."
        literal, expression, _ = configured.partition("${")
        if expression and not literal.endswith("/"):
            # "out/country=${country}": the expression completes a name, so the base is the
            # directory that name is in, not the partial name "country="
            literal = os.path.dirname(literal)
        return self._resolve(literal or ".")

    def _resolve(self, directory: str) -> Path:
        """*directory* with its links resolved, remembered for the task.

        One resolve per directory name, not per FlowFile: with many small files they took a
        tenth of the time.
        """
        cache = self.__dict__.setdefault("_resolved", {})
        resolved = cache.get(directory)
        if resolved is None:
            if len(cache) > 1024:
                cache.clear()
            resolved = cache[directory] = Path(directory).resolve()
        return resolved

    def _put(self, context: ProcessContext, session: _Staging, order: _Order) -> tuple[Path, bool]:
        """Stage one file; its target, and whether it was written (False: ignored)."""
        directory_text = order.directory or "."
        base = self._base(context)
        directory = Path(directory_text)
        filename = order.filename
        if not filename or filename in (".", ".."):
            msg = f"the filename {filename!r} is not a file name"
            raise _Refused(msg)
        if "\0" in filename or "\0" in directory_text:
            msg = f"the filename {filename!r} or directory {directory_text!r} holds a NUL byte"
            raise _Refused(msg)
        if os.path.isabs(filename):
            msg = f"the filename {filename!r} is absolute; it must stay inside {directory}"
            raise _Refused(msg)
        resolved_dir = self._resolve(directory_text)
        target = resolved_dir / filename
        if "/" in filename or os.path.islink(target):
            target = target.resolve()  # a link (or a sub-path) may lead elsewhere: follow it
        if not (target.parent == base or base in target.parents):
            msg = f"writing {filename!r} to {directory_text!r} would escape the directory {base}"
            raise _Refused(msg)
        parent = target.parent
        if not parent.is_dir():
            # Another task may create it between these checks: only mkdir's answer is final.
            if not parent.exists() and not context.get_property(self.CREATE_DIRS).as_boolean():
                msg = (
                    f"the directory {parent} does not exist and Create Missing Directories is false"
                )
                raise _Refused(msg)
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as ex:
                raise _Refused(_cannot_create(parent, ex)) from None
        name_max = _name_max(parent)
        if len(os.fsencode(target.name)) > name_max:
            msg = (
                f"the filename {target.name!r} is {len(os.fsencode(target.name))} bytes; "
                f"the file system of {parent} takes at most {name_max}"
            )
            raise _Refused(msg)
        limit = context.get_property(self.MAX_DESTINATION_FILES).as_integer()
        if limit is not None and sum(1 for _ in parent.iterdir()) >= limit:
            msg = f"{parent} already holds the Maximum File Count of {limit} files"
            raise _Refused(msg)
        conflict = context.get_property(self.CONFLICT_RESOLUTION).value or FAIL
        try:
            if target.exists() or session.is_staged(target):
                raise FileExistsError(target)
            # Written to a hidden temporary now, renamed to the target only once the FlowFile's
            # transaction is durable: a task attempt that never commits leaves nothing behind.
            # Without 'replace' the name is also reserved among the tasks running beside this
            # one (FileExistsError when one of them has it).
            temporary = session.stage_file(target, replace=conflict == REPLACE)
        except FileExistsError as taken:
            why = taken.strerror or "already exists"
            if conflict == IGNORE:
                context.logger.info("%s %s; ignoring %s", target, why, order.subject)
                return target, False
            if conflict == FAIL:
                msg = f"{target} {why} and the Conflict Resolution Strategy is 'fail'"
                raise _Refused(msg) from None
            temporary = session.stage_file(target, replace=True)
        try:
            # Made durable with the task's other staged files before the commit names them
            # (one sync per file system per task, not an fsync per file).
            try:
                out = open(temporary, "wb")  # noqa: SIM115 - closed by the with below
            except OSError as ex:
                if ex.errno not in _REFUSED_ERRNOS:
                    raise
                raise _Refused(_cannot_write_in(parent, ex)) from None
            with out:
                assert order.write is not None
                order.write(out)
            self._apply_attributes(context, order, temporary)
        except BaseException:
            # Given up before its bytes went anywhere; a read-only file system refuses even
            # to delete the name never made (EROFS, not ENOENT), which must not replace the
            # reason this one gives (the staging is forgotten before the delete).
            with contextlib.suppress(OSError):
                session.cancel_staged(temporary)
            raise
        return target, True

    def _apply_attributes(self, context: ProcessContext, order: _Order, path: Path) -> None:
        modified = order.modified
        if modified:
            try:
                moment = datetime.strptime(modified, "%Y-%m-%dT%H:%M:%S%z")
                os.utime(path, (moment.timestamp(), moment.timestamp()))
            except ValueError:
                context.logger.warning("Could not set last modified time %r on %s", modified, path)
        if order.permissions:
            os.chmod(path, _mode(order.permissions))
        owner, group = order.owner, order.group
        if owner or group:
            try:
                shutil.chown(path, user=owner or None, group=group or None)
            except (LookupError, PermissionError, OSError) as ex:
                context.logger.warning("Could not set owner/group on %s: %s", path, ex)


#: What a directory answers when it takes no new file: permissions, the immutable attribute
#: (EPERM, even for root), a read-only file system.
_REFUSED_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_FIX = "make it writable for the user running flowcore, or change Directory"


def _why(error: OSError) -> str:
    """*error*'s reason in words, with what permission means for a directory."""
    reason = error.strerror or type(error).__name__
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"{reason} (no permission to create files in it)"
    return reason


def _cannot_write_in(directory: Path, error: OSError) -> str:
    """Why no file can be written in the existing *directory*: it, not the file, named."""
    return f"cannot write in the directory {directory}: {_why(error)}; {_FIX}"


def _cannot_create(directory: Path, error: OSError) -> str:
    """Why *directory* cannot be made, naming the component of its path at fault.

    A file where a directory should be is named as that file; a directory that refuses the
    next one is named with the permission it lacks; only what neither explains falls back to
    the error as it came.
    """
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    for component in (*reversed(directory.parents), directory):
        if component.exists() and not component.is_dir():
            return f"{component} is a file, not a directory, so {directory} cannot be made"
        if component == existing:
            break
    if error.errno in _REFUSED_ERRNOS:
        missing = directory
        while missing.parent != existing:
            missing = missing.parent
        return (
            f"cannot create the directory {missing.name!r} in {existing}: {_why(error)}; "
            f"make {existing} writable for the user running flowcore, or change Directory"
        )
    return f"cannot create the directory {directory}: {_why(error)}"


class _Staging(Protocol):
    """Where PutFile stages its files: a session, or a batch form's context."""

    def stage_file(self, target: str | os.PathLike[str], *, replace: bool = True) -> Path: ...

    def is_staged(self, target: str | os.PathLike[str]) -> bool: ...

    def cancel_staged(self, temporary: str | os.PathLike[str]) -> None: ...


@attrs.frozen
class _Order:
    """One file to write: the FlowFile's properties evaluated, and how to copy its content.

    Attributes:
        subject: the FlowFile, as log messages name it.
    """

    directory: str | None
    filename: str
    modified: str | None
    permissions: str | None
    owner: str | None
    group: str | None
    write: Callable[[BinaryIO], None] | None
    subject: object


@attrs.frozen
class _Lazy:
    """A batch's FlowFile named in a log message, made only if the message is rendered."""

    batch: FlowFileBatch
    row: int

    def __str__(self) -> str:
        return str(self.batch.flowfile(self.row))


def _exact(filename: str | None, raw: str | None) -> str:
    """:func:`exact_name` of a FlowFile with these two attributes."""
    attributes = {"filename": filename} if filename is not None else {}
    if raw is not None:
        attributes[RAW_FILENAME] = raw
    return exact_name(attributes)


def _writer(pieces: Iterable[bytes | memoryview]) -> Callable[[BinaryIO], None]:
    """Writes a FlowFile's content, given as pieces read from its batch's claim."""

    def write(out: BinaryIO) -> None:
        for piece in pieces:
            out.write(piece)

    return write
