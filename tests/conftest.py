"""Shared fixtures and the Hypothesis profiles for the whole suite."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
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
