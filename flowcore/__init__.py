"""flowcore: Apache NiFi's flow model in Python, compiled to Apache Spark.

This package re-exports the public API. Importing it never imports pyspark: only
``flowcore.runners.spark`` does, so definitions, validation and tests stay fast and Spark-free.
"""

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
from flowcore.flow import Component, Connection, Flow, Prioritizer, QueueSettings
from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim
from flowcore.processor import (
    BinningProcessor,
    FlowFileTransform,
    FlowFileView,
    InputRequirement,
    ProcessContext,
    Processor,
    ProcessorKind,
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
from flowcore.provenance import ProvenanceEvent, ProvenanceEventType
from flowcore.relationship import FAILURE, ORIGINAL, SUCCESS, Relationship
from flowcore.session import ProcessSession, StateMap
from flowcore.validators import ValidationResult

__version__ = "0.1.0"

__all__ = [
    "FAILURE",
    "ORIGINAL",
    "SUCCESS",
    "AllowableValue",
    "Attributes",
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
]
