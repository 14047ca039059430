"""Processor log records at WARNING or above become bulletins, as NiFi's do.

NiFi turns what a processor logs at its bulletin level (WARN by default) or above into a
bulletin on its component, so an operator sees "Cannot write ...; routing to failure" on the
bulletin board, not only in a log file. flowcore's processors log through their type's logger
(``flowcore.processors.<Type>``); a task marks which member is running (:func:`running`), and
one handler on ``flowcore.processors`` turns such records into that member's bulletins, which
the task returns with its result (so they reach ``flowcore status`` from Spark executors too).

A processor that fails the same way for every FlowFile (a PutFile into a directory it cannot
write: 1,452 identical errors) must neither bury the run's output nor lose count. So:

- each record has a *reason*, :func:`reason_key`: its message with FlowFile names, uuids and
  numbers masked, so "Cannot write FlowFile[id=7, ...]" and "... id=8 ..." are one reason;
- a member (one task) makes a bulletin of each of its first :data:`MAX_LOG_BULLETINS` records;
  past them it counts records by reason, and each time it stops running it makes one bulletin
  per reason saying how many more there were (:func:`repeated`), so every record is counted
  in the bulletins alone (``flowcore run`` sums them into one line per reason);
- of the records Python would write to stderr for want of any logging configured
  (``logging.lastResort``), only the first of each reason in a process is written: the rest are
  bulletins (a source's errors while the driver lists it are written once per reason too).
  An application that configures logging gets every record, as before.

Every record logged while a processor runs, at any level and by any logger (its own, a
module's ``__name__`` logger, a library's), loses the processor's secrets (its sensitive values
and those of the services it names) before any handler or filter sees it: a log record factory
(:func:`logging.setLogRecordFactory`, installed once) masks them in the message, the formatted
traceback and the stack of each record it makes, when the thread's context has secrets set by
:func:`running` (a member's task) or :func:`redacting` (the driver listing for a processor).
The secrets live in a context variable, so a thread running another processor, or none,
sees its own; a thread a processor starts itself has them when it runs a callable wrapped by
:func:`~flowcore.processor.context.carry_context` (its records make no bulletins).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import re
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import attrs

from flowcore.parameters import MIN_MASKED_LENGTH, redact
from flowcore.processor.context import leave_behind
from flowcore.service_order import secrets_with_services

__all__ = [
    "BULLETIN_LEVEL",
    "Repeated",
    "brief",
    "log_once_per_reason",
    "reason_key",
    "redacting",
    "repeated",
    "running",
    "secrets_for",
]

#: NiFi's default bulletin level: WARN and above.
BULLETIN_LEVEL = logging.WARNING
#: Log bulletins one member makes in one task; past them, a processor that warns about every
#: FlowFile (a million failing writes) has its records counted by reason instead. NiFi's
#: bulletin board keeps the last few per component too.
MAX_LOG_BULLETINS = 100
#: Reasons one member counts apart past :data:`MAX_LOG_BULLETINS` in one task; records of
#: further reasons are counted together, as "other reasons".
MAX_REASONS = 10
#: Reasons a process remembers having written to stderr; past them it forgets them all and
#: writes each again once (memory stays bounded whatever the messages).
MAX_WRITTEN_REASONS = 10_000

#: How :class:`~flowcore.flowfile.FlowFile` prints itself (``FlowFile.__str__``).
_FLOWFILE = re.compile(r"FlowFile\[id=\d+, uuid=[^,\]]*, filename=.*?, size=\d+\]")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_OVER = f"more than {MAX_LOG_BULLETINS} warnings in one task; "
_REPEATED = re.compile(
    re.escape(_OVER) + r"(\d+) more (?:like this: (.*)|with other reasons)", re.DOTALL
)


def reason_key(message: str) -> str:
    """What *message* says once the FlowFile it names is masked: records alike share it.

    FlowFiles as they print, uuids and numbers become ``#``: "Cannot write FlowFile[id=7, ...]:
    [Errno 13] Permission denied: '/out/7.txt'" and the same for FlowFile 8 are one reason.
    """
    return _NUMBER.sub("#", _UUID.sub("#", _FLOWFILE.sub("FlowFile", message)))


def brief(message: str) -> str:
    """*message* with the FlowFiles it names shortened to ``FlowFile[...]`` (for a count line)."""
    return _FLOWFILE.sub("FlowFile[...]", message)


@attrs.frozen
class Repeated:
    """What a bulletin made past :data:`MAX_LOG_BULLETINS` counts.

    Attributes:
        count: records it stands for.
        message: the first of them, or None for records of other reasons than those counted
            apart (:data:`MAX_REASONS`).
    """

    count: int
    message: str | None


def repeated(message: str) -> Repeated | None:
    """The records a bulletin's *message* stands for, when it counts them (else None)."""
    found = _REPEATED.fullmatch(message)
    if found is None:
        return None
    return Repeated(int(found[1]), found[2])


