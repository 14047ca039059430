"""Routing at commit in the ProcessSession: where each record goes, and what refuses a commit.

At commit (and when the session spills finished FlowFiles early) each record goes one of four
ways, as in NiFi's ``StandardProcessSession.checkpoint``: removed; back to the queue it came from
(``SELF``); dropped, when its relationship has no connection and is auto-terminated (a DROP
"Auto-Terminated by <name> Relationship", counted per relationship); or to every connection of
its relationship, the FlowFile itself to the last and a clone (with a CLONE event) to each of
the others. Before any of that, :func:`check_commit` refuses a commit that would lose a FlowFile
or leave a stream open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.errors import FlowFileAccessError, FlowFileHandlingError
from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._support import PendingEvent
from flowcore.session.host import SELF, SessionOutput

if TYPE_CHECKING:
    from collections.abc import Iterable

    from flowcore.flowfile import FlowFile
    from flowcore.session._batches import BatchOutputs
    from flowcore.session._ledger import Ledger
    from flowcore.session._support import Record
    from flowcore.session._uuids import UuidSource
    from flowcore.session.host import SessionHost

__all__ = ["Router", "check_commit"]


def check_commit(host: SessionHost, ledger: Ledger, outputs: BatchOutputs) -> None:
    """Refuse a commit that would leave a stream open or a FlowFile without a destination.

    Args:
        host: answers which relationships have connections or are auto-terminated.
        ledger: what the session holds.
        outputs: the batches the session made (``fork_batch``).

    Raises:
        FlowFileAccessError: a read or write stream is still open.
        FlowFileHandlingError: a FlowFile (or a batch made by ``fork_batch``) was neither
            transferred nor removed, or went to a relationship without destinations; it carries
            the FlowFile's uuid.
    """
    if ledger.readers or ledger.writers:
        msg = "Cannot commit session while a FlowFile stream is open; close it first"
        raise FlowFileAccessError(msg)
    if untransferred := outputs.untransferred():
        msg = (
            f"{untransferred} FlowFiles of a batch made by fork_batch were "
            "not transferred to any Relationship via ProcessSession.transfer_batch()"
        )
        raise FlowFileHandlingError(msg)
    for record in ledger.records.values():
        if record.removed:
            continue
        if record.relationship is None:
            created = "was created" if record.created else "was not created"
            msg = (
                f"{record.current} transfer relationship not specified. This FlowFile "
                f"{created} in this session and was not transferred to any Relationship "
                "via ProcessSession.transfer()"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)
        name = record.relationship
        if name != SELF and host.destinations(name) == 0 and not host.is_auto_terminated(name):
            msg = (
                f"Relationship '{name}' does not have any destinations for "
                f"{host.component.type}; connect it or auto-terminate it"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)


class Router:
    """Routes a session's records to their connections, and counts what auto-termination dropped.

    The counts cover the whole unit of work (the records routed early by a spill included) until
    :meth:`clear`.

    Args:
        host: answers how many connections a relationship has and whether it is auto-terminated,
            and numbers fan-out clones.
        uuids: the session's uuid source (a fan-out clone's uuid).
    """

    def __init__(self, host: SessionHost, uuids: UuidSource) -> None:
        self._host = host
        self._uuids = uuids
        self._dropped: dict[str, tuple[int, int]] = {}  # auto-terminated: FlowFiles, bytes

    def clear(self) -> None:
        """A new unit of work: nothing dropped yet."""
        self._dropped.clear()

    def auto_terminated_counts(self, outputs: BatchOutputs) -> dict[str, tuple[int, int]]:
        """FlowFiles and bytes auto-terminated per relationship: one by one, and in batches."""
        counts = dict(self._dropped)
        for name, (count, size) in outputs.drop_counts().items():
            before = counts.get(name, (0, 0))
            counts[name] = (before[0] + count, before[1] + size)
        return counts

    def route(
        self, records: Iterable[Record], now: int
    ) -> tuple[list[SessionOutput], list[FlowFile], list[PendingEvent], list[PendingEvent]]:
        """Where each record goes: outputs (with fan-out clones), removals, and their events."""
        outputs: list[SessionOutput] = []
        removed: list[FlowFile] = []
        auto_drops: list[PendingEvent] = []
        fan_out_clones: list[PendingEvent] = []
        for record in records:
            current = record.current
            if record.removed:
                removed.append(current)
                continue
            name = record.relationship
            assert name is not None
            if name == SELF:
                outputs.append(SessionOutput(current, SELF, 0, record.queue_id))
                continue
            if self._host.destinations(name) == 0 and self._host.is_auto_terminated(name):
                removed.append(current)
                count, size = self._dropped.get(name, (0, 0))
                self._dropped[name] = (count + 1, size + current.size)
                auto_drops.append(
                    PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        now,
                        fields={"details": f"Auto-Terminated by {name} Relationship"},
                    )
                )
                continue
            count = self._host.destinations(name)
            for index in range(count - 1):
                clone_id = self._host.next_flowfile_id()
                clone_uuid = self._uuids.next("fan-out", current.uuid)
                clone = current.replace(
                    id=clone_id,
                    uuid=clone_uuid,
                    attributes=current.attributes.updated({"uuid": clone_uuid}),
                )
                outputs.append(SessionOutput(clone, name, index))
                fan_out_clones.append(PendingEvent.clone(current, clone_uuid, now))
            outputs.append(SessionOutput(current, name, count - 1))
        return outputs, removed, auto_drops, fan_out_clones
