"""DBCPConnectionPool: NiFi's names, a pooled engine per enabling, secrets masked."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.registry import service_class
from processors.sql.dbcp import DBCPConnectionPool


def _enable(**props: str) -> DBCPConnectionPool:
    service = DBCPConnectionPool("db", **props)
    return service.enable(ServiceContext(service))


def test_registered_with_nifi_names_and_defaults() -> None:
    """The service is found by name; NiFi 1 internal names are accepted."""
    assert service_class("DBCPConnectionPool") is DBCPConnectionPool
    service = DBCPConnectionPool(
        "db",
        **{
            "Database Connection URL": "jdbc:sqlite::memory:",
            "Validation-query": "select 1",
            "dbcp-max-idle-conns": "4",
        },
    )
    assert not service.validate() or all(r.valid for r in service.validate())
    assert service.get_property("Max Wait Time").value == "500 millis"
    assert service.get_property("Max Total Connections").value == "8"
    assert service.get_property("Validation Query").value == "select 1"


def test_postgres_pool_with_validation_query(postgres) -> None:
    """A JDBC URL reaches PostgreSQL through the pool; each checkout is validated."""
    pool = _enable(
        **{
            "Database Connection URL": postgres.jdbc_url,
            "Database User": "postgres",
            "Validation Query": "select 1",
            "Max Total Connections": "2",
        }
    )
    try:
        with pool.connection() as connection:
            assert connection.execute(sa.text("select 41 + 1")).scalar() == 42
        assert pool.engine().pool.size() == 2
        assert pool.transit_uri() == f"jdbc:postgresql://127.0.0.1:{postgres.port}/postgres"
    finally:
        pool.on_disabled()


def test_unreachable_server_fails_in_bounded_time() -> None:
    """A closed port: the connection attempt fails quickly naming the cause."""
    pool = _enable(
        **{
            "Database Connection URL": "jdbc:postgresql://127.0.0.1:1/x",
            "Database User": "u",
            "Password": "hunter2-secret",
        }
    )
    with pytest.raises(sa.exc.OperationalError) as caught, pool.connection():
        pass
    assert "hunter2-secret" not in str(caught.value)


def test_refused_credentials(postgres) -> None:
    """A user the server does not know is refused, the password never in the message."""
    pool = _enable(
        **{
            "Database Connection URL": postgres.jdbc_url,
            "Database User": "nobody",
            "Password": "hunter2-secret",
        }
    )
    with pytest.raises(sa.exc.OperationalError, match="nobody") as caught, pool.connection():
        pass
    assert "hunter2-secret" not in str(caught.value)


def test_password_is_masked_and_not_exported() -> None:
    """The sensitive Password never shows in repr or validation messages."""
    service = DBCPConnectionPool(
        "db", **{"Database Connection URL": "jdbc:sqlite::memory:", "Password": "hunter2-secret"}
    )
    assert "hunter2-secret" not in repr(service)
    assert "hunter2-secret" in service.sensitive_values()


def test_unmapped_url_is_a_configuration_error() -> None:
    """A database flowcore has no driver for fails enabling, with the mapped ones named."""
    with pytest.raises(ConfigurationError, match="no Python driver"):
        _enable(**{"Database Connection URL": "jdbc:h2:mem:x"})


def test_a_malformed_url_names_the_url_without_its_password() -> None:
    """A port that is no number fails enabling naming the URL (its options, the password
    among them, left out), not only int()'s error."""
    url = "jdbc:postgresql://db.example:54x2/app?user=u&password=S3cretPW"
    with pytest.raises(
        ConfigurationError, match=r"cannot use 'jdbc:postgresql://db\.example:54x2/app'"
    ) as error:
        _enable(**{"Database Connection URL": url})
    assert "S3cretPW" not in str(error.value)


