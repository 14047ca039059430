"""Controller services: shared configuration and resources a flow declares once, processors name.

NiFi's controller services (a Record Reader, a lookup table, an SSL context, a connection
pool) are components of their own: configured with properties, validated, enabled before the
processors that use them and disabled after. A processor's service property
(``identifies_service`` on its :class:`~flowcore.properties.PropertyDescriptor`, NiFi's
``identifiesControllerService``) names one, and may say which interface it needs.

A :class:`ControllerService` is written as a processor is::

    class LookupTable(ControllerService):
        \"\"\"A key/value table read from a JSON file.\"\"\"

        implements = ("LookupService",)
        FILE = PropertyDescriptor("Table File", required=True)
        property_descriptors = (FILE,)

        def on_enabled(self, context):
            with open(context.get_property(self.FILE).value) as handle:
                self.table = json.load(handle)

        def lookup(self, key):
            return self.table.get(key)

    flow.add_service(LookupTable("codes", table_file="codes.json"))

Definition and runtime are two objects. The object a flow holds is the *definition*: its name
and property values, frozen once built, picklable (Spark ships it to executors). Enabling it
(:meth:`ControllerService.enable`) makes a *runtime* copy and calls :meth:`on_enabled` on that
copy, which may open files or connections and keep them as attributes. A runtime object pickles
as its definition only: what ``on_enabled`` opened is never shipped, it is opened again where the
service is enabled next (each executor process enables its own, once, see
:func:`enabled_service`). A task asks for a service by name and gets the enabled runtime object.

Services may name other services (a reader naming a schema registry): :func:`enabling_order`
enables dependencies first (a topological order) and :func:`service_cycles` names cycles (both
in :mod:`flowcore.service_order`, re-exported here).
"""

from __future__ import annotations

import atexit
import copy
import difflib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

import attrs

from flowcore.errors import ConfigurationError
from flowcore.parameters import (
    MASK,
    parameter_references,
    redact,
    substitute_parameters,
)
from flowcore.properties import (
    ExpressionLanguageScope,
    PropertyDescriptor,
    PropertyValue,
    active_values,
    parameter_problems,
)
from flowcore.service_order import (
    enabling_order,
    service_cycles,
    service_dependencies,
    service_dependents,
)
from flowcore.validators import NON_EMPTY_VALIDATOR, ValidationResult, masked_failures

__all__ = [
    "ControllerService",
    "ServiceContext",
    "ServiceSet",
    "disable_process_services",
    "enabled_service",
    "enabling_order",
    "interface_name",
    "service_cycles",
    "service_dependencies",
]


def interface_name(interface: str | type) -> str:
    """The simple name of an interface given as a class, a simple or fully qualified name."""
    text = interface.__name__ if isinstance(interface, type) else str(interface)
    return text.rsplit(".", 1)[-1]


def check_service_name(name: object) -> str:
    """*name* when it can name a service.

    Raises:
        ConfigurationError: it is not a non-empty string.
    """
    if not isinstance(name, str) or not name.strip():
        msg = f"a service needs a non-empty name (got {name!r})"
        raise ConfigurationError(msg)
    return name


