"""Tests for QueryRecord, ported from NiFi's TestQueryRecord (CSV/JSON services for its mocks)."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import duckdb
import fastavro
import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutFile, QueryRecord, query_record
from processors.record_services import (
    AvroReader,
    AvroRecordSetWriter,
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
)

POINTS = b"name,points\nTom,1\nJerry,2\nTom,99\n"
QUERY_ALL = "SELECT * FROM FLOWFILE"


def query(
    content: bytes = POINTS, *, reader: object = None, writer: object = None, **properties: str
) -> TestRunner:
    """A QueryRecord runner that has run *properties*' queries over *content*."""
    runner = TestRunner(QueryRecord(record_reader="reader", record_writer="writer", **properties))
    runner.add_service(reader or CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(writer or CSVRecordSetWriter("writer", quote_mode="ALL"))
    runner.enqueue(content)
    runner.run()
    return runner


def test_aggregate_function() -> None:
    """NiFi's testAggregateFunction: GROUP BY and ORDER BY, byte for byte."""
    runner = query(
        success="select name, sum(points) as points from FLOWFILE GROUP BY name "
        "ORDER BY points DESC"
    )
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("QueryRecord.Route", "success")
    out.assert_content_equals('"name","points"\n"Tom","100"\n"Jerry","2"\n')
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("QueryRecord.Route", "original")
    original.assert_content_equals(POINTS)


def test_null_value_in_single_field() -> None:
    """NiFi's testNullValueInSingleField: two queries, two relationships, nulls kept."""
    content = b"name,points\nTom,1\nJerry,\nTom,\nJerry,3\n"
    runner = query(
        content,
        writer=CSVRecordSetWriter("writer", include_header_line="false"),
        success="select points from FLOWFILE",
        count="select count(*) as c from flowfile where points is null",
    )
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("count", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("1\n\n\n3\n")
    count = runner.flowfiles_for("count")[0]
    count.assert_attribute_equals("QueryRecord.Route", "count")
    count.assert_content_equals("2\n")
    fork = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.FORK]
    assert len(fork) == 1
    assert len(fork[0].child_uuids) == 2


def test_no_records_input() -> None:
    """NiFi's testNoRecordsInput: a header and no rows still has its columns to query."""
    runner = query(
        b"name,age\n",
        success="select name from FLOWFILE WHERE age > 23",
        include_zero_record_flowfiles="true",
    )
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals('"name"\n')
    out.assert_attribute_equals("record.count", "0")


def test_zero_record_results_dropped_when_asked() -> None:
    """Include Zero Record FlowFiles false: an empty result makes no FlowFile."""
    runner = query(
        include_zero_record_flowfiles="false",
        none="select * from FLOWFILE where points > 1000",
        some="select * from FLOWFILE where points > 1",
    )
    runner.assert_transfer_count("none", 0)
    runner.assert_transfer_count("some", 1)
    runner.flowfiles_for("some")[0].assert_attribute_equals("record.count", "2")


def test_handling_with_invalid_schema() -> None:
    """NiFi's testHandlingWithInvalidSchema: a failing query fails the original, no results."""
    content = b"name,favorite_color,address\nTom,blue,\nJerry,red,\n"
    runner = query(
        content,
        include_zero_record_flowfiles="false",
        rel1="select * from FLOWFILE where address IS NOT NULL",
        rel2="select name, CAST(favorite_color AS DOUBLE) AS num from FLOWFILE",
        rel3="select * from FLOWFILE where address IS NOT NULL",
    )
    runner.assert_all_flowfiles_transferred("failure", 1)
    failed = runner.flowfiles_for("failure")[0]
    failed.assert_attribute_equals("QueryRecord.Route", "failure")
    failed.assert_content_equals(content)


def test_unknown_column_fails() -> None:
    """A query naming a column the records lack sends the original to failure."""
    runner = query(success="select nope from FLOWFILE")
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_returns_no_result_with_array_column() -> None:
    """NiFi's testReturnsNoResultWithArrayColumn: an empty JSON result is '[]'."""
    runner = query(
        b'{"status": "starting","myArray": [{"foo": "foo"}]}',
        reader=JsonTreeReader("reader"),
        writer=JsonRecordSetWriter("writer"),
        success="SELECT * from FLOWFILE WHERE status = 'failure'",
        include_zero_record_flowfiles="true",
    )
    runner.assert_transfer_count("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("[]")


def test_subquery_over_the_same_table() -> None:
    """NiFi's testRecordPathInAggregate without RPATH: a subquery reads FLOWFILE again."""
    rows = b"name,age\n" + b"".join(b"Person %d,%d\n" % (i, i) for i in range(100))
    runner = query(
        rows,
        writer=JsonRecordSetWriter("writer"),
        success="SELECT name FROM FLOWFILE WHERE age > (SELECT AVG(age) FROM FLOWFILE)",
    )
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "50")


def test_validation() -> None:
    """No query, or SQL that does not parse, is invalid; a query with EL is checked per FlowFile."""
    assert QueryRecord(record_reader="r", record_writer="w").validate()
    problems = QueryRecord(record_reader="r", record_writer="w", bad="selec * FROM").validate()
    assert [p.subject for p in problems if p.subject == "bad"] == ["bad"]
    runner = query(success="select * from FLOWFILE where name = '${who}'")
    runner.assert_transfer_count("success", 1)


def test_queries_route_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> QueryRecord -> PutFile on the direct runner: a query's relationship connects."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "points.csv").write_bytes(POINTS)
    flow = Flow("query")
    reader = flow.add_service(CSVReader("csv", treat_first_line_as_header="true"))
    writer = flow.add_service(JsonRecordSetWriter("json"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    query_ = flow.add(
        QueryRecord(
            record_reader=reader,
            record_writer=writer,
            toms="select points from FLOWFILE where name = 'Tom' order by points",
        ),
        name="query",
    )
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, query_)
    flow.connect(query_, put, "toms")
    flow.auto_terminate(query_, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("query", "toms") == 1
    assert (tmp_path / "out" / "points.csv").read_bytes() == b'[{"points":1},{"points":99}]'


def test_queries_give_the_same_results_over_the_table_and_over_the_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small FlowFile's records are read once into a table all its queries share; a large
    one's are streamed to each query (a self-join re-reads them): the results are the same."""
    queries = {
        "big": "select name, points from FLOWFILE where points > 1 order by points",
        "twice": "select a.name, count(*) as n from FLOWFILE a join FLOWFILE b "
        "on a.name = b.name group by a.name order by a.name",
    }
    results = []
    for table_bytes in (query_record.TABLE_BYTES, 0):
        monkeypatch.setattr(query_record, "TABLE_BYTES", table_bytes)
        runner = query(**queries)
        runner.assert_transfer_count("big", 1)
        runner.assert_transfer_count("twice", 1)
        results.append({n: runner.flowfiles_for(n)[0].content for n in queries})
    assert results[0] == results[1]
    assert results[0]["big"] == b'"name","points"\n"Jerry","2"\n"Tom","99"\n'
    assert results[0]["twice"] == b'"name","n"\n"Jerry","1"\n"Tom","4"\n'


def test_the_duckdb_connections_close_when_the_processor_stops() -> None:
    """Each thread's connection lives across triggers and is closed by on_stopped."""
    runner = TestRunner(QueryRecord(record_reader="reader", record_writer="writer", q=QUERY_ALL))
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue(POINTS)
    runner.enqueue(POINTS)
    runner.run(2, stop_on_finish=False)
    processor = runner.processor
    connections = processor._duck()
    assert len(connections) == 1
    connection = connections.get()  # this thread's, the one both triggers used
    assert pickle.loads(pickle.dumps(processor))._duck() is not connections
    runner.stop()
    assert len(connections) == 0
    with pytest.raises(duckdb.ConnectionException):
        connection.execute("SELECT 1")


def json_query(content: bytes, **properties: str) -> TestRunner:
    """A QueryRecord runner reading and writing JSON that has run *properties*' queries."""
    writer = JsonRecordSetWriter("writer", output_grouping="output-oneline")
    return query(content, reader=JsonTreeReader("reader"), writer=writer, **properties)


def test_select_order_respected() -> None:
    """NiFi's testSelectOrderRespected: the output fields come in the SELECT's order."""
    record = b'{"ArticleCode": "12345", "ProductCode": "10101", "ArticleName": "Credit Card",'
    record += b' "ProductName": "Porduct Credit", "Country": "RO"}'
    runner = json_query(
        record,
        rel="SELECT ArticleCode, ArticleName, ProductCode, ProductName, Country FROM FLOWFILE",
    )
    runner.assert_transfer_count("rel", 1)
    runner.flowfiles_for("rel")[0].assert_content_equals(
        '{"ArticleCode":"12345","ArticleName":"Credit Card","ProductCode":"10101",'
        '"ProductName":"Porduct Credit","Country":"RO"}'
    )


def test_union_all_with_projection() -> None:
    """NiFi's testUnionAllWithProjection: two projections of one record, literals and a null."""
    record = (
        b'{"employeeId": "1234", "email": "xxx.yyyy@zzzz.com", "englishTrainingTime": 114828,'
        b' "englishLastOverallProficiencyLevel": "B2.1", "frenchTrainingTime": 406,'
        b' "frenchLastOverallProficiencyLevel": null}'
    )
    sql = """
        (SELECT employeeId, email, 'en' AS lovCode,
                CAST(englishTrainingTime AS INTEGER) AS timeSpent,
                englishLastOverallProficiencyLevel AS proficiencyLevel
         FROM FLOWFILE WHERE CAST(englishTrainingTime AS INTEGER) <> 0)
        UNION ALL
        (SELECT employeeId, email, 'fr' AS lovCode,
                CAST(frenchTrainingTime AS INTEGER) AS timeSpent,
                frenchLastOverallProficiencyLevel AS proficiencyLevel
         FROM FLOWFILE WHERE CAST(frenchTrainingTime AS INTEGER) <> 0)
    """
    runner = json_query(record, rel=sql)
    runner.assert_transfer_count("rel", 1)
    out = runner.flowfiles_for("rel")[0]
    out.assert_attribute_equals("record.count", "2")
    lines = sorted(out.content.decode().splitlines())
    assert lines == [
        '{"employeeId":"1234","email":"xxx.yyyy@zzzz.com","lovCode":"en","timeSpent":114828,'
        '"proficiencyLevel":"B2.1"}',
        '{"employeeId":"1234","email":"xxx.yyyy@zzzz.com","lovCode":"fr","timeSpent":406,'
        '"proficiencyLevel":null}',
    ]


def test_transform_calc() -> None:
    """NiFi's testTransformCalc: FLOAT columns summed in a projection, filtered by id."""
    schema = """{"type": "record", "name": "r", "fields": [
        {"name": "ID", "type": "int"}, {"name": "AMOUNT1", "type": "float"},
        {"name": "AMOUNT2", "type": "float"}, {"name": "AMOUNT3", "type": "float"}]}"""
    reader = CSVReader(
        "reader",
        schema_access_strategy="schema-text-property",
        schema_text=schema,
        treat_first_line_as_header="true",
    )
    content = (
        b"ID,AMOUNT1,AMOUNT2,AMOUNT3\n8,10.05,15.45,89.99\n100,20.25,25.25,45.25\n"
        b"105,20.05,25.05,45.05\n200,34.05,25.05,75.05\n"
    )
    runner = query(
        content,
        reader=reader,
        rel="select ID, AMOUNT1+AMOUNT2+AMOUNT3 as TOTAL from FLOWFILE where ID=100",
    )
    runner.assert_transfer_count("rel", 1)
    out = runner.flowfiles_for("rel")[0]
    out.assert_attribute_equals("QueryRecord.Route", "rel")
    out.assert_content_equals('"ID","TOTAL"\n"100","90.75"\n')


def test_bad_data_routes_the_original_to_failure() -> None:
    """NiFi's testStreamClosedWhenBadData: a reader that fails on the first record fails the
    original, and no relationship gets a result."""
    runner = query(
        b'{"name": "Tom", "age": 49',
        reader=JsonTreeReader("reader"),
        rel="select name, age from FLOWFILE WHERE name <> ''",
    )
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(b'{"name": "Tom", "age": 49')


def test_column_names() -> None:
    """NiFi's testColumnNames: ``*`` then an alias gives the fields in order, the alias last."""
    runner = query(success="select *, name AS FAV_NAME from FLOWFILE")
    runner.assert_transfer_count("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        '"name","points","FAV_NAME"\n"Tom","1","Tom"\n"Jerry","2","Jerry"\n"Tom","99","Tom"\n'
    )


def test_nullable() -> None:
    """NiFi's testNullable: null values in either column come through as nulls."""
    runner = json_query(
        b'[{"name": "Tom", "age": 49}, {"name": "Alice", "age": null}, {"name": null, "age": 36}]',
        success="select name, age from FLOWFILE",
    )
    runner.assert_transfer_count("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        '{"name":"Tom","age":49}\n{"name":"Alice","age":null}\n{"name":null,"age":36}'
    )


def test_simple() -> None:
    """NiFi's testSimple and testParseFailure: one FlowFile, run twice, one result."""
    runner = TestRunner(
        QueryRecord(
            record_reader="reader",
            record_writer="writer",
            success="select name, age from FLOWFILE WHERE name <> ''",
        )
    )
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer", quote_mode="ALL"))
    runner.enqueue(b"name,age\nTom,49\n")
    runner.run(2)
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("QueryRecord.Route", "success")
    out.assert_content_equals('"name","age"\n"Tom","49"\n')


def test_a_result_the_writer_refuses_fails_with_the_writers_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A row the Record Writer cannot write fails the FlowFile with the writer's message (not
    DuckDB's open-result error), and the next FlowFile's query runs on the same connection."""
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "n", "type": "int"}]})
    runner = TestRunner(
        QueryRecord(record_reader="reader", record_writer="writer", q="SELECT n FROM FLOWFILE")
    )
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(
        AvroRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text=schema
        )
    )
    runner.enqueue(b"n\nabc\n")
    runner.enqueue(b"n\n5\n")
    runner.run(2)
    runner.assert_transfer_count("failure", 1)
    runner.assert_transfer_count("q", 1)
    assert "NiFi does not convert 'abc' to the writer's type INT" in caplog.text
    assert "open result" not in caplog.text


@pytest.mark.xfail(
    strict=True,
    reason="the AvroReader gives a value of a union of fixed types as a list of byte values, "
    "which the AvroRecordSetWriter refuses for that union (a record-services gap, not SQL)",
)
def test_avro_union_fixed_sizes_uses_matching_fixed_size() -> None:
    """NiFi's testAvroUnionFixedSizesUsesMatchingFixedSize: an 8-byte fixed in a union of a
    4- and an 8-byte fixed comes through SELECT * as 8 bytes."""
    schema = {
        "type": "record",
        "name": "Foo",
        "fields": [
            {
                "name": "bar",
                "type": [
                    {"type": "fixed", "name": "Bytes4", "size": 4},
                    {"type": "fixed", "name": "Bytes8", "size": 8},
                ],
            }
        ],
    }
    content = io.BytesIO()
    fastavro.writer(content, fastavro.parse_schema(schema), [{"bar": ("Bytes8", bytes(range(8)))}])
    text = json.dumps(schema)
    runner = query(
        content.getvalue(),
        reader=AvroReader(
            "reader", schema_access_strategy="schema-text-property", schema_text=text
        ),
        writer=AvroRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text=text
        ),
        success=QUERY_ALL,
    )
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0].content
    assert [r["bar"] for r in fastavro.reader(io.BytesIO(out))] == [bytes(range(8))]


def test_integer_arithmetic_is_calcites() -> None:
    """INT columns divide as integers (truncated toward zero) and AVG of an INT is an INT, as
    in Calcite; a DOUBLE operand divides exactly."""
    runner = query(
        b"points\n1\n2\n4\n-7\n",
        writer=JsonRecordSetWriter("writer", output_grouping="output-oneline"),
        half="SELECT points / 2 AS h, points / 2.0 AS d FROM FLOWFILE",
        mean="SELECT AVG(points) AS m, AVG(CAST(points AS DOUBLE)) AS md FROM FLOWFILE "
        "WHERE points > 0",
    )
    runner.flowfiles_for("half")[0].assert_content_equals(
        '{"h":0,"d":0.5}\n{"h":1,"d":1.0}\n{"h":2,"d":2.0}\n{"h":-3,"d":-3.5}'
    )
    runner.flowfiles_for("mean")[0].assert_content_equals('{"m":2,"md":2.3333333333333335}')


def test_migrate_properties() -> None:
    """NiFi's testMigrateProperties: the old names (record-reader, record-writer,
    include-zero-record-flowfiles, dbf-default-precision/scale) set the new properties, and
    cache-schema (removed in NiFi 2; a no-op property here) is no query."""
    processor = QueryRecord(
        **{
            "record-reader": "r",
            "record-writer": "w",
            "include-zero-record-flowfiles": "false",
            "dbf-default-precision": "12",
            "dbf-default-scale": "3",
            "cache-schema": "false",
            "q": QUERY_ALL,
        }
    )
    values = [
        processor.effective_value(d)
        for d in (
            query_record.RECORD_READER,
            query_record.RECORD_WRITER,
            query_record.INCLUDE_ZERO_RECORD_FLOWFILES,
            QueryRecord.DEFAULT_PRECISION,
            QueryRecord.DEFAULT_SCALE,
        )
    ]
    assert values == ["r", "w", "false", "12", "3"]
    assert dict(processor.dynamic_properties) == {"q": QUERY_ALL}
    assert [r.name for r in processor.get_relationships()] == ["original", "failure", "q"]


def test_microseconds_pass_through_duckdb() -> None:
    """A TIMESTAMP read with a SSSSSS format keeps its microseconds through DuckDB's SQL
    (comparisons and ordering see them) to a writer of the same format."""
    micros = "yyyy-MM-dd HH:mm:ss.SSSSSS"
    runner = query(
        b"id,stamp\n1,2024-02-06 11:51:28.351567\n2,2024-02-06 11:51:28.351000\n",
        reader=CSVReader("reader", treat_first_line_as_header="true", timestamp_format=micros),
        writer=CSVRecordSetWriter("writer", timestamp_format=micros),
        success="select id, stamp from FLOWFILE "
        "where stamp > timestamp '2024-02-06 11:51:28.351' order by stamp desc",
    )
    runner.flowfiles_for("success")[0].assert_content_equals(
        "id,stamp\n1,2024-02-06 11:51:28.351567\n"
    )
