"""DuckDB connections that run NiFi's Calcite SQL (QueryRecord, JoinEnrichment's SQL strategy).

NiFi runs these queries with Apache Calcite; flowcore runs them with DuckDB. Where the two
differ in a way DuckDB can be told about, each connection is told when it opens, so a query
written for NiFi runs unchanged and nothing rewrites its text (a text rewrite could touch a
string literal or a quoted identifier; the one rewrite, ``AVG``'s below, is on the parse tree):

- settings: text compared with a number is cast, as Calcite does (``old_implicit_casting``);
  an integer divided by an integer is an integer, truncated, as Calcite's (and Java's) ``/``
  is (``integer_division``: ``7 / 2`` is ``3``, ``-7 / 2`` is ``-3``);
- a macro under the built-in's own name where DuckDB's type differs from Calcite's (the
  built-in stays reachable as ``system.main.<name>``; the macro lives in the connection's
  temporary schema, which DuckDB searches first);
- NiFi's own functions, RecordPath's ``RPATH`` family (``_rpath_functions``): a macro per
  function that hands a Python function its argument as JSON, with its DuckDB type.

One difference needs the query changed, and :func:`calcite_relation` changes it on DuckDB's
own parse tree (``json_serialize_sql``; literals and identifiers stay as they were): Calcite's
``AVG`` has its argument's type (``AVG`` of INTEGERs is an INTEGER, truncated), where DuckDB's
is a DOUBLE. Calcite computes it as ``CAST(SUM(x) / COUNT(x) AS <type of x>)``
(``AggregateReduceFunctionsRule``), and so does the rewritten query, with DuckDB's
``cast_to_type`` (no macro can stand for an aggregate that takes ``DISTINCT``, ``FILTER`` or
``OVER``: a rewrite keeps them). A query without ``avg`` is not touched.

Records cross to DuckDB and back through :func:`sql_schema` and :func:`result_schema`: a
CHOICE column (its values' JSON text, docs/records.md) is DuckDB's JSON in the SQL, so a result
column that is still JSON and that the parse tree shows passing CHOICE columns through (the
column, an alias, a ``CASE``/``COALESCE``/``UNION``/``MIN``/``MAX`` of them:
:func:`passed_columns`) is written back as a CHOICE; JSON the query made (``to_json``) is
written as its text; any other result column named as an input field of the same Arrow
type keeps that field's NiFi type (NiFi's ``ResultSetRecordSet`` takes the reader schema's
type of a column of the same name).

What is left different is listed in docs/processors.md (QueryRecord's SQL).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar

import duckdb
import pyarrow as pa

from flowcore.records.schema import NIFI_TYPE_KEY
from processors._rpath_functions import RPATH_FUNCTIONS

__all__ = [
    "CALCITE_MACROS",
    "DuckConnections",
    "calcite_connection",
    "calcite_relation",
    "choice_hint",
    "passed_columns",
    "result_batches",
    "result_schema",
    "run_query",
    "sql_batches",
    "sql_schema",
]

_T = TypeVar("_T")

#: DuckDB's JSON type, as Arrow's canonical JSON extension type (DuckDB reads it as JSON).
_JSON = pa.json_(pa.string())

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
        connection.execute("SET integer_division = true")
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


class DuckConnections:
    """One :func:`calcite_connection` per thread for one processor, all closed when it stops.

    A connection costs ~20 ms to open (set up for Calcite's SQL) against ~1 ms a query, so a
    thread keeps its own (a connection is not shared between threads; each query registers
    its tables and unregisters them after: QueryRecord's FLOWFILE, JoinEnrichment's
    ``original`` and ``enrichment``). :meth:`close` (the processor's
    ``on_stopped``, or the processor being collected, as on a Spark executor that drops its
    copy) closes every one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_thread: dict[int, duckdb.DuckDBPyConnection] = {}

    @classmethod
    def of(cls, owner: object) -> DuckConnections:
        """*owner*'s connections, made at its first query and kept as its ``_connections``.

        Closed when *owner* is collected; *owner* leaves them out when pickled (each copy
        opens its own).
        """
        connections = owner.__dict__.get("_connections")
        if connections is None:
            connections = cls()
            owner.__dict__["_connections"] = connections
            weakref.finalize(owner, connections.close)
        return connections

    def __len__(self) -> int:
        return len(self._by_thread)

    def get(self) -> duckdb.DuckDBPyConnection:
        """This thread's connection (opened at its first query)."""
        thread = threading.get_ident()
        connection = self._by_thread.get(thread)
        if connection is None:
            connection = calcite_connection()
            with self._lock:
                self._by_thread[thread] = connection
        return connection

    def close(self) -> None:
        """Close every thread's connection (the next query opens a new one)."""
        with self._lock:
            connections, self._by_thread = list(self._by_thread.values()), {}
        for connection in connections:
            connection.close()


#: Queries rewritten for Calcite's AVG, by their text (None: not changed): a QueryRecord runs
#: the same query for every FlowFile, and the rewrite (~4 ms) costs more than the query.
_REWRITTEN: dict[str, str | None] = {}
#: Queries a memo (:func:`_memo`) keeps before it starts again.
_MEMO_MAX = 512  # queries


def calcite_relation(
    connection: duckdb.DuckDBPyConnection, sql: str
) -> duckdb.DuckDBPyRelation | None:
    """*sql* as a relation on *connection*, Calcite's ``AVG`` in it (None: not a query).

    The result columns keep the names DuckDB gives the query as written (an unnamed
    ``AVG(points)`` stays ``avg(points)``).

    Raises:
        duckdb.Error: the SQL is invalid or names what is not there.
    """
    if "avg" in sql.lower():
        rewritten = _memo(_REWRITTEN, sql, lambda: _calcite_avg(connection, sql))
        if rewritten is not None:
            return connection.sql(rewritten)
    return connection.sql(sql)


@contextmanager
def run_query(
    connection: duckdb.DuckDBPyConnection,
    sql: str,
    inputs: Sequence[pa.Schema],
    rows: int,
    *,
    not_select: str,
    rename: Callable[[list[str]], list[str]] | None = None,
) -> Iterator[tuple[pa.Schema, Iterator[pa.RecordBatch]]]:
    """Run *sql* (over tables registered on *connection*, of schemas *inputs*).

    Yields its NiFi-typed schema (:func:`result_schema`) and its batches of up to *rows*
    rows under it; the result is closed on leaving (DuckDB refuses to unregister a table
    under an open result). *rename* gives the result columns other names (JoinEnrichment's
    Calcite names of repeated columns); a renamed column passes through the one of its
    DuckDB name.

    Raises:
        duckdb.InvalidInputException: *sql* is not a SELECT (*not_select* says so).
        duckdb.Error: the SQL is invalid or fails on the data; DuckDB failing to read text
            as JSON (here or in the body) says how to compare a CHOICE (:func:`choice_hint`).
    """
    result = None
    try:
        relation = calcite_relation(connection, sql)
        if relation is None:  # a statement that returns no rows (CREATE, SET ...)
            raise duckdb.InvalidInputException(not_select)
        sql_types = [str(t) for t in relation.types]
        # parsed before the result opens: DuckDB runs nothing else under an open one
        passed = passed_columns(connection, sql) if "JSON" in sql_types else None
        stream = getattr(relation, "to_arrow_reader", None)
        result = (stream or relation.fetch_arrow_reader)(rows)
        names = result.schema.names if rename is None else rename(result.schema.names)
        renamed = result.schema
        if names != result.schema.names:
            if passed is not None:  # a repeated column (v0) passes through the one of its name
                renamed_from = zip(result.schema.names, names, strict=True)
                passed = {**passed, **{n.lower(): ((o,),) for o, n in renamed_from if n != o}}
            renamed = pa.schema([f.with_name(n) for f, n in zip(result.schema, names, strict=True)])
        schema = result_schema(renamed, sql_types, inputs, passed)
        batches = (
            batch.rename_columns(names) if names != batch.schema.names else batch
            for batch in result
        )
        yield schema, result_batches(batches, schema)
    except duckdb.ConversionException as error:
        raise choice_hint(error, pa.schema([f for s in inputs for f in s])) from error
    finally:
        if result is not None:
            result.close()


def _memo(cache: dict[str, _T], sql: str, make: Callable[[], _T]) -> _T:
    """*cache*'s value for *sql*, made by *make* the first time (emptied at ``_MEMO_MAX``)."""
    if sql in cache:
        return cache[sql]
    value = make()
    if len(cache) >= _MEMO_MAX:
        cache.clear()
    cache[sql] = value
    return value


def _calcite_avg(connection: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """*sql* with each ``avg(x)`` as Calcite computes it, or None when it has none.

    A selected expression holding an ``avg`` and no alias gets the name DuckDB gives it as
    written (its text: ``avg(points)``, ``(avg(points) + 1)``), so the rewrite names no
    column differently.
    """
    tree = _parse(connection, sql)
    if tree is None:
        return None  # not one SELECT: DuckDB says what is wrong when it runs
    for select in _nodes(tree, "SELECT_NODE"):
        for item in select.get("select_list") or ():
            if isinstance(item, dict) and not item.get("alias") and _has_avg(item):
                item["alias"] = _text(connection, item)
    if not _replace_avg(tree):
        return None
    return _unparse(connection, tree)


def _parse(connection: duckdb.DuckDBPyConnection, sql: str) -> dict | None:
    """DuckDB's parse tree of *sql* (``json_serialize_sql``), or None when it has none."""
    text = connection.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0]
    tree = json.loads(text)
    return None if tree.get("error") else tree


def _unparse(connection: duckdb.DuckDBPyConnection, tree: dict) -> str:
    """The SQL of a parse tree (``json_deserialize_sql``)."""
    text = json.dumps(tree, separators=(",", ":"))
    return str(connection.execute("SELECT json_deserialize_sql(?::JSON)", [text]).fetchall()[0][0])


def _text(connection: duckdb.DuckDBPyConnection, expression: dict) -> str:
    """DuckDB's text of one parsed *expression* (the name of a column it makes)."""
    tree = _parse(connection, "SELECT 1")
    assert tree is not None
    tree["statements"][0]["node"]["select_list"] = [expression]
    return _unparse(connection, tree).removeprefix("SELECT ")


def _nodes(node: object, kind: str) -> list[dict]:
    """Every node of type *kind* under *node* (subqueries, CTEs and UNION sides included).

    *kind*: ``SELECT_NODE``, or ``SET_OPERATION_NODE`` (a UNION/INTERSECT/EXCEPT).
    """
    found = []
    if isinstance(node, dict):
        if node.get("type") == kind:
            found.append(node)
        for item in node.values():
            found.extend(_nodes(item, kind))
    elif isinstance(node, list):
        for item in node:
            found.extend(_nodes(item, kind))
    return found


def _has_avg(node: object) -> bool:
    """Whether *node* holds an ``avg`` call (see :func:`_is_avg`)."""
    if _is_avg(node):
        return True
    if isinstance(node, dict):
        return any(_has_avg(item) for item in node.values())
    if isinstance(node, list):
        return any(_has_avg(item) for item in node)
    return False


def _replace_avg(node: object) -> int:
    """Replace every ``avg`` call under *node* (in place); how many were replaced."""
    count = 0
    if isinstance(node, list):
        for i, item in enumerate(node):
            if _is_avg(item):
                node[i] = _calcite_avg_of(item)
                count += 1
            count += _replace_avg(node[i])
    elif isinstance(node, dict):
        for key, item in node.items():
            if _is_avg(item):
                node[key] = _calcite_avg_of(item)
                count += 1
            count += _replace_avg(node[key])
    return count


def _is_avg(node: object) -> bool:
    """Whether *node* is a call of the built-in ``avg`` with one argument."""
    return (
        isinstance(node, dict)
        and node.get("class") in ("FUNCTION", "WINDOW")
        and str(node.get("function_name", "")).lower() == "avg"
        and not node.get("schema")
        and not node.get("catalog")
        and len(node.get("arguments") or ()) == 1
    )


def _calcite_avg_of(avg: dict[str, object]) -> dict[str, object]:
    """``cast_to_type(sum(x) / count(x), min(x))`` with *avg*'s DISTINCT, FILTER and OVER."""

    def same_call(name: str) -> dict[str, object]:
        call = json.loads(json.dumps(avg))
        call.update(function_name=name, alias="", qualified_name={"path": [name]})
        return call

    def function(name: str, *arguments: dict[str, object], operator: bool = False) -> dict:
        return {
            "class": "FUNCTION",
            "type": "FUNCTION",
            "alias": "",
            "query_location": avg.get("query_location", 0),
            "function_name": name,
            "schema": "",
            "filter": None,
            "order_bys": {"type": "ORDER_MODIFIER", "orders": []},
            "distinct": False,
            "is_operator": operator,
            "export_state": False,
            "catalog": "",
            "arguments": [{"name": "", "expression": a} for a in arguments],
            "qualified_name": {"path": [name]},
            "is_legacy_function_call": False,
        }

    # integer_division is on: "/" of integers truncates, as Calcite's does
    quotient = function("/", same_call("sum"), same_call("count"), operator=True)
    result = function("cast_to_type", quotient, same_call("min"))
    result["alias"] = avg.get("alias", "")
    return result


def _choice(field: pa.Field) -> dict[str, object] | None:
    """*field*'s CHOICE type as NiFi type JSON, or None for a field of another type."""
    meta = (field.metadata or {}).get(NIFI_TYPE_KEY)
    if meta is None:
        return None
    dtype = json.loads(meta)
    return dtype if isinstance(dtype, dict) and dtype.get("type") == "choice" else None


def choice_hint(error: duckdb.ConversionException, schema: pa.Schema) -> duckdb.Error:
    """*error*, saying how to compare a CHOICE column when DuckDB failed to read text as JSON.

    A CHOICE column is JSON in the SQL, so ``v = 'abc'`` reads ``'abc'`` as JSON and fails.
    """
    choices = [field.name for field in schema if _choice(field) is not None]
    if not choices or "JSON" not in str(error):
        return error
    name = choices[0]
    msg = (
        f"{error}\n(the CHOICE field(s) {', '.join(choices)} are JSON in the SQL: compare a "
        f"value as text with {name}->>'$' = 'abc', or cast it: CAST({name} AS INTEGER))"
    )
    return duckdb.ConversionException(msg)


def sql_schema(schema: pa.Schema) -> pa.Schema:
    """*schema* as the SQL sees it: a CHOICE column is DuckDB's JSON (its values' JSON text).

    JSON rather than text: a result column still JSON is known for a CHOICE passed through
    (:func:`result_schema`), where text would be written as a string holding JSON.
    """
    if not any(_choice(field) for field in schema):
        return schema
    return pa.schema(
        [pa.field(f.name, _JSON, f.nullable, f.metadata) if _choice(f) else f for f in schema],
        metadata=schema.metadata,
    )


def sql_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """*batches* under *schema* (:func:`sql_schema` of theirs): zero-copy for the JSON."""
    for batch in batches:
        yield batch if batch.schema.equals(schema) else batch.cast(schema)


#: Each query's columns a value passes through unchanged (see :func:`passed_columns`), by
#: its text: the same query runs for every FlowFile, and parsing it costs more than it.
_PASSED: dict[str, dict[str, tuple[tuple[str, ...] | None, ...]]] = {}

#: Functions whose result is one of their arguments' values, unchanged (a CHOICE's JSON
#: stays one of its values).
_PASSING = frozenset(
    {
        "any_value",
        "arbitrary",
        "coalesce",
        "first",
        "first_value",
        "greatest",
        "ifnull",
        "last",
        "last_value",
        "least",
        "max",
        "min",
    }
)


def passed_columns(
    connection: duckdb.DuckDBPyConnection, sql: str
) -> dict[str, tuple[tuple[str, ...] | None, ...]]:
    """Each name *sql* gives a column, lowercased, to what its values come from.

    One entry per place the name is given (any SELECT of the query, a UNION's later sides
    under the first side's names): the columns whose values it passes through unchanged (a
    column, or a ``CASE``/``COALESCE``/``MIN``/``MAX``/``CAST(... AS JSON)`` of columns),
    or None when the query makes its values (``to_json(r)``, ``v || 'x'``). A name the
    query never gives (``SELECT *``) is not in it. :func:`result_schema` reads it to tell
    a CHOICE passed through from JSON the query made.
    """
    return _memo(_PASSED, sql, lambda: _passed_names(connection, sql))


def _passed_names(
    connection: duckdb.DuckDBPyConnection, sql: str
) -> dict[str, tuple[tuple[str, ...] | None, ...]]:
    """:func:`passed_columns` of *sql*, parsed (nothing when it does not parse)."""
    tree = _parse(connection, sql)
    if tree is None:
        return {}
    given: dict[str, list[tuple[str, ...] | None]] = {}
    for select in _nodes(tree, "SELECT_NODE"):
        for item in select.get("select_list") or ():
            name = _given_name(connection, item)
            if name is not None:
                given.setdefault(name.lower(), []).append(_passed(item))
    for node in _nodes(tree, "SET_OPERATION_NODE"):  # later sides' columns under the first's names
        sides = [c for c in node.get("children") or () if c.get("type") == "SELECT_NODE"]
        if len(sides) < 2:
            continue
        names = [_given_name(connection, item) for item in sides[0].get("select_list") or ()]
        for side in sides[1:]:
            for name, item in zip(names, side.get("select_list") or (), strict=False):
                if name is not None:
                    given.setdefault(name.lower(), []).append(_passed(item))
    return {name: tuple(sources) for name, sources in given.items()}


def _given_name(connection: duckdb.DuckDBPyConnection, item: dict) -> str | None:
    """The name of the column a select-list *item* makes (None: a ``*``, or no matter)."""
    if not isinstance(item, dict) or item.get("class") == "STAR":
        return None
    if item.get("alias"):
        return str(item["alias"])
    if item.get("class") == "COLUMN_REF":
        return str(item["column_names"][-1])
    if _passed(item):  # DuckDB names it its text: COALESCE(v, w)
        return _text(connection, item)
    return None


def _passed(node: object) -> tuple[str, ...] | None:
    """The columns whose values *node* passes through unchanged; None: it makes values."""
    if not isinstance(node, dict):
        return None
    kind = node.get("class")
    children: list[object]
    if kind == "COLUMN_REF":
        return (str(node["column_names"][-1]),)
    if kind == "CONSTANT":
        literal = node.get("literal") or {}
        return () if literal.get("kind") == "NULL_LITERAL" else None
    if kind == "CASE":
        checks = node.get("case_checks") or ()
        children = [check.get("then_expr") for check in checks]
        children.append(node.get("else_expr"))
    elif kind == "OPERATOR" and node.get("type") == "OPERATOR_COALESCE":
        children = list(node.get("children") or ())
    elif kind == "CAST":
        target = (node.get("type_expr") or {}).get("type_name")
        if str(target).upper() != "JSON" or node.get("try_cast"):
            return None
        children = [node.get("child")]
    elif kind in ("FUNCTION", "WINDOW"):
        name = str(node.get("function_name", "")).lower()
        if name not in _PASSING or node.get("schema") or node.get("catalog"):
            return None
        children = [argument.get("expression") for argument in node.get("arguments") or ()]
    else:
        return None
    columns: list[str] = []
    for child in children:
        passed = _passed(child)
        if passed is None:
            return None
        columns.extend(passed)
    return tuple(columns)


def result_schema(
    result: pa.Schema,
    sql_types: Sequence[str],
    inputs: Sequence[pa.Schema],
    passed: Mapping[str, tuple[tuple[str, ...] | None, ...]] | None = None,
) -> pa.Schema:
    """The NiFi-typed schema of a DuckDB result (*sql_types*: DuckDB's type of each column).

    A JSON column is a CHOICE when its values are an input CHOICE field's, passed through
    (*passed*: the query's :func:`passed_columns`): the input CHOICE field of its name
    (``SELECT *``, ``SELECT v``), or one of the options of every CHOICE it passes
    (``v AS w``, ``COALESCE(v, w)``). Any other JSON column is JSON the query made
    (``to_json(r)``, ``r::JSON``, ``json_extract``, or a mix with a CHOICE): written as its
    text. Another column named as an input field (case-insensitively, as DuckDB matches
    names) of the same Arrow type keeps that field's metadata (enum, uuid, char, bigint, a
    nested CHOICE...).
    """
    by_name: dict[str, pa.Field] = {}
    for schema in inputs:
        for field in schema:
            by_name.setdefault(field.name, field)
            by_name.setdefault(field.name.lower(), field)
    fields = []
    for field, sql_type in zip(result, sql_types, strict=True):
        source = by_name.get(field.name) or by_name.get(field.name.lower())
        options = _passed_options(field.name, by_name, passed or {}, frozenset())
        if sql_type == "JSON" and options:
            choice = {"type": "choice", "options": options}
            text = json.dumps(choice, separators=(",", ":"))
            fields.append(pa.field(field.name, pa.string(), True, {NIFI_TYPE_KEY: text}))
        elif source is not None and _choice(source) is None and source.type.equals(field.type):
            # a text column named as a CHOICE is text made by the query (v || 'x' AS v)
            fields.append(pa.field(field.name, source.type, True, source.metadata))
        else:
            fields.append(field)
    return pa.schema(fields)


def _passed_options(
    name: str,
    by_name: Mapping[str, pa.Field],
    passed: Mapping[str, tuple[tuple[str, ...] | None, ...]],
    seen: frozenset[str],
) -> list[object] | None:
    """The CHOICE options of the values of column *name* (None: not all an input CHOICE's).

    Every place the query gives the name must pass only CHOICE columns through (a name it
    never gives, or gives as the column itself, is the input field of that name).
    """
    key = name.lower()
    if key in seen or key not in passed:
        field = by_name.get(name) or by_name.get(key)
        choice = _choice(field) if field is not None else None
        return list(choice.get("options") or ["string"]) if choice is not None else None
    options: list[object] = []
    for columns in passed[key]:
        if columns is None:
            return None  # made by the query
        for column in columns:
            found = _passed_options(column, by_name, passed, seen | {key})
            if found is None:
                return None
            options.extend(option for option in found if option not in options)
    return options or None


def result_batches(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """DuckDB's result *batches* under their :func:`result_schema` (the arrays unchanged)."""
    for batch in batches:
        if batch.schema.equals(schema, check_metadata=True):
            yield batch
        else:
            yield pa.RecordBatch.from_arrays(
                [
                    column.cast(field.type)
                    for column, field in zip(batch.columns, schema, strict=True)
                ],
                schema=schema,
            )
