"""Tests for ReplaceText: NiFi's TestReplaceText cases (back-references, Expression Language,
escaping, every strategy and line mode), failures, provenance, and a run in a flow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.errors import ProcessException
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutFile, ReplaceText
from repositories.repository_set import RepositorySet
from tests.processors._batch_flows import BatchOnly, OneByOne, agree_in_a_flow

HELLO = "Hello, World!"
ENTIRE = {"evaluation_mode": "Entire text"}
CSV_IN = "2006,10-01-2004,10may2004\n2007,15-05-2006,10jun2005\r\n2009,8-8-2008,10aug2008"
CSV_OUT = "2006,10-01-2004,2004/05/10\n2007,15-05-2006,2005/06/10\r\n2009,8-8-2008,2008/08/10"


def _replace(
    content: str | bytes, attributes: dict[str, str] | None = None, **properties: Any
) -> tuple[str, str]:
    """Run one FlowFile; its relationship and content."""
    runner = TestRunner(ReplaceText(**properties))
    runner.enqueue(content, attributes or {})
    runner.run()
    for relationship in ("success", "failure"):
        for flowfile in runner.flowfiles_for(relationship):
            return relationship, flowfile.content.decode()
    msg = "nothing was transferred"
    raise AssertionError(msg)


@pytest.mark.parametrize(
    ("content", "attributes", "properties", "expected"),
    [
        (HELLO, {}, {"search_value": "ell", "replacement_value": "lle"}, "Hlleo, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": "[$1]"}, "H[ell]o, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": "$123"}, "Hell23o, World!"),
        (HELLO, {}, {"search_value": "ell", "replacement_value": "$0123"}, "Hell123o, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": "$1$2"}, "Hell$2o, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": "$d"}, "H$do, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": "\\$1"}, "H$1o, World!"),
        (HELLO, {}, {"search_value": "(ell)", "replacement_value": ""}, "Ho, World!"),
        (HELLO, {}, {"search_value": "Z", "replacement_value": "Morning"}, HELLO),
        (HELLO, {}, {"search_value": "l", "replacement_value": "R"}, "HeRRo, WorRd!"),
        ("a$a,b,c,d", {}, {"search_value": "(?s:^.*$)", "replacement_value": "a\\$b"}, "a\\$b"),
        ("a$a,b,c,d", {}, {"search_value": "(?s:^.*$)", "replacement_value": "a$b"}, "a$b"),
        (
            HELLO,
            {"abc": "$1"},
            {"search_value": "(ell)", "replacement_value": "[${abc}]"},
            "H[$1]o, World!",
        ),
        (HELLO, {"k": "H.*o"}, {"search_value": "${k}", "replacement_value": "GoodBye"}, HELLO),
        (
            HELLO,
            {"k": "Hello", "v": "Good-bye"},
            {"search_value": "${k}", "replacement_value": "${v}"},
            "Good-bye, World!",
        ),
        (HELLO, {"abc": "Good"}, {"search_value": ".*", "replacement_value": "${abc}"}, "Good"),
        (
            "Hello",
            {"filename": "abc.txt"},
            {"search_value": ".+", "replacement_value": "{ ${filename} }"},
            "{ abc.txt }",
        ),
        (
            "original-text",
            {},
            {"replacement_value": "default-replacement-value"},
            "default-replacement-value",
        ),
        ("line-1\nline-2", {}, {"replacement_value": "dflt", **ENTIRE}, "dflt"),
        (
            '{"name":"Smith","middle":"nifi"}',
            {},
            {
                "search_value": '"([a-z]+?)":"(.*?)"',
                "replacement_value": '"${\'$1\':toUpper()}":"$2"',
            },
            '{"NAME":"Smith","MIDDLE":"nifi"}',
        ),
        (
            "Hello\nWorld!",
            {"filename": "abc.txt"},
            {
                "search_value": "(?s)(^.*)",
                **ENTIRE,
                "replacement_value": "header\n${filename}\n$1\nfooter",
            },
            "header\nabc.txt\nHello\nWorld!\nfooter",
        ),
        (
            CSV_IN,
            {},
            {
                "search_value": r"(.*?),(.*?),(\d+.*)",
                "replacement_value": "$1,$2,${ '$3':toDate('ddMMMyyyy'):format('yyyy/MM/dd') }",
            },
            CSV_OUT,
        ),
        (
            "1,https://123.jpg,e\n3,https://321.jpg,o",
            {},
            {
                "search_value": "(.*)/(.*?).jpg",
                "replacement_value": "$1/${ '$2':substring(0,1) }.png",
            },
            "1,https://1.png,e\n3,https://3.png,o",
        ),
        (
            "testing\n123",
            {},
            {"search_value": "(?s:^.*$)", **ENTIRE, "replacement_value": "${'$1':toUpper()}"},
            "",
        ),
        (
            "testing\n123",
            {},
            {"search_value": "(?s)(^.*$)", **ENTIRE, "replacement_value": "${'$1':toUpper()}"},
            "TESTING\n123",
        ),
        (
            "wo$1r$2d",
            {},
            {"search_value": "(?s)(^.*$)", **ENTIRE, "replacement_value": "${'$1':toUpper()}"},
            "WO$1R$2D",
        ),
        (
            "H.ell.o, .ell.",
            {},
            {
                "search_value": ".ell.",
                "replacement_value": "test",
                "replacement_strategy": "Literal Replace",
            },
            "Htesto, test",
        ),
        (
            HELLO,
            {},
            {
                "search_value": "ell",
                "replacement_value": "[$1]",
                "replacement_strategy": "Literal Replace",
            },
            "H[$1]o, World!",
        ),
    ],
)
def test_nifi_replacement_cases(
    content: str, attributes: dict[str, str], properties: dict[str, str], expected: str
) -> None:
    """NiFi's TestReplaceText expectations, Java's replacement rules included."""
    assert _replace(content, attributes, **properties) == ("success", expected)


@pytest.mark.parametrize(
    ("strategy", "mode", "expected"),
    [
        ("Prepend", "All", "_hello\n_there\n_madam"),
        ("Prepend", "First-Line", "_hello\nthere\nmadam"),
        ("Prepend", "Last-Line", "hello\nthere\n_madam"),
        ("Prepend", "Except-First-Line", "hello\n_there\n_madam"),
        ("Prepend", "Except-Last-Line", "_hello\n_there\nmadam"),
        ("Append", "All", "hello_\nthere_\nmadam_"),
        ("Append", "First-Line", "hello_\nthere\nmadam"),
        ("Append", "Except-Last-Line", "hello_\nthere_\nmadam"),
    ],
)
def test_line_by_line_evaluation_modes(strategy: str, mode: str, expected: str) -> None:
    """Each Line-by-Line Evaluation Mode picks NiFi's lines."""
    props = {"replacement_strategy": strategy, "replacement_value": "_"}
    result = _replace("hello\nthere\nmadam", line_by_line_evaluation_mode=mode, **props)
    assert result == ("success", expected)


