"""The harness's plumbing: what a ``TestRunner``'s sessions and batch mode ask of it.

A :class:`~flowcore.session.process_session.ProcessSession` needs a host
(:class:`~flowcore.session.host.SessionHost`: ids, the input queue, routing facts, the commit),
and batch mode (:mod:`flowcore.testing._batches`) a little more (the ready queue, transfers
recorded as a commit records them). The runner keeps NiFi's ``TestRunner`` surface; these
members live here, off the class, and the runner forwards them (``TestRunner.__getattr__``), so
its sessions still run over the runner itself: a test's runner subclass that overrides one
(a relationship with two connections: ``destinations``) is still what every session and every
member here consults. The host keeps no state beyond spilled FlowFiles and staged temporaries;
the queue, transfers, drops, state and counters are the runner's, which its assertions read.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from flowcore.errors import ConfigurationError
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.processor.context import lowest_logged_level
from flowcore.provenance_events import ProvenanceEventRun
from flowcore.services import MapCache
from flowcore.session._effects import emit
from flowcore.session.host import (
    SELF,
    FlowFileFilter,
    QueuedFlowFile,
    SessionCommit,
    SessionOutput,
    SessionSpill,
    StateMap,
)
from flowcore.testing._batches import INPUT_QUEUE, unfolded
from flowcore.testing._mock_flowfile import MockFlowFile
from repositories.disposals import dispose
from repositories.effects import publish, temporary_name

__all__ = ["HarnessHost"]


class HarnessHost:
    """What a session and batch mode need from the harness, over one runner's queue and records.

    Members call each other through the runner (``self._runner.take_flowfile_ids``), so a
    runner subclass's override is honoured everywhere, as when these were the runner's methods.

    Args:
        runner: the ``TestRunner`` whose queue, transfers, state and clock it serves (typed
            ``Any``: the runner's module imports this one, and types must not make a cycle).
    """

    def __init__(self, runner: Any) -> None:
        self._runner = runner
        self._spills: list[SessionSpill] = []
        self._staged = itertools.count()
        self._attempt = f"harness-{os.urandom(8).hex()}"  # names this runner's temporaries

    # --- SessionHost --------------------------------------------------------------------------

    @property
    def accepts_batches(self) -> bool:
        """Whether batches made by ``fork_batch`` go whole (in batch mode only)."""
        return self._runner.batches

    def next_flowfile_id(self) -> int:
        """A new FlowFile id."""
        return self._runner.take_flowfile_ids(1)

    def take_flowfile_ids(self, count: int) -> int:
        """*count* consecutive new FlowFile ids; the first."""
        first = self._runner._next_id
        self._runner._next_id += count
        return first

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        """Take queued FlowFiles in order; penalized ones wait until their penalty expires."""
        taken = self._runner.input_queue.take(max_count, flowfile_filter)
        return [QueuedFlowFile(flowfile, INPUT_QUEUE) for flowfile in taken]

    def relationships(self) -> Collection[str]:
        """The processor's declared relationships."""
        return self._runner.processor.relationship_names()

    def destinations(self, relationship: str) -> int:
        """How many places *relationship* leads to: its transfer list, or none.

        A declared relationship has one destination in the harness unless it is
        auto-terminated (``TestRunner.auto_terminate``).
        """
        declared = relationship in self._runner.relationships()
        return 1 if declared and not self._runner.is_auto_terminated(relationship) else 0

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped.

        Auto-terminated by ``TestRunner.auto_terminate``, or by the processor's own default
        (``Relationship(..., auto_terminated=True)``), as in an unconnected flow.
        """
        return relationship in self._runner._terminated()

    def map_cache(self, name: str) -> MapCache:
        """The cache of a service given to ``TestRunner.add_service``.

        Raises:
            ConfigurationError: no service of that name was added.
        """
        cache = self._runner._caches.get(name)
        if cache is None:
            msg = (
                f"the processor names service {name!r}, which the runner does not have; "
                f"add it: runner.add_service(MapCacheService({name!r}))"
            )
            raise ConfigurationError(msg)
        return cache

    def spill(self, batch: SessionSpill) -> None:
        """Hold finished FlowFiles handed over before commit (only when spill_threshold is set)."""
        self._spills.append(batch)

    def discard_spilled(self) -> None:
        """Forget spilled FlowFiles: their session rolled back."""
        self._spills.clear()

    def apply_commit(self, commit: SessionCommit) -> None:
        """Record transfers, drops, events, state and counters; settle claimant counts."""
        spills, self._spills = self._spills, []
        for batch in spills:
            self._apply_outputs(batch.outputs)
            self._runner.provenance.register(batch.events)
        self._apply_outputs(commit.outputs)
        now = self._runner.now()
        for batch, relationship in commit.batches:  # children forked as one (batch mode)
            queued = batch.queued(now, self._runner.take_queue_indices(batch.count))
            self._runner.record_transfers(
                [(relationship, f) for f in queued.flowfiles()], claimants=True
            )
            self._runner.batch_use.forked += batch.count
        for relationship, (count, size) in commit.auto_terminated.items():
            self._runner.record_drops(relationship, count, size)
        # a session's runs are the DROPs of batches it forked and auto-terminated whole
        runs = [e for e in commit.events if isinstance(e, ProvenanceEventRun)]
        self._runner.batch_use.forked += sum(run.count for run in runs)
        content = self._runner.content
        candidates = set()
        for consumed in commit.consumed:
            claim = consumed.flowfile.content
            if claim is not None:
                for resource_claim in claim.resource_claims:
                    content.decrement_claimant_count(resource_claim)
                    candidates.add(resource_claim)
        candidates.update(c.resource_claim for c in commit.transient_claims)
        self._runner.remove_unclaimed(candidates)
        self._runner.provenance.register(unfolded(commit.events))
        if commit.state is not None:
            self._runner._state = StateMap(self._runner._state.version + 1, commit.state)
        for name, delta in commit.counters.items():
            self._runner._counters[name] = self._runner._counters.get(name, 0) + delta
        for disposal in commit.disposals:  # the harness commit is final at once
            dispose(disposal)
        for publication in commit.publications:  # the harness commit is final at once
            publish(publication)
        emit(commit.logs)
        if commit.actions:  # a processor's after-commit actions, at once too
            self._runner.processor.run_after_commit_actions(
                self._runner.context, [a.payload for a in commit.actions]
            )

    def stage_file(self, directory: Path) -> Path:
        """A hidden temporary in *directory* for a sink to write."""
        return Path(directory) / temporary_name(self._attempt, next(self._staged))

    def staged(self, target: str) -> bool:
        """Nothing stays staged in the harness: a commit publishes at once."""
        del target
        return False

    def lowest_logged_level(self, logger: str) -> int:
        """The harness emits deferred lines itself, in this process."""
        return lowest_logged_level(logging.getLogger(logger))

    def reserve(self, target: str) -> bool:
        """The harness runs one session at a time: nothing runs beside it."""
        del target
        return True

    def remove_unclaimed(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Remove those of *resource_claims* nothing claims, as a commit does.

        Not while ``TestRunner.assert_batch_form_agrees`` compares runs: it reads the contents the
        events name.
        """
        if self._runner._keep_contents:
            return
        for resource_claim in resource_claims:
            if self._runner.content.claimant_count(resource_claim) == 0:
                self._runner.content.remove(resource_claim)

    def ready_count(self) -> int:
        """How many queued FlowFiles are ready (not penalized)."""
        return len(self._runner.input_queue.ready())

    def take_ready(self) -> list[FlowFile]:
        """Take every ready FlowFile off the queue, in queue order."""
        return self._runner.input_queue.take_ready()

    def requeue(self, flowfiles: Sequence[FlowFile]) -> None:
        """Put FlowFiles back at the front of the queue, in the order given."""
        self._runner.input_queue.put_back(flowfiles)

    def take_queue_indices(self, count: int) -> int:
        """*count* consecutive queue positions; the first."""
        first = self._runner._next_queue_index
        self._runner._next_queue_index += count
        return first

    def record_drops(self, relationship: str, count: int, size: int) -> None:
        """Count *count* FlowFiles of *size* bytes in all as dropped on *relationship*."""
        before = self._runner._dropped.get(relationship, (0, 0))
        self._runner._dropped[relationship] = (before[0] + count, before[1] + size)

    def record_transfers(self, outputs: Sequence[tuple[str, FlowFile]], *, claimants: bool) -> None:
        """Record FlowFiles as transferred, in order; *claimants*: they hold new claim counts."""
        for relationship, flowfile in outputs:
            if claimants:
                self._runner._count_claims(flowfile)
            mock = MockFlowFile(flowfile, repository=self._runner.content)
            self._runner._transfers.setdefault(relationship, []).append(mock)
            self._runner._transfer_order.append((relationship, mock))

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        """Return rolled-back FlowFiles to the front of the queue, in order."""
        self._runner.input_queue.put_back([queued.flowfile for queued in flowfiles])

    def trigger_per_flowfile(self) -> None:
        """One ordinary trigger, whatever the mode (``on_trigger_sessions``)."""
        self._runner.processor.on_trigger_sessions(
            self._runner.context, self._runner.create_session
        )

    def _apply_outputs(self, outputs: Sequence[SessionOutput]) -> None:
        now = self._runner.now()
        for output in outputs:
            flowfile = output.flowfile.replace(
                queue_date=now, queue_date_index=self._runner.take_queue_indices(1)
            )
            if output.relationship == SELF:
                self._runner._count_claims(flowfile)
                self._runner.input_queue.put(flowfile)
                continue
            self._runner.record_transfers([(output.relationship, flowfile)], claimants=True)
