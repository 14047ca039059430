"""GenerateFlowFile: create FlowFiles of random or custom content, for testing and load."""

from __future__ import annotations

import os
import random
import string
from collections.abc import Mapping
from typing import ClassVar

from flowcore.expression import compile_expression
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.process_context import ProcessContext
from flowcore.processor_kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import SUCCESS
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
)

__all__ = ["GenerateFlowFile"]

DATA_FORMAT_BINARY = "Binary"
DATA_FORMAT_TEXT = "Text"
_TEXT_CHARS = (string.ascii_letters + string.digits + string.punctuation + " \n").encode("ascii")


class GenerateFlowFile(SourceProcessor):
    """Creates FlowFiles with random data or custom text (NiFi's GenerateFlowFile).

    Each trigger creates Batch Size FlowFiles. With Custom Text set, the content is that text
    (Expression Language evaluated once per trigger, in Character Set); otherwise File Size bytes
    of random Binary or Text data, the same bytes for every FlowFile unless Unique FlowFiles is
    true. Dynamic properties become attributes (with Expression Language). Each FlowFile gets a
    CREATE provenance event.
    """

    FILE_SIZE = PropertyDescriptor(
        "File Size",
        description="The size of the file that will be used",
        required=True,
        default="0B",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    BATCH_SIZE = PropertyDescriptor(
        "Batch Size",
        description="The number of FlowFiles to be transferred in each invocation",
        required=True,
        default="1",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    DATA_FORMAT = PropertyDescriptor(
        "Data Format",
        description="Specifies whether the data should be Text or Binary",
        required=True,
        default=DATA_FORMAT_TEXT,
        allowable_values=(DATA_FORMAT_BINARY, DATA_FORMAT_TEXT),
    )
    UNIQUE_FLOWFILES = PropertyDescriptor(
        "Unique FlowFiles",
        description="If true, each FlowFile that is generated will be unique. If false, a random "
        "value will be generated and all FlowFiles will get the same content but this offers much "
        "higher throughput",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    CUSTOM_TEXT = PropertyDescriptor(
        "Custom Text",
        description="If Data Format is text and if Unique FlowFiles is false, then this custom "
        "text will be used as content of the generated FlowFiles and the File Size will be "
        "ignored. Finally, if Expression Language is used, evaluation will be performed only once "
        "per batch of generated FlowFiles",
        required=False,
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
    )
    CHARSET = PropertyDescriptor(
        "Character Set",
        description="Specifies the character set to use when writing the bytes of Custom Text to "
        "a flow file.",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    MIME_TYPE = PropertyDescriptor(
        "Mime Type",
        description="Specifies the value to set for the 'mime.type' attribute.",
        required=False,
    )
    property_descriptors: ClassVar = (
        FILE_SIZE,
        BATCH_SIZE,
        DATA_FORMAT,
        UNIQUE_FLOWFILES,
        CUSTOM_TEXT,
        CHARSET,
        MIME_TYPE,
    )
    relationships: ClassVar = (SUCCESS,)
    unbounded: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("test", "random", "generate", "load")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Set from the Mime Type property, when given"
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._data: bytes | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_data"] = None  # regenerated where the processor is scheduled
        return state

    def _random_data(self, context: ProcessContext) -> bytes:
        size = int(context.get_property(self.FILE_SIZE).as_data_size("B") or 0)
        if context.get_property(self.DATA_FORMAT).value == DATA_FORMAT_BINARY:
            return os.urandom(size)
        rng = random.Random(os.urandom(16))
        return bytes(rng.choices(_TEXT_CHARS, k=size))

    def on_scheduled(self, context: ProcessContext) -> None:
        """Generate the shared content once, when FlowFiles need not be unique."""
        self._data = None
        if not context.get_property(self.UNIQUE_FLOWFILES).as_boolean():
            self._data = self._random_data(context)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """One batch per trigger; a generator never runs out."""
        batch = context.get_property(self.BATCH_SIZE).as_integer() or 1
        item = WorkItem("batch", {"count": batch}, flowfiles=batch, batched=self._alike(context))
        return WorkListing((item,), state)

    def _alike(self, context: ProcessContext) -> bool:
        """Whether every FlowFile of a trigger is the same but for its position (one batch).

        They are when every FlowFile gets the same content (Unique FlowFiles false, or Custom
        Text) and the dynamic properties are plain values (no Expression Language to evaluate
        per FlowFile).
        """
        if any("$" in text for text in self.dynamic_properties.values()):
            return False
        if context.get_property(self.CUSTOM_TEXT).value is not None:
            return True
        return not context.get_property(self.UNIQUE_FLOWFILES).as_boolean()

    def _custom_content(self, context: ProcessContext) -> bytes | None:
        """Custom Text, evaluated once per batch, in its character set."""
        custom = context.get_property(self.CUSTOM_TEXT).value
        if custom is None:
            return None
        charset = context.get_property(self.CHARSET).value or "UTF-8"
        return compile_expression(custom).evaluate(clock=context.now).encode(charset)

    def read_work_batch(
        self, context: ProcessContext, item: WorkItem, maker: BatchMaker
    ) -> tuple[str, FlowFileBatch] | None:
        """The batch as one value, when its FlowFiles are alike (:meth:`_alike`)."""
        if not self._alike(context):
            return None
        content = self._custom_content(context)
        if content is None:
            if self._data is None:
                self._data = self._random_data(context)
            content = self._data
        attributes = dict(self.dynamic_properties)
        mime_type = context.get_property(self.MIME_TYPE).value
        if mime_type:
            attributes["mime.type"] = mime_type
        return SUCCESS.name, maker.create(int(item.payload["count"]), attributes, content)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Create one batch of FlowFiles."""
        content = self._custom_content(context)
        unique = bool(context.get_property(self.UNIQUE_FLOWFILES).as_boolean())
        if content is None and not unique and self._data is None:
            self._data = self._random_data(context)
        mime_type = context.get_property(self.MIME_TYPE).value
        dynamic = [
            (name, compile_expression(text)) for name, text in self.dynamic_properties.items()
        ]
        for _ in range(int(item.payload["count"])):
            flowfile = session.create()
            data = (
                content
                if content is not None
                else (self._data if not unique else self._random_data(context))
            )
            if data:
                flowfile = session.write(flowfile, data)
            attributes = {
                name: expression.evaluate(flowfile, clock=context.now)
                for name, expression in dynamic
            }
            if mime_type:
                attributes["mime.type"] = mime_type
            if attributes:
                flowfile = session.put_all_attributes(flowfile, attributes)
            session.provenance.create(flowfile)
            session.transfer(flowfile, SUCCESS)
