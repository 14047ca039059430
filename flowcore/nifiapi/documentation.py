"""NiFi's ``nifiapi.documentation``: use-case decorators and the details NiFi documents.

The decorators only document, in NiFi as here: they return the class unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "MultiProcessorUseCaseDetails",
    "ProcessorConfiguration",
    "PropertyDependency",
    "PropertyDescription",
    "UseCaseDetails",
    "multi_processor_use_case",
    "use_case",
]


class ProcessorConfiguration:
    """How one processor of a multi-processor use case is configured."""

    def __init__(self, processor_type: str, configuration: str) -> None:
        self.processor_type = processor_type
        self.configuration = configuration

    def getProcessorType(self) -> str:
        """The processor's type."""
        return self.processor_type

    def getConfiguration(self) -> str:
        """Its configuration, as text."""
        return self.configuration


def use_case(
    description: str,
    configuration: str | None = None,
    notes: str | None = None,
    keywords: list[str] | None = None,
) -> Callable[[Any], Any]:
    """Document a use case of the decorated processor (documentation only)."""
    del description, configuration, notes, keywords
    return lambda decorated: decorated


def multi_processor_use_case(
    description: str,
    configurations: list[ProcessorConfiguration],
    notes: str | None = None,
    keywords: list[str] | None = None,
) -> Callable[[Any], Any]:
    """Document a use case of several processors (documentation only)."""
    del description, configurations, notes, keywords
    return lambda decorated: decorated


class UseCaseDetails:
    """A documented use case."""

    def __init__(
        self, description: str, notes: str, keywords: list[str], configuration: str
    ) -> None:
        self.description = description
        self.notes = notes
        self.keywords = keywords
        self.configuration = configuration


class MultiProcessorUseCaseDetails:
    """A documented use case of several processors."""

    def __init__(
        self,
        description: str,
        notes: str,
        keywords: list[str],
        configurations: list[ProcessorConfiguration],
    ) -> None:
        self.description = description
        self.notes = notes
        self.keywords = keywords
        self.configurations = configurations


class PropertyDependency:
    """A documented property dependency."""

    def __init__(self, name: str, display_name: str, dependent_values: list[str]) -> None:
        self.name = name
        self.display_name = display_name
        self.dependent_values = dependent_values


class PropertyDescription:
    """A documented property."""

    def __init__(  # noqa: PLR0917 - NiFi's signature, positional arguments and all
        self,
        name: str,
        description: str,
        display_name: str | None = None,
        required: bool = False,
        sensitive: bool = True,
        default_value: str | None = None,
        expression_language_scope: str | None = None,
        controller_service_definition: str | None = None,
        allowable_values: list[str] | None = None,
        dependencies: list[PropertyDependency] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.display_name = display_name
        self.required = required
        self.sensitive = sensitive
        self.default_value = default_value
        self.expression_language_scope = expression_language_scope
        self.controller_service_definition = controller_service_definition
        self.allowable_values = allowable_values or []
        self.dependencies = dependencies or []
