"""PutSQL: statements from content or property, sql.args, fragments in one transaction."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from flowcore.errors import ProcessException
from flowcore.flowfile import FlowFile
from flowcore.session.host import FlowFileFilterResult
from flowcore.testing import TestRunner
from processors.sql.put_sql import PutSQL, _TransactionFilter
from tests.processors.sql.put_sql_runners import pg_runner, sql_args, sqlite_rows, sqlite_runner


def test_direct_statement_and_parameters(tmp_path: Path) -> None:
    """NiFi's testDirectStatements and testInsertWithGeneratedKeys-style parameters."""
    runner, path = sqlite_runner(tmp_path)
    runner.enqueue("INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)")
    runner.enqueue(
        "INSERT INTO PERSONS (ID, NAME, CODE) VALUES (?, ?, ?)",
        {
            "sql.args.1.type": "4",
            "sql.args.1.value": "2",
            "sql.args.2.type": "12",
            "sql.args.2.value": "Jeff",
            "sql.args.3.type": "4",
            "sql.args.3.value": "48",
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sqlite_rows(path) == [(1, "Mark", 84), (2, "Jeff", 48)]
    assert {e.event_type.value for e in runner.provenance_events} == {"SEND"}


@pytest.mark.parametrize("auto_commit", [None, "false"])
def test_direct_statements_and_commit_on_cleanup(tmp_path: Path, auto_commit: str | None) -> None:
    """NiFi's testDirectStatements and testCommitOnCleanup: an INSERT, then an UPDATE in a
    later trigger, each committed (read back through another connection), with Database
    Session AutoCommit left at its default or set to false."""
    props = {"Database Session AutoCommit": auto_commit} if auto_commit else {}
    runner, path = sqlite_runner(tmp_path, **props)
    runner.enqueue("INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sqlite_rows(path) == [(1, "Mark", 84)]
    runner.enqueue("UPDATE PERSONS SET NAME='George' WHERE ID=1")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sqlite_rows(path) == [(1, "George", 84)]


def test_statements_with_prepared_parameters(tmp_path: Path) -> None:
    """NiFi's testStatementsWithPreparedParameters: an INSERT, then an UPDATE, each binding
    its sql.args."""
    runner, path = sqlite_runner(tmp_path)
    runner.enqueue(
        "INSERT INTO PERSONS (ID, NAME, CODE) VALUES (?, ?, ?)",
        sql_args((4, "1"), (12, "Mark"), (4, "84")),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sqlite_rows(path) == [(1, "Mark", 84)]
    runner.clear_transfer_state()
    runner.enqueue("UPDATE PERSONS SET NAME=? WHERE ID=?", sql_args((12, "George"), (4, "1")))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sqlite_rows(path) == [(1, "George", 84)]


def test_failure_and_bad_argument(tmp_path: Path) -> None:
    """Without Support Fragmented Transactions, a duplicate key and an argument that does
    not parse go to failure alone."""
    runner, path = sqlite_runner(tmp_path, **{"Support Fragmented Transactions": "false"})
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (1, 'a')")
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (1, 'b')")
    runner.enqueue(
        "INSERT INTO PERSONS (ID) VALUES (?)", {"sql.args.1.type": "4", "sql.args.1.value": "x"}
    )
    runner.run()
    assert len(runner.flowfiles_for("success")) == 1
    assert len(runner.flowfiles_for("failure")) == 2
    assert sqlite_rows(path) == [(1, "a", None)]


def test_fragments_commit_together_or_not_at_all(tmp_path: Path) -> None:
    """FlowFiles of one fragment.identifier: one transaction, all rolled back on a failure."""
    runner, path = sqlite_runner(tmp_path)
    for index, sql in enumerate(
        [
            "INSERT INTO PERSONS (ID, NAME) VALUES (1, 'a')",
            "INSERT INTO PERSONS (ID, NAME) VALUES (1, 'dup')",
        ]
    ):
        runner.enqueue(
            sql, {"fragment.identifier": "t1", "fragment.count": "2", "fragment.index": str(index)}
        )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)
    assert sqlite_rows(path) == []


def test_incomplete_fragments_wait(tmp_path: Path) -> None:
    """Fragments not all queued stay in the queue."""
    runner, path = sqlite_runner(tmp_path)
    runner.enqueue(
        "INSERT INTO PERSONS (ID) VALUES (5)",
        {"fragment.identifier": "t2", "fragment.count": "2", "fragment.index": "0"},
    )
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert sqlite_rows(path) == []


def test_sql_statement_property(tmp_path: Path) -> None:
    """NiFi's testStatementsFromProperty: SQL Statement (Expression Language) wins over the
    content, an INSERT and then, the property changed, an UPDATE."""
    runner, path = sqlite_runner(
        tmp_path, **{"SQL Statement": "INSERT INTO PERSONS (ID, NAME) VALUES (${id}, 'p')"}
    )
    runner.enqueue("ignored", {"id": "7"})
    runner.run()
    assert sqlite_rows(path) == [(7, "p", None)]
    runner.set_property("SQL Statement", "UPDATE PERSONS SET NAME='George' WHERE ID=${id}")
    runner.enqueue("ignored", {"id": "7"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sqlite_rows(path) == [(7, "George", None)]


def test_nifi_1_property_names_are_accepted() -> None:
    """NiFi's testMigrateProperties: the old internal names set today's properties."""
    renamed = {
        "putsql-sql-statement": ("SQL Statement", "SELECT 1"),
        "database-session-autocommit": ("Database Session AutoCommit", "true"),
        "rollback-on-failure": ("Rollback On Failure", "true"),
    }
    for old, (new, value) in renamed.items():
        processor = PutSQL(**{old: value})
        descriptor = processor.resolve_descriptor(new)
        assert descriptor is not None
        assert processor.effective_value(descriptor) == value, old
        assert not processor.dynamic_properties, old


def test_transactional_flowfile_filter() -> None:
    """NiFi's testTransactionalFlowFileFilter (without a pool's own filter, which flowcore's
    pools have none of): the first FlowFile decides between one fragmented transaction and
    FlowFiles outside any."""
    fragment = {"fragment.identifier": "tx-1", "fragment.count": "3"}
    ff = [
        FlowFile.create(n, 0, attributes)
        for n, attributes in enumerate(
            [
                {**fragment, "fragment.index": "0"},
                {"accept": "false"},
                {**fragment, "fragment.index": "1"},
                {"accept": "true"},
                {**fragment, "fragment.index": "2"},
            ]
        )
    ]
    accept, terminate = (
        FlowFileFilterResult.ACCEPT_AND_CONTINUE,
        FlowFileFilterResult.ACCEPT_AND_TERMINATE,
    )
    reject = FlowFileFilterResult.REJECT_AND_CONTINUE
    chooser = _TransactionFilter(100)
    assert [chooser(f) for f in ff] == [accept, reject, accept, reject, terminate]
    chooser = _TransactionFilter(100)
    assert [chooser(f) for f in (ff[1], ff[0], ff[2], ff[3], ff[4])] == [
        accept,
        reject,
        reject,
        accept,
        reject,
    ]


_TWO_STATEMENTS = {
    "multiple": "INSERT INTO pg_persons (ID, NAME, CODE) VALUES (?, ?, ?); "
    "UPDATE pg_persons SET NAME='George' WHERE ID=?; ",
    "invalid": "INSERT INTO pg_persons (ID, NAME, CODE) VALUES (?, ?, ?); "
    "UPDATE SOME_RANDOM_TABLE NAME='George' WHERE ID=?; ",
}
_FOUR_ARGS = sql_args((4, "1"), (12, "Mark"), (4, "84"), (4, "1"))


@pytest.mark.parametrize("case", sorted(_TWO_STATEMENTS))
def test_two_statements_within_flowfile(postgres, case: str) -> None:
    """NiFi's testMultipleStatementsWithinFlowFile and testInvalidStatement: two statements
    with parameters in one FlowFile fail (a prepared statement is one statement) with the
    error attributes; nothing is written."""
    runner = pg_runner(postgres, "id integer primary key, name varchar(100), code integer")
    runner.enqueue(_TWO_STATEMENTS[case], _FOUR_ARGS)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    assert {"error.message", "error.sql.state"} <= set(out.attributes)
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]


@pytest.mark.parametrize("case", sorted(_TWO_STATEMENTS))
def test_two_statements_within_flowfile_rollback_on_failure(postgres, case: str) -> None:
    """NiFi's testMultipleStatementsWithinFlowFileRollbackOnFailure and
    testInvalidStatementRollbackOnFailure: the trigger fails with a ProcessException, the
    FlowFile stays queued, nothing is routed nor written."""
    runner = pg_runner(
        postgres,
        "id integer primary key, name varchar(100), code integer",
        **{"Rollback On Failure": "true"},
    )
    runner.enqueue(_TWO_STATEMENTS[case], _FOUR_ARGS)
    with pytest.raises(ProcessException, match="postgresql://"):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    assert runner.queue_size() == 1
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]


_AI = "id integer generated always as identity, name varchar(100), code integer check (code <= 100)"
_MIDDLE = [
    "INSERT INTO pg_persons (NAME, CODE) VALUES ('Mark', 84)",
    "INSERT INTO pg_persons",
    "INSERT INTO pg_persons (NAME, CODE) VALUES ('Tom', 3)",
    "INSERT INTO pg_persons (NAME, CODE) VALUES ('Harry', 44)",
]


def test_fail_in_middle_with_bad_statement_not_support_transaction(postgres) -> None:
    """NiFi's testFailInMiddleWithBadStatementAndNotSupportTransaction: the bad statement
    fails alone, with NiFi's error attributes (PostgreSQL gives no error.code);
    the others succeed."""
    runner = pg_runner(postgres, _AI, **{"Support Fragmented Transactions": "false"})
    for sql in _MIDDLE:
        runner.enqueue(sql)
    runner.run()
    runner.assert_transfer_count("failure", 1)
    runner.assert_transfer_count("success", 3)
    out = runner.flowfiles_for("failure")[0]
    assert {"error.message", "error.sql.state"} <= set(out.attributes)
    assert [r[0] for r in postgres.execute("select name from pg_persons order by id")] == [
        "Mark",
        "Tom",
        "Harry",
    ]


def test_fail_in_middle_with_bad_statement_rollback_on_failure(postgres) -> None:
    """NiFi's testFailInMiddleWithBadStatementRollbackOnFailure: nothing is transferred and
    nothing is written; the FlowFiles stay queued."""
    runner = pg_runner(postgres, _AI, **{"Rollback On Failure": "true"})
    for sql in _MIDDLE:
        runner.enqueue(sql)
    with contextlib.suppress(Exception):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    assert runner.queue_size() == 4
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]


def _fragment(runner: TestRunner, sql: str, fragment: str, count: str, index: str) -> None:
    runner.enqueue(
        sql, {"fragment.identifier": fragment, "fragment.count": count, "fragment.index": index}
    )


def test_autocommit_refuses_fragments_and_rollback(tmp_path: Path) -> None:
    """NiFi's customValidate: Database Session AutoCommit true is invalid with Support
    Fragmented Transactions or Rollback On Failure true."""
    runner, _ = sqlite_runner(tmp_path, **{"Database Session AutoCommit": "true"})
    problems = {r.subject: r.explanation for r in runner.processor.validate()}
    assert "Support Fragmented Transactions" in problems
    assert (
        "cannot be set to 'true' when 'Database Session AutoCommit'"
        in (problems["Support Fragmented Transactions"])
    )
    runner, _ = sqlite_runner(
        tmp_path / "x",
        **{
            "Database Session AutoCommit": "true",
            "Support Fragmented Transactions": "false",
            "Rollback On Failure": "true",
        },
    )
    assert [r.subject for r in runner.processor.validate()] == ["Rollback On Failure"]


def test_transaction_timeout_sends_incomplete_fragments_to_failure(tmp_path: Path) -> None:
    """NiFi's testTransactionTimeout: fragments not all queued go back penalized; once
    Transaction Timeout has passed they go to failure with the reason."""
    runner, path = sqlite_runner(tmp_path, **{"Transaction Timeout": "5 secs"})
    _fragment(runner, "INSERT INTO PERSONS (ID) VALUES (1)", "t3", "2", "0")
    runner.run()
    runner.assert_transfer_count("failure", 0)
    assert runner.queue_size() == 1
    runner.advance_time(31)  # past the penalty (30 s) and the timeout
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["error.message"]
    assert message.startswith("The transaction timeout has expired")
    assert sqlite_rows(path) == []


def test_fragmented_transaction_larger_than_batch_size(tmp_path: Path) -> None:
    """All fragments of a transaction are taken whatever Batch Size (NiFi's filter), run in
    fragment.index order; plain FlowFiles wait for the next trigger."""
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "2"})
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (9, 'plain')")
    _fragment(runner, "UPDATE PERSONS SET NAME = 'second' WHERE ID = 1", "t4", "3", "2")
    _fragment(runner, "INSERT INTO PERSONS (ID, NAME) VALUES (1, 'first')", "t4", "3", "0")
    _fragment(runner, "UPDATE PERSONS SET CODE = 7 WHERE ID = 1", "t4", "3", "1")
    runner.run()
    runner.assert_transfer_count("success", 1)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 4)
    assert sqlite_rows(path) == [(1, "second", 7), (9, "plain", None)]


