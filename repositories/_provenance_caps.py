"""Attribute values cut to a maximum length before provenance stores them, as NiFi does.

Every event stores the FlowFile's attributes in full: a flow carrying large attribute values
(a document extracted into an attribute, a JSON body) stored them again on every event, so the
provenance repository grew with the input: 200 MB of attribute values made a 600 MB
``provenance.db`` (issue 31). NiFi caps them with
``nifi.provenance.repository.max.attribute.length`` (65536 characters by default): its event
writers keep the first that many characters of each longer value and leave names and shorter
values alone. Here the cap is applied where events enter an
:class:`~repositories._provenance_runs.EventFolder`, the one way into event files and the index,
to each shape an event arrives in (one event, a batch's run, interleaved runs). The FlowFiles
themselves keep their values whole.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from flowcore.flowfile import Attributes
from flowcore.flowfile_batch.columns import Column, TextColumn
from flowcore.provenance_events import InterleavedRuns, ProvenanceEvent, ProvenanceEventRun

__all__ = ["MAX_ATTRIBUTE_LENGTH", "MIN_ATTRIBUTE_LENGTH", "capped"]

#: NiFi's ``nifi.provenance.repository.max.attribute.length`` default, in characters.
MAX_ATTRIBUTE_LENGTH = 65_536
#: The least cap NiFi accepts (characters): a uuid (36) must stay whole.
MIN_ATTRIBUTE_LENGTH = 36

Shaped = ProvenanceEvent | ProvenanceEventRun | InterleavedRuns


def _capped_map(attributes: Attributes, limit: int) -> Attributes:
    data = attributes._data  # read in place: most maps have no long value
    if all(len(value) <= limit for value in data.values()):
        return attributes
    return Attributes({name: value[:limit] for name, value in data.items()})


def _capped_event(event: ProvenanceEvent, limit: int) -> ProvenanceEvent:
    previous = _capped_map(event.previous_attributes, limit)
    updated = _capped_map(event.updated_attributes, limit)
    if previous is event.previous_attributes and updated is event.updated_attributes:
        return event
    return attrs.evolve(event, previous_attributes=previous, updated_attributes=updated)


def _capped_columns(columns: Mapping[str, Column], limit: int) -> Mapping[str, Column]:
    """The columns with each long text value cut (a column's dictionary holds each value once)."""
    cut = {}
    for name, column in columns.items():
        if isinstance(column, TextColumn) and any(
            value is not None and len(value) > limit for value in column.dictionary
        ):
            values = tuple(None if v is None else v[:limit] for v in column.dictionary)
            cut[name] = TextColumn(column.codes, values)
    return {**columns, **cut} if cut else columns


def _capped_run(run: ProvenanceEventRun, limit: int) -> ProvenanceEventRun:
    first = _capped_event(run.first, limit)
    previous = _capped_columns(run.previous_columns, limit)
    updated = _capped_columns(run.updated_columns, limit)
    if first is run.first and previous is run.previous_columns and updated is run.updated_columns:
        return run
    return attrs.evolve(run, first=first, previous_columns=previous, updated_columns=updated)


def capped(event: Shaped, limit: int) -> Shaped:
    """*event* with every attribute value longer than *limit* characters cut to *limit*.

    The same object when nothing is that long, so the usual event costs a length check per
    value. Integer columns (``fragment.index``) hold short decimal numbers and are left alone.
    """
    if isinstance(event, ProvenanceEvent):
        return _capped_event(event, limit)
    if isinstance(event, ProvenanceEventRun):
        return _capped_run(event, limit)
    runs = tuple(_capped_run(run, limit) for run in event.runs)
    if all(new is old for new, old in zip(runs, event.runs, strict=True)):
        return event
    return attrs.evolve(event, runs=runs)
