"""RecordPath text to a syntax tree: NiFi's grammar, hand-written.

NiFi's ANTLR grammar (RecordPathLexer.g, RecordPathParser.g) as a lexer and a recursive-descent
parser (no ANTLR runtime).

The parser also does what NiFi's ``RecordPathCompiler`` checks before any record is seen:
function names, argument counts, and that a predicate holds a comparison or a filter function.
Every failure is a :class:`RecordPathSyntaxError` naming the path, the line and column (as NiFi's
messages do) and what was expected there.
"""

from __future__ import annotations

import attrs

from flowcore.errors import RecordPathSyntaxError, quoted
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
    Expression,
    Function,
    Indices,
    Literal,
    MapKeys,
    ParentStep,
    Path,
    Predicate,
    Range,
    Step,
)

__all__ = ["FILTER_FUNCTIONS", "STANDALONE_FUNCTIONS", "parse"]

_SPACE = " \t\n\r\x0c"
_DIGITS = "0123456789"
_NOT_FIRST = frozenset("/[]*\"',\t\r\n0123456789 .-=?<>()")
_NOT_REST = frozenset("/[]*\"',\t\r\n=?<> ()")
_ESCAPES = {'"': '"', "'": "'", "r": "\r", "n": "\n", "t": "\t", "\\": "\\\\"}
_PUNCTUATION = ("//", "..", "<=", ">=", "!=", "/", "[", "]", "(", ")", ",", ".", "*", "<", ">", "=")

#: Filter functions (true/false of a field), usable in predicates, in ``not`` and standalone.
FILTER_FUNCTIONS = frozenset(
    {
        "contains",
        "containsRegex",
        "endsWith",
        "startsWith",
        "isBlank",
        "isEmpty",
        "matchesRegex",
        "not",
    }
)
#: Standalone functions: the argument counts each takes (None: any number), NiFi 2's set.
STANDALONE_FUNCTIONS: dict[str, tuple[int, ...] | None] = {
    "substring": (3,),
    "substringAfter": (2,),
    "substringAfterLast": (2,),
    "substringBefore": (2,),
    "substringBeforeLast": (2,),
    "replace": (3,),
    "replaceRegex": (3,),
    "replaceNull": (2,),
    "concat": None,
    "arrayOf": None,
    "mapOf": None,
    "recordOf": None,
    "toLowerCase": (1,),
    "toUpperCase": (1,),
    "trim": (1,),
    "fieldName": (1,),
    "toDate": (2, 3),
    "toString": (2,),
    "toBytes": (2,),
    "format": (2, 3),
    "base64Encode": (1,),
    "base64Decode": (1,),
    "escapeJson": (1,),
    "unescapeJson": (1, 2, 3),
    "hash": (2,),
    "padLeft": (2, 3),
    "padRight": (2, 3),
    "uuid5": (1, 2),
    "coalesce": None,
    "count": (1,),
    "join": None,
    "anchored": (2,),
    "add": (2,),
    "subtract": (2,),
    "multiply": (2,),
    "divide": (2,),
    "toNumber": (1,),
}
_FILTER_ARITY = {
    name: (1,) if name in ("isBlank", "isEmpty", "not") else (2,) for name in FILTER_FUNCTIONS
}


@attrs.frozen
class _Token:
    kind: str  # a punctuation string, or NUMBER, STRING, IDENT, END
    text: str  # as written (a string literal: its value)
    position: int


def _where(path: str, position: int) -> str:
    line = path.count("\n", 0, position) + 1
    column = position - (path.rfind("\n", 0, position) + 1)
    return f"at line {line}, column {column}"


def _fail(path: str, position: int, what: str, expected: str) -> RecordPathSyntaxError:
    msg = f"{what} {_where(path, position)}: expected {expected}. Query: {quoted(path, 200)}"
    return RecordPathSyntaxError(msg, path, position)


