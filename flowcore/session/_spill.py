"""Spilling in the ProcessSession: bounded memory for processors that create millions of FlowFiles.

A splitter's session would otherwise hold every FlowFile it created until commit. Finished ones
(created, transferred, needed by no pending event) are handed to the host early, with their
provenance events; the host keeps them uncommitted until the session commits or rolls back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._support import PendingEvent, Record
from flowcore.session.host import SELF, SessionSpill, SpillingHost

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from flowcore.flowfile import FlowFile, ResourceClaim
    from flowcore.session._ledger import Ledger
    from flowcore.session._provenance import EventBuilder
    from flowcore.session.host import SessionHost, SessionOutput

    #: the session's routing: outputs, removed FlowFiles, auto-termination DROPs, fan-out CLONEs
    Route = Callable[
        [Iterable[Record], int],
        tuple[list[SessionOutput], list[FlowFile], list[PendingEvent], list[PendingEvent]],
    ]

__all__ = ["Spiller"]


class Spiller:
    """Hands a session's finished FlowFiles to its host early, and remembers that it did.

    Args:
        host: the session's host; only a :class:`~flowcore.session.host.SpillingHost` takes
            FlowFiles early, others never spill.
        ledger: what the session holds.
        events: the session's event builder (spilled FlowFiles go with their events).
        route: the session's routing of records (outputs, removals and their events).
    """

    def __init__(
        self, host: SessionHost, ledger: Ledger, events: EventBuilder, route: Route
    ) -> None:
        self._host = host if isinstance(host, SpillingHost) else None
        self._ledger = ledger
        self._events = events
        self._route = route
        #: whether FlowFiles went to the host early (a rollback must discard them there)
        self.spilled = False
        #: resource claims that spilled outputs use (still referenced at commit)
        self.claims: set[ResourceClaim] = set()
        self._finished = 0  # FlowFiles created and transferred since the last spill

    def clear(self) -> None:
        """A new unit of work: nothing spilled."""
        self.spilled = False
        self.claims = set()
        self._finished = 0

    def discard(self) -> None:
        """A rollback: the host forgets the FlowFiles it took early."""
        if self.spilled and self._host is not None:
            self._host.discard_spilled()

    def finished(self, count: int) -> None:
        """*count* FlowFiles made here were transferred; spill once the host's threshold is met."""
        self._finished += count
        host = self._host
        if host is not None and host.spill_threshold and self._finished >= host.spill_threshold:
            self.spill()

    def spill(self) -> None:
        """Hand finished FlowFiles to the host now, keeping the session's memory bounded.

        A FlowFile is finished when it was created in this session and transferred (not back to
        itself) and no pending event still needs it (it is not a parent of a fork or join).
        The host stores the batch uncommitted; it becomes part of the commit, or is discarded on
        rollback. ``transfer`` calls this once the host's ``spill_threshold`` FlowFiles are
        finished; hosts that are not a :class:`~flowcore.session.host.SpillingHost` never spill.
        """
        host, ledger = self._host, self._ledger
        if host is None or host.retry_policy is not None:
            return  # a retry at commit may take back what was made: nothing leaves before
        parents = ledger.join_parents()
        busy = set(ledger.readers) | set(ledger.writers)
        finished = [
            r
            for r in ledger.records.values()
            if r.created
            and not r.removed
            and r.relationship not in (None, SELF)
            and r.current.uuid not in parents
            and r.current.id not in busy
        ]
        if not finished:
            return
        now = host.now()
        by_uuid = {r.current.uuid: r for r in ledger.records.values()}
        uuids = {r.current.uuid for r in finished}
        outputs, removed, auto_drops, fan_out = self._route(finished, now)
        pending: list[PendingEvent] = []
        for builder in ledger.forks.values():
            children = [c for c in builder.children if c in uuids]
            if children:
                pending.append(
                    PendingEvent(
                        ProvenanceEventType.FORK,
                        builder.flowfile_uuid,
                        builder.time,
                        parents=list(builder.parents),
                        children=children,
                    )
                )
                builder.children = [c for c in builder.children if c not in uuids]
        moved = [
            e
            for e in ledger.generated
            if e.flowfile_uuid in uuids or (e.children and set(e.children) <= uuids)
        ]
        ledger.generated = [e for e in ledger.generated if e not in moved]
        reported = [e for e in ledger.reported if e.flowfile_uuid in uuids]
        ledger.reported = [e for e in ledger.reported if e.flowfile_uuid not in uuids]
        pending.extend(moved)
        pending.extend(reported)
        pending.extend(fan_out)
        explained = {u for e in pending for u in (e.flowfile_uuid, *e.children)}
        for record in finished:
            if record.current.uuid not in explained:
                pending.append(PendingEvent(ProvenanceEventType.CREATE, record.current.uuid, now))
        pending.extend(auto_drops)
        events = [self._events.enrich(e, by_uuid, now) for e in pending]
        host.spill(SessionSpill(tuple(outputs), tuple(removed), tuple(events)))
        for record in finished:
            del ledger.records[record.current.id]
        self.claims.update(
            c
            for o in outputs
            if o.flowfile.content is not None
            for c in o.flowfile.content.resource_claims
        )
        self.spilled = True
        self._finished = 0
