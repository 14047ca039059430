"""FetchFile: read a file named by a FlowFile into its content, as NiFi's FetchFile."""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flowcore.errors import RepositoryError
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, SUCCESS, Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.host import MoveConflict
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR, ValidationResult

__all__ = ["FetchFile"]

COMPLETION_NONE = AllowableValue("None", "None", "Leave the file as-is")
COMPLETION_MOVE = AllowableValue(
    "Move File",
    "Move File",
    "Moves the file to the directory specified by the <Move Destination Directory> property",
)
COMPLETION_DELETE = AllowableValue(
    "Delete File", "Delete File", "Deletes the original file from the file system"
)
_CONFLICTS = (
    AllowableValue(
        MoveConflict.RENAME.value,
        MoveConflict.RENAME.value,
        "The existing destination file should remain intact. The newly ingested file should be "
        "moved to the destination directory but be renamed to a random filename",
    ),
    AllowableValue(
        MoveConflict.REPLACE.value,
        MoveConflict.REPLACE.value,
        "The newly ingested file should replace the existing file in the Destination Directory",
    ),
    AllowableValue(
        MoveConflict.KEEP.value,
        MoveConflict.KEEP.value,
        "The existing file should in the Destination Directory should stay intact and the newly "
        "ingested file should be deleted",
    ),
    AllowableValue(
        MoveConflict.FAIL.value,
        MoveConflict.FAIL.value,
        "The existing destination file should remain intact and the incoming FlowFile should be "
        "routed to failure",
    ),
)
#: NiFi's LogLevel names and the ``logging`` levels they log at (NONE: not at all).
LOG_LEVELS: Mapping[str, int | None] = {
    "TRACE": 5,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "NONE": None,
}

NOT_FOUND = Relationship(
    "not.found",
    "Any FlowFile that could not be fetched from the file system because the file could not be "
    "found will be transferred to this Relationship.",
)
PERMISSION_DENIED = Relationship(
    "permission.denied",
    "Any FlowFile that could not be fetched from the file system due to the user running NiFi "
    "not having sufficient permissions will be transferred to this Relationship.",
)


class _Refused(Exception):
    """The FlowFile goes to failure, unpenalized, before anything was read (the move's checks)."""


def alternative_name(name: str, identifier: str) -> str:
    """NiFi's name for a moved file whose name is taken (Rename): ``a-<uuid>.txt``."""
    stem, dot, extension = name.rpartition(".")
    return f"{stem}-{identifier}.{extension}" if dot else f"{name}-{identifier}"


