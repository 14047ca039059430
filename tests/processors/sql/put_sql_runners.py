"""PutSQL test runners shared by its test modules (a SQLite PERSONS file, PostgreSQL tables)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_sql import PutSQL


def sqlite_runner(tmp_path: Path, **props: str) -> tuple[TestRunner, Path]:
    """A PutSQL runner on a new SQLite file with NiFi's PERSONS table; the file's path."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table PERSONS (id integer primary key, name varchar(100), code int)")
    runner = TestRunner(PutSQL(**{"JDBC Connection Pool": "dbcp", **props}))
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    return runner, path


def sqlite_rows(path: Path) -> list:
    """PERSONS' rows (id, name, code) in the SQLite file *path*, by id."""
    with sqlite3.connect(path) as db:
        return db.execute("select id, name, code from PERSONS order by id").fetchall()


def pg_runner(postgres, ddl: str, **props: str) -> TestRunner:
    """A PutSQL runner on PostgreSQL, its table pg_persons made afresh of *ddl*."""
    postgres.execute("drop table if exists pg_persons")
    postgres.execute(f"create table pg_persons ({ddl})")
    runner = TestRunner(PutSQL(**{"JDBC Connection Pool": "dbcp", **props}))
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    return runner


def sql_args(*pairs: tuple[int, str | None], **formats: str) -> dict[str, str]:
    """``sql.args.N.type``/``.value`` attributes of (JDBC type, value) pairs, a None value left
    out; ``fN="..."`` adds ``sql.args.N.format``."""
    attributes = {}
    for index, (kind, value) in enumerate(pairs, start=1):
        attributes[f"sql.args.{index}.type"] = str(kind)
        if value is not None:
            attributes[f"sql.args.{index}.value"] = value
    for key, fmt in formats.items():
        attributes[f"sql.args.{key[1:]}.format"] = fmt
    return attributes
