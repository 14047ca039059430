"""NiFi's ``nifiapi.recordtransform``: a processor that transforms one record at a time.

A subclass implements ``transform(context, record, schema, attributemap)`` and returns a
:class:`RecordTransformResult`: the record (a dict; None drops it), optionally its schema, the
relationship it goes to and a partition (a dict). flowcore runs it as NiFi's
``RecordTransformProxy`` does (:mod:`nifiapi._record_adapter`): the FlowFile's records are read
with the configured Record Reader and given as dicts (their JSON, as NiFi's ``WriteJsonResult``
writes it, parsed), and the records returned are grouped by relationship and partition into new
FlowFiles written with the Record Writer, the partition's values as attributes. The processor
has NiFi's ``Record Reader`` and ``Record Writer`` properties first, its relationships (or
``success``) plus ``failure`` and ``original``.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Mapping
from typing import Any

from nifiapi.__jvm__ import JvmHolder

__all__ = ["CachingAttributeMap", "RecordTransform", "RecordTransformResult"]


class RecordTransform(abc.ABC):
    """Base class of NiFi's Python record transforms."""

    # Set by the framework when the processor is created, as in NiFi.
    identifier: str | None = None
    logger: Any = None

    def __init__(self, **kwargs: Any) -> None:
        del kwargs
        self.arrayList = JvmHolder.jvm.java.util.ArrayList if JvmHolder.jvm else list

    def setContext(self, context: Any) -> None:
        """Keep the context for :meth:`transformRecord`."""
        self.process_context = context

    def transformRecord(
        self, jsonarray: str, schema: Any, attributemap: Any
    ) -> list[RecordTransformResult]:
        """Transform each record of the JSON array *jsonarray* (NiFi's bridge entry point)."""
        attributes = CachingAttributeMap(attributemap)
        return [
            self.transform(self.process_context, record, schema, attributes)
            for record in json.loads(jsonarray)
        ]

    @abc.abstractmethod
    def transform(
        self, context: Any, record: dict[str, Any], schema: Any, attributemap: Any
    ) -> RecordTransformResult:
        """Decide what happens to one record."""


class CachingAttributeMap:
    """The FlowFile's attributes as NiFi gives them to ``transform``, each looked up once."""

    def __init__(self, delegate: Any) -> None:
        self.delegate = delegate
        self.cache: dict[str, str | None] | None = None

    def getAttribute(self, attributeName: str) -> str | None:
        """One attribute, or None."""
        if self.cache is None:
            self.cache = {}
        if attributeName not in self.cache:
            self.cache[attributeName] = self.delegate.getAttribute(attributeName)
        return self.cache[attributeName]

    def getAttributes(self) -> dict[str, str]:
        """Every attribute."""
        return self.delegate.getAttributes()


class RecordTransformResult:
    """A transformed record (None: dropped), its schema (None: inferred), where it goes."""

    def __init__(
        self,
        record: Mapping[str, Any] | None = None,
        schema: Any = None,
        relationship: str = "success",
        partition: Mapping[str, Any] | None = None,
    ) -> None:
        self.record = record
        self.schema = schema
        self.relationship = relationship
        self.partition = partition

    def getRecord(self) -> Mapping[str, Any] | None:
        """The record, or None."""
        return self.record

    def getSchema(self) -> Any:
        """The record's schema, or None."""
        return self.schema

    def getRelationship(self) -> str:
        """The relationship's name."""
        return self.relationship

    def getPartition(self) -> Mapping[str, Any] | None:
        """The partition's values, or None."""
        return self.partition

    def __repr__(self) -> str:
        return f"RecordTransformResult({self.relationship!r}, partition={self.partition!r})"