@pytest.mark.parametrize("eol", ["\r", "\n", "\r\n"])
def test_append_goes_before_each_terminator(eol: str) -> None:
    """Append keeps every kind of line terminator after the appended text."""
    content = eol.join(["hello", "there", "sir"])
    props = {"replacement_strategy": "Append", "replacement_value": "!"}
    assert _replace(content, **props) == ("success", eol.join(["hello!", "there!", "sir!"]))


def test_prepend_append_and_surround_entire_text() -> None:
    """Entire text: the value goes before, after, or both, around the bytes as they are."""
    assert _replace(HELLO, replacement_strategy="Prepend", replacement_value="T", **ENTIRE) == (
        "success",
        "T" + HELLO,
    )
    assert _replace(HELLO, replacement_strategy="Append", replacement_value="T", **ENTIRE)[1] == (
        HELLO + "T"
    )
    text = "Hello\nThere"
    props = {"replacement_strategy": "Surround", "text_to_prepend": "<", "text_to_append": ">"}
    assert _replace(text, **props, **ENTIRE)[1] == "<Hello\nThere>"
    assert _replace(text, **props)[1] == "<Hello>\n<There>"


def test_always_replace_keeps_line_endings() -> None:
    """Always Replace writes the value for every line, each with its own terminator."""
    props = {"replacement_strategy": "Always Replace", "replacement_value": "${filename}"}
    attributes = {"filename": "abc.txt"}
    content = "Hello\nWorld!\r\ntoday!\n"
    assert _replace(content, attributes, **props)[1] == "abc.txt\nabc.txt\r\nabc.txt\n"
    assert _replace(content, attributes, **props, **ENTIRE)[1] == "abc.txt"


