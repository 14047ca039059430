"""DuckDB connections that run NiFi's Calcite SQL (QueryRecord, JoinEnrichment's SQL strategy).

NiFi runs these queries with Apache Calcite; flowcore runs them with DuckDB. Where the two
differ in a way DuckDB can be told about, each connection is told when it opens, so a query
written for NiFi runs unchanged and nothing rewrites its text (a rewrite could touch a string
literal or a quoted identifier):

- a setting: text compared with a number is cast, as Calcite does (``old_implicit_casting``);
- a macro under the built-in's own name where DuckDB's type differs from Calcite's (the
  built-in stays reachable as ``system.main.<name>``; the macro lives in the connection's
  temporary schema, which DuckDB searches first);
- NiFi's own functions, RecordPath's ``RPATH`` family (``_rpath_functions``): a macro per
  function that hands a Python function its argument as JSON, with its DuckDB type.

What is left different is listed in docs/processors.md (QueryRecord's SQL).
"""

from __future__ import annotations

import duckdb

from processors._rpath_functions import RPATH_FUNCTIONS

__all__ = ["CALCITE_MACROS", "calcite_connection"]

#: Macros giving Calcite's result types where DuckDB's built-ins differ.
CALCITE_MACROS: tuple[str, ...] = (
    # Calcite's CARDINALITY is an INTEGER, which a list index takes (NiFi's own test reads
    # tags[CARDINALITY(tags)]); DuckDB's is a UBIGINT, which no list index takes
    "CREATE TEMP MACRO cardinality(x) AS CAST(system.main.cardinality(x) AS INTEGER)",
    # NiFi's RPATH functions: the argument as its JSON (to_json keeps the fields' order) and
    # its type (a MAP is told from a RECORD by it), to the Python function of the same name
    *(
        f"CREATE TEMP MACRO {name}(r, p) AS "
        f"flowcore_{name}(CAST(to_json(r) AS VARCHAR), p, typeof(r))"
        for name in RPATH_FUNCTIONS
    ),
)


def calcite_connection() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection set up for Calcite's SQL, one DuckDB thread.

    One thread because flowcore runs tasks in parallel itself.
    """
    connection = duckdb.connect()
    try:
        connection.execute("SET threads TO 1")
        connection.execute("SET old_implicit_casting = true")
        for name, (function, result) in RPATH_FUNCTIONS.items():
            text = duckdb.sqltypes.VARCHAR
            connection.create_function(
                f"flowcore_{name}", function, [text, text, text], duckdb.sqltype(result)
            )
        for macro in CALCITE_MACROS:
            connection.execute(macro)
    except BaseException:
        connection.close()
        raise
    return connection