def test_inconsistent_fragment_attributes_go_to_failure(tmp_path: Path) -> None:
    """NiFi's isFragmentedTransactionReady checks: a repeated fragment.index fails the whole
    transaction with the reason in error.message."""
    runner, path = sqlite_runner(tmp_path)
    _fragment(runner, "INSERT INTO PERSONS (ID) VALUES (1)", "t5", "2", "0")
    _fragment(runner, "INSERT INTO PERSONS (ID) VALUES (2)", "t5", "2", "0")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)
    message = runner.flowfiles_for("failure")[0].attributes["error.message"]
    assert "same value for the fragment.index attribute" in message
    assert sqlite_rows(path) == []


def test_batch_size_bounds_a_trigger(tmp_path: Path) -> None:
    """Batch Size: a trigger takes at most that many FlowFiles."""
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "2"})
    for n in range(5):
        runner.enqueue(f"INSERT INTO PERSONS (ID) VALUES ({n})")
    runner.run()
    runner.assert_transfer_count("success", 2)
    assert runner.queue_size() == 3
    assert len(sqlite_rows(path)) == 2


def test_obtain_generated_keys_sqlite(tmp_path: Path) -> None:
    """NiFi's testInsertWithGeneratedKeys: an INSERT gets sql.generated.key; an UPDATE after
    it gets none (sqlite3's lastrowid still holds the insert's id)."""
    runner, _ = sqlite_runner(
        tmp_path,
        **{"Obtain Generated Keys": "true", "Support Fragmented Transactions": "false"},
    )
    runner.enqueue("INSERT INTO PERSONS (NAME, CODE) VALUES ('Mark', 84)")
    runner.enqueue("UPDATE PERSONS SET CODE = 1")
    runner.run()
    first, second = runner.flowfiles_for("success")
    first.assert_attribute_equals("sql.generated.key", "1")
    second.assert_attribute_not_exists("sql.generated.key")


