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
        assert pool.transit_uri() == f"postgresql://127.0.0.1:{postgres.port}/postgres"
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
