"""JDBC URLs of NiFi flows mapped to SQLAlchemy URLs and Python drivers."""

from __future__ import annotations

import re

import pytest

from flowcore.errors import ConfigurationError
from processors.sql.jdbc_url import check_driver, sqlalchemy_url, transit_uri, url_password


@pytest.mark.parametrize(
    ("jdbc", "expected"),
    [
        ("jdbc:postgresql://db:5432/sales", "postgresql+psycopg://u:p%40ss@db:5432/sales"),
        (
            "jdbc:mysql://db:3306/sales?useSSL=false&connectTimeout=2500&characterEncoding=UTF-8",
            "mysql+pymysql://u:p%40ss@db:3306/sales?connect_timeout=3&charset=utf8mb4",
        ),
        ("jdbc:mariadb://db/sales", "mariadb+pymysql://u:p%40ss@db/sales"),
        ("jdbc:oracle:thin:@db:1521:ORCL", "oracle+oracledb://u:p%40ss@db:1521/ORCL"),
        ("jdbc:oracle:thin:@//db:1521/svc", "oracle+oracledb://u:p%40ss@db:1521/?service_name=svc"),
        (
            "jdbc:sqlserver://db:1433;databaseName=sales;encrypt=false",
            "mssql+pymssql://u:p%40ss@db:1433/sales?encryption=off",
        ),
        ("jdbc:sqlite:/tmp/x.db", "sqlite:////tmp/x.db"),
        ("jdbc:sqlite::memory:", "sqlite://"),
        ("postgresql+psycopg://a@b/c", "postgresql+psycopg://a@b/c"),
    ],
)
def test_mapping(jdbc: str, expected: str) -> None:
    """Each database NiFi flows use maps to its SQLAlchemy dialect and driver."""
    assert sqlalchemy_url(jdbc, "u", "p@ss") == expected


def test_unknown_database_names_the_mapped_ones() -> None:
    """A JDBC database without a mapping is one error listing those flowcore maps."""
    with pytest.raises(ConfigurationError, match=r"no Python driver for JDBC 'db2'.*postgresql"):
        sqlalchemy_url("jdbc:db2://h:50000/x")
    with pytest.raises(ConfigurationError, match="not a JDBC URL"):
        sqlalchemy_url("host:5432")


def test_missing_driver_names_the_package() -> None:
    """A dialect whose driver is not installed names the pip package to install."""
    with pytest.raises(ConfigurationError, match="pip install 'oracledb'"):
        check_driver("oracle+oracledb://u@h/x")
    check_driver("sqlite://")


def test_transit_uri_leaves_out_credentials_and_options() -> None:
    """NiFi's transit URI (the driver's getURL(): jdbc: kept), without credentials or query."""
    assert transit_uri("jdbc:postgresql://h:5432/db?password=x") == "jdbc:postgresql://h:5432/db"
    assert transit_uri("jdbc:sqlserver://h:1433;password=x") == "jdbc:sqlserver://h:1433"
    assert transit_uri("jdbc:sqlite:/tmp/x.db") == "jdbc:sqlite:/tmp/x.db"
    assert (
        transit_uri("jdbc:oracle:thin:scott/tiger@db:1521:orcl") == "jdbc:oracle:thin:@db:1521:orcl"
    )
    assert transit_uri("jdbc:mysql://u:pw@h:3306/db") == "jdbc:mysql://h:3306/db"
    assert transit_uri("postgresql+psycopg://u:pw@h/db") == "postgresql://h/db"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "jdbc:oracle:thin:scott/tiger@ldap://ldap.example.com:389/orcl,cn=OracleContext",
            "jdbc:oracle:thin:@ldap://ldap.example.com:389/orcl,cn=OracleContext",
        ),
        ("jdbc:oracle:thin:scott/ti@ger@//db:1521/svc", "jdbc:oracle:thin:@//db:1521/svc"),
        ("jdbc:oracle:oci:scott/tiger@db:1521:orcl", "jdbc:oracle:oci:@db:1521:orcl"),
        (
            "jdbc:mysql://address=(host=h)(user=u)(password=tiger)/db",
            "jdbc:mysql://address=(host=h)/db",
        ),
        ("jdbc:mysql://[(host=h,user=u,password=tiger)]/db", "jdbc:mysql://[(host=h)]/db"),
        ("jdbc:mysql://[(USER=u,host=h,Password=tiger)]/db", "jdbc:mysql://[(host=h)]/db"),
        ("jdbc:db2://h:50000/db:user=u;password=tiger;", "jdbc:db2://h:50000/db"),
        ("jdbc:db2:sample:user=u;password=tiger;", "jdbc:db2:sample"),
        ("jdbc:sqlserver://h:1433;password=ti@ger", "jdbc:sqlserver://h:1433"),
        ("jdbc:postgresql://u:ti;ger@h:5432/db", "jdbc:postgresql://h:5432/db"),
        ("jdbc:mysql://h/db?x=a@b&password=tiger", "jdbc:mysql://h/db"),
        ("postgresql+psycopg://u:pa/ss@host/db", "postgresql://host/db"),
        ("jdbc:mysql://u:pa/ss@host:3306/db", "jdbc:mysql://host:3306/db"),
        ("postgresql+psycopg://u:p?w@host/db", "postgresql://host/db"),
        ("postgresql+psycopg://u:pa;s=x@host/db", "postgresql://host/db"),
        ("jdbc:postgresql://u:123?ss@host/db", "jdbc:postgresql://host/db"),
        ("jdbc:postgresql://[::1]:5432/db?user=a@b.com", "jdbc:postgresql://[::1]:5432/db"),
    ],
)
def test_transit_uri_leaves_out_every_credential_form(url: str, expected: str) -> None:
    """Oracle's user/password@ (before its ://), MySQL's key-value hosts, DB2's property tail,
    options holding '@': no user or password reaches provenance."""
    assert transit_uri(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "jdbc:oracle:thin:scott/tiger@db:1521:orcl",
        "jdbc:db2://h:50000/db:user=scott;password=tiger;",
        "jdbc:sybase:Tds:h:5000?USER=scott&PASSWORD=tiger",
        "scott:tiger@h:5432",
    ],
)
def test_url_errors_do_not_echo_the_password(url: str) -> None:
    """A URL sqlalchemy_url refuses is named in its redacted form (bulletins show it)."""
    with pytest.raises(ConfigurationError) as error:
        sqlalchemy_url(url)
    assert "tiger" not in str(error.value)


