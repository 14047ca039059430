"""Tests for JoinEnrichment, ported from NiFi's TestJoinEnrichment (CSV/JSON services)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ForkEnrichment, GetFile, JoinEnrichment, LookupRecord, PutFile
from processors.lookup_services import SimpleKeyValueLookupService
from processors.record_services import (
    AvroRecordSetWriter,
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
)

ORIGINAL = {"enrichment.group.id": "abc", "enrichment.role": "ORIGINAL"}
ENRICHMENT = {"enrichment.group.id": "abc", "enrichment.role": "ENRICHMENT"}


def csv_runner(**properties: str) -> TestRunner:
    """NiFi's setupCsvServices: CSV in (every field a string, by the header), CSV out."""
    runner = TestRunner(
        JoinEnrichment(
            original_record_reader="reader",
            enrichment_record_reader="reader",
            record_writer="writer",
            **properties,
        )
    )
    runner.add_service(
        CSVReader(
            "reader",
            schema_access_strategy="csv-header-derived",
            treat_first_line_as_header="true",
        )
    )
    runner.add_service(CSVRecordSetWriter("writer"))
    return runner


def json_runner(**properties: str) -> TestRunner:
    """NiFi's setupJsonServices: JSON in, JSON out (one object per line)."""
    runner = TestRunner(
        JoinEnrichment(
            original_record_reader="reader",
            enrichment_record_reader="reader",
            record_writer="writer",
            **properties,
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    return runner


def rows(content: bytes) -> list[dict[str, str]]:
    """CSV content as dicts (empty values as None, as NiFi's test reader reads them)."""
    reader = csv.DictReader(io.StringIO(content.decode()))
    return [{k: (v or None) for k, v in row.items()} for row in reader]


def test_simple_sql_join() -> None:
    """NiFi's testSimpleSqlJoin: one joined record, both inputs to original."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.id, enrichment.name FROM original JOIN enrichment "
        "ON original.id = enrichment.id",
    )
    runner.enqueue(b"id\n5", ORIGINAL)
    runner.enqueue(b"id,name\n5,John Doe", ENRICHMENT)
    runner.run()
    runner.assert_transfer_count("joined", 1)
    assert runner.auto_terminated_count("original") == 2  # auto-terminated by default
    joined = runner.flowfiles_for("joined")[0]
    joined.assert_content_equals("id,name\n5,John Doe\n")
    joined.assert_attribute_equals("record.count", "1")
    joined.assert_attribute_equals("mime.type", "text/csv")


def test_sql_self_join_of_original() -> None:
    """A self-join of ``original`` (it scans the original twice) joins, its records spilled
    to a file rather than read from a stream twice; and the enrichment joined after it."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT o1.id, o2.name AS manager, e.dept FROM original o1 "
        "JOIN original o2 ON o1.manager_id = o2.id "
        "LEFT OUTER JOIN enrichment e ON o1.id = e.id ORDER BY o1.id",
    )
    runner.enqueue(b"id,name,manager_id\n1,Ann,\n2,Bob,1\n3,Cy,1\n4,Di,2", ORIGINAL)
    runner.enqueue(b"id,dept\n2,sales\n4,ops", ENRICHMENT)
    runner.run()
    runner.assert_transfer_count("failure", 0)
    joined = runner.flowfiles_for("joined")[0]
    joined.assert_content_equals("id,manager,dept\n2,Ann,sales\n3,Ann,\n4,Bob,ops\n")
    joined.assert_attribute_equals("record.count", "3")


def test_sql_naming_original_once_streams_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query that scans ``original`` once reads it as a stream: nothing is spilled."""
    import processors._join_strategies as strategies

    monkeypatch.setattr(strategies, "_spilled", None)
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.id, enrichment.name FROM original JOIN enrichment "
        "ON original.id = enrichment.id",
    )
    runner.enqueue(b"id\n5", ORIGINAL)
    runner.enqueue(b"id,name\n5,John Doe", ENRICHMENT)
    runner.run()
    runner.flowfiles_for("joined")[0].assert_content_equals("id,name\n5,John Doe\n")


def test_el_referencing_attribute() -> None:
    """NiFi's testELReferencingAttribute: the SQL sees both FlowFiles' attributes."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.id, enrichment.${desired_enrichment_column} FROM original "
        "JOIN enrichment ON original.id = enrichment.id",
    )
    runner.enqueue(b"id\n5", ORIGINAL)
    runner.enqueue(b"id,name\n5,John Doe", {**ENRICHMENT, "desired_enrichment_column": "name"})
    runner.run()
    runner.assert_transfer_count("joined", 1)
    runner.flowfiles_for("joined")[0].assert_content_equals("id,name\n5,John Doe\n")


