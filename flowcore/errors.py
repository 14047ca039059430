"""The one exception tree of flowcore.

Every error a user can cause says what went wrong, where, and how to fix it. Each class also
subclasses the builtin it behaves like, so ``except ValueError`` keeps working for callers that do
not know flowcore. Structured data (the problems, the FlowFile, the position) travels on the
exception as attributes, never only inside the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flowcore.flowfile import ResourceClaim

__all__ = [
    "AfterCommitRetry",
    "BatchResultError",
    "ConfigurationError",
    "ContentChangedError",
    "ContentCorruptionError",
    "ContentNotFoundError",
    "DatasetError",
    "DrawingError",
    "ExpressionError",
    "ExpressionEvaluationError",
    "ExpressionLimitError",
    "ExpressionSyntaxError",
    "FlowDefinitionError",
    "FlowFileAccessError",
    "FlowFileHandlingError",
    "FlowIdentityError",
    "FlowValidationError",
    "FlowcoreError",
    "InvalidProcessorError",
    "NiFiFormatError",
    "NiFiImportError",
    "ProcessException",
    "RecordError",
    "RecordPathError",
    "RecordPathEvaluationError",
    "RecordPathSyntaxError",
    "RegexTimeoutError",
    "RelationshipError",
    "ReplayError",
    "RepositoryError",
    "RunnerError",
    "StorageFaultError",
    "UnknownProcessorError",
    "WalCorruptionError",
]


#: The longest message an expression evaluation error keeps whole (see ExpressionEvaluationError).
MAX_MESSAGE_LENGTH = 900


def quoted(text: str | None, limit: int = 80) -> str:
    """*text* for an error message: quoted, and cut short when long (values come from data).

    A helper of the messages below and of every module that builds one (not an error class,
    so not in ``__all__``).
    """
    if text is not None and len(text) > limit:
        return f"{text[: limit * 3 // 4]!r}... ({len(text):,} characters)"
    return repr(text)


class FlowcoreError(Exception):
    """Base class of every error flowcore raises on purpose."""


class FlowDefinitionError(FlowcoreError, ValueError):
    """A flow or processor was defined in a way that cannot work."""


class ConfigurationError(FlowDefinitionError):
    """A property, setting or argument has a value flowcore cannot use."""


class UnknownProcessorError(FlowDefinitionError, KeyError):
    """A processor type name is not in any registry."""

    def __str__(self) -> str:
        # KeyError would quote the whole message; show it as written.
        return str(self.args[0]) if self.args else ""


class InvalidProcessorError(FlowDefinitionError):
    """A processor's configuration is invalid; ``problems`` lists every reason."""

    def __init__(self, msg: str, problems: Sequence[Any] = ()) -> None:
        super().__init__(msg)
        self.problems = tuple(problems)


class FlowValidationError(FlowDefinitionError):
    """A flow failed validation; ``problems`` lists every problem found in one pass."""

    def __init__(self, msg: str, problems: Sequence[Any] = ()) -> None:
        super().__init__(msg)
        self.problems = tuple(problems)


class NiFiFormatError(FlowDefinitionError):
    """A file or value is not a NiFi flow definition flowcore can read (or is malformed)."""


class NiFiImportError(FlowDefinitionError):
    """A NiFi flow uses what flowcore cannot run; ``problems`` lists every one, found at once.

    Each problem names the NiFi type or setting and the components (by group path) that use
    it; nothing ran.
    """

    def __init__(self, msg: str, problems: Sequence[Any] = ()) -> None:
        super().__init__(msg)
        self.problems = tuple(problems)


class ExpressionError(FlowcoreError, ValueError):
    """Base class of Expression Language errors."""


class ExpressionSyntaxError(ExpressionError):
    """An expression could not be parsed; ``position`` is the 0-based offset of the problem."""

    def __init__(self, msg: str, expression: str, position: int) -> None:
        super().__init__(msg)
        self.expression = expression
        self.position = position


