"""The processor kinds beside a plain per-FlowFile processor: transform, binning, source, sink.

* **per-FlowFile transform** (:class:`FlowFileTransform`): one FlowFile in, a
  :class:`TransformResult` out, ``transform`` called once per FlowFile per attempt, with a batch
  form for free (its results made columns and contents again);
* **binning** (:class:`BinningProcessor`): FlowFiles grouped by a key and merged when a bin is
  ready (MergeContent), a shuffle in Spark;
* **source** (:class:`SourceProcessor`): lists work on the driver and reads each item in a task,
  with the listing state committed with the output (exactly-once ingestion);
* **two-phase sink** (:class:`TwoPhaseSink`): writes in tasks and commits on the driver, like
  Spark's DataSource V2 writers.

Each is a :class:`~flowcore.processor.Processor` with the hooks its kind needs; the engine tells
them apart by :attr:`~flowcore.processor.Processor.kind`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from flowcore.errors import ContentCorruptionError, ContentNotFoundError, ProcessException
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.flowfile_batch.columns import Column
from flowcore.processor.base import Capabilities, InputRequirement, Processor, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import FAILURE, ORIGINAL, SUCCESS, Relationship
from flowcore.session._content import CONTENT_FAILURE_REASON
from flowcore.session._transform import (
    FlowFileView,
    damage_reason,
    decided_routes,
    decision_problem,
    plainly_valid,
)
from flowcore.session.batch_context import BatchContext, BatchRoute

if TYPE_CHECKING:
    from flowcore.processor.binning import BatchBinning, Bin
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "HARNESS_WRITE",
    "BinningProcessor",
    "FlowFileTransform",
    "FlowFileView",
    "PendingWork",
    "SinkJobs",
    "SourceProcessor",
    "TransformResult",
    "TwoPhaseSink",
    "WorkItem",
    "WorkListing",
]


class BinningProcessor(Processor):
    """A processor that groups FlowFiles into bins by a key and processes ready bins.

    The engine brings each group's FlowFiles together in queue order (a Spark shuffle of FlowFile
    records, never content); the processor decides which bins are ready. FlowFiles of unfinished
    bins stay queued, durably, with their bin's creation time. Subclasses implement
    :meth:`group_key` and the binning and merging in :meth:`on_trigger` (MergeContent is one).
    """

    kind: ClassVar[ProcessorKind] = ProcessorKind.BINNING

    def group_key(self, context: ProcessContext, flowfile: FlowFile) -> str | None:
        """The bin group of *flowfile* (``None`` is a group of its own)."""
        msg = f"{type(self).__name__} must implement group_key"
        raise NotImplementedError(msg)

    def group_column(self, context: ProcessContext, batch: FlowFileBatch) -> Column | None:
        """The bin group of each FlowFile of *batch*, as :meth:`group_key` gives it, or None.

        The engine then sends a batch's groups to their tasks as batches, without a FlowFile
        object each. None (the default) has the batch's FlowFiles keyed one by one.
        """
        del context, batch
        return None

    def single_group(self, context: ProcessContext) -> bool:
        """Whether every FlowFile falls in the same group, whatever its attributes.

        Then the engine need not regroup FlowFiles by key (a shuffle would send them all to
        one partition anyway): one task takes the whole input, without a shuffle's cost. The
        default, ``False``, is always safe.
        """
        del context
        return False

    def merge_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        """Process one ready bin whose FlowFiles *session* holds (the caller commits).

        Implementing it lets the engine decide bins per group in one task and merge ready bins
        in parallel tasks (see ``ProcessContext.bin_sink``); without it, bins are merged where
        they are decided.
        """
        msg = f"{type(self).__name__} does not merge bins apart from binning them"
        raise NotImplementedError(msg)

    def bin_batches(
        self, context: ProcessContext, batches: Sequence[FlowFileBatch], *, end_of_input: bool
    ) -> BatchBinning | None:
        """Bin a task's whole input, given as FlowFile batches, without a FlowFile each.

        The result must be the bins the one-by-one triggers would have made from the same
        FlowFiles. Return None (the default) when this configuration cannot: the engine then
        materializes the batches and triggers the processor as always.
        """
        del context, batches, end_of_input
        return None

    def merge_batches(
        self,
        context: ProcessContext,
        session: ProcessSession,
        batches: Sequence[FlowFileBatch],
        bin_: Bin,
    ) -> tuple[str, Mapping[str, str]] | None:
        """Merge a bin of :meth:`bin_batches` whose FlowFiles are *batches* (cuts, in order).

        Create and transfer the merged FlowFile(s) in *session*; return where the originals
        go: ``(relationship, attributes to set on each)``. The engine moves the originals as
        batches (with provenance runs). Return None, or raise, to have the bin merged one
        FlowFile at a time by :meth:`merge_bin` instead.
        """
        del context, session, batches, bin_
        return None

    def max_bin_age_ms(self, context: ProcessContext) -> int | None:
        """How long a bin may wait before it is processed anyway (None: no limit).

        The engine uses it to know when FlowFiles of unfinished bins are worth binning again.
        """
        del context
        return None

    def end_of_input(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """The run is draining and no more input will come: process the open bins now.

        Batch runs call it once their sources are exhausted and nothing else can run
        (MergeContent merges with reason ``END_OF_INPUT``; incomplete Defragment bins go to
        failure). The default does nothing: open bins stay queued.
        """
        del context, session_factory

    @classmethod
    def _capabilities(cls) -> Capabilities:
        """Batch binning and merging apart, as this class's methods allow.

        Batch binning needs both hooks defined where the methods they stand in for are (a
        subclass overriding ``merge_bin`` alone would be bypassed by inherited hooks, so it
        bins FlowFile by FlowFile); merging apart needs ``merge_bin`` implemented.
        """
        base = super()._capabilities()
        kind = globals().get("BinningProcessor")
        if kind is None:  # this class itself is being made
            return base
        hooks = [_owner(cls, "bin_batches"), _owner(cls, "merge_batches")]
        bins = all(hook is not kind for hook in hooks) and all(
            issubclass(hook, _owner(cls, name)) for hook in hooks for name in _STOOD_IN_FOR
        )
        return attrs.evolve(
            base, bins_batches=bins, merges_apart=_owner(cls, "merge_bin") is not kind
        )


#: What the batch hooks stand in for: a subclass overriding one of these without overriding
#: the hooks too would be bypassed, so its batches are materialized instead.
_STOOD_IN_FOR = ("on_trigger_sessions", "merge_bin", "group_key", "single_group", "end_of_input")


def _owner(kind: type, name: str) -> type:
    """The class in *kind*'s MRO that defines *name*."""
    return next(k for k in kind.__mro__ if name in vars(k))


