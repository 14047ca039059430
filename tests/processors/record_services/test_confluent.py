"""Tests for ConfluentSchemaRegistry and the confluent-encoded strategies, against a real
registry-shaped HTTP server on loopback."""

from __future__ import annotations

import base64
import io
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fastavro
import pyarrow as pa
import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError, RecordError
from flowcore.registry import BUILTIN_SERVICES
from processors.record_services import (
    AvroReader,
    AvroRecordSetWriter,
    ConfluentEncodedSchemaReferenceReader,
    ConfluentEncodedSchemaReferenceWriter,
    ConfluentSchemaRegistry,
    JsonRecordSetWriter,
)
from processors.record_services._confluent_wire import SCHEMA_ID_KEY

V1 = {"type": "record", "name": "person", "fields": [{"name": "id", "type": "int"}]}
V2 = {
    "type": "record",
    "name": "person",
    "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": ["null", "string"]}],
}
ROUTES = {
    "/subjects/people/versions/latest": {
        "subject": "people",
        "version": 2,
        "id": 7,
        "schema": json.dumps(V2),
    },
    "/subjects/people/versions/1": {
        "subject": "people",
        "version": 1,
        "id": 5,
        "schema": json.dumps(V1),
    },
    "/schemas/ids/7": {"schema": json.dumps(V2)},
    "/schemas/ids/7/versions": [{"subject": "people", "version": 2}],
    "/schemas/ids/5": {"schema": json.dumps(V1)},  # no /versions: a registry before 5.5.4
}


class _Registry(BaseHTTPRequestHandler):
    requests: list[tuple[str, dict[str, str]]] = []
    password: str | None = None

    def do_GET(self) -> None:
        type(self).requests.append((self.path, dict(self.headers)))
        if self.path.startswith("/subjects/slow/"):
            time.sleep(1.5)
        if self.password is not None:
            expected = "Basic " + base64.b64encode(f"user:{self.password}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self._send(401, {"error_code": 401, "message": "Unauthorized"})
        body = ROUTES.get(self.path)
        if body is None:
            return self._send(404, {"error_code": 40401, "message": "Subject not found."})
        return self._send(200, body)

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out first (the slow subject)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A registry-shaped HTTP server on a free loopback port, for one test."""
    _Registry.requests = []
    _Registry.password = None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _registry(url: str, **properties: str) -> ConfluentSchemaRegistry:
    definition = ConfluentSchemaRegistry("reg", url=url, **properties)
    assert not definition.validate()
    return definition.enable(ServiceContext(definition))


def _enabled(definition, registry):
    return definition.enable(ServiceContext(definition, {"reg": registry}))


def _datums(schema: dict, rows: list[dict]) -> bytes:
    out = io.BytesIO()
    parsed = fastavro.parse_schema(schema)
    for row in rows:
        fastavro.schemaless_writer(out, parsed, row)
    return out.getvalue()


def test_nifi_names_defaults_and_validation() -> None:
    """NiFi's properties, defaults and checks (HTTPS with SSL, credentials for BASIC)."""
    registry = ConfluentSchemaRegistry("reg")
    assert registry.get_property("Schema Registry URLs").value == "http://localhost:8081"
    assert registry.get_property("Communications Timeout").value == "30 secs"
    assert registry.get_property("Cache Size").value == "1000"
    assert registry.get_property("Cache Expiration").value == "1 hour"
    assert registry.get_property("Authentication Type").value == "NONE"
    assert BUILTIN_SERVICES["ConfluentSchemaRegistry"] is ConfluentSchemaRegistry
    ssl = ConfluentSchemaRegistry("reg", url="http://a:1", **{"ssl-context": "tls"}).validate()
    assert any("must use HTTPS" in p.explanation for p in ssl)
    basic = ConfluentSchemaRegistry("reg", **{"authentication-type": "BASIC"}).validate()
    assert {p.subject for p in basic} >= {"Username", "Password"}
    header = ConfluentSchemaRegistry("reg", **{"request.header.": "x"}).validate()
    assert any("request.header.*" in p.explanation for p in header)
    assert any(
        "not a valid" in p.explanation
        for p in ConfluentSchemaRegistry("reg", url="ftp:/x").validate()
    )


def test_fetch_by_name_version_and_id_with_the_cache(server: str) -> None:
    """Latest and numbered versions by subject, schemas by id; answers are cached."""
    registry = _registry(server)
    latest = registry.registered("people")
    assert (latest.id, latest.version, latest.schema.names) == (7, 2, ("id", "name"))
    assert registry.retrieve_schema("people", 1).names == ("id",)
    by_id = registry.schema_by_id(7)
    assert (by_id.name, by_id.version) == ("people", 2)
    old = registry.schema_by_id(5)
    assert (old.name, old.schema.names) == (None, ("id",))
    count = len(_Registry.requests)
    registry.registered("people")
    registry.schema_by_id(7)
    assert len(_Registry.requests) == count
    assert _Registry.requests[0][1]["Accept"] == "application/vnd.schemaregistry.v1+json"


def test_cache_expiration_and_size(server: str) -> None:
    """Cache Expiration makes entries refetched; Cache Size 0 caches nothing."""
    expiring = _registry(server, **{"cache-expiration": "50 millis"})
    expiring.registered("people")
    time.sleep(0.1)
    expiring.registered("people")
    assert len(_Registry.requests) == 2
    uncached = _registry(server, **{"cache-size": "0"})
    uncached.registered("people")
    uncached.registered("people")
    assert len(_Registry.requests) == 4


def test_not_found_and_unreachable_urls(server: str) -> None:
    """404 names the subject; a dead URL is skipped for the next; none answering is one error."""
    registry = _registry(server)
    with pytest.raises(ConfigurationError, match="Unable to find schema with name 'nobody'"):
        registry.registered("nobody")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    assert _registry(f"{dead}, {server}").registered("people").id == 7
    with pytest.raises(ConfigurationError, match="Failed to retrieve schema"):
        _registry(dead).registered("people")


def test_every_call_is_bounded_by_the_timeout(server: str) -> None:
    """Communications Timeout bounds a registry that does not answer."""
    registry = _registry(server, timeout="200 millis")
    started = time.monotonic()
    with pytest.raises(ConfigurationError, match="ReadTimeout"):
        registry.registered("slow")
    assert time.monotonic() - started < 1.2


def test_basic_authentication_and_request_headers(server: str) -> None:
    """BASIC credentials and request.header.* properties reach the registry."""
    _Registry.password = "secret"
    with pytest.raises(ConfigurationError, match="HTTP 401"):
        _registry(server).registered("people")
    registry = _registry(
        server,
        **{
            "authentication-type": "BASIC",
            "username": "user",
            "password": "secret",
            "request.header.X-Tenant": "blue",
        },
    )
    assert registry.registered("people").id == 7
    assert _Registry.requests[-1][1]["X-Tenant"] == "blue"


def test_avro_reader_confluent_encoded(server: str) -> None:
    """AvroReader 'confluent-encoded': magic byte, id 7, then bare datums of that schema."""
    registry = _registry(server)
    reader = _enabled(
        AvroReader("r", schema_access_strategy="confluent-encoded", schema_registry="reg"), registry
    )
    content = (
        b"\x00"
        + struct.pack(">I", 7)
        + _datums(V2, [{"id": 1, "name": "a"}, {"id": 2, "name": None}])
    )
    batches = list(reader.create_reader({}, io.BytesIO(content)))
    assert [r for b in batches for r in b.to_pylist()] == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
    ]
    assert batches[0].schema.metadata[SCHEMA_ID_KEY] == b"7"
    with pytest.raises(RecordError, match="Magic byte"):
        list(reader.create_reader({}, io.BytesIO(b"\x01\x00\x00\x00\x07")))
    unset = AvroReader("r", schema_access_strategy="confluent-encoded").validate()
    assert any(p.subject == "Schema Registry" for p in unset)