def test_export_and_import_leave_the_password_out(tmp_path) -> None:
    """A flow's export to NiFi names DBCPConnectionPool's type, never its password; the
    export imports back with ExecuteSQL naming the pool."""
    import json

    from flowcore import Flow
    from processors.sql.execute_sql import ExecuteSQL

    flow = Flow("sql-export")
    flow.add_service(
        DBCPConnectionPool(
            "pool",
            **{
                "Database Connection URL": "jdbc:postgresql://db:5432/sales",
                "Database User": "u",
                "Password": "hunter2-secret",
            },
        )
    )
    flow.add(
        ExecuteSQL(**{"Database Connection Pooling Service": "pool", "SQL Query": "select 1"}),
        name="query",
    )
    exported = flow.to_nifi()
    text = json.dumps(exported)
    assert "hunter2-secret" not in text
    assert "org.apache.nifi.dbcp.DBCPConnectionPool" in text
    assert "org.apache.nifi.processors.standard.ExecuteSQL" in text
    back = Flow.from_nifi(exported)
    [service] = back.services.values()
    assert type(service).__name__ == "DBCPConnectionPool"
    assert service.get_property("Database Connection URL").value == (
        "jdbc:postgresql://db:5432/sales"
    )


def test_an_engine_serves_the_next_enabling_of_the_same_pool(postgres) -> None:
    """A disabled pool's engine, its connections closed, serves the next pool enabled with the
    same configuration (SQLAlchemy's dialect initialized once); never two pools at once, nor a
    pool of another configuration."""
    props = {
        "Database Connection URL": postgres.jdbc_url,
        "Database User": postgres.user,
        "application_name": "reused",  # a driver argument: a configuration no other test has
    }
    first = _enable(**props)
    engine = first.engine()
    initialized: list[object] = []
    initialize = engine.dialect.initialize
    engine.dialect.initialize = lambda c: initialized.append(c) or initialize(c)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("select 1").scalar() == 1
    first.on_disabled()
    assert engine.pool.checkedin() == 0
    second = _enable(**props)
    other = _enable(**props)
    validated = _enable(**props, **{"Validation Query": "select 2"})
    assert second.engine() is engine
    assert other.engine() is not engine
    assert validated.engine() is not engine
    with engine.connect() as connection:
        assert connection.exec_driver_sql("select 1").scalar() == 1
    assert len(initialized) == 1
    for pool in (second, other, validated):
        pool.on_disabled()


def test_disabled_engines_are_kept_for_a_bounded_number_of_configurations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Engines of disabled pools wait for at most 16 configurations (the least recently
    disabled dropped) and 4 per configuration; a configuration taken empty leaves none."""
    from processors.sql import dbcp

    monkeypatch.setattr(dbcp, "_IDLE", {})
    engines = {f"config-{n}": [object() for _ in range(5)] for n in range(20)}
    for key, made in engines.items():
        for engine in made:
            dbcp._put_idle(key, engine)
    dbcp._put_idle("config-3", object())  # a dropped one disabled again: config-4 goes
    assert list(dbcp._IDLE) == [f"config-{n}" for n in range(5, 20)] + ["config-3"]
    assert [dbcp._take_idle("config-19") for _ in range(5)] == [*engines["config-19"][3::-1], None]
    assert "config-19" not in dbcp._IDLE
    assert dbcp._take_idle("config-0") is None


def _pg(postgres, **props: str) -> dict[str, str]:
    return {"Database Connection URL": postgres.jdbc_url, "Database User": postgres.user, **props}


def test_negative_min_idle_is_not_valid() -> None:
    """NiFi's testNotValidWithNegativeMinIdleProperty."""
    service = DBCPConnectionPool(
        "db",
        **{"Database Connection URL": "jdbc:sqlite::memory:", "Minimum Idle Connections": "-1"},
    )
    assert not all(r.valid for r in service.validate())


