"""Tests for MergeContent's configuration: validation with NiFi's messages, legacy names."""

from __future__ import annotations

from processors import MergeContent


def test_delimiter_validation() -> None:
    """Empty text delimiters and missing delimiter files are invalid, each named."""
    empty = MergeContent(delimiter_strategy="Text", header="", demarcator="", footer="").validate()
    assert len(empty) == 3
    assert all("cannot be empty" in str(p) for p in empty)
    missing = "does/not/exist"
    files = MergeContent(
        delimiter_strategy="Filename", header=missing, demarcator=missing, footer=missing
    )
    problems = files.validate()
    assert len(problems) == 3
    assert all(f"is invalid because File {missing} does not exist" in str(p) for p in problems)
    # Delimiters of another format are ignored entirely.
    assert MergeContent(merge_format="TAR", delimiter_strategy="Text", header="").is_valid()


def test_min_max_validation() -> None:
    """Minimums above maximums are invalid with NiFi's messages."""
    problems = [
        str(p)
        for p in MergeContent(minimum_group_size="2 KB", maximum_group_size="1 KB").validate()
    ]
    assert any("Min Size must be less than or equal to Max Size" in p for p in problems)
    problems = [
        str(p)
        for p in MergeContent(minimum_number_of_entries=5, maximum_number_of_entries=2).validate()
    ]
    assert any("Min Entries must be less than or equal to Max Entries" in p for p in problems)
    assert not MergeContent(max_bin_age="500 millis").is_valid()


def test_legacy_property_names_are_accepted() -> None:
    """NiFi 1.x internal names still configure the renamed properties."""
    processor = MergeContent(
        **{"Maximum number of Bins": "7", "mergecontent-metadata-strategy": "Ignore Metadata"}
    )
    assert processor.configured == {
        "Maximum Number of Bins": "7",
        "Metadata Strategy": "Ignore Metadata",
    }
