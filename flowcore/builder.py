"""The ``Flow`` users build, check, explain and run.

A flow definition (:class:`flowcore.definition.flow.FlowDefinition`) is a value: processors, funnels
and connections, nothing that runs. The engine takes that value from above (validation, the
compiler, the controller all read definitions and none is imported by them), so the entry
points a user calls on a flow live here, in the faces layer, on a subclass that adds only
them: ``flow.validate()``, ``flow.explain()``, ``flow.run()``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import attrs

from flowcore.compiler.stages import compile_flow
from flowcore.definition.flow import FlowDefinition
from flowcore.definition.validation import validate_flow
from flowcore.driver.controller import run_flow
from flowcore.driver.run_result import RunResult
from flowcore.nifi.invalid import invalid_processors
from flowcore.nifi.structure import flow_structure, same_flow
from flowcore.settings import DEFAULT_REPOSITORY, Settings
from repositories.repository_set import read_status

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import SparkSession

    from flowcore.nifi.findings import ImportNote
    from flowcore.parameters import Parameter, ParameterContext
    from flowcore.pictures.flow_picture import FlowCounts
    from flowcore.processor.base import Processor

__all__ = ["Flow", "flow_counts"]

# NiFi's import and export and the pictures (with Graphviz's layout) are imported where they are
# used: `flowcore run` of a Python flow needs none of them, and every start would pay for them.


def flow_counts(flow: FlowDefinition, repository: str | os.PathLike[str]) -> FlowCounts | None:
    """The last run's counts in *repository*, when its ``status.json`` is of *flow* (by name)."""
    from flowcore.pictures.flow_picture import FlowCounts  # noqa: PLC0415 - see above

    status = read_status(repository)
    if status is None or status.get("flow") != flow.name:
        return None
    return FlowCounts.from_status(status)