class _Bulletins(Protocol):
    def bulletin(self, message: str, level: str = "ERROR") -> None: ...


@attrs.define
class _Counted:
    """Records of one reason past the cap, since the member last said how many."""

    message: str
    count: int = 0
    level: str = "WARNING"


@attrs.define
class _Made:
    """What one member's records made so far (a member lives for one task)."""

    bulletins: int = 0
    counted: dict[str | None, _Counted] = attrs.field(factory=dict)

    def count(self, key: str, message: str, level: str) -> None:
        """Count a record past the cap under its reason (or with the other reasons)."""
        slot: str | None = key
        if key not in self.counted and len(self.counted) >= MAX_REASONS:
            slot = None
        counted = self.counted.setdefault(slot, _Counted(message))
        counted.count += 1
        if level == "ERROR":
            counted.level = level

    def say(self, member: _Bulletins) -> None:
        """One bulletin per reason counted since the last time."""
        for slot, counted in self.counted.items():
            what = "with other reasons" if slot is None else f"like this: {counted.message}"
            member.bulletin(f"{_OVER}{counted.count} more {what}", counted.level)
        self.counted.clear()


_RUNNING: contextvars.ContextVar[_Bulletins | None] = contextvars.ContextVar(
    "flowcore_running_member", default=None
)
leave_behind(_RUNNING, None)  # a processor's own thread logs its secrets masked, no bulletins
_MADE: weakref.WeakKeyDictionary[_Bulletins, _Made] = weakref.WeakKeyDictionary()
#: (logger, reason) of the records this process wrote to stderr (see the module docstring).
_WRITTEN: set[tuple[str, str]] = set()