def test_obtain_generated_keys_and_autocommit_postgres(postgres) -> None:
    """PostgreSQL: the generated identity is the key (RETURNING *, as pgjdbc); Database
    Session AutoCommit true runs a statement that refuses a transaction (VACUUM)."""
    runner = pg_runner(postgres, _AI, **{"Obtain Generated Keys": "true"})
    runner.enqueue("INSERT INTO pg_persons (NAME, CODE) VALUES ('Mark', 84)")
    runner.enqueue("INSERT INTO pg_persons (NAME, CODE) VALUES ('Tom', 3);")
    runner.run()
    keys = [f.attributes["sql.generated.key"] for f in runner.flowfiles_for("success")]
    assert keys == ["1", "2"]
    runner = pg_runner(postgres, _AI)
    runner.enqueue("VACUUM pg_persons")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner = pg_runner(
        postgres,
        _AI,
        **{"Database Session AutoCommit": "true", "Support Fragmented Transactions": "false"},
    )
    runner.enqueue("VACUUM pg_persons")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)


def test_generated_keys_postgres_comments_and_literals(postgres) -> None:
    """RETURNING * goes after the statement's last code (a trailing comment or ';' does not
    swallow it); 'returning' in a literal or comment is no RETURNING clause; an INSERT with
    its own RETURNING runs as it is. All in one batch (one bad statement would fail it)."""
    runner = pg_runner(postgres, _AI, **{"Obtain Generated Keys": "true"})
    statements = [
        "INSERT INTO pg_persons (NAME, CODE) VALUES ('a', 1) -- load job 7",
        "INSERT INTO pg_persons (NAME, CODE) VALUES ('returning customer', 2)",
        "INSERT INTO pg_persons (NAME, CODE) VALUES ('c;', 3); /* returning */ -- x",
        "INSERT INTO pg_persons (NAME, CODE) VALUES ($$d -- $$, 4)",
        "INSERT INTO pg_persons (NAME, CODE) VALUES ('e', 5) RETURNING CODE",
    ]
    for sql in statements:
        runner.enqueue(sql)
    runner.run()
    outs = runner.flowfiles_for("success")
    assert len(outs) == 5
    keys = [f.attributes.get("sql.generated.key") for f in outs]
    assert keys == ["1", "2", "3", "4", None]
    assert postgres.execute("select id, name from pg_persons order by id") == [
        (1, "a"),
        (2, "returning customer"),
        (3, "c;"),
        (4, "d -- "),
        (5, "e"),
    ]


