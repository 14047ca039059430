"""NiFi's ``nifiapi.flowfilesource``: a processor that creates FlowFiles from nothing.

A subclass implements ``create(context)`` and returns a :class:`FlowFileSourceResult`, or None
when there is nothing to make. flowcore runs it as a source
(:class:`nifiapi._adapter.SourceAdapter`): ``create`` runs where sources list their work, and
the state it sets is committed with the FlowFile it made (exactly once). It has ``success``
and the relationships ``getRelationships`` adds.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from nifiapi.__jvm__ import JvmHolder

__all__ = ["FlowFileSource", "FlowFileSourceResult"]


class FlowFileSource(abc.ABC):
    """Base class of NiFi's Python sources."""

    # Set by the framework when the processor is created, as in NiFi.
    identifier: str | None = None
    logger: Any = None

    def __init__(self, **kwargs: Any) -> None:
        del kwargs
        self.arrayList = JvmHolder.jvm.java.util.ArrayList if JvmHolder.jvm else list

    def setContext(self, context: Any) -> None:
        """Keep the context for :meth:`createFlowFile`."""
        self.process_context = context

    def createFlowFile(self) -> FlowFileSourceResult | None:
        """Create a FlowFile with the context set by :meth:`setContext`."""
        return self.create(self.process_context)

    @abc.abstractmethod
    def create(self, context: Any) -> FlowFileSourceResult | None:
        """Make one FlowFile's relationship, attributes and contents, or None."""


class FlowFileSourceResult:
    """The FlowFile a source makes: where it goes, its attributes and contents (text: UTF-8)."""

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
        """The contents, or None (an empty FlowFile)."""
        return self.contents

    def getAttributes(self) -> dict[str, str] | None:
        """The attributes to set, or None."""
        return None if self.attributes is None else dict(self.attributes)

    def __repr__(self) -> str:
        return f"FlowFileSourceResult({self.relationship!r})"
