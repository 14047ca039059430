"""NiFi's Database Type values, and the processors that take one refusing any other."""

from __future__ import annotations

import pytest

from processors.sql.database_types import DATABASE_TYPES
from processors.sql.put_database_record import PutDatabaseRecord
from processors.sql.query_database_table import QueryDatabaseTable
from processors.sql.query_database_table_record import QueryDatabaseTableRecord

NIFI_TYPES = [
    "Database Dialect Service",
    "Generic",
    "Oracle",
    "Oracle 12+",
    "MS SQL 2012+",
    "MS SQL 2008",
    "MySQL",
    "PostgreSQL",
    "Phoenix",
]
PROCESSORS = [QueryDatabaseTable, QueryDatabaseTableRecord, PutDatabaseRecord]


def test_the_values_are_nifis_adapters_in_its_order() -> None:
    """DatabaseAdapterDescriptor's values: the ServiceLoader's order, Generic the default."""
    assert [v.value for v in DATABASE_TYPES] == NIFI_TYPES
    assert all(v.description for v in DATABASE_TYPES)


@pytest.mark.parametrize("cls", PROCESSORS)
def test_a_misspelt_type_is_a_problem_naming_the_allowed_values(cls: type) -> None:
    """'Postgres' is no Database Type: the problem says which ones are."""
    problems = [
        p for p in cls(**{"Database Type": "Postgres"}).validate() if "Database Type" in str(p)
    ]
    assert len(problems) == 1
    assert "'Postgres'" in str(problems[0])
    assert "'PostgreSQL'" in str(problems[0])
    assert "'MS SQL 2012+'" in str(problems[0])


@pytest.mark.parametrize("cls", PROCESSORS)
def test_every_nifi_type_and_the_old_internal_names_are_accepted(cls: type) -> None:
    """Each of NiFi's values is valid, given by display or former internal name."""
    old = "db-type" if cls is PutDatabaseRecord else "db-fetch-db-type"
    for value in NIFI_TYPES:
        for name in ("Database Type", old):
            processor = cls(**{name: value})
            assert not [p for p in processor.validate() if "Database Type" in str(p)], value
            descriptor = processor.resolve_descriptor("Database Type")
            assert processor.effective_value(descriptor) == value
