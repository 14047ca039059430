"""Whether a processor's batch form agrees with its one-by-one form, FlowFile by FlowFile.

``TestRunner.assert_batch_form_agrees`` runs the same input through both forms, the one by one
on a twin of the runner (``TestRunner._twin``), and compares what each run left, as
:class:`RunRecord` values (``TestRunner._record``): the FlowFiles on each relationship (content and
attributes), the FlowFiles left queued, the provenance events, the FlowFiles dropped on
auto-terminated relationships, state and counters. Two runs make different uuids, so uuids
compare by the FlowFile they name (:class:`_Tokens`). Every difference is listed, each naming
the FlowFile and what differs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from flowcore.errors import ContentNotFoundError

if TYPE_CHECKING:
    from flowcore.flowfile import Content
    from flowcore.processor.base import Processor
    from flowcore.provenance_events import ProvenanceEvent
    from flowcore.testing._batches import BatchUse
    from repositories.memory import MemoryContentRepository

__all__ = [
    "GONE",
    "RunRecord",
    "SeenFlowFile",
    "assert_agreement",
    "disagreements",
    "event_contents",
]

#: Differences listed in one failure; the rest are counted.
_SHOWN_DIFFERENCES = 20
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@attrs.frozen
class SeenFlowFile:
    """A FlowFile as a run left it, for comparing runs: its uuid, attributes and content."""

    uuid: str
    attributes: Mapping[str, str]
    content: bytes


@attrs.frozen
class RunRecord:
    """What one run of a runner produced, for comparing the batch form with the one-by-one form.

    Attributes:
        inputs: uuids of the FlowFiles queued before the run, in queue order.
        transfers: per relationship, the FlowFiles transferred there, in transfer order.
        events: the provenance events the run recorded.
        queued: the FlowFiles left queued, by queue position.
        state: the processor's state.
        counters: the counters' values.
        event_contents: for each event, the bytes of its content and of its previous content
            (what a replay reads; None: no claim, :data:`GONE`: no longer stored); empty when
            not read.
        dropped: per auto-terminated relationship, the FlowFiles and bytes dropped there.
    """

    inputs: tuple[str, ...]
    transfers: Mapping[str, tuple[SeenFlowFile, ...]]
    events: tuple[ProvenanceEvent, ...]
    queued: tuple[SeenFlowFile, ...]
    state: Mapping[str, str]
    counters: Mapping[str, int]
    event_contents: tuple[tuple[bytes | None, bytes | None], ...] = ()
    dropped: Mapping[str, tuple[int, int]] = attrs.field(factory=dict)


#: An event's content that is no longer in the content repository.
GONE = b"<content no longer stored>"


def event_contents(
    events: Sequence[ProvenanceEvent], content: MemoryContentRepository
) -> list[tuple[bytes | None, bytes | None]]:
    """The bytes each event's content claim and previous content claim name, in order."""

    def read(claim: Content | None) -> bytes | None:
        if claim is None:
            return None
        try:
            return content.read(claim)
        except ContentNotFoundError:
            return GONE

    return [(read(e.content_claim), read(e.previous_content_claim)) for e in events]


class _Tokens:
    """Names for the uuids of one run: by the FlowFile they are, so two runs can be compared.

    An input is ``queued[i]`` (both runs get the same inputs), an output ``<relationship>[i]``,
    a FlowFile left queued ``left[i]``; any other uuid in an attribute is numbered in the order
    the run's FlowFiles show it (``fragment.identifier``), and an unknown one in an event is
    ``<uuid>``.
    """

    def __init__(self, record: RunRecord) -> None:
        self.names = {uuid: f"queued[{i}]" for i, uuid in enumerate(record.inputs)}
        seen = [
            (r, i, f) for r in sorted(record.transfers) for i, f in enumerate(record.transfers[r])
        ]
        seen.extend(("left", i, f) for i, f in enumerate(record.queued))
        for where, index, flowfile in seen:
            self.names.setdefault(flowfile.uuid, f"{where}[{index}]")
        self.others: dict[str, str] = {}
        for _, _, flowfile in seen:
            for _, value in sorted(flowfile.attributes.items()):
                if value not in self.names and _UUID.fullmatch(value):
                    self.others.setdefault(value, f"<uuid #{len(self.others) + 1}>")

    def flowfile(self, uuid: str) -> str:
        """The name of the FlowFile with *uuid*."""
        return self.names.get(uuid) or self.others.get(uuid, "<uuid>")

    def attributes(self, attributes: Mapping[str, str]) -> dict[str, str]:
        """*attributes* without ``uuid``, each uuid value replaced by its name."""
        return {
            name: f"<uuid of {self.names[value]}>"
            if value in self.names
            else self.others.get(value, value)
            for name, value in attributes.items()
            if name != "uuid"
        }


