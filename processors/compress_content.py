"""CompressContent: compress or decompress a FlowFile's content, as NiFi's CompressContent does."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDependency, PropertyDescriptor
from flowcore.session.batch_context import HELD_CONTENT_MAX, BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import BOOLEAN_VALIDATOR, ValidationResult
from processors._codecs import (
    BROTLI,
    BZIP2,
    CODECS,
    DEFLATE,
    GZIP,
    LZ4_FRAMED,
    LZMA,
    SNAPPY,
    SNAPPY_FRAMED,
    SNAPPY_HADOOP,
    XZ_LZMA2,
    ZSTD,
    Codec,
    CodecError,
)
from processors._expansion import expansion_limit

__all__ = ["CompressContent"]

MODE_COMPRESS = "compress"
MODE_DECOMPRESS = "decompress"
FORMAT_ATTRIBUTE = "use mime.type attribute"

#: NiFi's table of the MIME types that name a Compression Format (decompress by mime.type).
MIME_TYPE_FORMATS: Mapping[str, str] = {
    "application/gzip": GZIP,
    "application/x-gzip": GZIP,
    "application/deflate": DEFLATE,
    "application/x-deflate": DEFLATE,
    "application/bzip2": BZIP2,
    "application/x-bzip2": BZIP2,
    "application/x-lzma": LZMA,
    "application/x-xz": XZ_LZMA2,
    "application/x-snappy": SNAPPY,
    "application/x-snappy-hadoop": SNAPPY_HADOOP,
    "application/x-snappy-framed": SNAPPY_FRAMED,
    "application/x-lz4-framed": LZ4_FRAMED,
    "application/zstd": ZSTD,
    "application/x-brotli": BROTLI,
}

REL_SUCCESS = Relationship(
    "success",
    "FlowFiles will be transferred to the success relationship after successfully being "
    "compressed or decompressed",
)
REL_FAILURE = Relationship(
    "failure",
    "FlowFiles will be transferred to the failure relationship if they fail to compress/decompress",
)


class CompressContent(Processor):
    """Compresses or decompresses content in one of NiFi's formats (NiFi's CompressContent).

    Content streams from the input claim through the codec into a new claim, a chunk at a time
    (``processors/_codecs.py``): a file of any size is compressed or decompressed in bounded
    memory. Compressing sets ``mime.type`` to the format's type and Update Filename appends its
    extension; decompressing removes ``mime.type`` and Update Filename strips the extension when
    the name ends with it. With ``use mime.type attribute`` the format comes from ``mime.type``
    through NiFi's table: a FlowFile without one goes to ``failure``, one whose type names no
    format passes to ``success`` untouched. Content that is not valid data of the format goes
    to ``failure`` unchanged. A changed FlowFile gets a CONTENT_MODIFIED event.

    Unlike NiFi, decompression is bounded as UnpackContent's is: content may decompress to at
    most :func:`~processors._expansion.expansion_limit` bytes of its size (1,000 times it plus
    100 MB); past it the FlowFile goes to ``failure`` unchanged, the bytes written so far go
    back to the content repository (archived or removed as its settings say), and the run goes
    on (a few hundred bytes of bzip2 would otherwise fill the content repository, and every
    later run would stop on it again).

    NiFi 2 marks CompressContent deprecated in favour of ModifyCompression; its behaviour is
    unchanged, and so is this one's.
    """

    MODE = PropertyDescriptor(
        "Mode",
        description="Indicates whether the processor should compress content or decompress "
        "content. Must be either 'compress' or 'decompress'",
        required=True,
        default=MODE_COMPRESS,
        allowable_values=(MODE_COMPRESS, MODE_DECOMPRESS),
    )
    COMPRESSION_FORMAT = PropertyDescriptor(
        "Compression Format",
        description="The compression format to use. Valid values are: GZIP, Deflate, ZSTD, "
        "BZIP2, XZ-LZMA2, LZMA, Brotli, Snappy, Snappy Hadoop, Snappy Framed, and LZ4-Framed",
        required=True,
        default=FORMAT_ATTRIBUTE,
        allowable_values=(AllowableValue(FORMAT_ATTRIBUTE), *CODECS),
    )
    COMPRESSION_LEVEL = PropertyDescriptor(
        "Compression Level",
        description="The compression level to use; this is valid only when using gzip, deflate "
        "or xz-lzma2 compression. A lower value results in faster processing but less "
        "compression; a value of 0 indicates no (that is, simple archiving) for gzip or minimal "
        "for xz-lzma2 compression. Higher levels can mean much larger memory usage such as the "
        "case with levels 7-9 for xz-lzma/2 so be careful relative to heap size.",
        required=True,
        default="1",
        allowable_values=tuple(str(level) for level in range(10)),
        dependencies=(
            PropertyDependency(
                "Compression Format",
                (
                    FORMAT_ATTRIBUTE,
                    GZIP,
                    DEFLATE,
                    XZ_LZMA2,
                    ZSTD,
                    BROTLI,
                ),
            ),
            PropertyDependency("Mode", (MODE_COMPRESS,)),
        ),
    )
    UPDATE_FILENAME = PropertyDescriptor(
        "Update Filename",
        description="If true, will remove the filename extension when decompressing data (only "
        "if the extension indicates the appropriate compression format) and add the appropriate "
        "extension when compressing data",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    property_descriptors: ClassVar = (MODE, COMPRESSION_FORMAT, COMPRESSION_LEVEL, UPDATE_FILENAME)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_batching: ClassVar = True
    tags: ClassVar = (
        "content",
        "compress",
        "decompress",
        "gzip",
        "bzip2",
        "lzma",
        "xz-lzma2",
        "snappy",
        "snappy-hadoop",
        "snappy framed",
        "lz4-framed",
        "deflate",
        "zstd",
        "brotli",
    )
    reads_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "If the Compression Format is set to use mime.type attribute, this "
        "attribute is used to determine the compression type. Otherwise, this attribute is "
        "ignored."
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "If the Mode property is set to compress, the appropriate MIME Type is set. "
        "If the Mode property is set to decompress and the file is successfully decompressed, "
        "this attribute is removed, as the MIME Type is no longer known."
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """snappy-hadoop cannot be decompressed (NiFi's rule and message)."""
        fmt = (values.get(self.COMPRESSION_FORMAT.name) or "").lower()
        mode = (values.get(self.MODE.name) or "").lower()
        if fmt == SNAPPY_HADOOP and mode == MODE_DECOMPRESS:
            yield ValidationResult(
                self.COMPRESSION_FORMAT.display_name,
                values.get(self.COMPRESSION_FORMAT.name),
                False,
                "<Compression Format> set to <snappy-hadoop> and <MODE> set to <decompress> is "
                "not permitted. Data that is compressed with Snappy Hadoop can not be "
                "decompressed using this processor.",
            )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Compress or decompress one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        mode = context.get_property(self.MODE).value or MODE_COMPRESS
        codec = self._codec_for(context, session, flowfile)
        if codec is None:
            return
        level = context.get_property(self.COMPRESSION_LEVEL).as_integer()
        compressing = mode.lower() == MODE_COMPRESS
        size_before = flowfile.size
        started = time.monotonic()
        try:
            rewrite = _Rewrite(codec, compressing, level or 0, expansion_limit(flowfile.size))
            flowfile = session.rewrite(flowfile, rewrite)
        except CodecError as ex:
            context.logger.error(
                "Unable to %s %s using %s compression format due to %s; routing to failure",
                mode.lower(),
                flowfile,
                codec.name,
                ex,
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        flowfile = self._updated_attributes(context, session, flowfile, codec, compressing)
        context.logger.info(
            "Successfully %sed %s using %s compression format; size changed from %d to %d bytes "
            "in %.0f ms",
            mode.lower(),
            flowfile,
            codec.name,
            size_before,
            flowfile.size,
            (time.monotonic() - started) * 1000,
        )
        session.transfer(flowfile, REL_SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Compress or decompress a whole batch: each content through the codec, written as one.

        Each FlowFile's bytes go through the same codec as :meth:`on_trigger` streams them
        through, its ``mime.type`` and filename change as one by one, and the new contents are
        written with ``context.write_contents`` (a CONTENT_MODIFIED each). With ``use
        mime.type attribute``, FlowFiles are grouped by the format their type names; a type
        that names none passes to ``success`` untouched. Declined, so each FlowFile's error is
        reported one by one: a batch in which a FlowFile has no ``mime.type``, or in which a
        content is not valid data of its format (or decompresses past
        :data:`_BATCH_OUTPUT_LIMIT`). The success lines one by one logs at INFO are not logged.
        """
        if int(batch.sizes.max(initial=0)) > HELD_CONTENT_MAX:
            return None  # one by one streams it through the codec in bounded memory
        name = context.get_property(self.COMPRESSION_FORMAT).value or FORMAT_ATTRIBUTE
        formats = self._batch_formats(batch, name)
        if formats is None:
            return None
        mode = context.get_property(self.MODE).value or MODE_COMPRESS
        compressing = mode.lower() == MODE_COMPRESS
        level = context.get_property(self.COMPRESSION_LEVEL).as_integer() or 0
        rename = bool(context.get_property(self.UPDATE_FILENAME).as_boolean())
        routes = []
        for found in sorted(set(formats), key=str):
            rows = np.flatnonzero(np.fromiter((f == found for f in formats), dtype=bool))
            part = batch if len(rows) == batch.count else batch.take(rows)
            if found is None:  # a mime.type that names no format: on untouched
                routes.append(BatchRoute(REL_SUCCESS.name, rows, part))
                continue
            codec = CODECS[found.lower()]
            changed = _changed_attributes(part, codec, compressing=compressing, rename=rename)
            run = _Rewrite(codec, compressing, level)
            contents = context.contents(part)
            written = context.write_contents(changed, (_coded(run, p) for p in contents))
            routes.extend(written.routes(REL_SUCCESS.name, rows))
        return routes

    @staticmethod
    def _batch_formats(batch: FlowFileBatch, name: str) -> list[str | None] | None:
        """Each FlowFile's format (None: its mime.type names none); None: some have no type."""
        if name != FORMAT_ATTRIBUTE:
            return [name] * batch.count
        column = batch.column("mime.type")
        if column is None:
            return None
        types = column.values()
        if any(t is None for t in types):
            return None
        return [MIME_TYPE_FORMATS.get(t) for t in types]  # type: ignore[arg-type]

    def _codec_for(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile
    ) -> Codec | None:
        """The FlowFile's codec; None when it was routed already (no or unknown mime.type)."""
        name = context.get_property(self.COMPRESSION_FORMAT).value or FORMAT_ATTRIBUTE
        if name == FORMAT_ATTRIBUTE:
            mime_type = flowfile.attributes.get("mime.type")
            if mime_type is None:
                context.logger.error(
                    "No mime.type attribute exists for %s; routing to failure", flowfile
                )
                session.transfer(flowfile, REL_FAILURE)
                return None
            found = MIME_TYPE_FORMATS.get(mime_type)
            if found is None:
                context.logger.info(
                    "Mime Type of %s is '%s', which does not indicate a supported Compression "
                    "Format; routing to success without decompressing",
                    flowfile,
                    mime_type,
                )
                session.transfer(flowfile, REL_SUCCESS)
                return None
            name = found
        return CODECS[name.lower()]

    def _updated_attributes(
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        codec: Codec,
        compressing: bool,
    ) -> FlowFile:
        """``mime.type`` set (compress) or removed (decompress); the filename updated."""
        rename = bool(context.get_property(self.UPDATE_FILENAME).as_boolean())
        filename = flowfile.attributes.get("filename", "")
        if compressing:
            changes = {"mime.type": codec.mime_type}
            if rename:
                changes["filename"] = filename + codec.extension
            return session.put_all_attributes(flowfile, changes)
        flowfile = session.remove_attribute(flowfile, "mime.type")
        if rename and filename.lower().endswith(codec.extension):
            stripped = filename[: len(filename) - len(codec.extension)]
            flowfile = session.put_attribute(flowfile, "filename", stripped)
        return flowfile


#: The most bytes one FlowFile's new content may reach in a batch form (held while written);
#: past it the batch declines and the FlowFile streams through on_trigger.
_BATCH_OUTPUT_LIMIT = 16 << 20


class _BatchOutputTooLarge(Exception):
    """A content grew past :data:`_BATCH_OUTPUT_LIMIT` in the batch form."""


def _coded(run: _Rewrite, pieces: Iterable[bytes | memoryview]) -> bytes:
    """One FlowFile's content through the codec, as ``session.rewrite`` would write it."""
    out: list[bytes] = []
    held = 0

    def write(data: bytes) -> None:
        nonlocal held
        held += len(data)
        if held > _BATCH_OUTPUT_LIMIT:
            raise _BatchOutputTooLarge
        out.append(data)

    data = b"".join(pieces)
    bounded = _Rewrite(run.codec, run.compressing, run.level, expansion_limit(len(data)))
    bounded(io.BytesIO(data), _Writer(write))
    return b"".join(out)


class _Writer:
    """An output stream over a write callback (what ``_Rewrite`` writes to)."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self.write = write


def _changed_attributes(
    part: FlowFileBatch, codec: Codec, *, compressing: bool, rename: bool
) -> FlowFileBatch:
    """*part* with ``mime.type`` and filenames as :meth:`CompressContent._updated_attributes`."""
    filenames = part.column("filename")
    names = [n or "" for n in filenames.values()] if filenames is not None else [""] * part.count
    if compressing:
        changed = part.with_attributes({"mime.type": codec.mime_type})
        if rename:
            changed = changed.with_columns(
                {"filename": column_of([n + codec.extension for n in names])}
            )
        return changed
    changed = part.without_attributes(["mime.type"])
    if rename:
        extension = codec.extension
        stripped = [
            n[: len(n) - len(extension)] if n.lower().endswith(extension) else n for n in names
        ]
        if stripped != names:
            changed = changed.with_columns({"filename": column_of(stripped)})
    return changed


class _Rewrite:
    """The session's rewrite callback: the codec from the old content to the new.

    Decompression writes at most *limit* bytes (None: no bound).
    """

    def __init__(self, codec: Codec, compressing: bool, level: int, limit: int | None = None):
        self.codec = codec
        self.compressing = compressing
        self.level = level
        self.limit = limit

    def __call__(self, source: Any, out: Any) -> None:
        if self.compressing:
            self.codec.run_compress(source, out.write, self.level)
        else:
            self.codec.run_decompress(source, out.write, self.limit)
