"""Tests for the RecordPath parser: NiFi's grammar, its compile-time checks, and properties
(every generated tree prints and parses back to itself; garbage raises only our error)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowcore.errors import RecordPathError
from flowcore.record_path import RecordPathSyntaxError, _parser, parse, to_text
from flowcore.record_path._nodes import (
    CURRENT,
    OPERATORS,
    PARENT,
    ROOT,
    AllIndices,
    Child,
    Comparison,
    CurrentStep,
    Descendant,
    Function,
    Indices,
    Literal,
    MapKeys,
    ParentStep,
    Path,
    Predicate,
    Range,
)
from flowcore.record_path._parser import STANDALONE_FUNCTIONS

TREES = [
    ("/", Path(ROOT)),
    ("/name", Path(ROOT, (Child("name"),))),
    ("//id", Path(ROOT, (Descendant("id"),))),
    ("/a/*", Path(ROOT, (Child("a"), Child(None)))),
    ("/a//*", Path(ROOT, (Child("a"), Descendant(None)))),
    ("/a/b/..", Path(ROOT, (Child("a"), Child("b"), ParentStep()))),
    ("/a/.", Path(ROOT, (Child("a"), CurrentStep()))),
    ("./../a", Path(CURRENT, (ParentStep(), Child("a")))),
    ("..", Path(PARENT)),
    ("/'full,name'", Path(ROOT, (Child("full,name"),))),
    ('/"x y"', Path(ROOT, (Child("x y"),))),
    ("/first-name.x", Path(ROOT, (Child("first-name.x"),))),
    ("/a[0]", Path(ROOT, (Child("a"), Indices((0,))))),
    ("/a[-1]", Path(ROOT, (Child("a"), Indices((-1,))))),
    ("/a[0..2]", Path(ROOT, (Child("a"), Indices((Range(0, 2),))))),
    ("/a[1, 3..-1]", Path(ROOT, (Child("a"), Indices((1, Range(3, -1)))))),
    ("/a['k']", Path(ROOT, (Child("a"), MapKeys(("k",))))),
    ("/a['k', \"l\"]", Path(ROOT, (Child("a"), MapKeys(("k", "l"))))),
    ("/a[*]", Path(ROOT, (Child("a"), AllIndices()))),
    ("/a/.[3]", Path(ROOT, (Child("a"), CurrentStep(), Indices((3,))))),
    (
        "/a[./b = 'y']",
        Path(
            ROOT,
            (Child("a"), Predicate(Comparison("=", Path(CURRENT, (Child("b"),)), Literal("y")))),
        ),
    ),
    (
        "/a[. >= 3]",
        Path(ROOT, (Child("a"), Predicate(Comparison(">=", Path(CURRENT), Literal(3))))),
    ),
    (
        "/a[contains(., 'x')]",
        Path(ROOT, (Child("a"), Predicate(Function("contains", (Path(CURRENT), Literal("x")))))),
    ),
    (
        "substring(/a, 0, -1)",
        Function("substring", (Path(ROOT, (Child("a"),)), Literal(0), Literal(-1))),
    ),
    ("concat()", Function("concat", ())),
    ("/a != /b", Comparison("!=", Path(ROOT, (Child("a"),)), Path(ROOT, (Child("b"),)))),
    ("'lit'", Literal("lit")),
    (" / a [ 0 ] ", Path(ROOT, (Child("a"), Indices((0,))))),
    ("/a\n/b", Path(ROOT, (Child("a"), Child("b")))),
    ("'a\\'b\\\"c\\n\\t\\r'", Literal("a'b\"c\n\t\r")),
    ("'\\\\'", Literal("\\\\")),  # NiFi's lexer keeps an escaped backslash as two
    ("'\\d'", Literal("\\d")),
    ("/a!='x'", Comparison("=", Path(ROOT, (Child("a!"),)), Literal("x"))),  # as NiFi's lexer
]


@pytest.mark.parametrize(("text", "tree"), TREES, ids=[t for t, _ in TREES])
def test_parses_to_the_tree(text: str, tree: object) -> None:
    """Each form of NiFi's grammar parses to its tree and prints back to an equal one."""
    assert parse(text) == tree
    assert parse(to_text(parse(text))) == tree


