"""Auto-merge at write time: few, large chunks out of many small task outputs.

The modes are YTsaurus' operation auto-merge, applied to a flow run writing a dataset:

* ``disabled`` (default): every task's chunks stay as written.
* ``relaxed``: when the run ends, small chunks are merged into chunks near the desired size.
* ``economy``: while the run goes on, the count of *intermediate* chunks (small ones written
  during this run) is kept at or under ``4 * sqrt(n)``, n being the chunks written so far;
  when it goes over, merge jobs bring it down to half of that.
* ``manual``: the same with the user's limits: at most ``max_intermediate_chunk_count``
  intermediate chunks, at most ``chunk_count_per_merge_job`` chunks per merge job.

A chunk is small, so intermediate, while it is under ``chunk_size_threshold`` percent of
``desired_chunk_size``. Merge jobs take the smallest chunks first (so a chunk is merged again
only when it is among the smallest), never make a chunk past the desired size out of several,
and in an ordered dataset merge only neighbours. :func:`plan_merges` is pure: the engine runs
the jobs it returns, and the tests simulate 10,000 tasks with it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Collection, Sequence

import attrs

from flowcore.datasets.model import Chunk
from flowcore.units import parse_data_size

__all__ = [
    "DEFAULT_CHUNK_COUNT_PER_MERGE_JOB",
    "DEFAULT_DESIRED_CHUNK_SIZE",
    "AutoMerge",
    "AutoMergeMode",
    "economy_quota",
    "plan_merges",
]

DEFAULT_DESIRED_CHUNK_SIZE = "1 GB"  # YTsaurus' desired_chunk_size
DEFAULT_CHUNK_SIZE_THRESHOLD = 10  # percent of the desired size (YTsaurus' documented default)
DEFAULT_CHUNK_COUNT_PER_MERGE_JOB = 10_000  # as merge_file_max: the size limit decides first


class AutoMergeMode(enum.Enum):
    """How a dataset sink merges the chunks a run writes."""

    DISABLED = "disabled"
    RELAXED = "relaxed"
    ECONOMY = "economy"
    MANUAL = "manual"


def _positive(_instance: object, attribute: attrs.Attribute, value: int | None) -> None:  # type: ignore[type-arg]
    if value is not None and value < 1:
        msg = f"auto_merge {attribute.name} must be at least 1, not {value}"
        raise ValueError(msg)


@attrs.frozen
class AutoMerge:
    """A sink's ``auto_merge`` section.

    Attributes:
        mode: disabled, relaxed, economy or manual.
        desired_chunk_size: the size merges aim for, in bytes.
        chunk_size_threshold: chunks under this percentage of the desired size are small.
        max_intermediate_chunk_count: manual mode's limit on small chunks (required there).
        chunk_count_per_merge_job: how many chunks one merge job takes at most (required in
            manual mode).
    """

    mode: AutoMergeMode = AutoMergeMode.DISABLED
    desired_chunk_size: int = attrs.field(
        default=int(parse_data_size(DEFAULT_DESIRED_CHUNK_SIZE, "B")), validator=_positive
    )
    chunk_size_threshold: int = attrs.field(
        default=DEFAULT_CHUNK_SIZE_THRESHOLD,
        validator=[attrs.validators.ge(1), attrs.validators.le(100)],
    )
    max_intermediate_chunk_count: int | None = attrs.field(default=None, validator=_positive)
    chunk_count_per_merge_job: int | None = attrs.field(default=None, validator=_positive)

    def __attrs_post_init__(self) -> None:
        if self.mode is AutoMergeMode.MANUAL and (
            self.max_intermediate_chunk_count is None or self.chunk_count_per_merge_job is None
        ):
            msg = (
                "auto_merge mode 'manual' needs both max_intermediate_chunk_count and "
                "chunk_count_per_merge_job"
            )
            raise ValueError(msg)
        if self.chunk_count_per_merge_job == 1:
            msg = "auto_merge chunk_count_per_merge_job must be at least 2 to merge anything"
            raise ValueError(msg)

    @property
    def small_below(self) -> int:
        """Chunks under this many bytes are small (intermediate)."""
        return self.desired_chunk_size * self.chunk_size_threshold // 100

    @property
    def per_job(self) -> int:
        """Chunks one merge job takes at most."""
        return self.chunk_count_per_merge_job or DEFAULT_CHUNK_COUNT_PER_MERGE_JOB

    def limit(self, produced: int) -> int | None:
        """The most intermediate chunks allowed after *produced* chunks (None: no limit)."""
        if self.mode is AutoMergeMode.ECONOMY:
            return economy_quota(produced)
        if self.mode is AutoMergeMode.MANUAL:
            return self.max_intermediate_chunk_count
        return None


def economy_quota(produced: int) -> int:
    """``4 * sqrt(n)`` intermediate chunks, n the chunks written so far (at least 2)."""
    return max(2, math.floor(4 * math.sqrt(produced)))


def _groups(pool: Sequence[Chunk], config: AutoMerge, excess: int | None) -> list[tuple[str, ...]]:
    """Consecutive merge groups over *pool*, until *excess* chunks are gone (None: all).

    A group takes at most ``per_job`` chunks and, past its first two, only chunks that keep it
    within the desired size.
    """
    groups: list[tuple[str, ...]] = []
    removed = 0
    group: list[Chunk] = []
    size = 0
    for chunk in pool:
        full = len(group) >= config.per_job
        too_big = len(group) >= 2 and size + chunk.size > config.desired_chunk_size
        if full or too_big:
            groups.append(tuple(c.id for c in group))
            removed += len(group) - 1
            group, size = [], 0
        group.append(chunk)
        size += chunk.size
        if excess is not None and removed + len(group) - 1 >= excess:
            break
    if len(group) >= 2:
        groups.append(tuple(c.id for c in group))
    return groups


def plan_merges(
    config: AutoMerge,
    chunks: Sequence[Chunk],
    intermediate: Collection[str],
    produced: int,
    *,
    final: bool,
    ordered: bool,
) -> list[tuple[str, ...]]:
    """The merge jobs to run now: each a tuple of chunk ids to merge into one chunk.

    Args:
        config: the sink's auto-merge section.
        chunks: the dataset's chunks in order (the new ones included).
        intermediate: ids of the small chunks written during this run, not merged away yet.
        produced: how many chunks this run's tasks have written.
        final: whether the run is ending (relaxed mode merges then).
        ordered: merge only neighbours.
    """
    if config.mode is AutoMergeMode.DISABLED or (
        config.mode is AutoMergeMode.RELAXED and not final
    ):
        return []
    small = [c for c in chunks if c.id in intermediate and c.size < config.small_below]
    if len(small) < 2:
        return []
    if config.mode is AutoMergeMode.RELAXED:
        excess = None
    else:
        limit = config.limit(produced)
        assert limit is not None
        if len(small) <= limit:
            return []
        excess = len(small) - limit // 2
    if not ordered:
        return _groups(sorted(small, key=lambda c: (c.size, c.id)), config, excess)
    runs: list[list[Chunk]] = [[]]
    for chunk in chunks:
        if chunk.id in intermediate and chunk.size < config.small_below:
            runs[-1].append(chunk)
        elif runs[-1]:
            runs.append([])
    groups: list[tuple[str, ...]] = []
    left = excess
    for run in runs:
        found = _groups(run, config, left)
        groups.extend(found)
        if left is not None:
            left -= sum(len(g) - 1 for g in found)
            if left <= 0:
                break
    return groups
