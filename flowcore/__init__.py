"""flowcore: Apache NiFi's flow model in Python, compiled to Apache Spark.

This package re-exports the public API: what a flow author (``Flow``, queue, scheduling and
retry settings, prioritizers, the errors a run raises) and a processor author (the processor
kinds, properties, relationships, the context, session and FlowFile, validators' results,
provenance values) use. The batch API for batch forms is :mod:`flowcore.batch`; the test
harness is :mod:`flowcore.testing`. Everything else is internal: import it from the module that
defines it. Importing this package never imports pyspark: only
``flowcore.runners.spark`` does, so definitions, validation and tests stay fast and Spark-free.
``Flow`` (with its ``run``, which needs the whole engine) is loaded on first use: a Spark worker
importing one of flowcore's modules loads this package too, and must not load the driver.
"""

from typing import TYPE_CHECKING, Any

from flowcore import (
    _moved_modules,  # noqa: F401 - old module paths (moved 2026-11) still import
    _nifiapi_finder,  # noqa: F401 - makes `import nifiapi` work in a source tree
)
from flowcore.definition.component_settings import (
    BackoffMechanism,
    LoadBalanceStrategy,
    Prioritizer,
    QueueSettings,
    RetrySettings,
    SchedulingStrategy,
)
from flowcore.errors import (
    ConfigurationError,
    ExpressionError,
    ExpressionEvaluationError,
    ExpressionSyntaxError,
    FlowcoreError,
    FlowDefinitionError,
    FlowFileAccessError,
    FlowFileHandlingError,
    FlowValidationError,
    InvalidProcessorError,
    ProcessException,
    RelationshipError,
    RepositoryError,
)
from flowcore.expression import Expression, compile_expression
from flowcore.flowfile import FlowFile
from flowcore.processor.base import InputRequirement, Processor
from flowcore.processor.context import ProcessContext, carry_context
from flowcore.processor.kinds import (
    BinningProcessor,
    FlowFileTransform,
    SourceProcessor,
    TransformResult,
    TwoPhaseSink,
    WorkItem,
    WorkListing,
)
from flowcore.processor.relationship import FAILURE, ORIGINAL, SUCCESS, Relationship
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
    PropertyValue,
)
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from flowcore.session._transform import FlowFileView
from flowcore.session.host import StateMap
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult

if TYPE_CHECKING:
    from flowcore.builder import Flow

__version__ = "0.1.0"

__all__ = [
    "FAILURE",
    "ORIGINAL",
    "SUCCESS",
    "AllowableValue",
    "BackoffMechanism",
    "BinningProcessor",
    "ConfigurationError",
    "Expression",
    "ExpressionError",
    "ExpressionEvaluationError",
    "ExpressionLanguageScope",
    "ExpressionSyntaxError",
    "Flow",
    "FlowDefinitionError",
    "FlowFile",
    "FlowFileAccessError",
    "FlowFileHandlingError",
    "FlowFileTransform",
    "FlowFileView",
    "FlowValidationError",
    "FlowcoreError",
    "InputRequirement",
    "InvalidProcessorError",
    "LoadBalanceStrategy",
    "Prioritizer",
    "ProcessContext",
    "ProcessException",
    "ProcessSession",
    "Processor",
    "PropertyDependency",
    "PropertyDescriptor",
    "PropertyValue",
    "ProvenanceEvent",
    "ProvenanceEventType",
    "QueueSettings",
    "Relationship",
    "RelationshipError",
    "RepositoryError",
    "RetrySettings",
    "SchedulingStrategy",
    "SourceProcessor",
    "StateMap",
    "TransformResult",
    "TwoPhaseSink",
    "ValidationResult",
    "WorkItem",
    "WorkListing",
    "__version__",
    "carry_context",
    "compile_expression",
    "register_spark_sources",
]


def register_spark_sources(spark: Any) -> None:
    """Let *spark* (a SparkSession) read flowcore's datasets and provenance as DataFrames.

    Registers the ``flowcore-dataset`` and ``flowcore-provenance`` formats (PySpark's Python
    Data Source API): ``spark.read.format("flowcore-dataset").load(path)``. Sessions flowcore
    starts find them by themselves; call this for a session of your own.

    Raises:
        ConfigurationError: pyarrow is missing.
    """
    from flowcore.runners.spark_sources import register  # noqa: PLC0415 - pyspark only here

    register(spark)


#: Names this package exported before issue 34 narrowed it to the public API, with the module
#: that defines each: still importable from here, with a DeprecationWarning naming that module.
_MOVED = {
    "Attributes": "flowcore.flowfile",
    "Component": "flowcore.definition.flow",
    "Connection": "flowcore.definition.flow",
    "ContentClaim": "flowcore.flowfile",
    "FlowDefinition": "flowcore.definition.flow",
    "ProcessorKind": "flowcore.processor",
    "ResourceClaim": "flowcore.flowfile",
    "SinkJobs": "flowcore.processor.kinds",
}


def __getattr__(name: str) -> Any:
    """``flowcore.Flow``, imported when first asked for (PEP 562); moved names, with a warning."""
    if name == "Flow":
        from flowcore.builder import Flow  # noqa: PLC0415 - the engine, only when wanted

        return Flow
    if name in _MOVED:
        import importlib  # noqa: PLC0415 - only for a moved name
        import warnings  # noqa: PLC0415

        module = _MOVED[name]
        warnings.warn(
            f"flowcore.{name} is internal: import it from {module}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), name)
    msg = f"module 'flowcore' has no attribute {name!r}"
    raise AttributeError(msg)
