"""ModifyBytes: drop bytes at the start and end of the content (or all of it), zero-copy."""

from __future__ import annotations

from typing import ClassVar

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import DATA_SIZE_VALIDATOR

__all__ = ["ModifyBytes"]

REL_SUCCESS = Relationship("success", "Processed FlowFiles.")


class ModifyBytes(Processor):
    """Discards a byte range at the start and end, or all content (NiFi's ModifyBytes).

    Start Offset and End Offset are data sizes (``12 B``, ``1 MB``), evaluated against each
    FlowFile; when they cover the whole content, or Remove All Content is true, the content
    becomes empty. NiFi copies the kept bytes into a new claim; flowcore points the FlowFile at
    the kept range of the claim it already has (no byte is copied, whatever the size). The
    provenance is NiFi's: one CONTENT_MODIFIED on the FlowFile, even when nothing is cut. An
    offset that does not evaluate to a data size is a processor error: the FlowFile stays
    queued.
    """

    START_OFFSET = PropertyDescriptor(
        "Start Offset",
        description="Number of bytes removed at the beginning of the file.",
        required=True,
        default="0 B",
        validators=(DATA_SIZE_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    END_OFFSET = PropertyDescriptor(
        "End Offset",
        description="Number of bytes removed at the end of the file.",
        required=True,
        default="0 B",
        validators=(DATA_SIZE_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    REMOVE_ALL = PropertyDescriptor(
        "Remove All Content",
        description="Remove all content from the FlowFile superseding Start Offset and End "
        "Offset properties.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
    )
    property_descriptors: ClassVar = (START_OFFSET, END_OFFSET, REMOVE_ALL)
    relationships: ClassVar = (REL_SUCCESS,)
    supports_batching: ClassVar = True
    tags: ClassVar = ("binary", "discard", "keep")

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Cut one FlowFile's content."""
        flowfile = session.get()
        if flowfile is None:
            return
        start = int(
            context.get_property(self.START_OFFSET)
            .evaluate_attribute_expressions(flowfile)
            .as_data_size("B")
            or 0
        )
        end = int(
            context.get_property(self.END_OFFSET)
            .evaluate_attribute_expressions(flowfile)
            .as_data_size("B")
            or 0
        )
        remove_all = context.get_property(self.REMOVE_ALL).as_boolean()
        kept = 0 if remove_all else flowfile.size - start - end
        before = flowfile.content
        if kept <= 0:
            flowfile = session.keep_range(flowfile, 0, 0)
        else:
            flowfile = session.keep_range(flowfile, start, kept)
        if flowfile.content == before:  # NiFi rewrites it all the same: CONTENT_MODIFIED
            session.provenance.modify_content(flowfile)
        context.logger.info("Transferred %s to 'success'", flowfile)
        session.transfer(flowfile, REL_SUCCESS)
