"""Tests for the shared base of the codec Record Writers (options once, per FlowFile on EL)."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from processors.record_services import (
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    ParquetRecordSetWriter,
    XMLRecordSetWriter,
)
from processors.record_services._codec_writer import CodecWriterService

BATCH = pa.record_batch({"a": pa.array([1, 2], pa.int32()), "b": pa.array(["x", None])})


def _write(service: CodecWriterService, attributes: dict[str, str]) -> bytes:
    enabled = service.enable(ServiceContext(service))
    out = io.BytesIO()
    writer = enabled.create_writer(BATCH.schema, attributes, out)
    writer.write(BATCH)
    writer.finish()
    return out.getvalue()


def test_the_four_codec_writers_share_the_base() -> None:
    """CSV, JSON, Parquet and XML writers open their codec with the options built once."""
    for service in (
        CSVRecordSetWriter("w"),
        JsonRecordSetWriter("w"),
        ParquetRecordSetWriter("w"),
        XMLRecordSetWriter("w", root_tag_name="root", record_tag_name="r"),
    ):
        assert isinstance(service, CodecWriterService)
        assert _write(service, {})
    assert _write(JsonRecordSetWriter("w"), {}) == b'[{"a":1,"b":"x"},{"a":2,"b":null}]'


def test_options_from_attributes_are_built_per_flowfile() -> None:
    """A separator from Expression Language is each FlowFile's own."""
    service = CSVRecordSetWriter("w", value_separator="${sep}")
    assert _write(service, {"sep": ";"}) == b"a;b\n1;x\n2;\n"
    assert _write(service, {"sep": "|"}) == b"a|b\n1|x\n2|\n"


def test_a_compression_flowcore_lacks_fails_when_enabled() -> None:
    """check_options runs at enable time: LZO names the property."""
    service = ParquetRecordSetWriter("w", compression_type="LZO")
    with pytest.raises(ConfigurationError, match="Compression Type"):
        service.enable(ServiceContext(service))
