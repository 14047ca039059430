"""Tests for ExtractText: NiFi's own cases (TestExtractText, TestExtractTextNamedGroups), the
batch form against one by one, and a run in a flow."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ExtractText, GetFile, PutFile, SplitText
from repositories.repository_set import RepositorySet

SAMPLE = "foo\r\nbar1\r\nbar2\r\nbar3\r\nhello\r\nworld\r\n"

RESULTS = {
    "regex.result1": "(?s)(.*)",
    "regex.result2": "(?s).*(bar1).*",
    "regex.result3": r"(?s).*?(bar\d).*",
    "regex.result4": r"(?s).*?(?:bar\d).*?(bar\d).*?(bar3).*",
    "regex.result5": r"(?s).*(bar\d).*",
    "regex.result6": "(?s)^(.*)$",
    "regex.result7": "(?s)(XXX)",
}
LINES = {
    "regex.result1": "(.*)",
    "regex.result2": "(bar1)",
    "regex.result3": r".*?(bar\d).*",
    "regex.result4": r".*?(?:bar\d).*?(bar\d).*",
    "regex.result4b": r"bar\d\r\n(bar\d)",
    "regex.result5": r".*(bar\d).*",
    "regex.result5b": r"(?:bar\d\r?\n)*(bar\d)",
    "regex.result6": "^(.*)$",
    "regex.result7": "^(XXX)$",
}


def _extract(content: str | bytes, **properties: object) -> TestRunner:
    runner = TestRunner(ExtractText(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def _matched(content: str | bytes, **properties: object) -> dict[str, str]:
    runner = _extract(content, **properties)
    runner.assert_all_flowfiles_transferred("matched", 1)
    return dict(runner.flowfiles_for("matched")[0].attributes)


def test_nifi_example_first_group_and_numbered_groups() -> None:
    """NiFi's testProcessor: the first group under the name, every group numbered after it."""
    out = _matched(SAMPLE, **RESULTS)
    assert out["regex.result1"] == SAMPLE
    assert [out["regex.result2"], out["regex.result3"], out["regex.result5"]] == [
        "bar1",
        "bar1",
        "bar3",
    ]
    assert out["regex.result4"] == "bar2"
    assert (out["regex.result4.0"], out["regex.result4.1"]) == (SAMPLE, "bar2")
    assert out["regex.result4.2"] == "bar3"
    assert "regex.result4.3" not in out
    assert out["regex.result6"] == SAMPLE
    assert "regex.result7" not in out


def test_unmatched_optional_group_writes_no_attribute() -> None:
    """abc(def)?(g): regex.1 only when def matched, regex.2 always."""
    out = _matched("abcg", regex="abc(def)?(g)")
    assert "regex.1" not in out
    assert out["regex.2"] == "g"
    out = _matched("abcdefg", regex="abc(def)?(g)")
    assert (out["regex.1"], out["regex.2"]) == ("def", "g")


def test_dotall_flag() -> None:
    """Enable DOTALL Mode is (?s) for every regex."""
    props = {k: v.replace("(?s)", "") for k, v in RESULTS.items()}
    out = _matched(SAMPLE, enable_dotall_mode=True, **props)
    assert out["regex.result1"] == out["regex.result6"] == SAMPLE
    assert (out["regex.result4"], out["regex.result5"]) == ("bar2", "bar3")


def test_multiline_flag_with_java_line_terminators() -> None:
    """NiFi's multiline case on CRLF text: '.' and '$' stop before the '\\r', as in Java."""
    out = _matched(SAMPLE, enable_multiline_mode=True, **LINES)
    assert out["regex.result1"] == out["regex.result6"] == "foo"
    assert (out["regex.result2"], out["regex.result3"]) == ("bar1", "bar1")
    assert "regex.result4" not in out
    assert out["regex.result4b"] == "bar2"
    assert (out["regex.result5"], out["regex.result5b"]) == ("bar1", "bar3")
    assert "regex.result7" not in out


def test_multiline_and_dotall() -> None:
    """Both flags: '.' crosses lines again."""
    out = _matched(SAMPLE, enable_multiline_mode=True, enable_dotall_mode=True, **LINES)
    assert out["regex.result1"] == out["regex.result6"] == SAMPLE
    assert (out["regex.result4"], out["regex.result5"], out["regex.result5b"]) == (
        "bar2",
        "bar3",
        "bar3",
    )


