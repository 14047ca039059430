"""UnpackContent: one FlowFile per entry of a TAR, a ZIP or a FlowFile package, as NiFi does."""

from __future__ import annotations

import lzma
import tarfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar

from flowcore.errors import FlowcoreError
from flowcore.flowfile import FlowFile
from flowcore.patterns import compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDependency, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    CHARACTER_SET_VALIDATOR,
    NON_BLANK_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
)
from processors._packaging import CHUNK, PackagingError
from processors._unpackers import (
    ZIP_DATA_ERRORS,
    Entry,
    SeekableContent,
    UnpackError,
    ZipOptions,
    check_entry_count,
    flowfile_stream_entries,
    flowfile_tar_entries,
    tar_entries,
    zip_entries,
)

__all__ = ["UnpackContent"]

AUTO_DETECT = "use mime.type attribute"
TAR = "tar"
ZIP = "zip"
FLOWFILE_STREAM_V3 = "flowfile-stream-v3"
FLOWFILE_STREAM_V2 = "flowfile-stream-v2"
FLOWFILE_TAR_V1 = "flowfile-tar-v1"
OCTET_STREAM = "application/octet-stream"

#: The MIME type of each Packaging Format, as NiFi matches ``mime.type`` (lower-cased).
FORMAT_MIME_TYPES: Mapping[str, str] = {
    TAR: "application/x-tar",
    ZIP: "application/zip",
    FLOWFILE_STREAM_V3: "application/flowfile-v3",
    FLOWFILE_STREAM_V2: "application/flowfile-v2",
    FLOWFILE_TAR_V1: "application/flowfile-v1",
}
_PACKAGES = frozenset({FLOWFILE_STREAM_V3, FLOWFILE_STREAM_V2, FLOWFILE_TAR_V1})
_DEPRECATED = {
    FLOWFILE_STREAM_V2: "FlowFile Stream V2 is deprecated",
    FLOWFILE_TAR_V1: "FlowFile TAR V1 is deprecated",
}

FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

#: What a broken archive raises while an entry is read (outside the readers' own checks): the
#: archive libraries' own errors are the FlowFile's failure, never an error that keeps it queued.
_ENTRY_ERRORS: tuple[type[BaseException], ...] = (
    UnpackError,
    PackagingError,
    *ZIP_DATA_ERRORS,
    tarfile.TarError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    OSError,  # bz2's "Invalid data stream"; repository errors are FlowcoreError, let through
    RuntimeError,  # zipfile's bad password; likewise
    NotImplementedError,  # a ZIP compression method zipfile lacks
    ValueError,
)

REL_SUCCESS = Relationship("success", "Unpacked FlowFiles are sent to this relationship")
REL_FAILURE = Relationship(
    "failure",
    "The original FlowFile is sent to this relationship when it cannot be unpacked for some reason",
)
REL_ORIGINAL = Relationship(
    "original",
    "The original FlowFile is sent to this relationship after it has been successfully unpacked",
)

_ZIP_ONLY = (PropertyDependency("Packaging Format", (ZIP, AUTO_DETECT)),)


