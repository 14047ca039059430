"""PutDatabaseRecord's per-record statements: the SQL type, record paths, pre/post SQL."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import InvalidProcessorError, ProcessException
from flowcore.testing import TestRunner
from processors.sql.record_sql import rebatch
from tests.processors.sql.put_runners import PERSONS, pg_persons, put_runner


def _sql_runner(postgres, content: bytes, **props: str) -> TestRunner:
    """NiFi's SQL-type setup: Use statement.type Attribute, Field Containing SQL 'sql'."""
    runner = pg_persons(
        postgres,
        PERSONS,
        **{
            "Statement Type": "Use statement.type Attribute",
            "Field Containing SQL": "sql",
            **props,
        },
    )
    runner.enqueue(content, {"statement.type": "sql"})
    return runner


def _sql_records(*statements: str) -> bytes:
    return json.dumps([{"sql": s} for s in statements]).encode()


_INSERT_1 = "INSERT INTO persons (id, name, code) VALUES (1, 'rec1',101)"


_INSERT_2 = "INSERT INTO persons (id, name, code) VALUES (2, 'rec2',102)"


def test_insert_via_sql_type(postgres) -> None:
    """NiFi's testInsertViaSqlTypeOneStatement: statement.type SQL runs a record's field as it
    is (a literal % is the SQL's own); SQL is no Statement Type value (NiFi's: attribute only)."""
    runner = _sql_runner(
        postgres, _sql_records("INSERT INTO persons (id, name, code) VALUES (1, '100%', 101)")
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "100%", 101)]
    assert [e.event_type.value for e in runner.provenance_events] == ["SEND"]
    with pytest.raises(InvalidProcessorError, match="Statement Type"):
        pg_persons(
            postgres, PERSONS, **{"Statement Type": "SQL", "Field Containing SQL": "sql"}
        ).run()