def test_no_match_goes_to_unmatched_unchanged() -> None:
    """No regex matches: unmatched, no attribute, no provenance event."""
    runner = _extract("YYY", **{k: v for k, v in LINES.items() if "(.*)" not in v})
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    assert not any(k.startswith("regex") for k in runner.flowfiles_for("unmatched")[0].attributes)
    assert runner.provenance_events == []


def test_only_the_buffer_is_searched() -> None:
    """Maximum Buffer Size 3 B reads 'foo' only."""
    out = _matched(SAMPLE, maximum_buffer_size="3 B", r1="(foo)", r2="(world)")
    assert out["r1"] == "foo"
    assert "r2" not in out


def test_capture_group_zero_and_no_groups() -> None:
    """Group 0 is name.0 unless excluded; a regex without groups gives only name.0."""
    out = _matched(SAMPLE, **{"regex.result": "(?s)(.*)"})
    assert out["regex.result.0"] == out["regex.result"] == SAMPLE
    out = _matched(SAMPLE, include_capture_group_0=False, **{"regex.result": "(?s)(.*)"})
    assert "regex.result.0" not in out
    assert out["regex.result"] == SAMPLE
    out = _matched(SAMPLE, **{"regex.result": "(?s).*"})
    assert "regex.result" not in out
    assert out["regex.result.0"] == SAMPLE


def test_a_regex_without_groups_is_invalid_without_group_zero() -> None:
    """Excluding group 0 requires a capturing group in every regex."""
    problems = ExtractText(include_capture_group_0=False, **{"r": "(?s).*"}).validate()
    assert [p.subject for p in problems] == ["r"]
    assert "between 1 and 40 Capturing Groups but has 0" in problems[0].explanation


def test_repeating_groups_continue_the_numbering() -> None:
    """NiFi's testFindAll and testFindAllPair."""
    out = _matched("This is my text", enable_repeating_capture_group=True, r=r"(?s)(\w+)")
    assert [out[f"r.{i}"] for i in range(5)] == ["This", "This", "is", "my", "text"]
    assert out["r"] == "This"
    out = _matched("a=1,b=10,c=100", enable_repeating_capture_group=True, r=r"(\w+)=(\d+)")
    assert [out[f"r.{i}"] for i in range(7)] == ["a=1", "a", "1", "b", "10", "c", "100"]
    assert "r.7" not in out


def test_named_groups() -> None:
    """NiFi's named-group cases: name.GROUP, the whole match under the name, .n when repeating."""
    out = _matched(
        SAMPLE,
        enable_named_groups=True,
        r1="(?s)(?<ALL>.*)",
        r4=r"(?s).*?(?:bar\d).*?(?<BAR2>bar\d).*?(?<BAR3>bar3).*",
        r7="(?s)(?<MISS>XXX)",
    )
    assert out["r1"] == out["r1.ALL"] == SAMPLE
    assert (out["r4.BAR2"], out["r4.BAR3"]) == ("bar2", "bar3")
    assert "r7.MISS" not in out
    out = _matched(
        "This is my text",
        enable_named_groups=True,
        enable_repeating_capture_group=True,
        r=r"(?s)(?<W>\w+)",
    )
    assert [out["r.W"], out["r.W.1"], out["r.W.2"], out["r.W.3"]] == ["This", "is", "my", "text"]
    assert out["r"] == "This"


def test_named_groups_require_every_group_named() -> None:
    """With named groups on, an unnamed group makes the processor invalid."""
    problems = ExtractText(enable_named_groups=True, r="(?<a>x)(y)").validate()
    assert [p.explanation for p in problems] == [
        "Named group count does not match total group count"
    ]


def test_legacy_property_names_and_flags() -> None:
    """NiFi 1.x names are accepted; Literal, Case-insensitive and Comments change the match."""
    processor = ExtractText(**{"Enable named group support": "true", "r": "(?<a>x)"})
    assert processor.effective_value(ExtractText.ENABLE_NAMED_GROUPS) == "true"
    assert _matched("A.B", enable_literal_parsing_of_the_pattern=True, r="A.B")["r.0"] == "A.B"
    assert _extract("AxB", enable_literal_parsing_of_the_pattern=True, r="A.B").flowfiles_for(
        "unmatched"
    )
    out = _matched("HELLO", enable_case_insensitive_matching=True, r="(hel+o)")
    assert out["r"] == "HELLO"
    assert _matched("ab", permit_whitespace_and_comments_in_pattern=True, r="(a) b # c")["r"] == "a"


