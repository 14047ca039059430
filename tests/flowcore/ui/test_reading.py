"""Reading a repository for the UI: queue pages from the segments they fall in, no lock taken,
and Avro and Parquet content as records for the viewer."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import shutil
import tracemalloc
import warnings
import zlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flowcore.flowfile import FlowFile
from flowcore.ui import reading
from flowcore.ui.reading import RepositoryView, UnknownItemError, read_records, record_format
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.locks import try_lock
from repositories.records import Transaction
from tests.flowcore.ui.avro_bytes import NULLS, avro_long, null_bomb
from tests.flowcore.ui.conftest import repository_of

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette suggests httpx2; httpx is what is installed
    from starlette.testclient import TestClient

SEGMENTS = 3
PER_SEGMENT = 40


@pytest.fixture
def queued(tmp_path: Path) -> Path:
    """A repository whose queue ``q`` holds 3 segments of 40 FlowFiles, committed in its log."""
    log = WriteAheadFlowFileRepository(tmp_path / "flowfile", sync=False)
    summaries = []
    for segment in range(SEGMENTS):
        flowfiles = [
            FlowFile.create(n, 1_000, {"filename": f"f{n}"})
            for n in range(segment * PER_SEGMENT, (segment + 1) * PER_SEGMENT)
        ]
        summaries.append(log.write_segment("q", flowfiles))
    log.commit(Transaction(enqueued=summaries))
    log.close()
    return tmp_path


def test_a_page_reads_only_the_segments_it_falls_in(queued: Path, monkeypatch) -> None:
    """Offset 85 of 3 x 40 reads the third segment alone, and returns positions 86..90."""
    view = RepositoryView(queued)
    read: list[str] = []
    original = reading.read_segment_range

    def counting(path, start, stop):
        read.append(path.name)
        return original(path, start, stop)

    monkeypatch.setattr(reading, "read_segment_range", counting)
    page = view.list_queue("q", offset=85, limit=5)
    assert [f.position for f in page.flowfiles] == [86, 87, 88, 89, 90]
    assert [f.filename for f in page.flowfiles] == [f"f{n}" for n in range(85, 90)]
    assert (page.total_flowfiles, len(read)) == (120, 1)


def test_a_page_across_two_segments_and_past_the_end(queued: Path) -> None:
    """A page spanning a segment boundary is whole; one past the end is empty."""
    view = RepositoryView(queued)
    across = view.list_queue("q", offset=35, limit=10)
    assert [f.position for f in across.flowfiles] == list(range(36, 46))
    assert view.list_queue("q", offset=500).flowfiles == ()
    assert view.list_queue("absent").total_flowfiles == 0


def test_the_log_is_read_again_once_it_changes(queued: Path) -> None:
    """A commit after the first read (a live run) shows at the next listing."""
    view = RepositoryView(queued)
    assert view.list_queue("q").total_flowfiles == 120
    log = WriteAheadFlowFileRepository(queued / "flowfile", sync=False)
    first = log.segments("q")[0].segment_id
    log.commit(Transaction(dequeued=[first]))
    log.close()
    assert view.list_queue("q").total_flowfiles == 80


def test_a_flowfile_is_found_by_uuid_and_a_gone_one_is_unknown(queued: Path) -> None:
    """The FlowFile dialog finds a queued FlowFile; an unknown uuid raises UnknownItemError."""
    view = RepositoryView(queued)
    row = view.list_queue("q", offset=50, limit=1).flowfiles[0]
    queue, flowfile = view.flowfile(row.uuid)
    assert (queue, flowfile.attributes["filename"]) == ("q", "f50")
    with pytest.raises(UnknownItemError):
        view.flowfile("no-such-uuid")


def test_reads_beside_a_run_holding_the_lock(ran) -> None:
    """With the repository's lock held (a live run), the view still lists and searches."""
    directory = repository_of(ran)
    lock = try_lock(directory / "lock")
    assert lock is not None
    try:
        view = RepositoryView(directory)
        assert view.list_queue("tag:success->put").total_flowfiles == 6
        assert list(view.events(filename="doc.json"))
        assert view.status()["holder"] is not None
        view.close()
    finally:
        lock.close()


def test_a_lookup_without_a_listing_reads_a_bounded_number(queued: Path, monkeypatch) -> None:
    """Past MAX_SCANNED FlowFiles a lookup stops and says to list the queue first."""
    monkeypatch.setattr(reading, "MAX_SCANNED", PER_SEGMENT)
    last = RepositoryView(queued).list_queue("q", offset=110, limit=1).flowfiles[0].uuid
    with pytest.raises(UnknownItemError, match="list its queue first"):
        RepositoryView(queued).flowfile(last)  # a new view: no listing has shown it


