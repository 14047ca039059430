"""StandardFileResourceService and the Put processors' Resource Transfer Source (NiFi 2's).

NiFi 2 lets a Put processor send a local file instead of the FlowFile's content: its
``Resource Transfer Source`` is ``FlowFile Content`` (the default) or ``File Resource Service``,
and then its ``File Resource Service`` names a service that maps the FlowFile's attributes to a
file (NiFi's ``ResourceTransferProperties`` and ``ResourceTransferUtils``). The FlowFile's
content is left as it is: a flow can carry a small FlowFile (a listing's, say) and send the
large file it names without ever copying the file into the content repository.

:class:`StandardFileResourceService` is NiFi's service: its ``File Path`` (Expression Language
against the FlowFile's attributes, ``${absolute.path}/${filename}`` by default) names a file
this process can read. Its failures carry NiFi's messages (``Path does not exist or it is not a
file: /abs/path``), which the processor writes to its failure attributes.

Unlike NiFi, the service refuses an evaluated path with a ``..`` segment: the default
``${absolute.path}/${filename}`` takes ``filename`` from the FlowFile, and attributes can come from
outside (an archive's entry names, HTTP headers, mail), so ``../../etc/passwd`` would read any file.
Its flowcore-only ``Base Directory`` confines the files further: the resolved path (symbolic links
followed) must lie under it.

A :class:`FileResource` names the file and the state it was found in (size, modification time,
inode), so a processor that reads it more than once (a resumed multipart upload checks the
bytes already sent, then sends the rest) can tell whether the file changed in between.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from typing import IO, Any, ClassVar

import attrs

from flowcore.controller_service import ControllerService
from flowcore.errors import ProcessException
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import NON_BLANK_VALIDATOR, create_directory_exists_validator

__all__ = [
    "BASE_DIRECTORY",
    "FILE_PATH",
    "FILE_RESOURCE_SERVICE",
    "FLOWFILE_CONTENT",
    "INTERFACE",
    "RESOURCE_SERVICE",
    "RESOURCE_TRANSFER_SOURCE",
    "FileChangedError",
    "FileResource",
    "FileResourceError",
    "StandardFileResourceService",
    "file_resource",
]

#: NiFi's interface (``org.apache.nifi.fileresource.service.api.FileResourceService``).
INTERFACE = "FileResourceService"
#: NiFi's ResourceTransferSource values (the enum's names).
FLOWFILE_CONTENT, RESOURCE_SERVICE = "FLOWFILE_CONTENT", "FILE_RESOURCE_SERVICE"

RESOURCE_TRANSFER_SOURCE = PropertyDescriptor(
    "Resource Transfer Source", description="The source of the content to be transferred",
    required=True, default=FLOWFILE_CONTENT, allowable_values=(
        AllowableValue(FLOWFILE_CONTENT, "FlowFile Content",
                       "The content of the incoming FlowFile provides the source for transfer"),
        AllowableValue(RESOURCE_SERVICE, "File Resource Service",
                       "The File Resource Service provides the source for transfer"),
    ),
)  # fmt: skip
FILE_RESOURCE_SERVICE = PropertyDescriptor(
    "File Resource Service", description="File Resource Service providing access to the local "
    "resource to be transferred", required=True, identifies_service=INTERFACE,
    dependencies=((RESOURCE_TRANSFER_SOURCE, RESOURCE_SERVICE),),
)  # fmt: skip
FILE_PATH = PropertyDescriptor(
    "File Path", description="Path to a file that can be accessed locally.", required=True,
    default="${absolute.path}/${filename}", validators=(NON_BLANK_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES, aliases=("file-path",),
)  # fmt: skip

BASE_DIRECTORY = PropertyDescriptor(
    "Base Directory", description="When set, File Path must resolve (symbolic links followed) "
    "to a file under this directory; a path outside it fails the FlowFile. File names taken "
    "from attributes (archive entries, HTTP headers, mail) then cannot reach other files",
    validators=(create_directory_exists_validator(),), flowcore_only=True,
)  # fmt: skip


class FileResourceError(ProcessException):
    """The file a File Resource Service names cannot be sent (the FlowFile goes to failure)."""


class FileChangedError(FileResourceError):
    """The file changed while it was being sent (the object may mix two versions of it)."""


@attrs.frozen
class FileResource:
    """A local file to send, as found (NiFi's ``FileResource``: its stream and size).

    Attributes:
        path: the absolute path.
        size: its size in bytes when found.
        identity: (size, modification time in ns, inode, device) when found: another value
            later means the file was rewritten, replaced or appended to.
    """

    path: str
    size: int
    identity: tuple[int, ...]

    @classmethod
    def of(cls, path: str) -> FileResource:
        """The regular file at *path* as it is now.

        Raises:
            FileResourceError: it does not exist, is not a regular file, or cannot be read
                (NiFi's messages).
        """
        absolute = os.path.abspath(path)
        if not os.path.isfile(absolute):
            msg = f"Path does not exist or it is not a file: {absolute}"
            raise FileResourceError(msg)
        try:
            with open(absolute, "rb") as handle:
                found = os.fstat(handle.fileno())
        except OSError as error:
            msg = f"File cannot be read: {absolute} ({error.strerror or error})"
            raise FileResourceError(msg) from error
        return cls(absolute, found.st_size, _identity(found))

    def open(self) -> IO[bytes]:
        """The file for reading, checked to be the one found (not replaced or resized since).

        Raises:
            FileChangedError: the file was changed since it was found.
        """
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 (the caller closes it)
        except OSError as error:
            msg = f"File cannot be read: {self.path} ({error.strerror or error})"
            raise FileChangedError(msg) from error
        if _identity(os.fstat(handle.fileno())) != self.identity:
            handle.close()
            raise FileChangedError(self.changed_message())
        return handle

    def check_unchanged(self) -> None:
        """Raise unless the file is still as found (after sending it: nothing was mixed).

        Raises:
            FileChangedError: it was changed, replaced or removed.
        """
        try:
            now = _identity(os.stat(self.path))
        except OSError:
            now = ()
        if now != self.identity:
            raise FileChangedError(self.changed_message())

    def content_md5(self) -> str:
        """The MD5 of the file as found (base64, S3's ``Content-MD5``), read whole now.

        A PUT that carries it is refused by S3 (``BadDigest``) when the bytes it receives are
        others: a file rewritten during the PUT, even to the same size within the modification
        time's granularity, cannot replace the object with torn or new content.

        Raises:
            FileChangedError: the file changed since it was found, or while it was read.
        """
        digest = hashlib.md5(usedforsecurity=False)
        with self.open() as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        self.check_unchanged()
        return base64.b64encode(digest.digest()).decode("ascii")

    def changed_message(self) -> str:
        """Why the file cannot be sent now, naming it and the fix."""
        return (
            f"File changed while it was being sent: {self.path} (size, modification time "
            "or content differs from when it was found); send it again once it is no longer written"
        )


def _identity(found: os.stat_result) -> tuple[int, ...]:
    return (found.st_size, found.st_mtime_ns, found.st_ino, found.st_dev)


class StandardFileResourceService(ControllerService):
    """Provides a file resource for other components (NiFi's StandardFileResourceService).

    The file needs to be available locally (local disk or mounted storage) and readable by
    this process. NiFi marks the service restricted (it reads any file NiFi can): so is it
    here, in the sense that ``File Path`` may name any file the flow's user can read.
    """

    implements: ClassVar = (INTERFACE,)
    nifi_types: ClassVar = ("org.apache.nifi.fileresource.service.StandardFileResourceService",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-file-resource-service-nar")
    tags: ClassVar = ("file", "resource")
    property_descriptors: ClassVar = (FILE_PATH, BASE_DIRECTORY)

    def get_file_resource(self, attributes: Mapping[str, str]) -> FileResource:
        """The file ``File Path`` names, evaluated against a FlowFile's *attributes*.

        Raises:
            FileResourceError: the path evaluates to nothing, names no regular file, or the
                file cannot be read (NiFi's messages, with the path); it has a ``..`` segment
                or lies outside Base Directory (flowcore's).
        """
        value = self.get_property(FILE_PATH)
        path = (value.evaluate_attribute_expressions(dict(attributes)).value or "").strip()
        if not path:
            msg = f"Evaluated path is empty. Path expression: {value.value}"
            raise FileResourceError(msg)
        if ".." in path.replace("\\", "/").split("/"):
            msg = (
                f"Evaluated path has a '..' segment: {path} (from File Path {value.value}); "
                "flowcore refuses it, as attributes such as filename can come from outside the "
                "flow: remove the '..' (e.g. fix the attribute with UpdateAttribute)"
            )
            raise FileResourceError(msg)
        base = (self.get_property(BASE_DIRECTORY).value or "").strip()
        if base:
            _check_under(path, base)
        return FileResource.of(path)


def _check_under(path: str, base: str) -> None:
    """Raise unless *path*, symbolic links followed, lies under the directory *base*."""
    root = os.path.realpath(base)
    resolved = os.path.realpath(path)
    if os.path.commonpath([root, resolved]) != root:
        msg = (
            f"Path is outside Base Directory {root}: {path} (resolves to {resolved}); "
            "move the file under it or change Base Directory"
        )
        raise FileResourceError(msg)


def file_resource(context: Any, session: Any, flowfile: Any) -> FileResource | None:
    """The file to send instead of *flowfile*'s content, or None to send the content.

    NiFi's ``ResourceTransferUtils.getFileResource``: None unless Resource Transfer Source is
    File Resource Service; then the named service's file for the FlowFile's attributes.

    Raises:
        FileResourceError: the service is not configured, or its file cannot be sent.
    """
    source = context.get_property(RESOURCE_TRANSFER_SOURCE).value or FLOWFILE_CONTENT
    if source != RESOURCE_SERVICE:
        return None
    name = context.get_property(FILE_RESOURCE_SERVICE).value
    if not name:
        msg = "File Resource Service required but not configured"
        raise FileResourceError(msg)
    return session.controller_service(name).get_file_resource(flowfile.attributes)
