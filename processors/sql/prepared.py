"""PostgreSQL's two-phase commit for PutDatabaseRecord: exactly-once writes across a crash.

A task writes a FlowFile's rows in one transaction and ends it with ``PREPARE TRANSACTION
'gid'`` instead of COMMIT: the rows are on disk in the database but invisible, and survive a
crash of either side. The session records an after-commit action naming the gid; after the
driver's write-ahead log transaction makes the FlowFile durable, ``COMMIT PREPARED 'gid'``
makes the rows visible. It is never given up: a lost connection is retried here, and every
error (the connection's, the statement's, an unreachable pool) keeps the action pending, tried
again with a backoff and across a restart: the log says committed. At start-up, once every
committed action is handed over, :func:`roll_back_strays` rolls back this component's
prepared transactions that no pending action (held open, or in a pending file) names: their
tasks never committed, so their FlowFiles will be written again.

Scope: a gid is ``flowcore-<repository id>-<component digest>-<random>``, the repository id
being random and kept in the repository (:attr:`RepositorySet.repository_id`), the digest that
of the component's stable id. A sweep touches only its own prefix, so two flows, or two
repositories running one flow, against one database never roll back each other's work. A
copy of a repository (another directory: ``cp -r``, a move across file systems, a restore
into another path; one restored in place keeps its id) takes a new id at its first start and
keeps the old one as *former*: what its pending files name under it is committed (by gid),
the rest is the original directory's, so never swept, only told (:func:`tell_former_strays`).
Where two processes still share an id (one directory mounted on two hosts, copies mounted at
one path on two hosts, a copy made before ids were kept with their directory),
:func:`hold_repository_lock` (a PostgreSQL advisory lock held by the sweeping process)
refuses the second at once.

Every FlowFile of a stage run holds one prepared transaction until the run's commit, and the
server holds at most ``max_prepared_transactions`` (for every client together): once they are
taken, :func:`prepare` raises :class:`TryLater`, the processor rolls the FlowFile's session
back (it stays queued) and yields, and the next stage run, after this one's commit has freed
them, takes it. A prepared transaction also keeps its locks: one a dead task attempt left (a
Spark executor lost after PREPARE) would block the attempt run in its place for ever, so a
two-phase transaction waits for a lock at most :data:`LOCK_TIMEOUT` and then tries later too;
the driver rolls back such strays after every commit of the stage (and at start-up).

PREPARE needs ``max_prepared_transactions > 0`` (PostgreSQL ships 0). :func:`can_prepare`
asks the server once per process and pool; where it is 0 the processor commits in the task as
before (at-least-once for INSERT) and logs one warning per database and process naming the
setting.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from flowcore.errors import AfterCommitRetry, ConfigurationError, ProcessException
from flowcore.session.host import ComponentInfo

__all__ = [
    "COMMIT_ATTEMPTS",
    "LOCK_TIMEOUT",
    "SWEEP_TIMEOUT",
    "TryLater",
    "begin",
    "can_prepare",
    "check_still_open",
    "commit_prepared",
    "former_prefixes",
    "gid_prefix",
    "hold_repository_lock",
    "lock_timed_out",
    "new_gid",
    "prepare",
    "refuse_transaction_end",
    "repository_lock_key",
    "roll_back_strays",
    "tell_former_strays",
]

LOG = logging.getLogger("flowcore.processors.PutDatabaseRecord")
#: How long a two-phase transaction waits for a row lock before its FlowFile waits queued.
LOCK_TIMEOUT = "10s"
#: How long one statement of a sweep (:func:`roll_back_strays`) may take.
SWEEP_TIMEOUT = "5s"
#: COMMIT PREPARED tries per after-commit hand-over before the action is kept for later.
COMMIT_ATTEMPTS = 4
BACKOFF_SECONDS = 0.25  # doubled after each failed try
_GID = re.compile(r"flowcore-[0-9a-f]{1,32}-[0-9a-f]{12}-[0-9a-f]{32}")
_UNDEFINED_OBJECT = "42704"  # "prepared transaction with identifier ... does not exist"
#: "maximum number of prepared transactions reached" in reply to PREPARE TRANSACTION
#: (PostgreSQL reports out_of_memory; configuration_limit_exceeded is matched too)
_LIMIT_EXCEEDED = ("53200", "53400")
#: feature_not_supported in reply to PREPARE TRANSACTION: temporary objects, exported snapshots
_NOT_SUPPORTED = "0A000"
#: A statement that ends the transaction it runs in (comments before it skipped); ROLLBACK TO
#: (a savepoint) does not.
_ENDS_TRANSACTION = re.compile(
    r"(?:\s|--[^\n]*|/\*.*?\*/)*"
    r"(?:COMMIT|END|ABORT|ROLLBACK(?!\s+(?:WORK\s+|TRANSACTION\s+)?TO\b)|PREPARE\s+TRANSACTION)\b",
    re.IGNORECASE | re.DOTALL,
)
_IDLE = 0  # libpq's PQTRANS_IDLE (psycopg's and psycopg2's transaction_status): no transaction


class TryLater(ProcessException):
    """The FlowFile's transaction was rolled back for a reason that passes: take it again later.

    The server holds ``max_prepared_transactions`` already, or a lock wait ran past
    :data:`LOCK_TIMEOUT` (a prepared transaction of a dead attempt may hold the lock).
    """


_checked: dict[tuple[int, str], bool] = {}
_warned: set[str] = set()  # databases warned about, once per process
_checked_lock = threading.Lock()


def gid_prefix(component: ComponentInfo) -> str | None:
    """The gids of *component* in its repository start so; None without a repository id."""
    if not component.repository_id or not re.fullmatch(r"[0-9a-f]{1,32}", component.repository_id):
        return None
    digest = hashlib.blake2b(component.id.encode("utf-8", "surrogatepass"), digest_size=6)
    return f"flowcore-{component.repository_id}-{digest.hexdigest()}-"


def former_prefixes(component: ComponentInfo) -> list[str]:
    """The gid prefixes *component* had under its repository's former ids (never swept)."""
    found = []
    for former in component.former_repository_ids:
        prefix = gid_prefix(ComponentInfo(component.id, component.type, "", former))
        if prefix is not None:
            found.append(prefix)
    return found


