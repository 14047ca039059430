"""Property validators matching NiFi's ``StandardValidators``.

A validator is a small frozen callable: ``validator(subject, value) -> ValidationResult``. The
subject is the property's display name, so every explanation can name it. Validators also know how
to turn a Python value into NiFi's string form (``True`` -> ``"true"``, ``60`` -> ``"60 secs"``
for a time period), which is how ``SplitText(line_split_count=1)`` and
``MergeContent(max_bin_age=60)`` work.

Module constants carry NiFi's names (``POSITIVE_INTEGER_VALIDATOR``...); factories
(``create_long_validator`` ...) return configured validators, as ``StandardValidators`` does.
"""

from __future__ import annotations

import codecs
import os
import re
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import timedelta
from typing import Any

import attrs

from flowcore.errors import ExpressionEvaluationError
from flowcore.parameters import MASK
from flowcore.patterns import compile_pattern
from flowcore.units import format_data_size, format_time_period, parse_data_size, parse_time_period

__all__ = [
    "ALWAYS_VALID",
    "ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR",
    "ATTRIBUTE_KEY_VALIDATOR",
    "BOOLEAN_VALIDATOR",
    "CHARACTER_SET_VALIDATOR",
    "DATA_SIZE_VALIDATOR",
    "FILE_EXISTS_VALIDATOR",
    "HOSTNAME_PORT_LIST_VALIDATOR",
    "INTEGER_VALIDATOR",
    "LONG_VALIDATOR",
    "NON_BLANK_VALIDATOR",
    "NON_EMPTY_EL_VALIDATOR",
    "NON_EMPTY_VALIDATOR",
    "NON_NEGATIVE_INTEGER_VALIDATOR",
    "NUMBER_VALIDATOR",
    "PORT_VALIDATOR",
    "POSITIVE_INTEGER_VALIDATOR",
    "POSITIVE_LONG_VALIDATOR",
    "REGULAR_EXPRESSION_VALIDATOR",
    "REGULAR_EXPRESSION_WITH_EL_VALIDATOR",
    "TIME_PERIOD_VALIDATOR",
    "URI_VALIDATOR",
    "URL_VALIDATOR",
    "ValidationResult",
    "Validator",
    "create_data_size_bounds_validator",
    "create_directory_exists_validator",
    "create_long_validator",
    "create_regex_matching_validator",
    "create_regex_validator",
    "create_time_period_validator",
    "masked_failures",
    "missing_directory",
    "resolved_path",
]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_JAVA_INTEGER = re.compile(r"^[-+]?\d+$")


@attrs.frozen
class ValidationResult:
    """The outcome of validating one value, NiFi's ``ValidationResult``.

    Attributes:
        subject: what was validated, usually a property's display name.
        input: the value that was validated (``None`` when unset).
        valid: whether it passed.
        explanation: why it failed, or a short note when it passed.
    """

    subject: str
    input: str | None
    valid: bool
    explanation: str = ""

    def __str__(self) -> str:
        if self.valid:
            return f"'{self.subject}' is valid"
        if self.input is None:
            return f"'{self.subject}' is invalid because {self.explanation}"
        shown = self.input if len(self.input) <= 200 else self.input[:197] + "..."
        return f"'{self.subject}' validated against '{shown}' is invalid because {self.explanation}"


def masked_failures(
    results: Iterable[ValidationResult], sensitive_labels: Collection[str]
) -> Iterator[ValidationResult]:
    """The failures of *results*, a failure's input masked when its subject is sensitive.

    *sensitive_labels*: the names and display names of the sensitive properties (a
    ``customValidate`` names a property either way).
    """
    for result in results:
        if result.valid:
            continue
        if result.subject in sensitive_labels and result.input is not None:
            yield attrs.evolve(result, input=MASK)
        else:
            yield result


def _ok(subject: str, value: str) -> ValidationResult:
    return ValidationResult(subject, value, valid=True, explanation="valid")