def _shape(
    event: ProvenanceEvent,
    tokens: _Tokens,
    contents: tuple[bytes | None, bytes | None] = (None, None),
) -> tuple:
    """An event without what differs between two runs of the same input: times, ids, claims.

    Its claims compare by the bytes they name (*contents*: content, previous content).
    """
    return (
        event.event_type.value,
        event.component_id,
        tokens.flowfile(event.flowfile_uuid),
        event.relationship,
        event.details,
        tuple(sorted(tokens.attributes(event.previous_attributes).items())),
        tuple(sorted(tokens.attributes(event.updated_attributes).items())),
        event.file_size,
        event.previous_file_size,
        contents,
        tuple(sorted(tokens.flowfile(u) for u in event.parent_uuids)),
        tuple(sorted(tokens.flowfile(u) for u in event.child_uuids)),
        event.source_queue_identifier is not None,
    )


def _told(shape: tuple) -> str:
    """An event shape as a message tells it."""
    kind, component, flowfile, relationship, details, _, updated, *_ = shape
    contents, parents, children = shape[-4:-1]
    told = f"{kind} of {flowfile} by {component}"
    if relationship:
        told += f" -> {relationship}"
    if details:
        told += f" ({details})"
    if updated:
        told += f", updated {dict(updated)!r}"
    if contents[0] is not None or contents[1] is not None:
        told += f", content {_value(contents[0])} (was {_value(contents[1])})"
    if parents:
        told += f", {len(parents)} parent(s)"
    if children:
        told += f", {len(children)} child(ren)"
    return told


def _value(value: object) -> str:
    if value is None:
        return "absent"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _compared(
    where: str,
    single: Sequence[SeenFlowFile],
    batched: Sequence[SeenFlowFile],
    tokens: tuple[_Tokens, _Tokens],
) -> list[str]:
    """How the FlowFiles *batched* differ from *single*, in order, each FlowFile named."""
    found = []
    if len(single) != len(batched):
        found.append(
            f"{where}: {len(single)} FlowFiles one by one, {len(batched)} in the batch form"
        )
    for index, (one, other) in enumerate(zip(single, batched, strict=False)):
        label = f"{where}[{index}] ({one.attributes.get('filename', '')})"
        if one.content != other.content:
            found.append(
                f"{label}: content {_value(one.content)} one by one, "
                f"{_value(other.content)} in the batch form"
            )
        ours, theirs = tokens[0].attributes(one.attributes), tokens[1].attributes(other.attributes)
        for name in sorted(ours.keys() | theirs.keys()):
            if ours.get(name) != theirs.get(name):
                found.append(
                    f"{label}: attribute {name!r} is {_value(ours.get(name))} one by one, "
                    f"{_value(theirs.get(name))} in the batch form"
                )
    return found


def _shapes(record: RunRecord, tokens: _Tokens) -> list[tuple]:
    """The shapes of a run's events, with their contents when the run read them."""
    if not record.event_contents:
        return [_shape(e, tokens) for e in record.events]
    return [_shape(e, tokens, c) for e, c in zip(record.events, record.event_contents, strict=True)]


def _dropped(counted: tuple[int, int] | None) -> str:
    """FlowFiles and bytes dropped, as a message tells them."""
    count, size = counted or (0, 0)
    return f"{count} FlowFiles ({size} B) dropped"