def test_pool_settings_map_onto_sqlalchemys_pool() -> None:
    """NiFi's testGetDataSourceProperties: Max Idle is the pool's size, the rest of Max Total
    its overflow, Max Wait Time -1 waits indefinitely, lifetime is pool_recycle."""
    from processors.sql.dbcp import pool_options

    def options(**props: str) -> dict:
        service = DBCPConnectionPool("db", **{"Database Connection URL": "x", **props})
        return pool_options(ServiceContext(service), sqlite=False)

    assert options() == {
        "pool_size": 8,
        "max_overflow": 0,
        "pool_timeout": 0.5,
        "pool_recycle": -1,
    }
    mapped = options(
        **{
            "Max Wait Time": "-1",
            "Maximum Idle Connections": "6",
            "Maximum Connection Lifetime": "1 secs",
        }
    )
    assert mapped == {"pool_size": 6, "max_overflow": 2, "pool_timeout": 1e9, "pool_recycle": 1}
    unbounded = options(**{"Max Total Connections": "-1", "Maximum Idle Connections": "3"})
    assert (unbounded["pool_size"], unbounded["max_overflow"]) == (3, -1)
    assert (options(**{"Maximum Idle Connections": "0"})["pool_size"]) == 1
    with pytest.raises(ConfigurationError, match="Max Total Connections is 0"):
        options(**{"Max Total Connections": "0"})


def test_max_total_connections_exceeded(postgres) -> None:
    """NiFi's testGetConnectionMaxTotalConnectionsExceeded: one connection, a second
    checkout waits Max Wait Time and fails."""
    pool = _enable(**_pg(postgres, **{"Max Total Connections": "1", "Max Wait Time": "1 ms"}))
    try:
        with pool.connection(), pytest.raises(sa.exc.TimeoutError), pool.connection():
            pass
    finally:
        pool.on_disabled()


def test_dynamic_properties_are_driver_arguments(postgres) -> None:
    """NiFi's testGetConnectionDynamicProperty(ExpressionLanguageSupported,
    SensitivePrefixSupported): a dynamic property reaches the driver, EL evaluated; a
    SENSITIVE. one too, masked and never exported; both forms of one name are refused."""
    pool = _enable(**_pg(postgres, application_name="${literal('flow'):append('core')}"))
    try:
        with pool.connection() as connection:
            name = connection.exec_driver_sql("select current_setting('application_name')")
            assert name.scalar() == "flowcore"
    finally:
        pool.on_disabled()
    props = _pg(postgres, **{"SENSITIVE.application_name": "hunter2-app"})
    service = DBCPConnectionPool("db", **props)
    assert "hunter2-app" not in repr(service)
    assert "hunter2-app" in service.sensitive_values()
    pool = service.enable(ServiceContext(service))
    try:
        with pool.connection() as connection:
            name = connection.exec_driver_sql("select current_setting('application_name')")
            assert name.scalar() == "hunter2-app"
    finally:
        pool.on_disabled()
    with pytest.raises(ConfigurationError, match="Duplicate driver property 'application_name'"):
        _enable(**props, application_name="plain")


def test_sensitive_dynamic_property_left_out_of_export() -> None:
    """A SENSITIVE. driver property is not written in a flow's export."""
    from flowcore import Flow

    flow = Flow("sql-export")
    flow.add_service(
        DBCPConnectionPool(
            "pool",
            **{
                "Database Connection URL": "jdbc:postgresql://db:5432/sales",
                "SENSITIVE.sslpassword": "hunter2-key",
                "sslmode": "require",
            },
        )
    )
    import json

    text = json.dumps(flow.to_nifi())
    assert "hunter2-key" not in text
    assert "SENSITIVE.sslpassword" in text
    assert "require" in text


def test_kerberos_user_service_is_refused() -> None:
    """Kerberos User Service set: enabling fails naming it and what to use instead."""
    with pytest.raises(ConfigurationError, match="Kerberos User Service is not supported"):
        _enable(
            **{"Database Connection URL": "jdbc:sqlite::memory:", "Kerberos User Service": "krb"}
        )


def test_nifi_2_names_password_source_and_its_provider_refused() -> None:
    """NiFi 2's Database Driver Locations and Password Source are properties, not driver
    arguments; Password Source 'Password Provider' is refused naming what to use instead."""
    service = DBCPConnectionPool(
        "db",
        **{
            "Database Connection URL": "jdbc:sqlite::memory:",
            "Database Driver Locations": "/opt/drivers",
            "Password Source": "PASSWORD",
        },
    )
    assert service.validate() == ()
    assert service.dynamic_properties == {}
    assert service.get_property("Database Driver Location(s)").value == "/opt/drivers"
    wrong = DBCPConnectionPool("db", **{"Database Connection URL": "x", "Password Source": "pw"})
    assert any("Password Source" in str(p) for p in wrong.validate())
    with pytest.raises(ConfigurationError, match="'Password Provider' is not supported"):
        _enable(
            **{
                "Database Connection URL": "jdbc:sqlite::memory:",
                "Password Source": "PASSWORD_PROVIDER",
            }
        )