def test_values_are_cut_to_the_maximum_capture_group_length() -> None:
    """Maximum Capture Group Length truncates each value."""
    out = _matched("abcdef", maximum_capture_group_length=3, r="(.*)")
    assert out["r"] == out["r.1"] == "abc"


def test_canonical_equivalence_matches_composed_and_decomposed_forms() -> None:
    """With Enable Canonical Equivalence an 'a' plus combining ring matches 'å'."""
    assert _extract("a\u030a", r="(\u00e5)").flowfiles_for("unmatched")
    out = _matched("a\u030a", enable_canonical_equivalence=True, r="(\u00e5)")
    assert out["r"] == "\u00e5"


def test_character_set() -> None:
    """Content is decoded with the Character Set."""
    out = _matched("caf\u00e9".encode("iso-8859-1"), character_set="ISO-8859-1", r="(caf.)")
    assert out["r"] == "caf\u00e9"


@settings(max_examples=40, deadline=None)
@given(
    contents=st.lists(st.text(alphabet="ab=1\r\n ", max_size=12), min_size=1, max_size=8),
    repeating=st.booleans(),
    group_zero=st.booleans(),
)
def test_batch_form_agrees_with_one_by_one(
    contents: list[str], repeating: bool, group_zero: bool
) -> None:
    """The batch form gives each FlowFile the attributes and route on_trigger gives it."""
    runner = TestRunner(
        ExtractText(
            enable_repeating_capture_group=repeating,
            include_capture_group_0=group_zero,
            kv=r"(\w+)=(\d*)",
            line="(?m)^(a+)$",
        )
    )
    for index, content in enumerate(contents):
        runner.enqueue(content, {"kv.1": "old"} if index % 2 else {})
    runner.assert_batch_form_agrees()


def test_in_a_flow_with_provenance(tmp_path: Path) -> None:
    """GetFile -> SplitText -> ExtractText -> PutFile on the direct runner: attributes reach
    the sink's file names, each matched FlowFile has an ATTRIBUTES_MODIFIED event."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "users.txt").write_text("id=7\nnothing\nid=42\n")
    flow = Flow("extract")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    extract = flow.add(ExtractText(user_id=r"id=(\d+)"), name="extract")
    put = flow.add(PutFile(directory=str(tmp_path / "out" / "${user_id}")), name="put")
    flow.connect(get, split)
    flow.connect(split, extract, "splits")
    flow.connect(extract, put, "matched")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(extract, "unmatched")
    flow.auto_terminate(put, ["success", "failure"])
    settings_ = Settings(sync=False, parallelism=1)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings_)
    assert result.count("extract", "matched") == 2
    assert result.count("extract", "unmatched") == 1
    assert sorted(p.parent.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "42",
        "7",
    ]
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = [e for e in repos.provenance.search(limit=1_000) if e.component_name == "extract"]
    finally:
        repos.close()
    modified = [e for e in events if e.event_type is ProvenanceEventType.ATTRIBUTES_MODIFIED]
    assert sorted(e.updated_attributes["user_id"] for e in modified) == ["42", "7"]


@pytest.mark.parametrize("value", ["(", "(a)(b)"])
def test_dynamic_property_must_be_a_regex(value: str) -> None:
    """An invalid regex is refused with the property named."""
    problems = ExtractText(r=value).validate()
    assert [p.subject for p in problems] == (["r"] if value == "(" else [])


def test_a_linear_regex_over_a_large_content_extracts_not_refused() -> None:
    """A linear pattern over 10 MB matches although it takes longer than the regex_time_limit
    (0.2 s here): the limit scales with the content."""
    from flowcore.patterns import set_time_limit, time_limit

    text = "".join(f"line {i} of a log, value={i}\n" for i in range(350_000))
    before = time_limit()
    set_time_limit(0.2)
    try:
        runner = TestRunner(
            ExtractText(
                maximum_buffer_size="20 MB",
                enable_repeating_capture_group="true",
                last=r"value=(\d+)\n\z",
                words="([a-z]+)",
            )
        )
        runner.enqueue(text)
        runner.run()
    finally:
        set_time_limit(before)
    runner.assert_all_flowfiles_transferred("matched", 1)
    runner.flowfiles_for("matched")[0].assert_attribute_equals("last", "349999")
