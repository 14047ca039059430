"""Datasets: a sink's output as a few large chunks plus atomically published manifests.

``flowcore.datasets.open(path)`` reads the current version; see :mod:`.store` for the layout,
:mod:`.auto_merge` for merging at write time and :mod:`.compaction` for the maintenance pass.
"""

from __future__ import annotations

import os

from flowcore.datasets.auto_merge import AutoMerge, AutoMergeMode, economy_quota, plan_merges
from flowcore.datasets.compaction import Compaction, compact, plan_compaction
from flowcore.datasets.model import Chunk, Manifest, Mergeability, MergeabilityKind
from flowcore.datasets.store import RETAINED_VERSIONS, Dataset

__all__ = [
    "RETAINED_VERSIONS",
    "AutoMerge",
    "AutoMergeMode",
    "Chunk",
    "Compaction",
    "Dataset",
    "Manifest",
    "Mergeability",
    "MergeabilityKind",
    "compact",
    "economy_quota",
    "open",
    "plan_compaction",
    "plan_merges",
]


def open(path: str | os.PathLike[str]) -> Dataset:
    """The dataset at *path*; ``.manifest()`` is its current version, ``.iter_bytes()`` its data."""
    return Dataset(path)
