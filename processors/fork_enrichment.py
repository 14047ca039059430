"""ForkEnrichment: mark a FlowFile and its clone for JoinEnrichment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.session.process_session import ProcessSession

__all__ = ["ENRICHMENT_GROUP_ID", "ENRICHMENT_ROLE", "ForkEnrichment"]

ENRICHMENT_GROUP_ID = "enrichment.group.id"
ENRICHMENT_ROLE = "enrichment.role"
ROLE_ORIGINAL = "ORIGINAL"
ROLE_ENRICHMENT = "ENRICHMENT"

REL_ORIGINAL = Relationship(
    "original",
    "The incoming FlowFile will be routed to this relationship, after adding appropriate "
    "attributes.",
)
REL_ENRICHMENT = Relationship(
    "enrichment",
    "A clone of the incoming FlowFile will be routed to this relationship, after adding "
    "appropriate attributes.",
)


class ForkEnrichment(Processor):
    """Clones each FlowFile into an 'original' and an 'enrichment' copy (NiFi's ForkEnrichment).

    Both get a new random ``enrichment.group.id`` and their ``enrichment.role`` (``ORIGINAL``
    or ``ENRICHMENT``); the FlowFile goes to ``original``, its clone (CLONE, sharing the
    content) to ``enrichment``. JoinEnrichment joins the two back by the group id once the
    enrichment path has done its work.
    """

    relationships: ClassVar = (REL_ORIGINAL, REL_ENRICHMENT)
    supports_batching: ClassVar = True
    tags: ClassVar = ("fork", "join", "enrich", "record")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        ENRICHMENT_GROUP_ID: "The Group ID to use in order to correlate the 'original' FlowFile "
        "with the 'enrichment' FlowFile.",
        ENRICHMENT_ROLE: "The role to use for enrichment. This will either be ORIGINAL or "
        "ENRICHMENT.",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Fork one FlowFile."""
        del context
        original = session.get()
        if original is None:
            return
        # NiFi draws the group id at random; derived, a replayed task attempt gives the same
        group = session.identifier_for(original, ENRICHMENT_GROUP_ID)
        original = session.put_all_attributes(
            original, {ENRICHMENT_GROUP_ID: group, ENRICHMENT_ROLE: ROLE_ORIGINAL}
        )
        enrichment = session.put_attribute(
            session.clone(original), ENRICHMENT_ROLE, ROLE_ENRICHMENT
        )
        session.transfer(original, REL_ORIGINAL)
        session.transfer(enrichment, REL_ENRICHMENT)
