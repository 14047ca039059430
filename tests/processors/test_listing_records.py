"""A listing written as records through a Record Writer (processors._listing_records)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from flowcore.processor import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.testing import TestRunner
from processors._listing_records import FILE_INFO_SCHEMA, S3_OBJECT_SCHEMA, write_listing
from processors.record_services.json import JsonRecordSetWriter

WRITER = PropertyDescriptor("Record Writer", identifies_service="RecordSetWriterFactory")


class _Lister(Processor):
    """Writes the rows it is given as S3 object records."""

    property_descriptors: ClassVar = (WRITER,)
    relationships: ClassVar = (SUCCESS,)

    def __init__(self, rows: list[dict[str, Any]], **properties: object) -> None:
        super().__init__(**properties)
        self.rows = rows

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        write_listing(
            context, session, WRITER, S3_OBJECT_SCHEMA, rows=self.rows,
            attributes={"s3.region": "r"},
        )  # fmt: skip


def _run(rows: list[dict[str, Any]]) -> TestRunner:
    runner = TestRunner(_Lister(rows))
    runner.add_service(JsonRecordSetWriter("w"))
    runner.set_property("Record Writer", "w")
    runner.run()
    return runner


def test_schemas_are_nifis() -> None:
    """FileInfo's and ListS3's RecordObjectWriter's fields, names, types and nullability."""
    assert [(f.name, str(f.type), f.nullable) for f in FILE_INFO_SCHEMA] == [
        ("filename", "STRING", False), ("path", "STRING", False),
        ("directory", "BOOLEAN", False), ("size", "LONG", False),
        ("lastModified", "TIMESTAMP", False), ("permissions", "STRING", True),
        ("owner", "STRING", True), ("group", "STRING", True),
    ]  # fmt: skip
    assert [f.name for f in S3_OBJECT_SCHEMA] == [
        "key", "bucket", "owner", "etag", "lastModified", "size", "storageClass", "latest",
        "versionId", "tags", "userMetadata",
    ]  # fmt: skip
    assert str(S3_OBJECT_SCHEMA.field("tags").type) == "MAP<STRING>"  # type: ignore[union-attr]


def test_rows_become_one_flowfile_with_the_writers_attributes() -> None:
    """One FlowFile: record.count, mime.type, the extra attributes; maps and nulls kept."""
    row = {
        "key": "k", "bucket": "b", "owner": None, "etag": "e", "lastModified": 1_700_000_000_000,
        "size": 3, "storageClass": "STANDARD", "latest": True, "versionId": None,
        "tags": {"t": "v"}, "userMetadata": None,
    }  # fmt: skip
    runner = _run([row, {**row, "key": "k2", "tags": None}])
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals("record.count", "2")
    out.assert_attribute_equals("mime.type", "application/json")
    out.assert_attribute_equals("s3.region", "r")
    first, second = json.loads(out.content)
    assert first["tags"] == {"t": "v"}
    assert second["tags"] is None
    assert first["size"] == 3
    assert first["lastModified"] == 1_700_000_000_000  # epoch millis in, epoch millis out


def test_no_rows_no_flowfile() -> None:
    """An empty listing writes nothing (NiFi removes the empty FlowFile)."""
    assert _run([]).flowfiles_for("success") == []
