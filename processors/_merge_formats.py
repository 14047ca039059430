"""MergeContent's merge formats: how a bin of FlowFiles becomes one bundle's content.

Each merger streams: it reads one FlowFile's content at a time and writes it into the bundle, so
merging 100 inputs of 20 MB holds one read buffer, never the inputs. A merger returns the
FlowFiles it could not merge (duplicate ZIP names, incompatible Avro files); MergeContent sends a
clone of each to ``failure`` and still sends them to ``original``, as NiFi does.

A merger reads an entry's bytes through a :data:`ContentReader`: ``session.read`` when the
session holds the FlowFiles (the one-by-one path), or a reader over the bin's contents when its
FlowFiles came as batch cuts the session never held (``processors/_merge_entries.py``). Both
paths run the same merger code, so they write the same bytes. The packaging byte layouts and
the safe entry names are in ``processors/_packaging.py``, which UnpackContent reads them with.

The FlowFile packagings (Stream v3/v2, Tar v1) write a FlowFile's attributes in name order.
NiFi writes them in its attribute map's (hash) order, which no reader depends on; flowcore keeps
no order either (a FlowFile batch holds shared attributes apart from per-FlowFile columns), so
name order makes the bytes a function of the attributes alone, however the FlowFile travelled.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import tarfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import ProcessException
from flowcore.expression import compile_expression
from flowcore.flowfile import FlowFile
from flowcore.session.process_session import ProcessSession
from processors._packaging import contained, flowfile_stream_header, properties_xml

__all__ = [
    "FORMAT_AVRO",
    "FORMAT_CONCAT",
    "FORMAT_FLOWFILE_STREAM_V2",
    "FORMAT_FLOWFILE_STREAM_V3",
    "FORMAT_FLOWFILE_TAR_V1",
    "FORMAT_TAR",
    "FORMAT_ZIP",
    "MERGERS",
    "ContentReader",
    "MergeOptions",
    "Merger",
    "flowfile_stream_header",
]

FORMAT_TAR = "TAR"
FORMAT_ZIP = "ZIP"
FORMAT_FLOWFILE_STREAM_V3 = "FlowFile Stream, v3"
FORMAT_FLOWFILE_STREAM_V2 = "FlowFile Stream, v2"
FORMAT_FLOWFILE_TAR_V1 = "FlowFile Tar, v1"
FORMAT_CONCAT = "Binary Concatenation"
FORMAT_AVRO = "Avro"

DELIMITER_FILENAME = "Filename"
DELIMITER_TEXT = "Text"

METADATA_USE_FIRST = "Use First Metadata"
METADATA_KEEP_COMMON = "Keep Only Common Metadata"
METADATA_IGNORE = "Ignore Metadata"
METADATA_DO_NOT_MERGE = "Do Not Merge Uncommon Metadata"

_CHUNK = 1 << 20

#: Opens an entry's content for reading, as ``session.read(flowfile)`` does.
ContentReader = Callable[[FlowFile], AbstractContextManager[Any]]


@attrs.frozen
class MergeOptions:
    """The merge-related properties, as resolved for one bin.

    Attributes:
        delimiter_strategy: ``Filename``, ``Text`` or ``Do Not Use Delimiters``.
        header: the Header property (EL not yet evaluated), or None.
        footer: the Footer property, or None.
        demarcator: the Demarcator property, or None.
        keep_path: prefix ZIP/TAR entry names with the ``path`` attribute.
        compression_level: ZIP deflate level.
        tar_modified_time: the Tar Modified Time property (EL), or None.
        metadata_strategy: how Avro metadata is compared and kept.
        zero_copy: Binary Concatenation builds a rope instead of copying (flowcore's Zero Copy).
        now_ms: the processor's clock, for default entry times.
        drop_attributes: attributes left out of packaged FlowFiles (fragment attributes when
            defragmenting).
    """

    delimiter_strategy: str = "Do Not Use Delimiters"
    header: str | None = None
    footer: str | None = None
    demarcator: str | None = None
    keep_path: bool = False
    compression_level: int = 1
    tar_modified_time: str | None = None
    metadata_strategy: str = METADATA_DO_NOT_MERGE
    zero_copy: bool = False
    now_ms: int = 0
    drop_attributes: frozenset[str] = frozenset()

    def packaged_attributes(self, flowfile: FlowFile) -> dict[str, str]:
        """The attributes a packaging format stores for *flowfile* (all but the dropped ones)."""
        return {k: v for k, v in flowfile.attributes.items() if k not in self.drop_attributes}


class Merger:
    """Writes a bundle from a bin; subclasses set ``mime_type`` and ``suffix``."""

    mime_type: str | None = None
    suffix: str | None = None

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Write *flowfiles* into *bundle*; return it and the FlowFiles left unmerged.

        *read* opens an entry's content (``session.read`` when None).
        """
        raise NotImplementedError

    def bundle_mime_type(self, flowfiles: Sequence[FlowFile]) -> str:
        """The ``mime.type`` of the bundle."""
        return self.mime_type or "application/octet-stream"


def _copy(read: ContentReader, flowfile: FlowFile, write: Callable[[bytes], object]) -> None:
    with read(flowfile) as stream:
        while chunk := stream.read(_CHUNK):
            write(chunk)


def entry_name(flowfile: FlowFile, keep_path: bool) -> str:
    r"""A TAR/ZIP entry name: ``filename``, or ``path/filename`` with Keep Path, made safe.

    The path drops a leading ``./`` or a bare ``.`` as NiFi's does. Unlike NiFi, which writes
    the attributes verbatim, the name is then normalised so that the archive cannot write
    outside the directory it is extracted into, whatever the attributes hold (zip-slip): ``\``
    counts as a separator, absolute names and drive letters become relative, ``.`` and empty
    segments go, ``..`` climbs only within the name (never above it), NUL bytes become ``_``.
    A name left empty becomes the FlowFile's uuid.
    """
    return contained(_raw_entry_name(flowfile, keep_path)) or flowfile.uuid


def _raw_entry_name(flowfile: FlowFile, keep_path: bool) -> str:
    """The entry name as NiFi writes it, before :func:`entry_name` makes it safe."""
    filename = flowfile.attributes.get("filename", "")
    if keep_path:
        path = flowfile.attributes.get("path", "")
        if path.startswith("./"):
            path = path[2:]
        elif path == ".":
            path = ""
        filename = f"{path}/{filename}" if path else filename
    return filename


class BinaryConcatenation(Merger):
    """``header + c1 + demarcator + c2 ... + footer``, EL on the first FlowFile."""

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Concatenate the contents with the configured delimiters.

        The session copies (or ropes) the contents itself, so it must hold them: *read* is
        not used (a batch merge concatenates from byte ranges, ``_merge_batches``).
        """
        del read
        first = flowfiles[0]
        header = self._delimiter(options.header, first, options)
        footer = self._delimiter(options.footer, first, options)
        demarcator = self._delimiter(options.demarcator, first, options)
        merged = session.merge(
            flowfiles, bundle, header, footer, demarcator, zero_copy=options.zero_copy
        )
        return merged, []

    @staticmethod
    def _delimiter(value: str | None, first: FlowFile, options: MergeOptions) -> bytes | None:
        if value is None or options.delimiter_strategy not in (DELIMITER_TEXT, DELIMITER_FILENAME):
            return None
        evaluated = compile_expression(value).evaluate(first)
        if options.delimiter_strategy == DELIMITER_TEXT:
            return evaluated.encode("utf-8")
        try:
            return Path(evaluated).read_bytes()
        except OSError as ex:
            msg = f"cannot read delimiter file {evaluated!r}: {ex.strerror or ex}"
            raise ProcessException(msg, flowfile_uuid=first.uuid) from ex

    def bundle_mime_type(self, flowfiles: Sequence[FlowFile]) -> str:
        """The shared mime.type when every FlowFile has the first one's; else octet-stream."""
        first = flowfiles[0].attributes.get("mime.type")
        if first is not None and all(f.attributes.get("mime.type") == first for f in flowfiles):
            return first
        return "application/octet-stream"


def _parse_instant(text: str) -> float | None:
    """Java's ``Instant.parse`` for ISO-8601 instants; None for blank or unparsable text."""
    if not text or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


class Tar(Merger):
    """One TAR entry per FlowFile, GNU long names, ``tar.permissions`` and Tar Modified Time.

    Two FlowFiles with the same name both go in, as in NiFi (extraction keeps the later).
    Two *different* names that :func:`entry_name` made equal (``x`` and ``../x``) are another
    matter: the later would silently replace the earlier, so it is left unmerged (MergeContent
    sends it to ``failure``), as ZIP does with any duplicate. ``tar.permissions`` keeps only
    the ``rwxrwxrwx`` bits: an attribute cannot make an extracted file setuid or setgid.
    """

    mime_type = "application/tar"
    suffix = ".tar"

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Write a GNU tar (long names supported, big sizes in base-256)."""
        reader = read or session.read
        unmerged: list[FlowFile] = []

        def produce(out: Any) -> None:
            written: dict[str, str] = {}  # entry name -> the raw name it was made from
            with tarfile.open(fileobj=out, mode="w|", format=tarfile.GNU_FORMAT) as tar:
                for flowfile in flowfiles:
                    name = entry_name(flowfile, options.keep_path)
                    raw = _raw_entry_name(flowfile, options.keep_path)
                    if written.setdefault(name, raw) != raw:
                        unmerged.append(flowfile)
                        continue
                    info = tarfile.TarInfo(name)
                    info.size = flowfile.size
                    info.mode = 0o644
                    info.mtime = options.now_ms // 1000
                    permissions = flowfile.attributes.get("tar.permissions")
                    if permissions is not None:
                        with contextlib.suppress(ValueError):
                            # NiFi parses decimal (quirk kept); setuid, setgid, sticky dropped
                            info.mode = int(permissions) & 0o777
                    if options.tar_modified_time:
                        text = compile_expression(options.tar_modified_time).evaluate(flowfile)
                        seconds = _parse_instant(text)
                        if seconds is not None:
                            info.mtime = int(seconds)
                    with reader(flowfile) as stream:
                        tar.addfile(info, stream)

        return session.write(bundle, produce), unmerged


class Zip(Merger):
    """One ZIP entry per FlowFile at the Compression Level; duplicate names are not merged."""

    mime_type = "application/zip"
    suffix = ".zip"

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Write a ZIP; a FlowFile whose entry name was already used is left unmerged."""
        reader = read or session.read
        unmerged: list[FlowFile] = []
        stamp = time.localtime(options.now_ms / 1000)[:6]

        def produce(out: Any) -> None:
            names: set[str] = set()
            with zipfile.ZipFile(
                out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=options.compression_level
            ) as archive:
                for flowfile in flowfiles:
                    name = entry_name(flowfile, options.keep_path)
                    if name in names:
                        unmerged.append(flowfile)  # Java's ZipOutputStream: duplicate entry
                        continue
                    names.add(name)
                    info = zipfile.ZipInfo(name, date_time=stamp)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.file_size = flowfile.size
                    with archive.open(info, "w", force_zip64=flowfile.size >= 2**31) as entry:
                        _copy(reader, flowfile, entry.write)

        return session.write(bundle, produce), unmerged


class FlowFileStream(Merger):
    """NiFi's FlowFile Stream packaging, v3 (with ``NiFiFF3``) or v2."""

    suffix = ".pkg"

    def __init__(self, *, version: int) -> None:
        self.version = version
        self.mime_type = f"application/flowfile-v{version}"

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Package every FlowFile with all its attributes."""
        reader = read or session.read

        def produce(out: Any) -> None:
            for flowfile in flowfiles:
                attributes = options.packaged_attributes(flowfile)
                out.write(
                    flowfile_stream_header(attributes, flowfile.size, magic=self.version == 3)
                )
                _copy(reader, flowfile, out.write)

        return session.write(bundle, produce), []


class FlowFileTarV1(Merger):
    """NiFi's deprecated FlowFile Tar v1: a tar per FlowFile of its attributes and content."""

    mime_type = "application/flowfile-v1"
    suffix = ".pkg"

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Write ``flowfile.attributes`` (Java properties XML) and ``flowfile.content`` entries."""
        reader = read or session.read

        def produce(out: Any) -> None:
            for flowfile in flowfiles:
                with tarfile.open(fileobj=out, mode="w|") as tar:
                    xml = properties_xml(options.packaged_attributes(flowfile))
                    info = tarfile.TarInfo("flowfile.attributes")
                    info.size = len(xml)
                    info.mtime = options.now_ms // 1000
                    tar.addfile(info, io.BytesIO(xml))
                    info = tarfile.TarInfo("flowfile.content")
                    info.size = flowfile.size
                    info.mtime = options.now_ms // 1000
                    with reader(flowfile) as stream:
                        tar.addfile(info, stream)

        return session.write(bundle, produce), []


def _avro_header(read: ContentReader, flowfile: FlowFile) -> tuple[Any, str, dict[str, str]]:
    import fastavro  # noqa: PLC0415 - Avro support loads only when used

    with read(flowfile) as stream:
        reader = fastavro.reader(stream)
        metadata = {
            k: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            for k, v in reader.metadata.items()
            if not k.startswith("avro.")
        }
        return reader.writer_schema, reader.codec or "null", metadata


class Avro(Merger):
    """Avro files merged record by record; the first fixes the schema, codec and metadata."""

    mime_type = "application/avro-binary"

    def merge(
        self,
        session: ProcessSession,
        bundle: FlowFile,
        flowfiles: Sequence[FlowFile],
        options: MergeOptions,
        *,
        read: ContentReader | None = None,
    ) -> tuple[FlowFile, list[FlowFile]]:
        """Merge compatible files; incompatible ones (schema, codec, metadata) stay unmerged."""
        import fastavro  # noqa: PLC0415 - Avro support loads only when used

        reader = read or session.read
        compatible: list[FlowFile] = []
        unmerged: list[FlowFile] = []
        first_schema: Any = None
        first_codec = "null"
        first_metadata: dict[str, str] = {}
        for flowfile in flowfiles:
            try:
                schema, codec, metadata = _avro_header(reader, flowfile)
            except (ValueError, EOFError, TypeError) as ex:
                msg = f"{flowfile} is not an Avro container file: {ex}"
                raise ProcessException(msg, flowfile_uuid=flowfile.uuid) from ex
            if not compatible:
                first_schema, first_codec, first_metadata = schema, codec, metadata
                compatible.append(flowfile)
                continue
            strategy = options.metadata_strategy
            if (
                schema != first_schema
                or codec != first_codec
                or not _metadata_compatible(first_metadata, metadata, strategy)
            ):
                unmerged.append(flowfile)
            else:
                compatible.append(flowfile)
        kept_metadata = {} if options.metadata_strategy == METADATA_IGNORE else first_metadata

        def records() -> Any:
            for flowfile in compatible:
                with reader(flowfile) as stream:
                    yield from fastavro.reader(stream)

        def produce(out: Any) -> None:
            fastavro.writer(
                out,
                fastavro.parse_schema(first_schema),
                records(),
                codec=first_codec,
                metadata=kept_metadata,
                sync_marker=_sync_marker(compatible),
            )

        return session.write(bundle, produce), unmerged


def _sync_marker(flowfiles: Sequence[FlowFile]) -> bytes:
    """The 16 bytes that separate the bundle's Avro blocks, from the merged FlowFiles' uuids.

    Avro's writers (NiFi's too) draw them at random; derived here, the same bin merged again
    (a replayed task attempt, or its batch form) writes the same bytes.
    """
    digest = hashlib.blake2b(digest_size=16)
    for flowfile in flowfiles:
        digest.update(flowfile.uuid.encode())
    return digest.digest()


def _metadata_compatible(first: Mapping[str, str], other: Mapping[str, str], strategy: str) -> bool:
    if strategy == METADATA_DO_NOT_MERGE:
        return all(first.get(k) == v for k, v in other.items())
    if strategy == METADATA_KEEP_COMMON:
        return all(first[k] == v for k, v in other.items() if k in first)
    return True


MERGERS: Mapping[str, Merger] = {
    FORMAT_CONCAT: BinaryConcatenation(),
    FORMAT_TAR: Tar(),
    FORMAT_ZIP: Zip(),
    FORMAT_FLOWFILE_STREAM_V3: FlowFileStream(version=3),
    FORMAT_FLOWFILE_STREAM_V2: FlowFileStream(version=2),
    FORMAT_FLOWFILE_TAR_V1: FlowFileTarV1(),
    FORMAT_AVRO: Avro(),
}