@pytest.mark.parametrize(
    ("jdbc", "user", "password", "expected"),
    [
        ("jdbc:postgresql://h/db?user=shop&password=s%40cret", None, None, "shop:s%40cret@h/db"),
        ("jdbc:postgresql://h/db?user=shop&password=x", "prop", "p", "prop:p@h/db"),
        ("jdbc:postgresql://h/db?password=x", "prop", None, "prop:x@h/db"),
        ("jdbc:postgresql://h/db?user=shop", None, "p", "shop:p@h/db"),
        (
            "jdbc:postgresql://h/db?currentSchema=sales&ssl=false",
            "u",
            None,
            "u@h/db?sslmode=disable&options=-c%20search_path%3Dsales",
        ),
        ("jdbc:postgresql://h/db?ssl=true", "u", None, "u@h/db?sslmode=verify-full"),
        ("jdbc:postgresql://h/db?ssl=true&sslmode=require", "u", None, "u@h/db?sslmode=require"),
        (
            "jdbc:postgresql://h/db?sslfactory=org.postgresql.ssl.NonValidatingFactory",
            "u",
            None,
            "u@h/db?sslmode=require",
        ),
        (
            "jdbc:postgresql://h/db?connectTimeout=3&ApplicationName=etl&targetServerType=master"
            "&tcpKeepAlive=true&reWriteBatchedInserts=true&sslrootcert=/r.crt",
            "u",
            None,
            "u@h/db?connect_timeout=3&application_name=etl&target_session_attrs=primary"
            "&keepalives=1&sslrootcert=%2Fr.crt",
        ),
        (
            "jdbc:postgresql://h/db?options=-c%20work_mem%3D64MB&currentSchema=a%20b,c",
            "u",
            None,
            "u@h/db?options=-c%20work_mem%3D64MB%20-c%20search_path%3Da%5C%20b%2Cc",
        ),
    ],
)
def test_postgres_url_options(
    jdbc: str, user: str | None, password: str | None, expected: str
) -> None:
    """pgjdbc's URL options as libpq's: user and password when the properties are empty,
    currentSchema as search_path, ssl as sslmode, the renamed ones, driver tuning dropped."""
    assert sqlalchemy_url(jdbc, user, password) == f"postgresql+psycopg://{expected}"


@pytest.mark.parametrize(
    ("jdbc", "named"),
    [
        ("jdbc:postgresql://h/db?socketTimeout=30&password=tiger", "'socketTimeout'"),
        ("jdbc:postgresql://h/db?ssl=maybe&password=tiger", "ssl='maybe'"),
        ("jdbc:postgresql://h/db?targetServerType=any2&password=tiger", "targetServerType"),
        ("jdbc:postgresql://h/db?sslfactory=com.x.F&password=tiger", "sslfactory 'com.x.F'"),
    ],
)
def test_postgres_url_options_without_libpq_equivalent_are_refused(jdbc: str, named: str) -> None:
    """An option libpq has no equivalent for is one error naming it (and not the password)."""
    with pytest.raises(ConfigurationError, match=re.escape(named)) as error:
        sqlalchemy_url(jdbc, "u")
    assert "tiger" not in str(error.value)
    assert "\n" not in str(error.value)