def _bad(subject: str, value: str | None, why: str) -> ValidationResult:
    return ValidationResult(subject, value, valid=False, explanation=why)


def _python_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@attrs.frozen
class Validator:
    """A named check of a property value, and its conversion from Python values.

    Attributes:
        name: NiFi's name for the validator, shown in ``repr``.
        check: returns ``None`` when the value is valid, else the explanation.
        to_string: renders a Python value in the form the check accepts.
        evaluates_expressions: when False (the default) a value containing Expression Language
            is not checked here, since its value is only known at run time (NiFi's rule).
    """

    name: str
    check: Callable[[str], str | None] = attrs.field(repr=False)
    to_string: Callable[[Any], str] = attrs.field(default=_python_str, repr=False)
    evaluates_expressions: bool = False

    def __call__(self, subject: str, value: str) -> ValidationResult:
        """Validate *value* of property *subject*."""
        why = self.check(value)
        return _bad(subject, value, why) if why else _ok(subject, value)

    def __repr__(self) -> str:
        return f"<validator {self.name}>"


# Checks are module-level functions (not lambdas) so descriptors holding them stay picklable.


def _always(_: str) -> str | None:
    return None


def _non_empty(value: str) -> str | None:
    return None if value else "it cannot be empty"


def _non_blank(value: str) -> str | None:
    return None if value.strip() else "it cannot be blank"


@attrs.frozen
class _IntegerCheck:
    lo: int
    hi: int
    what: str

    def __call__(self, value: str) -> str | None:
        if not _JAVA_INTEGER.match(value.strip() if value else ""):
            return f"value is not a valid {self.what}"
        number = int(value)
        if not self.lo <= number <= self.hi:
            return f"value must be a {self.what} between {self.lo} and {self.hi}"
        return None


def _number(value: str) -> str | None:
    try:
        float(value)
    except ValueError:
        return "value is not a valid number"
    return None


def _boolean(value: str) -> str | None:
    return None if value.lower() in ("true", "false") else "value must be 'true' or 'false'"


def _boolean_to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _regex(value: str) -> str | None:
    try:
        compile_pattern(value)
    except ExpressionEvaluationError as ex:
        return f"it is not a valid regular expression: {ex}"
    return None


def _data_size(value: str) -> str | None:
    try:
        parse_data_size(value)
    except ValueError:
        return "it must be a data size such as '10 KB', '1 MB' or '0 B'"
    return None


def _data_size_to_string(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_data_size(value)
    return str(value)


def _time_period(value: str) -> str | None:
    try:
        parse_time_period(value)
    except ValueError:
        return "it must be a time period such as '30 secs', '5 mins' or '1 day'"
    return None


def _time_period_to_string(value: Any) -> str:
    if isinstance(value, timedelta) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    ):
        return format_time_period(value)
    return str(value)


def _charset(value: str) -> str | None:
    try:
        codecs.lookup(value)
    except LookupError:
        return f"{value!r} is not a supported character set; use e.g. 'UTF-8' or 'ISO-8859-1'"
    return None


def _file_exists(value: str) -> str | None:
    return None if os.path.isfile(value) else f"File {value} does not exist"


def _attribute_key(value: str) -> str | None:
    if not value:
        return "an attribute key cannot be empty"
    if any(ch in value for ch in "\r\n\t"):
        return "an attribute key cannot contain tabs or line breaks"
    return None


def _port(value: str) -> str | None:
    return _IntegerCheck(1, 65535, "port number")(value)


def _url(value: str) -> str | None:
    parsed = urllib.parse.urlparse(value)
    if parsed.scheme and parsed.netloc:
        return None
    return "it is not a valid URL (expected e.g. 'https://host:8443/path')"


def _uri(value: str) -> str | None:
    return None if urllib.parse.urlparse(value).scheme else "it is not a valid URI"


def _hostname_port_list(value: str) -> str | None:
    for part in value.split(","):
        host, _, port = part.strip().rpartition(":")
        if not host or _port(port):
            return f"{part.strip()!r} is not a valid hostname:port"
    return None