class FetchFile(Processor):
    """Reads the file a FlowFile names into its content (NiFi's FetchFile); ListFile's partner.

    File to Fetch (default ``${absolute.path}/${filename}``, the attributes ListFile writes)
    names the file; its bytes replace the FlowFile's content and a FETCH event records its
    ``file:`` URI. A file that does not exist goes to ``not.found``, one that cannot be read to
    ``permission.denied`` (each with a ROUTE event), anything else that fails to ``failure``;
    all three penalized, as in NiFi.

    The Completion Strategy (move or delete the file) runs only once the FlowFile's
    transaction is durable, and again at start-up if the process died in between (see
    :mod:`repositories.disposals`): a kill -9 can neither lose the file nor leave it behind. A
    file moved or deleted by then is no error. The Move Conflict Strategy is applied when the
    move is carried out, except ``Fail``, which is also checked before the file is read, as
    NiFi does; ``Rename`` picks its name (``a-<uuid>.txt``) when the FlowFile is fetched.
    """

    FILENAME = PropertyDescriptor(
        "File to Fetch",
        description="The fully-qualified filename of the file to fetch from the file system",
        required=True,
        default="${absolute.path}/${filename}",
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    COMPLETION_STRATEGY = PropertyDescriptor(
        "Completion Strategy",
        description="Specifies what to do with the original file on the file system once it has "
        "been pulled into NiFi",
        required=True,
        default=COMPLETION_NONE.value,
        allowable_values=(COMPLETION_NONE, COMPLETION_MOVE, COMPLETION_DELETE),
    )
    MOVE_DESTINATION_DIR = PropertyDescriptor(
        "Move Destination Directory",
        description="The directory to the move the original file to once it has been fetched "
        'from the file system. This property is ignored unless the Completion Strategy is set to "'
        'Move File". If the directory does not exist, it will be created.',
        required=False,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CONFLICT_STRATEGY = PropertyDescriptor(
        "Move Conflict Strategy",
        description="If Completion Strategy is set to Move File and a file already exists in the "
        "destination directory with the same name, this property specifies how that naming "
        "conflict should be resolved",
        required=True,
        default=MoveConflict.RENAME.value,
        allowable_values=_CONFLICTS,
    )
    FILE_NOT_FOUND_LOG_LEVEL = PropertyDescriptor(
        "Log level when file not found",
        description="Log level to use in case the file does not exist when the processor is "
        "triggered",
        required=True,
        default="ERROR",
        allowable_values=tuple(LOG_LEVELS),
    )
    PERM_DENIED_LOG_LEVEL = PropertyDescriptor(
        "Log level when permission denied",
        description="Log level to use in case the user running flowcore does not have sufficient "
        "permissions to read the file",
        required=True,
        default="ERROR",
        allowable_values=tuple(LOG_LEVELS),
    )
    property_descriptors: ClassVar = (
        FILENAME,
        COMPLETION_STRATEGY,
        MOVE_DESTINATION_DIR,
        CONFLICT_STRATEGY,
        FILE_NOT_FOUND_LOG_LEVEL,
        PERM_DENIED_LOG_LEVEL,
    )
    relationships: ClassVar = (
        Relationship(
            SUCCESS.name,
            "Any FlowFile that is successfully fetched from the file system will be "
            "transferred to this Relationship.",
        ),
        NOT_FOUND,
        PERMISSION_DENIED,
        Relationship(
            FAILURE.name,
            "Any FlowFile that could not be fetched from the file system for any reason other "
            "than insufficient permissions or the file not existing will be transferred to this "
            "Relationship.",
        ),
    )
    tags: ClassVar = (
        "local",
        "files",
        "filesystem",
        "ingest",
        "ingress",
        "get",
        "source",
        "input",
        "fetch",
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Move File needs a Move Destination Directory (NiFi's check)."""
        moving = (values.get(self.COMPLETION_STRATEGY.name) or "").lower() == "move file"
        if moving and not values.get(self.MOVE_DESTINATION_DIR.name):
            name = self.MOVE_DESTINATION_DIR.display_name
            return [
                ValidationResult(
                    name,
                    None,
                    False,
                    f"{name} must be specified if Completion Strategy is set to Move File",
                )
            ]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fetch one FlowFile's file; stage its move or deletion for after the commit."""
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        name = context.get_property(self.FILENAME).evaluate_attribute_expressions(flowfile).value
        path = Path(name or "")
        try:
            info = path.stat()
        except FileNotFoundError:
            self._log(context, self.FILE_NOT_FOUND_LOG_LEVEL, "the file does not exist", path)
            session.provenance.route(flowfile, NOT_FOUND)
            session.transfer(session.penalize(flowfile), NOT_FOUND)
            return
        except OSError as error:  # NiFi: "the existence of the file cannot be verified"
            self._log(
                context,
                self.FILE_NOT_FOUND_LOG_LEVEL,
                f"the existence of the file cannot be verified ({error.strerror})",
                path,
                "failure",
            )
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        if not os.access(path, os.R_OK):
            self._log(
                context,
                self.PERM_DENIED_LOG_LEVEL,
                "the user running flowcore may not read it",
                path,
                PERMISSION_DENIED.name,
            )
            session.provenance.route(flowfile, PERMISSION_DENIED)
            session.transfer(session.penalize(flowfile), PERMISSION_DENIED)
            return
        strategy = (context.get_property(self.COMPLETION_STRATEGY).value or "").lower()
        try:
            target = self._move_target(context, flowfile, path) if strategy == "move file" else None
            if not stat.S_ISREG(info.st_mode):  # a FIFO would block; a directory cannot be read
                msg = "it is not a regular file"
                raise _Refused(msg)
        except _Refused as refused:
            context.logger.error("Could not fetch %s for %s: %s", path, flowfile, refused)
            session.transfer(flowfile, FAILURE)
            return
        try:
            flowfile = session.import_from(path, flowfile)
        except RepositoryError:
            raise  # the content repository failed, not the file: the engine stops the run
        except OSError as error:
            context.logger.error("Could not fetch %s for %s: %s", path, flowfile, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        uri = path.absolute().as_uri()
        session.provenance.fetch(
            flowfile,
            uri,
            details=f"Replaced content of FlowFile with contents of {uri}",
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        session.transfer(flowfile, SUCCESS)
        if strategy == "delete file":
            session.delete_after_commit(path)
        elif target is not None:
            conflict = MoveConflict(context.get_property(self.CONFLICT_STRATEGY).value)
            alternative = alternative_name(
                path.name, session.identifier_for(flowfile, "move-conflict")
            )
            session.move_after_commit(path, target, conflict, alternative)

    def _move_target(self, context: ProcessContext, flowfile: object, path: Path) -> Path:
        """Where Move File puts the file, its directory made; NiFi's checks before the fetch.

        Raises:
            _Refused: the directory is not one, cannot be written or made, or (Move Conflict
                Strategy ``Fail``) already holds a file of that name.
        """
        text = (
            context.get_property(self.MOVE_DESTINATION_DIR)
            .evaluate_attribute_expressions(flowfile)  # type: ignore[arg-type]
            .value
        )
        if not text:
            msg = "Move Destination Directory evaluated to an empty value"
            raise _Refused(msg)
        directory = Path(text)
        if directory.exists() and (not directory.is_dir() or not os.access(directory, os.W_OK)):
            msg = (
                f"Completion Strategy is Move File, but {directory} is not a directory or the "
                "user running flowcore may not write to it"
            )
            raise _Refused(msg)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            msg = f"the Move Destination Directory {directory} could not be created: {error}"
            raise _Refused(msg) from None
        target = directory / path.name
        conflict = context.get_property(self.CONFLICT_STRATEGY).value
        if conflict == MoveConflict.FAIL.value and os.path.lexists(target):
            msg = (
                f"a file named {path.name} already exists in {directory} and the Move Conflict "
                "Strategy is Fail"
            )
            raise _Refused(msg)
        return target

    @staticmethod
    def _log(
        context: ProcessContext,
        descriptor: PropertyDescriptor,
        why: str,
        path: Path,
        relationship: str = NOT_FOUND.name,
    ) -> None:
        """Log a fetch that did not happen at the level *descriptor* chooses."""
        level = LOG_LEVELS.get(context.get_property(descriptor).value or "ERROR")
        if level is not None:
            context.logger.log(
                level, "Could not fetch %s because %s; routing to %s", path, why, relationship
            )
