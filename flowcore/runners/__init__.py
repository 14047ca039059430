"""Runners execute a stage run's tasks; the controller plans and commits around them.

``DirectRunner`` (:mod:`flowcore.runners.direct`) runs them in the driver's process;
``SparkRunner`` (:mod:`flowcore.runners.spark`, the only module that imports pyspark)
distributes them. What both execute is in :mod:`flowcore.runners.jobs`; this module chooses one
by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowcore.errors import ConfigurationError

if TYPE_CHECKING:
    from flowcore.runners.jobs import Runner

__all__ = ["RUNNERS", "make_runner"]


#: Runner names accepted by ``flow.run(runner=...)`` and ``flowcore run --runner``.
RUNNERS = ("direct", "spark")


def make_runner(
    name: str, *, master: str | None = None, conf: dict[str, str] | None = None
) -> Runner:
    """A runner by name.

    Raises:
        ConfigurationError: an unknown name, or Spark options given to the direct runner.
    """
    if name == "direct":
        if master is not None:
            msg = f"master {master!r} only applies to runner='spark'"
            raise ConfigurationError(msg)
        from flowcore.runners.direct import DirectRunner  # noqa: PLC0415

        return DirectRunner()
    if name == "spark":
        from flowcore.runners.spark import SparkRunner  # noqa: PLC0415 - pyspark only here

        return SparkRunner(master=master, conf=conf)
    msg = f"unknown runner {name!r}; use one of: {', '.join(RUNNERS)}"
    raise ConfigurationError(msg)