def test_url_password_is_a_secret() -> None:
    """The password of a URL's options is what the pool masks."""
    assert url_password("jdbc:postgresql://h/db?user=u&password=s%40c") == "s@c"
    assert url_password("jdbc:postgresql://h/db") is None
    assert url_password("postgresql+psycopg://u:p@h/db?password=x") is None


@pytest.mark.parametrize(
    "jdbc",
    [
        "jdbc:mysql://h/db?useSSL=true&password=tiger",
        "jdbc:mariadb://h/db?serverTimezone=UTC&password=tiger",
    ],
)
def test_mysql_url_options_without_pymysql_equivalent_are_refused(jdbc: str) -> None:
    """A Connector/J option pymysql has no equivalent for is one line naming it."""
    with pytest.raises(ConfigurationError, match=r"the option '\w+' has no .*pymysql") as error:
        sqlalchemy_url(jdbc, "u")
    assert "tiger" not in str(error.value)
    assert "\n" not in str(error.value)


def test_mysql_user_and_password_from_the_url() -> None:
    """MySQL's user and password options are the credentials when the properties are empty."""
    assert (
        sqlalchemy_url("jdbc:mysql://h/db?user=shop&password=s%40c&rewriteBatchedStatements=true")
        == "mysql+pymysql://shop:s%40c@h/db"
    )


def test_sqlserver_url_options() -> None:
    """Microsoft's driver's options map to pymssql's (encrypt, loginTimeout as an integer,
    applicationName); user and password from the URL when the properties are empty;
    Java-only tuning and trustServerCertificate=true accepted without effect."""
    import sqlalchemy

    from processors.sql.jdbc_url import pymssql_connect_args

    url = sqlalchemy_url(
        "jdbc:sqlserver://db:1433;databaseName=sales;encrypt=true;trustServerCertificate=true;"
        "loginTimeout=30;applicationName=Flow One;user=sa;password=p@ss;"
        "sendStringParametersAsUnicode=false",
    )
    assert url == (
        "mssql+pymssql://sa:p%40ss@db:1433/sales"
        "?encryption=require&login_timeout=30&appname=Flow%20One"
    )
    url, args = pymssql_connect_args(url)
    assert args == {"login_timeout": 30}
    parsed = sqlalchemy.engine.make_url(url)
    _, kwargs = parsed.get_dialect()().create_connect_args(parsed)
    assert kwargs == {
        "host": "db:1433",
        "database": "sales",
        "user": "sa",
        "password": "p@ss",
        "encryption": "require",
        "appname": "Flow One",
    }
    assert sqlalchemy_url("jdbc:sqlserver://db;databaseName=s;user=x", "u", "p") == (
        "mssql+pymssql://u:p@db/s"
    )


@pytest.mark.parametrize(
    "option", ["encrypt=strict", "trustServerCertificate=false", "integratedSecurity=true"]
)
def test_sqlserver_url_options_without_pymssql_equivalent_are_refused(option: str) -> None:
    """An option pymssql has no equivalent for is one line naming it and the way out."""
    name, value = option.split("=", maxsplit=1)
    with pytest.raises(ConfigurationError, match=rf"the option '{name}' has no .*pymssql") as error:
        sqlalchemy_url(f"jdbc:sqlserver://db:1433;databaseName=s;{option}", "u", "p")
    assert f"={value}" not in str(error.value)


@pytest.mark.parametrize(
    "jdbc",
    [
        "jdbc:mysql://h:3306/db?trustCertificateKeyStorePassword=TopSecret1",
        "jdbc:mariadb://h:3306/db?clientCertificateKeyStorePassword=TopSecret1",
        "jdbc:sqlserver://h:1433;databaseName=s;keyStoreSecret=TopSecret1",
    ],
)
def test_a_refused_option_is_named_without_its_value(jdbc: str) -> None:
    """A refused option's value may be a secret (a key store's password): the error names
    the option only, as the PostgreSQL one does."""
    with pytest.raises(ConfigurationError, match=r"KeyStorePassword'|keyStoreSecret'") as error:
        sqlalchemy_url(jdbc, "u", "p")
    assert "TopSecret1" not in str(error.value)


def test_mysql_reads_user_and_password_options_in_any_case() -> None:
    """Connector/J reads option names in any case (PropertyKey.normalizeCase): Password= is
    the password, taken and masked, never refused as an unknown option; pgjdbc's are exact."""
    assert sqlalchemy_url("jdbc:mariadb://h:3306/db?User=shop&Password=s%40c") == (
        "mariadb+pymysql://shop:s%40c@h:3306/db"
    )
    assert url_password("jdbc:mysql://h/db?USER=u&Password=s%40c") == "s@c"
    with pytest.raises(ConfigurationError, match="'Password' has no") as error:
        sqlalchemy_url("jdbc:postgresql://h/db?Password=TopSecret1", "u")
    assert "TopSecret1" not in str(error.value)
