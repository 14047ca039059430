"""The harness's FlowFiles as :class:`~flowcore.flowfile_batch.FlowFileBatch` values.

Batch mode (:mod:`flowcore.testing._batches`) hands a processor's batch forms the queued
FlowFiles as an engine task would get them from a queue segment: runs sharing a uuid prefix and
dates, their contents laid out in one resource claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, uuid_in_sequence
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, column_of

if TYPE_CHECKING:
    from repositories.memory import MemoryContentRepository

__all__ = ["batches_of"]


def batches_of(
    flowfiles: Sequence[FlowFile], content: MemoryContentRepository
) -> list[tuple[FlowFileBatch, list[FlowFile]]]:
    """The FlowFiles as batches, in order, each with the FlowFiles it holds.

    A batch holds a run of FlowFiles sharing a uuid prefix and dates (FlowFiles enqueued before
    and after ``advance_time`` make two). Its contents lie in one resource claim: when theirs lie
    in several (each ``enqueue`` writes its own), the bytes are first copied into one new claim,
    as a queue segment holds them, and the FlowFiles returned point there.

    Raises:
        AssertionError: a FlowFile's uuid is not a counted uuid, so no batch can hold it.
    """
    runs: list[tuple[tuple[Any, ...], list[FlowFile]]] = []
    for flowfile in flowfiles:
        position = uuid_in_sequence(flowfile.uuid)
        if position is None:
            msg = f"{flowfile} cannot be held in a FlowFile batch: its uuid is not a counted uuid"
            raise AssertionError(msg)
        key = (position[0], flowfile.entry_date, flowfile.lineage_start_date, flowfile.queue_date)
        if runs and runs[-1][0] == key:
            runs[-1][1].append(flowfile)
        else:
            runs.append((key, [flowfile]))
    made = []
    for _, run in runs:
        laid = _in_one_claim(run, content)
        made.append((_batch(laid), laid))
    return made


def _in_one_claim(run: list[FlowFile], content: MemoryContentRepository) -> list[FlowFile]:
    """*run* with every content in one resource claim (copied there when it is not)."""
    claims = {f.content.resource_claim for f in run if isinstance(f.content, ContentClaim)}
    if len(claims) <= 1 and all(
        f.content is None or isinstance(f.content, ContentClaim) for f in run
    ):
        return run
    stream = content.writer().open_stream()
    starts = []
    for flowfile in run:
        starts.append(stream.bytes_written)
        if flowfile.content is not None:
            stream.write(content.read(flowfile.content))
    written = stream.close()
    assert written is not None  # some FlowFile had content, or there was one claim at most
    laid = []
    for flowfile, start in zip(run, starts, strict=True):
        old = flowfile.content
        if old is None:
            laid.append(flowfile)
            continue
        content.increment_claimant_count(written.resource_claim)
        laid.append(
            flowfile.replace(
                content=ContentClaim(written.resource_claim, written.offset + start, flowfile.size)
            )
        )
        for resource_claim in old.resource_claims:
            if content.decrement_claimant_count(resource_claim) == 0:
                content.remove(resource_claim)
    return laid


def _batch(run: Sequence[FlowFile]) -> FlowFileBatch:
    """FlowFiles that share a uuid prefix, dates and (at most) one resource claim, as a batch."""
    first = run[0]
    names = dict.fromkeys(n for f in run for n in f.attributes if n != "uuid")
    shared: dict[str, str] = {}
    columns: dict[str, Column] = {}
    for name in names:
        values = [f.attributes.get(name) for f in run]
        if values[0] is not None and values.count(values[0]) == len(values):
            shared[name] = values[0]
        else:
            columns[name] = column_of(values)
    claims = [f.content for f in run if isinstance(f.content, ContentClaim)]
    numbers = [uuid_in_sequence(f.uuid) for f in run]
    return FlowFileBatch(
        ids=[f.id for f in run],
        uuid_key=numbers[0][0],  # type: ignore[index]
        uuid_numbers=[n[1] for n in numbers],  # type: ignore[index]
        attributes=Attributes(shared),
        uuid_named=(),
        resource_claim=claims[0].resource_claim if claims else None,
        offsets=[f.content.offset if isinstance(f.content, ContentClaim) else 0 for f in run],
        sizes=[f.size for f in run],
        entry_date=first.entry_date,
        lineage_start_date=first.lineage_start_date,
        lineage_start_indices=[f.lineage_start_index for f in run],
        queue_date=first.queue_date,
        queue_date_indices=[f.queue_date_index for f in run],
        columns=columns,
    )
