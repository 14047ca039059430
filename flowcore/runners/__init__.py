"""Runners execute a stage run's tasks; the controller plans and commits around them.

``DirectRunner`` (:mod:`flowcore.runners.direct`) runs them in the driver's process;
``SparkRunner`` (:mod:`flowcore.runners.spark`) distributes them. That module and
:mod:`flowcore.runners.spark_sources` (Spark reads datasets and provenance as DataFrames) are
the only ones that import pyspark. What both runners execute is in :mod:`flowcore.runners.jobs`;
this module chooses one by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowcore.errors import ConfigurationError

if TYPE_CHECKING:
    from flowcore.runners.jobs import Runner

__all__ = ["RUNNERS", "make_runner"]


#: Runner names accepted by ``flow.run(runner=...)`` and ``flowcore run --runner``.
RUNNERS = ("direct", "spark")


def make_runner(
    name: str,
    *,
    master: str | None = None,
    conf: dict[str, str] | None = None,
    spark: Any = None,
    connect_timeout: float | None = None,
) -> Runner:
    """A runner by name.

    Args:
        name: one of :data:`RUNNERS`.
        master: the Spark master URL.
        conf: Spark configuration for a session flowcore starts.
        spark: a SparkSession to run on, as it is (``flow.run(spark=...)``).
        connect_timeout: seconds to wait for a cluster's master (``spark_connect_timeout``).

    Raises:
        ConfigurationError: an unknown name, Spark options given to the direct runner, or what
            :class:`~flowcore.runners.spark.SparkRunner` refuses.
    """
    if name == "direct":
        for option, given in (("master", master), ("spark", spark)):
            if given is not None:
                shown = repr(given) if isinstance(given, str) else "(a SparkSession)"
                msg = f"{option} {shown} only applies to runner='spark'"
                raise ConfigurationError(msg)
        from flowcore.runners.direct import DirectRunner  # noqa: PLC0415

        return DirectRunner()
    if name == "spark":
        from flowcore.runners.masters import DEFAULT_CONNECT_TIMEOUT  # noqa: PLC0415
        from flowcore.runners.spark import SparkRunner  # noqa: PLC0415 - pyspark only here

        return SparkRunner(
            master=master,
            conf=conf,
            session=spark,
            connect_timeout=DEFAULT_CONNECT_TIMEOUT if connect_timeout is None else connect_timeout,
        )
    msg = f"unknown runner {name!r}; use one of: {', '.join(RUNNERS)}"
    raise ConfigurationError(msg)
