"""The syntax tree of a RecordPath: frozen values, printable back to an equivalent path.

A path is a start (the root record, the current field or its parent) and a tuple of steps; a
predicate step holds a filter (a comparison or a filter function); functions and literals are
expressions beside paths. :func:`to_text` prints any tree as a path that parses back to it.
"""

from __future__ import annotations

import re
from typing import TypeAlias

import attrs

from flowcore.errors import RecordPathError

__all__ = [
    "ROOT",
    "AllIndices",
    "Child",
    "Comparison",
    "CurrentStep",
    "Descendant",
    "Expression",
    "Function",
    "Indices",
    "Literal",
    "MapKeys",
    "ParentStep",
    "Path",
    "Predicate",
    "Range",
    "Step",
    "to_text",
]

#: Path starts: the root record (absolute), the context field ``.``, or its parent ``..``.
ROOT, CURRENT, PARENT = "root", "current", "parent"
#: The comparison operators, as NiFi's grammar spells them.
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")


@attrs.frozen
class Child:
    """``/name`` (``name`` None: ``/*``, every child field)."""

    name: str | None


@attrs.frozen
class Descendant:
    """``//name`` (``name`` None: ``//*``, every descendant field)."""

    name: str | None


@attrs.frozen
class CurrentStep:
    """``/.``: the field itself."""


@attrs.frozen
class ParentStep:
    """``/..``: the field's parent."""


@attrs.frozen
class Range:
    """``first..last`` inside an array index, both ends included; negative counts from the end."""

    first: int
    last: int


@attrs.frozen
class Indices:
    """``[0]``, ``[-1]``, ``[0, 2]``, ``[1..3]``: array elements (``single``: one plain index)."""

    items: tuple[int | Range, ...]

    @property
    def single(self) -> bool:
        """One index and no range: NiFi's ``ArrayIndexPath``."""
        return len(self.items) == 1 and isinstance(self.items[0], int)


@attrs.frozen
class MapKeys:
    """``['key']`` or ``['a', 'b']``: map entries by key."""

    keys: tuple[str, ...]


@attrs.frozen
class AllIndices:
    """``[*]``: every element of an array or every entry of a map."""


@attrs.frozen
class Predicate:
    """``[filter]``: keep the field when the filter (evaluated with it as context) holds."""

    filter: Expression


Step: TypeAlias = (
    Child | Descendant | CurrentStep | ParentStep | Indices | MapKeys | AllIndices | Predicate
)


@attrs.frozen
class Path:
    """A path: where it starts (``root``, ``current``, ``parent``) and its steps in order."""

    start: str
    steps: tuple[Step, ...] = ()


@attrs.frozen
class Literal:
    """A string or whole-number literal."""

    value: str | int


@attrs.frozen
class Function:
    """A function call: standalone (``substring(/a, 0, 2)``) or filter (``contains(., 'x')``)."""

    name: str
    args: tuple[Expression, ...]


@attrs.frozen
class Comparison:
    """``lhs op rhs``: in a predicate a filter, at the top a path of booleans."""

    operator: str
    lhs: Expression
    rhs: Expression


Expression: TypeAlias = Path | Literal | Function | Comparison

#: A field name printable without quotes: what NiFi's lexer reads as one IDENTIFIER.
_RAW_NAME = re.compile(r"[^/\[\]*\"',\t\r\n0-9 .\-=?<>()\\!\x0c][^/\[\]*\"',\t\r\n=?<> ()\\!\x0c]*")
_ESCAPES = {"'": "\\'", "\r": "\\r", "\n": "\\n", "\t": "\\t"}
#: What the lexer reads as one identifier (``_parser._NOT_FIRST`` / ``_NOT_REST``, ``!`` and a
#: form feed in its rest included): a name with backslashes prints raw when it can, since a
#: quoted one may not be written at all (:func:`_quote`).
_LEXED_NAME = re.compile(r"[^/\[\]*\"',\t\r\n0-9 .\-=?<>()\x0c][^/\[\]*\"',\t\r\n=?<> ()]*")
#: The characters NiFi's lexer reads as an escape after a backslash in a quoted text (the
#: backslash is then gone), beside the backslash itself (``\\\\`` is two backslashes there).
_ESCAPED = frozenset("'\"rnt")


