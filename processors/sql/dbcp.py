"""DBCPConnectionPool: NiFi's JDBC connection pool, as a pooled SQLAlchemy engine per process.

A NiFi flow's pool holds a JDBC URL, a Java driver class and jar locations; flowcore maps the
URL onto SQLAlchemy's with a Python driver (:mod:`processors.sql.jdbc_url`), keeps the driver
class and locations as NiFi wrote them (they are not used), and opens one pooled engine in each
process that enables the service (the driver, each Spark executor). ``Max Total Connections``
bounds the pool, ``Max Wait Time`` how long a checkout waits for a free connection, and a
``Validation Query`` is run on every checkout (a failing connection is replaced, as DBCP's
``testOnBorrow``). The password is sensitive: masked in every message and never exported.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
)
from flowcore.validators import INTEGER_VALIDATOR, NON_NEGATIVE_INTEGER_VALIDATOR, Validator
from processors.sql.jdbc_url import (
    check_driver,
    pymssql_connect_args,
    sqlalchemy_url,
    transit_uri,
    url_password,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

__all__ = ["DBCPConnectionPool", "DBCPService"]

_ENV = ExpressionLanguageScope.ENVIRONMENT
#: NiFi's prefix of a sensitive dynamic property (a driver argument that is a secret).
SENSITIVE_PREFIX = "SENSITIVE."
#: How long a new connection may take before the attempt fails (NiFi leaves it to the driver;
#: flowcore bounds every network call).
CONNECT_TIMEOUT_S = 10


def _dbcp_time_period(value: str) -> str | None:
    """NiFi's DBCPValidator.CUSTOM_TIME_PERIOD_VALIDATOR: a time period, or -1 (infinite)."""
    from flowcore.units import parse_time_period  # noqa: PLC0415 (a small, leaf module)

    if value.strip() == "-1":
        return None
    try:
        parse_time_period(value)
    except ValueError:
        return "it must be a time period such as '500 millis' or '30 mins', or -1 for no limit"
    return None


#: A DBCP time period (-1 allowed); module level so descriptors stay picklable.
DBCP_TIME_PERIOD_VALIDATOR = Validator("DBCP_TIME_PERIOD_VALIDATOR", _dbcp_time_period)