@attrs.frozen
class WorkItem:
    """One unit of source work, listed on the driver and read in a task (picklable).

    Attributes:
        key: identifies the item (a path, a block id, a counter).
        payload: what the reader needs (offsets, sizes, fingerprints ...).
        flowfiles: how many FlowFiles reading it makes, when the source knows (None: unknown).
            An unbounded source whose items say so is triggered until they fill a micro-batch.
        size: content bytes reading it makes, when known (a file's size): filling a micro-batch
            stops at ``batch_max_bytes``.
        batched: reading it makes its FlowFiles as one batch
            (:meth:`SourceProcessor.read_work_batches` will not decline it when offered it
            alone), so a micro-batch may hold ``batch_max_batched_flowfiles`` of them.
    """

    key: str
    payload: Mapping[str, Any] = attrs.field(factory=dict)
    flowfiles: int | None = None
    batched: bool = False
    size: int = 0


@attrs.frozen
class WorkListing:
    """The result of :meth:`SourceProcessor.list_work`: items and the state after them."""

    items: tuple[WorkItem, ...] = attrs.field(default=(), converter=tuple)
    state: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class PendingWork:
    """Work a source has listed (or found) but not handed out yet: what a run has left to read.

    The ``flowcore run`` progress display turns it into a percentage and an ETA.

    Attributes:
        items: work items left (files, blocks).
        bytes: the bytes they hold, when the source knows (None: only the count is known).
    """

    items: int
    bytes: int | None = None