def disagreements(single: RunRecord, batched: RunRecord) -> list[str]:
    """Every way the batch-form run *batched* differs from the one-by-one run *single*.

    FlowFiles compare per relationship in transfer order, then the queue by position: content and
    attributes, uuids aside (a uuid-valued attribute compares by the FlowFile it names). Events
    compare as a multiset of shapes (type, component, FlowFile, relationship, details, previous
    and updated attributes, sizes, the bytes of the content and previous content they name,
    parents and children): a batch form records a run of events per route where one by one
    records them FlowFile after FlowFile. The FlowFiles and bytes dropped on each
    auto-terminated relationship, state and counters too.
    """
    tokens = (_Tokens(single), _Tokens(batched))
    found = []
    for relationship in sorted({*single.transfers, *batched.transfers}):
        found.extend(
            _compared(
                relationship,
                single.transfers.get(relationship, ()),
                batched.transfers.get(relationship, ()),
                tokens,
            )
        )
    found.extend(_compared("queue", single.queued, batched.queued, tokens))
    expected = Counter(_shapes(single, tokens[0]))
    got = Counter(_shapes(batched, tokens[1]))
    for shape, count in sorted((expected - got).items(), key=repr):
        times = f" ({count} times)" if count > 1 else ""
        found.append(f"event {_told(shape)}{times}: recorded one by one, not in the batch form")
    for shape, count in sorted((got - expected).items(), key=repr):
        times = f" ({count} times)" if count > 1 else ""
        found.append(f"event {_told(shape)}{times}: recorded in the batch form, not one by one")
    for relationship in sorted({*single.dropped, *batched.dropped}):
        one, other = single.dropped.get(relationship), batched.dropped.get(relationship)
        if one != other:
            found.append(
                f"auto-terminated {relationship!r}: {_dropped(one)} one by one, "
                f"{_dropped(other)} in the batch form"
            )
    if single.state != batched.state:
        found.append(
            f"state is {dict(single.state)!r} one by one, {dict(batched.state)!r} in the batch form"
        )
    if single.counters != batched.counters:
        found.append(
            f"counters are {dict(single.counters)!r} one by one, "
            f"{dict(batched.counters)!r} in the batch form"
        )
    return found


def assert_agreement(
    processor: Processor,
    single: RunRecord,
    batched: RunRecord,
    use: BatchUse,
    *,
    allow_decline: bool,
) -> None:
    """Assert the batch-form run *batched* agrees with the one-by-one run *single*.

    Args:
        processor: the processor (named in the message).
        single: the one-by-one run.
        batched: the batch-form run.
        use: how that run used the batch forms.
        allow_decline: accept a run in which the batch form took no FlowFile.

    Raises:
        AssertionError: nothing was queued; the batch form took no FlowFile (unless
            *allow_decline*), saying why; or the runs differ, listing every difference.
    """
    name = type(processor).__name__
    if not single.inputs:
        msg = f"nothing is queued for {name}: enqueue the input to compare the forms on first"
        raise AssertionError(msg)
    if not use.used and not allow_decline:
        why = "; ".join(dict.fromkeys(use.declined)) or "no batch form was asked"
        msg = (
            f"{name} took no FlowFile through a batch form ({why}), so both runs went one "
            "FlowFile at a time and nothing was compared. A processor without a batch form "
            "(transform_batch, fork_batch, bin_batches) or a configuration its batch form "
            "declines does this; pass allow_decline=True if that is what the test expects"
        )
        raise AssertionError(msg)
    found = disagreements(single, batched)
    if found:
        shown = "\n  - ".join(found[:_SHOWN_DIFFERENCES])
        more = len(found) - _SHOWN_DIFFERENCES
        tail = f"\n  ... and {more} more" if more > 0 else ""
        msg = (
            f"the batch form of {name} disagrees with its one-by-one form "
            f"({len(found)} difference{'s' if len(found) != 1 else ''}):\n  - {shown}{tail}"
        )
        raise AssertionError(msg)
