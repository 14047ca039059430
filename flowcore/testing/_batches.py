"""The test harness's batch mode: a processor's batch forms run as an engine task runs them.

``TestRunner(processor, batches=True)`` triggers a processor the way a task of the engine does
when FlowFiles arrive as :class:`~flowcore.flowfile_batch.FlowFileBatch` values
(``flowcore/engine/_batches.py`` and ``_bins.py``). Each trigger takes every ready FlowFile:

* a per-FlowFile processor gets them through ``transform_batch``; its routes become transfers,
  with the provenance the engine records for them (ATTRIBUTES_MODIFIED where attributes changed,
  CONTENT_MODIFIED where the batch form wrote new contents, ROUTE for a reported route),
  unfolded into per-FlowFile events, and claimant counts move to new contents as a commit
  moves them;
* a binning processor gets them through ``bin_batches``; each ready bin is merged by
  ``merge_batches`` and its originals move on whole; FlowFiles of open bins go back to the queue;
* a two-phase sink gets them through ``write_batches``, as much at a time as one trigger of
  its ``on_trigger`` takes, each part committed and published at once; a batch form's staged
  files, deferred lines and SEND reports (its ``BatchContext``) are carried out when its batch
  goes whole and deleted when it declines;
* sessions take batches, so a processor that makes its children as one (``fork_batch``, as
  SplitText does) transfers them whole;
* what goes to an auto-terminated relationship (``TestRunner.auto_terminate``) is dropped
  whole, with a DROP for each FlowFile as one run, and counted, as the engine drops it;
* whatever a batch form declines (returns None, or raises) is triggered one FlowFile at a time,
  as the engine does, and :class:`BatchUse` says why.

The FlowFiles reach the batch forms as batches laid out by :mod:`flowcore.testing._as_batches`.
A batch form whose routes do not hold each FlowFile exactly once, name an undeclared
relationship, or change more than attributes and contents written through the batch form's
context, fails the engine's own check (:mod:`flowcore.engine._routes`): the engine reports it
as a bulletin and runs those FlowFiles one by one, the harness raises it as an
``AssertionError``, as it does the processor's other errors. :mod:`flowcore.testing._agreement`
compares a batch-form run with the one-by-one run of the same input
(``TestRunner.assert_batch_form_agrees``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs
import numpy as np

from flowcore.binning import Bin, BinLimits
from flowcore.engine._batches import (
    attributes_changed,
    batch_run,
    content_changed,
    route_runs,
    send_run,
)
from flowcore.engine._routes import checked_routes
from flowcore.errors import BatchResultError
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor import Processor, ProcessorKind
from flowcore.processor_kinds import HARNESS_WRITE
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType
from flowcore.relationship import SUCCESS
from flowcore.session._effects import emit
from flowcore.session._runs import auto_terminated_details
from flowcore.session.batch_context import BatchContext, BatchEffects, BatchRoute, SentRows
from flowcore.testing._as_batches import batches_of
from repositories.effects import publish

if TYPE_CHECKING:
    from flowcore.process_context import ProcessContext
    from flowcore.session.host import ComponentInfo, StateMap
    from flowcore.session.process_session import ProcessSession
    from repositories.memory import MemoryContentRepository, MemoryProvenanceRepository

__all__ = [
    "INPUT_QUEUE",
    "BatchHost",
    "BatchUse",
    "batches_of",
    "drain",
    "trigger_batches",
    "unfolded",
]

#: The harness's one input queue, as provenance names it.
INPUT_QUEUE = "input"


@attrs.define
class BatchUse:
    """How a runner's batch-mode triggers used the processor's batch forms (since it was made).

    Attributes:
        whole: FlowFiles a batch form took whole (``transform_batch`` routes, originals of bins
            merged by ``merge_batches``).
        forked: FlowFiles made as one batch in a session (``fork_batch``) and transferred whole
            (or dropped whole on an auto-terminated relationship).
        declined: why each batch or bin a batch form declined went one FlowFile at a time.
    """

    whole: int = 0
    forked: int = 0
    declined: list[str] = attrs.field(factory=list)

    @property
    def used(self) -> bool:
        """Whether any FlowFile went through a batch form."""
        return bool(self.whole or self.forked)


class BatchHost(Protocol):
    """What batch mode needs from the harness (``flowcore.testing.TestRunner``)."""

    processor: Processor
    component: ComponentInfo
    content: MemoryContentRepository
    provenance: MemoryProvenanceRepository
    batch_use: BatchUse

    @property
    def context(self) -> ProcessContext:
        """The process context handed to the processor."""
        ...

    def now(self) -> int:
        """The harness clock."""
        ...

    def create_session(self) -> ProcessSession:
        """A new session over the harness."""
        ...

    def ready_count(self) -> int:
        """How many queued FlowFiles are ready (not penalized)."""
        ...

    def take_ready(self) -> list[FlowFile]:
        """Take every ready FlowFile off the queue, in queue order."""
        ...

    def requeue(self, flowfiles: Sequence[FlowFile]) -> None:
        """Put FlowFiles back at the front of the queue, in the order given."""
        ...

    def take_queue_indices(self, count: int) -> int:
        """*count* consecutive queue positions; the first."""
        ...

    def record_transfers(self, outputs: Sequence[tuple[str, FlowFile]], *, claimants: bool) -> None:
        """Record FlowFiles as transferred, in order (counting their claims when new)."""
        ...

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped."""
        ...

    def record_drops(self, relationship: str, count: int, size: int) -> None:
        """Count FlowFiles as dropped on auto-terminated *relationship*."""
        ...

    def trigger_per_flowfile(self) -> None:
        """One ordinary trigger (``on_trigger_sessions``)."""
        ...

    def get_state(self) -> StateMap:
        """The processor's committed state."""
        ...

    def set_state(self, values: Mapping[str, str]) -> None:
        """Replace the processor's state."""
        ...

    def remove_unclaimed(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Remove those of *resource_claims* nothing claims any more (as a commit does)."""
        ...


# --- events -----------------------------------------------------------------------------------


def unfolded(events: Sequence[ProvenanceEvent | ProvenanceEventRun]) -> list[ProvenanceEvent]:
    """*events* with each run unfolded into its FlowFiles' events, in order.

    The in-memory provenance repository holds single events.
    """
    return [
        single
        for event in events
        for single in (event.events() if isinstance(event, ProvenanceEventRun) else (event,))
    ]


def _dropped(
    host: BatchHost, relationship: str, before: FlowFileBatch, after: FlowFileBatch, now: int
) -> list[ProvenanceEvent]:
    """Drop *after* (taken as *before*) on auto-terminated *relationship*, as the engine does.

    They are counted; their DROPs (one run, unfolded) are returned.
    """
    host.record_drops(relationship, after.count, after.bytes)
    if not after.count:
        return []
    run = batch_run(
        host,  # type: ignore[arg-type]  # batch_run reads only its component
        ProvenanceEventType.DROP,
        before,
        after,
        now,
        details=auto_terminated_details(relationship),
        source_queue_identifier=INPUT_QUEUE,
    )
    return run.events()


# --- triggers ---------------------------------------------------------------------------------


def trigger_batches(host: BatchHost) -> None:
    """One batch-mode trigger: every ready FlowFile through the processor's batch form.

    A two-phase sink writes them with ``write_batches``, as much as one trigger of its
    ``on_trigger`` takes, committed and published at once. Sources are triggered as usual (their
    batch forms read work items in engine tasks; test those through a flow), their sessions
    taking batches.
    """
    kind = host.processor.kind
    if kind is ProcessorKind.BINNING:
        _bin(host)
    elif kind is ProcessorKind.PER_FLOWFILE:
        _transform(host)
    elif kind is ProcessorKind.SINK:
        _write(host)
    else:
        host.trigger_per_flowfile()


def drain(host: BatchHost, *, once_more: bool) -> None:
    """Trigger one FlowFile at a time while the ready queue shrinks, as an engine task does.

    *once_more* adds the trigger with the input exhausted that a binning processor gets (NiFi's
    ``@TriggerWhenEmpty``): it is when bins that met their minimum are merged.
    """
    while before := host.ready_count():
        host.trigger_per_flowfile()
        if host.ready_count() >= before:
            break
    if once_more:
        host.trigger_per_flowfile()


def _declined(host: BatchHost, why: str, count: int) -> None:
    host.batch_use.declined.append(f"{why} for {count} FlowFile{'s' if count != 1 else ''}")


def _transform(host: BatchHost) -> None:
    """``transform_batch`` over the ready FlowFiles; what it declines goes one by one.

    Once a batch declines, the batches after it go one by one too, in order: a batch form that
    sets state must not run ahead of FlowFiles still waiting (the engine holds it back too).
    """
    flowfiles = host.take_ready()
    if not flowfiles:
        host.trigger_per_flowfile()
        return
    processor = host.processor
    declined: list[FlowFile] = []
    context = BatchContext(host.context, host, host.set_state)  # type: ignore[arg-type]
    for batch, held in batches_of(flowfiles, host.content):
        if declined:  # FlowFiles wait ahead one by one: later ones follow them, as in a task
            _declined(host, "an earlier batch went one by one", batch.count)
            declined.extend(held)
            continue
        try:
            result = processor.transform_batch(context, batch)
        except Exception as error:  # a batch form declines by raising, too
            context.discard()
            _declined(host, f"transform_batch raised {error!r}", batch.count)
            declined.extend(held)
            continue
        if result is None:
            context.discard()
            _declined(host, "transform_batch returned None", batch.count)
            declined.extend(held)
            continue
        try:
            routes = checked_routes(processor, batch, result, context)
        except BatchResultError as error:  # the processor's error, as the harness raises one
            raise AssertionError(str(error)) from error
        _carry_out(host, context.take())
        _send(host, batch, routes)
        host.batch_use.whole += batch.count
    if declined:
        host.requeue(declined)
        drain(host, once_more=False)


def _carry_out(host: BatchHost, effects: BatchEffects) -> None:
    """What a batch form staged and reported, as the harness commits a session's: at once."""
    events = [e for sent in effects.sends for e in _sent_events(host, sent)]
    host.provenance.register(events)
    for publication in effects.publications:
        publish(publication)
    emit(effects.logs)


def _sent_events(host: BatchHost, sent: SentRows) -> list[ProvenanceEvent]:
    return send_run(host, sent, host.now(), INPUT_QUEUE).events()  # type: ignore[arg-type]


def _write(host: BatchHost) -> None:
    """A two-phase sink's ``write_batches``, as much at a time as its ``on_trigger`` takes.

    Each part is committed and published at once, as ``on_trigger`` does; a part the batch
    form declines is written by one ordinary trigger.
    """
    flowfiles = host.take_ready()
    if not flowfiles:
        host.trigger_per_flowfile()
        return
    host.requeue(flowfiles)
    while host.ready_count():
        taken = host.take_ready()
        host.requeue(taken[HARNESS_WRITE:])
        _write_part(host, taken[:HARNESS_WRITE])


def _write_part(host: BatchHost, flowfiles: list[FlowFile]) -> None:
    processor = host.processor
    held = batches_of(flowfiles, host.content)
    batches = [b for b, _ in held]
    context = BatchContext(host.context, host)  # type: ignore[arg-type]
    message = None
    try:
        message = processor.write_batches(context, batches)  # type: ignore[attr-defined]
        why = "write_batches returned None"
    except Exception as error:  # a batch form declines by raising, too
        why = f"write_batches raised {error!r}"
    if message is None:
        context.discard()
        _declined(host, why, len(flowfiles))
        host.requeue([f for _, run in held for f in run])
        host.trigger_per_flowfile()
        return
    _carry_out(host, context.take())
    now = host.now()
    outputs = []
    drops: list[ProvenanceEvent] = []
    for batch in batches:
        if host.is_auto_terminated(SUCCESS.name):
            drops.extend(_dropped(host, SUCCESS.name, batch, batch, now))
            continue
        queued = batch.queued(now, host.take_queue_indices(batch.count))
        outputs.extend((SUCCESS.name, f) for f in queued.flowfiles())
    host.provenance.register(drops)
    host.record_transfers(outputs, claimants=False)
    host.batch_use.whole += len(flowfiles)
    state = processor.commit_at_once(host.context, message, host.get_state().values)  # type: ignore[attr-defined]
    host.set_state(state)


def _send(
    host: BatchHost,
    batch: FlowFileBatch,
    routes: Sequence[tuple[BatchRoute, np.ndarray, FlowFileBatch]],
) -> None:
    """Record checked routes as the engine moves them: input order, one event run each.

    A route to an auto-terminated relationship is dropped: a DROP run after its events.
    """
    now = host.now()
    first = host.take_queue_indices(batch.count)
    events: list[ProvenanceEvent] = []
    placed: list[tuple[int, str, FlowFile]] = []
    for route, rows, before in routes:
        # route_runs reads only the host's component of the member it is given
        for run in route_runs(host, route, before, now, INPUT_QUEUE):  # type: ignore[arg-type]
            events.extend(run.events())
        _move_claimants(host, before, route.batch)
        if host.is_auto_terminated(route.relationship):
            events.extend(_dropped(host, route.relationship, before, route.batch, now))
            continue
        queued = attrs.evolve(route.batch, queue_date=now, queue_date_indices=first + rows)
        placed.extend(
            zip(rows.tolist(), [route.relationship] * len(rows), queued.flowfiles(), strict=True)
        )
    host.provenance.register(events)
    placed.sort(key=lambda p: p[0])  # queue positions follow the input order, across routes
    host.record_transfers([(r, f) for _, r, f in placed], claimants=False)


def _move_claimants(host: BatchHost, before: FlowFileBatch, after: FlowFileBatch) -> None:
    """Claimant counts for FlowFiles given new contents: the new claim's up, the old one's down.

    As a session's commit settles them; the old claim goes once nothing claims it.
    """
    changed = content_changed(before, after)
    if changed is None:
        return
    if changed is not True:
        before, after = before.where(changed), after.where(changed)
    content = host.content
    new, old = after.claim_counts(), before.claim_counts()
    for resource_claim, count in new.items():
        content.increment_claimant_count(resource_claim, count)
    for resource_claim, count in old.items():
        content.decrement_claimant_count(resource_claim, count)
    host.remove_unclaimed(old)


def _attribute_events(
    host: BatchHost, before: FlowFileBatch, after: FlowFileBatch, now: int
) -> list[ProvenanceEvent]:
    """ATTRIBUTES_MODIFIED for each FlowFile whose attributes changed, as the engine records."""
    changed = attributes_changed(before, after) if before.count else None
    if changed is None:
        return []
    if changed is not True:
        before, after = before.where(changed), after.where(changed)
    run = batch_run(
        host,  # type: ignore[arg-type]  # batch_run reads only its component
        ProvenanceEventType.ATTRIBUTES_MODIFIED,
        before,
        after,
        now,
        source_queue_identifier=INPUT_QUEUE,
    )
    return run.events()


def _bin(host: BatchHost) -> None:
    """``bin_batches`` over the ready FlowFiles, ready bins merged by ``merge_batches``."""
    flowfiles = host.take_ready()
    if not flowfiles:
        host.trigger_per_flowfile()
        return
    processor = host.processor
    held = batches_of(flowfiles, host.content)
    laid = [f for _, run in held for f in run]
    binning = None
    try:
        binning = processor.bin_batches(  # type: ignore[attr-defined]
            host.context, [b for b, _ in held], end_of_input=False
        )
        why = "bin_batches returned None"
    except Exception as error:  # a batch form declines by raising, too
        why = f"bin_batches raised {error!r}"
    if binning is None:
        _declined(host, why, len(flowfiles))
        host.requeue(laid)
        drain(host, once_more=True)
        return
    for bin_ in binning.ready:
        _merge(host, held, bin_)
    back = [held[i][1][row] for bin_ in binning.open for i, rows in bin_.pieces for row in rows]
    back.extend(held[i][1][row] for i, rows in binning.untaken for row in rows)
    back.sort(key=lambda f: (f.queue_date, f.queue_date_index))
    host.requeue(back)


def _merge(
    host: BatchHost, held: Sequence[tuple[FlowFileBatch, list[FlowFile]]], bin_: Bin
) -> None:
    """Merge a ready bin of batch cuts; if ``merge_batches`` declines, one FlowFile at a time."""
    processor, context = host.processor, host.context
    cuts = [held[i][0].take(rows) for i, rows in bin_.pieces]
    session = host.create_session()
    outcome = None
    try:
        outcome = processor.merge_batches(context, session, cuts, bin_)  # type: ignore[attr-defined]
        why = "merge_batches returned None"
        if outcome is not None:
            session.commit()
    except Exception as error:  # a batch form declines by raising, too
        session.rollback()
        outcome, why = None, f"merge_batches raised {error!r}"
    if outcome is None:
        members = [held[i][1][row] for i, rows in bin_.pieces for row in rows]
        _declined(host, why, len(members))
        host.requeue(members)
        session = host.create_session()
        merged = Bin(bin_.group, BinLimits(), bin_.created_ms)
        for flowfile in session.get(len(members)):
            merged.add(flowfile)
        merged.reason = bin_.reason
        try:
            processor.merge_bin(context, session, merged)  # type: ignore[attr-defined]
            session.commit()
        except BaseException:
            session.rollback(penalize=True)
            raise
        return
    relationship, changes = outcome
    now = host.now()
    events: list[ProvenanceEvent] = []
    outputs: list[tuple[str, FlowFile]] = []
    for cut in cuts:
        if host.is_auto_terminated(relationship):  # dropped as they came, as the engine does
            events.extend(_dropped(host, relationship, cut, cut, now))
            host.batch_use.whole += cut.count
            continue
        changed = cut.with_attributes(changes)
        events.extend(_attribute_events(host, cut, changed, now))
        queued = changed.queued(now, host.take_queue_indices(changed.count))
        outputs.extend((relationship, f) for f in queued.flowfiles())
    host.provenance.register(events)
    host.record_transfers(outputs, claimants=False)
    host.batch_use.whole += len(outputs)
