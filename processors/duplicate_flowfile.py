"""DuplicateFlowFile: copies of each FlowFile, for load testing, as NiFi's DuplicateFlowFile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR

__all__ = ["DuplicateFlowFile"]

COPY_INDEX = "copy.index"
REL_SUCCESS = Relationship(
    "success", "The original FlowFile and all copies will be sent to this relationship"
)


class DuplicateFlowFile(Processor):
    """Sends each FlowFile on with N copies of it (NiFi's DuplicateFlowFile).

    Copies 1 to N (Number of Copies, evaluated for each FlowFile) are full clones (a CLONE
    event each, content shared, not copied), with ``copy.index`` 1 to N; the original follows
    them with ``copy.index`` 0, all to ``success``. A Number of Copies that does not evaluate
    to a non-negative integer is a processor error: the FlowFile stays queued, penalized.
    """

    NUM_COPIES = PropertyDescriptor(
        "Number of Copies",
        description="Specifies how many copies of each incoming FlowFile will be made",
        required=True,
        default="100",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    )
    property_descriptors: ClassVar = (NUM_COPIES,)
    relationships: ClassVar = (REL_SUCCESS,)
    supports_batching: ClassVar = True
    tags: ClassVar = ("test", "load", "duplicate")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        COPY_INDEX: "A zero-based incrementing integer value based on which copy the FlowFile is."
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Copy one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        value = context.get_property(self.NUM_COPIES).evaluate_attribute_expressions(flowfile)
        copies = value.as_integer() or 0
        for index in range(1, copies + 1):
            copy = session.put_attribute(session.clone(flowfile), COPY_INDEX, str(index))
            session.transfer(copy, REL_SUCCESS)
        session.transfer(session.put_attribute(flowfile, COPY_INDEX, "0"), REL_SUCCESS)
