"""Tests for the engine settings: NiFi-like defaults, and bad values named where they are made."""

from __future__ import annotations

import pickle

import pytest

from flowcore.settings import Settings


def test_defaults_are_nifis_shipped_values_and_parse_to_numbers() -> None:
    """Penalty, yield and provenance retention default to what NiFi ships."""
    settings = Settings()
    assert (settings.penalization_ms, settings.yield_ms) == (30_000, 1_000)
    assert settings.provenance_max_storage_time == "30 days"
    assert settings.provenance_max_storage_size == "10 GB"
    assert settings.provenance_indexed_attributes == ()
    assert settings.batch_max_bytes_value == 1024**3


def test_the_spark_connect_timeout_is_a_nifi_time_period() -> None:
    """``spark_connect_timeout`` defaults to ``30 sec`` and parses from text like the others."""
    assert Settings().spark_connect_timeout_seconds == 30.0
    assert Settings.parse({"spark-connect-timeout": "2 sec"}).spark_connect_timeout_seconds == 2.0
    with pytest.raises(ValueError, match="spark_connect_timeout"):
        Settings(spark_connect_timeout="soon")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("provenance_max_storage_time", "a month", "provenance_max_storage_time: 'a month' is"),
        ("provenance_max_storage_size", "lots", "provenance_max_storage_size: 'lots' is"),
        ("batch_max_flowfiles", 0, "batch_max_flowfiles must be at least 1"),
    ],
)
def test_a_bad_value_is_refused_with_the_field_and_the_accepted_form(
    field: str, value: object, expected: str
) -> None:
    """The error names the setting and what it accepts, when the Settings value is made."""
    with pytest.raises(ValueError, match=expected):
        Settings(**{field: value})  # type: ignore[arg-type]


def test_indexed_attributes_take_one_name_or_many_and_travel_with_tasks() -> None:
    """A single name is not split into letters; the value pickles as Spark ships it."""
    assert Settings(provenance_indexed_attributes="customer").provenance_indexed_attributes == (
        "customer",
    )
    settings = Settings(provenance_indexed_attributes=["customer", "region"])
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_settings_parse_from_text_by_each_fields_type() -> None:
    """Whole numbers, booleans, comma-separated lists and text, by name with _ or -."""
    settings = Settings.parse(
        {
            "batch-max-flowfiles": "50_000",
            "sync": "false",
            "provenance_indexed_attributes": "customer, region",
            "provenance_max_storage_time": "7 days",
        },
        parallelism=3,
    )
    assert settings == Settings(
        batch_max_flowfiles=50_000,
        sync=False,
        provenance_indexed_attributes=("customer", "region"),
        provenance_max_storage_time="7 days",
        parallelism=3,
    )


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        ({"provenance_max_storage_sze": "1 GB"}, "did you mean 'provenance_max_storage_size'"),
        ({"sync": "maybe"}, "sync takes true or false, got 'maybe'"),
        ({"parallelism": "two"}, "parallelism takes a whole number, got 'two'"),
        ({"penalization_period": "soon"}, "penalization_period: 'soon' is not a time period"),
    ],
)
def test_parsing_names_the_setting_and_what_it_takes(texts: dict[str, str], expected: str) -> None:
    """An unknown name gets the closest one; a bad value, the form the field takes."""
    with pytest.raises(ValueError, match=expected):
        Settings.parse(texts)
