"""Engine settings in one place, with NiFi-like names and documented defaults.

A :class:`Settings` value travels with every task (it is small and frozen), so the driver and
the executors agree on batch limits, penalties and durability.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable, Mapping

import attrs

from flowcore.units import parse_data_size, parse_time_period

__all__ = ["DEFAULT_REPOSITORY", "Settings"]

#: Where a run keeps its repositories when none is given: next to the flow file.
DEFAULT_REPOSITORY = ".flowcore"


def _parsable(parse: Callable[[str], float]) -> Callable[[object, attrs.Attribute, str], None]:
    """A validator: the value must parse (as a time period, a data size); errors name the field."""

    def check(instance: object, attribute: attrs.Attribute, value: str) -> None:
        del instance
        try:
            parse(value)
        except ValueError as error:
            msg = f"{attribute.name}: {error}"
            raise ValueError(msg) from None

    return check


_time_period = _parsable(parse_time_period)
_data_size = _parsable(parse_data_size)


def _from_text(name: str, kind: str, text: str) -> object:
    """A setting's value from *text*, by the field's declared type."""
    if kind == "int":
        try:
            return int(text.replace("_", "").replace(",", ""))
        except ValueError:
            msg = f"{name} takes a whole number, got {text!r}"
            raise ValueError(msg) from None
    if kind == "bool":
        if text.lower() in {"true", "yes", "1"}:
            return True
        if text.lower() in {"false", "no", "0"}:
            return False
        msg = f"{name} takes true or false, got {text!r}"
        raise ValueError(msg)
    if kind.startswith("tuple"):
        return tuple(part.strip() for part in text.split(",") if part.strip())
    return text


def _positive(instance: object, attribute: attrs.Attribute, value: int) -> None:
    del instance
    if value < 1:
        msg = f"{attribute.name} must be at least 1, got {value}"
        raise ValueError(msg)


@attrs.frozen
class Settings:
    """How the engine schedules and runs micro-batches.

    Values are given as NiFi writes them (``"1 GB"``, ``"30 sec"``), checked when the settings
    are made, and parsed once: the numbers the engine reads (``batch_max_bytes_value``,
    ``penalization_ms`` ...) are computed on first use and kept.

    Attributes:
        batch_max_flowfiles: FlowFiles one stage run takes from its input queues (whole
            segments, so up to one segment more); in a batch run, also what an unbounded
            source's triggers fill a micro-batch up to. It bounds the FlowFile objects a task
            holds (a few KB each).
        batch_max_batched_flowfiles: FlowFiles one stage run takes in all, and an unbounded
            source fills, when they travel as whole batches (FlowFiles alike but for their
            position, such as GenerateFlowFile's, stored as one record per segment): they cost
            a task bytes, not objects. Should a processor take them one by one after all, a
            task unpacks at most ``batch_max_flowfiles`` of them and returns the other batches,
            whole, to their queue for the next micro-batch.
        batch_max_bytes: content bytes one stage run takes, e.g. ``"1 GB"``.
        batch_hand_over_flowfiles: FlowFiles of batches one session may hold before the task
            takes each batch it transfers on at once (SplitText's splits of a large input),
            through the stage's next processors, so memory stays bounded by a few batches.
        parallelism: tasks a stage run is cut into; the same for every runner, so plans (and
            outputs) do not depend on where they run. Default: the machine's cores.
        shuffle_partitions: partitions of a binning stage's shuffle by group key.
        block_read_min_size: the smallest block a large file is read in when GetFile feeds
            SplitText in one stage: a file of at least two such blocks is read as up to
            ``parallelism`` line-aligned blocks in parallel tasks, instead of one task reading
            it whole (the splits are the same). ``"0 B"`` reads every file in one task.
        driver_run_max_flowfiles: a stage run taking at most this many queued FlowFiles, of at
            most ``driver_run_max_size`` of content in all, and no source work runs in the
            driver's process whatever the runner, as the direct runner runs it: scheduling a
            Spark job costs a tenth of a second or more, the time to run tens of thousands of
            small FlowFiles. 0 sends every run to the runner.
        driver_run_max_size: the content such a run may take (``"16 MB"``): a few large
            FlowFiles (files waiting for SplitText, blocks) go to the runner's parallel tasks.
        penalization_period: NiFi's Penalty Duration (default ``30 sec``).
        yield_duration: how long a processor that yielded waits (NiFi's ``1 sec``).
        administrative_yield_duration: how long a processor whose ``on_scheduled`` raised
            waits before it is scheduled again (NiFi's ``nifi.administrative.yield.duration``,
            ``30 sec``); its input stays queued meanwhile.
        sync: fsync segments, event files and the log (turn off only for throwaway runs).
        unbounded_source_batches: in batch mode, how many times a source that never runs out
            (GenerateFlowFile) is triggered before the run drains and ends.
        poll_interval: in continuous mode, the pause between micro-batches that found no work.
        provenance_max_storage_time: provenance events older than this are purged (NiFi's
            ``nifi.provenance.repository.max.storage.time``, shipped as ``30 days``).
        provenance_max_storage_size: the oldest events are purged while the provenance store
            is larger (NiFi's ``max.storage.size``, ``10 GB``). Both are applied when a run
            starts and then every minute, as NiFi's repository maintenance does.
        provenance_indexed_attributes: attributes whose values the provenance repository
            indexes for search (NiFi's ``indexed.attributes``, empty by default); ``filename``
            always is. As in NiFi, which indexes events as they are written, a search by a
            listed attribute finds the events recorded while it was listed; ``flowcore
            provenance search --attribute`` matches the stored attributes and finds them all.
        provenance_max_attribute_length: provenance stores each attribute value cut to this
            many characters (NiFi's ``nifi.provenance.repository.max.attribute.length``,
            ``65536``; at least 36, so a uuid stays whole), as NiFi's event writers do: large
            values would otherwise be stored again on every event. FlowFiles keep them whole.
        regex_time_limit: how long one match of a flow's regular expression may take
            (Expression Language, File Filter ...; see :mod:`flowcore.patterns`). Over it the
            processor's session rolls back, its FlowFile stays queued (penalized) and a
            bulletin names the pattern; filters over file and attribute names skip the name.
        expression_max_length: the longest string an Expression Language function may make
            (``repeat``, ``padLeft``, ``replace`` ...), e.g. ``"64 MB"`` in characters.
        content_claim_max_appendable_size: NiFi's ``nifi.content.claim.max.appendable.size``:
            small contents share a claim file until it holds this much. Larger claim files
            mean fewer files and faster writes (see docs/reliability.md), and content kept
            on disk until every FlowFile pointing into the file is gone.
        spark_connect_timeout: how long the Spark runner waits for a cluster's master
            (``spark://host:7077``, ``k8s://...``) to accept a connection, then for the session
            to start on it (the JVM's start included), before it gives up with one line naming
            the master, as NiFi's processors wait on a Connection Timeout (``30 sec``). Spark's
            own wait for an unreachable standalone master is over a minute, then a traceback.
        after_commit_budget: how long a commit waits for processors' after-commit actions
            (COMMIT PREPARED, an SFTP delete or move), which run in
            the background, one worker per processor; what is not done by then stays recorded
            in the repository and finishes in the background, or at the next start (``5 sec``;
            ``0 sec`` never waits). A slow server so holds up each commit at most this long.
        python_extensions_source_directory: directories of NiFi 2 Python processors (NiFi's
            ``nifi.python.extensions.source.directory.*``), loaded before a NiFi flow is
            imported so its processors of bundle ``python-extensions`` are found by class name
            (comma-separated as text; ``--python-extensions DIR`` and the environment variable
            ``FLOWCORE_PYTHON_EXTENSIONS`` add to them).
    """

    batch_max_flowfiles: int = attrs.field(default=100_000, validator=_positive)
    batch_max_batched_flowfiles: int = attrs.field(default=1_000_000, validator=_positive)
    batch_max_bytes: str = attrs.field(default="1 GB", validator=_data_size)
    batch_hand_over_flowfiles: int = attrs.field(default=200_000, validator=attrs.validators.ge(0))
    parallelism: int = attrs.field(factory=lambda: max(1, os.cpu_count() or 1), validator=_positive)
    shuffle_partitions: int = attrs.field(default=8, validator=_positive)
    block_read_min_size: str = attrs.field(default="8 MB", validator=_data_size)
    driver_run_max_flowfiles: int = attrs.field(default=20_000, validator=attrs.validators.ge(0))
    driver_run_max_size: str = attrs.field(default="16 MB", validator=_data_size)
    penalization_period: str = attrs.field(default="30 sec", validator=_time_period)
    yield_duration: str = attrs.field(default="1 sec", validator=_time_period)
    administrative_yield_duration: str = attrs.field(default="30 sec", validator=_time_period)
    sync: bool = True
    unbounded_source_batches: int = attrs.field(default=1, validator=_positive)
    poll_interval: str = attrs.field(default="1 sec", validator=_time_period)
    provenance_max_storage_time: str = attrs.field(default="30 days", validator=_time_period)
    provenance_max_storage_size: str = attrs.field(default="10 GB", validator=_data_size)
    provenance_indexed_attributes: tuple[str, ...] = attrs.field(
        default=(), converter=lambda names: (names,) if isinstance(names, str) else tuple(names)
    )
    provenance_max_attribute_length: int = attrs.field(
        default=65_536, validator=attrs.validators.ge(36)
    )
    regex_time_limit: str = attrs.field(default="1 sec", validator=_time_period)
    expression_max_length: str = attrs.field(default="64 MB", validator=_data_size)
    content_claim_max_appendable_size: str = attrs.field(default="1 MB", validator=_data_size)
    spark_connect_timeout: str = attrs.field(default="30 sec", validator=_time_period)
    after_commit_budget: str = attrs.field(default="5 sec", validator=_time_period)
    python_extensions_source_directory: tuple[str, ...] = attrs.field(
        default=(), converter=lambda dirs: (dirs,) if isinstance(dirs, str) else tuple(dirs)
    )

    @classmethod
    def parse(cls, texts: Mapping[str, str], **values: object) -> Settings:
        """Settings from text, as a command line or a properties file gives them.

        *texts* maps field names (``provenance_max_storage_time``, or with dashes) to their
        values as text: integers, ``true``/``false``, comma-separated lists for
        ``provenance_indexed_attributes``. Keyword *values* are taken as they are; *texts* win
        over them for the same name.

        Raises:
            ValueError: an unknown name (with the closest one) or a value the field refuses.
        """
        fields = {f.name: f for f in attrs.fields(cls)}
        for raw, text in texts.items():
            name = raw.strip().replace("-", "_")
            field = fields.get(name)
            if field is None:
                close = difflib.get_close_matches(name, fields, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                msg = f"unknown setting {raw!r}; {hint}settings: {', '.join(fields)}"
                raise ValueError(msg)
            values[name] = _from_text(name, str(field.type), text.strip())
        return cls(**values)

    @functools.cached_property
    def block_read_min_bytes(self) -> int:
        """:attr:`block_read_min_size` in bytes (0: files are never read in blocks)."""
        return int(parse_data_size(self.block_read_min_size, "B"))

    @functools.cached_property
    def batch_max_bytes_value(self) -> int:
        """:attr:`batch_max_bytes` in bytes."""
        return int(parse_data_size(self.batch_max_bytes, "B"))

    @functools.cached_property
    def driver_run_max_bytes(self) -> int:
        """:attr:`driver_run_max_size` in bytes."""
        return int(parse_data_size(self.driver_run_max_size, "B"))

    @functools.cached_property
    def content_claim_max_appendable_bytes(self) -> int:
        """:attr:`content_claim_max_appendable_size` in bytes."""
        return int(parse_data_size(self.content_claim_max_appendable_size, "B"))

    @functools.cached_property
    def penalization_ms(self) -> int:
        """:attr:`penalization_period` in milliseconds."""
        return int(parse_time_period(self.penalization_period, "ms"))

    @functools.cached_property
    def yield_ms(self) -> int:
        """:attr:`yield_duration` in milliseconds."""
        return int(parse_time_period(self.yield_duration, "ms"))

    @functools.cached_property
    def administrative_yield_ms(self) -> int:
        """:attr:`administrative_yield_duration` in milliseconds."""
        return int(parse_time_period(self.administrative_yield_duration, "ms"))

    @functools.cached_property
    def regex_time_limit_seconds(self) -> float:
        """:attr:`regex_time_limit` in seconds."""
        return parse_time_period(self.regex_time_limit, "ms") / 1000

    @functools.cached_property
    def expression_max_chars(self) -> int:
        """:attr:`expression_max_length` as a number of characters."""
        return int(parse_data_size(self.expression_max_length, "B"))

    @functools.cached_property
    def spark_connect_timeout_seconds(self) -> float:
        """:attr:`spark_connect_timeout` in seconds."""
        return parse_time_period(self.spark_connect_timeout, "ms") / 1000

    @functools.cached_property
    def after_commit_budget_seconds(self) -> float:
        """:attr:`after_commit_budget` in seconds."""
        return parse_time_period(self.after_commit_budget, "ms") / 1000

    @functools.cached_property
    def poll_interval_seconds(self) -> float:
        """:attr:`poll_interval` in seconds."""
        return parse_time_period(self.poll_interval, "ms") / 1000