@pytest.mark.parametrize(
    ("content", "attributes", "mode", "expected"),
    [
        (
            "Line1: ${var1}\nLine2: ${var2}",
            {"var1": "foo", "var2": "bar"},
            "Entire text",
            "Line1: foo\nLine2: bar",
        ),
        (
            "Line1: ${var1}\nLine2: ${var2}",
            {"var1": "foo", "var2": "bar"},
            "Line-by-Line",
            "Line1: foo\nLine2: bar",
        ),
        ("Line1: ${var1}", {}, "Entire text", "Line1: ${var1}"),
        ("Line1: $${var1} ${}", {"var1": "foo"}, "Entire text", "Line1: ${var1} ${}"),
        ("${a} ${missing:-fallback}", {"a": "<${b}>", "b": "B"}, "Entire text", "<B> fallback"),
    ],
)
def test_substitute_variables(
    content: str, attributes: dict[str, str], mode: str, expected: str
) -> None:
    """Commons Text's StringSubstitutor: values, escapes, unknown names, defaults, nesting."""
    result = _replace(
        content, attributes, replacement_strategy="Substitute Variables", evaluation_mode=mode
    )
    assert result == ("success", expected)


def test_a_cycle_in_substituted_variables_is_a_processor_error() -> None:
    """A value that refers back to itself is refused (Commons Text's IllegalStateException)."""
    runner = TestRunner(ReplaceText(replacement_strategy="Substitute Variables"))
    runner.enqueue("${a}", {"a": "${a}"})
    with pytest.raises(ProcessException, match="Infinite loop"):
        runner.run()
    assert runner.queue_size() == 1


def test_too_large_goes_to_failure() -> None:
    """Entire text over the buffer, and a line over what NiFi's line reader grows to within
    it (8 KB doubling), go to failure unchanged; a line up to 8 KB always passes."""
    props = {"search_value": "[123]", "maximum_buffer_size": "1 b", "replacement_value": "x"}
    assert _replace(HELLO, **props, **ENTIRE) == ("failure", HELLO)
    line = "x" * 11_000
    assert _replace(line, **{**props, "maximum_buffer_size": "5 kb"}) == ("failure", line)
    assert _replace(line, **{**props, "maximum_buffer_size": "16 kb"})[0] == "success"
    # Line-by-Line, '.*' replaces each line of up to 8 KB whatever the buffer
    assert (
        _replace(HELLO, search_value=".*", replacement_value="Good", maximum_buffer_size="1 b")[0]
        == "success"
    )


def test_expression_errors_go_to_failure() -> None:
    """An expression that fails at run time sends the FlowFile to failure (NIFI-5761)."""
    props = {"search_value": ".*", "replacement_value": '${date:toDate("yyyy/MM/dd")}', **ENTIRE}
    assert _replace("hi", {"date": "12"}, **props) == ("failure", "hi")


def test_a_regex_past_the_time_limit_goes_to_failure() -> None:
    """NiFi sends a regex that overflows the stack to failure; here one past the time limit."""
    from flowcore import patterns

    limit = patterns.time_limit()
    patterns.set_time_limit(0.05)
    try:
        result = _replace("a" * 40 + "!", search_value="^(a|aa)+$", replacement_value="x")
    finally:
        patterns.set_time_limit(limit)
    assert result == ("failure", "a" * 40 + "!")


