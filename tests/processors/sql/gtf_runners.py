"""GenerateTableFetch test runners shared by its test modules (SQLite files, PostgreSQL)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch

#: NiFi's three rows (id, type, name, scale).
THREE = ["(0, 'male', 'Joe Smith', 1.0)", "(1, 'female', 'Carrie Jones', 5.0)"]
THREE.append("(2, NULL, NULL, 2.0)")


def sqlite_runner(path: Path, *, incoming: bool = False, **props: str) -> TestRunner:
    """GenerateTableFetch on TEST_QUERY_DB_TABLE of the SQLite file *path* (a source unless
    *incoming*, as NiFi's tests say ``setIncomingConnection``)."""
    runner = TestRunner(
        GenerateTableFetch(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "TEST_QUERY_DB_TABLE",
                **props,
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    runner.set_incoming_connection(incoming)  # as NiFi's tests: a source unless told
    return runner


def sqlite_db(tmp_path: Path, ids: range) -> Path:
    """A SQLite file with TEST_QUERY_DB_TABLE holding *ids* (added to, if it exists)."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table if not exists TEST_QUERY_DB_TABLE (id integer, name text)")
        db.executemany("insert into TEST_QUERY_DB_TABLE values (?, ?)", [(i, f"n{i}") for i in ids])
    return path


def pg_runner(
    postgres, table: str, rows: list[str], *, incoming: bool = False, **props: str
) -> TestRunner:
    """A fresh PostgreSQL *table* (NiFi's id, type, name, scale, bucket) with *rows*."""
    postgres.execute(f"drop table if exists {table}")
    postgres.execute(
        f"create table {table} (id integer not null, type varchar(20), name varchar(100), "
        "scale float, bucket integer default 0)"
    )
    for row in rows:
        postgres.execute(f"insert into {table} (id, type, name, scale) values {row}")
    runner = TestRunner(
        GenerateTableFetch(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": table, **props}
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    runner.set_incoming_connection(incoming)
    return runner


def found(postgres, flowfile) -> int:
    """The rows the statement in *flowfile* returns."""
    return len(postgres.execute(flowfile.content.decode()))


def bucket_runner(
    postgres, table: str, rows: list[tuple[int, int]], *, incoming: bool = False, **props: str
) -> TestRunner:
    """A fresh PostgreSQL *table* (id, bucket) with *rows*."""
    postgres.execute(f"drop table if exists {table}")
    postgres.execute(f"create table {table} (id integer not null, bucket integer not null)")
    for row in rows:
        postgres.execute(f"insert into {table} (id, bucket) values {row}")
    return pg_runner_for(postgres, table, incoming=incoming, **props)


def pg_runner_for(postgres, table: str, *, incoming: bool = False, **props: str) -> TestRunner:
    """GenerateTableFetch on the PostgreSQL *table* (a source unless *incoming*)."""
    runner = TestRunner(
        GenerateTableFetch(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": table, **props}
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    runner.set_incoming_connection(incoming)
    return runner