_locks: dict[tuple[str, str], Any] = {}  # (database, repository id) -> the holding connection
_locks_lock = threading.Lock()


def repository_lock_key(repository_id: str) -> int:
    """The advisory lock key (a signed 64-bit int) that says *repository_id* runs two-phase."""
    digest = hashlib.blake2b(f"flowcore-2pc-{repository_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def hold_repository_lock(engine: Any, repository_id: str, system: str) -> None:
    """Hold the repository's advisory lock in *engine*'s database for this process's life.

    Two processes under one repository id (one directory mounted on two hosts, copies
    mounted at one path on two hosts, a copy made before a repository kept its directory's
    identity) share a gid prefix, and one's sweep
    would roll back the other's prepared transactions (rows its FlowFiles say were written).
    The lock, held on a connection of its own (detached from the pool), lets one process at a
    time sweep, and so run two-phase, under an id in a database.

    Called before every sweep: a lock whose session ended is taken again (or refused), so a
    sweep runs only while this process holds the lock.

    Raises:
        ConfigurationError: another process holds it (a copy of this repository runs).
    """
    key = (engine.url.render_as_string(hide_password=True), repository_id)
    lock_key = repository_lock_key(repository_id)
    with _locks_lock:
        held = _locks.pop(key, None)
        if held is not None:
            if _still_held(held, lock_key):
                _locks[key] = held
                return
            with contextlib.suppress(Exception):  # its session ended: the lock went with it
                held.close()
        connection = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            connection.detach()  # not the pool's: it lives as long as the process
            taken = connection.exec_driver_sql(
                "SELECT pg_try_advisory_lock(%(key)s)", {"key": lock_key}
            ).scalar()
        except BaseException:
            connection.close()
            raise
        if not taken:
            connection.close()
            msg = (
                f"another process runs a flow on a repository with the id {repository_id} "
                f"against {system}: this repository from another host; a copy of it started "
                "at the same path on another host or in another container (the same path "
                "counts as the same directory, so the copy keeps the id); or a copy made "
                "before flowcore kept a repository's directory identity. "
                "Their PostgreSQL sweeps would roll back each other's prepared transactions, "
                "so this one does not start: stop the other, or give the copy a repository "
                "of its own (a fresh directory) (docs/sql.md)"
            )
            raise ConfigurationError(msg)
        _locks[key] = connection


def _still_held(connection: Any, lock_key: int) -> bool:
    """Whether *connection*'s session holds the advisory lock *lock_key* at this moment.

    Its session can end under it (a server restart, an idle timeout, a DBA, a proxy) with
    ``closed`` and ``invalidated`` still False, and the lock is gone with it: a copy could
    take it. So each sweep asks the server: re-entrant, the lock is taken once more and
    given back, leaving it held once.
    """
    if connection.closed or connection.invalidated:
        return False
    try:
        return bool(
            connection.exec_driver_sql(
                "SELECT CASE WHEN pg_try_advisory_lock(%(key)s) "
                "THEN pg_advisory_unlock(%(key)s) ELSE false END",
                {"key": lock_key},
            ).scalar()
        )
    except Exception:  # a lost session: the lock is taken again on a fresh connection
        return False


def new_gid(prefix: str) -> str:
    """A fresh gid under *prefix* (one per FlowFile attempt: a replay prepares anew)."""
    return prefix + uuid.uuid4().hex


def can_prepare(engine: Any, system: str) -> bool:
    """Whether *engine*'s database takes PREPARE TRANSACTION (asked once per engine).

    PostgreSQL with ``max_prepared_transactions > 0`` does; with 0 one warning names the
    setting (once per database and process); other databases do not (no warning: their path
    is documented).
    """
    key = (id(engine), engine.url.render_as_string(hide_password=True))
    with _checked_lock:
        known = _checked.get(key)
    if known is not None:
        return known
    able = False
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            value = connection.exec_driver_sql("SHOW max_prepared_transactions").scalar()
        able = int(value or 0) > 0
        with _checked_lock:
            warn = not able and key[1] not in _warned
            _warned.add(key[1])
        if warn:
            LOG.warning(
                "PutDatabaseRecord writes into %s at-least-once: its max_prepared_transactions "
                "is 0, so PREPARE TRANSACTION is refused. Set max_prepared_transactions (for "
                "instance to max_connections) in postgresql.conf and restart PostgreSQL for "
                "exactly-once writes (docs/sql.md)",
                system,
            )
    with _checked_lock:
        _checked[key] = able
    return able


def begin(connection: Any) -> None:
    """Bound the lock waits of *connection*'s transaction (see :data:`LOCK_TIMEOUT`)."""
    connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")


def lock_timed_out(error: BaseException) -> bool:
    """Whether *error* is a lock wait past :data:`LOCK_TIMEOUT` (``lock_not_available``)."""
    return _sqlstate(error) == "55P03"


def _ended_message(place: str, statement: str) -> str:
    return (
        f"{place} statement [{statement}] ends the FlowFile's transaction, which PutDatabase"
        "Record ends itself with PREPARE TRANSACTION and commits (COMMIT PREPARED) only once "
        "the FlowFile is committed (two-phase commit, exactly once): a COMMIT, END, ROLLBACK, "
        "ABORT or PREPARE TRANSACTION there would make rows visible before that, and a replay "
        f"would write them again. Remove it from {place} (docs/sql.md)"
    )


def refuse_transaction_end(statement: str, place: str) -> None:
    """Refuse, before it runs, a user statement that ends the two-phase transaction.

    Raises:
        ProcessException: *statement* (of *place*: Pre-Processing SQL, say) starts with
            COMMIT, END, ABORT, ROLLBACK (not ROLLBACK TO a savepoint) or PREPARE
            TRANSACTION; nothing of it has run.
    """
    if _ENDS_TRANSACTION.match(statement):
        raise ProcessException(_ended_message(place, statement))


def check_still_open(connection: Any, statement: str, place: str) -> None:
    """After a user statement under two-phase commit: its transaction must still be open.

    A statement :func:`refuse_transaction_end` does not see (a record's SQL holding several
    statements, ``SELECT 1; COMMIT``) may still end it; the driver's transaction status says
    so without a round trip (libpq keeps it from the server's last reply).

    Raises:
        ProcessException: the transaction ended (what ran before the statement's end may
            already be committed: the message says so).
    """
    driver = getattr(connection.connection, "driver_connection", None)
    status = getattr(getattr(driver, "info", None), "transaction_status", None)
    if status is not None and int(status) == _IDLE:
        msg = (
            f"{_ended_message(place, statement)}. The statements before its end may "
            "already be committed"
        )
        raise ProcessException(msg)


def prepare(connection: Any, gid: str, places: Sequence[str] = ()) -> None:
    """End *connection*'s transaction with PREPARE TRANSACTION *gid* (it is then detached).

    *places* are the properties whose SQL ran in the transaction (named when PostgreSQL
    refuses to prepare it).

    Raises:
        TryLater: the server holds ``max_prepared_transactions`` already.
        ProcessException: PostgreSQL cannot prepare this transaction (it used temporary
            objects: a temporary table of Pre-Processing SQL, say).
    """
    if not _GID.fullmatch(gid):  # it is spliced into the statement: never anything else
        msg = f"not a flowcore gid: {gid!r}"
        raise ValueError(msg)
    try:
        connection.exec_driver_sql(f"PREPARE TRANSACTION '{gid}'")
    except Exception as error:
        # The SQLSTATE in reply to PREPARE TRANSACTION, not the (translated) message text.
        state = _sqlstate(error)
        if state in _LIMIT_EXCEEDED:
            raise TryLater(str(error)) from error
        if state == _NOT_SUPPORTED:
            lines = str(getattr(error, "orig", error)).strip().splitlines()
            where = " or ".join(places) or "the FlowFile's SQL"
            msg = (
                f"PostgreSQL cannot PREPARE the FlowFile's transaction "
                f"({lines[0] if lines else state}), and PutDatabaseRecord ends every FlowFile's "
                "transaction with PREPARE TRANSACTION (two-phase commit) where "
                "max_prepared_transactions > 0. A temporary table (or other temporary "
                f"object) made or used in {where} is the usual cause: use a regular table "
                "(UNLOGGED for scratch data), or write at-least-once with "
                "max_prepared_transactions = 0 (docs/sql.md)"
            )
            raise ProcessException(msg) from error
        raise


def commit_prepared(engine: Any, gids: Sequence[str], system: str) -> None:
    """COMMIT PREPARED each of *gids*; one already committed is done (idempotent).

    A lost connection is retried :data:`COMMIT_ATTEMPTS` times with a doubling backoff. Every
    error raises :class:`AfterCommitRetry` naming the gids left, which stay pending (the
    worker tries again later, and the next start): their FlowFiles are committed, so giving
    up (42501 permission denied, 57014 statement timeout, a pool disabled in an edited flow)
    would let a later sweep roll back rows the log says were written.
    """
    left = [g for g in gids if _GID.fullmatch(g)]
    delay = BACKOFF_SECONDS
    error: BaseException | None = None
    for attempt in range(COMMIT_ATTEMPTS):
        if attempt:
            time.sleep(delay)
            delay *= 2
        try:
            with _autocommit(engine) as connection:
                while left:
                    _finish(connection, "COMMIT", left[0])
                    left.pop(0)
            return
        except Exception as problem:
            error = problem
            if not _lost_connection(problem):
                break  # the statement's error: tried again after the runner's backoff
    state = _sqlstate(error) if error is not None else None
    tries = f" after {attempt + 1} tries" if attempt else ""
    msg = (
        f"could not COMMIT PREPARED {len(left)} transaction(s) in {system}{tries}"
        f"{f' (SQLSTATE {state})' if state else ''}: {type(error).__name__}: {error}; they "
        "stay prepared and pending, and are committed once the database takes it (tried "
        "again with a backoff, and at the next start)"
    )
    raise AfterCommitRetry(msg, processor="PutDatabaseRecord") from error


def roll_back_strays(engine: Any, prefix: str, keep: Iterable[str]) -> list[str]:
    """ROLLBACK PREPARED this component's prepared transactions not in *keep*; those rolled back.

    Only gids under *prefix* (this repository's, this component's) in this database are
    looked at: another flow's or repository's in-flight work is never touched.
    """
    kept = set(keep)
    with _autocommit(engine) as connection:
        # The driver sweeps between stage runs: a database that hangs may hold it up this
        # long at most (the connection's own connect_timeout bounds reaching it).
        connection.exec_driver_sql(f"SET statement_timeout = '{SWEEP_TIMEOUT}'")
        try:
            rows = connection.exec_driver_sql(
                "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                "AND starts_with(gid, %(prefix)s) ORDER BY prepared",
                {"prefix": prefix},
            ).all()
            strays = [gid for (gid,) in rows if gid not in kept and _GID.fullmatch(gid)]
            for gid in strays:
                _finish(connection, "ROLLBACK", gid)
        finally:
            _reset_statement_timeout(connection)
    return strays


_told: set[tuple[str, tuple[str, ...]]] = set()  # (database, prefixes) looked at, per process
_told_lock = threading.Lock()


def tell_former_strays(
    engine: Any, prefixes: Sequence[str], keep: Iterable[str], system: str
) -> int:
    """Warn (once per process and database) of prepared transactions under *prefixes*.

    They are the repository's under an id it had in the directory it was copied or moved
    from: that directory may run again and commit them (its log may say committed), so they
    are never rolled back here; those of attempts that never committed hold their locks
    until the other directory starts, or until someone rolls them back (docs/sql.md). Those
    in *keep* (committed actions of this repository's pending files) are being committed.

    Returns:
        How many are left so (0 when already looked at in this process, or when the
        database cannot be asked: the sweep just done reports that; asked again next time).
    """
    key = (engine.url.render_as_string(hide_password=True), tuple(prefixes))
    with _told_lock:
        if not prefixes or key in _told:
            return 0
    kept = set(keep)
    try:
        with _autocommit(engine) as connection:
            connection.exec_driver_sql(f"SET statement_timeout = '{SWEEP_TIMEOUT}'")
            try:
                rows = connection.exec_driver_sql(
                    "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                    "AND gid ^@ ANY(%(prefixes)s)",
                    {"prefixes": list(prefixes)},
                ).all()
            finally:
                _reset_statement_timeout(connection)
    except Exception as error:  # only a warning's worth: never in the way of the sweep
        LOG.debug("could not look for prepared transactions under former ids: %s", error)
        return 0
    with _told_lock:
        if key in _told:
            return 0
        _told.add(key)
    left = sorted(gid for (gid,) in rows if gid not in kept)
    if left:
        LOG.warning(
            "%d prepared transaction(s) in %s carry an id this repository had in the directory "
            "it was copied or moved from, and no pending commit of this one names them: %s. "
            "They are not rolled back here, since that directory may still commit them; it "
            "rolls back those of its attempts that never committed when it starts. If it is "
            "gone for good (moved across file systems, restored into another path), ROLLBACK "
            "PREPARED them: meanwhile they hold their rows' locks (docs/sql.md)",
            len(left), system, ", ".join(left[:5]) + (", ..." if len(left) > 5 else ""),
        )  # fmt: skip
    return len(left)


def _reset_statement_timeout(connection: Any) -> None:
    """Give the pooled session its default back; one that cannot take it is not pooled again.

    The pool's next user may be a task's transaction, which the sweep's timeout must not cut.
    """
    try:
        connection.exec_driver_sql("RESET statement_timeout")
    except Exception:  # the connection is broken: discard it
        connection.invalidate()


def _finish(connection: Any, verb: str, gid: str) -> None:
    """``COMMIT PREPARED`` or ``ROLLBACK PREPARED`` *gid*; one already gone is done."""
    try:
        connection.exec_driver_sql(f"{verb} PREPARED '{gid}'")
    except Exception as error:
        if _sqlstate(error) != _UNDEFINED_OBJECT:
            raise
        if verb == "COMMIT":  # done by an earlier try, or finished by someone else
            LOG.warning(
                "COMMIT PREPARED %s: no such prepared transaction (already committed by an "
                "earlier try, unless someone rolled it back)",
                gid,
            )
        else:
            LOG.debug("prepared transaction %s was already finished", gid)


@contextlib.contextmanager
def _autocommit(engine: Any) -> Iterator[Any]:
    """A connection outside any transaction block (COMMIT PREPARED refuses to run in one)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        yield connection


def _sqlstate(error: BaseException) -> str | None:
    original = getattr(error, "orig", error)
    return getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)


def _lost_connection(error: BaseException) -> bool:
    """Whether *error* is the connection's (worth a retry), not the statement's."""
    import sqlalchemy as sa  # noqa: PLC0415

    if isinstance(error, sa.exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, sa.exc.OperationalError | sa.exc.InterfaceError | OSError):
        return True
    state = _sqlstate(error) or ""
    return state.startswith(("08", "57P"))  # connection exception, operator intervention
