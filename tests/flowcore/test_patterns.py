"""Tests for flowcore/patterns.py: a flow's regexes, bounded in time."""

from __future__ import annotations

import pickle
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import ExpressionEvaluationError, RegexTimeoutError
from flowcore.patterns import compile_pattern, set_time_limit, time_limit
from flowcore.settings import Settings
from processors import GenerateFlowFile, GetFile, RouteOnAttribute, UpdateAttribute

CATASTROPHIC = "(a|aa)+$"  # exponential backtracking in re (and in Java's engine)
HOSTILE_NAME = "a" * 33 + "!"


@pytest.fixture
def short_limit() -> Iterator[None]:
    before = time_limit()
    set_time_limit(0.2)
    yield
    set_time_limit(before)


def test_a_catastrophic_pattern_stops_at_the_limit(short_limit: None) -> None:
    """The issue's hang ends after the limit with an error naming the pattern and the limit."""
    started = time.monotonic()
    with pytest.raises(RegexTimeoutError, match=r"\(a\|aa\)\+\$.*0\.2 s limit") as caught:
        compile_pattern(CATASTROPHIC).search(HOSTILE_NAME)
    assert time.monotonic() - started < 2
    assert caught.value.pattern == CATASTROPHIC


def test_a_filter_skips_the_name_it_cannot_decide(short_limit: None) -> None:
    """Filters over names treat a match over the limit as no match."""
    pattern = compile_pattern(CATASTROPHIC)
    assert not pattern.accepts(HOSTILE_NAME)
    assert pattern.accepts("aaaa")


def test_java_syntax_and_pickling() -> None:
    r"""Named groups, \Q..\E quoting and possessive quantifiers read as Java's; patterns pickle."""
    assert compile_pattern(r"(?<y>\d{4})").search("in 2026").group("y") == "2026"
    assert compile_pattern(r"\Qa.b\E").fullmatch("a.b")
    assert not compile_pattern(r"\Qa.b\E").fullmatch("axb")
    assert compile_pattern(r"a*+b").fullmatch("aaab")
    assert pickle.loads(pickle.dumps(compile_pattern("x+"))).pattern == "x+"
    with pytest.raises(ExpressionEvaluationError, match="not a valid regular expression"):
        compile_pattern("(")


_PIECES = st.sampled_from(["a", "b", ".", "a*", "b+", "(a|b)", "[ab]", "a?", "(ab)*", "\\d"])


@given(pieces=st.lists(_PIECES, min_size=1, max_size=5), text=st.text("ab1 ", max_size=12))
def test_results_agree_with_re(pieces: list[str], text: str) -> None:
    """On ordinary patterns the bounded engine finds what Python's re finds."""
    pattern = "".join(pieces)
    ours, theirs = compile_pattern(pattern), re.compile(pattern)
    assert bool(ours.fullmatch(text)) == bool(theirs.fullmatch(text))
    found, expected = ours.search(text), theirs.search(text)
    assert (found and found.span()) == (expected and expected.span())
    assert ours.sub("-", text) == theirs.sub("-", text)


def test_a_hostile_expression_keeps_its_flowfile_queued_with_a_bulletin(
    tmp_path: Path, runner: str
) -> None:
    """UpdateAttribute with the issue's expression: the run ends, the FlowFiles stay queued
    (penalized) and a bulletin names the pattern and the limit."""
    settings = Settings(
        sync=False, parallelism=1, regex_time_limit="200 ms", driver_run_max_flowfiles=0
    )
    flow = Flow("hostile")
    gen = flow.add(GenerateFlowFile(batch_size=2, unique_flowfiles=True), name="gen")
    name = flow.add(
        UpdateAttribute(filename=HOSTILE_NAME),
        name="name",
    )
    check = flow.add(UpdateAttribute(hostile="${filename:matches('" + CATASTROPHIC + "')}"))
    flow.connect(gen, name)
    flow.connect(name, check, durable=True)
    flow.auto_terminate(check, "success")
    started = time.monotonic()
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=settings)
    assert time.monotonic() - started < 60
    assert sum(count for count, _ in result.queued.values()) == 2
    assert any(CATASTROPHIC in b.message and "limit" in b.message for b in result.bulletins)


