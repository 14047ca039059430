"""Helpers for comparing a processor's batch form with its one-by-one form inside a real flow.

GetFile -> SplitText (one line each) -> the processor, every relationship auto-terminated, on
a runner; the outcome is the provenance events as shapes in the order of their ids (with the
bytes each event's content and previous content name, read back from the content repository,
live or archived) and the transfer counts. Running the processor and a subclass whose
``transform_batch`` declines gives two outcomes that must be equal, events in the same order.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from flowcore import Flow, ProvenanceEvent
from flowcore.driver.controller import run_flow
from flowcore.processor import Processor
from flowcore.processor.context import ProcessContext
from flowcore.session.process_session import ProcessSession
from flowcore.settings import Settings
from processors import GetFile, SplitText
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import by_flowfile

SETTINGS = Settings(sync=False, parallelism=1)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class BatchOnly:
    """Mixed into a processor: a FlowFile that reaches ``on_trigger`` goes on marked (to
    ``marked_to``), so a run the batch form was meant to take whole but did not shows in its
    events."""

    marked_to = "success"

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Mark the FlowFile as having gone one by one."""
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(session.put_attribute(flowfile, "went", "one by one"), self.marked_to)


class OneByOne:
    """Mixed into a processor: its batch form declines, so every FlowFile goes one by one."""

    def transform_batch(self, context: object, batch: object) -> None:
        """Decline."""
        del context, batch


def line_flow(source: Path, processor: Processor) -> Flow:
    """GetFile (*source*) -> SplitText (one line each) -> *processor* (named ``step``)."""
    flow = Flow("batch-form")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1, remove_trailing_newlines=False), name="split")
    step = flow.add(processor, name="step")
    flow.connect(get, split)
    flow.connect(split, step, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(step, list(processor.relationship_names()))
    return flow


def _plain(attributes: object) -> tuple:
    """Attributes without what differs between two runs: uuids, the input's access time."""
    kept = {k: v for k, v in dict(attributes).items() if k != "file.lastAccessTime"}  # type: ignore[call-overload]
    return tuple(sorted((k, _UUID.sub("<uuid>", v)) for k, v in kept.items()))


def flow_outcome(root: Path, flow: Flow, runner: str = "direct") -> tuple[list, dict]:
    """Run *flow*; its events' shapes FlowFile by FlowFile (contents read back) and its
    transfer counts."""
    result = run_flow(flow, runner, repository=root / "repo", settings=SETTINGS)
    assert not result.bulletins, result.bulletins
    repos = RepositorySet.open(root / "repo")
    try:

        def read(claim: object) -> bytes | None:
            return None if claim is None else repos.content.read(claim)  # type: ignore[arg-type]

        def shape(event: ProvenanceEvent) -> tuple:
            return (
                event.event_type.value,
                event.component_name,
                event.relationship,
                event.details,
                event.file_size,
                event.previous_file_size,
                _plain(event.previous_attributes),
                _plain(event.updated_attributes),
                read(event.content_claim),
                read(event.previous_content_claim),
                event.source_queue_identifier is not None,
                len(event.parent_uuids),
                len(event.child_uuids),
            )

        events = repos.provenance.search(limit=1_000_000)
        shapes = [shape(e) for e in by_flowfile(sorted(events, key=lambda e: e.event_id))]
    finally:
        repos.close()
    return shapes, {name: dict(counts) for name, counts in result.transfers.items()}


def agree_in_a_flow(
    root: Path, lines: list[bytes], batched: Processor, single: Processor, runner: str = "direct"
) -> tuple[Counter, dict]:
    """Run *lines* through *batched* and through *single* (its batch form declined); assert
    both flows record the same events, each FlowFile's in the same order, and the same
    transfers, and return the batch form's (events as a multiset)."""
    source = root / "in"
    source.mkdir(parents=True)
    (source / "lines.txt").write_bytes(b"".join(lines))
    whole = flow_outcome(root / "whole", line_flow(source, batched), runner)
    one_by_one = flow_outcome(root / "single", line_flow(source, single), runner)
    assert whole[1] == one_by_one[1]
    expected, got = Counter(one_by_one[0]), Counter(whole[0])
    missing, extra = expected - got, got - expected
    assert not missing, list(missing)[:5]
    assert not extra, list(extra)[:5]
    pairs = enumerate(zip(whole[0], one_by_one[0], strict=True))  # as many: same multiset
    at = next((i for i, (a, b) in pairs if a != b), None)
    assert at is None, (at, whole[0][at], one_by_one[0][at])
    return got, whole[1]