class SourceProcessor(Processor):
    """A processor with no input that creates FlowFiles from outside data.

    Split in two so Spark can read in parallel with exactly-once ingestion: :meth:`list_work`
    runs on the driver and returns work items plus the listing state after them;
    :meth:`read_work` runs in a task and turns one item into FlowFiles. The engine commits the
    new listing state in the same transaction as the FlowFiles, so a crash neither skips nor
    repeats an item. In the test harness, :meth:`on_trigger` does both in one session.

    The batch form makes the FlowFiles without a session each: :meth:`read_work_batches` (a
    task's items at once, or one at a time); see ``docs/writing-processors.md``.
    """

    kind: ClassVar[ProcessorKind] = ProcessorKind.SOURCE
    input_requirement: ClassVar[InputRequirement] = InputRequirement.INPUT_FORBIDDEN
    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS,)
    #: A source that never runs out of work (a generator). Batch runs trigger it a set number
    #: of times (``Settings.unbounded_source_batches``) instead of until it has nothing left.
    unbounded: ClassVar[bool] = False
    #: Triggered again within one micro-batch while its listing yields items that say how
    #: many FlowFiles (and bytes) they make, until the micro-batch's limits (NiFi's Run
    #: Duration): GetFile's Batch Size of 10 would otherwise make a micro-batch per 10 files.
    fills_micro_batch: ClassVar[bool] = False
    #: Work items name the data they read (a file's path and fingerprint), so the FlowFiles
    #: an item makes get uuids derived from it: a replayed read makes the same ones. Sources
    #: whose items do not (a generator's "make N") keep random uuids.
    identifies_work: ClassVar[bool] = False

    @classmethod
    def _capabilities(cls) -> Capabilities:
        """A source's: whether its items seed its FlowFiles' uuids, settled with the class."""
        return attrs.evolve(super()._capabilities(), identifies_work=cls.identifies_work)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """List the work available now, given the committed listing *state*."""
        msg = f"{type(self).__name__} must implement list_work"
        raise NotImplementedError(msg)

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """What is left to read after the committed listing *state*, if the source knows.

        Called on the driver between micro-batches, for progress only: it must be cheap and
        change nothing. None (the default): unknown, as for a generator that never runs out.
        """
        del context, state
        return None

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """The listing *state* with *items* put back: they were listed but could not be read.

        The engine calls this before committing a listing whose reads failed (the item's
        session rolled back: a full disk, an unreadable file), so an item is marked done only
        in the transaction that commits its FlowFiles, and listed again later. By default an
        item's key is its state key, restored to its *committed* value (or removed).
        """
        restored = dict(state)
        for item in items:
            if item.key in committed:
                restored[item.key] = committed[item.key]
            else:
                restored.pop(item.key, None)
        return restored

    def after_commit(self, context: ProcessContext, items: Sequence[WorkItem]) -> None:
        """*items*' FlowFiles are durable (their write-ahead log transaction committed).

        Called on the driver right after the commit, with the items this source listed that
        were read and committed in it. A source that owes its sender an answer (ListenHTTP
        acknowledges a request only once its FlowFiles cannot be lost) gives it here. Not
        called after a crash: what was committed but not answered is the sender's to retry.
        The default does nothing.
        """
        del context, items

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Create and transfer the FlowFiles of one work item."""
        msg = f"{type(self).__name__} must implement read_work"
        raise NotImplementedError(msg)

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> Sequence[tuple[str, FlowFileBatch]] | None:
        """Create the FlowFiles of all of a task's *items* as batches, without a session each.

        The batch form of a source whose items are small (GetFile's files): what
        :meth:`read_work` does for each item, in order, for all of them at once. *maker*
        writes contents (``write``, ``reference``), makes the FlowFiles with their attributes
        (``create_rows``: one batch per content claim) and takes what a session would take:
        RECEIVE reports (``report_receive``; the other FlowFiles get a CREATE), source files
        to delete after the commit (``delete_after_commit``) and items that could not be read
        (``unread``: listed again later, as a rolled-back session's item is). Return
        ``(relationship, batch)`` pairs (``create_each`` makes one batch per content claim),
        or None (the default): given several items, the engine then offers them one at a
        time, and an item declined alone is read by :meth:`read_work`. Raising does the
        same, but what the batch form logged stays logged: decline before reading.

        The items stay one per unit of listing state (a file), so a file that fails is put
        back alone, and a source's listing is the same whichever way its items are read.
        """
        del context, items, maker
        return None

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """List and read in one session, committing the listing state with the output."""
        listing = self.list_work(context, session.get_state().values)
        for item in listing.items:
            self.read_work(context, session, item)
        if listing.items or dict(listing.state) != dict(session.get_state().values):
            session.set_state(listing.state)


@attrs.frozen
class SinkJobs:
    """What a two-phase sink's driver side may use besides its messages.

    Attributes:
        run: runs a picklable function over items on the flow's runner (Spark tasks, or
            in-process), results in order: how merge jobs run "like any task".
        continuous: whether the run is a ``--continuous`` one.
    """

    run: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]
    continuous: bool = False


#: FlowFiles a two-phase sink writes per trigger in the test harness (one task's input).
HARNESS_WRITE = 10_000


def _in_process(function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    return [function(item) for item in items]


class TwoPhaseSink(Processor):
    """A sink whose tasks write and whose driver commits, like Spark's DataSource V2 writers.

    The protocol, so that a crash at any point neither loses nor duplicates output:

    1. :meth:`write` runs in each task with the task's FlowFiles, writes somewhere nobody reads
       yet, and returns a commit message (bytes) describing what it wrote.
    2. :meth:`commit` runs on the driver with every task's messages, in task order, and the
       sink's committed state; it *stages* the publication and returns the new state. The
       engine commits that state in the stage run's write-ahead log transaction.
    3. :meth:`publish` runs after the transaction is durable, and again at start-up with the
       committed state, so it must be idempotent: it publishes what the committed state names
       and discards anything staged beyond it.
    4. :meth:`end_of_run` runs once a batch run has nothing left to do (a last merge, say);
       :meth:`release` when the run stops.
    """

    kind: ClassVar[ProcessorKind] = ProcessorKind.SINK

    def write(
        self, context: ProcessContext, session: ProcessSession, flowfiles: Sequence[FlowFile]
    ) -> bytes:
        """Write *flowfiles* and transfer them; describe what was written."""
        msg = f"{type(self).__name__} must implement write"
        raise NotImplementedError(msg)

    def write_batches(
        self, context: BatchContext, batches: Sequence[FlowFileBatch]
    ) -> bytes | None:
        """The batch form of :meth:`write`: the task's FlowFiles as batches, in queue order.

        Write them exactly as :meth:`write` would write the same FlowFiles (the same output,
        in the same pieces), reading their contents from the batches' claim ranges
        (:meth:`BatchContext.joined_contents`) and reporting their SEND events with
        :meth:`BatchContext.report_send`; every FlowFile then goes to ``success``, as the
        engine moves the batches whole. Return the commit message, or None (the default)
        when this configuration cannot: the engine then makes the FlowFiles and calls
        :meth:`write`. Raise (after removing what it wrote) when a FlowFile fails: the same.
        """
        del context, batches
        return None

    def commit(
        self,
        context: ProcessContext,
        messages: Sequence[bytes],
        state: Mapping[str, str],
        jobs: SinkJobs,
    ) -> Mapping[str, str]:
        """Stage what the tasks wrote; return the state that names it."""
        msg = f"{type(self).__name__} must implement commit"
        raise NotImplementedError(msg)

    def publish(self, context: ProcessContext, state: Mapping[str, str]) -> None:
        """Make what *state* names visible; discard what was staged beyond it (idempotent)."""
        msg = f"{type(self).__name__} must implement publish"
        raise NotImplementedError(msg)

    def end_of_run(
        self, context: ProcessContext, state: Mapping[str, str], jobs: SinkJobs
    ) -> Mapping[str, str] | None:
        """Stage a last change when a batch run ends; None when there is nothing to do."""
        del context, state, jobs
        return None

    def release(self, context: ProcessContext) -> None:
        """Let go of what the driver side holds (locks) when the run stops."""

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Write, commit and publish in one go (the test harness path)."""
        flowfiles = session.get(HARNESS_WRITE)
        if not flowfiles:
            return
        message = self.write(context, session, flowfiles)
        session.set_state(self.commit_at_once(context, message, session.get_state().values))

    def commit_at_once(
        self, context: ProcessContext, message: bytes, state: Mapping[str, str]
    ) -> Mapping[str, str]:
        """Commit, publish and release one task's message at once (the test harness's way)."""
        state = self.commit(context, [message], state, SinkJobs(_in_process))
        self.publish(context, state)
        self.release(context)
        return state


# --- per-FlowFile transforms --------------------------------------------------------------


@attrs.frozen
class TransformResult:
    """What :meth:`FlowFileTransform.transform` decides for one FlowFile.

    Attributes:
        relationship: where the FlowFile goes (a name; a declared :class:`Relationship` too).
        contents: new content (bytes, or str written as UTF-8); ``None`` keeps the content.
        attributes: attributes to set (str values).
        remove_attributes: attributes to remove (core attributes are kept).
    """

    relationship: str = "success"
    contents: bytes | str | None = None
    attributes: Mapping[str, str] | None = None
    remove_attributes: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class _Failed:
    """What :meth:`FlowFileTransform.transform` raised for one FlowFile (or a broken result)."""

    error: Exception


#: What ``transform`` made of one FlowFile, checked: one result (the fast path, the value
#: itself: a batch holds one per FlowFile), several (a tuple), or its error.
_Outcome = TransformResult | tuple[TransformResult, ...] | _Failed


#: Content bytes a batch of transform results may hold before the batch stops calling
#: ``transform`` and the FlowFiles it has not reached go on one by one (bounded memory).
TRANSFORM_BATCH_BYTES = 32 << 20


class FlowFileTransform(Processor):
    """A per-FlowFile processor written as a function of one FlowFile.

    Implement :meth:`transform` returning a :class:`TransformResult` (or several: the first applies
    to the incoming FlowFile, each further one to a clone taken before any change; none removes
    it). As in NiFi's Python ``FlowFileTransform``, an exception in ``transform`` sends the
    unchanged FlowFile to ``failure`` when the processor declares it, with the error logged;
    without ``failure`` the FlowFile is rolled back to its queue, penalized, with a bulletin.
    Declare ``original`` to also receive a clone of the input.

    The engine calls :meth:`transform` exactly once per FlowFile per attempt, whichever path
    the FlowFile takes (a whole batch, one by one, or a batch that stops part way), so a
    transform may have effects outside flowcore (an HTTP call, a database insert). Only a
    crash or a Spark task retry runs an attempt again, as NiFi's at-least-once toward external
    systems (``docs/writing-processors.md``).
    """

    supports_batching: ClassVar[bool] = True

    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS, FAILURE)

    def transform(
        self, context: ProcessContext, flowfile: FlowFileView
    ) -> TransformResult | Sequence[TransformResult]:
        """Decide what happens to one FlowFile."""
        msg = f"{type(self).__name__} must implement transform"
        raise NotImplementedError(msg)

    def batches_triggers(self) -> bool:
        """Many triggers in one session only when ``failure`` takes the errors.

        A trigger whose :meth:`transform` raises without a ``failure`` relationship fails its
        session; in a session of many triggers that would roll back the others, whose
        transforms already ran. So without ``failure`` each FlowFile has a session of its own.
        """
        return super().batches_triggers() and FAILURE.name in self.relationship_names()

    # --- calling transform once -------------------------------------------------------------

    def _outcome(
        self, context: ProcessContext, view: FlowFileView, names: Collection[str]
    ) -> _Outcome:
        """Call :meth:`transform` for one FlowFile: its checked results, or what it raised.

        *names* are the relationships (looked up once per batch, not per FlowFile).
        """
        try:
            made = self.transform(context, view)
        except Exception as error:
            failed = _Failed(error)
        else:
            if type(made) is TransformResult and plainly_valid(made, names):
                return made  # the fast path: one valid result
            try:
                results = self._checked(made, view.flowfile, names)
            except ProcessException as error:
                failed = _Failed(error)
            else:
                return results[0] if len(results) == 1 else results
        if FAILURE.name in names:
            error = failed.error
            context.logger.error(  # damaged content is told by its message: no traceback
                "%s failed to transform %s; routing to failure: %s",
                self,
                view.flowfile,
                error,
                exc_info=None
                if isinstance(error, ContentCorruptionError | ContentNotFoundError)
                else error,
            )
        return failed

    def _checked(
        self, made: object, flowfile: FlowFile, names: Collection[str]
    ) -> tuple[TransformResult, ...]:
        """*made* as results, or a :class:`ProcessException` naming the broken contract."""
        name = type(self).__name__
        contract = (
            f"{name}.transform must return a TransformResult, or a list of them (one per "
            "FlowFile it makes; an empty list removes the FlowFile)"
        )
        if isinstance(made, TransformResult):
            made = (made,)
        if not isinstance(made, list | tuple):
            msg = f"{contract}, but it returned {type(made).__name__} {made!r}"
            raise ProcessException(msg, flowfile_uuid=flowfile.uuid, processor=name)
        results = tuple(
            attrs.evolve(r, relationship=r.relationship.name)
            if isinstance(r, TransformResult) and isinstance(r.relationship, Relationship)
            else r
            for r in made
        )
        for result in results:
            problem = (
                decision_problem(result, names)
                if isinstance(result, TransformResult)
                else f"one of the results is {type(result).__name__} {result!r}"
            )
            if problem is not None:
                msg = f"{contract}; {problem}"
                raise ProcessException(msg, flowfile_uuid=flowfile.uuid, processor=name)
        return results

    # --- the batch form -----------------------------------------------------------------------

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> Sequence[BatchRoute] | None:
        """Call :meth:`transform` once for each FlowFile of a batch; results become columns.

        The engine's boundary for transforms written per FlowFile: each FlowFile is made an
        object for :meth:`transform` (its content read on demand), and what it decides (a
        relationship, attributes set or removed, new contents, an error sent to ``failure``)
        becomes the batch's columns and contents, so the FlowFiles travel on as batches.

        Results a batch cannot hold (several results, none, an error without ``failure``), or
        more new content than :data:`TRANSFORM_BATCH_BYTES`, stop the batch there: it declines,
        and the FlowFiles go one by one, those already transformed with the results they got
        (``context.carried_outcome``), never calling :meth:`transform` again.
        """
        return self._transform_each(context, batch, frozenset(self.relationship_names()))

    def _transform_each(
        self, context: BatchContext, batch: FlowFileBatch, names: frozenset[str]
    ) -> Sequence[BatchRoute] | None:
        """:meth:`transform_batch` with *names* the relationships the FlowFiles may go to."""
        if ORIGINAL.name in names:
            return None  # before any user code runs: one by one calls transform instead
        flowfiles = batch.flowfiles()
        outcomes: list[_Outcome] = []
        held = 0
        failure = FAILURE.name in names
        failed = False
        decide = self._outcome
        for flowfile in flowfiles:
            outcome = decide(context, FlowFileView(flowfile, context), names)
            outcomes.append(outcome)
            if type(outcome) is TransformResult:
                contents = outcome.contents
                if contents is not None:
                    held += len(contents)
                    if held > TRANSFORM_BATCH_BYTES:
                        break
            elif failure and type(outcome) is _Failed:
                failed = True
            else:
                break  # several results or none, or an error without failure
        # Carried to the one-by-one path if the batch does not go whole, whatever the reason.
        context.carry_outcomes(flowfiles[: len(outcomes)], outcomes)
        if len(outcomes) < batch.count or held > TRANSFORM_BATCH_BYTES:
            return None
        if not failed:
            return decided_routes(context, batch, outcomes)  # type: ignore[arg-type]
        decided: list[TransformResult] = list(outcomes)  # type: ignore[arg-type]
        for row, outcome in enumerate(outcomes):
            if type(outcome) is _Failed:
                reason = damage_reason(outcome.error, flowfiles[row])
                marked = {CONTENT_FAILURE_REASON: reason} if reason else None
                decided[row] = TransformResult(FAILURE.name, attributes=marked)
        return decided_routes(context, batch, decided)

    # --- one by one ---------------------------------------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Apply :meth:`transform` to one queued FlowFile (or the result it already had)."""
        flowfile = session.get()
        if flowfile is None:
            return
        outcome = context.carried_outcome(flowfile)
        names = self.relationship_names()
        if outcome is None:
            outcome = self._outcome(context, FlowFileView(flowfile, session), names)
        if isinstance(outcome, _Failed):
            if FAILURE.name not in names:
                raise outcome.error
            reason = damage_reason(outcome.error, flowfile)
            if reason is not None:  # read outside this session (a batch): the session would
                flowfile = session.put_attribute(flowfile, CONTENT_FAILURE_REASON, reason)
            session.transfer(flowfile, FAILURE)
            return
        results = (outcome,) if isinstance(outcome, TransformResult) else outcome
        if not results:
            session.remove(flowfile)
            return
        if ORIGINAL.name in names:
            session.transfer(session.clone(flowfile), ORIGINAL)
        targets = [flowfile] + [session.clone(flowfile) for _ in results[1:]]
        for target, result in zip(targets, results, strict=True):
            updated = target
            if result.attributes:
                updated = session.put_all_attributes(updated, result.attributes)
            if result.remove_attributes:
                updated = session.remove_all_attributes(updated, result.remove_attributes)
            if result.contents is not None:
                updated = session.write(updated, result.contents)
            session.transfer(updated, result.relationship)