def test_a_group_the_regex_lacks_is_a_processor_error() -> None:
    """'$1' without a group is Java's 'No group 1': the FlowFile stays queued, penalized."""
    runner = TestRunner(ReplaceText(search_value="(?s:^.*$)", replacement_value="$1", **ENTIRE))
    runner.enqueue("testing\n123")
    with pytest.raises(ProcessException, match="No group 1"):
        runner.run()
    assert runner.queue_size() == 1


def test_validation() -> None:
    """NiFi's testProcessorConfigurationRegexNotValid: the Search Value per strategy."""
    bad = {"search_value": "(?<!\\),*", "replacement_value": "hello", **ENTIRE}
    assert [p.subject for p in ReplaceText(**bad).validate()] == ["Search Value"]
    assert ReplaceText(**bad, replacement_strategy="Literal Replace").is_valid()
    assert _replace("(?<!\\),*", **bad, replacement_strategy="Literal Replace")[1] == "hello"
    empty = {**bad, "search_value": ""}
    assert not ReplaceText(**empty, replacement_strategy="Literal Replace").is_valid()
    for strategy in ("Append", "Prepend", "Always Replace"):
        assert ReplaceText(**empty, replacement_strategy=strategy).is_valid()
    assert not ReplaceText(replacement_strategy="Surround").is_valid()  # needs both texts


def test_legacy_regular_expression_name() -> None:
    """NiFi 1.x's 'Regular Expression' is the Search Value."""
    processor = ReplaceText(**{"Regular Expression": "x"})
    assert processor.effective_value(ReplaceText.SEARCH_VALUE) == "x"


def test_every_success_has_one_content_modified_event() -> None:
    """Changed or not (no match in Entire text), a FlowFile to success has CONTENT_MODIFIED."""
    for content in ("abc", "xyz"):
        runner = TestRunner(ReplaceText(search_value="b", replacement_value="B", **ENTIRE))
        runner.enqueue(content)
        runner.run()
        assert [e.event_type for e in runner.provenance_events] == [
            ProvenanceEventType.CONTENT_MODIFIED
        ]


def test_empty_content_and_character_set() -> None:
    """Empty content stays empty line by line; ISO-8859-1 text is decoded and encoded back."""
    assert _replace(b"", replacement_strategy="Prepend", replacement_value="x") == ("success", "")
    runner = TestRunner(
        ReplaceText(search_value="é", replacement_value="e", character_set="ISO-8859-1")
    )
    runner.enqueue("café\n".encode("iso-8859-1"))
    runner.run()
    assert runner.flowfiles_for("success")[0].content == b"cafe\n"


