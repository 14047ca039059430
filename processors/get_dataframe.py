"""GetDataFrame: a Spark DataFrame written as Parquet, one record FlowFile per partition."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pyarrow.parquet as pq

from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    create_directory_exists_validator,
)

__all__ = ["GetDataFrame"]

#: The marker Spark's commit protocol writes when every task's output is in place.
SUCCESS_MARKER = "_SUCCESS"
#: Spark's part file names: ``part-<partition>-<job uuid>-c<file>.<codec>.parquet``.
_PART = re.compile(r"part-(\d+)(?:-.*)?\.parquet$")
#: State keys: which committed write was read, and how many of its parts are handed out.
WRITE_KEY = "flowcore.dataframe.write"
NEXT_KEY = "flowcore.dataframe.next"
MIME_TYPE = "application/vnd.apache.parquet"


def _parts(root: Path) -> list[Path]:
    """The write's part files, in partition order (then path: ``partitionBy`` subdirectories)."""
    found = []
    for directory, names, files in os.walk(root):
        names[:] = sorted(n for n in names if not n.startswith(("_", ".")))
        for name in files:
            match = _PART.match(name)
            if match is not None:
                found.append((int(match.group(1)), Path(directory, name)))
    return [path for _, path in sorted(found, key=lambda p: (p[0], str(p[1])))]


def _write_id(marker: os.stat_result, parts: Mapping[Path, os.stat_result], root: Path) -> str:
    """What tells one committed write from the next in the same directory (an overwrite)."""
    digest = hashlib.sha256(str(marker.st_mtime_ns).encode())
    for path, info in parts.items():
        digest.update(f"\0{path.relative_to(root)}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


class GetDataFrame(SourceProcessor):
    """Reads a Spark DataFrame written as Parquet: one record FlowFile per partition.

    A PySpark job hands a DataFrame to a flow with ``df.write.parquet(directory)``: Spark writes
    one part file per partition and, when every task's file is in place, its ``_SUCCESS``
    marker. This source reads the directory only once that marker is there, and makes each
    part file one FlowFile whose content is the part's Parquet bytes (a ParquetReader reads
    its records), in partition order, with ``record.count`` from the file's footer and
    ``fragment.*`` attributes naming the write. Which write was read and how many of its parts
    are handed out is source state committed with the FlowFiles: a part is read once across
    runs and crashes; a later write into the same directory (``mode("overwrite")``) is read
    again in full. flowcore's own; NiFi has no Spark source.
    """

    DIRECTORY = PropertyDescriptor(
        "Directory",
        description="The directory a Spark DataFrame was written to with df.write.parquet(...)",
        required=True,
        validators=(NON_EMPTY_VALIDATOR, create_directory_exists_validator()),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
    )
    PARTS_PER_TRIGGER = PropertyDescriptor(
        "Parts per Trigger",
        description="The most part files one trigger hands out (one FlowFile each)",
        default="100",
        required=True,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    property_descriptors: ClassVar = (DIRECTORY, PARTS_PER_TRIGGER)
    relationships: ClassVar = (SUCCESS,)
    tags: ClassVar = ("spark", "dataframe", "parquet", "record", "source", "get")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "The part file's name",
        "path": "The part file's directory relative to Directory (./ for Directory itself; "
        "a partitionBy write's column=value directories)",
        "absolute.path": "The absolute path of the part file's directory, ending in /",
        "mime.type": MIME_TYPE,
        "record.count": "The number of records in the part file (from its Parquet footer)",
        "spark.partition.index": "The partition number in the part file's name",
        "fragment.identifier": "The same for every part of one committed write",
        "fragment.index": "The part's position in the write, from 0",
        "fragment.count": "The number of part files of the write",
    }
    fills_micro_batch: ClassVar[bool] = True
    identifies_work: ClassVar[bool] = True

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._remaining: int | None = None  # parts of the write not handed out, once listed

    def _directory(self, context: ProcessContext) -> Path:
        text = context.get_property(self.DIRECTORY).evaluate_attribute_expressions().value
        return Path(os.path.abspath(text or "."))

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """The next parts of the directory's committed write, and the state after them."""
        root = self._directory(context)
        try:
            marker = (root / SUCCESS_MARKER).stat()
        except FileNotFoundError:
            context.logger.warning(
                "%s holds no committed Spark write (no %s): nothing to read yet; write the "
                "DataFrame with df.write.parquet(...) first",
                root,
                SUCCESS_MARKER,
            )
            self._remaining = 0
            return WorkListing((), state)
        infos = {path: path.stat() for path in _parts(root)}  # one stat a part per listing
        parts = list(infos)
        write = _write_id(marker, infos, root)
        start = int(state.get(NEXT_KEY, "0")) if state.get(WRITE_KEY) == write else 0
        limit = context.get_property(self.PARTS_PER_TRIGGER).as_integer() or 100
        chosen = parts[start : start + limit]
        items = tuple(
            WorkItem(
                f"{write}/{start + offset}",
                {
                    "root": str(root),
                    "path": str(path),
                    "index": start + offset,
                    "count": len(parts),
                    "write": write,
                },
                flowfiles=1,
                size=infos[path].st_size,
            )
            for offset, path in enumerate(chosen)
        )
        self._remaining = len(parts) - start - len(chosen)
        return WorkListing(items, {WRITE_KEY: write, NEXT_KEY: str(start + len(chosen))})

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """The parts not handed out yet (None before the first listing)."""
        del context, state
        return None if self._remaining is None else PendingWork(self._remaining)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One part file as one FlowFile, with a RECEIVE event."""
        del context
        payload = item.payload
        path, root = Path(payload["path"]), Path(payload["root"])
        started = time.monotonic()
        flowfile = session.import_from(path, session.create())
        relative = path.parent.relative_to(root).as_posix()
        match = _PART.match(path.name)
        attributes = {
            "filename": path.name,
            "path": "./" if relative == "." else f"{relative}/",
            "absolute.path": f"{path.parent}/",
            "mime.type": MIME_TYPE,
            "record.count": str(pq.read_metadata(path).num_rows),
            "spark.partition.index": str(int(match.group(1))) if match else "",
            "fragment.identifier": payload["write"],
            "fragment.index": str(payload["index"]),
            "fragment.count": str(payload["count"]),
        }
        flowfile = session.put_all_attributes(flowfile, attributes)
        elapsed_ms = int((time.monotonic() - started) * 1000)
        session.provenance.receive(flowfile, path.as_uri(), duration_ms=elapsed_ms)
        session.transfer(flowfile, SUCCESS)
