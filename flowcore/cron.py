"""NiFi's CRON driven Run Schedule: a cron expression, read as NiFi 2.x reads it.

NiFi 2.x parses a CRON driven processor's Run Schedule with Spring's ``CronExpression``: six
fields, seconds first (``second minute hour day-of-month month day-of-week``), ``?`` for "no
value" in either day field, ``L`` (last day of the month), ``nW`` (weekday nearest day *n*),
``nL`` (last weekday *n* of the month, e.g. ``5L``: the last Friday) and ``n#k`` (the *k*-th
weekday *n*), days of the week ``0``-``7`` (``0`` and ``7`` are Sunday) or ``SUN``-``SAT``, and a
day matches only when both day fields do. NiFi 1.x's Quartz also took a seventh field, a year:
it is accepted. The expression is evaluated by `croniter <https://pypi.org/project/croniter/>`_
(seconds first, both day fields required), after turning ``nL`` into its ``Ln``; the few forms
croniter lacks (``LW``, ``L-n``) are refused by validation in one line, never dropped. Times are
the machine's local time, as NiFi's.
"""

from __future__ import annotations

import datetime as dt
import re

import attrs

__all__ = ["CronSchedule", "parse_cron"]

_DAYS = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
_LAST_WEEKDAY = re.compile(r"^([0-7]|SUN|MON|TUE|WED|THU|FRI|SAT)L$", re.IGNORECASE)


def _day_of_week(field: str) -> str:
    """The day-of-week field as croniter reads it: NiFi's ``5L`` / ``FRIL`` become ``L5``."""
    parts = []
    for part in field.split(","):
        last = _LAST_WEEKDAY.match(part)
        if last is None:
            parts.append(part)
            continue
        day = last.group(1).upper()
        number = _DAYS.get(day, int(day) % 7 if day.isdigit() else 0)
        parts.append(f"L{number}")
    return ",".join(parts)


def _unsupported(fields: list[str]) -> str | None:
    day_of_month = fields[3].upper()
    if "LW" in day_of_month or re.search(r"L-\d", day_of_month):
        return f"day of month {fields[3]!r} ('LW', 'L-n') is not supported"
    return None


@attrs.frozen
class CronSchedule:
    """A parsed cron Run Schedule.

    Attributes:
        expression: the expression as the flow gives it.
        translated: the same, as croniter reads it.
    """

    expression: str
    translated: str

    def next_after(self, epoch_ms: int) -> int:
        """The first time the schedule fires after *epoch_ms* (epoch ms, local time)."""
        from croniter import croniter  # noqa: PLC0415 - only a driver with a cron source needs it

        start = dt.datetime.fromtimestamp(epoch_ms / 1000).astimezone()
        fire = croniter(self.translated, start, second_at_beginning=True, day_or=False)
        return int(fire.get_next(dt.datetime).timestamp() * 1000)


def parse_cron(expression: str) -> CronSchedule:
    """Read a CRON driven Run Schedule.

    Raises:
        ValueError: the expression is not one NiFi (or flowcore) reads; the message is one line
            saying why.
    """
    from croniter import croniter  # noqa: PLC0415 - only cron settings need it

    fields = str(expression).split()
    if len(fields) not in (6, 7):
        msg = (
            f"cron expression {expression!r} has {len(fields)} fields; NiFi's has 6 (second "
            "minute hour day-of-month month day-of-week), e.g. '0 0 * * * ?'"
        )
        raise ValueError(msg)
    why = _unsupported(fields)
    if why is not None:
        msg = f"cron expression {expression!r}: {why}"
        raise ValueError(msg)
    fields[5] = _day_of_week(fields[5])
    translated = " ".join(fields)
    try:
        croniter(translated, second_at_beginning=True, day_or=False).get_next(float)
    except Exception as error:  # croniter's errors have no common base but CroniterError
        text = " ".join(str(error).split())
        msg = f"cron expression {expression!r} is not valid: {text}"
        raise ValueError(msg) from None
    return CronSchedule(str(expression), translated)
