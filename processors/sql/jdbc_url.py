"""JDBC connection URLs (what NiFi flows hold) mapped onto SQLAlchemy URLs and Python drivers.

NiFi's DBCPConnectionPool takes a JDBC URL and a Java driver class; flowcore connects through
SQLAlchemy with a Python DB-API driver instead. :func:`sqlalchemy_url` maps the URLs of the
databases NiFi flows use most (PostgreSQL, MySQL, MariaDB, SQLite, Oracle, SQL Server) and
:data:`DRIVERS` names the pip package each dialect needs, so a missing one is one line saying
what to install. A URL that already is SQLAlchemy's (``postgresql+psycopg://...``) is taken
as it is, for flows written in Python.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import attrs

from flowcore.errors import ConfigurationError

__all__ = [
    "DRIVERS",
    "Driver",
    "check_driver",
    "libpq_options",
    "sqlalchemy_url",
    "transit_uri",
    "url_password",
]


@attrs.frozen
class Driver:
    """A SQLAlchemy dialect+driver, the module it imports and the package that provides it."""

    dialect: str
    module: str
    package: str


#: The Python driver for each database, by the JDBC subprotocol.
DRIVERS: dict[str, Driver] = {
    "postgresql": Driver("postgresql+psycopg", "psycopg", "psycopg[binary]"),
    "mysql": Driver("mysql+pymysql", "pymysql", "pymysql"),
    "mariadb": Driver("mariadb+pymysql", "pymysql", "pymysql"),
    "sqlite": Driver("sqlite", "sqlite3", "(built in)"),
    "oracle": Driver("oracle+oracledb", "oracledb", "oracledb"),
    "sqlserver": Driver("mssql+pymssql", "pymssql", "pymssql"),
}

_ORACLE = re.compile(
    r"^jdbc:oracle:thin:@(?://)?(?P<host>[^:/]+)(?::(?P<port>\d+))?(?:(?P<sep>[:/])(?P<name>.+))?$"
)


def _credentials(user: str | None, password: str | None) -> str:
    if not user:
        return ""
    secret = f":{quote(password, safe='')}" if password else ""
    return f"{quote(user, safe='')}{secret}@"


def _given_credentials(
    user: str | None, password: str | None, given_user: str | None, given_password: str | None
) -> str:
    """The credentials of the URL: the Database User and Password, or the URL's own options.

    The driver's own user (and password) are used when the properties are empty; the URL's
    password when only the Database User is given.
    """
    if not user and given_user:
        return _credentials(given_user, password or given_password)
    if user and not password and given_password:
        return _credentials(user, given_password)
    return _credentials(user, password)


def _jdbc_subprotocol(url: str) -> str:
    if not url.startswith("jdbc:"):
        shown = "***@" + url.rsplit("@", 1)[1] if "@" in url else url  # no user:password
        msg = (
            f"Database Connection URL {shown!r} is not a JDBC URL (jdbc:postgresql://host:port/db) "
            "nor a SQLAlchemy URL (postgresql+psycopg://host/db)"
        )
        raise ConfigurationError(msg)
    return url[5:].split(":", 1)[0].lower()


def _pop_credentials(query: dict[str, str], *, exact: bool) -> tuple[str | None, str | None]:
    """The ``user`` and ``password`` options taken out of *query*.

    pgjdbc reads them as spelled (``Properties.getProperty``); MySQL's and MariaDB's
    Connector/J read option names in any case (``PropertyKey.normalizeCase``), so
    ``Password=`` is the password there too and never an unknown option printed in an error.
    """
    found: dict[str, str | None] = {"user": None, "password": None}
    for given in list(query):
        key = given if exact else given.lower()
        if key in found:
            found[key] = query.pop(given)
    return found["user"], found["password"]


def sqlalchemy_url(url: str, user: str | None = None, password: str | None = None) -> str:
    """The SQLAlchemy URL for a JDBC (or SQLAlchemy) *url*, with *user* and *password*.

    Raises:
        ConfigurationError: a database flowcore has no driver mapping for, naming the ones it
            has.
    """
    url = url.strip()
    if "://" in url and not url.startswith("jdbc:"):
        return url  # already SQLAlchemy's
    protocol = _jdbc_subprotocol(url)
    if protocol not in DRIVERS:
        msg = (
            f"Database Connection URL {transit_uri(url)!r}: flowcore has no Python driver for JDBC "
            f"'{protocol}'; it maps {', '.join(sorted(DRIVERS))} (or give a SQLAlchemy URL)"
        )
        raise ConfigurationError(msg)
    dialect = DRIVERS[protocol].dialect
    creds = _credentials(user, password)
    if protocol == "sqlite":
        path = url[len("jdbc:sqlite:") :]
        return "sqlite://" if path in ("", ":memory:") else f"sqlite:///{path}"
    if protocol == "oracle":
        match = _ORACLE.match(url)
        if match is None:
            msg = (
                f"Database Connection URL {transit_uri(url)!r}: expected "
                "jdbc:oracle:thin:@host:port/service (the user and password in Database User "
                "and Password)"
            )
            raise ConfigurationError(msg)
        port = f":{match['port']}" if match["port"] else ""
        name = match["name"] or ""
        query = f"?service_name={name}" if match["sep"] == "/" and name else ""
        sid = name if match["sep"] == ":" else ""
        return f"{dialect}://{creds}{match['host']}{port}/{sid}{query}"
    if protocol == "sqlserver":
        # jdbc:sqlserver://host:port;databaseName=db;encrypt=false
        rest = url[len("jdbc:sqlserver://") :]
        hostport, *props = rest.split(";")
        settings = dict(p.split("=", 1) for p in props if "=" in p)
        lowered = {k.lower(): v for k, v in settings.items()}
        database = lowered.pop("databasename", None) or lowered.pop("database", None) or ""
        given_user, given_password = lowered.pop("user", None), lowered.pop("password", None)
        creds = _given_credentials(user, password, given_user, given_password)
        options = pymssql_options(settings, transit_uri(url))
        tail = "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in options.items())
        return f"{dialect}://{creds}{hostport}/{database}{tail if options else ''}"
    parts = urlsplit(url[5:])
    query = dict(parse_qsl(parts.query))
    given_user, given_password = _pop_credentials(query, exact=protocol == "postgresql")
    creds = _given_credentials(user, password, given_user, given_password)
    if protocol == "postgresql":
        query = libpq_options(query, transit_uri(url))
    else:
        query = pymysql_options(query, transit_uri(url))
    tail = "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items()) if query else ""
    return f"{dialect}://{creds}{parts.netloc}{parts.path}{tail}"


#: MySQL Connector/J and MariaDB Connector/J options that tune the Java driver only (statement
#: caching and batching, its Unicode handling, key retrieval, reconnection): accepted, no effect.
_MYSQL_DRIVER_ONLY = frozenset(
    {
        "rewriteBatchedStatements",
        "useServerPrepStmts",
        "cachePrepStmts",
        "prepStmtCacheSize",
        "prepStmtCacheSqlLimit",
        "useUnicode",
        "allowPublicKeyRetrieval",
        "useCompression",
        "tcpKeepAlive",
    }
)
#: Character encodings whose pymysql charset is utf8mb4 (Connector/J's UTF-8 is MySQL's).
_UTF8 = frozenset({"utf-8", "utf8", "utf8mb4"})


def pymysql_options(query: dict[str, str], where: str) -> dict[str, str]:
    """A MySQL or MariaDB JDBC URL's options (Connector/J's) as pymysql's.

    ``useSSL=false`` and ``sslMode=DISABLED`` are pymysql's default (no TLS) and dropped;
    ``connectTimeout`` (milliseconds) is ``connect_timeout`` (seconds, rounded up);
    ``characterEncoding`` UTF-8 is ``charset=utf8mb4``; Java-only tuning is dropped.

    Raises:
        ConfigurationError: an option pymysql has no equivalent for (TLS on among them: give
            pymysql's ``ssl_ca``, ``ssl_cert``, ``ssl_key`` in a SQLAlchemy URL).
    """
    only = {k.lower() for k in _MYSQL_DRIVER_ONLY}
    out: dict[str, str] = {}
    for given, value in query.items():
        key = given.lower()
        if (key == "usessl" and value.lower() == "false") or (
            key == "sslmode" and value.upper() == "DISABLED"
        ):
            continue
        if key == "connecttimeout" and value.isdigit():
            out["connect_timeout"] = str(max(1, -(-int(value) // 1000)))
        elif key == "characterencoding" and value.lower() in _UTF8:
            out["charset"] = "utf8mb4"
        elif key not in only:
            msg = (
                f"Database Connection URL {where!r}: the option {given!r} has no "
                "equivalent in flowcore's driver (pymysql); remove it, or give a SQLAlchemy "
                "URL (mysql+pymysql://...) with pymysql's arguments (docs/sql.md)"
            )
            raise ConfigurationError(msg)
    return out


#: Microsoft JDBC driver options that tune the Java driver only (statement pooling, batching,
#: send-string parameters, response buffering): accepted, no effect.
_MSSQL_DRIVER_ONLY = frozenset(
    {
        "sendstringparametersasunicode",
        "responsebuffering",
        "selectmethod",
        "statementpoolingcachesize",
        "disablestatementpooling",
        "usebulkcopyforbatchinsert",
        "enableprepareonfirstpreparedstatementcall",
        "serverpreparedstatementdiscardthreshold",
        "packetsize",
        "sendtimeasdatetime",
    }
)
#: The options :func:`sqlalchemy_url` takes itself (database, credentials).
_MSSQL_TAKEN = frozenset({"databasename", "database", "user", "password"})


def pymssql_options(settings: dict[str, str], where: str) -> dict[str, str]:
    """A SQL Server JDBC URL's options (Microsoft's driver's) as pymssql's.

    ``encrypt`` is pymssql's ``encryption`` (false: off, true: require);
    ``trustServerCertificate=true`` is what FreeTDS does without a CA file (it does not check
    the certificate) and is accepted; ``loginTimeout`` (seconds) is ``login_timeout``;
    ``applicationName`` is ``appname``; Java-only tuning is dropped.

    Raises:
        ConfigurationError: an option pymssql has no equivalent for (``encrypt=strict``,
            ``trustServerCertificate=false`` among them: give a SQLAlchemy URL with pymssql's
            arguments and FreeTDS's configuration).
    """
    out: dict[str, str] = {}
    for given, value in settings.items():
        key = given.lower()
        flag = value.strip().lower()
        if key in _MSSQL_TAKEN or key in _MSSQL_DRIVER_ONLY:
            continue
        if key == "encrypt" and flag in ("true", "false"):
            out["encryption"] = "require" if flag == "true" else "off"
        elif key == "trustservercertificate" and flag == "true":
            continue
        elif key == "logintimeout" and value.strip().isdigit():
            out["login_timeout"] = value.strip()
        elif key == "applicationname":
            out["appname"] = value
        else:
            msg = (
                f"Database Connection URL {where!r}: the option {given!r} has no "
                "equivalent in flowcore's driver (pymssql); remove it, or give a SQLAlchemy "
                "URL (mssql+pymssql://...) with pymssql's arguments (docs/sql.md)"
            )
            raise ConfigurationError(msg)
    return out


def pymssql_connect_args(url: str) -> tuple[str, dict[str, Any]]:
    """*url* without its ``login_timeout``, and pymssql's arguments with it as an integer.

    SQLAlchemy's pymssql dialect passes a URL's query to ``pymssql.connect`` as strings;
    pymssql wants its login timeout a number.
    """
    import sqlalchemy  # noqa: PLC0415 (only a pool imports it)

    parsed = sqlalchemy.engine.make_url(url)
    timeout = parsed.query.get("login_timeout")
    if timeout is None:
        return url, {}
    text = parsed.difference_update_query(["login_timeout"]).render_as_string(hide_password=False)
    return text, {"login_timeout": int(str(timeout))}


def url_password(url: str) -> str | None:
    """The ``password`` option (any case) of a JDBC *url*'s query, if any (a secret to mask)."""
    if not url.strip().startswith("jdbc:") or "?" not in url:
        return None
    options = parse_qsl(url.split("?", 1)[1])
    return next((value for key, value in options if key.lower() == "password"), None)


#: pgjdbc URL options (case as pgjdbc spells them) that are libpq's under another name.
_LIBPQ_NAMES = {
    "ApplicationName": "application_name",
    "connectTimeout": "connect_timeout",
    "loginTimeout": "connect_timeout",
    "sslmode": "sslmode",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "sslrootcert": "sslrootcert",
    "sslpassword": "sslpassword",
    "gssEncMode": "gssencmode",
    "kerberosServerName": "krbsrvname",
    "options": "options",
    "channelBinding": "channel_binding",
}
#: pgjdbc options mapped to libpq's by their value.
_MAPPED = (
    "currentSchema",
    "ssl",
    "sslfactory",
    "targetServerType",
    "tcpKeepAlive",
    "user",
    "password",
)
#: pgjdbc's targetServerType -> libpq's target_session_attrs.
_TARGET_SERVER_TYPES = {
    "any": "any",
    "primary": "primary",
    "master": "primary",
    "secondary": "standby",
    "slave": "standby",
    "preferSecondary": "prefer-standby",
    "preferSlave": "prefer-standby",
}
#: pgjdbc options that tune the Java driver only (statement caching and batching, fetch and
#: transfer formats, its logging): they change no value read or written, so they are
#: accepted and have no effect (psycopg does these its own way).
_DRIVER_ONLY = frozenset(
    {
        "reWriteBatchedInserts",
        "prepareThreshold",
        "preparedStatementCacheQueries",
        "preparedStatementCacheSizeMiB",
        "defaultRowFetchSize",
        "binaryTransfer",
        "loggerLevel",
        "loggerFile",
        "logUnclosedConnections",
        "tcpNoDelay",
    }
)
#: pgjdbc's validating-off SSL factory: encryption without certificate checks (libpq's
#: sslmode=require).
_NON_VALIDATING = "org.postgresql.ssl.NonValidatingFactory"


def _flag(name: str, value: str, where: str) -> bool:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    msg = f"Database Connection URL {where!r}: option {name}={value!r} must be true or false"
    raise ConfigurationError(msg)


def libpq_options(query: dict[str, str], where: str) -> dict[str, str]:
    """A PostgreSQL JDBC URL's options (pgjdbc's) as libpq connection parameters.

    ``currentSchema`` is ``options=-c search_path=...``; ``ssl`` is ``sslmode``
    (``true``: verify-full, pgjdbc's default with ssl on; ``false``: disable) unless
    ``sslmode`` is given; ``sslfactory`` NonValidatingFactory is ``sslmode=require``;
    ``targetServerType`` is ``target_session_attrs``; ``tcpKeepAlive`` ``keepalives``;
    the rest of :data:`_LIBPQ_NAMES` are renamed; driver-only tuning (:data:`_DRIVER_ONLY`)
    is dropped. Options are matched as pgjdbc spells them, case aside.

    Raises:
        ConfigurationError: an option with no libpq equivalent, named with those mapped.
    """
    names = {k.lower(): k for k in (*_LIBPQ_NAMES, *_DRIVER_ONLY)}
    out: dict[str, str] = {}
    schema = ssl = factory = None
    for given, value in query.items():
        key = given.lower()
        if key == "currentschema":
            schema = value
        elif key == "ssl":
            ssl = _flag(given, value, where)
        elif key == "sslfactory":
            factory = value
        elif key == "targetservertype":
            target = {k.lower(): v for k, v in _TARGET_SERVER_TYPES.items()}.get(value.lower())
            if target is None:
                msg = (
                    f"Database Connection URL {where!r}: targetServerType={value!r} is not one "
                    f"of {', '.join(_TARGET_SERVER_TYPES)}"
                )
                raise ConfigurationError(msg)
            out["target_session_attrs"] = target
        elif key == "tcpkeepalive":
            out["keepalives"] = "1" if _flag(given, value, where) else "0"
        elif key in names and names[key] in _DRIVER_ONLY:
            continue
        elif key in names:
            out[_LIBPQ_NAMES[names[key]]] = value
        else:
            known = sorted({*_LIBPQ_NAMES, *_MAPPED}, key=str.lower)
            msg = (
                f"Database Connection URL {where!r}: the PostgreSQL option {given!r} has no "
                f"equivalent in flowcore's driver (libpq); remove it, or use one of "
                f"{', '.join(known)} (docs/sql.md)"
            )
            raise ConfigurationError(msg)
    if factory is not None:
        if factory != _NON_VALIDATING:
            msg = (
                f"Database Connection URL {where!r}: sslfactory {factory!r} is a Java class "
                f"flowcore cannot use; remove it (libpq's sslmode, sslrootcert, sslcert and "
                f"sslkey set up SSL), or use {_NON_VALIDATING}"
            )
            raise ConfigurationError(msg)
        out.setdefault("sslmode", "require")
    if ssl is not None and "sslmode" not in out:
        out["sslmode"] = "verify-full" if ssl else "disable"
    if schema is not None:
        path = "-c search_path=" + schema.replace("\\", "\\\\").replace(" ", "\\ ")
        out["options"] = f"{out['options']} {path}" if "options" in out else path
    return out


def check_driver(url: str) -> None:
    """Raise, naming the package to install, when the driver for SQLAlchemy *url* is missing."""
    scheme = url.split("://", 1)[0]
    for protocol, driver in DRIVERS.items():
        if driver.dialect == scheme or (protocol == "sqlite" and scheme.startswith("sqlite")):
            if importlib.util.find_spec(driver.module) is None:
                extra = " (pip install 'flowcore[sql]')" if protocol == "postgresql" else ""
                msg = (
                    f"the {protocol} database needs the Python driver {driver.module!r}, which is "
                    f"not installed: pip install '{driver.package}'{extra}"
                )
                raise ConfigurationError(msg)
            return


#: Oracle's ``oracle:thin:user/password@`` (also ``oci``): the credentials before the ``@``.
_ORACLE_CREDENTIALS = re.compile(r"^(oracle:[^:@/]+:)[^@]*@")
#: MySQL's key-value hosts: ``(user=u)`` and ``(password=p)`` groups of ``address=(...)(...)``.
_SECRET_GROUP = re.compile(r"\((?:user|password)=[^(),]*\)", re.IGNORECASE)
#: ... and ``user=u``/``password=p`` entries of ``[(host=h,user=u,password=p)]``.
_SECRET_ENTRY = re.compile(r"(?<=[(,])(?:user|password)=[^,()\]]*,?", re.IGNORECASE)
#: SQL Server's (and DB2's) ``;key=value`` options: cut before looking for ``user:pw@``.
_OPTIONS = re.compile(r";\w+=.*$")
#: DB2's properties after the database: ``/db:user=u;password=p;``.
_PROPERTIES_TAIL = re.compile(r":\w+=.*$")


#: A host with its port (or a bracketed IPv6 address) and what may follow it in a URL.
_HOST_AFTER_AT = re.compile(r"(?:[\w.\-%]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?(?=[/?;,]|$)")
_HOST = re.compile(r"(?:[\w.\-%]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?")


def _userinfo_end(rest: str) -> int:
    """Where the host starts in *rest* (after ``scheme://``): past ``user:password@``, else 0.

    A password may hold ``/ ? ; @``, so the userinfo ends at the last ``@`` followed by a
    host; an ``@`` inside an option's value (``h:1433;password=ti@ger``, ``h/db?x=a@b``: the
    URL starts with a host and the ``@`` follows ``key=``) is not one. When in doubt the text
    before the ``@`` is dropped: a wrong host in provenance, never a password.
    """
    for at in reversed([i for i, c in enumerate(rest) if c == "@"]):
        if _HOST_AFTER_AT.match(rest, at + 1) is None:
            continue
        before = rest[:at]
        head = re.split(r"[/?;]", before, maxsplit=1)[0]
        cut = max(before.rfind(c) for c in "?;&")
        if cut >= 0 and "=" in before[cut + 1 :] and _HOST.fullmatch(head):
            continue  # an option's value holding '@'
        return at + 1
    return 0


def transit_uri(url: str) -> str:
    """NiFi's provenance transit URI for a connection: ``jdbc:postgresql://host:port/db``.

    NiFi's SQL processors report the driver's ``DatabaseMetaData.getURL()``: the JDBC URL as
    configured, ``jdbc:`` kept. Credentials and options are left out here, so no secret
    reaches provenance, bulletins or error messages (which show this form): ``user:pw@`` of
    the authority, Oracle's ``user/password@``, ``?...`` and ``;...`` options, MySQL's
    ``(user=...)(password=...)`` key-values, DB2's ``:user=...;password=...;`` tail. A
    SQLAlchemy URL loses its driver suffix.
    """
    url = url.strip()
    prefix = ""
    if url.startswith("jdbc:"):
        prefix, url = "jdbc:", url[5:]
    oracle = _ORACLE_CREDENTIALS.match(url)
    if oracle is not None:
        head = url.split("//", 1)[0]  # the credentials end at the last @ before any //
        url = f"{oracle[1]}{url[head.rfind('@') :]}"
    if "://" in url:
        scheme, rest = url.split("://", 1)
        rest = rest[_userinfo_end(rest) :]
        rest = _SECRET_GROUP.sub("", rest)
        rest = _SECRET_ENTRY.sub("", rest).replace(",)", ")")
        authority, path = re.match(r"([^/?;]*)(.*)", rest, re.S).groups()  # type: ignore[union-attr]
        path = _PROPERTIES_TAIL.sub("", path.split("?", 1)[0].split(";", 1)[0])
        return f"{prefix}{scheme.split('+', 1)[0]}://{authority}{path}"
    url = _SECRET_GROUP.sub("", url)
    url = _SECRET_ENTRY.sub("", url).replace(",)", ")")
    url = _OPTIONS.sub("", url)
    subprotocol, colon, rest = url.split("?", 1)[0].split(";", 1)[0].partition(":")
    return prefix + subprotocol + colon + _PROPERTIES_TAIL.sub("", rest)
