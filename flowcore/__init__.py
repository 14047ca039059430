"""flowcore: Apache NiFi's flow model in Python, compiled to Apache Spark.

This package re-exports the public API. Importing it never imports pyspark: only
``flowcore.runners.spark`` does, so definitions, validation and tests stay fast and Spark-free.
``Flow`` (with its ``run``, which needs the whole engine) is loaded on first use: a Spark worker
importing one of flowcore's modules loads this package too, and must not load the driver.
"""

from typing import TYPE_CHECKING, Any

from flowcore import _nifiapi_finder  # noqa: F401 - makes `import nifiapi` work in a source tree
from flowcore.component_settings import (
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
from flowcore.flow import Component, Connection, FlowDefinition
from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim
from flowcore.process_context import ProcessContext
from flowcore.processor import InputRequirement, Processor, ProcessorKind
from flowcore.processor_kinds import (
    BinningProcessor,
    FlowFileTransform,
    SinkJobs,
    SourceProcessor,
    TransformResult,
    TwoPhaseSink,
    WorkItem,
    WorkListing,
)
from flowcore.properties import (
    AllowableValue,
    ExpressionLanguageScope,
    PropertyDependency,
    PropertyDescriptor,
    PropertyValue,
)
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from flowcore.relationship import FAILURE, ORIGINAL, SUCCESS, Relationship
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
    "Attributes",
    "BackoffMechanism",
    "BinningProcessor",
    "Component",
    "ConfigurationError",
    "Connection",
    "ContentClaim",
    "Expression",
    "ExpressionError",
    "ExpressionEvaluationError",
    "ExpressionLanguageScope",
    "ExpressionSyntaxError",
    "Flow",
    "FlowDefinition",
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
    "ProcessorKind",
    "PropertyDependency",
    "PropertyDescriptor",
    "PropertyValue",
    "ProvenanceEvent",
    "ProvenanceEventType",
    "QueueSettings",
    "Relationship",
    "RelationshipError",
    "RepositoryError",
    "ResourceClaim",
    "RetrySettings",
    "SchedulingStrategy",
    "SinkJobs",
    "SourceProcessor",
    "StateMap",
    "TransformResult",
    "TwoPhaseSink",
    "ValidationResult",
    "WorkItem",
    "WorkListing",
    "__version__",
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


def __getattr__(name: str) -> Any:
    """``flowcore.Flow``, imported when first asked for (PEP 562)."""
    if name == "Flow":
        from flowcore.builder import Flow  # noqa: PLC0415 - the engine, only when wanted

        return Flow
    msg = f"module 'flowcore' has no attribute {name!r}"
    raise AttributeError(msg)
