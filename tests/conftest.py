"""Shared fixtures and the Hypothesis profiles for the whole suite."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from flowcore.datasets.model import Chunk, Manifest, Mergeability
from flowcore.datasets.store import Dataset, write_chunk

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_SPARK = pytest.param(
    "spark",
    marks=[
        pytest.mark.spark,
        pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
    ],
)


@pytest.fixture(params=["direct", _SPARK])
def runner(request: pytest.FixtureRequest) -> str:
    """The name of each runner, as ``run_flow`` and ``flow.run(runner=...)`` take it: a test
    asking for it runs once on the direct runner and once on Spark (marked ``spark``).

    Every Spark case shares the process's one session (``spark_session``, local[*]), as
    tests/flowcore/runners/test_spark.py does; only the first pays for starting it.
    """
    if request.param == "spark":
        from flowcore.runners.spark import spark_session  # pyspark only when asked for

        spark_session()
    return request.param


def _write_line_inputs(root: Path, files: int = 8) -> bytes:
    (root / "in").mkdir(parents=True)
    rng = random.Random(4)
    for n in range(files):
        lines = [f"{n}:{i}:" + "z" * rng.randint(0, 50) + "\n" for i in range(rng.randint(50, 400))]
        (root / "in" / f"f{n}.txt").write_text("".join(lines))
    return b"".join(sorted(line for p in (root / "in").iterdir() for line in p.open("rb")))


@pytest.fixture
def line_inputs() -> Callable[..., bytes]:
    """Writes `files` files of distinct lines under `root/in`; returns every line, sorted."""
    return _write_line_inputs


def _published_dataset(
    root: Path, sizes: list[int], *, mergeability: Mergeability = Mergeability.ALWAYS
) -> Dataset:
    dataset = Dataset(root)
    chunks = []
    rng = random.Random(len(sizes))
    for n, size in enumerate(sizes):
        data = rng.randbytes(size)
        write_chunk(dataset.chunk_path(f"c{n:04d}"), [data])
        chunks.append(Chunk(f"c{n:04d}", size, 1, 0, mergeability))
    dataset.stage(Manifest(1, tuple(chunks), ordered=True, demarcator=b"\n"))
    dataset.publish(1)
    return dataset


@pytest.fixture
def published_dataset() -> Callable[..., Dataset]:
    """Makes a dataset at ``root`` with one published version of random chunks of ``sizes``."""
    return _published_dataset
