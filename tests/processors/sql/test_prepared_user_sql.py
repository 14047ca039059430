"""PutDatabaseRecord's own SQL in its two-phase transaction (processors/sql/prepared.py): Pre-
and Post-Processing SQL, record SQL and record paths are prepared with the rows; SQL that would
end the transaction, or a temporary object PREPARE refuses, fails the FlowFile clearly."""

from __future__ import annotations

import pytest

from tests.processors.sql import test_prepared as two_phase
from tests.processors.sql.test_prepared import _commit, _prepared_gids, _runner
from tests.servers.postgres import PostgresServer

# test_prepared's fixtures: the after-commit actions held back, an empty persons table.
held = two_phase.held
table = two_phase.table


def test_sql_type_and_record_paths_are_prepared_too(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """Statement type SQL, Use Record Path with Data Record Path and Pre-/Post-Processing SQL
    run in the prepared transaction: nothing shows before COMMIT PREPARED, all of it after."""
    runner = _runner(postgres.jdbc_url)
    runner.set_property("Statement Type", "Use statement.type Attribute")
    runner.set_property("Field Containing SQL", "sql")
    runner.set_property("Pre-Processing SQL", "INSERT INTO persons VALUES (10, 'pre')")
    runner.set_property("Post-Processing SQL", "UPDATE persons SET name = upper(name)")
    runner.enqueue(b'[{"sql": "INSERT INTO persons VALUES (1, \'a\')"}]', {"statement.type": "SQL"})
    paths = _runner(postgres.jdbc_url)
    paths.set_property("Statement Type", "Use Record Path")
    paths.set_property("Statement Type Record Path", "/op")
    paths.set_property("Data Record Path", "/row")
    paths.set_property("Pre-Processing SQL", "INSERT INTO persons VALUES (20, 'pre2')")
    paths.set_property("Delete Keys", "id")  # the inferred row has name too (null here)
    paths.enqueue(
        b'[{"op": "c", "row": {"id": 2, "name": "b"}}, {"op": "c", "row": {"id": 3, "name": "c"}},'
        b' {"op": "d", "row": {"id": 2}}, {"op": "u", "row": {"id": 3, "name": "c3"}}]'
    )
    runner.run(stop_on_finish=False)
    paths.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("success", 1)
    paths.assert_all_flowfiles_transferred("success", 1)
    assert len(_prepared_gids(postgres)) == 2
    assert postgres.execute(f"select count(*) from {table}") == [(0,)]
    _commit(runner, held)
    assert postgres.execute(f"select id, name from {table} order by id") == [
        (1, "A"),
        (3, "c3"),
        (10, "PRE"),
        (20, "pre2"),
    ]
    assert _prepared_gids(postgres) == []


@pytest.mark.parametrize(
    "case",
    [
        ({"Post-Processing SQL": "COMMIT"}, b'[{"id": 1, "name": "a"}]', "Post-Processing SQL"),
        (
            {"Pre-Processing SQL": "/* done */ END"},
            b'[{"id": 1, "name": "a"}]',
            "Pre-Processing SQL",
        ),
        (
            {"Statement Type": "Use statement.type Attribute", "Field Containing SQL": "sql"},
            b'[{"sql": "ROLLBACK"}]',
            "Field Containing SQL (sql)",
        ),
    ],
)
def test_user_sql_ending_the_transaction_is_refused(
    postgres: PostgresServer, table: str, held: list, case: tuple[dict, bytes, str]
) -> None:
    """A COMMIT, END or ROLLBACK in the FlowFile's own SQL would end its two-phase transaction
    (rows visible before the FlowFile commits, written again on a replay): refused before it
    runs, the FlowFile to failure naming the statement and the property, nothing written."""
    props, content, place = case
    runner = _runner(postgres.jdbc_url)
    for name, value in props.items():
        runner.set_property(name, value)
    runner.enqueue(content, {"statement.type": "SQL"})  # read by the SQL case only
    runner.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert f"{place} statement [" in error
    assert "ends the FlowFile's transaction" in error
    assert held == []
    assert _prepared_gids(postgres) == []
    assert postgres.execute(f"select count(*) from {table}") == [(0,)]


def test_transaction_ended_inside_a_records_sql_fails_the_flowfile(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """A record's SQL holding its own COMMIT (several statements in one value) is caught by the
    transaction status after it: the FlowFile fails (saying what may be committed already),
    nothing is prepared."""
    runner = _runner(postgres.jdbc_url)
    runner.set_property("Statement Type", "Use statement.type Attribute")
    runner.set_property("Field Containing SQL", "sql")
    runner.enqueue(
        b'[{"sql": "INSERT INTO persons VALUES (1, \'a\'); COMMIT"}]', {"statement.type": "SQL"}
    )
    runner.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Field Containing SQL (sql) statement [INSERT INTO persons" in error
    assert "may already be committed" in error
    assert held == []
    assert _prepared_gids(postgres) == []


def test_temporary_table_in_pre_processing_sql_names_the_cause(
    postgres: PostgresServer, table: str, held: list
) -> None:
    """PostgreSQL refuses to PREPARE a transaction that used a temporary table: the FlowFile
    fails with a message naming the property, the cause and the ways out; nothing written."""
    runner = _runner(postgres.jdbc_url)
    runner.set_property("Pre-Processing SQL", "CREATE TEMP TABLE staging (x int) ON COMMIT DROP")
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    runner.run(stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "temporary objects" in error
    assert "made or used in Pre-Processing SQL" in error
    assert "max_prepared_transactions = 0" in error
    assert held == []
    assert postgres.execute(f"select count(*) from {table}") == [(0,)]