def test_many_queued() -> None:
    """NiFi's testManyQueued: 26 groups queued at once, each joined on its own."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.i, original.lower_letter, enrichment.upper_letter FROM original "
        "JOIN enrichment ON original.i = enrichment.i",
    )
    for i in range(26):
        runner.enqueue(
            f"i,lower_letter\n{i},{chr(97 + i)}".encode(),
            {"enrichment.group.id": str(i), "enrichment.role": "ORIGINAL"},
        )
    for i in range(26):
        runner.enqueue(
            f"i,upper_letter\n{i},{chr(65 + i)}".encode(),
            {"enrichment.group.id": str(i), "enrichment.role": "ENRICHMENT"},
        )
    runner.run()
    runner.assert_transfer_count("joined", 26)
    assert runner.auto_terminated_count("original") == 52  # auto-terminated by default
    found = set()
    for joined in runner.flowfiles_for("joined"):
        (record,) = rows(joined.content)
        assert record["upper_letter"] == record["lower_letter"].upper()
        assert record["lower_letter"] == chr(97 + int(record["i"]))
        found.add(int(record["i"]))
    assert found == set(range(26))


LEFT_ORIGINAL = (
    b"id,name,age\n28021,John Doe,55\n832,Jane Doe,22\n29201,Jake Doe,23\n555,Joseph Doe,2\n"
)
LEFT_ENRICHMENT = (
    b"customer_id,customer_name,customer_email\n"
    b"555,Joe Doe,joe.doe@nifi.apache.org\n"
    b"832,Jane Doe,jane.doe@nifi.apache.org\n"
    b"29201,Jake Doe,jake.doe@nifi.apache.org\n"
)


def test_left_outer_join() -> None:
    """NiFi's testLeftOuterJoin: every original record, its enrichment's fields or nulls."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT o.*, e.* FROM original o LEFT OUTER JOIN enrichment e ON o.id = e.customer_id",
    )
    runner.enqueue(LEFT_ORIGINAL, ORIGINAL)
    runner.enqueue(LEFT_ENRICHMENT, ENRICHMENT)
    runner.run()
    runner.assert_transfer_count("joined", 1)
    assert runner.auto_terminated_count("original") == 2  # auto-terminated by default
    got = rows(runner.flowfiles_for("joined")[0].content)
    assert sorted(got, key=lambda r: r["id"]) == sorted(
        [
            {"id": "28021", "name": "John Doe", "age": "55", "customer_id": None,
             "customer_name": None, "customer_email": None},
            {"id": "832", "name": "Jane Doe", "age": "22", "customer_id": "832",
             "customer_name": "Jane Doe", "customer_email": "jane.doe@nifi.apache.org"},
            {"id": "29201", "name": "Jake Doe", "age": "23", "customer_id": "29201",
             "customer_name": "Jake Doe", "customer_email": "jake.doe@nifi.apache.org"},
            {"id": "555", "name": "Joseph Doe", "age": "2", "customer_id": "555",
             "customer_name": "Joe Doe", "customer_email": "joe.doe@nifi.apache.org"},
        ],
        key=lambda r: r["id"],
    )  # fmt: skip