ALWAYS_VALID = Validator("ALWAYS_VALID", _always)
NON_EMPTY_VALIDATOR = Validator("NON_EMPTY_VALIDATOR", _non_empty)
NON_BLANK_VALIDATOR = Validator("NON_BLANK_VALIDATOR", _non_blank)
NON_EMPTY_EL_VALIDATOR = Validator("NON_EMPTY_EL_VALIDATOR", _non_empty)
INTEGER_VALIDATOR = Validator("INTEGER_VALIDATOR", _IntegerCheck(_INT_MIN, _INT_MAX, "integer"))
POSITIVE_INTEGER_VALIDATOR = Validator(
    "POSITIVE_INTEGER_VALIDATOR", _IntegerCheck(1, _INT_MAX, "positive integer")
)
NON_NEGATIVE_INTEGER_VALIDATOR = Validator(
    "NON_NEGATIVE_INTEGER_VALIDATOR", _IntegerCheck(0, _INT_MAX, "non-negative integer")
)
LONG_VALIDATOR = Validator("LONG_VALIDATOR", _IntegerCheck(_LONG_MIN, _LONG_MAX, "long"))
POSITIVE_LONG_VALIDATOR = Validator(
    "POSITIVE_LONG_VALIDATOR", _IntegerCheck(1, _LONG_MAX, "positive long")
)
NUMBER_VALIDATOR = Validator("NUMBER_VALIDATOR", _number)
BOOLEAN_VALIDATOR = Validator("BOOLEAN_VALIDATOR", _boolean, _boolean_to_string)
REGULAR_EXPRESSION_VALIDATOR = Validator("REGULAR_EXPRESSION_VALIDATOR", _regex)
REGULAR_EXPRESSION_WITH_EL_VALIDATOR = Validator("REGULAR_EXPRESSION_WITH_EL_VALIDATOR", _regex)
DATA_SIZE_VALIDATOR = Validator("DATA_SIZE_VALIDATOR", _data_size, _data_size_to_string)
TIME_PERIOD_VALIDATOR = Validator("TIME_PERIOD_VALIDATOR", _time_period, _time_period_to_string)
CHARACTER_SET_VALIDATOR = Validator("CHARACTER_SET_VALIDATOR", _charset)
FILE_EXISTS_VALIDATOR = Validator("FILE_EXISTS_VALIDATOR", _file_exists)
ATTRIBUTE_KEY_VALIDATOR = Validator("ATTRIBUTE_KEY_VALIDATOR", _attribute_key)
ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR = Validator(
    "ATTRIBUTE_KEY_PROPERTY_NAME_VALIDATOR", _attribute_key
)
PORT_VALIDATOR = Validator("PORT_VALIDATOR", _port)
URL_VALIDATOR = Validator("URL_VALIDATOR", _url)
URI_VALIDATOR = Validator("URI_VALIDATOR", _uri)
HOSTNAME_PORT_LIST_VALIDATOR = Validator("HOSTNAME_PORT_LIST_VALIDATOR", _hostname_port_list)


def create_long_validator(minimum: int, maximum: int, *, inclusive: bool = True) -> Validator:
    """Return a validator for whole numbers in ``[minimum, maximum]`` (or the open interval)."""
    lo, hi = (minimum, maximum) if inclusive else (minimum + 1, maximum - 1)
    return Validator(f"LONG_VALIDATOR[{lo}..{hi}]", _IntegerCheck(lo, hi, "whole number"))


@attrs.frozen
class _RegexMatch:
    pattern: str
    hint: str

    def __call__(self, value: str) -> str | None:
        if re.fullmatch(self.pattern, value):
            return None
        return self.hint or f"value must match the regular expression {self.pattern!r}"


def create_regex_matching_validator(pattern: str, hint: str = "") -> Validator:
    """Return a validator requiring the whole value to match *pattern*."""
    return Validator(f"REGEX[{pattern}]", _RegexMatch(pattern, hint))