class ExpressionEvaluationError(ExpressionError):
    """A well-formed expression failed while being evaluated (e.g. a bad regex or date).

    Its message quotes values that come from data (attributes, patterns built from them). One
    longer than :data:`MAX_MESSAGE_LENGTH` characters is cut in the middle, keeping what went
    wrong at the start and the fix at the end, so a log line or a bulletin stays readable.
    """

    def __init__(self, msg: str, *args: Any) -> None:
        if len(msg) > MAX_MESSAGE_LENGTH:
            cut = len(msg) - MAX_MESSAGE_LENGTH + 40
            head = MAX_MESSAGE_LENGTH * 2 // 3
            msg = f"{msg[:head]} ... ({cut:,} characters cut) ... {msg[head + cut :]}"
        super().__init__(msg, *args)


class RegexTimeoutError(ExpressionEvaluationError):
    """A flow's regular expression ran past the time limit (``pattern`` names it).

    ``expression`` is the Expression Language text that ran it, when it came from one.
    """

    expression: str | None = None

    def __init__(self, msg: str, *, pattern: str) -> None:
        super().__init__(msg)
        self.pattern = pattern


class ExpressionLimitError(ExpressionEvaluationError):
    """An expression went past a safety limit (nesting depth, result size).

    ``expression`` is the Expression Language text whose evaluation went past it, when known.
    """

    expression: str | None = None


class ProcessException(FlowcoreError, RuntimeError):
    """A processor could not process its input (NiFi's ProcessException).

    Processors raise it for expected, data-dependent failures. ``flowfile_uuid`` and ``processor``
    name the culprit when known.
    """

    def __init__(
        self, msg: str, *, flowfile_uuid: str | None = None, processor: str | None = None
    ) -> None:
        super().__init__(msg)
        self.flowfile_uuid = flowfile_uuid
        self.processor = processor


