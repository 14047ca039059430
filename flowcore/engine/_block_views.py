"""What a task records of a block view: its events and counts once over all its file's blocks.

A large file GetFile hands SplitText is read as blocks by parallel tasks, each making the same
FlowFile, whose content is the whole file (:mod:`flowcore.session.block_views`). Each task
records the view's events and counts its transfers as one task would for the whole file,
shared out: the first block's task its RECEIVE and the FlowFile's count, the last its DROP.
"""

from __future__ import annotations

from collections.abc import Mapping

from flowcore.compiler.plan import StagePlan, block_reader
from flowcore.engine._contracts import Member, Recorded
from flowcore.processor.base import ProcessorKind
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun
from flowcore.session.block_views import ORIGINAL, BlockViews

__all__ = ["counted_once", "recorded_events"]


def recorded_events(views: BlockViews, events: list[Recorded]) -> list[Recorded]:
    """*events* as this task records them: a block view's own events once for all its blocks.

    Only events of one FlowFile can be a view's (see :meth:`BlockViews.recorded`).
    """
    if not views.views:
        return events
    kept: list[Recorded] = []
    for event in events:
        single: Recorded = event
        if isinstance(event, ProvenanceEventRun) and event.count == 1:
            single = event.event(0)
        if not isinstance(single, ProvenanceEvent):
            kept.append(event)
            continue
        recorded = views.recorded(single)
        if recorded is single:
            kept.append(event)
        elif recorded is not None:
            kept.append(recorded)
    return kept


def counted_once(
    views: BlockViews, plan: StagePlan, members: Mapping[str, Member]
) -> dict[str, dict[str, tuple[int, int]]]:
    """Each member's transfers, a block view counted as one FlowFile over all its blocks.

    The first block's task counts the view; the others take it out again, so the stage run
    counts one FlowFile of the file's size: out of the source, into its reader (``consumed``,
    lowered here on the member) and out of the reader's ``original``.
    """
    later = views.later()
    transfers = {
        m.plan.component_id: {k: [v[0], v[1]] for k, v in m.transfers.items()}
        for m in members.values()
        if m.transfers
    }
    if later:
        flowfiles, size = len(later), sum(view.size for view in later)
        for member in members.values():
            reader = block_reader(plan, member.plan)
            if member.plan.kind is not ProcessorKind.SOURCE or reader is None:
                continue
            counted = list(transfers.get(member.plan.component_id, {}).values())
            counted.append(transfers.get(reader.component_id, {}).get(ORIGINAL, [0, 0]))
            for entry in counted:
                entry[0] = max(0, entry[0] - flowfiles)
                entry[1] = max(0, entry[1] - size)
            taker = members[reader.component_id]
            taker.consumed -= min(flowfiles, taker.consumed)
    return {c: {k: (v[0], v[1]) for k, v in t.items()} for c, t in transfers.items()}
