r"""What may follow a quoted value's closing quote: Commons CSV's rule, for both CSV splits.

Commons CSV (NiFi's CSVReader) ends a quoted value at its closing quote, skips any whitespace
after it (Java's ``Character.isWhitespace``; the whitespace is not part of the value, whatever
"Trim Fields" says) and then takes only the separator, a line end or the content's end;
anything else is "Invalid character between encapsulated token and delimiter" and the FlowFile
goes to failure. A doubled quote inside the value is one quote, an escaped one (``\"``) too.
Jackson CSV refuses the same ("Expected column separator character ... or end-of-line").

Python's ``csv`` module (not strict) and Arrow's parser both append what follows to the value
(``"a"x`` reads ``ax``, ``"a" ,`` reads ``a``  and a space). So:

- the Python path reads with the ``csv`` module's ``strict`` mode, which refuses any character
  after a closing quote but the separator and a line end, at no cost to valid content; the
  record it refuses is read again by :func:`reread` under Commons CSV's rule (whitespace
  dropped, anything else an :class:`AfterQuote` naming the line);
- the Arrow path looks at the raw bytes before Arrow parses them (:class:`QuoteWatch`,
  vectorised with numpy, about 0.3 ms a MiB of quoted CSV) and refuses a content where a
  quote may close a value and be followed by anything but a separator or line end: the
  Python path then reads it and decides.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Iterator

import numpy as np

from flowcore.records.csv_format import CsvDialect

__all__ = [
    "JAVA_WHITESPACE",
    "AfterQuote",
    "Malformed",
    "QuoteWatch",
    "Unfinished",
    "open_quote_message",
    "reread",
]

#: Java's ``Character.isWhitespace``: what Commons CSV skips after a closing quote.
JAVA_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)
#: :meth:`QuoteWatch._by_bits`'s two byte masks, kept between blocks and contents (a thread's
#: own: Arrow reads in its threads); a fresh array costs its page faults, more than its pass.
_WORK = threading.local()
#: A line the Arrow check keeps whole at most before it refuses (Arrow's blocks are smaller).
LONGEST_LINE = 2 << 20


class Malformed(Exception):
    """A content NiFi's CSV reader refuses.

    Attributes:
        line: the line (1-based) the error names.
    """

    def __init__(self, msg: str, line: int) -> None:
        super().__init__(msg)
        self.line = line


class Unfinished(Malformed):
    """The content ends inside a quoted value, or right after an escape character.

    NiFi's readers raise there (Commons CSV: "EOF reached before encapsulated token finished",
    "EOF whilst processing escape sequence"; Jackson CSV: "Missing closing quote"), so a cut
    content goes to failure rather than converting its last record silently.
    """


class AfterQuote(Malformed):
    """A character other than whitespace, the separator or a line end after a closing quote."""


def open_quote_message(line: int, quote: str) -> str:
    """Commons CSV's words for a content that ends inside the value quoted on *line*."""
    return (
        "EOF reached before encapsulated token finished: the value quoted on line "
        f"{line} has no closing {quote!r}; the content is cut short, or a quote is missing"
    )


def _after_quote(line: int, quoted: int, char: str, dialect: CsvDialect) -> AfterQuote:
    where = f"on line {quoted}" if quoted == line else f"from line {quoted}"
    msg = (
        f"Invalid character between encapsulated token and delimiter at line {line}: the "
        f"value quoted {where} is followed by {char!r} after its closing {dialect.quote!r} "
        f"(only whitespace, the separator {dialect.delimiter!r} or a line end may follow); "
        "quote the whole value, doubling a quote inside it, or remove what follows the quote"
    )
    return AfterQuote(msg, line)


# The states of :func:`reread` (the ``csv`` module's, and Commons CSV's after a closing quote).
_START, _FIELD, _ESCAPED, _AFTER_ESCAPED_BREAK = range(4)
_QUOTED, _QUOTED_ESCAPED, _CLOSED, _SPACES = range(4, 8)


