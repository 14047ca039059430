"""MergeContent's batch merge in the archive and packaging formats, one merger for both paths.

A ready bin of batch cuts (:func:`processors._merge_batches.bin_batches`) in TAR, ZIP, FlowFile
Stream v3 or v2, FlowFile Tar v1 or Avro is merged by the one-by-one path's merger code
(``processors/_merge_formats.py``). These formats write each entry's name, permissions, times
or attributes, so the bin's FlowFiles are made as objects here, for this bin only (binning
never makes them). What the session cannot do for FlowFiles it does not hold is read their
content, so :class:`BinContents` lays the bin's contents in one FlowFile of the session (a rope
of the cuts' ranges when they lie back to back, else one gathered copy) and gives the mergers
each entry's bytes from it, reading on from where the last entry ended.

The bundle is made as the one-by-one path makes it: a JOIN of every FlowFile of the bin, the
attributes of :func:`processors._merge_bins.merged`. A FlowFile the format
cannot take (a ZIP name used twice, an Avro file of another schema) goes to ``failure`` one by
one, which a batch merge cannot do: the merge raises :class:`MergeDeclined`, the session rolls
back and the bin is merged one FlowFile at a time. So does any failure (not an Avro file).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

import processors._merge_bins as bins
from flowcore.flowfile import CountedUuids, FlowFile
from processors._merge_batches import batch_contents, representatives, uuid_runs
from processors._merge_bundles import common_attributes
from processors._packaging import Bounded

if TYPE_CHECKING:
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.processor.binning import Bin
    from flowcore.processor.context import ProcessContext
    from flowcore.session.process_session import ProcessSession

__all__ = ["BinContents", "MergeDeclined", "merge_entries"]


class MergeDeclined(Exception):
    """A batch merge leaves this bin to the one-by-one path (the session rolls back)."""


class BinContents:
    """The contents of a bin of batch cuts, readable entry by entry in the merge session.

    The contents are laid in one FlowFile of *session*, created and removed here (a FlowFile
    created and removed in one session leaves no provenance). Entries read in bin order come
    from one open stream; an entry read out of order (an Avro file's records after every
    header was read) opens the stream again where it starts.

    Use it as a context manager; :meth:`read` is the mergers' ``read``.
    """

    def __init__(
        self, session: ProcessSession, batches: Sequence[FlowFileBatch], flowfiles: list[FlowFile]
    ) -> None:
        self._session = session
        self._flowfiles = flowfiles  # kept alive: the places are keyed by object identity
        places: dict[int, tuple[int, int]] = {}
        offset = 0
        for flowfile in flowfiles:
            places[id(flowfile)] = (offset, flowfile.size)
            offset += flowfile.size
        self._places = places
        self._total = offset
        # Back-to-back cuts are a few ranges: a rope of them (no copy) when the policy keeps
        # it. Ranges scattered through a claim are gathered into one copy in one pass.
        whole = all(b.back_to_back() for b in batches)
        laid = session.create()
        self._laid = session.merge_contents(batch_contents(batches, None), laid, zero_copy=whole)
        self._open = ExitStack()
        self._stream: Any = None
        self._position = -1

    def __enter__(self) -> BinContents:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self._open.close()
        if kind is None:  # else the session is rolled back, the laid contents with it
            self._session.remove(self._laid)

    @contextmanager
    def read(self, flowfile: FlowFile) -> Iterator[Bounded]:
        """*flowfile*'s content, as ``session.read`` gives it.

        Raises:
            KeyError: *flowfile* is not one of the bin's (a bug).
        """
        offset, size = self._places[id(flowfile)]
        if not size:
            yield Bounded(None, 0)
            return
        if self._stream is None or self._position != offset:
            self._open.close()
            self._open = ExitStack()
            self._stream = self._open.enter_context(
                self._session.read(self._laid, offset, self._total - offset)
            )
        view = Bounded(self._stream, size)
        try:
            yield view
        finally:
            self._position = offset + size - view.left


def merge_entries(
    context: ProcessContext,
    session: ProcessSession,
    batches: Sequence[FlowFileBatch],
    bin_: Bin,
) -> FlowFile:
    """The merged FlowFile of a bin of batch cuts, created and written in *session*.

    Raises:
        MergeDeclined: the format leaves a FlowFile unmerged (it goes to failure one by one).
        ProcessException: the contents cannot be merged (not Avro files ...): the one-by-one
            path routes the bin to failure.
    """
    flowfiles = [f for batch in batches for f in batch.flowfiles()]
    shown = representatives(batches)  # they decide the attributes kept, at a fraction of the cost
    oldest = min(flowfiles, key=lambda f: (f.lineage_start_date, f.lineage_start_index))
    parents = CountedUuids(run for batch in batches for run in uuid_runs(batch))
    bundle = session.create_joined(parents, common_attributes(shown), oldest)
    with BinContents(session, batches, flowfiles) as contents:
        bundle, unmerged = bins.merged(
            context, session, bundle, flowfiles, bin_, read=contents.read, shown=shown
        )
    if unmerged:
        msg = (
            f"{len(unmerged)} of {len(flowfiles)} FlowFiles cannot go in the bundle (first: "
            f"{unmerged[0]}); they go to failure one by one"
        )
        raise MergeDeclined(msg)
    return bundle