def test_idle_connection_evicted_and_pool_settings_key_the_engine(postgres) -> None:
    """With Time Between Eviction Runs set, a connection idle past Minimum Evictable Idle
    Time is replaced at its next checkout; a pool of other settings never takes the engine."""
    import time

    props = _pg(
        postgres,
        **{"Time Between Eviction Runs": "1 sec", "Minimum Evictable Idle Time": "1 millis"},
    )
    pool = _enable(**props)
    try:
        pid = "select pg_backend_pid()"
        with pool.connection() as connection:
            first = connection.exec_driver_sql(pid).scalar()
        time.sleep(0.05)
        with pool.connection() as connection:
            assert connection.exec_driver_sql(pid).scalar() != first
    finally:
        pool.on_disabled()
    engine = pool._engine_key
    other = _enable(**props, **{"Maximum Idle Connections": "2"})
    try:
        assert other._engine_key != engine
        assert other.engine().pool.size() == 2
    finally:
        other.on_disabled()


def test_time_periods_accept_minus_one_and_refuse_text() -> None:
    """NiFi's CUSTOM_TIME_PERIOD_VALIDATOR: a time period or -1; anything else is invalid,
    named by property."""
    service = DBCPConnectionPool(
        "db",
        **{
            "Database Connection URL": "jdbc:sqlite::memory:",
            "Max Wait Time": "-1",
            "Maximum Connection Lifetime": "5 mins",
            "Time Between Eviction Runs": "soon",
        },
    )
    bad = [r.subject for r in service.validate() if not r.valid]
    assert bad == ["Time Between Eviction Runs"]


def test_a_run_writes_no_secret_into_the_repository(tmp_path) -> None:
    """The repository records each service's settings (its identity state in the WAL): neither
    the Password nor a SENSITIVE. driver property's value reaches any file of it."""
    from flowcore import Flow
    from processors import GenerateFlowFile

    flow = Flow("sql-secrets")
    flow.add_service(
        DBCPConnectionPool(
            "pool",
            **{
                "Database Connection URL": f"jdbc:sqlite:{tmp_path / 'x.db'}",
                "Password": "hunter2-password",
                "SENSITIVE.sslpassword": "hunter2-driver",
            },
        )
    )
    gen = flow.add(GenerateFlowFile(), name="gen")
    flow.auto_terminate(gen, "success")
    flow.run(runner="direct", repository=tmp_path / "repo")
    files = [p for p in (tmp_path / "repo").rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        assert b"hunter2" not in data, path


def test_postgres_url_options_reach_the_session(postgres) -> None:
    """pgjdbc URL options work as NiFi's: user and password from the URL (the properties
    empty), currentSchema as the search_path, ApplicationName, connectTimeout, ssl=false."""
    postgres.execute("create schema if not exists url_opts")
    pool = _enable(
        **{
            "Database Connection URL": f"{postgres.jdbc_url}?user={postgres.user}"
            "&password=hunter2-secret&currentSchema=url_opts,public&ssl=false"
            "&ApplicationName=flowcore-etl&connectTimeout=3&reWriteBatchedInserts=true",
        }
    )
    try:
        with pool.connection() as connection:
            assert connection.execute(
                sa.text("select current_schema(), current_setting('application_name')")
            ).one() == ("url_opts", "flowcore-etl")
        assert pool.transit_uri() == f"jdbc:postgresql://127.0.0.1:{postgres.port}/postgres"
    finally:
        pool.on_disabled()
    nobody = _enable(
        **{"Database Connection URL": f"{postgres.jdbc_url}?user=nobody&password=hunter2-secret"}
    )
    with pytest.raises(sa.exc.OperationalError, match="nobody") as caught, nobody.connection():
        pass
    assert "hunter2-secret" not in str(caught.value)