def test_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> ReplaceText -> PutFile on the direct runner: the file is rewritten line by
    line and the FlowFile's lineage holds CONTENT_MODIFIED from ReplaceText."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("id,name\r\n1,ann\r\n2,bob\r\n")
    flow = Flow("replace")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    replace = flow.add(
        ReplaceText(
            search_value=r"^(\d+),(.*)$",
            replacement_value="${'$2':toUpper()};$1",
            line_by_line_evaluation_mode="Except-First-Line",
        ),
        name="replace",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, replace)
    flow.connect(replace, put, "success")
    flow.auto_terminate(replace, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert (tmp_path / "out" / "a.csv").read_bytes() == b"id,name\r\nANN;1\r\nBOB;2\r\n"
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        types = [
            e.event_type
            for e in repos.provenance.search(limit=100)
            if e.component_name == "replace"
        ]
    finally:
        repos.close()
    assert types == [ProvenanceEventType.CONTENT_MODIFIED]


class _BatchOnlyReplaceText(BatchOnly, ReplaceText):
    """ReplaceText whose FlowFiles must all go through its batch form."""


class _OneByOneReplaceText(OneByOne, ReplaceText):
    """ReplaceText with its batch form declined."""


#: Configurations the batch form takes whole: every strategy but Substitute Variables, over
#: the Entire text and Line-by-Line, values with Expression Language where it evaluates them.
_BATCH_CONFIGS = [
    {"search_value": r"(\w+)=(\d+)", "replacement_value": "$2:$1"},
    {"search_value": r"(\w+)=(\d+)", "replacement_value": "<$1>", **ENTIRE},
    {"search_value": "a", "replacement_value": "", **ENTIRE},
    {"replacement_strategy": "Literal Replace", "search_value": "=", "replacement_value": "${k}"},
    {"replacement_strategy": "Literal Replace", "search_value": "${k}", "replacement_value": "#"},
    {"replacement_strategy": "Prepend", "replacement_value": "${k}|", **ENTIRE},
    {"replacement_strategy": "Append", "replacement_value": "!"},
    {"replacement_strategy": "Surround", "text_to_prepend": "[", "text_to_append": "]"},
    {"replacement_strategy": "Always Replace", "replacement_value": "${k}", **ENTIRE},
    {"replacement_strategy": "Always Replace", "replacement_value": ""},
    {"search_value": ".*", "replacement_value": "x"},
    {"search_value": "é", "replacement_value": "e", "character_set": "ISO-8859-1"},
    {"replacement_strategy": "Append", "replacement_value": "é", "character_set": "UTF-16LE"},
    {"search_value": "a", "replacement_value": "ü", "character_set": "US-ASCII", **ENTIRE},
    {"search_value": "b", "replacement_value": "B", "line_by_line_evaluation_mode": "First-Line"},
    {"search_value": "b", "replacement_value": "B", "line_by_line_evaluation_mode": "Last-Line"},
    {
        "replacement_strategy": "Append",
        "replacement_value": ";",
        "line_by_line_evaluation_mode": "Except-First-Line",
    },
    {
        "replacement_strategy": "Prepend",
        "replacement_value": ">",
        "line_by_line_evaluation_mode": "Except-Last-Line",
    },
]


@settings(max_examples=60, deadline=None)
@given(
    config=st.sampled_from(_BATCH_CONFIGS),
    contents=st.lists(st.text(alphabet="ab=1é\r\n ", max_size=12), min_size=1, max_size=8),
)
def test_batch_form_agrees_with_one_by_one(config: dict[str, str], contents: list[str]) -> None:
    """The batch form gives each FlowFile the content, attributes and events on_trigger gives
    it (CONTENT_MODIFIED naming the new and the previous content, changed or not)."""
    runner = TestRunner(ReplaceText(**config))
    for index, content in enumerate(contents):
        runner.enqueue(content, {"k": f"k{index % 3}"})
    runner.assert_batch_form_agrees()


@pytest.mark.parametrize(
    "config",
    [
        {"replacement_strategy": "Substitute Variables"},
        {"search_value": "${k}", "replacement_value": "x"},
        {"search_value": "(a)", "replacement_value": "${'$1':toUpper()}"},
    ],
    ids=["substitute-variables", "search-expression", "replacement-expression"],
)
def test_batch_form_declines_what_it_cannot_do_exactly(config: dict[str, str]) -> None:
    """Substitute Variables and Regex Replace with Expression Language go one by one, alike."""
    runner = TestRunner(ReplaceText(**config))
    runner.enqueue("a=1", {"k": "a"})
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.whole == 0
    assert runner.batch_use.declined


def test_a_batch_with_a_failing_flowfile_goes_one_by_one() -> None:
    """A FlowFile past the buffer, or whose line is too long, fails one by one with its warning:
    the batch declines, and the others still succeed."""
    runner = TestRunner(ReplaceText(maximum_buffer_size="10 B", **ENTIRE))
    runner.enqueue("short")
    runner.enqueue("much longer than ten bytes")
    runner.assert_batch_form_agrees(allow_decline=True)
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    assert runner.batch_use.whole == 0


def test_the_batch_form_in_a_flow_agrees_with_one_by_one(tmp_path: Path) -> None:
    """GetFile -> SplitText -> ReplaceText on the direct runner: the batch form records the same
    events (CONTENT_MODIFIED with the bytes before and after, DROP) as on_trigger."""
    lines = [f"user=u{i} code={200 + i % 3}\n".encode() for i in range(300)]
    config = {"search_value": r"code=(\d+)", "replacement_value": "status $1"}
    shapes, transfers = agree_in_a_flow(
        tmp_path, lines, _BatchOnlyReplaceText(**config), _OneByOneReplaceText(**config)
    )
    assert transfers["step"]["success"][0] == 300
    modified = [s for s in shapes.elements() if s[0] == "CONTENT_MODIFIED"]
    assert len(modified) == 300
    assert (b"user=u7 status 201\n", b"user=u7 code=201\n") in {s[8:10] for s in modified}


@pytest.mark.spark
def test_the_batch_form_on_spark_agrees_with_one_by_one(tmp_path: Path) -> None:
    """The same on Spark: contents written as batches in executors, events as one by one."""
    lines = [f"{i},x\n".encode() for i in range(50)]
    config = {"replacement_strategy": "Append", "replacement_value": ",${filename}"}
    agree_in_a_flow(
        tmp_path,
        lines,
        _BatchOnlyReplaceText(**config),
        _OneByOneReplaceText(**config),
        runner="spark",
    )


def test_a_batch_holding_a_large_content_goes_one_by_one() -> None:
    """Past HELD_CONTENT_MAX the batch form declines: Line-by-Line streams the content one
    by one in bounded memory, with the same result."""
    from flowcore.session.batch_context import HELD_CONTENT_MAX

    runner = TestRunner(
        ReplaceText(evaluation_mode="Line-by-Line", search_value="a", replacement_value="b")
    )
    runner.enqueue(b"a line\n")
    lines = HELD_CONTENT_MAX // 5 + 1
    runner.enqueue(b"aaaa\n" * lines)
    runner.assert_batch_form_agrees(allow_decline=True)
    assert runner.batch_use.whole == 0
    assert runner.batch_use.declined
    runner.flowfiles_for("success")[1].assert_content_equals(
        b"bbbb\n" * (HELD_CONTENT_MAX // 5 + 1)
    )


def test_utf16_content_without_a_mark_is_read_big_endian_on_both_paths() -> None:
    """As Java reads UTF-16: no byte-order mark means big-endian, one by one and in batches
    alike (Python's utf-16 would refuse it, or read it little-endian)."""
    runner = TestRunner(
        ReplaceText(
            evaluation_mode="Line-by-Line",
            replacement_strategy="Append",
            replacement_value="!",
            character_set="UTF-16",
        )
    )
    runner.enqueue("a\nb\n".encode("utf-16-be"))
    runner.assert_batch_form_agrees()
    expected = b"\xfe\xff" + "a!\nb!\n".encode("utf-16-be")
    runner.flowfiles_for("success")[0].assert_content_equals(expected)


def test_a_linear_regex_over_a_large_content_is_replaced_not_refused() -> None:
    """[a-z]+ over 10 MB in Entire text mode is replaced although it takes longer than the
    regex_time_limit (0.2 s here): the limit scales with the content."""
    from flowcore.patterns import set_time_limit, time_limit

    text = "".join(f"line {i} of a log, value={i}\n" for i in range(350_000))
    before = time_limit()
    set_time_limit(0.2)
    try:
        runner = TestRunner(
            ReplaceText(
                search_value="[a-z]+",
                replacement_value="w",
                evaluation_mode="Entire text",
                maximum_buffer_size="20 MB",
            )
        )
        runner.enqueue(text)
        runner.run()
    finally:
        set_time_limit(before)
    runner.assert_all_flowfiles_transferred("success", 1)
    assert runner.flowfiles_for("success")[0].content.startswith(b"w 0 w w w, w=0\nw 1 w")
