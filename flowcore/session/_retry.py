"""Relationship retry at commit: NiFi's ``StandardProcessSession.checkpoint`` retry step.

A processor whose relationships are retried (NiFi 1.16+, ``retriedRelationships``) does not see
its FlowFiles leave on them at once. At commit, each FlowFile routed to a retried relationship
whose count (attribute ``retryCount.<component id>``) is below the processor's Number of Retry
Attempts goes back to the queue it came from, *as it was taken* plus that attribute counted up,
and FlowFiles linked to it in the session go with it: those created from it, its clones, the
parents of a JOIN it belongs to (two steps of links, as NiFi's ``FlowFileLinkage``). Linked
FlowFiles created in the session disappear; the others go back too. Their provenance events are
dropped (no ATTRIBUTES_MODIFIED for the counter), written content becomes transient, and the
rest of the session commits as usual. Then the FlowFile is penalized, or the processor yields,
for ``2**retries`` times the Penalty (Yield) Duration, at most the Max Backoff Period. After the
last try the FlowFile follows its relationship. The counting attribute is removed whenever a
FlowFile leaves for a connection. FlowFiles created without a parent (a source's) are never
retried: there is nothing to go back to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from flowcore.errors import HandedOverError
from flowcore.flowfile import Attributes
from flowcore.session.host import SELF, RetryPolicy

if TYPE_CHECKING:
    from flowcore.session._batches import BatchOutputs
    from flowcore.session._ledger import Ledger
    from flowcore.session._support import Record
    from flowcore.session.host import SessionHost

__all__ = ["apply_retries"]


def _retryable(record: Record, flowfile_id: int, policy: RetryPolicy, ledger: Ledger) -> bool:
    return (
        not record.removed
        and record.relationship in policy.relationships
        and flowfile_id not in ledger.roots
        and policy.retries(record.current) < policy.count
    )


def apply_retries(host: SessionHost, ledger: Ledger, outputs: BatchOutputs, now: int) -> int:
    """Send back the session's FlowFiles its processor retries; how long it must yield (ms).

    Raises:
        HandedOverError: batches made from a retried FlowFile already went on (a streaming
            host): the task must run again holding them until the commit.
    """
    policy = host.retry_policy
    if policy is None:
        return 0
    records = ledger.records
    chosen = {i for i, r in records.items() if _retryable(r, i, policy, ledger)}
    taken_back: set[int] = set(chosen)
    for flowfile_id in chosen:
        taken_back |= ledger.linked(flowfile_id)
    yield_ms = 0
    for flowfile_id in sorted(taken_back):
        record = records.get(flowfile_id)
        if record is None:
            continue
        uuid = record.current.uuid
        if uuid in outputs.forked:
            msg = f"{host.component.type} retries a FlowFile whose children already went on"
            raise HandedOverError(msg)
        _drop_batches_of(outputs, uuid)
        if record.original is None:  # made here: it never was
            del records[flowfile_id]
            ledger.forget_created(uuid)
            continue
        wait = _take_back(record, policy, now)
        ledger.forget_events(uuid)
        if not policy.penalize:
            yield_ms = max(yield_ms, wait)
    _strip_counter(host, ledger, outputs, policy)
    return yield_ms


def _take_back(record: Record, policy: RetryPolicy, now: int) -> int:
    """Make *record* its original, counted and penalized, back to its queue; the wait (ms)."""
    assert record.original is not None
    retries = policy.retries(record.current)
    wait = policy.backoff_ms(retries)
    flowfile = record.original.with_attributes({policy.attribute: str(retries + 1)})
    if policy.penalize:
        flowfile = flowfile.replace(penalty_expiration=now + wait)
    record.current = flowfile
    record.relationship = SELF
    record.removed = False
    record.retried = True
    return wait


def _drop_batches_of(outputs: BatchOutputs, parent_uuid: str) -> None:
    """Forget the batches ``fork_batch`` made from *parent_uuid* (they go with their parent)."""
    outputs.made = [m for m in outputs.made if m.parent != parent_uuid]
    outputs.children.pop(parent_uuid, None)


def _strip_counter(
    host: SessionHost, ledger: Ledger, outputs: BatchOutputs, policy: RetryPolicy
) -> None:
    """Remove the counting attribute from what leaves for a connection (NiFi's rule)."""
    name = policy.attribute
    for record in ledger.records.values():
        relationship = record.relationship
        if (
            record.removed
            or relationship in (None, SELF)
            or name not in record.current.attributes
            or host.destinations(relationship) == 0  # type: ignore[arg-type]
        ):
            continue
        record.become(record.current.without_attributes(name))
    for made in outputs.made:
        if not made.dropped and name in made.batch.attributes:  # dropped: kept, as one by one
            kept = {k: v for k, v in made.batch.attributes.items() if k != name}
            made.batch = attrs.evolve(made.batch, attributes=Attributes(kept))