# (path, part of the message): NiFi's compile-time failures and our syntax errors.
ERRORS = [
    ("", "Empty RecordPath"),
    ("   ", "Empty RecordPath"),
    ("/name[", "line 1, column 6"),
    ("/name[substring(., 1, 2)]", "<value> <operator> <value>"),
    ("/name[./x]", "<value> <operator> <value>"),
    ("whoops(/a)", "The 'whoops' function does not exist"),
    ("substring(/a, 1)", "substring function takes 3 arguments but got 2"),
    ("toDate(/a)", "toDate function takes 2 or 3 arguments but got 1"),
    ("isEmpty(/a, /b)", "isEmpty function takes 1 arguments but got 2"),
    ("mapOf('a')", "even number of arguments"),
    ("recordOf('a', /b, 'c')", "even number of arguments"),
    ("join(',')", "join function takes 2 or more arguments"),
    ("not(/a)", "Invalid argument of not"),
    ("/a = ", "Unexpected end of path"),
    ("/a = = 3", "Unexpected token '='"),
    ("'open", "Unterminated string literal"),
    ("'tab\there'", "Unterminated string literal"),
    ("?", "Unrecognized token '?'"),
    ("/a[1, 'x']", "an array index"),
    ("/a[0", "']'"),
    ("/a[0..]", "the end of the range"),
    ("/a/", "a field name"),
    ("//.", "a field name"),
    ("/a b", "the end of the path"),
    ("name", "a path (starting with '/', '.' or '..')"),
    ("/a[1.5]", "<value> <operator> <value>"),
    ("/a\n/b[", "line 2, column 3"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS, ids=[t for t, _ in ERRORS])
def test_syntax_errors(text: str, message: str) -> None:
    """A bad path raises RecordPathSyntaxError naming the path, where, and what was expected."""
    with pytest.raises(RecordPathSyntaxError, match=None) as caught:
        parse(text)
    assert message in str(caught.value)
    assert caught.value.path == text
    assert 0 <= caught.value.position <= len(text)
    assert "Query:" in str(caught.value)


def test_non_text_is_our_error() -> None:
    """A path that is not text (bytes, None) is our error, not a TypeError."""
    with pytest.raises(RecordPathSyntaxError, match="must be text"):
        parse(b"/a")  # type: ignore[arg-type]


# -- properties -------------------------------------------------------------------------------


def _quotable(text: str) -> bool:
    """Whether a quoted text lexes to *text* (NiFi's ESC: ``\\\\`` is two backslashes, ``\\x``
    a backslash and x unless x is a quote, r, n or t): each odd run of backslashes precedes
    another character."""
    runs = re.finditer(r"\\+", text)
    return all(
        len(m.group()) % 2 == 0 or text[m.end() : m.end() + 1] not in ("", *"'\"rnt") for m in runs
    )


def _lexed(name: str) -> bool:
    """Whether NiFi's lexer reads *name* unquoted as one identifier."""
    first = set(_parser._NOT_FIRST) | set(_parser._SPACE)
    return bool(name) and name[0] not in first and not set(name[1:]) & _parser._NOT_REST


_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",)), st.sampled_from(list("\\\\'\"rnt \n"))
    ),
    max_size=6,
)


def _written(text: str) -> str:
    """*text* with a backslash added to each odd run before an escape or the end: quotable."""
    return re.sub(
        r"\\+(?=(.?))",
        lambda m: (
            m.group() + ("\\" if len(m.group()) % 2 and m.group(1) in ("", *"'\"rnt") else "")
        ),
        text,
        flags=re.DOTALL,
    )


_NAMES = _TEXT.map(_written)
_STRINGS = _NAMES
_INTS = st.integers(min_value=-(2**40), max_value=2**40)
_LITERALS = st.builds(Literal, st.one_of(_STRINGS, _INTS))


def _index_step() -> st.SearchStrategy[object]:
    items = st.one_of(_INTS, st.builds(Range, _INTS, _INTS))
    return st.one_of(
        st.builds(Indices, st.lists(items, min_size=1, max_size=3).map(tuple)),
        st.builds(MapKeys, st.lists(_STRINGS, min_size=1, max_size=3).map(tuple)),
        st.just(AllIndices()),
    )


def _field_step() -> st.SearchStrategy[object]:
    names = st.one_of(st.none(), _NAMES)
    return st.one_of(
        st.builds(Child, names),
        st.builds(Descendant, names),
        st.just(CurrentStep()),
        st.just(ParentStep()),
    )