class _ToBulletins(logging.Handler):
    """Hands a processor's log record to the member running in this thread, as a bulletin."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not fail the processor
            message = str(record.msg)
        member = _RUNNING.get()
        key = reason_key(message)
        if member is not None:
            made = _MADE.setdefault(member, _Made())
            level = "ERROR" if record.levelno >= logging.ERROR else "WARNING"
            if made.bulletins < MAX_LOG_BULLETINS:
                made.bulletins += 1
                member.bulletin(message, level)
            else:
                made.count(key, message, level)
        # Being a handler, this one would keep Python from writing the record to stderr when
        # nothing else handles it (``logging.lastResort``): do that as Python would have, once
        # per reason for a running member's records (the bulletins have every one).
        last = logging.lastResort
        if last is None or record.levelno < last.level or _handled_elsewhere(record):
            return
        if member is not None or record.levelno >= logging.ERROR:
            # a member's records, and the driver's listings' errors (QueryDatabaseTable's
            # refused connection at each of a batch run's retries): once per reason
            if (record.name, key) in _WRITTEN:
                return
            if len(_WRITTEN) >= MAX_WRITTEN_REASONS:
                _WRITTEN.clear()
            _WRITTEN.add((record.name, key))
        last.handle(record)


#: The secrets of the processor running in this context (a member's task, or the driver
#: listing for it): what :func:`_masking_factory` masks in every record made here.
_SECRETS: contextvars.ContextVar[Callable[[], list[str]] | None] = contextvars.ContextVar(
    "flowcore_processor_secrets", default=None
)
#: Formats a record's traceback as the standard formatter would, to mask it.
_FORMATTER = logging.Formatter()


#: What a record made where the secrets cannot be looked up says instead of its message.
WITHHELD = "message withheld: secrets unavailable"
#: The attributes every record has (``extra={...}`` adds others, which are masked too).
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
}


def _masking_factory(made: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    """A log record factory masking the running processor's secrets, around *made*.

    Masking where the record is made, not in a handler, covers every logger and handler order
    (a handler on a child logger runs before one on ``flowcore.processors``). The traceback is
    formatted and masked into ``exc_text``, which formatters use rather than format
    ``exc_info`` again; ``exc_info`` is cleared (handlers such as Sentry's read the exception
    itself, its frames' locals included, where a secret the text lacks may be). The stack is
    masked likewise, and the ``extra={...}`` fields as :meth:`logging.Logger.makeRecord` adds
    them. When the secrets cannot be looked up the record fails closed: it says
    :data:`WITHHELD`, nothing more, and the logging call still returns. A closure, not an
    object's ``__call__``: a record made where no processor runs pays one context-variable
    read.
    """

    def make(*args: object, **kwargs: object) -> logging.LogRecord:
        record = made(*args, **kwargs)
        secrets = _SECRETS.get()
        if secrets is not None:
            try:
                _mask(record, secrets())
            except Exception:  # a logging call must not raise: the record shows nothing
                _withhold(record)
        return record

    make.flowcore_masking = True  # type: ignore[attr-defined]
    return make


def _withhold(record: logging.LogRecord) -> None:
    """Leave *record* nothing that could hold a secret: its message says :data:`WITHHELD`."""
    record.msg, record.args = WITHHELD, None
    record.exc_info = record.exc_text = record.stack_info = None
    record.__dict__ = _Withheld(record.__dict__)


def _mask(record: logging.LogRecord, secrets: list[str]) -> None:
    """Mask *secrets* in *record*'s message, traceback, stack and extra fields, in place."""
    if not any(len(s) >= MIN_MASKED_LENGTH for s in secrets):
        return
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: its arguments are shown beside it, masked
        record.msg = redact(f"{record.msg} (arguments: {record.args!r})", secrets)
        record.args = None
    else:
        redacted = redact(message, secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
    if record.exc_info and record.exc_info[0] is not None:
        text = record.exc_text or _FORMATTER.formatException(record.exc_info)
        record.exc_text = redact(text, secrets)
        # Formatters write exc_text; the exception itself goes: a handler reading it (Sentry,
        # Rich, structlog) would show its frames' locals, its causes and its attributes,
        # which may hold a secret the formatted text does not (a connect(password=...) frame).
        record.exc_info = None
    elif record.exc_text:
        record.exc_text = redact(record.exc_text, secrets)
    if record.stack_info:
        record.stack_info = redact(record.stack_info, secrets)
    record.__dict__ = _MaskedExtra(record.__dict__, secrets)


class _MaskedExtra(dict):  # type: ignore[type-arg]
    """A record's attributes, masking each ``extra`` field as ``makeRecord`` stores it.

    ``makeRecord`` adds the fields after the factory made the record, by item assignment on
    the record's ``__dict__``: this dict is where to see them. It pickles and copies as a
    plain dict, so the secrets never travel with a record (a ``QueueHandler``, a socket).
    """

    __slots__ = ("_secrets",)

    def __init__(self, attributes: dict[str, object], secrets: list[str]) -> None:
        super().__init__(attributes)
        self._secrets = secrets

    def __setitem__(self, key: str, value: object) -> None:
        if key not in _STANDARD:
            value = _masked_value(value, self._secrets)
        super().__setitem__(key, value)

    def __reduce__(self) -> tuple[type, tuple[dict[str, object]]]:
        return dict, (dict(self),)


class _Withheld(_MaskedExtra):
    """A withheld record's attributes: every ``extra`` field is withheld too."""

    def __init__(self, attributes: dict[str, object]) -> None:
        super().__init__(attributes, [])

    def __setitem__(self, key: str, value: object) -> None:
        dict.__setitem__(self, key, value if key in _STANDARD else WITHHELD)


def _masked_value(value: object, secrets: list[str]) -> object:
    """*value* without *secrets*: a string masked, another value as its text if that held one."""
    if isinstance(value, str):
        return redact(value, secrets)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    try:
        text = str(value)
    except Exception:  # a value that cannot say itself is not shown
        return WITHHELD
    redacted = redact(text, secrets)
    return value if redacted == text else redacted


@contextlib.contextmanager
def redacting(secrets: Callable[[], list[str]]) -> Iterator[None]:
    """While the block runs, log records made in this context lose the values *secrets* returns.

    *secrets* is called once in the block, when a record is first made (walking a processor's
    services for each record of a listing would cost more than the record).
    """
    _install()
    token = _SECRETS.set(functools.cache(secrets))
    try:
        yield
    finally:
        _SECRETS.reset(token)


def secrets_for(processor: object, services: Mapping[str, object]) -> Callable[[], list[str]]:
    """What *processor*'s messages must not show, found when asked (:func:`redacting` takes it).

    Its secrets and those of the *services* (name -> service) it names, transitively.
    """
    return functools.partial(secrets_with_services, processor, services)


def _handled_elsewhere(record: logging.LogRecord) -> bool:
    """Whether a handler other than this module's sees *record* (as ``callHandlers`` walks).

    A handler with ``observes_only`` set (the driver noting a listing's last error) writes
    nothing anywhere, so it does not count.
    """
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(
            not isinstance(h, _ToBulletins) and not getattr(h, "observes_only", False)
            for h in logger.handlers
        ):
            return True
        logger = logger.parent if logger.propagate else None
    return False


def log_once_per_reason(log: logging.Logger, message: str, detail: str = "") -> None:
    """Log *message* (and *detail*, a traceback) at ERROR, but not 1,452 times to stderr.

    The engine's own record of a processor that raised goes with a bulletin, which keeps
    every one. When the application configured logging, every record goes to it as before;
    when only Python's ``lastResort`` would write it to stderr, only the first record of each
    reason (:func:`reason_key` of *message*) in this process is written.
    """
    record = log.makeRecord(log.name, logging.ERROR, "", 0, "%s", (message,), None)
    if log.isEnabledFor(logging.ERROR) and not _handled_elsewhere(record):
        key = (log.name, reason_key(message))
        if key in _WRITTEN:
            return
        if len(_WRITTEN) >= MAX_WRITTEN_REASONS:
            _WRITTEN.clear()
        _WRITTEN.add(key)
    log.error("%s", message + detail)


def _install() -> None:
    """Put one handler on the processors' parent logger, and the masking record factory.

    The factory goes back in when another replaced it since (an application, a test harness):
    it wraps whatever factory is current.
    """
    parent = logging.getLogger("flowcore.processors")
    if not any(isinstance(h, _ToBulletins) for h in parent.handlers):
        parent.addHandler(_ToBulletins(BULLETIN_LEVEL))
    made = logging.getLogRecordFactory()
    if not getattr(made, "flowcore_masking", False):
        logging.setLogRecordFactory(_masking_factory(made))


@contextlib.contextmanager
def running(member: _Bulletins) -> Iterator[None]:
    """While the block runs, what processors log at WARNING or above is *member*'s bulletin.

    When it ends, the member says how many records it counted past :data:`MAX_LOG_BULLETINS`
    since it last did, one bulletin per reason.
    """
    _install()
    token = _RUNNING.set(member)
    secrets = _SECRETS.set(getattr(member, "secrets", None))
    try:
        yield
    finally:
        _SECRETS.reset(secrets)
        _RUNNING.reset(token)
        made = _MADE.get(member)
        if made is not None and made.counted:
            made.say(member)
