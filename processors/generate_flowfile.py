"""GenerateFlowFile: create FlowFiles of random or custom content, for testing and load."""

from __future__ import annotations

import os
import random
import string
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar

from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
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
_CHUNK = 1 << 20  # bytes of unique random contents made at once
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

    def _random_data(self, context: ProcessContext, count: int = 1) -> bytes:
        """File Size random bytes (Binary or Text) for each of *count* FlowFiles, back to back."""
        size = int(context.get_property(self.FILE_SIZE).as_data_size("B") or 0)
        if context.get_property(self.DATA_FORMAT).value == DATA_FORMAT_BINARY:
            return os.urandom(size * count)
        rng = random.Random(os.urandom(16))
        return bytes(rng.choices(_TEXT_CHARS, k=size * count))

    def _unique_chunks(self, context: ProcessContext, count: int, size: int) -> Iterator[bytes]:
        """Unique FlowFiles' random contents, back to back, about a megabyte at a time."""
        per_chunk = max(1, _CHUNK // max(size, 1))
        for start in range(0, count, per_chunk):
            yield self._random_data(context, min(per_chunk, count - start))

    def on_scheduled(self, context: ProcessContext) -> None:
        """Generate the shared content once, when FlowFiles need not be unique."""
        self._data = None
        if not context.get_property(self.UNIQUE_FLOWFILES).as_boolean():
            self._data = self._random_data(context)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """One batch per trigger; a generator never runs out."""
        batch = context.get_property(self.BATCH_SIZE).as_integer() or 1
        item = WorkItem("batch", {"count": batch}, flowfiles=batch, batched=self._batched())
        return WorkListing((item,), state)

    def _batched(self) -> bool:
        """Whether a trigger's FlowFiles always come as one batch (:meth:`read_work_batches`).

        They do unless a dynamic property holds Expression Language: evaluated over the batch's
        columns, it may fail for some FlowFile, and then they go one by one.
        """
        return not any("$" in text for text in self.dynamic_properties.values())

    def _custom_content(self, context: ProcessContext) -> bytes | None:
        """Custom Text, evaluated once per batch, in its character set."""
        custom = context.get_property(self.CUSTOM_TEXT).value
        if custom is None:
            return None
        charset = context.get_property(self.CHARSET).value or "UTF-8"
        return compile_expression(custom).evaluate(clock=context.now).encode(charset)

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> list[tuple[str, FlowFileBatch]] | None:
        """A trigger's FlowFiles as batches: :meth:`read_work`'s contents and attributes.

        One trigger (one item) at a time: given several, it declines, and the engine hands
        them over one by one.

        Shared content (Custom Text, or random data when FlowFiles need not be unique) is one
        range repeated; unique random contents are written back to back. Dynamic properties with
        Expression Language are evaluated over the batch's columns, as :meth:`read_work`
        evaluates them for each new FlowFile (against its core attributes only); ``nextInt()`` in
        several of them goes one by one (its values follow the order of evaluation).
        """
        if len(items) != 1:
            return None
        count = int(items[0].payload["count"])
        evaluated = {n: t for n, t in self.dynamic_properties.items() if "$" in t}
        if sum("nextInt" in text for text in evaluated.values()) > 1:
            return None
        attributes = {n: t for n, t in self.dynamic_properties.items() if n not in evaluated}
        mime_type = context.get_property(self.MIME_TYPE).value
        if mime_type:
            attributes["mime.type"] = mime_type
        content = self._custom_content(context)
        if content is None and context.get_property(self.UNIQUE_FLOWFILES).as_boolean():
            size = int(context.get_property(self.FILE_SIZE).as_data_size("B") or 0)
            chunks = self._unique_chunks(context, count, size)
            made = maker.create_each(count, {} if evaluated else attributes, size, chunks)
        else:
            if content is None:
                if self._data is None:
                    self._data = self._random_data(context)
                content = self._data
            made = [maker.create(count, {} if evaluated else attributes, content)]
        if evaluated:
            made = [self._evaluated(context, batch, evaluated, attributes) for batch in made]
        return [(SUCCESS.name, batch) for batch in made]

    def _evaluated(
        self,
        context: ProcessContext,
        batch: FlowFileBatch,
        evaluated: Mapping[str, str],
        attributes: Mapping[str, str],
    ) -> FlowFileBatch:
        """*batch* with the dynamic properties' values, as :meth:`read_work` sets them."""
        mime_type = (
            attributes.get("mime.type") if context.get_property(self.MIME_TYPE).value else None
        )
        columns = {
            name: evaluate_column(compile_expression(text), batch, clock=context.now)
            for name, text in evaluated.items()
            if not (mime_type and name == "mime.type")  # the property wins, as one by one
        }
        return batch.with_columns(columns).with_attributes(attributes)

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
