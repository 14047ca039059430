"""NiFi's ``nifiapi.properties``: property descriptors, validators and the ProcessContext.

The names and signatures are NiFi 2's. What NiFi hands to the JVM (Java validators, Java
property values) is flowcore's here: :class:`StandardValidators` are flowcore's validators of
the same names, and :class:`PythonPropertyValue` wraps a flowcore
:class:`~flowcore.properties.PropertyValue`, so a value means what it means in a flowcore
processor (Expression Language, time periods, data sizes).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import flowcore.validators as _validators
from flowcore.errors import ConfigurationError
from flowcore.properties import HoldsFlowFile
from flowcore.properties import PropertyValue as _FlowcoreValue
from nifiapi.componentstate import StateManager

if TYPE_CHECKING:
    from flowcore.processor.context import ProcessContext as _FlowcoreContext

__all__ = [
    "DataUnit",
    "ExpressionLanguageScope",
    "ProcessContext",
    "PropertyContext",
    "PropertyDependency",
    "PropertyDescriptor",
    "PythonPropertyValue",
    "ResourceDefinition",
    "StandardValidators",
    "TimeUnit",
    "ValidationContext",
    "ValidationResult",
]


class ExpressionLanguageScope(enum.Enum):
    """Where a property's Expression Language is evaluated (NiFi's scopes)."""

    NONE = 1
    ENVIRONMENT = 2
    FLOWFILE_ATTRIBUTES = 3


class StandardValidators:
    """NiFi's standard validators, by NiFi's names: flowcore's validators of the same names."""

    ALWAYS_VALID = _validators.ALWAYS_VALID
    NON_EMPTY_VALIDATOR = _validators.NON_EMPTY_VALIDATOR
    INTEGER_VALIDATOR = _validators.INTEGER_VALIDATOR
    POSITIVE_INTEGER_VALIDATOR = _validators.POSITIVE_INTEGER_VALIDATOR
    POSITIVE_LONG_VALIDATOR = _validators.POSITIVE_LONG_VALIDATOR
    NON_NEGATIVE_INTEGER_VALIDATOR = _validators.NON_NEGATIVE_INTEGER_VALIDATOR
    NUMBER_VALIDATOR = _validators.NUMBER_VALIDATOR
    LONG_VALIDATOR = _validators.LONG_VALIDATOR
    PORT_VALIDATOR = _validators.PORT_VALIDATOR
    NON_EMPTY_EL_VALIDATOR = _validators.NON_EMPTY_EL_VALIDATOR
    HOSTNAME_PORT_LIST_VALIDATOR = _validators.HOSTNAME_PORT_LIST_VALIDATOR
    BOOLEAN_VALIDATOR = _validators.BOOLEAN_VALIDATOR
    URL_VALIDATOR = _validators.URL_VALIDATOR
    URI_VALIDATOR = _validators.URI_VALIDATOR
    REGULAR_EXPRESSION_VALIDATOR = _validators.REGULAR_EXPRESSION_VALIDATOR
    REGULAR_EXPRESSION_WITH_EL_VALIDATOR = _validators.REGULAR_EXPRESSION_WITH_EL_VALIDATOR
    TIME_PERIOD_VALIDATOR = _validators.TIME_PERIOD_VALIDATOR
    DATA_SIZE_VALIDATOR = _validators.DATA_SIZE_VALIDATOR
    FILE_EXISTS_VALIDATOR = _validators.FILE_EXISTS_VALIDATOR


class PropertyDependency:
    """The property applies only when *property_descriptor* has one of *dependent_values*.

    No values: it applies whenever that property has any value.
    """

    def __init__(self, property_descriptor: PropertyDescriptor | str, *dependent_values: Any):
        self.property_descriptor = property_descriptor
        values: list[str] = []
        for value in dependent_values:  # NiFi also passes one list of them
            if isinstance(value, list | tuple | set):
                values.extend(str(v) for v in value)
            elif value is not None:
                values.append(str(value))
        self.dependent_values = values

    @property
    def property_name(self) -> str:
        """The name of the property depended on."""
        found = self.property_descriptor
        return found if isinstance(found, str) else found.name