def _quote(text: str, what: str = "literal") -> str:
    r"""*text* as a single-quoted literal that lexes back to it.

    NiFi's lexer reads ``\\`` in a quoted text as two backslashes and ``\x`` (x not a known
    escape, any other character: a line break too) as a backslash and x, so backslashes print as
    they are, pairs included, and a character after an odd run of them prints raw. A text in
    which an odd run is last, or before a quote, ``r``, ``n`` or ``t``, has no quoted form: the
    lexer reads its last backslash as an escape.

    Raises:
        RecordPathError: *text* has no quoted form (*what* names it in the message).
    """
    out = []
    run = 0  # backslashes right before the character
    for char in text:
        if char == "\\":
            run += 1
            out.append(char)
            continue
        escaped, run = run % 2 == 1, 0
        if not escaped:
            out.append(_ESCAPES.get(char, char))
        elif char in _ESCAPED:
            raise _unwritable(text, what, f"a single backslash before {char!r}")
        else:
            out.append(char)
    if run % 2:
        raise _unwritable(text, what, "a single backslash at its end")
    return "'" + "".join(out) + "'"


def _unwritable(text: str, what: str, why: str) -> RecordPathError:
    unquoted = ", and the lexer does not read it unquoted" if what == "field name" else ""
    msg = (
        f"the {what} {text!r} has no RecordPath text: quoted, it holds {why}, which NiFi's "
        f"lexer reads as an escape (a quoted text holds a single backslash only before another "
        f"character){unquoted}; use a {what} without it"
    )
    return RecordPathError(msg)


def _name(name: str | None) -> str:
    if name is None:
        return "*"
    if _RAW_NAME.fullmatch(name):
        return name
    if "\\" in name and _LEXED_NAME.fullmatch(name):  # quoted, a \ or \n could not be written
        return name
    return _quote(name, "field name")


def _index_item(item: int | Range) -> str:
    return str(item) if isinstance(item, int) else f"{item.first}..{item.last}"


def _step(step: Step) -> str:
    match step:
        case Child(name):
            return "/" + _name(name)
        case Descendant(name):
            return "//" + _name(name)
        case CurrentStep():
            return "/."
        case ParentStep():
            return "/.."
        case Indices(items):
            return "[" + ", ".join(_index_item(i) for i in items) + "]"
        case MapKeys(keys):
            return "[" + ", ".join(_quote(k, "map key") for k in keys) + "]"
        case AllIndices():
            return "[*]"
        case Predicate(inner):
            return "[" + to_text(inner) + "]"
    msg = f"not a RecordPath step: {step!r}"
    raise TypeError(msg)


def to_text(node: Expression) -> str:
    """*node* printed as RecordPath text that parses back to an equal tree.

    Raises:
        RecordPathError: a name, literal or map key that no RecordPath text gives (NiFi's
            lexer cannot read a single backslash before a quote, ``r``, ``n``, ``t`` or the
            end of a quoted text), named in the message.
    """
    match node:
        case Path(start, steps):
            head = {ROOT: "", CURRENT: ".", PARENT: ".."}[start]
            text = head + "".join(_step(s) for s in steps)
            return text or "/"
        case Literal(value):
            return str(value) if isinstance(value, int) else _quote(value)
        case Function(name, args):
            return f"{name}(" + ", ".join(to_text(a) for a in args) + ")"
        case Comparison(operator, lhs, rhs):
            return f"{to_text(lhs)} {operator} {to_text(rhs)}"
    msg = f"not a RecordPath node: {node!r}"
    raise TypeError(msg)
