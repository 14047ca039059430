"""PutDatabaseRecord and QueryDatabaseTableRecord rows/s against PostgreSQL, with baselines.

A throwaway PostgreSQL cluster (tests/servers/postgres.py) runs on loopback. In one run:

- ``executemany``: SQLAlchemy Core ``connection.execute(insert(table), rows)`` of ``--rows``
  dicts in one transaction (the issue's baseline);
- ``PutDatabaseRecord``: the same rows as one JSON FlowFile (JsonTreeReader), INSERT, through
  the test harness (reading the records included);
- ``plain fetch``: ``cursor.execute(select); fetchmany`` until done on a psycopg connection;
- ``QueryDatabaseTableRecord``: the table read incrementally into one Parquet FlowFile
  (ParquetRecordSetWriter) through the harness.

The issue's targets: each processor at least 0.5x its baseline.

    .venv/bin/python bench/sql.py [--rows N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader, ParquetRecordSetWriter
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from processors.sql.query_database_table_record import QueryDatabaseTableRecord
from tests.servers.postgres import postgres_server


def _reset(server, table: str) -> None:
    server.execute(f"drop table if exists {table}")
    server.execute(
        f"create table {table} (id bigint primary key, name text, amount double "
        "precision, code int)"
    )


def _rows(n: int) -> list[dict]:
    return [{"id": i, "name": f"name-{i}", "amount": i * 0.5, "code": i % 97} for i in range(n)]


def bench_executemany(server, rows: list[dict]) -> float:
    _reset(server, "t_base")
    engine = sa.create_engine(
        f"postgresql+psycopg://{server.user}@{server.host}:{server.port}/{server.database}"
    )
    table = sa.Table("t_base", sa.MetaData(), autoload_with=engine)
    started = time.perf_counter()
    with engine.begin() as connection:
        connection.execute(sa.insert(table), rows)
    elapsed = time.perf_counter() - started
    engine.dispose()
    return elapsed


def bench_put(server, content: bytes) -> float:
    _reset(server, "t_put")
    runner = TestRunner(
        PutDatabaseRecord(
            **{
                "Record Reader": "reader",
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "t_put",
                "Statement Type": "INSERT",
                "Maximum Batch Size": "0",
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": server.jdbc_url, "Database User": server.user}
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.enqueue(content)
    started = time.perf_counter()
    runner.run()
    elapsed = time.perf_counter() - started
    assert runner.flowfiles_for("success"), runner.flowfiles_for("failure")
    return elapsed


def bench_fetch(server) -> float:
    started = time.perf_counter()
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("select * from t_base order by id")
        while cursor.fetchmany(10_000):
            pass
    return time.perf_counter() - started


def bench_qdtr(server) -> float:
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "t_base",
                "Maximum-value Columns": "id",
                "Record Writer": "writer",
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": server.jdbc_url, "Database User": server.user}
        )
    )
    runner.add_service(ParquetRecordSetWriter("writer"))
    started = time.perf_counter()
    runner.run()
    elapsed = time.perf_counter() - started
    assert runner.flowfiles_for("success")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows = _rows(args.rows)
    content = json.dumps(rows).encode()
    best: dict[str, float] = {}
    with postgres_server() as server:
        for _ in range(args.repeat):
            for name, run in (
                ("executemany", lambda: bench_executemany(server, rows)),
                ("PutDatabaseRecord", lambda: bench_put(server, content)),
                ("plain fetch", lambda: bench_fetch(server)),
                ("QueryDatabaseTableRecord", lambda: bench_qdtr(server)),
            ):
                seconds = run()
                best[name] = min(best.get(name, seconds), seconds)
    for name, seconds in best.items():
        print(f"{name:26s} {args.rows / seconds:12,.0f} rows/s")
    print(
        f"PutDatabaseRecord / executemany: {best['executemany'] / best['PutDatabaseRecord']:.2f}x"
        " (target >= 0.5x)"
    )
    print(
        f"QueryDatabaseTableRecord / fetch: "
        f"{best['plain fetch'] / best['QueryDatabaseTableRecord']:.2f}x (target >= 0.5x)"
    )


if __name__ == "__main__":
    main()
