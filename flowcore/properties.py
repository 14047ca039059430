"""Property descriptors and property values, with NiFi's names, defaults and validation rules.

A processor declares :class:`PropertyDescriptor` values. Each has NiFi's display name (what users
see and type), an internal name (what NiFi stores; usually the same), and a snake_case key
derived from the display name, so ``SplitText(line_split_count=1)`` and
``SplitText(**{"Line Split Count": "1"})`` configure the same property.

Validation follows NiFi's ``StandardValidationContext``: a property whose dependencies are not
met is ignored; a required property without a value is invalid; a value must be one of the
allowable values when there are any; Expression Language is parsed (errors name the position) and
a value holding EL skips the static validators, since its value is only known per FlowFile.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from flowcore.errors import ConfigurationError
from flowcore.expression import compile_expression, contains_expression, validate_expression
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import ResultType
from flowcore.parameters import MASK, SENSITIVE_ALONE, SensitiveText, redact, reference_problem
from flowcore.units import format_time_period, parse_data_size, parse_time_period
from flowcore.validators import ValidationResult, Validator

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile

__all__ = [
    "AllowableValue",
    "ExpressionLanguageScope",
    "HoldsFlowFile",
    "PropertyDependency",
    "PropertyDescriptor",
    "PropertyValue",
    "parameter_problems",
    "property_key",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=4096)
def property_key(display_name: str) -> str:
    """Return the snake_case keyword for a display name: ``"Max Bin Age"`` -> ``"max_bin_age"``."""
    return _NON_ALNUM.sub("_", display_name.lower()).strip("_")


class ExpressionLanguageScope(enum.Enum):
    """Where a property's Expression Language is evaluated (NiFi's scopes)."""

    NONE = "NONE"
    ENVIRONMENT = "ENVIRONMENT"
    FLOWFILE_ATTRIBUTES = "FLOWFILE_ATTRIBUTES"


@attrs.frozen
class AllowableValue:
    """One allowed value of a property, with the name shown to users and a description."""

    value: str
    display_name: str = attrs.field(default=attrs.Factory(lambda s: s.value, takes_self=True))
    description: str = ""


def _allowable(values: Iterable[AllowableValue | str] | None) -> tuple[AllowableValue, ...]:
    if values is None:
        return ()
    return tuple(v if isinstance(v, AllowableValue) else AllowableValue(str(v)) for v in values)


@attrs.frozen
class PropertyDependency:
    """The property only applies when *property* has one of *values* (any value when empty).

    Attributes:
        property: the internal name of the property depended on.
        values: the values that enable the dependent property.
    """

    property: str
    values: tuple[str, ...] = attrs.field(default=(), converter=tuple)


def _dependencies(
    deps: Iterable[PropertyDependency | tuple[Any, ...]] | None,
) -> tuple[PropertyDependency, ...]:
    out = []
    for dep in deps or ():
        if isinstance(dep, PropertyDependency):
            out.append(dep)
        else:
            target, *values = dep
            name = target.name if isinstance(target, PropertyDescriptor) else str(target)
            out.append(PropertyDependency(name, tuple(str(v) for v in values)))
    return tuple(out)


def _validators(value: Validator | Iterable[Validator] | None) -> tuple[Validator, ...]:
    if value is None:
        return ()
    if isinstance(value, Validator):
        return (value,)
    return tuple(value)


@attrs.frozen
class PropertyDescriptor:
    """How a processor property is named, defaulted, validated and evaluated.

    Attributes:
        display_name: NiFi's display name, shown to users (``"Line Split Count"``).
        name: NiFi's internal name; defaults to the display name (true of most 2.x processors).
        description: what the property does, shown by ``flowcore processors``.
        default: the default value as a NiFi string, or ``None``.
        required: whether a value (or default) must exist.
        allowable_values: the only accepted values, when not empty.
        validators: checks applied to a literal value.
        el_scope: where Expression Language may be used.
        dependencies: the property applies only when these are satisfied.
        sensitive: whether the value must be hidden in logs and listings.
        dynamic: whether this describes a user-defined (dynamic) property.
        expected_type: the result type EL must have (e.g. BOOLEAN for a condition).
        aliases: legacy internal names still accepted (NiFi's ``migrateProperties``).
        identifies_service: the value names a controller service the flow declares (NiFi's
            ``identifiesControllerService``): ``True``, or the name of the interface the
            service must implement (NiFi's API name, ``"RecordReaderFactory"``). Validation
            checks the flow has it (and that it implements the interface), and its stage runs
            serially. The value may be given as the service object itself (its name is kept).
        flowcore_only: a property flowcore adds to a NiFi processor (MergeContent's Zero
            Copy): an export to NiFi leaves it out, since NiFi would refuse the processor.
    """

    display_name: str
    name: str = attrs.field(default=attrs.Factory(lambda s: s.display_name, takes_self=True))
    description: str = ""
    default: str | None = None
    required: bool = False
    allowable_values: tuple[AllowableValue, ...] = attrs.field(default=(), converter=_allowable)
    validators: tuple[Validator, ...] = attrs.field(default=(), converter=_validators)
    el_scope: ExpressionLanguageScope = ExpressionLanguageScope.NONE
    dependencies: tuple[PropertyDependency, ...] = attrs.field(default=(), converter=_dependencies)
    sensitive: bool = False
    dynamic: bool = False
    expected_type: ResultType | None = None
    aliases: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    identifies_service: bool | str = False
    flowcore_only: bool = False

    @property
    def service_interface(self) -> str | None:
        """The interface a service named here must implement (simple name), or None."""
        if isinstance(self.identifies_service, str) and self.identifies_service:
            return self.identifies_service.rsplit(".", 1)[-1]
        return None

    @property
    def key(self) -> str:
        """The snake_case keyword for this property (``max_bin_age``)."""
        return property_key(self.display_name)

    def stored_value(self, value: str | None) -> str | None:
        """*value* as NiFi stores (and validates) it.

        An allowed value given by the name NiFi shows (ListFile's ``Tracking Timestamps``) is
        its value (``timestamps``); anything else is itself.
        """
        for allowed in self.allowable_values:
            if value == allowed.display_name and value != allowed.value:
                return allowed.value
        return value

    @property
    def supports_expressions(self) -> bool:
        """Whether Expression Language is evaluated in this property's value."""
        return self.el_scope is not ExpressionLanguageScope.NONE

    def names(self) -> tuple[str, ...]:
        """Every spelling that refers to this property: display name, name, key, aliases."""
        return _names(self.display_name, self.name, self.aliases)

    def to_value_string(self, value: Any) -> str:
        """Render a Python value as this property's NiFi string (``True`` -> ``"true"``).

        Strings pass through unchanged. A number given to a time-period property means seconds,
        to a data-size property bytes; a ``timedelta`` is a time period.

        Raises:
            ConfigurationError: the value has a type no NiFi property accepts.
        """
        if isinstance(value, str):
            return value
        if getattr(value, "is_controller_service", False):  # a service: its name (the handle)
            return value.name
        if not isinstance(value, bool | int | float | timedelta):
            msg = (
                f"property {self.display_name!r} cannot take a {type(value).__name__} "
                f"({value!r}); give a string, number, boolean or timedelta"
            )
            raise ConfigurationError(msg)
        for validator in self.validators:
            text = validator.to_string(value)
            if text != str(value) or isinstance(value, bool):
                return text
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, timedelta):
            return format_time_period(value)
        return str(value)

    def is_enabled(self, values: Mapping[str, str | None]) -> bool:
        """Whether every dependency is satisfied by *values* (internal name -> value)."""
        for dep in self.dependencies:
            current = values.get(dep.property)
            if current is None:
                return False
            if dep.values and current not in dep.values:
                return False
        return True

    def validate(
        self, value: str | None, values: Mapping[str, str | None] | None = None
    ) -> tuple[ValidationResult, ...]:
        """Return every problem with *value*; empty when valid.

        A sensitive property's value shows as ``********`` in the problems.

        Args:
            value: the effective value (configured, else default), or ``None``.
            values: every property's effective value, for dependencies.
        """
        problems = self._problems(value, values)
        if not self.sensitive or value is None or not problems:
            return problems
        return tuple(
            attrs.evolve(p, input=MASK, explanation=redact(p.explanation, (value,)))
            for p in problems
        )

    def _problems(
        self, value: str | None, values: Mapping[str, str | None] | None
    ) -> tuple[ValidationResult, ...]:
        if values is not None and not self.is_enabled(values):
            return ()
        subject = self.display_name
        if value is None:
            if self.required:
                return (ValidationResult(subject, None, False, f"{subject} is required"),)
            return ()
        if self.allowable_values and value not in {v.value for v in self.allowable_values}:
            allowed = ", ".join(repr(v.value) for v in self.allowable_values)
            why = f"Given value not found in allowed set {allowed}"
            return (ValidationResult(subject, value, False, why),)
        if self.supports_expressions and contains_expression(value):
            why_el = validate_expression(value, self.expected_type)
            if why_el:
                return (ValidationResult(subject, value, False, why_el),)
            return tuple(
                r
                for r in (v(subject, value) for v in self.validators if v.evaluates_expressions)
                if not r.valid
            )
        return tuple(r for r in (v(subject, value) for v in self.validators) if not r.valid)


@runtime_checkable
class HoldsFlowFile(Protocol):
    """A FlowFile's wrapper the API hands out (``FlowFileView``, ``MockFlowFile``)."""

    @property
    def flowfile(self) -> FlowFile:
        """The FlowFile value it wraps."""
        ...


def _evaluated_against(
    given: FlowFile | HoldsFlowFile | Mapping[str, str] | None,
) -> tuple[FlowFile | None, Mapping[str, str]]:
    """The FlowFile (if any) and the attributes Expression Language reads from *given*."""
    from flowcore.flowfile import FlowFile  # noqa: PLC0415 - avoids a cycle at import

    if given is None:
        return None, {}
    if isinstance(given, FlowFile):
        return given, given.attributes
    if isinstance(given, HoldsFlowFile) and isinstance(given.flowfile, FlowFile):
        return given.flowfile, given.flowfile.attributes
    if isinstance(given, Mapping):
        return None, given
    msg = (
        "evaluate_attribute_expressions takes a FlowFile, the FlowFileView a transform gets, "
        f"a MockFlowFile or a mapping of attributes, not {type(given).__name__} {given!r}"
    )
    raise TypeError(msg)


@functools.lru_cache(maxsize=4096)
def _names(display_name: str, name: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((display_name, name, property_key(display_name), *aliases)))


@attrs.frozen
class PropertyValue:
    """A property's configured value, with NiFi's typed accessors.

    ``context.get_property(SplitText.LINE_SPLIT_COUNT).as_integer()`` returns ``1``;
    ``.evaluate_attribute_expressions(flowfile)`` returns a new value with EL evaluated.

    Attributes:
        value: the raw string (``None`` when unset and without default).
        descriptor: the property's descriptor, when known (names it in errors).
        state: processor state for ``getStateValue`` during evaluation.
        clock: the time source for ``now()`` (the harness clock in tests).
    """

    value: str | None
    descriptor: PropertyDescriptor | None = None
    state: Mapping[str, str] | None = attrs.field(default=None, repr=False)
    clock: Callable[[], int] | None = attrs.field(default=None, repr=False)

    def _name(self) -> str:
        return self.descriptor.display_name if self.descriptor else "property"

    def _fail(self, expected: str) -> ConfigurationError:
        msg = f"{self._name()!r} has the value {self.value!r}, which is not {expected}"
        return ConfigurationError(msg)

    def is_set(self) -> bool:
        """Whether there is a value (configured or default)."""
        return self.value is not None

    def get_value(self) -> str | None:
        """The raw string value (NiFi's ``getValue``)."""
        return self.value

    def as_integer(self) -> int | None:
        """The value as an int, ``None`` when unset."""
        if self.value is None:
            return None
        try:
            return int(self.value.strip())
        except ValueError:
            msg = "a whole number"
            raise self._fail(msg) from None

    as_long = as_integer

    def as_float(self) -> float | None:
        """The value as a float, ``None`` when unset."""
        if self.value is None:
            return None
        try:
            return float(self.value.strip())
        except ValueError:
            msg = "a number"
            raise self._fail(msg) from None

    def as_boolean(self) -> bool | None:
        """The value as a bool (``"true"`` in any case), ``None`` when unset."""
        if self.value is None:
            return None
        return self.value.strip().lower() == "true"

    def as_time_period(self, unit: str = "s") -> float | None:
        """The value as a time period in *unit* (``ms``, ``s``, ``min`` ...); None when unset."""
        if self.value is None:
            return None
        try:
            return parse_time_period(self.value, unit)
        except ValueError:
            msg = "a time period such as '30 secs'"
            raise self._fail(msg) from None

    def as_data_size(self, unit: str = "B") -> float | None:
        """The value as a data size in *unit* (``B``, ``KB`` ...), ``None`` when unset."""
        if self.value is None:
            return None
        try:
            return parse_data_size(self.value, unit)
        except ValueError:
            msg = "a data size such as '10 KB'"
            raise self._fail(msg) from None

    def evaluate_attribute_expressions(
        self,
        flowfile: FlowFile | HoldsFlowFile | Mapping[str, str] | None = None,
        variables: Mapping[str, str] | None = None,
    ) -> PropertyValue:
        """Return a value with Expression Language evaluated against *flowfile* (or a map).

        *flowfile* is any form the API hands out: a :class:`~flowcore.flowfile.FlowFile` (a
        session's), the ``FlowFileView`` a ``FlowFileTransform.transform`` gets, a harness's
        ``MockFlowFile`` (anything holding one as ``.flowfile``), or a mapping of attributes.
        Without one, attribute references are null (NiFi's environment scope). A sensitive
        parameter's value is taken as it is, never evaluated.

        Raises:
            ExpressionEvaluationError: evaluation failed (e.g. an invalid regex at run time).
            TypeError: *flowfile* is none of those forms.
        """
        ff, attributes = _evaluated_against(flowfile)
        if self.value is None or "{" not in self.value or isinstance(self.value, SensitiveText):
            return self
        if self.descriptor is not None and not self.descriptor.supports_expressions:
            return self
        expression = compile_expression(self.value)
        ctx = EvaluationContext(
            attributes=attributes,  # type: ignore[arg-type]
            flowfile=ff,
            variables=variables or {},
            state=self.state,
            clock=self.clock,
        )
        return attrs.evolve(self, value=expression.evaluate_in(ctx))

    def __str__(self) -> str:
        return "" if self.value is None else self.value


def active_values(
    descriptors: Iterable[PropertyDescriptor], effective: Mapping[str, str | None]
) -> dict[str, str | None]:
    """*effective* values with every property whose dependencies are unmet set to None.

    Dependencies apply transitively, as in NiFi: a property that depends on a disabled
    property is disabled too (MergeContent's Header depends on Delimiter Strategy, which
    depends on Merge Format). Processors and controller services both judge their values so.
    """
    ordered = tuple(descriptors)
    active = dict(effective)
    changed = True
    while changed:
        changed = False
        for descriptor in ordered:
            if active[descriptor.name] is not None and not descriptor.is_enabled(active):
                active[descriptor.name] = None
                changed = True
    return active


def parameter_problems(
    referenced: Mapping[str, tuple[str, ...]],
    resolve: Callable[[str], PropertyDescriptor | None],
    raw: Mapping[str, str],
    parameters: Mapping[str, str | None],
) -> tuple[list[ValidationResult], set[str]]:
    """NiFi's rules for ``#{name}`` references, for a processor's or a service's properties.

    Args:
        referenced: the parameter names each property references, by internal name.
        resolve: the descriptor of a property name (None: an unknown, dynamic one).
        raw: the configured values, references kept.
        parameters: the bound parameter values.

    Returns:
        The problems, and the display names of the properties whose references cannot resolve
        (their own validators are not run on them).
    """
    problems: list[ValidationResult] = []
    unresolved: set[str] = set()
    for name, names in referenced.items():
        descriptor = resolve(name)
        label = descriptor.display_name if descriptor is not None else name
        sensitive = descriptor is not None and descriptor.sensitive
        value = raw[name]
        shown = MASK if sensitive else value  # NiFi shows a sensitive value as ********
        for parameter in names:
            why = reference_problem(parameter, parameters, sensitive_property=sensitive)
            if why is not None:
                problems.append(ValidationResult(label, shown, False, why))
            if why is not None or parameters.get(parameter) is None:
                unresolved.add(label)
        if sensitive and value != f"#{{{names[0]}}}":
            why = f"{SENSITIVE_ALONE}, e.g. #{{{names[0]}}}"
            problems.append(ValidationResult(label, shown, False, why))
    return problems, unresolved
