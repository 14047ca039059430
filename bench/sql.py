"""PutDatabaseRecord and QueryDatabaseTableRecord rows/s against PostgreSQL, with baselines.

A throwaway PostgreSQL cluster (tests/servers/postgres.py) runs on loopback. In one run:

- ``executemany``: SQLAlchemy Core ``connection.execute(insert(table), rows)`` of ``--rows``
  dicts in one transaction (the issue's baseline);
- ``PutDatabaseRecord``: the same rows as one JSON FlowFile (JsonTreeReader), INSERT, through
  the test harness (reading the records included);
- ``plain fetch``: ``cursor.execute(select); fetchmany`` until done on a psycopg connection;
- ``QueryDatabaseTableRecord``: the table read incrementally into one Parquet FlowFile
  (ParquetRecordSetWriter) through the harness.

The issue's targets: each processor at least 0.5x its baseline. Beside them, in the same
rounds, what bounds each:

- ``PutDatabaseRecord, executemany``: PutDatabaseRecord with the column-wise INSERT turned off
  (the executemany of dicts it made before, and still makes for other statements);
- ``JSON reader alone``: JsonTreeReader over the same content, nothing written;
- ``QueryDatabaseTableRecord, 1 row``: the processor over a table of one row (seconds: what a
  read costs whatever it moves: connecting, the maximum's query, the writer);
- ``fetch + Arrow batches``: the plain fetch with each fetch turned into an Arrow record batch
  as the processor does (processors/sql/arrow_rows.py), no writer;
- ``Parquet write alone``: the ParquetRecordSetWriter's writer over those batches, made
  beforehand (its default dictionary encoding is most of it).

``--reads`` runs only the read rows (the table filled once by the executemany).

Each row also gives this process's CPU time (``time.process_time``, the server's not
included): on a shared machine a case's wall time is mostly its share of the cores, so the CPU
a case spends is the steadier figure of what it costs. Every case starts after a
``gc.collect()`` (a full collection falling in one case or another moved single rounds by
0.1-0.2 s); rounds are interleaved, best and range reported, after one round not counted
(first imports: the Parquet module, psycopg's types).

    .venv/bin/python bench/sql.py [--rows N] [--repeat N] [--reads | --writes]
        [--amount-type 'numeric(20,6)']
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from flowcore.controller_service import ServiceContext
from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader, ParquetRecordSetWriter
from processors.sql import record_statements
from processors.sql.arrow_rows import arrow_batches
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from processors.sql.query_database_table_record import QueryDatabaseTableRecord
from tests.servers.postgres import postgres_server

#: The amount column's type (``--amount-type``): double precision, or numeric(20,6) for the
#: exact decimal path (a record DOUBLE into a numeric column).
AMOUNT_TYPE = ["double precision"]


def _reset(server, table: str) -> None:
    server.execute(f"drop table if exists {table}")
    server.execute(
        f"create table {table} (id bigint primary key, name text, amount {AMOUNT_TYPE[0]}, "
        "code int)"
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


def bench_put_executemany(server, content: bytes) -> float:
    """PutDatabaseRecord with the column-wise INSERT off: the executemany path."""
    usable = record_statements.usable
    record_statements.usable = lambda *_: False
    try:
        return bench_put(server, content)
    finally:
        record_statements.usable = usable


def bench_reader(content: bytes) -> float:
    """JsonTreeReader over the content alone."""
    reader = JsonTreeReader("reader")
    reader = reader.enable(ServiceContext(reader))
    started = time.perf_counter()
    rows = sum(b.num_rows for b in reader.create_reader({}, io.BytesIO(content)))
    elapsed = time.perf_counter() - started
    assert rows
    return elapsed


def bench_fetch(server) -> float:
    started = time.perf_counter()
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("select * from t_base order by id")
        while cursor.fetchmany(10_000):
            pass
    return time.perf_counter() - started


def bench_fetch_arrow(server) -> float:
    """The plain fetch, each fetch an Arrow record batch as the processor makes it."""
    started = time.perf_counter()
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("select * from t_base order by id")
        rows = iter(lambda: cursor.fetchmany(10_000), [])
        count = sum(batch.num_rows for batch in arrow_batches(cursor.description, rows))
    elapsed = time.perf_counter() - started
    assert count
    return elapsed


def bench_parquet(batches: list) -> float:
    """ParquetRecordSetWriter's writer over *batches* (made before the clock starts)."""
    writer = ParquetRecordSetWriter("writer")
    writer = writer.enable(ServiceContext(writer))
    out = io.BytesIO()
    started = time.perf_counter()
    records = writer.create_writer(batches[0].schema, {}, out)
    for batch in batches:
        records.write(batch)
    records.finish()
    return time.perf_counter() - started


