"""Provenance of FlowFile batches: the events a session records, one per FlowFile, as a run.

A batch's events are one :class:`~flowcore.provenance_events.ProvenanceEventRun`: FlowFile 0's
event whole, and columns for what differs from one FlowFile to the next (uuid, content range,
attribute values). The engine records its batch forms' events this way
(:mod:`flowcore.engine._batches`), and a session the DROPs of the batches it made and sent to an
auto-terminated relationship (:mod:`flowcore.session._batches`): both must give, event for
event, what a session records for each FlowFile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from flowcore.flowfile import Attributes
from flowcore.flowfile_batch.columns import Column, TextColumn
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType

if TYPE_CHECKING:
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.session.host import ComponentInfo

__all__ = ["auto_terminated_details", "event_of", "run_of"]


def auto_terminated_details(relationship: str) -> str:
    """NiFi's details of the DROP of a FlowFile sent to an auto-terminated *relationship*."""
    return f"Auto-Terminated by {relationship} Relationship"


def event_of(
    component: ComponentInfo, kind: ProvenanceEventType, flowfile: Any, now: int
) -> ProvenanceEvent:
    """FlowFile *flowfile*'s event as a session would build it (attributes left to the caller)."""
    return ProvenanceEvent.of(
        kind,
        flowfile,
        component=(component.id, component.type, component.name),
        time=now,
        event_duration=0,
    )


def _updated_column(old: Column | None, new: Column) -> Column | None:
    """*new*'s value where it differs from *old*'s, None (not updated) elsewhere.

    None when no FlowFile's value changed. Only the changed values are rendered: a column
    passed on unchanged costs nothing, however many distinct values it holds.
    """
    if old is None:
        return new
    if old is new:
        return None
    changed = ~new.equals(old)
    if not changed.any():
        return None
    if changed.all():
        return new
    codes, values = new.encoded()
    used = np.unique(codes[changed])
    remap = np.full(len(values), len(used), dtype=codes.dtype)
    remap[used] = np.arange(len(used), dtype=codes.dtype)
    kept = [values[i] for i in used.tolist()]
    return TextColumn(np.where(changed, remap[codes], len(used)), (*kept, None))


def run_of(
    component: ComponentInfo,
    kind: ProvenanceEventType,
    before: FlowFileBatch | None,
    after: FlowFileBatch,
    now: int,
    **fields: Any,
) -> ProvenanceEventRun:
    """The events a session would record for each FlowFile of *after*, as one run.

    *before* is the FlowFiles as the session took them (None: created in it): an event's
    previous attributes and content are *before*'s, its updated attributes what differs.
    """
    flowfile = after.flowfile(0)
    original = before.flowfile(0) if before is not None else None
    previous = original.attributes if original is not None else Attributes()
    get = previous.get
    updated = {k: v for k, v in flowfile.attributes.items() if get(k) != v}
    event = attrs.evolve(
        event_of(component, kind, flowfile, now),
        previous_attributes=previous,
        updated_attributes=updated,
        previous_content_claim=original.content if original is not None else None,
        previous_file_size=original.size if original is not None else None,
        **fields,
    )
    if before is None:
        return ProvenanceEventRun(
            event,
            after.uuid_numbers,
            uuid_named=((), (*after.uuid_named, "uuid")),
            offsets=after.offsets,
            sizes=after.sizes,
            resource=after.resource_claim,
            updated_columns=dict(after.columns),
        )
    varying = {*before.columns, *after.columns}
    updated_columns = {}
    for name in varying:
        if name in after.columns or name in after.attributes:  # else removed: not an update
            new = after.column(name)
            assert new is not None
            changed = _updated_column(before.column(name), new)
            if changed is not None:
                updated_columns[name] = changed
    return ProvenanceEventRun(
        event,
        after.uuid_numbers,
        uuid_named=(
            (*before.uuid_named, "uuid"),
            tuple(n for n in after.uuid_named if n not in before.uuid_named),
        ),
        offsets=after.offsets,
        sizes=after.sizes,
        previous_offsets=before.offsets,
        previous_sizes=before.sizes,
        resource=after.resource_claim,
        previous_resource=before.resource_claim,
        previous_columns=dict(before.columns),
        updated_columns=updated_columns,
    )
