"""Engine settings in one place, with NiFi-like names and documented defaults.

A :class:`Settings` value travels with every task (it is small and frozen), so the driver and
the executors agree on batch limits, penalties and durability.
"""

from __future__ import annotations

import os

import attrs

from flowcore.units import parse_data_size, parse_time_period

__all__ = ["DEFAULT_REPOSITORY", "Settings"]

#: Where a run keeps its repositories when none is given: next to the flow file.
DEFAULT_REPOSITORY = ".flowcore"


def _positive(instance: object, attribute: attrs.Attribute, value: int) -> None:
    del instance
    if value < 1:
        msg = f"{attribute.name} must be at least 1, got {value}"
        raise ValueError(msg)


@attrs.frozen
class Settings:
    """How the engine schedules and runs micro-batches.

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
        parallelism: tasks a stage run is cut into; the same for every runner, so plans (and
            outputs) do not depend on where they run. Default: the machine's cores.
        shuffle_partitions: partitions of a binning stage's shuffle by group key.
        penalization_period: NiFi's Penalty Duration (default ``30 sec``).
        yield_duration: how long a processor that yielded waits (NiFi's ``1 sec``).
        sync: fsync segments, event files and the log (turn off only for throwaway runs).
        unbounded_source_batches: in batch mode, how many times a source that never runs out
            (GenerateFlowFile) is triggered before the run drains and ends.
        poll_interval: in continuous mode, the pause between micro-batches that found no work.
    """

    batch_max_flowfiles: int = attrs.field(default=100_000, validator=_positive)
    batch_max_batched_flowfiles: int = attrs.field(default=1_000_000, validator=_positive)
    batch_max_bytes: str = "1 GB"
    parallelism: int = attrs.field(factory=lambda: max(1, os.cpu_count() or 1), validator=_positive)
    shuffle_partitions: int = attrs.field(default=8, validator=_positive)
    penalization_period: str = "30 sec"
    yield_duration: str = "1 sec"
    sync: bool = True
    unbounded_source_batches: int = attrs.field(default=1, validator=_positive)
    poll_interval: str = "1 sec"

    @property
    def batch_max_bytes_value(self) -> int:
        """:attr:`batch_max_bytes` in bytes."""
        return int(parse_data_size(self.batch_max_bytes, "B"))

    @property
    def penalization_ms(self) -> int:
        """:attr:`penalization_period` in milliseconds."""
        return int(parse_time_period(self.penalization_period, "ms"))

    @property
    def yield_ms(self) -> int:
        """:attr:`yield_duration` in milliseconds."""
        return int(parse_time_period(self.yield_duration, "ms"))

    @property
    def poll_interval_seconds(self) -> float:
        """:attr:`poll_interval` in seconds."""
        return parse_time_period(self.poll_interval, "ms") / 1000
