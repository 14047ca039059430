"""PutDatabaseRecord test runners shared by its test modules (SQLite files, PostgreSQL tables)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord


def sqlite_db(tmp_path: Path) -> str:
    """A SQLite file with NiFi's PERSONS table (name NOT NULL); its path."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "create table PERSONS (id integer primary key, name varchar(100) not null, "
            "code integer)"
        )
    return str(path)


def put_runner(url: str, user: str | None = None, **props: str) -> TestRunner:
    """A PutDatabaseRecord INSERT into PERSONS at *url*, JSON records, *props* over that."""
    runner = TestRunner(
        PutDatabaseRecord(
            **{
                "Record Reader": "reader",
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "PERSONS",
                "Statement Type": "INSERT",
                **props,
            }
        )
    )
    extra = {"Database User": user, "Password": "hunter2-secret"} if user else {}
    runner.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": url, **extra}))
    runner.add_service(JsonTreeReader("reader"))
    return runner


def sqlite_rows(path: str, sql: str = "select id, name, code from PERSONS order by id") -> list:
    """The rows *sql* reads from the SQLite file *path*."""
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def pg_persons(postgres, ddl: str, *inserts: str, **props: str) -> TestRunner:
    """A runner into PostgreSQL's table persons, made afresh of *ddl* with *inserts*."""
    postgres.execute("drop table if exists persons")
    postgres.execute(f"create table persons ({ddl})")
    for sql in inserts:
        postgres.execute(sql)
    return put_runner(postgres.jdbc_url, user="postgres", **{"Table Name": "persons", **props})


PERSONS = "id integer primary key, name varchar(100), code integer"


PERSON = (
    "name varchar(255) not null primary key, age int, favorite_color varchar(255), dob date, "
    "lastTransactionTime timestamp with time zone"
)


def person_runner(postgres, statement_type: str = "INSERT") -> TestRunner:
    """PutDatabaseRecordIT's setup: the person table, a JsonTreeReader with its formats."""
    postgres.execute("drop table if exists person")
    postgres.execute(f"create table person ({PERSON})")
    runner = put_runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Table Name": "person", "Database Type": "PostgreSQL", "Statement Type": statement_type},
    )
    runner.add_service(
        JsonTreeReader(
            "reader",
            **{"Date Format": "yyyy-MM-dd", "Timestamp Format": "yyyy-MM-dd HH:mm:ss.SSSSSS"},
        )
    )
    return runner
