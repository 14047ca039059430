"""What an import finds to report: problems (it cannot run the flow) and notes (it can).

Every problem of a flow is gathered before anything runs and raised once, as one
:class:`~flowcore.errors.NiFiImportError` listing them all, as flow validation does. Unsupported
processor and service types come first, grouped by type, each with how many components use it,
which (by group path), and the fix: every type flowcore lacks is named in the first error, so
one round of mapping or replacing types is enough. Notes
say what the import kept but flowcore does not act on (cluster settings) or changed on the
way (a port that leads nowhere): never silently dropped.
"""

from __future__ import annotations

import attrs

from flowcore.definition.validation import FlowProblem
from flowcore.errors import NiFiImportError

__all__ = ["Findings", "ImportNote"]

_TYPE_MAP_HINT = (
    "map it to a processor class with type_map={{{simple!r}: YourProcessor}} "
    "(flowcore run, explain or convert --type-map MODULE:DICT), or replace it in NiFi"
)
#: What a user can do about a NiFi 2 Python processor (a type without a package) not loaded.
_PYTHON_HINT = (
    "it is a NiFi Python processor: give the directory its .py file is in with "
    "--python-extensions DIR (or FLOWCORE_PYTHON_EXTENSIONS), as NiFi's "
    "nifi.python.extensions.source.directory"
)

#: What a user can do about a service type flowcore lacks, until service types can be mapped.
_SERVICE_HINT = (
    "write a ControllerService for it and register it under the entry point group "
    "'flowcore.services' (docs/services.md), or replace what uses it in NiFi"
)


@attrs.frozen
class ImportNote:
    """Something the import kept without acting on, or changed on the way.

    Attributes:
        subject: the component or setting, as NiFi named it (group path included).
        note: what happens to it in flowcore.
    """

    subject: str
    note: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.note}"


def _listed(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _counted(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


@attrs.define
class Findings:
    """Problems and notes, gathered while one flow is imported."""

    problems: list[FlowProblem] = attrs.Factory(list)
    notes: list[ImportNote] = attrs.Factory(list)
    #: Unsupported processor types -> the components using them.
    processor_types: dict[str, list[str]] = attrs.Factory(dict)
    #: Unsupported service types -> (why, each service with its users: ``'G/pool' (used by
    #: 'G/Query')``).
    service_types: dict[str, tuple[str, list[str]]] = attrs.Factory(dict)

    def problem(self, subject: str, problem: str, fix: str = "") -> None:
        """Record something that keeps the flow from running."""
        self.problems.append(FlowProblem(subject, problem, fix))

    def note(self, subject: str, note: str) -> None:
        """Record something the user should know, that does not keep the flow from running."""
        self.notes.append(ImportNote(subject, note))

    def unsupported_processor(self, nifi_type: str, component: str) -> None:
        """*component* is of a NiFi processor type flowcore has no processor for."""
        self.processor_types.setdefault(nifi_type, []).append(component)

    def unsupported_service(self, nifi_type: str, why: str, user: str) -> None:
        """A service of *nifi_type*, which flowcore lacks (*why*), is needed.

        Args:
            nifi_type: the service's NiFi type.
            why: why flowcore cannot provide it.
            user: the service and what uses it (``'G/pool' (used by 'G/Query', 'Load')``).
        """
        self.service_types.setdefault(nifi_type, (why, []))[1].append(user)

    def all_problems(self) -> list[FlowProblem]:
        """Every problem: unsupported types first (by type), then the others in order found."""
        found = []
        for nifi_type, components in sorted(self.processor_types.items()):
            simple = nifi_type.rsplit(".", 1)[-1]
            used = f"used by {_counted(len(components), 'processor')}: {_listed(components)}"
            found.append(
                FlowProblem(
                    f"processor type {nifi_type}",
                    f"flowcore has no such processor; {used}",
                    _TYPE_MAP_HINT.format(simple=simple) if "." in nifi_type else _PYTHON_HINT,
                )
            )
        for nifi_type, (why, users) in sorted(self.service_types.items()):
            held = f"{_counted(len(users), 'service')}: {', '.join(users)}"
            found.append(
                FlowProblem(f"controller service type {nifi_type}", f"{why}; {held}", _SERVICE_HINT)
            )
        return found + self.problems

    def raise_if_any(self, flow_name: str, source: str) -> None:
        """Raise one error listing every problem, when there is any.

        Raises:
            NiFiImportError: with ``problems`` holding each
                :class:`~flowcore.definition.validation.FlowProblem`.
        """
        problems = self.all_problems()
        if not problems:
            return
        lines = "\n".join(f"  - {p}" for p in problems)
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        msg = f"NiFi flow '{flow_name}' ({source}) cannot run in flowcore ({count}):\n{lines}"
        raise NiFiImportError(msg, problems)