@attrs.frozen
class _RegexGroups:
    minimum: int
    maximum: int

    def __call__(self, value: str) -> str | None:
        try:
            groups = compile_pattern(value).groups
        except ExpressionEvaluationError as ex:
            return f"it is not a valid regular expression: {ex}"
        if not self.minimum <= groups <= self.maximum:
            return (
                f"RegEx is required to have between {self.minimum} and {self.maximum} Capturing "
                f"Groups but has {groups}"
            )
        return None


def create_regex_validator(minimum_groups: int, maximum_groups: int) -> Validator:
    """Return a validator for a regular expression with a bounded number of capturing groups.

    NiFi's ``StandardValidators.createRegexValidator``; a value holding Expression Language is
    checked only once evaluated, per FlowFile.
    """
    return Validator(
        f"REGEX_GROUPS[{minimum_groups}..{maximum_groups}]",
        _RegexGroups(minimum_groups, maximum_groups),
    )


@attrs.frozen
class _TimeBounds:
    minimum: float
    maximum: float
    text: str

    def __call__(self, value: str) -> str | None:
        why = _time_period(value)
        if why:
            return why
        seconds = parse_time_period(value)
        if not self.minimum <= seconds <= self.maximum:
            return f"it must be a time period {self.text}"
        return None


def create_time_period_validator(minimum: str, maximum: str) -> Validator:
    """Return a time-period validator with inclusive bounds given as NiFi periods."""
    lo, hi = parse_time_period(minimum), parse_time_period(maximum)
    return Validator(
        f"TIME_PERIOD[{minimum}..{maximum}]",
        _TimeBounds(lo, hi, f"between {minimum} and {maximum}"),
        _time_period_to_string,
    )


@attrs.frozen
class _SizeBounds:
    minimum: float
    maximum: float

    def __call__(self, value: str) -> str | None:
        why = _data_size(value)
        if why:
            return why
        size = parse_data_size(value)
        if not self.minimum <= size <= self.maximum:
            return f"it must be between {int(self.minimum)} and {int(self.maximum)} bytes"
        return None


def create_data_size_bounds_validator(minimum: int, maximum: int) -> Validator:
    """Return a data-size validator with inclusive byte bounds."""
    return Validator(
        f"DATA_SIZE[{minimum}..{maximum}]", _SizeBounds(minimum, maximum), _data_size_to_string
    )


def resolved_path(value: str) -> tuple[str, str]:
    """*value* as the absolute path a processor reads, and how it was resolved, for messages.

    A relative path is resolved from the working directory of the run (as NiFi resolves one
    from the directory it was started in), not from the flow file's directory: the second
    item says so, naming that directory, so a user sees why ``in`` was not found.
    """
    path = os.path.abspath(value)
    if os.path.isabs(value):
        return path, ""
    return path, f" (relative to the working directory {os.getcwd()})"


def missing_directory(value: str) -> str | None:
    """Why *value* is not a directory a processor can read (NiFi's wording), or ``None``."""
    path, base = resolved_path(value)
    if os.path.isdir(path):
        return None
    if os.path.exists(path):
        return f"Path {path}{base} does not point to a directory"
    return (
        f"Directory {path}{base} does not exist; create it, or give an existing directory "
        "(an absolute path is clearest)"
    )


@attrs.frozen
class _DirectoryExists:
    create: bool

    def __call__(self, value: str) -> str | None:
        if self.create and not os.path.exists(resolved_path(value)[0]):
            return None
        return missing_directory(value)


def create_directory_exists_validator(*, create_if_missing: bool = False) -> Validator:
    """Return a validator requiring an existing directory (or a creatable path).

    NiFi's ``createDirectoryExistsValidator``: a value with Expression Language is not checked
    (its directory is known only when the flow runs); a relative path is checked from the
    working directory, and the message names the absolute path and that base.
    """
    return Validator("DIRECTORY_EXISTS", _DirectoryExists(create_if_missing))