def test_left_outer_join_rename_fields() -> None:
    """NiFi's testLeftOuterJoinRenameFields: aliases name the output fields."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT o.id, o.name, e.customer_name AS preferred_name, o.age, "
        "e.customer_email AS email FROM original o LEFT OUTER JOIN enrichment e "
        "ON o.id = e.customer_id",
    )
    runner.enqueue(LEFT_ORIGINAL, ORIGINAL)
    runner.enqueue(LEFT_ENRICHMENT, ENRICHMENT)
    runner.run()
    got = {r["id"]: r for r in rows(runner.flowfiles_for("joined")[0].content)}
    assert list(got["832"]) == ["id", "name", "preferred_name", "age", "email"]
    assert got["555"]["preferred_name"] == "Joe Doe"
    assert got["28021"]["email"] is None


def test_default_sql_names_repeated_columns_as_calcite() -> None:
    """The default SQL selects both tables' ``id``: the second is ``id0``, as Calcite names it."""
    runner = csv_runner(join_strategy="SQL")
    runner.enqueue(b"id,a\n1,x\n2,y\n", ORIGINAL)
    runner.enqueue(b"id,b\n1,X\n", ENRICHMENT)
    runner.run()
    got = sorted(rows(runner.flowfiles_for("joined")[0].content), key=lambda r: r["id"])
    assert got == [
        {"id": "1", "a": "x", "id0": "1", "b": "X"},
        {"id": "2", "a": "y", "id0": None, "b": None},
    ]


def test_wrapper_pairs_records_by_index() -> None:
    """Wrapper: ``original`` and ``enrichment`` records by index, null past the shorter side."""
    runner = json_runner()
    runner.enqueue(b'[{"id": 1}, {"id": 2}]', ORIGINAL)
    runner.enqueue(b'[{"name": "a"}]', ENRICHMENT)
    runner.run()
    runner.assert_transfer_count("joined", 1)
    joined = runner.flowfiles_for("joined")[0]
    joined.assert_content_equals(
        '{"original":{"id":1},"enrichment":{"name":"a"}}\n{"original":{"id":2},"enrichment":null}'
    )
    joined.assert_attribute_equals("record.count", "2")


def test_insert_enrichment_fields_at_root() -> None:
    """Insert Enrichment Fields at ``/``: the enrichment's fields join each original record."""
    runner = json_runner(join_strategy="Insert Enrichment Fields")
    runner.enqueue(b'[{"id": 1, "v": "o1"}, {"id": 2, "v": "o2"}, {"id": 3, "v": "o3"}]', ORIGINAL)
    runner.enqueue(b'[{"v": "e1", "extra": true}, {"v": "e2", "extra": false}]', ENRICHMENT)
    runner.run()
    runner.flowfiles_for("joined")[0].assert_content_equals(
        '{"id":1,"v":"e1","extra":true}\n{"id":2,"v":"e2","extra":false}\n'
        '{"id":3,"v":"o3","extra":null}'
    )


INSERT_ORIGINAL = json.dumps(
    [
        {"purchase": {"id": 1, "customer": {"id": 48202, "name": "John Doe"}}},
        {"purchase": {"id": 2, "customer": {"id": 5512, "name": "Jane Doe"}}},
    ]
).encode()


def test_insert_enrichment_fields() -> None:
    """NiFi's testInsertEnrichmentFields: fields set into /purchase/customer, by index."""
    runner = json_runner(
        join_strategy="Insert Enrichment Fields", insertion_record_path="/purchase/customer"
    )
    runner.enqueue(INSERT_ORIGINAL, ORIGINAL)
    enrichment = [
        {"customerDetails": {"id": 48202, "phone": "555-555-5555",
                             "email": "john.doe@nifi.apache.org"}},
        {"customerDetails": {"id": 5512, "phone": "555-555-5511",
                             "email": "jane.doe@nifi.apache.org"}},
    ]  # fmt: skip
    runner.enqueue(json.dumps(enrichment).encode(), ENRICHMENT)
    runner.run()
    runner.assert_transfer_count("joined", 1)
    assert runner.auto_terminated_count("original") == 2  # auto-terminated by default
    out = [json.loads(line) for line in runner.flowfiles_for("joined")[0].content.splitlines()]
    assert len(out) == 2
    assert out[0]["purchase"]["customer"]["customerDetails"] == enrichment[0]["customerDetails"]
    assert out[1]["purchase"]["customer"]["customerDetails"] == enrichment[1]["customerDetails"]
    assert out[1]["purchase"]["customer"]["name"] == "Jane Doe"