def test_writers_write_the_confluent_reference(server: str) -> None:
    """'confluent-encoded' write strategy: the header of the named schema, or the records' id."""
    registry = _registry(server)
    writer = _enabled(
        AvroRecordSetWriter(
            "w",
            schema_write_strategy="confluent-encoded",
            schema_access_strategy="schema-name",
            schema_registry="reg",
            schema_version="1",
        ),
        registry,
    )
    batch = pa.RecordBatch.from_pylist([{"id": 3}, {"id": 4}])
    out = io.BytesIO()
    sink = writer.create_writer(batch.schema, {"schema.name": "people"}, out)
    sink.write(batch)
    assert sink.finish()["record.count"] == "2"
    assert out.getvalue() == b"\x00" + struct.pack(">I", 5) + _datums(V1, [{"id": 3}, {"id": 4}])

    reader = _enabled(
        AvroReader("r", schema_access_strategy="confluent-encoded", schema_registry="reg"), registry
    )
    content = b"\x00" + struct.pack(">I", 7) + _datums(V2, [{"id": 1, "name": "a"}])
    (read,) = list(reader.create_reader({}, io.BytesIO(content)))
    json_writer = _enabled(
        JsonRecordSetWriter("j", schema_write_strategy="confluent-encoded"), registry
    )
    out = io.BytesIO()
    sink = json_writer.create_writer(read.schema, {}, out)
    sink.write(read)
    sink.finish()
    assert out.getvalue() == b'\x00\x00\x00\x00\x07[{"id":1,"name":"a"}]'
    with pytest.raises(ConfigurationError, match="Schema Identifier is not known"):
        json_writer.create_writer(batch.schema, {}, io.BytesIO())


def test_nifi_2_schema_reference_reader_and_writer(server: str) -> None:
    """NiFi 2's ConfluentEncodedSchemaReference{Reader,Writer}: the same header, by service."""
    registry = _registry(server)
    references = {
        "reg": registry,
        "refs": ConfluentEncodedSchemaReferenceReader("refs"),
        "refw": ConfluentEncodedSchemaReferenceWriter("refw"),
    }
    reader_definition = AvroReader(
        "r",
        schema_access_strategy="schema-reference-reader",
        schema_registry="reg",
        schema_reference_reader="refs",
    )
    assert not reader_definition.validate()
    reader = reader_definition.enable(ServiceContext(reader_definition, references))
    content = b"\x00" + struct.pack(">I", 7) + _datums(V2, [{"id": 9, "name": "z"}])
    (batch,) = list(reader.create_reader({}, io.BytesIO(content)))
    assert batch.to_pylist() == [{"id": 9, "name": "z"}]

    writer_definition = AvroRecordSetWriter(
        "w", schema_write_strategy="schema-reference-writer", schema_reference_writer="refw"
    )
    assert not writer_definition.validate()
    writer = writer_definition.enable(ServiceContext(writer_definition, references))
    out = io.BytesIO()
    sink = writer.create_writer(batch.schema, {}, out)
    sink.write(batch)
    sink.finish()
    assert out.getvalue()[:5] == b"\x00\x00\x00\x00\x07"
    (again,) = list(reader.create_reader({}, io.BytesIO(out.getvalue())))
    assert again.to_pylist() == [{"id": 9, "name": "z"}]
    missing = AvroRecordSetWriter("w", schema_write_strategy="schema-reference-writer").validate()
    assert any(p.subject == "Schema Reference Writer" for p in missing)
