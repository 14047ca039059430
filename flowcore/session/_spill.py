"""Spilling in the ProcessSession: bounded memory for processors that create millions of FlowFiles.

A splitter's session would otherwise hold every FlowFile it created until commit. Finished ones
(created, transferred, needed by no pending event) are handed to the host early, with their
provenance events; the host keeps them uncommitted until the session commits or rolls back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._support import PendingEvent, ReadStream, Record
from flowcore.session.host import SELF, SessionSpill

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from flowcore.flowfile import FlowFile, ResourceClaim
    from flowcore.provenance_events import ProvenanceEvent
    from flowcore.session.host import SessionHost, SessionOutput
    from repositories.protocols import ContentOutputStream

__all__ = ["Spilling"]


class Spilling:
    """Mixin of the session: hands finished FlowFiles over early.

    The session is :class:`~flowcore.session.process_session.ProcessSession`.
    """

    _host: SessionHost
    _records: dict[int, Record]
    _readers: dict[int, list[ReadStream]]
    _writers: dict[int, ContentOutputStream]
    _forks: dict[str, PendingEvent]
    _generated: list[PendingEvent]
    _reported: list[PendingEvent]
    _spilled: bool
    _spilled_claims: set[ResourceClaim]
    _finished: int

    if TYPE_CHECKING:  # provided by ProcessSession and ProvenanceBuilding

        def _now(self) -> int: ...

        def _route(
            self, records: Iterable[Record], now: int
        ) -> tuple[list[SessionOutput], list[FlowFile], list[PendingEvent], list[PendingEvent]]: ...

        def _enrich(
            self, pending: PendingEvent, by_uuid: Mapping[str, Record], now: int
        ) -> ProvenanceEvent: ...

    def _maybe_spill(self) -> None:
        threshold = getattr(self._host, "spill_threshold", None)
        if threshold and self._finished >= threshold:
            self.spill()

    def spill(self) -> None:
        """Hand finished FlowFiles to the host now, keeping the session's memory bounded.

        A FlowFile is finished when it was created in this session and transferred (not back to
        itself) and no pending event still needs it (it is not a parent of a fork or join).
        The host stores the batch uncommitted; it becomes part of the commit, or is discarded on
        rollback. Splitters call this through ``transfer`` automatically once the host's
        ``spill_threshold`` FlowFiles are finished; hosts without one never spill.
        """
        if not hasattr(self._host, "spill"):
            return
        parents = set(self._forks) | {
            p
            for e in self._generated
            if e.event_type is ProvenanceEventType.JOIN
            for p in e.parents
        }
        busy = set(self._readers) | set(self._writers)
        finished = [
            r
            for r in self._records.values()
            if r.created
            and not r.removed
            and r.relationship not in (None, SELF)
            and r.current.uuid not in parents
            and r.current.id not in busy
        ]
        if not finished:
            return
        now = self._now()
        by_uuid = {r.current.uuid: r for r in self._records.values()}
        uuids = {r.current.uuid for r in finished}
        outputs, removed, auto_drops, fan_out = self._route(finished, now)
        pending: list[PendingEvent] = []
        for builder in self._forks.values():
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
            for e in self._generated
            if e.flowfile_uuid in uuids or (e.children and set(e.children) <= uuids)
        ]
        self._generated = [e for e in self._generated if e not in moved]
        reported = [e for e in self._reported if e.flowfile_uuid in uuids]
        self._reported = [e for e in self._reported if e.flowfile_uuid not in uuids]
        pending.extend(moved)
        pending.extend(reported)
        pending.extend(fan_out)
        explained = {u for e in pending for u in (e.flowfile_uuid, *e.children)}
        for record in finished:
            if record.current.uuid not in explained:
                pending.append(PendingEvent(ProvenanceEventType.CREATE, record.current.uuid, now))
        pending.extend(auto_drops)
        events = [self._enrich(e, by_uuid, now) for e in pending]
        self._host.spill(SessionSpill(tuple(outputs), tuple(removed), tuple(events)))
        for record in finished:
            del self._records[record.current.id]
        self._spilled_claims.update(
            c
            for o in outputs
            if o.flowfile.content is not None
            for c in o.flowfile.content.resource_claims
        )
        self._spilled = True
        self._finished = 0
