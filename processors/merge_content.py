"""MergeContent: merge groups of FlowFiles into bundles, by bin packing or by defragmenting."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import processors._merge_batches as batched
import processors._merge_bins as bins
import processors._merge_bundles as bundles
import processors._merge_entries as entries
import processors._merge_formats as formats
import processors._merge_properties as props
from flowcore.errors import ExpressionEvaluationError, ProcessException
from flowcore.expression import compile_expression, contains_expression
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, constant_column
from flowcore.processor.binning import (
    FRAGMENT_COUNT,
    FRAGMENT_INDEX,
    BatchBinning,
    Bin,
    BinManager,
    InsertionStrategy,
)
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors._merge_bins import (
    DEFRAGMENT_DROPPED,
    MERGE_BIN_AGE,
    MERGE_COUNT,
    MERGE_REASON,
    HeldBins,
)
from processors._merge_bundles import FRAGMENT_ID, SEGMENT_ORIGINAL_FILENAME
from processors._merge_properties import (
    MERGE_STRATEGY_BIN_PACK,
)

__all__ = ["MergeContent"]


MERGE_UUID = "merge.uuid"
BATCH = 1000  # FlowFiles pulled per session.get, as NiFi's BinFiles

REL_MERGED = Relationship("merged", "The FlowFile containing the merged content")
REL_ORIGINAL = Relationship("original", "The FlowFiles that were used to create the bundle")
REL_FAILURE = Relationship(
    "failure",
    "If the bundle cannot be created, all FlowFiles that would have been used to create the "
    "bundle will be transferred to failure",
)


class MergeContent(HeldBins):
    """Merges a group of FlowFiles into one bundle (NiFi's MergeContent).

    Bin-Packing fills bins by entries and bytes, per Correlation Attribute value; Defragment
    reassembles ``fragment.*`` pieces (from SplitText, FileSplitter ...) in ``fragment.index``
    order. Bins hold FlowFile records only; content is streamed into the bundle, so memory stays
    flat however large the inputs. Formats: Binary Concatenation (with header, footer and
    demarcator), TAR, ZIP, FlowFile Stream v3 and v2, FlowFile Tar v1, Avro. The merged FlowFile
    gets ``merge.count``, ``merge.bin.age``, ``merge.reason``, ``mime.type`` and ``filename``; each
    original gets ``merge.uuid``; a JOIN provenance event records the bundle.

    In the test harness FlowFiles wait in bins across triggers (each bin in a session of its own)
    and go back to the queue when the processor stops, as with NiFi's mock. As in current NiFi,
    Defragment removes ``fragment.*`` and ``segment.original.filename`` from the reassembled
    FlowFile (its filename is taken from ``segment.original.filename`` first).
    """

    MERGE_STRATEGY = props.MERGE_STRATEGY
    MERGE_FORMAT = props.MERGE_FORMAT
    ATTRIBUTE_STRATEGY = props.ATTRIBUTE_STRATEGY
    CORRELATION_ATTRIBUTE_NAME = props.CORRELATION_ATTRIBUTE_NAME
    METADATA_STRATEGY = props.METADATA_STRATEGY
    MIN_ENTRIES = props.MIN_ENTRIES
    MAX_ENTRIES = props.MAX_ENTRIES
    MIN_SIZE = props.MIN_SIZE
    MAX_SIZE = props.MAX_SIZE
    BIN_TERMINATION_CHECK = props.BIN_TERMINATION_CHECK
    FLOWFILE_INSERTION_STRATEGY = props.FLOWFILE_INSERTION_STRATEGY
    MAX_BIN_AGE = props.MAX_BIN_AGE
    MAX_BIN_COUNT = props.MAX_BIN_COUNT
    DELIMITER_STRATEGY = props.DELIMITER_STRATEGY
    HEADER = props.HEADER
    FOOTER = props.FOOTER
    DEMARCATOR = props.DEMARCATOR
    COMPRESSION_LEVEL = props.COMPRESSION_LEVEL
    KEEP_PATH = props.KEEP_PATH
    TAR_MODIFIED_TIME = props.TAR_MODIFIED_TIME
    ZERO_COPY = props.ZERO_COPY

    property_descriptors: ClassVar = props.PROPERTY_DESCRIPTORS
    relationships: ClassVar = (REL_ORIGINAL, REL_MERGED, REL_FAILURE)
    tags: ClassVar = (
        "merge",
        "content",
        "correlation",
        "tar",
        "zip",
        "stream",
        "concatenation",
        "archive",
        "flowfile-stream",
        "flowfile-stream-v3",
    )
    reads_attributes: ClassVar[Mapping[str, str]] = {
        FRAGMENT_ID: "Defragment: FlowFiles with the same value are merged together",
        FRAGMENT_INDEX: "Defragment: the order of the fragments (an integer)",
        FRAGMENT_COUNT: "Defragment: how many fragments make the whole",
        SEGMENT_ORIGINAL_FILENAME: "Becomes the merged FlowFile's filename",
        "tar.permissions": "TAR: the entry's permissions (parsed as decimal, as NiFi does)",
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "The merged FlowFile's name (a segment.original.filename when present)",
        MERGE_COUNT: "The number of FlowFiles merged",
        MERGE_BIN_AGE: "The age of the bin, in milliseconds, when it was merged",
        MERGE_REASON: "Why the bin was merged",
        MERGE_UUID: "On each original: the uuid of the merged FlowFile",
        "mime.type": "The MIME type of the merged content",
    }

    # --- validation -------------------------------------------------------------------------

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Min/max checks, and delimiter files that must exist (Filename strategy)."""
        problems = []
        bin_pack = values.get(self.MERGE_STRATEGY.name) == MERGE_STRATEGY_BIN_PACK.value
        if bin_pack:
            problems.extend(self._min_max_problems(values))
        concat = values.get(self.MERGE_FORMAT.name) == formats.FORMAT_CONCAT
        by_file = values.get(self.DELIMITER_STRATEGY.name) == formats.DELIMITER_FILENAME
        if concat and by_file:
            from pathlib import Path  # noqa: PLC0415 - only for this check

            for descriptor in (self.HEADER, self.FOOTER, self.DEMARCATOR):
                path = values.get(descriptor.name)
                if path and not contains_expression(path) and not Path(path).is_file():
                    problems.append(
                        ValidationResult(
                            descriptor.display_name, path, False, f"File {path} does not exist"
                        )
                    )
        return problems

    def _min_max_problems(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        from flowcore.units import parse_data_size  # noqa: PLC0415

        problems = []
        try:
            low_size = parse_data_size(values.get(self.MIN_SIZE.name) or "0 B")
            high = values.get(self.MAX_SIZE.name)
            if high is not None and parse_data_size(high) < low_size:
                problems.append(
                    ValidationResult(
                        self.MAX_SIZE.display_name,
                        high,
                        False,
                        "Min Size must be less than or equal to Max Size",
                    )
                )
        except ValueError:
            pass  # reported by the property's own validator
        try:
            low_entries = int(values.get(self.MIN_ENTRIES.name) or "1")
            high_entries = int(values.get(self.MAX_ENTRIES.name) or "1000")
            if high_entries < low_entries:
                problems.append(
                    ValidationResult(
                        self.MIN_ENTRIES.display_name,
                        str(low_entries),
                        False,
                        "Min Entries must be less than or equal to Max Entries",
                    )
                )
        except ValueError:
            pass
        return problems

    # --- configuration helpers ---------------------------------------------------------------

    def max_bin_age_ms(self, context: ProcessContext) -> int | None:
        """Max Bin Age in milliseconds (None when not set)."""
        return bins.max_bin_age_ms(context)

    def group_key(self, context: ProcessContext, flowfile: FlowFile) -> str | None:
        """The bin group: the correlation attribute's value, or ``fragment.identifier``.

        Raises:
            ExpressionEvaluationError: the Correlation Attribute Name cannot be evaluated.
        """
        if bins.defragments(context):
            return flowfile.attributes.get(FRAGMENT_ID)
        name = (
            context.get_property(self.CORRELATION_ATTRIBUTE_NAME)
            .evaluate_attribute_expressions(flowfile)
            .value
        )
        return flowfile.attributes.get(name) if name else None

    def group_column(self, context: ProcessContext, batch: FlowFileBatch) -> Column | None:
        """:meth:`group_key` of every FlowFile: a column, when the attribute name is fixed."""
        if bins.defragments(context):
            name: str | None = FRAGMENT_ID
        else:
            name = context.get_property(self.CORRELATION_ATTRIBUTE_NAME).value
            if name and contains_expression(name):
                return None
        column = batch.column(name) if name else None
        return column if column is not None else constant_column(None, batch.count)

    def single_group(self, context: ProcessContext) -> bool:
        """Bin packing without a Correlation Attribute Name puts every FlowFile in one group."""
        if bins.defragments(context):
            return False
        return not context.get_property(self.CORRELATION_ATTRIBUTE_NAME).value

    def _termination(
        self, context: ProcessContext
    ) -> tuple[Callable[[FlowFile], bool] | None, InsertionStrategy]:
        text = context.get_property(self.BIN_TERMINATION_CHECK).value
        if bins.defragments(context) or not text:
            return None, InsertionStrategy.LAST_IN_BIN
        expression = compile_expression(text)
        strategy = InsertionStrategy(context.get_property(self.FLOWFILE_INSERTION_STRATEGY).value)
        return (lambda flowfile: expression.evaluate_boolean(flowfile, clock=context.now)), strategy

    # --- triggering (NiFi's BinFiles.onTrigger) ----------------------------------------------

    def on_trigger_sessions(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession]
    ) -> None:
        """Bin new FlowFiles, move ready bins out, and merge them."""
        if self._manager is None:
            self._manager = BinManager(
                bins.bin_limits(context),
                FRAGMENT_COUNT if bins.defragments(context) else None,
                age_from_queue_date=context.resumed_bins,
            )
        max_bins = context.get_property(self.MAX_BIN_COUNT).as_integer() or 5
        binned = 0
        skipped = self._manager.bin_count + len(self._ready) > max_bins
        if not skipped:
            binned = self._bin_flowfiles(context, session_factory, max_bins)
        self._migrate(context, relaxed=binned == 0, max_bins=max_bins, could_not_bin=skipped)
        self._process_ready(context)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Not used: MergeContent manages its own sessions (see on_trigger_sessions)."""
        del context, session

    def _bin_flowfiles(
        self, context: ProcessContext, session_factory: Callable[[], ProcessSession], max_bins: int
    ) -> int:
        assert self._manager is not None
        terminates, strategy = self._termination(context)
        one_group = self.single_group(context)
        binned = 0
        while self._manager.bin_count <= max_bins:
            intake = session_factory()
            flowfiles = intake.get(BATCH)
            if not flowfiles:
                break
            if one_group:  # no correlation attribute to evaluate per FlowFile
                groups: dict[str | None, list[FlowFile]] = {None: flowfiles}
            else:
                groups = self._groups(context, intake, flowfiles)
            now = context.now()
            for key, members in groups.items():
                moving: dict[int, list[FlowFile]] = {}  # bin id -> its new FlowFiles, in order
                for offer in self._manager.offer(key, members, now, terminates, strategy):
                    if offer.bin.id not in self._sessions:
                        self._sessions[offer.bin.id] = session_factory()
                    moving.setdefault(offer.bin.id, []).append(offer.flowfile)
                    if offer.alone:
                        self._ready.append(offer.bin)
                for bin_id, moved in moving.items():
                    intake.migrate(self._sessions[bin_id], moved)
            intake.commit()
            binned += len(flowfiles)
        return binned

    def _groups(
        self, context: ProcessContext, session: ProcessSession, flowfiles: list[FlowFile]
    ) -> dict[str | None, list[FlowFile]]:
        """FlowFiles by bin group, in order; one whose group cannot be told goes to failure."""
        groups: dict[str | None, list[FlowFile]] = {}
        for flowfile in flowfiles:
            try:
                key = self.group_key(context, flowfile)
            except ExpressionEvaluationError:
                context.logger.exception(
                    "Could not determine which bin to add %s to; routing to failure", flowfile
                )
                session.transfer(flowfile, REL_FAILURE)
                continue
            groups.setdefault(key, []).append(flowfile)
        return groups

    def _migrate(
        self, context: ProcessContext, *, relaxed: bool, max_bins: int, could_not_bin: bool
    ) -> None:
        assert self._manager is not None
        self._ready.extend(
            bins.take_ready(
                self._manager,
                context,
                relaxed=relaxed,
                max_bins=max_bins,
                could_not_bin=could_not_bin,
            )
        )

    # --- whole FlowFile batches (processors/_merge_batches.py) -------------------------------

    def bin_batches(
        self, context: ProcessContext, batches: Sequence[FlowFileBatch], *, end_of_input: bool
    ) -> BatchBinning | None:
        """The bins the triggers would make from *batches*, packed by count (see the module)."""
        return batched.bin_batches(context, batches, end_of_input=end_of_input, intake_size=BATCH)

    def merge_batches(
        self,
        context: ProcessContext,
        session: ProcessSession,
        batches: Sequence[FlowFileBatch],
        bin_: Bin,
    ) -> tuple[str, Mapping[str, str]] | None:
        """Merge a bin of batch cuts; the originals go as batches.

        Binary Concatenation merges from the cuts' byte ranges (``_merge_batches``); the other
        formats make the bin's FlowFiles and run the one-by-one path's merger over them
        (``_merge_entries``), raising to leave a bin that would send FlowFiles to failure to
        the one-by-one path.
        """
        defragment = bins.defragments(context)
        if defragment:  # the bundle in fragment.index order; the originals keep queue order
            batches = batched.in_fragment_order(batches)
        if bins.merge_format(context) != formats.FORMAT_CONCAT:
            bundle = entries.merge_entries(context, session, batches, bin_)
        else:
            drop = DEFRAGMENT_DROPPED if defragment else frozenset()
            bundle = batched.merge_bundle(context, session, batches, bin_, drop=drop)
            if defragment:
                bundle = session.remove_all_attributes(bundle, DEFRAGMENT_DROPPED)
        session.transfer(bundle, REL_MERGED)
        if context.is_auto_terminated(REL_ORIGINAL):
            return REL_ORIGINAL.name, {}
        return REL_ORIGINAL.name, {MERGE_UUID: bundle.uuid}

    # --- merging one bin (NiFi's processBin) --------------------------------------------------

    def merge_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        """Merge a ready bin handed over by the engine (its session holds the FlowFiles)."""
        self._process_bin(context, session, bin_)

    def _process_bin(self, context: ProcessContext, session: ProcessSession, bin_: Bin) -> None:
        contents = list(bin_.flowfiles)
        if bins.defragments(context):
            problem = bundles.defragment_problem(contents)
            if problem is not None:
                context.logger.error(
                    "Cannot defragment %d FlowFiles (%s); routing them to failure",
                    len(contents),
                    problem,
                )
                session.transfer(contents, REL_FAILURE)
                return
            contents.sort(key=lambda f: int(f.attributes[FRAGMENT_INDEX]))
        bundle = session.create(contents)
        try:
            bundle, unmerged = bins.merged(context, session, bundle, contents, bin_)
        except ProcessException:
            context.logger.exception(
                "Failed to merge %d FlowFiles; routing to failure", len(contents)
            )
            session.remove(bundle)
            session.transfer(contents, REL_FAILURE)
            return
        for flowfile in unmerged:
            session.transfer(session.clone(flowfile), REL_FAILURE)
        session.transfer(bundle, REL_MERGED)
        if context.is_auto_terminated(REL_ORIGINAL):
            session.transfer(contents, REL_ORIGINAL)
        else:
            session.transfer(
                [session.put_attribute(f, MERGE_UUID, bundle.uuid) for f in contents], REL_ORIGINAL
            )