def test_fail_in_middle_with_bad_statement_support_transaction(postgres) -> None:
    """NiFi's testFailInMiddleWithBadStatementAndSupportTransaction: with Support Fragmented
    Transactions a batch is one transaction: all four to failure, one with the error
    attributes, no row written."""
    runner = pg_runner(postgres, _AI)
    for sql in _MIDDLE:
        runner.enqueue(sql)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 4)
    marked = [f for f in runner.flowfiles_for("failure") if "error.message" in f.attributes]
    assert len(marked) == 1
    assert marked[0].content == b"INSERT INTO pg_persons"
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]


_MODES = {
    "batch": {"Support Fragmented Transactions": "false"},
    "fragmented": {"Support Fragmented Transactions": "true"},
    "keys": {"Support Fragmented Transactions": "false", "Obtain Generated Keys": "true"},
}


@pytest.mark.parametrize("mode", sorted(_MODES))
def test_keep_flowfile_ordering(tmp_path: Path, mode: str) -> None:
    """NiFi's testKeepFlowFileOrderingWith(BatchMode, FragmentedTransaction, ObtainGeneratedKeys):
    FlowFiles reach success and their SEND events come in the order they came, their
    statements run in that order."""
    delete, insert = "DELETE FROM PERSONS WHERE ID = ?", "INSERT INTO PERSONS (ID) VALUES (?)"
    statements = [delete, insert, insert, delete, delete, insert]
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "10", **_MODES[mode]})
    for n, sql in enumerate(statements):
        runner.enqueue(sql, {"sql.args.1.type": "4", "sql.args.1.value": str(n)})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 6)
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == statements
    assert [o.attributes["sql.args.1.value"] for o in outs] == [str(n) for n in range(6)]
    events = runner.provenance_events
    assert [e.attributes["sql.args.1.value"] for e in events] == [str(n) for n in range(6)]
    assert [r[0] for r in sqlite_rows(path)] == [1, 2, 5]