def test_first_enrichment_record_null() -> None:
    """NiFi's testFirstEnrichmentRecordNull: a null first value still enriches later ones."""
    runner = json_runner(
        join_strategy="Insert Enrichment Fields", insertion_record_path="/purchase/customer"
    )
    runner.enqueue(INSERT_ORIGINAL, ORIGINAL)
    enrichment = [
        {"customerDetails": None},
        {"customerDetails": {"id": 5512, "phone": "555-555-5511",
                             "email": "jane.doe@nifi.apache.org"}},
    ]  # fmt: skip
    runner.enqueue(json.dumps(enrichment).encode(), ENRICHMENT)
    runner.run()
    out = [json.loads(line) for line in runner.flowfiles_for("joined")[0].content.splitlines()]
    assert out[0]["purchase"]["customer"]["customerDetails"] is None
    assert out[1]["purchase"]["customer"]["customerDetails"]["phone"] == "555-555-5511"


def test_timeout_routes_the_lone_flowfile() -> None:
    """A FlowFile whose partner does not come within Timeout goes to ``timeout``."""
    runner = csv_runner(timeout="5 sec")
    runner.enqueue(b"id\n5", ORIGINAL)
    runner.run(1, stop_on_finish=False)
    runner.assert_transfer_count("timeout", 0)
    runner.advance_time(6)
    runner.run()
    runner.assert_all_flowfiles_transferred("timeout", 1)


def test_two_of_one_role_fail() -> None:
    """Two FlowFiles of a group without an original and an enrichment go to failure."""
    runner = csv_runner()
    runner.enqueue(b"id\n5", ORIGINAL)
    runner.enqueue(b"id\n6", ORIGINAL)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)


def test_unparseable_records_fail_both() -> None:
    """Records that do not parse send both FlowFiles to failure, and no joined one."""
    runner = json_runner()
    runner.enqueue(b'[{"id": 1}', ORIGINAL)
    runner.enqueue(b'[{"name": "a"}]', ENRICHMENT)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)


def test_fork_then_join() -> None:
    """ForkEnrichment's two outputs join back (Wrapper of the same records)."""
    fork = TestRunner(ForkEnrichment())
    fork.enqueue(b'[{"id": 1}]')
    fork.run()
    join = json_runner()
    for relationship in ("original", "enrichment"):
        out = fork.flowfiles_for(relationship)[0]
        join.enqueue(out.content, dict(out.attributes))
    join.run()
    join.flowfiles_for("joined")[0].assert_content_equals(
        '{"original":{"id":1},"enrichment":{"id":1}}'
    )


def test_nifi_properties() -> None:
    """NiFi's property names, defaults and relationships."""
    processor = JoinEnrichment()
    values = processor.effective_values()
    assert values["Join Strategy"] == "Wrapper"
    assert values["Timeout"] == "10 min"
    assert values["Maximum Number of Bins"] == "10000"
    assert values["Insertion Record Path"] == "/"
    assert values["SQL"].startswith("SELECT original.*, enrichment.*")
    assert processor.relationship_names() == ("joined", "original", "timeout", "failure")
    assert next(r for r in processor.relationships if r.name == "original").auto_terminated