class ResourceDefinition:
    """What kinds of resource (file, URL, directory, text) a property references."""

    def __init__(
        self,
        allow_multiple: bool = False,
        allow_file: bool = True,
        allow_url: bool = False,
        allow_directory: bool = False,
        allow_text: bool = False,
    ) -> None:
        self.allow_multiple = allow_multiple
        self.allow_file = allow_file
        self.allow_url = allow_url
        self.allow_directory = allow_directory
        self.allow_text = allow_text


class PropertyDescriptor:
    """A property of a Python processor, with NiFi's constructor and attribute names.

    *name* is what flows store; *display_name* (default: the name) what users see. See NiFi's
    Python Developer's Guide for each argument; :func:`nifiapi._adapter.flowcore_descriptor`
    makes the flowcore descriptor it stands for.
    """

    def __init__(  # noqa: PLR0917 - NiFi's signature, positional arguments and all
        self,
        name: str,
        description: str,
        required: bool = False,
        sensitive: bool = False,
        display_name: str | None = None,
        default_value: Any = None,
        allowable_values: Iterable[Any] | None = None,
        dependencies: Iterable[PropertyDependency] | None = None,
        expression_language_scope: ExpressionLanguageScope | str = ExpressionLanguageScope.NONE,
        dynamic: bool = False,
        validators: Iterable[Any] | None = None,
        resource_definition: ResourceDefinition | None = None,
        controller_service_definition: str | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.required = required
        self.sensitive = sensitive
        self.displayName = display_name
        self.defaultValue = None if default_value is None else str(default_value)
        self.allowableValues = None if allowable_values is None else list(allowable_values)
        self.dependencies = None if dependencies is None else list(dependencies)
        self.expressionLanguageScope = expression_language_scope
        self.dynamic = dynamic
        self.validators = [StandardValidators.ALWAYS_VALID] if validators is None else validators
        self.resourceDefinition = resource_definition
        self.controllerServiceDefinition = controller_service_definition

    def __repr__(self) -> str:
        return f"PropertyDescriptor({self.name!r})"


class TimeUnit(enum.Enum):
    """Java's ``TimeUnit``, for :meth:`PythonPropertyValue.asTimePeriod`."""

    NANOSECONDS = "ns"
    MICROSECONDS = "us"
    MILLISECONDS = "ms"
    SECONDS = "s"
    MINUTES = "min"
    HOURS = "h"
    DAYS = "d"


class DataUnit(enum.Enum):
    """NiFi's ``DataUnit``, for :meth:`PythonPropertyValue.asDataSize`."""

    B = "B"
    KB = "KB"
    MB = "MB"
    GB = "GB"
    TB = "TB"


def _attributes_of(given: Any) -> Any:
    """What flowcore's evaluation takes for NiFi's ``attributeMap`` argument."""
    if given is None or isinstance(given, HoldsFlowFile | Mapping):
        return given
    attributes = getattr(given, "getAttributes", None)
    if callable(attributes):
        return dict(attributes())
    msg = (
        "evaluateAttributeExpressions takes the FlowFile given to transform, a dict of "
        f"attributes or None, not {type(given).__name__}"
    )
    raise TypeError(msg)


class PythonPropertyValue:
    """A property's value, with NiFi's accessors (``getValue``, ``asInteger`` ...).

    Attributes:
        value: the value as text (parameters substituted), or None.
    """

    def __init__(self, value: _FlowcoreValue, services: Any = None) -> None:
        self._value = value
        self._services = services
        self.value = value.value

    def getValue(self) -> str | None:
        """The value as text, or None."""
        return self.value

    def isSet(self) -> bool:
        """Whether there is a value."""
        return self.value is not None

    def isExpressionLanguagePresent(self) -> bool:
        """Whether the value holds Expression Language that would be evaluated."""
        descriptor = self._value.descriptor
        evaluates = descriptor is None or descriptor.supports_expressions
        return evaluates and self.value is not None and "${" in self.value

    def asInteger(self) -> int | None:
        """The value as an int, or None."""
        return self._value.as_integer()

    def asBoolean(self) -> bool | None:
        """The value as a bool (``true`` in any case), or None."""
        return None if self.value is None else self.value.lower() == "true"

    def asFloat(self) -> float | None:
        """The value as a float, or None."""
        return self._value.as_float()

    def asTimePeriod(self, time_unit: TimeUnit) -> int | None:
        """The value as a whole number of *time_unit*, as Java's long (``30 sec`` -> 30000 ms)."""
        found = self._value.as_time_period(time_unit.value)
        return None if found is None else int(found)

    def asDataSize(self, data_unit: DataUnit) -> float | None:
        """The value as a number of *data_unit* (``1 KB`` in B -> 1024.0)."""
        return self._value.as_data_size(data_unit.value)

    def asControllerService(self) -> Any:
        """The controller service the value names.

        Raises:
            ConfigurationError: the flow declares no such service (see docs/services.md for
                the services flowcore has and how to write one).
        """
        if self.value is not None and self._services is not None:
            try:
                return self._services(self.value)
            except Exception as error:  # the lookup's own error says which
                msg = f"controller service {self.value!r}: {error}"
                raise ConfigurationError(msg) from error
        msg = (
            f"{self._value._name()!r} names controller service {self.value!r}, which this "
            "flowcore context cannot provide to a Python processor"
        )
        raise ConfigurationError(msg)

    def evaluateAttributeExpressions(self, attributeMap: Any = None) -> PythonPropertyValue:
        """The value with Expression Language evaluated against *attributeMap*'s attributes.

        *attributeMap* is the FlowFile ``transform`` was given, a dict of attributes, or None
        (attribute references are then empty, as in NiFi's environment scope).
        """
        evaluated = self._value.evaluate_attribute_expressions(_attributes_of(attributeMap))
        return self if evaluated is self._value else PythonPropertyValue(evaluated, self._services)

    def __repr__(self) -> str:
        return f"PythonPropertyValue({self.value!r})"


class ValidationResult:
    """One finding of a processor's ``customValidate``, with NiFi's fields."""

    def __init__(
        self, subject: str = "", explanation: str = "", valid: bool = False, input: Any = None
    ) -> None:
        self.subject = subject
        self.explanation = explanation
        self.valid = valid
        self.input = input


class PropertyContext:
    """What :class:`ProcessContext` and :class:`ValidationContext` share: property values.

    Args:
        context: the flowcore context the values come from.
        descriptors: the processor's NiFi descriptors (dependencies met), by name.
        values: each one's value (configured, else default), by name.
    """

    def __init__(
        self,
        context: _FlowcoreContext | None,
        descriptors: Mapping[str, PropertyDescriptor],
        values: Mapping[str, _FlowcoreValue],
        services: Any = None,
    ) -> None:
        self._context = context
        self._services = services
        self.property_values = {n: PythonPropertyValue(v, services) for n, v in values.items()}
        self.descriptor_value_map = {
            descriptors[n]: v.value for n, v in self.property_values.items() if n in descriptors
        }

    def getProperty(self, descriptor: PropertyDescriptor | str) -> PythonPropertyValue | None:
        """The value of a property, by descriptor or name (None: no such property, or off)."""
        name = descriptor if isinstance(descriptor, str) else descriptor.name
        return self.property_values.get(name)

    def getProperties(self) -> dict[PropertyDescriptor, str | None]:
        """Every property in effect with its value, by descriptor."""
        return dict(self.descriptor_value_map)

    def newPropertyValue(self, value: str) -> PythonPropertyValue:
        """A value not configured anywhere, with the accessors of one that is."""
        return PythonPropertyValue(_FlowcoreValue(value), self._services)


class ProcessContext(PropertyContext):
    """What ``transform``, ``create``, ``onScheduled`` and ``onStopped`` are given.

    Args:
        context: the flowcore context of the processor.
        descriptors: the processor's NiFi descriptors in effect, by name.
        values: their values, by name.
        state: the processor's state manager.
        services: looks a controller service up by the name a property holds.
    """

    def __init__(
        self,
        context: _FlowcoreContext,
        descriptors: Mapping[str, PropertyDescriptor],
        values: Mapping[str, _FlowcoreValue],
        state: StateManager,
        services: Any = None,
    ) -> None:
        super().__init__(context, descriptors, values, services)
        self.name = context.name
        self._state = state

    def getName(self) -> str:
        """The processor's name in the flow."""
        return self.name

    def yield_resources(self) -> None:
        """Ask not to be triggered again for the Yield Duration (NiFi's ``yield``)."""
        assert self._context is not None
        self._context.yield_()

    def getStateManager(self) -> StateManager:
        """The processor's state (see :mod:`nifiapi.componentstate`)."""
        return self._state


class ValidationContext(PropertyContext):
    """What ``customValidate`` is given: the property values being validated."""