@pytest.mark.parametrize("mode", sorted(_MODES))
def test_provenance_events(tmp_path: Path, mode: str) -> None:
    """NiFi's testProvenanceEventsWith(BatchMode, FragmentedTransaction, ObtainGeneratedKeys):
    one SEND per FlowFile, to the database's URL, without details, with the FlowFile as it
    went to success (its generated key)."""
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "10", **_MODES[mode]})
    runner.enqueue("DELETE FROM PERSONS WHERE ID = 1")
    runner.enqueue("INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    events = runner.provenance_events
    assert [e.event_type.value for e in events] == ["SEND", "SEND"]
    assert {e.transit_uri for e in events} == {f"jdbc:sqlite:{path}"}
    assert {e.details for e in events} == {None}
    assert [e.flowfile_uuid for e in events] == [
        f.attributes["uuid"] for f in runner.flowfiles_for("success")
    ]
    key = events[1].attributes.get("sql.generated.key")
    assert key == ("1" if mode == "keys" else None)


def test_multiple_flowfiles_successful_in_transaction(tmp_path: Path) -> None:
    """NiFi's testMultipleFlowFilesSuccessfulInTransaction: the first fragment waits
    (penalized), the second arrives, both commit together in fragment.index order."""
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "1"})
    _fragment(runner, "INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)", "1", "2", "0")
    runner.run()
    runner.assert_transfer_count("success", 0)
    _fragment(runner, "UPDATE PERSONS SET NAME='Leonard' WHERE ID=1", "1", "2", "1")
    runner.advance_time(31)  # the first one's penalty (30 s)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sqlite_rows(path) == [(1, "Leonard", 84)]