def _string(path: str, start: int) -> tuple[str, int]:
    """The literal starting at *start* (a quote): its value and the index after it."""
    quote = path[start]
    out: list[str] = []
    i = start + 1
    while i < len(path):
        char = path[i]
        if char == quote:
            return "".join(out), i + 1
        if char == "\\" and i + 1 < len(path):
            nxt = path[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        if char in "\\\n\r\t":
            break
        out.append(char)
        i += 1
    raise _fail(path, start, "Unterminated string literal", f"a closing {quote} on the same line")


def _tokens(path: str) -> list[_Token]:
    """NiFi's lexer: punctuation, numbers, quoted literals and identifiers; whitespace skipped."""
    found: list[_Token] = []
    i, end = 0, len(path)
    while i < end:
        char = path[i]
        if char in _SPACE:
            i += 1
            continue
        if char in "'\"":
            value, after = _string(path, i)
            found.append(_Token("STRING", value, i))
            i = after
            continue
        if char in _DIGITS or (char == "-" and i + 1 < end and path[i + 1] in _DIGITS):
            j = i + 1
            while j < end and path[j] in _DIGITS:
                j += 1
            found.append(_Token("NUMBER", path[i:j], i))
            i = j
            continue
        mark = next((p for p in _PUNCTUATION if path.startswith(p, i)), None)
        if mark is not None:
            found.append(_Token(mark, mark, i))
            i += len(mark)
            continue
        if char not in _NOT_FIRST:
            j = i + 1
            while j < end and path[j] not in _NOT_REST:
                j += 1
            found.append(_Token("IDENT", path[i:j], i))
            i = j
            continue
        raise _fail(
            path, i, f"Unrecognized token {char!r}", "a field reference, a literal or a function"
        )
    found.append(_Token("END", "", end))
    return found


class _Parser:
    """One parse of one path (tokens and a cursor)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tokens = _tokens(path)
        self.at = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def peek(self, ahead: int = 1) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.token
        self.at += 1
        return token

    def expect(self, kind: str, expected: str) -> _Token:
        if self.token.kind != kind:
            raise self.unexpected(expected)
        return self.take()

    def unexpected(self, expected: str) -> RecordPathSyntaxError:
        token = self.token
        what = (
            "Unexpected end of path" if token.kind == "END" else f"Unexpected token {token.text!r}"
        )
        return _fail(self.path, token.position, what, expected)

    # -- expressions ------------------------------------------------------------------------

    def operation(self) -> Expression:
        """``expression (operator expression)?``: also the top of a path and of a predicate."""
        lhs = self.expression()
        if self.token.kind in OPERATORS:
            operator = self.take().kind
            rhs = self.expression()
            return Comparison(operator, lhs, rhs)
        return lhs

    def expression(self) -> Expression:
        kind = self.token.kind
        if kind in ("/", "//", "["):
            return self.absolute()
        if kind in (".", ".."):
            return self.relative()
        if kind == "NUMBER":
            return Literal(int(self.take().text))
        if kind == "STRING":
            return Literal(self.take().text)
        if kind == "IDENT" and self.peek().kind == "(":
            return self.function()
        expected = "a path (starting with '/', '.' or '..'), a literal or a function call"
        raise self.unexpected(expected)

    def function(self) -> Function:
        token = self.take()
        name = token.text
        self.take()  # "("
        args: list[Expression] = []
        if self.token.kind != ")":
            while True:
                args.append(self.operation() if name == "not" else self.expression())
                if self.token.kind != ",":
                    break
                self.take()
        self.expect(")", "',' or ')' closing the arguments of " + name)
        self.check_call(name, len(args), token.position)
        if name == "not" and not _is_filter(args[0]):
            raise _fail(
                self.path,
                token.position,
                "Invalid argument of not",
                "a comparison or a filter function",
            )
        return Function(name, tuple(args))

    def check_call(self, name: str, count: int, position: int) -> None:
        """NiFi's compile-time checks of a call: the function exists and takes *count* args."""
        if name in _FILTER_ARITY:
            counts: tuple[int, ...] | None = _FILTER_ARITY[name]
        elif name in STANDALONE_FUNCTIONS:
            counts = STANDALONE_FUNCTIONS[name]
        else:
            known = ", ".join(sorted({*STANDALONE_FUNCTIONS, *FILTER_FUNCTIONS}))
            what = (
                f"Invalid function call: The {name!r} function does not exist or can only be "
                "used within a predicate, not as a standalone function,"
            )
            raise _fail(self.path, position, what, f"one of {known}")
        if name in ("mapOf", "recordOf") and count % 2:
            raise _fail(
                self.path,
                position,
                f"The {name} function requires an even number of arguments",
                "pairs",
            )
        if name == "join" and count < 2:
            what = (
                "Invalid number of arguments: join function takes 2 or more arguments "
                f"but got {count}"
            )
            raise _fail(self.path, position, what, "a delimiter and at least one value")
        if counts is not None and count not in counts:
            takes = " or ".join(str(c) for c in counts)
            what = (
                f"Invalid number of arguments: {name} function takes {takes} arguments "
                f"but got {count}"
            )
            raise _fail(self.path, position, what, f"{takes} arguments")

    # -- paths ------------------------------------------------------------------------------

    def absolute(self) -> Path:
        token = self.token
        if token.kind == "/" and self.peek().kind not in ("IDENT", "STRING", "*", ".", ".."):
            self.take()
            return Path(ROOT)
        first = self.index() if token.kind == "[" else self.field_ref()
        return Path(ROOT, (first, *self.sub_paths()))

    def relative(self) -> Path:
        start = CURRENT if self.take().kind == "." else PARENT
        return Path(start, tuple(self.sub_paths()))

    def field_ref(self) -> Step:
        """``/name``, ``/*``, ``//name``, ``//*``, ``/.``, ``/..``."""
        separator = self.take().kind
        token = self.token
        if token.kind in ("IDENT", "STRING"):
            self.take()
            return Child(token.text) if separator == "/" else Descendant(token.text)
        if token.kind == "*":
            self.take()
            return Child(None) if separator == "/" else Descendant(None)
        if separator == "/" and token.kind in (".", ".."):
            self.take()
            return CurrentStep() if token.kind == "." else ParentStep()
        expected = f"a field name, '*'{', . or ..' if separator == '/' else ''} after {separator!r}"
        raise self.unexpected(expected)

    def sub_paths(self) -> list[Step]:
        steps: list[Step] = []
        while True:
            kind = self.token.kind
            if kind in ("/", "//"):
                steps.append(self.field_ref())
            elif kind == ".":
                self.take()
                steps.append(CurrentStep())
            elif kind == "[":
                steps.append(self.index_or_predicate())
            else:
                return steps

    def _is_index(self) -> bool:
        kind, after = self.peek().kind, self.peek(2).kind
        return (
            (kind == "STRING" and after in (",", "]", "END"))
            or (kind == "NUMBER" and after in (",", "]", "..", "END"))
            or (kind == "*" and after == "]")
        )

    def index_or_predicate(self) -> Step:
        if self._is_index():
            return self.index()
        opening = self.take()
        inner = self.operation()
        if not _is_filter(inner):
            what = (
                "Expected an Expression of form <value> <operator> <value> or a filter "
                "function to follow '[' Token"
            )
            raise _fail(self.path, opening.position, what, "a comparison or a filter function")
        self.expect("]", "']' closing the predicate")
        return Predicate(inner)

    def index(self) -> Step:
        """``[0]``, ``[1, 3]``, ``[0..2]``, ``['key']``, ``['a', 'b']``, ``[*]``."""
        self.take()  # "["
        token = self.token
        if token.kind == "*":
            self.take()
            self.expect("]", "']' after '[*'")
            return AllIndices()
        if token.kind == "STRING":
            keys = [self.take().text]
            while self.token.kind == ",":
                self.take()
                keys.append(self.expect("STRING", "a quoted map key").text)
            self.expect("]", "',' or ']' in a list of map keys")
            return MapKeys(tuple(keys))
        items: list[int | Range] = []
        while True:
            first = int(self.expect("NUMBER", "an array index").text)
            if self.token.kind == "..":
                self.take()
                items.append(Range(first, int(self.expect("NUMBER", "the end of the range").text)))
            else:
                items.append(first)
            if self.token.kind != ",":
                break
            self.take()
        self.expect("]", "',', '..' or ']' in a list of array indices")
        return Indices(tuple(items))


def _is_filter(node: Expression) -> bool:
    return isinstance(node, Comparison) or (
        isinstance(node, Function) and node.name in FILTER_FUNCTIONS
    )


def parse(path: str) -> Expression:
    """Parse RecordPath text into its syntax tree.

    Raises:
        RecordPathSyntaxError: the text is not a RecordPath; the message names the line and
            column and what was expected there.
    """
    if not isinstance(path, str):
        msg = f"a RecordPath must be text, got {type(path).__name__} {quoted(repr(path))}"
        raise RecordPathSyntaxError(msg, str(path), 0)
    parser = _Parser(path)
    if parser.token.kind == "END":
        raise _fail(path, 0, "Empty RecordPath", "a path such as /name")
    tree = parser.operation()
    if parser.token.kind != "END":
        expected = "the end of the path (or an operator)"
        raise parser.unexpected(expected)
    return tree
