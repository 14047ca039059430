"""Tests for the NiFi standard validators, each with good and bad values."""

from __future__ import annotations

import pytest

from flowcore import validators as v


@pytest.mark.parametrize(
    ("validator", "good", "bad"),
    [
        (v.NON_EMPTY_VALIDATOR, ["x", " "], [""]),
        (v.NON_BLANK_VALIDATOR, ["x"], ["", "   "]),
        (v.INTEGER_VALIDATOR, ["0", "-5", "2147483647"], ["1.5", "abc", "", "2147483648"]),
        (v.POSITIVE_INTEGER_VALIDATOR, ["1", "1000"], ["0", "-1", "x"]),
        (v.NON_NEGATIVE_INTEGER_VALIDATOR, ["0", "7"], ["-1", "x", "1.0"]),
        (v.LONG_VALIDATOR, ["9223372036854775807", "-3"], ["9223372036854775808", "x"]),
        (v.POSITIVE_LONG_VALIDATOR, ["1"], ["0"]),
        (v.NUMBER_VALIDATOR, ["1", "1.5", "-2e3"], ["abc", ""]),
        (v.BOOLEAN_VALIDATOR, ["true", "false", "TRUE"], ["yes", "1", ""]),
        (v.REGULAR_EXPRESSION_VALIDATOR, ["a.*", r"\d+"], ["(", "[a"]),
        (v.DATA_SIZE_VALIDATOR, ["10 KB", "0 B", "1.5 GB", "10kb"], ["10", "ten KB", "10 XB"]),
        (
            v.TIME_PERIOD_VALIDATOR,
            ["5 secs", "1 min", "2 hours", "1 day", "30 sec", "10 millis"],
            ["5", "soon", "1 fortnight"],
        ),
        (v.CHARACTER_SET_VALIDATOR, ["UTF-8", "ISO-8859-1", "utf-16"], ["UTF-99", "nope"]),
        (v.ATTRIBUTE_KEY_VALIDATOR, ["a.b", "my attr"], ["", "a\nb"]),
        (v.PORT_VALIDATOR, ["1", "65535"], ["0", "65536", "x"]),
        (v.URL_VALIDATOR, ["https://host:8443/path"], ["host", "not a url"]),
        (v.URI_VALIDATOR, ["file:///tmp/x"], ["/tmp/x"]),
        (v.HOSTNAME_PORT_LIST_VALIDATOR, ["a:1,b:2"], ["a", "a:0"]),
    ],
)
def test_good_and_bad_values(validator: v.Validator, good: list[str], bad: list[str]) -> None:
    """Each validator accepts its good values and rejects its bad ones with an explanation."""
    for value in good:
        assert validator("Prop", value).valid, (validator, value)
    for value in bad:
        result = validator("Prop", value)
        assert not result.valid, (validator, value)
        assert result.explanation


def test_invalid_result_names_property_value_and_reason() -> None:
    """The message has NiFi's shape: property, value and why."""
    result = v.POSITIVE_INTEGER_VALIDATOR("Line Split Count", "abc")
    assert str(result) == (
        "'Line Split Count' validated against 'abc' is invalid because value is not a valid "
        "positive integer"
    )


def test_file_exists_validator(tmp_path) -> None:
    """FILE_EXISTS accepts an existing file and says which path is missing."""
    existing = tmp_path / "head"
    existing.write_text("x")
    assert v.FILE_EXISTS_VALIDATOR("Header", str(existing)).valid
    missing = v.FILE_EXISTS_VALIDATOR("Header", str(tmp_path / "nope"))
    assert not missing.valid
    assert f"File {tmp_path / 'nope'} does not exist" in missing.explanation


def test_bounded_factories() -> None:
    """Factories build bounded long, time-period, data-size and regex validators."""
    age = v.create_time_period_validator("1 sec", "24 days")
    assert age("Max Bin Age", "1 min").valid
    assert not age("Max Bin Age", "500 millis").valid
    level = v.create_long_validator(0, 9)
    assert level("Compression Level", "9").valid
    assert not level("Compression Level", "10").valid
    size = v.create_data_size_bounds_validator(1, 1024)
    assert size("Size", "1 KB").valid
    assert not size("Size", "2 KB").valid
    regex = v.create_regex_matching_validator(r"\d{1,2}%", "must be a percentage such as 90%")
    assert regex("Usage", "90%").valid
    assert regex("Usage", "90").explanation == "must be a percentage such as 90%"


def test_directory_validator(tmp_path) -> None:
    """The directory validator accepts directories and, when allowed, creatable paths."""
    assert v.create_directory_exists_validator()("Dir", str(tmp_path)).valid
    assert not v.create_directory_exists_validator()("Dir", str(tmp_path / "new")).valid
    assert v.create_directory_exists_validator(create_if_missing=True)(
        "Dir", str(tmp_path / "new")
    ).valid


def test_python_values_render_as_nifi_strings() -> None:
    """Validators render Python values in their NiFi form."""
    from datetime import timedelta

    assert v.BOOLEAN_VALIDATOR.to_string(True) == "true"
    assert v.TIME_PERIOD_VALIDATOR.to_string(60) == "60 secs"
    assert v.TIME_PERIOD_VALIDATOR.to_string(timedelta(milliseconds=1500)) == "1500 millis"
    assert v.DATA_SIZE_VALIDATOR.to_string(1024) == "1024 B"


def test_regex_validator_counts_capturing_groups() -> None:
    """createRegexValidator: a valid regex with a bounded number of capturing groups."""
    check = v.create_regex_validator(1, 2)
    assert check("r", "(a)(b)").valid
    assert "between 1 and 2 Capturing Groups but has 0" in check("r", "ab").explanation
    assert "between 1 and 2 Capturing Groups but has 3" in check("r", "(a)(b)(c)").explanation
    assert "not a valid regular expression" in check("r", "(").explanation