def test_null_fragment_count_and_timeout_with_rollback_on_failure(tmp_path: Path) -> None:
    """NiFi's testNullFragmentCountRollbackOnFailure and testTransactionTimeoutRollbackOnFailure:
    with Rollback On Failure the trigger fails and the FlowFiles stay queued."""
    runner, _ = sqlite_runner(
        tmp_path, **{"Rollback On Failure": "true", "Transaction Timeout": "5 secs"}
    )
    _fragment(runner, "", "1", "2", "0")
    runner.enqueue("", {"fragment.identifier": "1", "fragment.index": "1"})
    with pytest.raises(ProcessException, match=r"not all FlowFiles have a fragment\.count"):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    assert runner.queue_size() == 2
    runner, _ = sqlite_runner(
        tmp_path / "t",
        **{"Rollback On Failure": "true", "Transaction Timeout": "5 secs"},
    )
    _fragment(runner, "INSERT INTO PERSONS (ID) VALUES (1)", "1", "2", "0")
    runner.advance_time(10)
    with pytest.raises(ProcessException, match="The transaction timeout has expired"):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    assert runner.queue_size() == 1


_BAD_PARAMETERS = {
    "type": sql_args((12, "hello")),  # VARCHAR into the integer CODE: the database refuses it
    "value": sql_args((4, "9999")),  # past CODE's check constraint
    "number": sql_args((4, "hello")),  # INTEGER that does not parse: refused before the database
}