# --- Avro and Parquet content as records ---------------------------------------------------------

RECORDS_FLOW = """
from flowcore import Flow
from processors import GetFile, UpdateAttribute

flow = Flow("records-view")
get = flow.add(GetFile(input_directory=%r, keep_source_file=True), name="get")
hold = flow.add(UpdateAttribute(), name="hold", disabled=True)
flow.connect(get, hold, durable=True)
"""
HELD = "get:success->hold"
AVRO_SCHEMA = {
    "type": "record",
    "name": "user",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "born", "type": {"type": "int", "logicalType": "date"}},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
USERS = 1_200  # past the viewer's 1,000


def _user(n: int) -> dict:
    return {
        "id": 2**60 + n,  # past 2**53: a browser's JSON.parse would round it
        "name": None if n % 2 else f"user {n}",
        "born": dt.date(1990, 1, 1) + dt.timedelta(days=n),
        "amount": Decimal(n).scaleb(-2),
        "tags": ["a", str(n)],
    }


def _avro(count: int, sync_interval: int = 16_000) -> bytes:
    out = io.BytesIO()
    records = [_user(n) for n in range(count)]
    fastavro.writer(out, AVRO_SCHEMA, records, sync_interval=sync_interval)
    return out.getvalue()


def _parquet() -> bytes:
    table = pa.table(
        {
            "city": ["Oslo", "Lima", None],
            "population": pa.array([709_000, 10_000_000, 1], pa.int64()),
            "area": [454.0, 2672.3, 0.5],
            "founded": pa.array([dt.date(1040, 1, 1), dt.date(1535, 1, 18), None], pa.date32()),
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _blocks_cut() -> tuple[bytes, int]:
    """Avro of 40 records in blocks of about 10, cut inside its third block; records before it."""
    whole = _avro(40, sync_interval=300)
    reader = fastavro.block_reader(io.BytesIO(whole))
    sizes = [block.num_records for block in reader]
    assert len(sizes) > 3
    data = whole[: len(whole) * 2 // 3]
    shown = 0
    for block in fastavro.block_reader(io.BytesIO(whole)):
        if block.offset + block.size > len(data):
            break
        shown += block.num_records
    return data, shown


@pytest.fixture(scope="module")
def records_run(tmp_path_factory: pytest.TempPathFactory) -> argparse.Namespace:
    """A real direct run whose queue holds Avro, Parquet, damaged and text files."""
    from flowcore.cli import main

    root = tmp_path_factory.mktemp("ui-records")
    folder = root / "in"
    folder.mkdir()
    parquet = _parquet()
    (folder / "users.avro").write_bytes(_avro(USERS))
    (folder / "cities.parquet").write_bytes(parquet)
    (folder / "cut.avro").write_bytes(_blocks_cut()[0])
    (folder / "cut.parquet").write_bytes(parquet[:-20])
    (folder / "notes.txt").write_bytes(b"plain text, not records\n")
    flow = root / "flow.py"
    flow.write_text(RECORDS_FLOW % str(folder))
    repository = root / "repository"
    assert main(["run", str(flow), "--runner", "direct", "--repository", str(repository)]) == 0
    ui = {"host": "127.0.0.1", "port": 0, "token": None}
    return argparse.Namespace(flow=str(flow), repository=str(repository), **ui)


@pytest.fixture(scope="module")
def records_client(records_run) -> Iterator[TestClient]:
    """The UI's API over records_run's repository."""
    from flowcore.cli.ui import prepare

    app, _ = prepare(records_run)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def _records(client: TestClient, filename: str) -> dict:
    listing = client.get(f"/api/connections/{quote(HELD, safe='')}/flowfiles").json()
    uuid = next(f["uuid"] for f in listing["flowfiles"] if f["filename"] == filename)
    response = client.get(f"/api/flowfiles/{uuid}/content?records=1")
    assert response.status_code == 200
    return response.json()


def test_queued_avro_shows_as_records_with_nifi_types_and_json(records_client) -> None:
    """An Avro file in a queue: the first 1,000 records, NiFi types, exact longs, NiFi's JSON."""
    view = _records(records_client, "users.avro")
    assert view["format"] == "avro"
    assert [(c["name"], c["type"]) for c in view["columns"]] == [
        ("id", "LONG"),
        ("name", "STRING"),
        ("born", "DATE"),
        ("amount", "DECIMAL(10,2)"),
        ("tags", "ARRAY[STRING]"),
    ]
    assert view["rows"][0] == [str(2**60), "user 0", "1990-01-01", "0.00", '["a","0"]']
    assert view["rows"][1][1] is None
    assert len(view["rows"]) == reading.MAX_RECORDS
    assert (view["complete"], view["message"]) == (
        False,
        "the first 1,000 records; download the content for all",
    )
    records = json.loads(view["json"])
    assert len(records) == reading.MAX_RECORDS
    assert records[7] == {
        "id": 2**60 + 7,
        "name": None,
        "born": "1990-01-08",
        "amount": 0.07,
        "tags": ["a", "7"],
    }
    assert view["json"].startswith('[ {\n  "id" : 1152921504606846976,')  # Jackson's printer


def test_queued_parquet_shows_all_its_records(records_client) -> None:
    """A Parquet file read whole: every row, its Arrow types as NiFi's, nulls as null."""
    view = _records(records_client, "cities.parquet")
    assert view["format"] == "parquet"
    assert [(c["name"], c["type"]) for c in view["columns"]] == [
        ("city", "STRING"),
        ("population", "LONG"),
        ("area", "DOUBLE"),
        ("founded", "DATE"),
    ]
    assert view["rows"] == [
        ["Oslo", "709000", "454.0", "1040-01-01"],
        ["Lima", "10000000", "2672.3", "1535-01-18"],
        [None, "1", "0.5", None],
    ]
    assert (view["total"], view["complete"], view["message"]) == (3, True, None)


def test_truncated_avro_shows_the_records_before_the_break(records_client) -> None:
    """An Avro file cut inside a block: the whole blocks before it, and one line saying so."""
    view = _records(records_client, "cut.avro")
    _, shown = _blocks_cut()
    assert 0 < len(view["rows"]) == shown
    assert view["complete"] is False
    assert view["message"].startswith(f"the Avro content breaks off after {shown} records: ")
    assert "\n" not in view["message"]


def test_truncated_parquet_and_text_answer_one_line(records_client) -> None:
    """A Parquet file without its footer, and text, answer 200 with a one-line message."""
    cut = _records(records_client, "cut.parquet")
    assert (cut["format"], cut["rows"]) == ("parquet", [])
    assert cut["message"].startswith("this is not readable Parquet content: ")
    assert "magic" in cut["message"]
    assert "\n" not in cut["message"]
    text = _records(records_client, "notes.txt")
    assert text["format"] is None
    assert "neither Avro" in text["message"]


def test_provenance_content_reads_as_records(records_client) -> None:
    """The output content of GetFile's RECEIVE event of a Parquet file shows as its records."""
    found = records_client.get("/api/provenance?filename=cities.parquet&type=RECEIVE").json()
    event_id = found["events"][0]["event_id"]
    view = records_client.get(f"/api/content/{event_id}/output?records=1").json()
    assert (view["format"], view["total"], len(view["rows"])) == ("parquet", 3, 3)


def test_parquet_past_the_bound_is_offered_for_download(records_client, monkeypatch) -> None:
    """Parquet larger than MAX_PARQUET is not read: the message says to download it."""
    monkeypatch.setattr(reading, "MAX_PARQUET", 100)
    view = _records(records_client, "cities.parquet")
    assert view["rows"] == []
    assert "the viewer reads Parquet up to 100 bytes" in view["message"]
    assert "download it" in view["message"]


def test_avro_cut_by_the_viewer_window_is_no_error() -> None:
    """Avro read from the first bytes of a bigger content shows its whole blocks, no damage."""
    data, shown = _blocks_cut()
    view = read_records(data, "avro", whole=False)
    assert len(view.rows) == shown
    assert view.message == (
        f"the first {shown} records in the first {len(data):,} bytes; download the content for all"
    )
    first = next(iter(fastavro.block_reader(io.BytesIO(data)))).offset
    for cut in (first + 5, 20):  # inside the first block; inside the header
        tiny = read_records(data[:cut], "avro", whole=False)
        assert tiny.rows == ()
        assert tiny.message == (
            f"the first {cut} bytes the viewer reads hold no whole Avro block; "
            "download the content to see its records"
        )


def test_record_format_by_magic_then_mime_type() -> None:
    """The magic decides; without it NiFi's Avro and Parquet mime types do; else none."""
    assert record_format(b"Obj\x01", "text/plain") == "avro"
    assert record_format(b"PAR1", None) == "parquet"
    assert record_format(b"{}", "application/avro-binary") == "avro"
    assert record_format(b"xx", "application/parquet; charset=binary") == "parquet"
    assert record_format(b"a,b", "text/csv") is None
    bare = read_records(b"\x02\x04", "avro")  # bare datums: no schema to read them by
    assert bare.message.startswith("this is not readable Avro content: ")


def test_type_labels_name_nifi_types_with_their_parameters() -> None:
    """Headers name NiFi's types, a decimal with its precision and scale, nested types inside."""
    from flowcore.records import schema as s

    assert reading.type_label(s.MapType(s.ArrayType(s.DecimalType(10, 2)))) == (
        "MAP<ARRAY[DECIMAL(10,2)]>"
    )
    assert reading.type_label(s.ChoiceType((s.INT, s.STRING))) == "CHOICE[INT, STRING]"
    assert reading.type_label(s.EnumType(("a", "b"))) == "ENUM"
    assert reading.type_label(s.RecordType(s.RecordSchema.of({"a": s.INT}))) == "RECORD"


def test_bare_avro_datums_are_read_by_the_avro_schema_attribute() -> None:
    """Datums without a header (a writer's schema in avro.schema) read by that schema."""
    out = io.BytesIO()
    for n in range(3):
        fastavro.schemaless_writer(out, fastavro.parse_schema(AVRO_SCHEMA), _user(n))
    data = out.getvalue()
    view = read_records(data, "avro", avro_schema=json.dumps(AVRO_SCHEMA))
    assert [row[1] for row in view.rows] == ["user 0", None, "user 2"]
    assert (view.total, view.complete, view.message) == (3, True, None)
    cut = read_records(data[:-3], "avro", avro_schema=json.dumps(AVRO_SCHEMA))
    assert len(cut.rows) == 2
    assert cut.message.startswith("the Avro content breaks off after 2 records: ")
    bad = read_records(data, "avro", avro_schema="{not json")
    assert bad.message.startswith("this is not readable Avro content: its avro.schema attribute")


def test_damaged_content_answers_one_line(records_run, tmp_path: Path) -> None:
    """A claim file whose bytes changed on disk fails its checksums: one line, not a 500."""
    copy = tmp_path / "repository"
    shutil.copytree(records_run.repository, copy)
    view = RepositoryView(copy)
    row = next(f for f in view.list_queue(HELD).flowfiles if f.filename == "cities.parquet")
    _, flowfile = view.flowfile(row.uuid)
    claim = flowfile.content
    path = next(p for p in (copy / "content").rglob("*") if p.name == claim.resource_claim.id)
    with path.open("r+b") as file:
        file.seek(claim.offset + 100)
        file.write(b"\xff" * 8)
    found = view.records(claim, flowfile.attributes, 4 * 1024 * 1024)
    view.close()
    assert found.rows == ()
    assert found.message.startswith("the content cannot be read: ")
    assert "\n" not in found.message


def _deflate_avro_of_one_string(size: int) -> bytes:
    """An Avro data file whose one record is a *size*-byte string, deflated without building it.

    The block is compressed a megabyte at a time, so the test holds the compressed bytes only.
    """
    header = io.BytesIO()
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    fastavro.writer(header, schema, [], codec="deflate")
    sync = header.getvalue()[-16:]  # a file without records is its header: it ends in the sync
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    parts = [compressor.compress(avro_long(size))]
    chunk = b"0" * (1 << 20)
    for _ in range(size >> 20):
        parts.append(compressor.compress(chunk))
    parts.append(compressor.compress(b"0" * (size & ((1 << 20) - 1))) + compressor.flush())
    block = b"".join(parts)
    return header.getvalue() + avro_long(1) + avro_long(len(block)) + block + sync


def test_an_avro_bomb_is_refused_before_it_is_decompressed() -> None:
    """A deflated block decoding past the bound answers one line and never decompresses whole."""
    data = _deflate_avro_of_one_string(reading.MAX_DECODED + (1 << 20))
    assert len(data) < 400_000  # a 65 MB value in 300 KB
    tracemalloc.start()
    try:
        view = read_records(data, "avro", whole=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    assert (view.rows, view.json, view.complete) == ((), "", False)
    assert view.message.startswith("this Avro content's first records decode to more than ")
    assert view.message.endswith("download the content")
    assert "\n" not in view.message
    small = read_records(_deflate_avro_of_one_string(1 << 20), "avro")  # under it: read, cut
    assert len(small.rows[0][0]) == reading.MAX_CELL + 1


def test_a_parquet_bomb_is_refused_by_its_footer(monkeypatch) -> None:
    """Parquet whose first row group is bigger uncompressed than the bound is not decoded."""
    monkeypatch.setattr(reading, "MAX_DECODED", 1 << 20, raising=False)
    out = io.BytesIO()
    pq.write_table(pa.table({"s": ["0" * (2 << 20)]}), out, compression="zstd")
    assert len(out.getvalue()) < 10_000
    size = pq.read_metadata(pa.BufferReader(out.getvalue())).row_group(0).total_byte_size
    view = read_records(out.getvalue(), "parquet")
    assert (view.rows, view.json) == ((), "")
    assert view.message == (
        f"this Parquet file's first row groups hold {size:,} bytes uncompressed; the "
        "viewer decodes up to 1,048,576: download it to see its records"
    )


def test_an_array_of_nulls_bomb_is_refused_before_it_is_decoded() -> None:
    """Ten bytes declaring 10^9 null items (Avro, bare or not) or 2M nulls (Parquet): one line."""
    datum = avro_long(10**9) + avro_long(0)
    tracemalloc.start()
    try:
        views = [
            read_records(null_bomb(10**9), "avro"),
            read_records(datum, "avro", avro_schema=json.dumps(NULLS)),
        ]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    for view in views:
        assert (view.rows, view.json, view.complete) == ((), "", False)
        assert view.message == (
            f"this Avro content's first records hold more than {reading.MAX_VALUES:,} values "
            "(array items, map entries and fields); the viewer does not decode them: download "
            "the content"
        )
    items = reading.MAX_VALUES + 1
    nulls = pa.ListArray.from_arrays(pa.array([0, items], pa.int32()), pa.nulls(items))
    out = io.BytesIO()
    pq.write_table(pa.table({"a": nulls}), out, compression="zstd")
    parquet = read_records(out.getvalue(), "parquet")
    assert (parquet.rows, parquet.total) == ((), None)
    assert parquet.message == (
        f"this Parquet file's first row groups hold {items:,} list and map values; the viewer "
        f"decodes up to {reading.MAX_VALUES:,}: download it to see its records"
    )


def test_strings_nested_in_lists_structs_and_maps_are_cut_like_cells() -> None:
    """A long string inside a list, a struct or a map is cut to MAX_CELL as a top-level one."""
    long = "y" * 100_000
    table = pa.table(
        {
            "l": pa.array([[long, "a"], None, []], pa.list_(pa.string())),
            "s": pa.array([{"x": long, "n": 1}, None, {"x": "b", "n": 2}]),
            "m": pa.array([[("k", long)], None, []], pa.map_(pa.string(), pa.string())),
            "b": pa.array([[long.encode()], None, [b"z"]], pa.large_list(pa.binary())),
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    view = read_records(out.getvalue(), "parquet")
    cut = "y" * (reading.MAX_CELL + 1)
    records = json.loads(view.json)
    assert records[0]["l"] == [cut, "a"]
    assert records[0]["s"] == {"x": cut, "n": 1}
    assert records[0]["m"] == {"k": cut}
    assert len(records[0]["b"][0]) == reading.MAX_CELL + 1  # bytes, written as numbers
    assert records[2] == {"l": [], "s": {"x": "b", "n": 2}, "m": {}, "b": [[122]]}
    assert records[1] == {"l": None, "s": None, "m": None, "b": None}
    assert len(view.json) < 50_000  # uncut: past 400,000
    assert all(
        cell is None or len(cell) <= reading.MAX_CELL + 1 for row in view.rows for cell in row
    )
    assert view.message == "values longer than 4,096 characters are cut"


def test_long_values_are_cut_and_the_json_is_bounded(monkeypatch) -> None:
    """Cells are cut to MAX_CELL, the JSON to MAX_RECORD_JSON, and the message says both."""
    monkeypatch.setattr(reading, "MAX_RECORD_JSON", 20_000)
    out = io.BytesIO()
    pq.write_table(pa.table({"s": ["x" * 300_000] + [f"{n}" * 3_000 for n in range(40)]}), out)
    view = read_records(out.getvalue(), "parquet")
    assert view.rows[0][0] == "x" * reading.MAX_CELL + "\u2026"
    assert 1 < len(view.rows) < 10
    assert len(view.json) <= 20_000
    assert view.complete is False
    assert view.message == (
        f"the first {len(view.rows)} of 41 records; download the content for all; values longer "
        "than 4,096 characters are cut"
    )
    monkeypatch.setattr(reading, "MAX_RECORD_JSON", 1_000)  # the first record alone is past it
    one = read_records(out.getvalue(), "parquet")
    assert (len(one.rows), len(one.json)) == (1, 1_000)
    assert one.message.endswith("are cut; the JSON is cut at 1,000 characters")


@pytest.mark.parametrize(
    "column",
    [
        pa.array([5], pa.duration("s")),
        pa.array([1], pa.timestamp("ns", "UTC")),
        pa.array([2**62], pa.timestamp("ms")),
    ],
    ids=["duration", "nanoseconds", "out-of-range"],
)
def test_values_the_viewer_cannot_write_answer_one_line(column: pa.Array) -> None:
    """Durations, nanosecond and far timestamps: a one-line message, not an error (a 500)."""
    out = io.BytesIO()
    pq.write_table(pa.table({"v": column}), out)
    view = read_records(out.getvalue(), "parquet")
    assert (view.rows, view.total) == ((), 1)
    assert view.message.startswith("these records cannot be shown: ")
    assert "\n" not in view.message


def test_nan_and_infinities_show_as_jacksons_strings() -> None:
    """A NaN or infinity, which NiFi's default JSON writer fails on, is shown, not refused:
    the cell and the JSON say "NaN" (a JSON string), the other numbers stay plain."""
    out = io.BytesIO()
    pq.write_table(pa.table({"d": [float("nan"), 1e10], "f": pa.array([1.5, -1e400], "f4")}), out)
    view = read_records(out.getvalue(), "parquet")
    assert view.message is None
    assert view.rows == (("NaN", "1.5"), ("10000000000", "-Infinity"))
    assert '"d" : "NaN"' in view.json
    assert '"f" : "-Infinity"' in view.json


def test_gone_content_is_unknown_and_cut_content_one_line(records_run, tmp_path: Path) -> None:
    """A claim whose file is gone raises UnknownItemError; one cut short answers one line."""
    copy = tmp_path / "repository"
    shutil.copytree(records_run.repository, copy)
    view = RepositoryView(copy)
    found = {}
    for name in ("cities.parquet", "users.avro"):
        row = next(f for f in view.list_queue(HELD).flowfiles if f.filename == name)
        found[name] = view.flowfile(row.uuid)[1]
    paths = {
        name: next(
            p for p in (copy / "content").rglob("*") if p.name == f.content.resource_claim.id
        )
        for name, f in found.items()
    }
    cities, users = found["cities.parquet"], found["users.avro"]
    with paths["users.avro"].open("r+b") as file:
        file.truncate(users.content.offset + 10)
    cut = view.records(users.content, users.attributes, 4 * 1024 * 1024)
    paths["cities.parquet"].unlink()
    with pytest.raises(UnknownItemError, match="the content is gone"):
        view.records(cities.content, cities.attributes, 4 * 1024 * 1024)
    view.close()
    assert cut.rows == ()
    assert cut.message.startswith("the content cannot be read: content claim ")
    assert "was cut short" in cut.message
    assert "\n" not in cut.message


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz", "snappy", "zstandard", "lz4"])
def test_every_avro_codec_is_bounded_before_it_is_decoded(codec: str, monkeypatch) -> None:
    """Each codec's block size is known before decoding: past the bound refused, under it read."""
    monkeypatch.setattr(reading, "MAX_DECODED", 1 << 20, raising=False)
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    big, small, blocks = io.BytesIO(), io.BytesIO(), io.BytesIO()
    fastavro.writer(big, schema, [{"s": "0" * (2 << 20)}], codec=codec)
    fastavro.writer(small, schema, [{"s": "0" * (1 << 19)}], codec=codec)
    many = [{"s": f"{n % 10}" * 200_000} for n in range(8)]  # blocks under it, past it together
    fastavro.writer(blocks, schema, many, codec=codec, sync_interval=1)
    for data in (big.getvalue(), blocks.getvalue()):
        refused = read_records(data, "avro")
        assert refused.rows == ()
        assert refused.message.startswith("this Avro content's first records decode to more than")
    read = read_records(small.getvalue(), "avro")
    assert (len(read.rows), read.complete) == (1, False)
    assert read.message == "values longer than 4,096 characters are cut"
