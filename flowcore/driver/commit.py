"""The commit of one stage run (DESIGN §7): one write-ahead log transaction, then what follows it.

1. The transaction: segments dequeued and enqueued, source listing and processor state, the
   two-phase sinks' staged state and the tasks' effect files, the provenance event files to
   index, and the next provenance event id (so a replaced database is noticed and ids are never
   given twice). The tasks' files all exist by then.
2. Only once it is durable: sinks publish and carry out their effects (renames, log lines,
   source deletions, processors' after-commit actions within a time budget:
   :mod:`flowcore.driver.after_commit`), claimant counts settle and unreferenced content is
   released, and the provenance files go to the background indexer
   (:mod:`repositories.provenance_indexer`); the next transaction records them as indexed, then
   they are removed.

A crash anywhere loses nothing and repeats nothing: the queues are those of the last
transaction, and everything after it is redone at the next start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from flowcore.compiler.plan import StagePlan
from flowcore.driver.sinks import EFFECTS_STATE, Sinks, effects_state
from flowcore.engine.wire import TaskResult
from repositories.effects import release_targets
from repositories.provenance_indexer import ProvenanceIndexer
from repositories.records import SegmentSummary, Transaction
from repositories.repository_set import PROVENANCE_STATE, RepositorySet

__all__ = ["commit_stage_run"]


def commit_stage_run(
    repos: RepositorySet,
    sinks: Sinks,
    indexer: ProvenanceIndexer,
    *,
    plan: StagePlan,
    taken: Sequence[SegmentSummary],
    results: Sequence[TaskResult],
    source_states: Mapping[str, Mapping[str, str]],
    run: str | None,
    now: int,
    expire_archive: bool,
) -> None:
    """Make one stage run durable, then finish what may only follow that.

    Args:
        repos: the run's repositories.
        sinks: the flow's sinks (two-phase sinks stage here, effects are carried out here).
        indexer: the background provenance indexer.
        plan: the stage that ran.
        taken: the queue segments its tasks consumed.
        results: its tasks' results, in task order.
        source_states: the sources' listing states to commit.
        run: the stage run's name (its sinks' target reservations are released), or None.
        now: the commit's clock, epoch ms (content cleanup).
        expire_archive: whether to age off archived content now.

    Raises:
        RepositoryError: the repository was moved or deleted during the stage run (nothing is
            committed; the run stops).
    """
    repos.check_in_place()  # moved or deleted: commit nothing more, make nothing at its path
    wal, content, provenance = repos.flowfiles, repos.content, repos.provenance
    enqueued = [s for r in results for s in r.enqueued]
    states: dict[str, dict[str, str]] = {k: dict(v) for k, v in source_states.items()}
    for result in results:
        states.update({k: dict(v) for k, v in result.states.items()})
    event_files = [name for r in results for name in r.provenance_files]
    sink_states = sinks.prepare(plan, results)
    states.update(sink_states)
    effects = effects_state(results)
    if effects is not None:
        states[EFFECTS_STATE] = effects
    states[PROVENANCE_STATE] = {"next_event_id": str(provenance.next_event_id)}
    marked = indexer.take_indexed()
    wal.commit(
        Transaction(
            dequeued=[s.segment_id for s in taken],
            enqueued=enqueued,
            state=states,
            provenance_files=event_files,
        ),
        indexed_provenance=marked,
    )
    # Durable from here on: publish sink output, settle content, sources, provenance.
    sinks.publish(sink_states)
    if effects is not None:
        sinks.carry_out([r.effects_file for r in results if r.effects_file])
    sinks.settle(plan=plan)  # what this stage's uncommitted attempts left outside (PREPAREd)
    # Attempts a runner retried or superseded (a Spark task that failed and ran again) left
    # effect files no commit names: their temporaries go now, not at the next start.
    sinks.sweep_attempts()
    if run is not None:
        release_targets(repos.paths.effects, run)
    provenance.remove_indexed_files(marked)
    for summary in enqueued:
        for claim, count in summary.claim_counts:
            content.increment_claimant_count(claim, count)
    for summary in taken:
        for claim, count in summary.claim_counts:
            content.decrement_claimant_count(claim, count)
    content.release_unclaimed(c for r in results for c in r.written_claims)
    content.cleanup(now, expire_archive=expire_archive)
    if event_files:
        indexer.submit(event_files)
    repos.add_bulletins([b for r in results for b in r.bulletins])