@pytest.mark.parametrize("bad", sorted(_BAD_PARAMETERS))
@pytest.mark.parametrize("transactions", ["true", "false"])
def test_fail_in_middle_with_bad_parameter(postgres, bad: str, transactions: str) -> None:
    """NiFi's testFailInMiddleWithBadParameterType/Value(And(Not)SupportTransaction) and
    testFailInMiddleWithNumberFormatException: alone, the bad FlowFile fails and the others
    succeed; in a transaction all four fail, the error attributes on the bad one only."""
    runner = pg_runner(postgres, _AI, **{"Support Fragmented Transactions": transactions})
    sql = "INSERT INTO pg_persons (NAME, CODE) VALUES ('Mark', ?)"
    good = sql_args((4, "84"))
    for attributes in (good, _BAD_PARAMETERS[bad], good, good):
        runner.enqueue(sql, attributes)
    runner.run()
    failed = runner.flowfiles_for("failure")
    marked = [f for f in failed if "error.message" in f.attributes]
    assert len(marked) == 1
    assert marked[0].attributes["sql.args.1.value"] == _BAD_PARAMETERS[bad]["sql.args.1.value"]
    if bad != "number":
        assert "error.sql.state" in marked[0].attributes
    rows = postgres.execute("select count(*) from pg_persons")[0][0]
    if transactions == "true":
        assert (len(failed), len(runner.flowfiles_for("success")), rows) == (4, 0, 0)
    else:
        assert (len(failed), len(runner.flowfiles_for("success")), rows) == (1, 3, 3)
        for out in runner.flowfiles_for("success"):
            out.assert_attribute_not_exists("error.message")


@pytest.mark.parametrize("bad", sorted(_BAD_PARAMETERS))
@pytest.mark.parametrize("transactions", ["true", "false"])
def test_fail_in_middle_with_bad_parameter_rollback_on_failure(
    postgres, bad: str, transactions: str
) -> None:
    """NiFi's testFailInMiddleWithBadParameterTypeRollbackOnFailure and
    testFailInMiddleWithBadParameterValueRollbackOnFailure (and a number that does not
    parse): the trigger fails with a ProcessException naming the cause, nothing is routed,
    the four FlowFiles stay queued and the row the first one wrote is rolled back, with or
    without Support Fragmented Transactions."""
    runner = pg_runner(
        postgres,
        _AI,
        **{"Rollback On Failure": "true", "Support Fragmented Transactions": transactions},
    )
    sql = "INSERT INTO pg_persons (NAME, CODE) VALUES ('Mark', ?)"
    good = sql_args((4, "84"))
    for attributes in (good, _BAD_PARAMETERS[bad], good, good):
        runner.enqueue(sql, attributes)
    cause = {"type": "integer", "value": "check constraint", "number": "sql.args.1.value"}
    with pytest.raises(ProcessException, match=cause[bad]):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("retry", 0)
    assert runner.queue_size() == 4
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]


def test_incomplete_fragments_rollback_on_failure_wait(tmp_path: Path) -> None:
    """NiFi's testMultipleFlowFilesSuccessfulInTransactionRollBackOnFailure: a fragment whose
    transaction is not all queued is put back without an error, nothing routed."""
    runner, path = sqlite_runner(tmp_path, **{"Batch Size": "1", "Rollback On Failure": "true"})
    _fragment(runner, "INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)", "1", "2", "0")
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)
    assert runner.queue_size() == 1
    assert sqlite_rows(path) == []


def test_retryable_failure_rollback_on_failure(postgres) -> None:
    """NiFi's testRetryableFailureRollbackOnFailure: a transient error (a statement cancelled
    by its timeout) after a statement that wrote: with Rollback On Failure the trigger fails,
    nothing is routed, both FlowFiles stay queued and the database is unchanged; without it
    the same error routes to retry."""
    statements = [
        "INSERT INTO pg_persons (ID, NAME, CODE) VALUES (1, 'Mark', 84)",
        "SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)",
    ]
    table = "id integer primary key, name varchar(100), code integer"
    runner = pg_runner(
        postgres,
        table,
        **{"Rollback On Failure": "true", "Support Fragmented Transactions": "false"},
    )
    for sql in statements:
        runner.enqueue(sql)
    with pytest.raises(ProcessException, match="statement timeout"):
        runner.run()
    runner.assert_transfer_count("retry", 0)
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    assert runner.queue_size() == 2
    assert postgres.execute("select count(*) from pg_persons") == [(0,)]
    runner = pg_runner(postgres, table, **{"Support Fragmented Transactions": "false"})
    runner.enqueue(statements[1])
    runner.run()
    runner.assert_all_flowfiles_transferred("retry", 1)
