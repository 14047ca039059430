r"""NiFi's CSV formats (CSVUtils "CSV Format") as values.

Apache Commons CSV's predefined formats, and the Custom format NiFi builds from its properties.

=======================================  ====  =====  ======  ==========  ===========  ==========
CSV Format (value)                       sep   quote  escape  record sep  empty lines  null
=======================================  ====  =====  ======  ==========  ===========  ==========
Custom Format (``custom``)               prop  prop   prop    prop        ignored      prop
RFC 4180 (``rfc-4180``)                  ,     "      -       CRLF        kept         -
Microsoft Excel (``excel``)              ,     "      -       CRLF        kept         -
Tab-Delimited (``tdf``)                  TAB   "      -       CRLF        ignored      -
MySQL Format (``mysql``)                 TAB   -      \       LF          kept         ``\N``
Informix Unload (``informix-unload``)    |     "      \       LF          ignored      -
Informix Unload Escape Disabled          ,     "      -       LF          ignored      -
(``informix-unload-csv``)
=======================================  ====  =====  ======  ==========  ===========  ==========
"""

from __future__ import annotations

import attrs

from flowcore.errors import ConfigurationError

__all__ = ["CSV_FORMATS", "CsvDialect", "dialect_for", "unescape"]

QUOTE_ALL = "ALL"
QUOTE_MINIMAL = "MINIMAL"
QUOTE_NON_NUMERIC = "NON_NUMERIC"
QUOTE_NONE = "NONE"
#: Commons CSV's mode of the MySQL format: every value but null quoted (it has no quote char).
QUOTE_ALL_NON_NULL = "ALL_NON_NULL"


@attrs.frozen
class CsvDialect:
    """A Commons CSV ``CSVFormat``: what a reader splits on and what a writer writes."""

    delimiter: str = ","
    quote: str | None = '"'
    escape: str | None = None
    comment: str | None = None
    record_separator: str = "\r\n"
    null_string: str | None = None
    trim: bool = False
    ignore_empty_lines: bool = True
    ignore_surrounding_spaces: bool = False
    quote_mode: str = QUOTE_MINIMAL
    trailing_delimiter: bool = False


_DEFAULT = CsvDialect()

#: NiFi's "CSV Format" allowable values (internal value -> Commons CSV format).
CSV_FORMATS: dict[str, CsvDialect] = {
    "rfc-4180": attrs.evolve(_DEFAULT, ignore_empty_lines=False),
    "excel": attrs.evolve(_DEFAULT, ignore_empty_lines=False),
    "tdf": attrs.evolve(_DEFAULT, delimiter="\t", ignore_surrounding_spaces=True),
    "mysql": CsvDialect(
        delimiter="\t",
        quote=None,
        escape="\\",
        record_separator="\n",
        null_string="\\N",
        ignore_empty_lines=False,
        quote_mode=QUOTE_ALL_NON_NULL,
    ),
    "informix-unload": attrs.evolve(_DEFAULT, delimiter="|", escape="\\", record_separator="\n"),
    "informix-unload-csv": attrs.evolve(_DEFAULT, record_separator="\n"),
}

#: NiFi's display names of the formats, accepted as well as the internal values.
_DISPLAY = {
    "Custom Format": "custom",
    "RFC 4180": "rfc-4180",
    "Microsoft Excel": "excel",
    "Tab-Delimited": "tdf",
    "MySQL Format": "mysql",
    "Informix Unload": "informix-unload",
    "Informix Unload Escape Disabled": "informix-unload-csv",
}


def unescape(text: str | None) -> str | None:
    r"""NiFi's ``CSVUtils.unescape``: ``\t``, ``\n``, ``\r`` written in a property as text."""
    if text is None:
        return None
    return text.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")


def _char(name: str, text: str | None, *, optional: bool = True) -> str | None:
    value = unescape(text)
    if not value:
        if optional:
            return None
        msg = f"{name} must be one character, not empty"
        raise ConfigurationError(msg)
    if len(value) != 1:
        msg = f"{name} must be one character (\\t for a tab), not {text!r}"
        raise ConfigurationError(msg)
    return value


def dialect_for(
    csv_format: str,
    *,
    value_separator: str = ",",
    quote_character: str = '"',
    escape_character: str | None = "\\",
    comment_marker: str | None = None,
    null_string: str | None = None,
    trim_fields: bool = True,
    quote_mode: str = QUOTE_MINIMAL,
    record_separator: str = "\\n",
    trailing_delimiter: bool = False,
) -> CsvDialect:
    """The dialect of NiFi's "CSV Format" (a predefined one, or ``custom`` from the rest)."""
    key = _DISPLAY.get(csv_format, csv_format)
    if key != "custom":
        if key not in CSV_FORMATS:
            known = ["custom", *CSV_FORMATS]
            msg = f"CSV Format {csv_format!r} is not one of {known!r}"
            raise ConfigurationError(msg)
        return CSV_FORMATS[key]
    if quote_mode not in (QUOTE_ALL, QUOTE_MINIMAL, QUOTE_NON_NUMERIC, QUOTE_NONE):
        msg = f"Quote Mode {quote_mode!r} is not one of ALL, MINIMAL, NON_NUMERIC, NONE"
        raise ConfigurationError(msg)
    delimiter = _char("Value Separator", value_separator, optional=False)
    return CsvDialect(
        delimiter=delimiter or ",",
        quote=_char("Quote Character", quote_character),
        escape=_char("Escape Character", escape_character),
        comment=_char("Comment Marker", comment_marker),
        record_separator=unescape(record_separator) or "\n",
        null_string=unescape(null_string) if null_string else None,
        trim=trim_fields,
        ignore_empty_lines=True,
        quote_mode=quote_mode,
        trailing_delimiter=trailing_delimiter,
    )