DATABASE_URL = PropertyDescriptor(
    "Database Connection URL",
    description="A database connection URL used to connect to a database: a JDBC URL "
    "(jdbc:postgresql://host:port/db) mapped to SQLAlchemy's, or a SQLAlchemy URL",
    required=True,
    el_scope=_ENV,
)
DB_DRIVERNAME = PropertyDescriptor(
    "Database Driver Class Name",
    description="Database driver class name (kept from NiFi flows; flowcore picks the Python "
    "driver from the URL)",
    el_scope=_ENV,
)
DB_DRIVER_LOCATION = PropertyDescriptor(
    "Database Driver Location(s)",
    description="Comma-separated list of files/folders and/or URLs containing the driver JAR "
    "(kept from NiFi flows, not used)",
    el_scope=_ENV,
    aliases=("database-driver-locations", "Database Driver Locations"),  # NiFi 2's name
)
DB_USER = PropertyDescriptor("Database User", description="Database user name", el_scope=_ENV)
#: NiFi 2's Password Source values (``DBCPProperties.PasswordSource``).
PASSWORD_SOURCE_PASSWORD = "PASSWORD"
PASSWORD_SOURCE_PROVIDER = "PASSWORD_PROVIDER"
PASSWORD_SOURCE = PropertyDescriptor(
    "Password Source",
    description="Specifies whether to supply the database password directly or obtain it from "
    "a Database Password Provider (flowcore: Password only).",
    default=PASSWORD_SOURCE_PASSWORD,
    required=True,
    allowable_values=(
        AllowableValue(
            PASSWORD_SOURCE_PASSWORD,
            "Password",
            "Use the configured Password property for database authentication.",
        ),
        AllowableValue(
            PASSWORD_SOURCE_PROVIDER,
            "Password Provider",
            "Obtain database passwords from a configured Database Password Provider.",
        ),
    ),
)
DB_PASSWORD = PropertyDescriptor(
    "Password",
    description="The password for the database user",
    sensitive=True,
    el_scope=_ENV,
    dependencies=(PropertyDependency("Password Source", (PASSWORD_SOURCE_PASSWORD,)),),
)
DB_PASSWORD_PROVIDER = PropertyDescriptor(
    "Database Password Provider",
    description="Controller Service that supplies database passwords on demand (NiFi 2; not "
    "supported by flowcore).",
    identifies_service="DatabasePasswordProvider",
    dependencies=(PropertyDependency("Password Source", (PASSWORD_SOURCE_PROVIDER,)),),
)
MAX_WAIT_TIME = PropertyDescriptor(
    "Max Wait Time",
    description="The maximum amount of time that the pool will wait (when there are no "
    "available connections) for a connection to be returned before failing, or -1 to wait "
    "indefinitely.",
    default="500 millis",
    required=True,
    validators=(DBCP_TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
)
MAX_TOTAL_CONNECTIONS = PropertyDescriptor(
    "Max Total Connections",
    description="The maximum number of active connections that can be allocated from this "
    "pool at the same time, or negative for no limit.",
    default="8",
    required=True,
    validators=(INTEGER_VALIDATOR,),
    el_scope=_ENV,
)
VALIDATION_QUERY = PropertyDescriptor(
    "Validation Query",
    description="Validation query used to validate connections before returning them.",
    el_scope=_ENV,
    aliases=("Validation-query",),
)
MIN_IDLE = PropertyDescriptor(
    "Minimum Idle Connections",
    default="0",
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-min-idle-conns",),
)
MAX_IDLE = PropertyDescriptor(
    "Maximum Idle Connections",
    default="8",
    validators=(INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-max-idle-conns",),
)
MAX_CONN_LIFETIME = PropertyDescriptor(
    "Maximum Connection Lifetime",
    default="-1",
    validators=(DBCP_TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-max-conn-lifetime",),
)
EVICTION_RUN_PERIOD = PropertyDescriptor(
    "Time Between Eviction Runs",
    default="-1",
    validators=(DBCP_TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-time-between-eviction-runs",),
)
MIN_EVICTABLE_IDLE_TIME = PropertyDescriptor(
    "Minimum Evictable Idle Time",
    default="30 mins",
    validators=(DBCP_TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-min-evictable-idle-time",),
)
SOFT_MIN_EVICTABLE_IDLE_TIME = PropertyDescriptor(
    "Soft Minimum Evictable Idle Time",
    default="-1",
    validators=(DBCP_TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
    aliases=("dbcp-soft-min-evictable-idle-time",),
)
KERBEROS_USER_SERVICE = PropertyDescriptor(
    "Kerberos User Service",
    identifies_service="KerberosUserService",
    aliases=("kerberos-user-service",),
)


def _seconds(value: str | None, default: float | None) -> float | None:
    """A DBCP time period: ``-1`` is infinite (None)."""
    from flowcore.units import parse_time_period  # noqa: PLC0415 (a small, leaf module)

    if value is None or value.strip() in ("", "-1"):
        return default
    return parse_time_period(value)


class DBCPService(ControllerService):
    """NiFi's ``DBCPService`` interface: hands out pooled connections to one database."""

    implements: ClassVar = ("DBCPService",)

    def engine(self) -> Engine:
        """The process's pooled SQLAlchemy engine."""
        raise NotImplementedError

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection from the pool, returned to it at the end of the block."""
        with self.engine().connect() as connection:
            yield connection

    def transit_uri(self) -> str:
        """NiFi's provenance transit URI for this database."""
        raise NotImplementedError

    def enabling(self) -> int:
        """A number no other enabling in this process has.

        Caches of the database's catalogue (reflected tables) key on it, so each enabling
        reads the catalogue anew.
        """
        return getattr(self, "_enabling", 0)


class DBCPConnectionPool(DBCPService):
    """Provides a Database Connection Pooling Service (NiFi's DBCPConnectionPool).

    Connections can be asked from the pool and returned after usage. One SQLAlchemy engine
    per process, opened when the service is enabled there and disposed when it is disabled.
    """

    nifi_types: ClassVar = ("org.apache.nifi.dbcp.DBCPConnectionPool",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-dbcp-service-nar")
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("dbcp", "jdbc", "database", "connection", "pooling", "store")
    property_descriptors: ClassVar = (
        DATABASE_URL,
        DB_DRIVERNAME,
        DB_DRIVER_LOCATION,
        KERBEROS_USER_SERVICE,
        DB_USER,
        PASSWORD_SOURCE,
        DB_PASSWORD,
        DB_PASSWORD_PROVIDER,
        MAX_WAIT_TIME,
        MAX_TOTAL_CONNECTIONS,
        VALIDATION_QUERY,
        MIN_IDLE,
        MAX_IDLE,
        MAX_CONN_LIFETIME,
        EVICTION_RUN_PERIOD,
        MIN_EVICTABLE_IDLE_TIME,
        SOFT_MIN_EVICTABLE_IDLE_TIME,
    )

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """A JDBC driver property (NiFi's dynamic properties): passed to the Python driver.

        As NiFi's, a name prefixed ``SENSITIVE.`` is a sensitive property (masked, never
        exported, no Expression Language) whose driver argument is the name after the prefix.
        """
        if name.startswith(SENSITIVE_PREFIX):
            return PropertyDescriptor(
                name,
                description="A sensitive driver connection property",
                sensitive=True,
                dynamic=True,
            )
        return PropertyDescriptor(
            name, description="A driver connection property", el_scope=_ENV, dynamic=True
        )

    def on_enabled(self, context: ServiceContext) -> None:
        """Open the process's pooled engine (connections are made on first use)."""
        import sqlalchemy  # noqa: PLC0415 (imported where the service is enabled)
        from sqlalchemy import event  # noqa: PLC0415

        if context.get_property(KERBEROS_USER_SERVICE).is_set():
            msg = (
                f"DBCPConnectionPool {self.name!r}: Kerberos User Service is not supported by "
                "flowcore (no JDBC Kerberos login); remove it and authenticate with Database "
                "User and Password, or with driver properties (PostgreSQL: gssencmode, "
                "krbsrvname with a ticket from kinit)"
            )
            raise ConfigurationError(msg)
        if context.get_property(PASSWORD_SOURCE).value == PASSWORD_SOURCE_PROVIDER:
            msg = (
                f"DBCPConnectionPool {self.name!r}: Password Source 'Password Provider' is not "
                "supported by flowcore (no Database Password Provider services); set Password "
                "Source to 'Password' and give the Password, e.g. as a sensitive parameter"
            )
            raise ConfigurationError(msg)
        raw = context.get_property(DATABASE_URL).value or ""
        user = context.get_property(DB_USER).value
        password = context.get_property(DB_PASSWORD).value
        url = sqlalchemy_url(raw, user, password)
        check_driver(url)
        self._transit = transit_uri(raw)
        try:  # a malformed URL (a port that is no number) names the URL, not int()'s error
            parsed = sqlalchemy.engine.make_url(url)
        except Exception as error:
            raise self._unusable(error, password, raw) from None
        connect_args = self._driver_arguments(context)
        options = pool_options(context, sqlite=url.startswith("sqlite"))
        if url.startswith("sqlite"):
            wait = _seconds(context.get_property(MAX_WAIT_TIME).value, None)
            connect_args.setdefault("timeout", wait if wait is not None else 5.0)
        elif url.startswith("mssql+pymssql://"):  # loginTimeout, pymssql's login_timeout
            url, timeout = pymssql_connect_args(url)
            connect_args.setdefault(
                "login_timeout", timeout.get("login_timeout", CONNECT_TIMEOUT_S)
            )
        elif "connect_timeout" not in parsed.query:
            connect_args.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        query = context.get_property(VALIDATION_QUERY).value
        evict = _evictable_after(context)
        key = repr((url, sorted(connect_args.items()), sorted(options.items()), query, evict))
        engine = _take_idle(key)
        if engine is None:
            psycopg = url.startswith("postgresql+psycopg://")
            # hstore as PostgreSQL's text, not SQLAlchemy's dict (processors.sql.pg_values)
            native = {"use_native_hstore": False} if psycopg else {}
            try:
                engine = sqlalchemy.create_engine(
                    url, connect_args=connect_args, **options, **native
                )
            except Exception as error:  # a malformed URL or an unknown dialect
                raise self._unusable(error, password, raw) from None
            if psycopg:
                event.listen(engine, "connect", _nifi_values)
            if query:
                event.listen(engine, "checkout", _validator(query))
            if evict is not None:
                _evict_idle(engine, evict)
        self._engine = engine
        self._engine_key = key
        self._enabling = next(_ENABLINGS)

    def _unusable(self, error: Exception, password: str | None, raw: str) -> ConfigurationError:
        """The error for a URL SQLAlchemy cannot use, naming it with its secrets masked."""
        secrets = [password or "", url_password(raw) or "", *self.sensitive_values()]
        msg = f"DBCPConnectionPool: cannot use {self._transit!r}: {_clean(error, secrets)}"
        return ConfigurationError(msg)

    def _driver_arguments(self, context: ServiceContext) -> dict[str, Any]:
        """The dynamic properties as the driver's connect arguments (NiFi's connection properties).

        ``SENSITIVE.`` is taken off, empty values left out, a name given both ways refused
        (NiFi's "Duplicate"): two values for one argument would be a guess.
        """
        arguments: dict[str, Any] = {}
        for name in self.dynamic_properties:
            value = context.get_property(name).value
            if value is None:
                continue
            argument = name.removeprefix(SENSITIVE_PREFIX)
            if argument in arguments:
                msg = (
                    f"DBCPConnectionPool {self.name!r}: Duplicate driver property {argument!r} "
                    f"(set as both {argument!r} and {SENSITIVE_PREFIX + argument!r}); keep one"
                )
                raise ConfigurationError(msg)
            arguments[argument] = value
        return arguments

    def on_disabled(self) -> None:
        """Close the pool's connections (the engine, holding none, waits for a next enabling)."""
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.dispose()
            self._engine = None
            _put_idle(self._engine_key, engine)

    def engine(self) -> Engine:
        """The process's pooled SQLAlchemy engine."""
        engine = getattr(self, "_engine", None)
        if engine is None:
            msg = f"DBCPConnectionPool {self.name!r} is not enabled"
            raise ConfigurationError(msg)
        return engine

    def transit_uri(self) -> str:
        """NiFi's provenance transit URI: the connection URL without ``jdbc:``."""
        return self._transit


#: Engines of disabled pools by their configuration (URL, password included, driver arguments,
#: pool options, Validation Query), each disposed: no connection open. A pool enabled again
#: with the same configuration in the process takes one instead of a new engine, whose first
#: connection SQLAlchemy spends initializing its dialect (on PostgreSQL nine round trips: the
#: server's version, schema, isolation level, hstore's type...), a disposed engine keeping it.
#: Two pools enabled at once never share one; at most _IDLE_PER_KEY wait per configuration,
#: for at most _IDLE_KEYS configurations (the least recently disabled dropped first): a process
#: that enables pools of ever new configurations (a URL with a parameter per flow, a rotated
#: password) would otherwise keep an engine of each for its life. A reused engine keeps its
#: dialect's view of the server from its first connection (version, type OIDs): see docs/sql.md.
_IDLE: dict[str, list[Engine]] = {}
_ENABLINGS = itertools.count(1)
_IDLE_LOCK = threading.Lock()
_IDLE_PER_KEY = 4
_IDLE_KEYS = 16


def _take_idle(key: str) -> Engine | None:
    with _IDLE_LOCK:
        engines = _IDLE.get(key)
        if not engines:
            return None
        engine = engines.pop()
        if not engines:
            del _IDLE[key]
        return engine


def _put_idle(key: str, engine: Engine) -> None:
    with _IDLE_LOCK:
        engines = _IDLE.pop(key, [])  # put back last: the most recently disabled
        if len(engines) < _IDLE_PER_KEY:
            engines.append(engine)
        _IDLE[key] = engines
        while len(_IDLE) > _IDLE_KEYS:
            del _IDLE[next(iter(_IDLE))]  # disposed already: no connection to close


def _evictable_after(context: ServiceContext) -> float | None:
    """Seconds after which an idle connection is evicted, None when eviction is off.

    DBCP's evictor runs only with a positive Time Between Eviction Runs; it then closes
    connections idle for Minimum Evictable Idle Time (-1: never).
    """
    period = _seconds(context.get_property(EVICTION_RUN_PERIOD).value, None)
    if period is None or period <= 0:
        return None
    return _seconds(context.get_property(MIN_EVICTABLE_IDLE_TIME).value, None)


def _evict_idle(engine: Engine, seconds: float) -> None:
    """Replace a pooled connection idle for more than *seconds* when it is next checked out.

    DBCP's evictor thread closes idle connections as they age; SQLAlchemy's pool has no
    such thread, so the age is checked at checkout (the stale connection is closed and a new
    one made in its place, as SQLAlchemy replaces a connection that fails ``pool_pre_ping``).
    """
    from sqlalchemy import event  # noqa: PLC0415
    from sqlalchemy.exc import DisconnectionError  # noqa: PLC0415

    def checkin(dbapi_connection: Any, record: Any) -> None:
        del dbapi_connection
        if record is not None:
            record.info["flowcore.idle_since"] = time.monotonic()

    def checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        del dbapi_connection, proxy
        since = record.info.pop("flowcore.idle_since", None)
        if since is not None and time.monotonic() - since > seconds:
            msg = f"connection idle for more than {seconds:g} s (Minimum Evictable Idle Time)"
            raise DisconnectionError(msg)

    event.listen(engine, "checkin", checkin)
    event.listen(engine, "checkout", checkout)


def _nifi_values(dbapi_connection: Any, record: Any) -> None:
    """A new psycopg connection's loaders: values as NiFi's JDBC driver gives them."""
    del record
    from processors.sql.pg_values import nifi_loaders  # noqa: PLC0415

    nifi_loaders(getattr(dbapi_connection, "driver_connection", dbapi_connection))


def _validator(query: str) -> Any:
    def validate(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        del record, proxy
        from sqlalchemy.exc import DisconnectionError  # noqa: PLC0415

        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(query)
        except Exception as error:
            raise DisconnectionError(str(error)) from error
        finally:
            cursor.close()

    return validate


def _clean(error: BaseException, secrets: list[str]) -> str:
    """An error's text with the password and sensitive properties masked (drivers echo URLs)."""
    from flowcore.parameters import MASK  # noqa: PLC0415

    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def pool_options(context: ServiceContext, *, sqlite: bool) -> dict[str, Any]:
    """DBCP's pool settings as SQLAlchemy's QueuePool options (see docs/sql.md).

    ``Maximum Idle Connections`` is the QueuePool's ``pool_size`` (the connections kept open
    when returned), at most ``Max Total Connections``; the rest up to the total is
    ``max_overflow`` (closed when returned, as DBCP closes a connection past maxIdle);
    a negative total is no bound. ``Max Wait Time`` is ``pool_timeout`` (-1: wait
    indefinitely), ``Maximum Connection Lifetime`` ``pool_recycle``. SQLite keeps
    SQLAlchemy's own pool (a file database's connections are cheap; ``:memory:`` needs one).
    """
    if sqlite:
        return {}
    total = context.get_property(MAX_TOTAL_CONNECTIONS).as_integer()
    total = 8 if total is None else total
    idle = context.get_property(MAX_IDLE).as_integer()
    idle = 8 if idle is None else idle
    if total == 0:
        msg = (
            "DBCPConnectionPool: Max Total Connections is 0 (no connection could be made); "
            "set it to a positive number, or negative for no limit"
        )
        raise ConfigurationError(msg)
    if total > 0:
        size = total if idle < 0 else min(idle, total)
        overflow = total - size
    else:
        size = idle if idle >= 0 else 8
        overflow = -1
    if size == 0:  # SQLAlchemy's pool_size 0 is unbounded: the least it keeps is one
        size, overflow = 1, overflow - 1 if overflow > 0 else overflow
    wait = _seconds(context.get_property(MAX_WAIT_TIME).value, None)
    lifetime = _seconds(context.get_property(MAX_CONN_LIFETIME).value, None)
    return {
        "pool_size": size,
        "max_overflow": overflow,
        "pool_timeout": wait if wait is not None else 1e9,
        "pool_recycle": lifetime if lifetime and lifetime > 0 else -1,
    }