class UnpackContent(Processor):
    """Unpacks TAR, ZIP and FlowFile packages into one FlowFile per entry (NiFi's UnpackContent).

    Entries stream from the input's content into their own claims: nothing is read whole, and a
    ZIP is read through its central directory with the content opened again where ``zipfile``
    seeks. Each unpacked FlowFile is a child of the input (FORK) with NiFi's attributes:
    ``filename``, ``path``, ``mime.type`` ``application/octet-stream``, the ``file.*`` times,
    owner, group, size and permissions of the entry, ``fragment.identifier``/``index``/``count``
    and ``segment.original.filename`` (the input's name less ``.tar``, ``.zip`` or ``.pkg``).
    A FlowFile package restores each FlowFile's attributes (a new ``uuid``); when one carried a
    ``fragment.identifier`` no fragment attributes are added, as NiFi does. The input goes to
    ``original`` with ``fragment.identifier`` and ``fragment.count``, or to ``failure`` (with
    nothing unpacked) when it cannot be read or holds no entry the File Filter selects.

    Unlike NiFi, an entry name is made safe before it becomes ``path`` and ``filename``
    (``../x`` and ``/x`` are ``x``), and an archive may unpack to at most
    :func:`~processors._unpackers.expansion_limit` bytes and
    :data:`~processors._unpackers.MAX_ENTRIES` entries (``processors/_unpackers.py``); past
    either it goes to ``failure`` with nothing unpacked.
    """

    PACKAGING_FORMAT = PropertyDescriptor(
        "Packaging Format",
        description="The Packaging Format used to create the file",
        required=True,
        default=AUTO_DETECT,
        allowable_values=(
            AllowableValue(AUTO_DETECT),
            AllowableValue(TAR),
            AllowableValue(ZIP),
            AllowableValue(FLOWFILE_STREAM_V3),
            AllowableValue(FLOWFILE_STREAM_V2, description=_DEPRECATED[FLOWFILE_STREAM_V2]),
            AllowableValue(FLOWFILE_TAR_V1, description=_DEPRECATED[FLOWFILE_TAR_V1]),
        ),
    )
    ZIP_FILENAME_CHARSET = PropertyDescriptor(
        "Filename Character Set",
        description="If supplied this character set will be supplied to the Zip utility to "
        "attempt to decode filenames using the specific character set. If not specified the "
        "default platform character set will be used. This is useful if a Zip was created with "
        "a different character set than the platform default and the zip uses non standard "
        "values to specify.",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
        dependencies=_ZIP_ONLY,
    )
    FILE_FILTER = PropertyDescriptor(
        "File Filter",
        description="Only files contained in the archive whose names match the given regular "
        "expression will be extracted (tar/zip only)",
        required=True,
        default=".*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    PASSWORD = PropertyDescriptor(
        "Password",
        description="Password used for decrypting Zip archives encrypted with ZipCrypto or AES. "
        "Configuring a password disables support for alternative Zip compression algorithms.",
        required=False,
        sensitive=True,
        validators=(NON_BLANK_VALIDATOR,),
        dependencies=_ZIP_ONLY,
    )
    ALLOW_STORED_ENTRIES_WITH_DATA_DESCRIPTOR = PropertyDescriptor(
        "Allow Stored Entries With Data Descriptor",
        description="Some zip archives contain stored entries with data descriptors which by "
        "spec should not happen.  If this property is true they will be read anyway.  If false "
        "and such an entry is discovered the zip will fail to process.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
        dependencies=_ZIP_ONLY,
        aliases=("allow-stored-entries-wdd",),
    )
    property_descriptors: ClassVar = (
        PACKAGING_FORMAT,
        ZIP_FILENAME_CHARSET,
        FILE_FILTER,
        PASSWORD,
        ALLOW_STORED_ENTRIES_WITH_DATA_DESCRIPTOR,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_ORIGINAL)
    supports_batching: ClassVar = True
    tags: ClassVar = (
        "Unpack",
        "un-merge",
        "tar",
        "zip",
        "archive",
        "flowfile-stream",
        "flowfile-stream-v3",
    )
    reads_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "With Packaging Format 'use mime.type attribute': application/x-tar (or any "
        "type containing 'tar'), application/zip, application/flowfile-v3, -v2 or -v1 choose "
        "the format; a FlowFile without it goes to failure, one of another type to success "
        "unpacked"
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "application/octet-stream (a packaged FlowFile keeps its own)",
        FRAGMENT_ID: "All unpacked FlowFiles produced from the same parent FlowFile share it",
        FRAGMENT_INDEX: "A one-up number giving the unpacked FlowFile's position",
        FRAGMENT_COUNT: "The number of unpacked FlowFiles generated from the parent FlowFile",
        SEGMENT_ORIGINAL_FILENAME: "The filename of the parent FlowFile, less .tar, .zip or .pkg",
        "file.lastModifiedTime": "The date and time that the unpacked file was last modified "
        "(tar and zip only)",
        "file.creationTime": "The date and time that the file was created (tar and zip; the last "
        "modified time when the archive does not hold one)",
        "file.lastMetadataChange": "The date and time the file's metadata changed (tar only)",
        "file.lastAccessTime": "The date and time the file was last accessed (tar only)",
        "file.owner": "The owner of the unpacked file (tar only)",
        "file.group": "The group owner of the unpacked file (tar only)",
        "file.size": "The uncompressed size of the unpacked file (tar and zip only)",
        "file.permissions": "The read/write/execute permissions of the unpacked file (tar and "
        "zip only)",
        "file.encryptionMethod": "The encryption method for entries in Zip archives",
    }

    def on_scheduled(self, context: ProcessContext) -> None:
        """Warn about the deprecated formats, as NiFi does."""
        chosen = context.get_property(self.PACKAGING_FORMAT).value
        if chosen in _DEPRECATED:
            context.logger.warning("%s for removal", _DEPRECATED[chosen])

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Unpack one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        chosen = context.get_property(self.PACKAGING_FORMAT).value or AUTO_DETECT
        if chosen == AUTO_DETECT:
            mime_type = flowfile.attributes.get("mime.type")
            if mime_type is None:
                context.logger.error(
                    "No mime.type attribute set for %s; routing to failure", flowfile
                )
                session.transfer(flowfile, REL_FAILURE)
                return
            found = _format_of(mime_type)
            if found is None:
                context.logger.info(
                    "Cannot unpack %s because its mime.type attribute is set to '%s', which is "
                    "not a format that can be unpacked; routing to 'success'",
                    flowfile,
                    mime_type,
                )
                session.transfer(flowfile, REL_SUCCESS)
                return
            chosen = found
        fragment_id = session.identifier_for(flowfile, FRAGMENT_ID)
        children: list[FlowFile] = []
        restored = False
        try:
            with self._entries(context, session, flowfile, chosen) as entries:
                for entry in entries:
                    check_entry_count(len(children) + 1)  # TAR, packages: counted as read
                    child = session.create(flowfile)
                    children.append(child)
                    attributes = dict(entry.attributes)
                    if chosen in _PACKAGES:
                        attributes.pop("uuid", None)  # a new FlowFile: never a second holder
                        restored = restored or FRAGMENT_ID in attributes
                        attributes.setdefault("mime.type", OCTET_STREAM)
                    else:
                        attributes[FRAGMENT_ID] = fragment_id
                        attributes[FRAGMENT_INDEX] = str(len(children))
                    child = session.put_all_attributes(child, attributes)
                    children[-1] = session.write(child, _Copy(entry))
        except FlowcoreError:
            raise  # the engine's (damaged content, a regex past its time limit): not the input's
        except _ENTRY_ERRORS as ex:
            context.logger.error("Unable to unpack %s due to %s; routing to failure", flowfile, ex)
            session.remove(children)
            session.transfer(flowfile, REL_FAILURE)
            return
        if not children:
            context.logger.error(
                "Unable to unpack %s because it does not appear to have any entries; routing to "
                "failure",
                flowfile,
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        if not restored:
            children = _with_fragments(session, flowfile, children, fragment_id)
        session.transfer(children, REL_SUCCESS)
        first_id = children[0].attributes.get(FRAGMENT_ID)
        original = {FRAGMENT_COUNT: str(len(children))}
        if first_id:
            original[FRAGMENT_ID] = first_id
        session.transfer(session.put_all_attributes(flowfile, original), REL_ORIGINAL)
        context.logger.info("Unpacked %s into %d FlowFiles", flowfile, len(children))

    @contextmanager
    def _entries(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile, chosen: str
    ) -> Iterator[Iterator[Entry]]:
        """The entries of *flowfile* in the format *chosen*, its content open meanwhile."""
        file_filter = compile_pattern(context.get_property(self.FILE_FILTER).value or ".*")
        if chosen == ZIP:
            password = context.get_property(self.PASSWORD).value
            allow = context.get_property(self.ALLOW_STORED_ENTRIES_WITH_DATA_DESCRIPTOR)
            options = ZipOptions(
                file_filter,
                context.get_property(self.ZIP_FILENAME_CHARSET).value or "UTF-8",
                password,
                bool(allow.as_boolean()),
            )
            content = SeekableContent(
                lambda offset, length: session.read(flowfile, offset, length), flowfile.size
            )
            try:
                yield zip_entries(content, flowfile.size, options)
            finally:
                content.close()
            return
        with session.read(flowfile) as stream:
            if chosen == TAR:
                yield tar_entries(stream, flowfile.size, file_filter)
            elif chosen == FLOWFILE_TAR_V1:
                yield flowfile_tar_entries(stream)
            else:
                version = 3 if chosen == FLOWFILE_STREAM_V3 else 2
                yield flowfile_stream_entries(stream, version)


def _format_of(mime_type: str) -> str | None:
    """The Packaging Format a ``mime.type`` names (NiFi: exact type, or any type with 'tar')."""
    lowered = mime_type.lower()
    for name, known in FORMAT_MIME_TYPES.items():
        if lowered == known:
            return name
    return TAR if TAR in lowered else None


def _with_fragments(
    session: ProcessSession, parent: FlowFile, children: list[FlowFile], fragment_id: str
) -> list[FlowFile]:
    """NiFi's fragment attributes: count and original name on all, id and index where absent.

    A child's ``fragment.identifier`` may be one its parent had (a child starts with its
    parent's attributes): NiFi keeps it then, and so does this.
    """
    filename = parent.attributes.get("filename", "")
    if filename.endswith((".tar", ".zip", ".pkg")):
        filename = filename[:-4]
    updated = []
    for index, child in enumerate(children, 1):
        changes = {FRAGMENT_COUNT: str(len(children)), SEGMENT_ORIGINAL_FILENAME: filename}
        if child.attributes.get(FRAGMENT_ID) is None:
            changes[FRAGMENT_ID] = fragment_id
            changes[FRAGMENT_INDEX] = str(index)
        updated.append(session.put_all_attributes(child, changes))
    return updated


class _Copy:
    """Writes an entry's bytes into its FlowFile, a chunk at a time.

    A TAR's sparse entry or a ZIP's entry may hold fewer bytes than it declares, or (a damaged
    archive) more: what a TAR entry holds is checked against its size.
    """

    def __init__(self, entry: Entry) -> None:
        self._entry = entry

    def __call__(self, out: Any) -> None:
        content = self._entry.content
        if content is None:
            return
        written = 0
        while data := content.read(CHUNK):
            out.write(data)
            written += len(data)
        declared = self._entry.size
        if declared is not None and written != declared:
            msg = f"an entry declares {declared} bytes but holds {written}"
            raise UnpackError(msg)