class Flow(FlowDefinition):
    """A flow under construction, with the engine's entry points.

    Example::

        flow = Flow("web-logs")
        get = flow.add(GetFile(input_directory="in"), name="get")
        split = flow.add(SplitText(line_split_count=1000))
        flow.connect(get, split)
        flow.connect(split, put, "splits", back_pressure_object_threshold=5_000)
        flow.auto_terminate(split, ["original", "failure"])
        flow.run(runner="direct")

    Mistakes in the calls themselves (a component from another flow, a repeated name) raise at
    once; everything else is reported together by :meth:`validate`.
    """

    #: What an import from NiFi has to say about the flow (:meth:`from_nifi`); empty otherwise.
    notes: tuple[ImportNote, ...] = ()
    #: Whether invalid processors stay stopped rather than fail validation, as in NiFi: set on
    #: a flow imported from NiFi (:meth:`from_nifi`, unless ``strict``); Python flows fail fast.
    stops_invalid: bool = False

    @classmethod
    def from_nifi(
        cls,
        source: str | os.PathLike[str] | Mapping[str, Any],
        parameters: ParameterContext | Mapping[str, str | Parameter] | None = None,
        type_map: Mapping[str, type[Processor]] | None = None,
        *,
        strict: bool = False,
    ) -> Flow:
        """A flow from a NiFi flow definition, to run as it is.

        Reads NiFi 2.x and 1.x "Download flow definition" files, NiFi Registry (and GitHub
        registry) snapshots, an instance's ``flow.json.gz``, and NiFi 1.x's XML (templates,
        ``flow.xml.gz``): the process groups flattened
        (names keep the group path, ``Ingest/Split lines``; ports become funnels), connections
        with their relationships and queue settings, scheduling, retry and disabled state,
        parameter contexts, UpdateAttribute's Advanced rules. Settings that only mean
        something in a NiFi cluster are kept and listed in :attr:`notes`.
        docs/nifi-interop.md lists what is read and what is reported.

        Args:
            source: a path to a ``.json``, ``.json.gz``, template ``.xml`` or ``flow.xml.gz``
                file, or its parsed JSON.
            parameters: parameter values that win over the file's contexts: a dict of name
                -> value or :class:`~flowcore.parameters.Parameter`, or a context. Sensitive
                parameters have no value in an export: give them, e.g.
                ``Parameter("db.password", sensitive=True, value_from_env="DB_PASSWORD")``
                (validation names each one missing).
            type_map: your processor classes for NiFi types flowcore lacks, by NiFi type
                (``"com.example.MyProcessor"`` or ``"MyProcessor"``).
            strict: report invalid processors as validation errors, all at once, instead of
                leaving them stopped as NiFi does (:attr:`stopped` lists those, with NiFi's
                reasons: a required property unset, a value or Expression Language that does
                not validate, a relationship neither connected nor auto-terminated).

        Raises:
            NiFiFormatError: the source is not a NiFi flow definition, or is malformed.
            NiFiImportError: the flow uses what flowcore cannot run: every unsupported
                processor and service type (with the components using it) and every other
                problem, in one error.
        """
        from flowcore.nifi.importing import import_nifi  # noqa: PLC0415 - see the top

        imported = import_nifi(source, parameters=parameters, type_map=type_map, into=cls)
        flow = imported.flow
        assert isinstance(flow, Flow)
        flow.notes = imported.notes
        flow.stops_invalid = not strict
        return flow

    @property
    def stopped(self) -> dict[str, tuple[str, ...]]:
        """The processors an imported NiFi flow leaves stopped: invalid ones, by name, with reasons.

        Judged on the flow as it is now, parameters included (set ``parameters`` and they count).
        Each runs as a disabled one: FlowFiles queued for it wait, durably, and a later run that
        finds it valid takes them. Empty for Python flows and for ``from_nifi(strict=True)``.
        """
        return invalid_processors(self) if self.stops_invalid else {}

    def runnable(self) -> Flow:
        """The flow as it runs: this one, or a copy whose :attr:`stopped` processors are disabled.

        The flow itself keeps them as drawn, so an export or conversion writes them unchanged.
        """
        stopped = self.stopped
        if not stopped:
            return self
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._components = {
            key: attrs.evolve(c, disabled=True) if c.name in stopped else c
            for key, c in self._components.items()
        }
        copy.stops_invalid = False
        return copy

    def validate(self) -> None:
        """Check the whole flow; raise once with every problem found.

        An imported NiFi flow's invalid processors are left stopped (:attr:`stopped`) instead,
        unless it was imported with ``strict=True``.

        Raises:
            FlowValidationError: listing each problem with the component and how to fix it.
        """
        validate_flow(self.runnable())

    def explain(
        self,
        format: str = "text",
        *,
        repository: str | os.PathLike[str] | None = None,
        runner: str = "spark",
        settings: Settings | None = None,
    ) -> str:
        """The flow drawn from its compiled plan: stages, every connection and exit, queues.

        Each stage lists its components with every relationship: where it leads (parallel
        branches stay parallel) or that it is auto-terminated; durable queues say why they are
        durable and their NiFi queue settings. With a *repository* a run has used for this flow,
        the FlowFiles and bytes of its last run are written on the connections.

        Args:
            format: ``text`` (the default), ``dot`` (Graphviz DOT), ``svg`` (laid out by
                Graphviz's ``dot`` program), ``mermaid`` or ``json``.
            repository: a repository directory whose ``status.json`` (left by a run of this
                flow) gives the counts; ignored when no run of this flow left one.
            runner: the runner a run would use, as :meth:`run` takes it: on ``"spark"`` each
                stage fed by a durable queue says which of its runs go to the driver's process.
            settings: the settings a run would use (those notes quote their limits).

        Raises:
            FlowValidationError: the flow is invalid.
            DrawingError: an unknown format, or ``svg`` without Graphviz installed.
        """
        from flowcore.pictures.flow_picture import flow_picture  # noqa: PLC0415 - see the top
        from flowcore.pictures.render import render  # noqa: PLC0415

        counts = flow_counts(self, repository) if repository is not None else None
        compiled = compile_flow(self.runnable())
        picture = flow_picture(compiled, counts, runner=runner, settings=settings)
        return render(picture, format)

    def describe_structure(self) -> dict[str, Any]:
        """What the flow means, as a plain value two flows compare by.

        See :func:`flowcore.nifi.structure.flow_structure` for what counts.
        """
        return flow_structure(self)

    def same_as(self, other: FlowDefinition) -> bool:
        """Whether *other* means the same as this flow, however it was built.

        A round trip through NiFi's format or ``flowcore convert`` gives the same flow.
        """
        return same_flow(self, other)

    def to_nifi(self) -> dict[str, Any]:
        """The flow as a NiFi 2.x flow definition, ready for ``json.dump`` and NiFi's import.

        The shape of NiFi's "Download flow definition": processors with their NiFi types and
        the standard NARs' bundles, every property as written (``#{p}`` kept), scheduling,
        retry and queue settings, the parameter context (sensitive values left out), and
        positions laid out top to bottom. What NiFi cannot hold (flowcore's own processors,
        ``durable=True``) is listed in the root group's comments; ``flowcore convert`` prints
        it (:func:`flowcore.nifi.exporting.export_flow` returns it as notes).
        """
        from flowcore.nifi.exporting import export_flow  # noqa: PLC0415 - see the top

        return export_flow(self).document

    def run(
        self,
        runner: str = "spark",
        *,
        repository: str | os.PathLike[str] = DEFAULT_REPOSITORY,
        master: str | None = None,
        conf: dict[str, str] | None = None,
        settings: Settings | None = None,
        continuous: bool = False,
        spark: SparkSession | None = None,
    ) -> RunResult:
        """Run the flow: to completion (batch), or until interrupted with ``continuous=True``.

        Args:
            runner: ``"spark"`` (the default: the Spark session already running in this
                process, else a new one on *master*) or ``"direct"`` (tasks in this process:
                quick to start, for tests and small runs).
            repository: where the durable repositories live (``.flowcore`` by default); a run
                resumes whatever a previous run on it left queued.
            master: the Spark master URL for a session flowcore starts (``local[*]`` by
                default); with a session running, it must be that session's master.
            conf: Spark configuration for a session flowcore starts, e.g.
                ``{"spark.executor.memory": "2g"}``.
            settings: engine settings (batch limits, penalties, parallelism, the
                ``spark_connect_timeout`` to reach a cluster's master).
            continuous: keep polling sources instead of ending when the input is used up.
            spark: your SparkSession: the run uses it as it is and leaves it running (it is
                yours to stop); the result's ``master`` is its SparkContext's.

        Raises:
            FlowValidationError: the flow is invalid (every problem listed); nothing ran.
            ConfigurationError: Spark cannot start on the master (a bad URL, an unreachable
                master), or *spark* comes with *conf* or another *master*.
        """
        return run_flow(
            self.runnable(),
            runner,
            repository=repository,
            master=master,
            conf=conf,
            settings=settings,
            continuous=continuous,
            spark=spark,
        )
