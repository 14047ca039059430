"""NiFi's ``nifiapi.flowfiletransform``: a processor that transforms one FlowFile at a time.

A subclass implements ``transform(context, flowFile)`` and returns a
:class:`FlowFileTransformResult`; flowcore runs it as a per-FlowFile processor
(:class:`nifiapi._adapter.TransformAdapter`), in fused Spark stages, with NiFi's relationships:
the processor's (``success`` unless it implements ``getRelationships``), plus ``failure`` and
``original`` (auto-terminated by default).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from nifiapi.__jvm__ import JvmHolder

__all__ = ["FlowFileTransform", "FlowFileTransformResult"]


class FlowFileTransform(abc.ABC):
    """Base class of NiFi's Python FlowFile transforms."""

    # Set by the framework when the processor is created, as in NiFi.
    identifier: str | None = None
    logger: Any = None

    def __init__(self, **kwargs: Any) -> None:
        del kwargs
        self.arrayList = JvmHolder.jvm.java.util.ArrayList if JvmHolder.jvm else list

    def setContext(self, context: Any) -> None:
        """Keep the context for :meth:`transformFlowFile`."""
        self.process_context = context

    def transformFlowFile(self, flowfile: Any) -> FlowFileTransformResult:
        """Transform *flowfile* with the context set by :meth:`setContext`."""
        return self.transform(self.process_context, flowfile)

    @abc.abstractmethod
    def transform(self, context: Any, flowFile: Any) -> FlowFileTransformResult:
        """Decide what happens to one FlowFile."""


class FlowFileTransformResult:
    """Where a FlowFile goes, with the attributes to set and its new contents (None: kept).

    Contents given as text are written as UTF-8, as NiFi does.
    """

    def __init__(
        self,
        relationship: str,
        attributes: Mapping[str, str] | None = None,
        contents: bytes | str | None = None,
    ) -> None:
        self.relationship = relationship
        self.attributes = attributes
        self.contents = contents.encode() if isinstance(contents, str) else contents

    def getRelationship(self) -> str:
        """The relationship's name."""
        return self.relationship

    def getContents(self) -> bytes | None:
        """The new contents, or None."""
        return self.contents

    def getAttributes(self) -> dict[str, str] | None:
        """The attributes to set, or None."""
        return None if self.attributes is None else dict(self.attributes)

    def __repr__(self) -> str:
        return f"FlowFileTransformResult({self.relationship!r})"