class ControllerService:
    """Base class of every controller service (NiFi's ``AbstractControllerService``).

    Subclasses declare ``property_descriptors`` (the same descriptors processors use: display
    and internal names, defaults, allowable values, validators, ``sensitive``, Expression
    Language scope), the interfaces they ``implements`` (NiFi's API names, e.g.
    ``RecordReaderFactory``), and the NiFi types they stand for (``nifi_types``, fully
    qualified, the first one written on export). Properties are given as a processor takes
    them: display name, internal name or snake_case keyword.

    The instance is frozen once built (a definition); :meth:`on_enabled` runs on a runtime copy
    (see the module docstring), where attributes may be set freely.

    Args:
        name: how processors' service properties name it (default: the type's name;
            ``flow.add_service(service, name=...)`` may declare it under another).
        **properties: property values by any of their names (NiFi strings or Python values).

    Raises:
        ConfigurationError: the name is empty.
    """

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = ()
    #: NiFi's interfaces this service implements (simple or fully qualified names; exports
    #: write the qualified ones as its ``controllerServiceApis``), which a processor's service
    #: property may require.
    implements: ClassVar[tuple[str, ...]] = ()
    #: NiFi's fully qualified types this service stands for (import maps them; export writes
    #: the first).
    nifi_types: ClassVar[tuple[str, ...]] = ()
    #: The NAR of the first NiFi type, as (group, artifact), for exports (empty: flowcore's).
    nifi_bundle: ClassVar[tuple[str, ...]] = ()
    supports_dynamic_properties: ClassVar[bool] = False
    tags: ClassVar[tuple[str, ...]] = ()
    #: Whether the service holds state every task must see, committed with the sessions of
    #: the processors using it (the map cache): such processors run one task at a time.
    holds_shared_state: ClassVar[bool] = False
    #: Marks controller services for code below this module (a property value may be one).
    is_controller_service: ClassVar[bool] = True

    # Class defaults, so attrs-valued subclasses (which skip this __init__) have them.
    _values: Mapping[str, str] = {}
    _unknown: Mapping[str, str] = {}
    _parameters: Mapping[str, str | None] = {}
    _runtime: bool = False

    def __init__(self, name: str | None = None, **properties: Any) -> None:
        values: dict[str, str] = {}
        unknown: dict[str, str] = {}
        name = type(self).__name__ if name is None else name
        object.__setattr__(self, "name", check_service_name(name))
        for key, value in properties.items():
            if value is None:
                continue
            descriptor = self.resolve_descriptor(key)
            if descriptor is not None:
                values[descriptor.name] = descriptor.to_value_string(value)
            elif self.supports_dynamic_properties:
                values[key] = self.dynamic_descriptor(key).to_value_string(value)
            else:
                unknown[key] = value if isinstance(value, str) else str(value)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_unknown", unknown)

    # --- frozen definition, picklable as its definition only ----------------------------------

    def __setattr__(self, key: str, value: Any) -> None:
        if not self._runtime:
            msg = (
                f"{type(self).__name__} {getattr(self, 'name', '?')!r} is a frozen definition; "
                f"set {key!r} in on_enabled (on the enabled copy), or build a new service"
            )
            error = attrs.exceptions.FrozenInstanceError()
            error.args = (msg,)
            raise error
        object.__setattr__(self, key, value)

    def __getstate__(self) -> dict[str, Any]:
        """The definition only: what ``on_enabled`` opened is rebuilt where it is enabled."""
        return {
            "name": self.name,
            "_values": dict(self._values),
            "_unknown": dict(self._unknown),
            "_parameters": dict(self._parameters),
        }

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)

    def _key(self) -> tuple[Any, ...]:
        return (
            type(self),
            self.name,
            tuple(sorted(self._values.items())),
            tuple(sorted(self._unknown.items())),
            tuple(sorted((k, str(v)) for k, v in self._parameters.items())),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ControllerService):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = [repr(self.name)]
        for key, value in self._values.items():
            descriptor = self.resolve_descriptor(key)
            hidden = descriptor is not None and descriptor.sensitive and "#{" not in value
            label = descriptor.key if descriptor is not None else key
            shown.append(f"{label}={MASK if hidden else value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def renamed(self, name: str) -> ControllerService:
        """This definition under another name."""
        clone = copy.copy(self)
        object.__setattr__(clone, "name", check_service_name(name))
        return clone

    def fingerprint(self) -> str:
        """Its settings apart from its name and its secrets (what a repository records).

        Sensitive values are left out, so a run never writes them: the declared properties'
        and the dynamic ones a service marks sensitive (DBCPConnectionPool's ``SENSITIVE.*``).
        """
        sensitive = self.sensitive_names()
        values = sorted((k, v) for k, v in self.raw_configured.items() if k not in sensitive)
        return f"{type(self).__module__}.{type(self).__qualname__}/{json.dumps(values)}"

    @property
    def type_name(self) -> str:
        """The service's type, as messages and listings name it."""
        return type(self).__name__

    @property
    def state_key(self) -> str:
        """The component id the service's state (if any) is stored under."""
        return f"service:{self.name}"

    def implements_interface(self, interface: str | type) -> bool:
        """Whether this service implements *interface* (a simple or qualified NiFi name)."""
        wanted = interface_name(interface)
        return wanted in {interface_name(i) for i in self.implements} or wanted == self.type_name

    # --- properties -----------------------------------------------------------------------------

    def descriptors(self) -> tuple[PropertyDescriptor, ...]:
        """The supported properties, in declaration order."""
        return type(self).property_descriptors

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """Describe a user-defined property *name* (for services that support them)."""
        return PropertyDescriptor(
            name,
            description="A user-defined property",
            el_scope=ExpressionLanguageScope.ENVIRONMENT,
            validators=(NON_EMPTY_VALIDATOR,),
            dynamic=True,
        )

    def resolve_descriptor(self, name: PropertyDescriptor | str) -> PropertyDescriptor | None:
        """The descriptor for a display name, internal name, keyword, alias or descriptor."""
        if isinstance(name, PropertyDescriptor):
            if name.dynamic:
                return name
            name = name.name
        for descriptor in self.descriptors():
            if name in descriptor.names():
                return descriptor
        if name in self._values and self.supports_dynamic_properties:
            return self.dynamic_descriptor(name)
        return None

    @property
    def raw_configured(self) -> Mapping[str, str]:
        """The values explicitly set, by internal name, ``#{name}`` references kept."""
        return dict(self._values)

    @property
    def configured(self) -> Mapping[str, str]:
        """The values explicitly set, by internal name, parameters substituted."""
        return {
            name: value
            if "#" not in value
            else substitute_parameters(value, self._parameters, expressions=self._evaluates(name))
            for name, value in self.raw_configured.items()
        }

    @property
    def dynamic_properties(self) -> dict[str, str]:
        """User-defined properties, in the order they were set."""
        known = {d.name for d in self.descriptors()}
        return {k: v for k, v in self.configured.items() if k not in known}

    def _evaluates(self, name: str) -> bool:
        descriptor = self.resolve_descriptor(name)
        return descriptor is not None and descriptor.supports_expressions

    def effective_value(self, descriptor: PropertyDescriptor) -> str | None:
        """The configured value (parameters substituted), else the default."""
        value = self.configured.get(descriptor.name)
        return descriptor.default if value is None else value

    def effective_values(self) -> dict[str, str | None]:
        """Every supported property's effective value, by internal name."""
        return {d.name: self.effective_value(d) for d in self.descriptors()}

    def active_values(self) -> dict[str, str | None]:
        """Effective values, those whose dependencies are unmet (transitively) set to None."""
        return active_values(self.descriptors(), self.effective_values())

    def get_property(self, descriptor: PropertyDescriptor | str) -> PropertyValue:
        """A property's value (NiFi's ``ConfigurationContext.getProperty``).

        Raises:
            ConfigurationError: the service has no such property.
        """
        found = self.resolve_descriptor(descriptor)
        if found is None:
            raise ConfigurationError(self.unknown_property_message(str(descriptor)))
        return PropertyValue(self.effective_value(found), found)

    def referenced_services(self) -> dict[str, str]:
        """The service each set service property names, by the property's display name."""
        found = {}
        for descriptor in self.descriptors():
            if descriptor.identifies_service:
                value = self.effective_value(descriptor)
                if value:
                    found[descriptor.display_name] = value
        return found

    def sensitive_names(self) -> set[str]:
        """The internal names of the sensitive properties set or declared, dynamic ones included.

        A dynamic property is sensitive when :meth:`dynamic_descriptor` says so (DBCP's
        ``SENSITIVE.name`` driver properties): its value is a secret as a declared one's is.
        """
        declared = {d.name for d in self.descriptors()}
        names = {d.name for d in self.descriptors() if d.sensitive}
        if self.supports_dynamic_properties:
            names.update(
                name
                for name in self.raw_configured
                if name not in declared and self.dynamic_descriptor(name).sensitive
            )
        return names

    def sensitive_values(self) -> list[str]:
        """The values of sensitive properties, dynamic ones included (to redact from messages)."""
        values = [
            str.__str__(v)
            for d in self.descriptors()
            if d.sensitive and (v := self.effective_value(d))
        ]
        declared = {d.name for d in self.descriptors()}
        for name in self.sensitive_names() - declared:
            value = self.configured.get(name)
            if value:
                values.append(str.__str__(value))
        return values

    def _closest(self, name: str) -> PropertyDescriptor | None:
        """The property *name* most likely misspells, if any."""
        choices = {n: d for d in self.descriptors() for n in (d.display_name, d.key)}
        close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
        return choices[close[0]] if close else None

    def _may_be_secret(self, name: str) -> bool:
        """Whether unknown property *name* looks like a misspelled sensitive one (``pasword``)."""
        found = self._closest(name)
        return found is not None and found.sensitive

    def unknown_property_message(self, name: str) -> str:
        """Explain that *name* is not a property, suggesting the closest one."""
        found = self._closest(name)
        if found is not None:
            hint = f"; did you mean {found.display_name!r} ({found.key})?"
        elif self.descriptors():
            hint = f"; its properties are {[d.display_name for d in self.descriptors()]!r}"
        else:
            hint = "; it has no properties"
        return f"{name!r} is not a supported property of {self.type_name}{hint}"

    # --- parameters -----------------------------------------------------------------------------

    def referenced_parameters(self) -> dict[str, tuple[str, ...]]:
        """The parameter names each configured property references, by its internal name."""
        found = {}
        for name, value in self.raw_configured.items():
            names = parameter_references(value, expressions=self._evaluates(name))
            if names:
                found[name] = names
        return found

    def with_parameters(self, values: Mapping[str, str | None]) -> ControllerService:
        """This definition with ``#{name}`` values bound (itself when it references none).

        A service whose settings are attrs fields (the SSL context, the map cache) reads its
        fields, not its configured values: it gets the values substituted into those fields,
        so the bound copy works wherever it is used and pickles whole (attrs' slotted state
        keeps only fields).
        """
        if not self.referenced_parameters():
            return self
        if attrs.has(type(self)):
            changes = {
                field.alias: substitute_parameters(getattr(self, field.name), values)
                for field in attrs.fields(type(self))
                if field.init
                and isinstance(getattr(self, field.name), str)
                and "#{" in getattr(self, field.name)
            }
            return attrs.evolve(self, **changes)
        clone = copy.copy(self)
        object.__setattr__(clone, "_parameters", dict(values))
        return clone

    # --- validation -----------------------------------------------------------------------------

    def validate(self) -> tuple[ValidationResult, ...]:
        """Every configuration problem at once; empty when valid (sensitive values masked)."""
        problems: list[ValidationResult] = [
            ValidationResult(
                name,
                MASK if self._may_be_secret(name) else value,
                False,
                self.unknown_property_message(name),
            )
            for name, value in self._unknown.items()
        ]
        found, unresolved = parameter_problems(
            self.referenced_parameters(),
            self.resolve_descriptor,
            self.raw_configured,
            self._parameters,
        )
        problems.extend(found)
        effective = self.effective_values()
        active = self.active_values()
        for descriptor in self.descriptors():
            if descriptor.display_name not in unresolved:
                problems.extend(descriptor.validate(effective[descriptor.name], active))
        for name, value in self.dynamic_properties.items():
            if name not in unresolved:
                problems.extend(self.dynamic_descriptor(name).validate(value))
        sensitive = {
            label for d in self.descriptors() if d.sensitive for label in (d.name, d.display_name)
        } | self.sensitive_names()
        problems.extend(masked_failures(self.custom_validate(active), sensitive))
        return tuple(problems)

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """Cross-property checks (NiFi's ``customValidate``); *values* are the active values."""
        del values
        return ()

    def service_problems(
        self, descriptor: PropertyDescriptor, service: Any
    ) -> Iterable[tuple[str, str]]:
        """Checks of the *service* a property names: pairs of problem and fix.

        NiFi's customValidate reading ``asControllerService``; flow validation runs it, since
        only the flow knows which service a name means.
        """
        del descriptor, service
        return ()

    # --- lifecycle ------------------------------------------------------------------------------

    @property
    def is_enabled(self) -> bool:
        """Whether this object is an enabled runtime copy (the definition never is)."""
        return self._runtime

    def enable(self, context: ServiceContext) -> ControllerService:
        """A runtime copy of this definition with :meth:`on_enabled` run on it.

        Raises:
            ConfigurationError: ``on_enabled`` failed (the message names the service; sensitive
                values are masked).
        """
        runtime = copy.copy(self)
        object.__setattr__(runtime, "_runtime", True)
        try:
            runtime.on_enabled(context)
        except Exception as error:  # a user's code: one line, its secrets masked
            why = (
                str(error)
                if isinstance(error, ConfigurationError)
                else f"{type(error).__name__}: {error}"
            )
            why = redact(why, self.sensitive_values())
            msg = f"service {self.name!r} ({self.type_name}) could not be enabled: {why}"
            raise ConfigurationError(msg) from None
        return runtime

    def on_enabled(self, context: ServiceContext) -> None:
        """Open what the service needs (NiFi's ``@OnEnabled``), on the runtime copy."""

    def on_disabled(self) -> None:
        """Release what :meth:`on_enabled` opened (NiFi's ``@OnDisabled``)."""


@attrs.frozen
class ServiceContext:
    """What a service sees while it is enabled (NiFi's ``ConfigurationContext``).

    Attributes:
        service: the definition being enabled.
        services: the enabled runtime services it may name, by name.
    """

    service: ControllerService
    services: Mapping[str, ControllerService] = attrs.field(factory=dict)

    @property
    def name(self) -> str:
        """The service's name."""
        return self.service.name

    def get_property(self, descriptor: PropertyDescriptor | str) -> PropertyValue:
        """A property's value; Expression Language (environment scope) evaluated."""
        value = self.service.get_property(descriptor)
        if value.descriptor is not None and value.descriptor.supports_expressions:
            return value.evaluate_attribute_expressions()
        return value

    def controller_service(self, name: str) -> ControllerService:
        """The enabled service *name* that this service's properties name.

        Raises:
            ConfigurationError: it does not name that service.
        """
        found = self.services.get(name)
        if found is None:
            if name in service_dependencies(self.service):
                msg = f"service {self.name!r} names service {name!r}, which is not declared"
            else:
                msg = (
                    f"service {self.name!r} asks for service {name!r}, which none of its "
                    f"properties names (it names {sorted(self.services)!r})"
                )
            raise ConfigurationError(msg)
        return found


class ServiceSet:
    """Services of one flow enabled together, dependencies first, disabled in reverse.

    What the test harness and a run hold: :meth:`get` enables a service (and what it names) on
    first use, :meth:`enable_all` all of them, :meth:`disable_all` disables every enabled one,
    dependents first.

    Args:
        declared: the service definitions, by name.
    """

    def __init__(self, declared: Mapping[str, ControllerService]) -> None:
        self.declared = dict(declared)
        self.enabled: dict[str, ControllerService] = {}
        self._lock = threading.RLock()

    def get(self, name: str) -> ControllerService:
        """The enabled runtime service *name* (enabled now if it is not yet).

        Raises:
            ConfigurationError: no such service, a cycle, or enabling failed.
        """
        if name not in self.declared:
            known = sorted(self.declared)
            msg = f"no service named {name!r} is declared in the flow (known: {known!r})"
            raise ConfigurationError(msg)
        enabled = self.enabled.get(name)
        if enabled is not None:  # every lookup after the first: no graph to sort
            return enabled
        with self._lock:
            for each in enabling_order(self.declared, [name]):
                if each not in self.enabled:
                    service = self.declared[each]
                    needed = {
                        n: self.enabled[n]
                        for n in service_dependencies(service)
                        if n in self.enabled
                    }
                    self.enabled[each] = _enable(service, ServiceContext(service, needed))
            return self.enabled[name]

    def enable_all(self) -> None:
        """Enable every declared service, dependencies first."""
        for name in enabling_order(self.declared):
            self.get(name)

    def enable(self, name: str) -> ControllerService:
        """Enable service *name* (and what it names); the runtime object."""
        return self.get(name)

    def disable(self, name: str) -> None:
        """Disable service *name* and, first, every enabled service naming it."""
        with self._lock:
            if name not in self.enabled:
                return
            dependents = [n for n in service_dependents(self.declared, name) if n in self.enabled]
            order = enabling_order(self.declared, [*dependents, name])
            for each in reversed(order):
                if each == name or each in dependents:
                    runtime = self.enabled.pop(each, None)
                    if runtime is not None:
                        runtime.on_disabled()

    def disable_all(self) -> None:
        """Disable every enabled service, dependents before what they name."""
        with self._lock:
            for name in reversed(enabling_order(self.declared, list(self.enabled))):
                runtime = self.enabled.pop(name, None)
                if runtime is not None:
                    runtime.on_disabled()


def _enable(service: ControllerService, context: ServiceContext) -> ControllerService:
    """*service* enabled (a definition that is not a :class:`ControllerService` is itself)."""
    if isinstance(service, ControllerService):
        return service.enable(context)
    return service


# --- one enabled copy per process --------------------------------------------------------------

#: The services this process enabled, by definition and the definitions of everything it names
#: (equal closures share one runtime; a reader naming a changed registry gets a new one).
_PROCESS: dict[tuple[ControllerService, ...], ControllerService] = {}
_PROCESS_LOCK = threading.RLock()
#: The last runtime handed out for each name, with the very mapping it was asked with (held,
#: so its id cannot be reused): a task's services do not change while it runs.
_LAST: dict[str, tuple[Mapping[str, Any], Any]] = {}


def enabled_service(name: str, declared: Mapping[str, Any]) -> Any:
    """The enabled runtime of service *name* among *declared*, enabled once per process.

    What a task hands a processor that asks for a service: on a Spark executor the definition
    arrived pickled (without runtime state) and is enabled here on first use, its dependencies
    first; every later task of the process reuses it. Services are disabled when the process
    ends (:func:`disable_process_services`).

    Raises:
        ConfigurationError: no such service, a cycle, or enabling failed.
    """
    last = _LAST.get(name)
    if last is not None and last[0] is declared:
        return last[1]  # a task asks per FlowFile: ordering and hashing cost ~0.7 ms a call
    if name not in declared:
        known = sorted(declared)
        msg = f"no service named {name!r} is declared in the flow (known: {known!r})"
        raise ConfigurationError(msg)
    with _PROCESS_LOCK:
        runtime: Any = None
        for each in enabling_order(declared, [name]):
            definition = declared[each]
            key = tuple(declared[n] for n in enabling_order(declared, [each]))
            runtime = _PROCESS.get(key)
            if runtime is None:
                needed = {n: enabled_service(n, declared) for n in service_dependencies(definition)}
                runtime = _enable(definition, ServiceContext(definition, needed))
                if not _PROCESS:
                    atexit.register(disable_process_services)
                _PROCESS[key] = runtime
        _LAST[name] = (declared, runtime)
        return runtime


def disable_process_services() -> None:
    """Disable every service this process enabled through :func:`enabled_service`."""
    with _PROCESS_LOCK:
        for runtime in reversed(list(_PROCESS.values())):
            try:
                if isinstance(runtime, ControllerService):
                    runtime.on_disabled()
            except Exception:  # one failing service must not stop the rest
                pass
        _PROCESS.clear()
        _LAST.clear()


def by_interface(
    declared: Mapping[str, ControllerService], interface: str | type
) -> Iterator[ControllerService]:
    """The declared services implementing *interface*."""
    return (s for s in declared.values() if s.implements_interface(interface))