@pytest.mark.parametrize(
    ("statements", "multiple", "rows"),
    [
        ((_INSERT_1, _INSERT_2 + ";"), "true", [(1, "rec1", 101), (2, "rec2", 102)]),
        (
            (_INSERT_1, _INSERT_2, "UPDATE persons SET code = 101 WHERE id = 1"),
            "false",
            [(1, "rec1", 101), (2, "rec2", 102)],
        ),
        ((f"{_INSERT_1};{_INSERT_2};",), "true", [(1, "rec1", 101), (2, "rec2", 102)]),
    ],
    ids=["two-records-semicolon", "three-records", "one-record-two-statements"],
)
def test_insert_via_sql_type_statements(postgres, statements, multiple, rows) -> None:
    """NiFi's testInsertViaSqlTypeTwoStatementsSemicolon, ...ThreeStatements and
    testMultipleInsertsForTwoStatementsViaSqlStatementType: a record per statement, or one
    record's statements split on ';' with Allow Multiple SQL Statements."""
    runner = _sql_runner(
        postgres, _sql_records(*statements), **{"Allow Multiple SQL Statements": multiple}
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == rows


def test_multiple_inserts_via_sql_statement_type_bad_sql(postgres) -> None:
    """NiFi's testMultipleInsertsViaSqlStatementTypeBadSQL: a bad third statement fails the
    FlowFile and rolls back the two before it; the error names the missing table."""
    bad = "INSERT INTO persons2 (id, name, code) VALUES (2, 'rec2',102)"
    runner = _sql_runner(
        postgres,
        _sql_records(f"{_INSERT_1};{_INSERT_2};{bad};"),
        **{"Allow Multiple SQL Statements": "true"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "persons2" in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert postgres.execute("select count(*) from persons") == [(0,)]


def test_sql_statement_type_no_value(postgres) -> None:
    """NiFi's testSqlStatementTypeNoValue and ...RollbackOnFailure: an empty or null SQL
    field fails the FlowFile with NiFi's message (queued again with Rollback On Failure); a
    schema without the field, or no Field Containing SQL, fails naming what to set."""
    for content in (_sql_records(""), b'[{"sql": null}]'):
        runner = _sql_runner(postgres, content)
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
        assert "Record had no (or null) value for Field Containing SQL: sql" in error
    runner = _sql_runner(postgres, _sql_records(""), **{"Rollback On Failure": "true"})
    with pytest.raises(ProcessException, match="Field Containing SQL"):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    runner = _sql_runner(postgres, b'[{"statement": "select 1"}]')
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Record schema does not contain Field Containing SQL: sql" in error
    runner = _sql_runner(
        postgres, _sql_records(_INSERT_1), **{"Field Containing SQL": "${no.such.attribute}"}
    )
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "no Field Containing SQL was found" in error


def test_record_path_options(postgres) -> None:
    """NiFi's testRecordPathOptions: Use Record Path takes each record's statement type
    (INSERT, DELETE, UPDATE and Debezium's c, u) and Data Record Path the record written, in
    the records' order."""
    runner = pg_persons(
        postgres,
        "id integer, name varchar(100), code integer",
        **{
            "Statement Type": "Use Record Path",
            "Statement Type Record Path": "/operation",
            "Data Record Path": "/data",
            "Update Keys": "id",
        },
    )
    records = [
        ("INSERT", 1, "John Doe", 55),
        ("INSERT", 2, "Jane Doe", 44),
        ("c", 3, "Jim Doe", 2),
        ("DELETE", 2, "Jane Doe", 44),
        ("UPDATE", 1, "John Doe", 201),
        ("u", 3, "Jim Doe", 20),
    ]
    runner.enqueue(
        json.dumps(
            [{"operation": o, "data": {"id": i, "name": n, "code": c}} for o, i, n, c in records]
        ).encode()
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        (1, "John Doe", 201),
        (3, "Jim Doe", 20),
    ]


def test_data_record_path_records_of_different_shapes(postgres) -> None:
    """Data records of different shapes keep their own fields: each is written with its own
    schema (NiFi's), not the first one's (which dropped the second's 'code')."""
    runner = pg_persons(postgres, PERSONS, **{"Data Record Path": "/*"})
    runner.enqueue(
        b'[{"a": {"id": 1, "name": "x"}, "b": {"id": 2, "code": 5}},'
        b' {"a": {"id": 3, "name": "y"}, "b": {"id": 4, "code": 6}}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        (1, "x", None),
        (2, None, 5),
        (3, "y", None),
        (4, None, 6),
    ]


def test_record_path_errors(postgres) -> None:
    """NiFi's RecordPathStatementType and getDataRecords messages: an unknown operation, a
    Data Record Path selecting nothing or no record fail the FlowFile, nothing written."""
    props = {"Statement Type": "Use Record Path", "Statement Type Record Path": "/op"}
    cases = [
        (b'[{"op": "c", "id": 1}, {"op": "MERGE", "id": 2}]', {}, "found invalid value: MERGE"),
        (b'[{"id": 1}]', {}, "found invalid value: NULL"),
        (
            b'[{"op": "c", "id": 1}]',
            {"Statement Type Record Path": "/op[. = 'x']"},
            "against Record but got no results",
        ),
        (b'[{"op": "c", "data": 5}]', {"Data Record Path": "/data"}, "expected to return one"),
        (b'[{"op": "c", "x": 5}]', {"Data Record Path": "/data"}, "yielded no results"),
    ]
    for content, extra, message in cases:
        runner = pg_persons(postgres, PERSONS, **{**props, **extra})
        runner.enqueue(content)
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        assert message in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
        assert postgres.execute("select count(*) from persons") == [(0,)]


def test_pre_post_processing_sql(postgres) -> None:
    """NiFi's testPrePostProcessingSql and testPreProcessingSqlFailure: Pre-Processing SQL
    runs first in the FlowFile's transaction (the table it creates is written), Post-
    Processing SQL last; a failing one fails the FlowFile naming the property."""
    postgres.execute("drop table if exists persons")
    postgres.execute("drop table if exists audit")
    runner = put_runner(
        postgres.jdbc_url,
        user="postgres",
        **{
            "Table Name": "persons",
            "Pre-Processing SQL": f"CREATE TABLE persons ({PERSONS}); CREATE TABLE audit (n int)",
            "Post-Processing SQL": "INSERT INTO audit SELECT count(*) FROM persons",
        },
    )
    runner.enqueue(b'[{"id": 1, "name": "testing"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "testing", None)]
    assert postgres.execute("select n from audit") == [(1,)]
    runner = put_runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Table Name": "persons", "Pre-Processing SQL": "DROP TABLE unknown"},
    )
    runner.enqueue(b'[{"id": 2, "name": "two"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Failed to execute Pre-Processing SQL Statement [DROP TABLE unknown]" in error
    assert postgres.execute("select count(*) from persons") == [(1,)]


@given(
    st.lists(st.integers(min_value=0, max_value=12), max_size=8),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=8),
)
def test_rebatch_fills_batches_across_chunks(chunks: list[int], size: int, switch: int) -> None:
    """rebatch: rows in order, every batch *size* rows but the last before a schema change or
    the end (NiFi's Maximum Batch Size spans the reader's chunks); 0 keeps the chunks."""
    batches = []
    start = 0
    for index, rows in enumerate(chunks):
        kind = pa.int64() if index < switch else pa.int32()  # a schema change part way
        batches.append(pa.record_batch({"id": pa.array(range(start, start + rows), kind)}))
        start += rows
    out = list(rebatch(batches, size))
    assert [v for b in out for v in b.column("id").to_pylist()] == list(range(start))
    if size == 0:
        assert out == batches
        return
    for schema in {b.schema for b in batches}:
        sizes = [b.num_rows for b in out if b.schema == schema]
        expected = sum(b.num_rows for b in batches if b.schema == schema)
        full, rest = divmod(expected, size)
        assert sizes == [size] * full + ([rest] if rest else [])