def _trees(depth: int) -> st.SearchStrategy[object]:
    """Valid RecordPath trees, nesting at most *depth* predicates or calls."""
    if depth == 0:
        expression: st.SearchStrategy[object] = st.one_of(_LITERALS, _paths(None))
        filters: st.SearchStrategy[object] = st.builds(
            Comparison, st.sampled_from(OPERATORS), expression, expression
        )
    else:
        inner = _trees(depth - 1)
        expression = st.one_of(_LITERALS, _paths(inner), _calls(inner))
        filters = st.one_of(
            st.builds(Comparison, st.sampled_from(OPERATORS), expression, expression),
            st.builds(lambda a, b: Function("contains", (a, b)), expression, expression),
            st.builds(lambda a: Function("isBlank", (a,)), expression),
        )
        filters = st.one_of(filters, filters.map(lambda f: Function("not", (f,))))
    return st.one_of(expression, filters)


def _filters_of(tree_strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return tree_strategy.filter(
        lambda t: (
            isinstance(t, Comparison)
            or (isinstance(t, Function) and t.name in ("contains", "isBlank", "not"))
        )
    )


def _paths(inner: st.SearchStrategy[object] | None) -> st.SearchStrategy[object]:
    sub = [_field_step(), _index_step()]
    if inner is not None:
        sub.append(st.builds(Predicate, _filters_of(inner)))
    steps = st.lists(st.one_of(*sub), max_size=4)
    absolute = st.builds(
        lambda first, rest: Path(ROOT, (first, *rest)),
        st.one_of(_field_step(), _index_step()),
        steps,
    )
    relative = st.builds(
        lambda start, rest: Path(start, tuple(rest)), st.sampled_from((CURRENT, PARENT)), steps
    )
    return st.one_of(st.just(Path(ROOT)), absolute, relative)


def _calls(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    args = inner.filter(lambda t: not isinstance(t, Comparison))
    fixed = st.sampled_from(sorted(n for n, c in STANDALONE_FUNCTIONS.items() if c)).flatmap(
        lambda name: st.lists(
            args, min_size=STANDALONE_FUNCTIONS[name][0], max_size=STANDALONE_FUNCTIONS[name][0]
        ).map(lambda a: Function(name, tuple(a)))
    )
    varargs = st.builds(lambda a: Function("concat", tuple(a)), st.lists(args, max_size=3))
    return st.one_of(fixed, varargs)


@settings(max_examples=300, deadline=None)
@given(_trees(2))
def test_generated_trees_print_and_parse_back(tree: object) -> None:
    """Any valid tree prints as text that parses back to an equal tree."""
    assert parse(to_text(tree)) == tree


_GARBAGE = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="/[]().,*'\"=<>!-0123456789ab \\\n", max_size=30),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


@settings(max_examples=400, deadline=None)
@given(_GARBAGE)
@example("/\\")  # a field named by one backslash: quoted, it would lex as an escaped quote
@example("/a\\n")
@example("/'a\\\n'")  # a backslash and a line break: quoted, the break prints raw
@example("/'a b\\\\'")  # a space and a pair of backslashes (read as two)
def test_garbage_raises_only_our_error(text: str) -> None:
    """Any text either parses (and round-trips) or raises RecordPathSyntaxError, nothing else."""
    try:
        tree = parse(text)
    except RecordPathSyntaxError as exc:
        failed_on = exc.path
    else:
        assert parse(to_text(tree)) == tree
        return
    assert failed_on == text


@settings(max_examples=300, deadline=None)
@given(_TEXT)
@example("a b\\")
@example("a b\\n")
@example("a\\\tb c")
@example("\\\\\\'")
def test_backslashes_print_and_parse_back_wherever_nifi_can_write_them(text: str) -> None:
    """A field name, literal or map key with backslashes round-trips when some text lexes to it
    (unquoted, or quoted: an odd run of backslashes only before another character than a quote,
    r, n or t); otherwise printing it raises RecordPathError naming it, never wrong text."""
    cases = [
        (Path(ROOT, (Child(text),)), _quotable(text) or _lexed(text), "field name"),
        (Path(ROOT, (Descendant(text),)), _quotable(text) or _lexed(text), "field name"),
        (Literal(text), _quotable(text), "literal"),
        (Path(ROOT, (Child("m"), MapKeys((text,)))), _quotable(text), "map key"),
    ]
    for tree, writable, what in cases:
        if writable:
            assert parse(to_text(tree)) == tree
        else:
            with pytest.raises(RecordPathError, match=f"the {what} .* has no RecordPath text"):
                to_text(tree)  # type: ignore[arg-type]
