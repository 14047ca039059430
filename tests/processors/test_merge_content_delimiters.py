"""Tests for MergeContent's Binary Concatenation delimiters: Header, Demarcator and Footer as
text or files, or none."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.processors._merge_runner import hello_world, merged, runner_for


def test_text_delimiters() -> None:
    """Header, demarcator and footer as text wrap and separate the contents."""
    runner = runner_for(delimiter_strategy="Text", header="@", demarcator="#", footer="$")
    hello_world(runner)
    runner.run(2)
    assert merged(runner) == [b"@Hello#, #World!$"]
    runner = runner_for(delimiter_strategy="Text", header="@")
    hello_world(runner)
    runner.run(2)
    assert merged(runner) == [b"@Hello, World!"]


def test_file_delimiters_evaluated_against_the_first_flowfile(tmp_path: Path) -> None:
    """With the Filename strategy, EL picks files whose bytes become the delimiters."""
    for name, body in (("head", "(|)"), ("demarcate", "***"), ("foot", "___")):
        (tmp_path / name).write_text(body)
    runner = runner_for(
        delimiter_strategy="Filename",
        header="${header}",
        demarcator="${demarcator}",
        footer="${footer}",
    )
    attributes = {
        "header": str(tmp_path / "head"),
        "demarcator": str(tmp_path / "demarcate"),
        "footer": str(tmp_path / "foot"),
    }
    for text in ("Hello", ", ", "World!"):
        runner.enqueue(text, attributes)
    runner.run(2)
    assert merged(runner) == [b"(|)Hello***, ***World!___"]


def test_no_delimiters_ignores_delimiter_properties() -> None:
    """'Do Not Use Delimiters' ignores Header, Demarcator and Footer even when set."""
    runner = runner_for(
        delimiter_strategy="Do Not Use Delimiters", header="aHeader", demarcator="; ", footer="x"
    )
    for text in ("First", "Second", "Third"):
        runner.enqueue(text)
    runner.run(2)
    assert merged(runner) == [b"FirstSecondThird"]


@given(
    st.lists(st.binary(max_size=30), min_size=1, max_size=12),
    st.binary(max_size=4),
    st.binary(max_size=4),
    st.binary(max_size=4),
)
def test_concatenation_length_is_inputs_plus_delimiters(
    parts: list[bytes], header: bytes, demarcator: bytes, footer: bytes
) -> None:
    """Binary concatenation output length = sum of inputs + header + footer + (n-1) demarcators."""
    texts = {}
    for name, value in (("header", header), ("demarcator", demarcator), ("footer", footer)):
        if value:
            texts[name] = value.decode("latin-1")
    runner = runner_for(
        delimiter_strategy="Text",
        maximum_number_of_entries=len(parts),
        minimum_number_of_entries=len(parts),
        **texts,
    )
    for part in parts:
        runner.enqueue(part)
    runner.run()
    (bundle,) = merged(runner)
    expected = sum(len(p) for p in parts) + sum(
        len(t.encode()) for k, t in texts.items() if k != "demarcator"
    )
    expected += (len(parts) - 1) * len(texts.get("demarcator", "").encode())
    assert len(bundle) == expected