def reread(
    lines: list[str], more: Iterator[str], dialect: CsvDialect, first_line: int
) -> list[str]:
    """The record the ``csv`` module refused after a closing quote, as Commons CSV reads it.

    Read as the ``csv`` module reads (its escapes, its doubled quotes, lines as it is given
    them), but after a closing quote whitespace is skipped and anything but the separator or a
    line end refused. Rare (only a refused record comes here), so a character at a time.

    Args:
        lines: the record's lines the ``csv`` module read (the refused one last).
        more: the lines after them, taken while the record goes on.
        dialect: the CSV format.
        first_line: the line number of ``lines[0]``.

    Raises:
        AfterQuote: a closing quote is followed by a character that is not allowed.
        Unfinished: the content ends inside a quoted value.
    """
    quote, delimiter, escape = dialect.quote, dialect.delimiter, dialect.escape
    skip_spaces = dialect.ignore_surrounding_spaces
    row: list[str] = []
    field: list[str] = []
    state = _START
    line_no = first_line - 1
    quoted_on = first_line
    for line in itertools.chain(lines, more):
        line_no += 1
        for char in line:
            if state in (_QUOTED, _QUOTED_ESCAPED):
                if state == _QUOTED_ESCAPED:
                    field.append(char)
                    state = _QUOTED
                elif char == escape:
                    state = _QUOTED_ESCAPED
                elif char == quote:
                    state = _CLOSED
                else:
                    field.append(char)
            elif state in (_CLOSED, _SPACES):
                if state == _CLOSED and char == quote:  # a doubled quote
                    field.append(char)
                    state = _QUOTED
                elif char == delimiter:
                    row.append("".join(field))
                    field, state = [], _START
                elif char in "\r\n":
                    row.append("".join(field))
                    return row
                elif char in JAVA_WHITESPACE:
                    state = _SPACES
                else:
                    raise _after_quote(line_no, quoted_on, char, dialect)
            elif state == _ESCAPED:
                field.append(char)
                state = _AFTER_ESCAPED_BREAK if char in "\r\n" else _FIELD
            elif char in "\r\n":  # start of a field, in a field
                row.append("".join(field))
                return row
            elif char == delimiter:
                row.append("".join(field))
                field, state = [], _START
            elif char == escape:
                state = _ESCAPED
            elif state == _START and char == quote:
                state, quoted_on = _QUOTED, line_no
            elif not (state == _START and char == " " and skip_spaces):
                field.append(char)
                state = _FIELD
        # the line's end (a line break was its last character, or it was the content's last)
        if state == _QUOTED_ESCAPED:
            field.append("\n")
            state = _QUOTED
        elif state == _ESCAPED:
            field.append("\n")
            state = _FIELD
        elif state not in (_QUOTED, _AFTER_ESCAPED_BREAK):
            row.append("".join(field))
            return row
    if state in (_QUOTED, _QUOTED_ESCAPED):
        raise Unfinished(open_quote_message(quoted_on, quote or '"'), quoted_on)
    row.append("".join(field))
    return row