def test_fork_lookup_join_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> ForkEnrichment -> (LookupRecord on the enrichment) -> JoinEnrichment -> PutFile.

    The direct runner bins the two FlowFiles by group id and joins them; the lookup service
    adds each person's sport on the enrichment path, the SQL join puts it beside the original.
    """
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "people.csv").write_bytes(b"id,name\n1,John Doe\n2,Jane Doe\n")
    flow = Flow("enrich")
    reader = flow.add_service(
        CSVReader(
            "csv", treat_first_line_as_header="true", schema_access_strategy="csv-header-derived"
        )
    )
    writer = flow.add_service(CSVRecordSetWriter("out"))
    sports = flow.add_service(
        SimpleKeyValueLookupService("sports", **{"John Doe": "Soccer", "Jane Doe": "Chess"})
    )
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    fork = flow.add(ForkEnrichment(), name="fork")
    lookup = flow.add(
        LookupRecord(
            record_reader=reader,
            record_writer=writer,
            lookup_service=sports,
            result_recordpath="/sport",
            key="/name",
        ),
        name="lookup",
    )
    join = flow.add(
        JoinEnrichment(
            original_record_reader=reader,
            enrichment_record_reader=reader,
            record_writer=writer,
            join_strategy="SQL",
            sql="SELECT o.id, o.name, e.sport FROM original o JOIN enrichment e ON o.id = e.id "
            "ORDER BY o.id",
        ),
        name="join",
    )
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, fork)
    flow.connect(fork, join, "original")
    flow.connect(fork, lookup, "enrichment")
    flow.connect(lookup, join, "success")
    flow.connect(join, put, "joined")
    flow.auto_terminate(lookup, "failure")
    flow.auto_terminate(join, ["timeout", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("join", "joined") == 1
    assert (tmp_path / "out" / "people.csv").read_bytes() == (
        b"id,name,sport\n1,John Doe,Soccer\n2,Jane Doe,Chess\n"
    )


def test_sql_result_the_writer_refuses_fails_with_the_writers_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A joined row the Record Writer cannot write fails both FlowFiles with the writer's
    message (the join's DuckDB connection is closed, never left with an open result)."""
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "n", "type": "int"}]})
    runner = TestRunner(
        JoinEnrichment(
            original_record_reader="reader",
            enrichment_record_reader="reader",
            record_writer="writer",
            join_strategy="SQL",
            sql="SELECT original.n FROM original JOIN enrichment ON original.id = enrichment.id",
        )
    )
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(
        AvroRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text=schema
        )
    )
    runner.enqueue(b"id,n\n5,abc\n", ORIGINAL)
    runner.enqueue(b"id,name\n5,John\n", ENRICHMENT)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)
    assert "NiFi does not convert 'abc' to the writer's type INT" in caplog.text
    assert "open result" not in caplog.text


def test_sql_join_keeps_a_repeated_choice_column_and_writes_made_json_as_text() -> None:
    """A CHOICE column selected from both sides is a CHOICE under both names (v, v0); JSON the
    query makes beside them (to_json) is its text."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.v, enrichment.v, to_json(enrichment) AS j FROM original "
        "JOIN enrichment ON original.id = enrichment.id ORDER BY original.id",
    )
    runner.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    runner.set_property("Record Writer", "json")
    runner.add_service(CSVReader("inferring", treat_first_line_as_header="true"))
    runner.set_property("Original Record Reader", "inferring")
    runner.set_property("Enrichment Record Reader", "inferring")
    runner.enqueue(b"id,v\n5,1\n6,abc\n", ORIGINAL)
    runner.enqueue(b"id,v\n5,x\n6,2\n", ENRICHMENT)
    runner.run()
    runner.flowfiles_for("joined")[0].assert_content_equals(
        '{"v":1,"v0":"x","j":"{\\"id\\":5,\\"v\\":\\"x\\"}"}\n'
        '{"v":"abc","v0":2,"j":"{\\"id\\":6,\\"v\\":2}"}'
    )


def test_sql_join_keeps_a_choice_and_divides_integers_as_calcite() -> None:
    """The SQL join writes a CHOICE column (CSV: INT and STRING) as its values and divides
    INT columns as integers, as QueryRecord does."""
    runner = csv_runner(
        join_strategy="SQL",
        sql="SELECT original.v, enrichment.name, original.p / 2 AS h FROM original "
        "JOIN enrichment ON original.id = enrichment.id ORDER BY original.id",
    )
    runner.add_service(JsonRecordSetWriter("json"))
    runner.set_property("Record Writer", "json")
    runner.add_service(CSVReader("inferring", treat_first_line_as_header="true"))
    runner.set_property("Original Record Reader", "inferring")
    runner.enqueue(b"id,v,p\n5,1,3\n6,abc,5\n", ORIGINAL)
    runner.enqueue(b"id,name\n5,John\n6,Jane\n", ENRICHMENT)
    runner.run()
    runner.flowfiles_for("joined")[0].assert_content_equals(
        '[{"v":1,"name":"John","h":1},{"v":"abc","name":"Jane","h":2}]'
    )
