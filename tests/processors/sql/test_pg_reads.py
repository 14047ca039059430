"""PostgreSQL reads (processors/sql/pg_reads.py): a streamed query's rows and description.

Streamed reads through QueryDatabaseTableRecord (fragments ending a stream, autocommit and
the connection set back) are tested in test_query_base.py.
"""

from __future__ import annotations

from processors.sql import pg_reads


def test_an_empty_stream_is_described_by_its_limit_0(postgres) -> None:
    """A stream of no rows has no description of its own: the LIMIT 0's stands for it."""
    postgres.execute("drop table if exists nothing")
    postgres.execute("create table nothing (id int, name text)")
    with postgres.connect() as connection:
        cursor = connection.cursor()
        cursor.execute("select * from nothing limit 0")
        described = cursor.description
        rows = pg_reads.Streamed(
            cursor, "select * from nothing", None, described, binary=True, size=10
        )
        assert rows.fetchmany(5) == []
        assert [c.name for c in rows.description] == ["id", "name"]
        rows.close()