class QuoteWatch:
    """Whether Arrow's split of a content may differ from Commons CSV's after a closing quote.

    Fed the content's raw bytes a block at a time (:meth:`suspect`), it decides the block's
    whole lines at once with numpy (bit masks in machine words, :meth:`_by_bits`; the quotes'
    positions where an escape character or a quote inside an unquoted value needs them);
    between blocks only the quote parity is carried.

    Inside a quoted value the quotes come in pairs (doubled) until the closing one, and outside
    one a quote opens a value only at a field's start. So while every quote outside a value
    stands at a field's start, a quote's state is the parity of the quotes before it (escaped
    ones not counted): an even-numbered quote opens (or reopens, after a doubled one), an
    odd-numbered one closes (or is the first of a doubled pair). The check refuses:

    - a closing quote followed by anything but the separator, a line end, a quote (a doubled
      pair) or the content's end: Commons CSV refuses it or drops whitespace there;
    - an odd run of quotes not at a field's start (after the separator, a line break, a quote
      or the content's start): quotes inside an unquoted value, plain characters in Commons
      CSV, that turn the parity (an even run, ``x""``, leaves it as it was).

    A refusal sends the content to the Python path, which reads it as Commons CSV does.
    """

    def __init__(self, dialect: CsvDialect) -> None:
        self._quote = (dialect.quote or '"').encode()
        self._escape = dialect.escape.encode() if dialect.escape else None
        # the bytes that may stand beside a quote at a value's edge: separator, CR, LF, quote
        self._delimiter = ord(dialect.delimiter)
        self._ends = np.zeros(256, bool)
        self._ends[[ord(dialect.delimiter), 13, 10, self._quote[0]]] = True
        self._pending = b""
        self._inside = 0  # the quote parity at the pending bytes' start
        self._first = True
        self._break_escaped = False  # the line break before the pending bytes is escaped

    def suspect(self, data: bytes) -> bool:
        """Whether *data*, the content's next raw bytes, may read otherwise in Commons CSV.

        Its last line (no line break yet) is decided with the next bytes, or :meth:`finish`.
        """
        if self._first:
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]  # the BOM: the content starts after it
        cut = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        if not cut:
            self._pending += data
            return len(self._pending) > LONGEST_LINE
        start = 0
        if self._pending:  # the line begun before: checked with its end, the rest in place
            start = min(at for at in (data.find(b"\n"), data.find(b"\r")) if at >= 0) + 1
            head = self._pending + data[:start]
            if self._check(head, 0, len(head), last=False):
                return True
        self._pending = data[cut:]
        return start < cut and self._check(data, start, cut, last=False)

    def finish(self) -> bool:
        """Whether the content's last line (after its last line break) may read otherwise."""
        pending, self._pending = self._pending, b""
        return bool(pending) and self._check(pending, 0, len(pending), last=True)

    def _check(self, buffer: bytes, start: int, cut: int, *, last: bool) -> bool:
        """Whether *buffer*'s bytes from *start* to *cut* (whole lines, or the last) may differ."""
        start_escaped = self._break_escaped
        self._break_escaped = self._escape is not None and _escaped_end(buffer, cut, self._escape)
        if buffer.find(self._quote, start, cut) < 0:
            return False
        data = np.frombuffer(buffer, np.uint8, count=cut - start, offset=start)
        inside = self._inside
        escaped = _escaped(data, buffer, start, cut, self._escape)
        if (escaped is None or not escaped.size) and sys.byteorder == "little":
            verdict = self._by_bits(data, inside, last=last, start_escaped=start_escaped)
            if verdict is not None:
                return verdict
        return self._by_positions(data, escaped, inside, last=last, start_escaped=start_escaped)

    def _by_bits(
        self, data: np.ndarray, inside: int, *, last: bool, start_escaped: bool
    ) -> bool | None:
        """The check with no escaped byte, a bit per byte: None when a quote opens mid-value.

        The quotes and the bytes that may stand beside one become bit masks, 64 bytes to a
        machine word; every byte's parity (quotes up to it, odd: inside a value) is a prefix
        XOR within each word (``x ^= x << 1, 2, 4 ... 32``) carried from word to word. A few
        passes over the bytes into buffers kept between blocks (:data:`_WORK`) and word-sized
        work after: numpy's
        ``flatnonzero`` over the quotes cost several times as much in quoted content.
        """
        size = data.size
        padded = -(-size // 64) * 64  # whole words: the masks' tails stay False
        work = getattr(_WORK, "masks", None)
        if work is None or work.shape[1] < padded:
            work = _WORK.masks = np.zeros((2, padded), bool)
        quote, other = work[0, :padded], work[1, :padded]
        quote[size:] = other[size:] = False
        np.equal(data, self._quote[0], out=quote[:size])
        quotes = _words(quote)
        np.equal(data, self._delimiter, out=other[:size])
        ends = _words(other)
        np.equal(data, 13, out=other[:size])
        ends |= _words(other)
        np.equal(data, 10, out=other[:size])
        ends |= _words(other)
        ends |= quotes
        after = quotes.copy()
        for shift in (1, 2, 4, 8, 16, 32):
            after ^= after << np.uint64(shift)
        odd_words = (after >> np.uint64(63)).astype(bool)
        carry = np.logical_xor.accumulate(odd_words) ^ odd_words  # the words before: parity
        if inside:
            carry = ~carry
        np.invert(after, out=after, where=carry)
        self._inside = int((after[(size - 1) // 64] >> np.uint64((size - 1) % 64)) & 1)
        one, top = np.uint64(1), np.uint64(63)
        # the next byte's and the previous byte's masks (across words; past the ends: ends)
        next_ends = ends >> one
        next_ends[:-1] |= ends[1:] << top
        next_ends[-1] |= ~np.uint64(0) << np.uint64((size - 1) % 64)
        previous_ends = ends << one
        previous_ends[1:] |= ends[:-1] >> top
        previous_ends[0] |= np.uint64(0 if start_escaped else 1)
        if (quotes & ~after & ~next_ends).any():  # a closing quote before another byte
            return True
        return None if (quotes & after & ~previous_ends).any() else False

    def _by_positions(
        self,
        data: np.ndarray,
        escaped: np.ndarray | None,
        inside: int,
        *,
        last: bool,
        start_escaped: bool,
    ) -> bool:
        """The check over the quotes' positions (escaped ones dropped), runs of them counted."""
        quotes = np.flatnonzero(data == self._quote[0])
        if escaped is not None and escaped.size:
            at = np.minimum(np.searchsorted(escaped, quotes), escaped.size - 1)
            quotes = quotes[escaped[at] != quotes]
        self._inside = (inside + quotes.size) % 2
        closing = quotes[1 - inside :: 2]
        opening = quotes[inside::2]
        # closing: the next byte a separator, a line break or a quote (a block ends at a break)
        follows = closing + 1
        if last and follows.size and follows[-1] == data.size:
            follows = follows[:-1]  # the content's last byte: its end follows
        if not self._ends[data[follows]].all():
            return True
        # opening: at a field's start (after a separator, a line break, a quote)
        if opening.size and opening[0] == 0:
            if start_escaped:
                return True
            opening = opening[1:]  # after the line break before the block, or the content start
        before = opening - 1
        odd = ~self._ends[data[before]]
        if escaped is not None and escaped.size:
            odd |= np.isin(before, escaped)
        return _odd_runs(quotes, opening[odd])


def _words(mask: np.ndarray) -> np.ndarray:
    """*mask* (a multiple of 64 long) as bits, byte *i* bit *i* (a little-endian word's)."""
    return np.packbits(mask, bitorder="little").view(np.uint64)  # a length of whole words


def _odd_runs(quotes: np.ndarray, starts: np.ndarray) -> bool:
    """Whether a run of quotes at one of *starts* (inside an unquoted value) is odd.

    An even run there (``x""``) is literal text in Commons CSV and leaves the parity as it was;
    an odd one would turn it, and the check could no longer tell opening from closing quotes.
    """
    if starts.size > 64:
        return True  # many quotes inside unquoted values: the Python path decides
    for start in starts.tolist():
        at = int(np.searchsorted(quotes, start))
        run = 1
        while at + run < quotes.size and quotes[at + run] == start + run:
            run += 1
        if run % 2:
            return True
    return False


def _escaped(
    data: np.ndarray, buffer: bytes, start: int, cut: int, escape: bytes | None
) -> np.ndarray | None:
    """The positions in *data* (*buffer* from *start* to *cut*) of its escaped bytes."""
    if escape is None or buffer.find(escape, start, cut) < 0:
        return None
    at = np.flatnonzero(data == escape[0])
    breaks = np.flatnonzero(np.diff(at) != 1)
    starts = np.concatenate((at[:1], at[breaks + 1]))
    ends = np.concatenate((at[breaks], at[-1:])) + 1
    return ends[(ends - starts) % 2 == 1]


def _escaped_end(buffer: bytes, cut: int, escape: bytes) -> bool:
    """Whether the line break that ends at *cut* is escaped (an odd run of escapes before)."""
    at = cut - 1  # after an escaped CR, an LF still ends the line (in both readers)
    run = 0
    while at - run - 1 >= 0 and buffer[at - run - 1] == escape[0]:
        run += 1
    return run % 2 == 1