class RecordError(FlowcoreError, ValueError):
    """A record does not parse or does not fit its schema (NiFi's MalformedRecordException).

    ``record`` is the 1-based number of the record in its content, ``line`` the 1-based line
    of the problem when the reader knows it (a JSON syntax error), ``field`` the field's name
    (dotted for a nested one) when one field is the culprit. Records read before it were
    delivered first.
    """

    def __init__(
        self,
        msg: str,
        *,
        record: int | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(msg)
        self.record = record
        self.line = line
        self.field = field


class RecordPathError(FlowcoreError, ValueError):
    """A RecordPath error (NiFi's ``RecordPathException``)."""


class RecordPathSyntaxError(RecordPathError):
    """A RecordPath could not be parsed or compiled; ``path`` and 0-based ``position`` say where."""

    def __init__(self, msg: str, path: str, position: int) -> None:
        super().__init__(msg)
        self.path = path
        self.position = position


class RecordPathEvaluationError(RecordPathError):
    """A well-formed RecordPath failed on a record (a value it cannot update, a bad regex)."""


class AfterCommitRetry(ProcessException):
    """An after-commit action could not be done now but must be, later (its FlowFiles are durable).

    Raised by :meth:`~flowcore.processor.Processor.run_after_commit_actions` when the remote
    system is unreachable (a COMMIT PREPARED whose connection was lost): the engine keeps the
    actions pending, in the repository, and hands them over again later in the run and at the
    next start, instead of reporting them as failed.
    """


class FlowFileHandlingError(ProcessException):
    """A session was used against its contract (NiFi's FlowFileHandlingException).

    Examples: a FlowFile not known in the session, transferred twice, or not accounted for at
    commit. The session has already been rolled back when this is raised from a FlowFile method.
    """


class BatchResultError(FlowFileHandlingError):
    """A batch form returned a result that cannot be taken whole, every problem named.

    A route to an undeclared relationship, rows and FlowFiles that do not match, a FlowFile in
    no route or in several, or a change beyond attributes and contents written through the
    batch form's context. The engine reports it as a bulletin and runs the batch's FlowFiles
    one by one; the test harness raises it as the processor's error.
    """


class HandedOverError(FlowcoreError, RuntimeError):
    """A session rolled back after batches it made had gone on to the next processors.

    A splitter hands its batches on as it makes them, so memory stays bounded; they cannot be
    called back. The task attempt then fails as a whole: nothing it made is committed, and its
    input is taken again, as after a crash.
    """


class FlowFileAccessError(ProcessException):
    """Content could not be read or written, or a stream was used after it was closed."""


class ContentNotFoundError(FlowFileAccessError):
    """A FlowFile points at content that is no longer in the content repository.

    ``external`` is the outside file's resource claim when the content was a zero-copy range of
    a file that is gone or changed: that never mends, so the engine routes the FlowFiles
    pointing into it to their processor's ``failure`` instead of retrying them.
    """

    def __init__(
        self,
        msg: str,
        *,
        flowfile_uuid: str | None = None,
        processor: str | None = None,
        external: ResourceClaim | None = None,
    ) -> None:
        super().__init__(msg, flowfile_uuid=flowfile_uuid, processor=processor)
        self.external = external


class ContentChangedError(ContentNotFoundError):
    """A FlowFile's content is a range of an outside file, and that file has changed.

    Zero-copy ingestion (FileSplitter) points FlowFiles into the original files, guarded by a
    fingerprint of size, modification time and inode; once the file differs, its old bytes are
    gone and reading them would give wrong data.
    """


class RelationshipError(FlowcoreError, ValueError):
    """A FlowFile was transferred to a relationship the processor does not declare."""


class RepositoryError(FlowcoreError, OSError):
    """A repository could not store or load data."""


class DatasetError(RepositoryError):
    """A dataset cannot be read, written or compacted now (in use, unfinished, or damaged)."""


class StorageFaultError(RepositoryError):
    """The file system refused a write the run needs: full (ENOSPC, EDQUOT) or read-only (EROFS).

    Nothing a processor can route around: the run stops, keeping what was committed, and the
    next run (with space freed or the mount writable) redoes the interrupted micro-batch.
    """


class WalCorruptionError(RepositoryError):
    """The write-ahead log holds bytes that are neither a whole transaction nor a torn tail."""


class ContentCorruptionError(RepositoryError):
    """A content claim file's bytes are not what was written: a checksum mismatch or a cut.

    ``claim`` is the damaged resource claim; ``offset`` and ``length`` bound the damaged bytes
    of its file (``length`` None: from ``offset`` to the end; ``offset`` None: the whole file
    cannot be trusted); ``reason`` says what is wrong in one line, without the advice. The
    damage never mends, so the engine routes the FlowFiles whose content lies there to their
    processor's ``failure`` with ``reason`` as ``content.failure.reason``.
    """

    def __init__(
        self,
        msg: str,
        *,
        claim: ResourceClaim,
        offset: int | None = None,
        length: int | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(msg)
        self.claim = claim
        self.offset = offset
        self.length = length
        self.reason = reason or msg

    def __reduce__(self) -> Any:
        # Keyword-only arguments do not survive the default exception pickling (Spark ships
        # errors between processes).
        fields = (str(self), self.claim, self.offset, self.length, self.reason)
        return _rebuild_corruption, fields


class FlowIdentityError(FlowcoreError, ValueError):
    """A flow cannot run on a repository: another flow owns it, or queued FlowFiles lost their way.

    The message names both flows, or each queue by its endpoints with its FlowFile count, and
    the fix that applies (DESIGN §9c); nothing in the repository was changed.
    """


class RunnerError(FlowcoreError, RuntimeError):
    """The runner lost what ran a stage's tasks: the Spark JVM or a Python worker died.

    Nothing committed is lost; the interrupted micro-batch is redone by the next run.
    """


class ReplayError(FlowcoreError, ValueError):
    """A provenance event cannot be replayed (a JOIN, content gone, or its queue gone)."""


class DrawingError(FlowcoreError, RuntimeError):
    """A picture cannot be drawn in the format asked: its program is missing, or no such format."""


def _rebuild_corruption(
    msg: str, claim: ResourceClaim, offset: int | None, length: int | None, reason: str
) -> ContentCorruptionError:
    return ContentCorruptionError(msg, claim=claim, offset=offset, length=length, reason=reason)