def test_route_on_attribute_cannot_hang_on_a_hostile_attribute(tmp_path: Path) -> None:
    """RouteOnAttribute's expression over the limit: the run ends with a bulletin."""
    settings = Settings(
        sync=False, parallelism=1, regex_time_limit="200 ms", driver_run_max_flowfiles=0
    )
    flow = Flow("route")
    gen = flow.add(GenerateFlowFile(batch_size=1, filename=HOSTILE_NAME), name="gen")
    route = flow.add(RouteOnAttribute(bad="${filename:matches('" + CATASTROPHIC + "')}"))
    flow.connect(gen, route)
    flow.auto_terminate(route, ["unmatched", "bad"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert any(CATASTROPHIC in b.message for b in result.bulletins)


def test_get_file_skips_a_name_its_filter_cannot_decide(tmp_path: Path) -> None:
    """A File Filter that backtracks on one name skips it and lists the rest."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / HOSTILE_NAME).write_text("x")
    (tmp_path / "in" / "aaaa").write_text("y")
    settings = Settings(
        sync=False, parallelism=1, regex_time_limit="200 ms", driver_run_max_flowfiles=0
    )
    flow = Flow("filter")
    get = flow.add(
        GetFile(input_directory=str(tmp_path / "in"), file_filter=CATASTROPHIC), name="get"
    )
    tag = flow.add(UpdateAttribute(seen="yes"), name="tag")
    flow.connect(get, tag)
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("get", "success") == 1
    assert (tmp_path / "in" / HOSTILE_NAME).exists()


def test_java_line_terminators_keep_plain_word_boundaries() -> None:
    """JAVA_LINES: '.' and '$' stop at '\\r' as in Java; '\\b' stays the \\w/\\W boundary."""
    from flowcore.patterns import JAVA_LINES

    assert compile_pattern(r"(.*)$", JAVA_LINES).search("abc\r\n").group(1) == "abc"
    assert compile_pattern(r"(.*)$").search("abc\r\n").group(1) == "abc\r"
    words = compile_pattern(r"\b\w+\b", JAVA_LINES).findall("don't 3.14")
    assert words == re.findall(r"\b\w+\b", "don't 3.14")
    assert compile_pattern(r"[\b]", JAVA_LINES).search("\b") is not None
    copy = pickle.loads(pickle.dumps(compile_pattern(r"\bx\B", JAVA_LINES)))
    assert copy.search("xy") is not None
    assert copy.search("x y") is None
    assert copy.search("x") is None


def test_a_linear_pattern_is_not_refused_for_the_size_of_its_input(short_limit: None) -> None:
    """[a-z]+ over 10 MB takes longer than the 0.2 s limit yet runs to the end: a match may
    take the limit plus a second per million characters; a catastrophic pattern over a large
    input still stops, after about that allowance."""
    text = "".join(f"line {i} of a log, value={i}\n" for i in range(350_000))
    assert len(text) > 10_000_000
    started = time.monotonic()
    replaced, count = compile_pattern("[a-z]+").subn("w", text)
    assert count == 5 * 350_000
    assert replaced.startswith("w 0 w w w, w=0\n")
    assert len(compile_pattern("[a-z]+").findall(text)) == count
    assert time.monotonic() - started > 0.2  # longer than the limit alone allows
    started = time.monotonic()
    with pytest.raises(RegexTimeoutError, match=r"0\.2 s limit.*1000001-character input"):
        compile_pattern(CATASTROPHIC).search("a" * 1_000_000 + "!")
    assert time.monotonic() - started < 10