def _batches(server) -> list:
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("select * from t_base order by id")
        return list(arrow_batches(cursor.description, iter(lambda: cursor.fetchmany(10_000), [])))


def bench_qdtr(server, table: str = "t_base") -> float:
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": table,
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reads", action="store_true", help="only the read rows")
    parser.add_argument("--writes", action="store_true", help="only the write rows")
    parser.add_argument(
        "--amount-type", default="double precision", help="the amount column's SQL type"
    )
    args = parser.parse_args()
    AMOUNT_TYPE[0] = args.amount_type
    rows = _rows(args.rows)
    content = json.dumps(rows).encode()
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}  # this process's: what a loaded machine divides
    with postgres_server() as server:
        _reset(server, "t_one")
        server.execute("insert into t_one values (1, 'one', 0.5, 1)")
        if args.reads:
            bench_executemany(server, rows)
        for index in range(args.repeat + 1):  # the first round is not counted: imports
            counted = index > 0
            writes = (
                ("executemany", lambda: bench_executemany(server, rows)),
                ("PutDatabaseRecord", lambda: bench_put(server, content)),
                ("PutDatabaseRecord, executemany", lambda: bench_put_executemany(server, content)),
                ("JSON reader alone", lambda: bench_reader(content)),
            )
            reads = (
                ("plain fetch", lambda: bench_fetch(server)),
                ("QueryDatabaseTableRecord", lambda: bench_qdtr(server)),
                ("QueryDatabaseTableRecord, 1 row", lambda: bench_qdtr(server, "t_one")),
                ("fetch + Arrow batches", lambda: bench_fetch_arrow(server)),
                ("Parquet write alone", bench_parquet),
            )
            chosen = reads if args.reads else writes if args.writes else writes + reads
            for name, run in chosen:
                made = (_batches(server),) if run is bench_parquet else ()  # not timed
                gc.collect()
                started = time.process_time()
                elapsed = run(*made)
                if counted:
                    times.setdefault(name, []).append(elapsed)
                    cpu.setdefault(name, []).append(time.process_time() - started)
    best = {name: min(values) for name, values in times.items()}
    for name, values in times.items():
        used = f"; this process's CPU {min(cpu[name]):.3f}-{max(cpu[name]):.3f} s"
        if name.endswith("1 row"):
            print(f"{name:34s} {min(values):.3f}-{max(values):.3f} s{used}")
            continue
        rates = sorted(args.rows / v for v in values)
        print(
            f"{name:34s} {rates[-1]:12,.0f} rows/s (rounds {rates[0]:,.0f}-{rates[-1]:,.0f}){used}"
        )
    for name, base in (
        ("PutDatabaseRecord", "executemany"),
        ("PutDatabaseRecord, executemany", "executemany"),
        ("JSON reader alone", "executemany"),
        ("QueryDatabaseTableRecord", "plain fetch"),
        ("fetch + Arrow batches", "plain fetch"),
        ("Parquet write alone", "plain fetch"),
    ):
        if name not in best or base not in best:
            continue
        target = (
            " (target >= 0.5x)" if name in ("PutDatabaseRecord", "QueryDatabaseTableRecord") else ""
        )
        ratios = sorted(b / v for b, v in zip(times[base], times[name], strict=True))
        print(
            f"{name} / {base}: {best[base] / best[name]:.2f}x best{target}; "
            f"per round {ratios[0]:.2f}-{ratios[-1]:.2f}x, median {ratios[len(ratios) // 2]:.2f}x"
        )
    print(json.dumps({k: [round(v, 4) for v in vs] for k, vs in times.items()}))
    print(json.dumps({f"{k}, CPU": [round(v, 4) for v in vs] for k, vs in cpu.items()}))


if __name__ == "__main__":
    main()
