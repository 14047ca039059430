"""Invalid processors of an imported NiFi flow: left stopped, as NiFi leaves them.

NiFi does not refuse a flow because one of its processors is invalid (a required property
unset, a value or an Expression Language that does not validate, a relationship neither
connected nor auto-terminated): that processor cannot start, FlowFiles queue before it, and
everything else runs. A flow imported with :meth:`flowcore.builder.Flow.from_nifi` is run the same
way: each processor the checks below find invalid runs as a disabled one (its input waits,
durably, until a later run finds it valid), and is reported once with NiFi's reasons
(``'Line Split Count' validated against '-1' is invalid because ...``). ``strict=True``
(``--strict``) leaves them to validation, which reports them all at once as for a Python flow.

Only what NiFi judges a processor by makes it invalid: its properties (parameters
substituted), its relationships, its input requirement and its scheduling settings; what is
wrong with a connection, a parameter's value or the flow as a whole still fails validation.
Python flows fail fast, as before: nothing here applies to them.
"""

from __future__ import annotations

from collections.abc import Mapping

from flowcore.definition.flow import ComponentKind, FlowDefinition
from flowcore.definition.validation import (
    Check,
    check_durations_and_retry,
    check_inputs,
    check_properties,
    check_relationships_handled,
    check_run_schedules,
)
from flowcore.nifi.findings import ImportNote

__all__ = ["INVALIDATING_CHECKS", "invalid_processors", "stopped_notes"]

#: The checks whose findings about a processor make it invalid in NiFi. Each skips disabled
#: processors, so a processor stopped for them passes them; those that do not (a connection
#: naming a relationship the processor lacks, a service the flow does not declare) stay errors.
INVALIDATING_CHECKS: tuple[Check, ...] = (
    check_properties,
    check_relationships_handled,
    check_inputs,
    check_run_schedules,
    check_durations_and_retry,
)


def _nifi_worded(reason: str) -> str:
    """*reason* as NiFi words it: ``'<subject>' is invalid because <explanation>``.

    Property results are worded so already; NiFi names a relationship's subject
    ``'Relationship <name>'`` and quotes ``'Upstream Connections'``.
    """
    if reason.startswith("Upstream Connections is invalid"):
        return f"'Upstream Connections'{reason.removeprefix('Upstream Connections')}"
    if reason.startswith("Relationship '") and " is not connected " in reason:
        name = reason.split("'", 2)[1]
        return f"'Relationship {name}' is invalid because {reason}"
    return reason


def invalid_processors(flow: FlowDefinition) -> dict[str, tuple[str, ...]]:
    """The enabled processors of *flow* NiFi would find invalid, by name, with the reasons.

    Judged on the flow as it is now (its parameters included), each reason once, in the
    order validation reports them.
    """
    by_subject = {
        str(c): c.name
        for c in flow.components
        if c.kind is ComponentKind.PROCESSOR and not c.disabled
    }
    found: dict[str, list[str]] = {}
    for check in INVALIDATING_CHECKS:
        for problem in check(flow):
            name = by_subject.get(problem.subject)
            if name is not None:
                found.setdefault(name, []).append(_nifi_worded(problem.problem))
    return {name: tuple(dict.fromkeys(reasons)) for name, reasons in found.items()}


def stopped_notes(stopped: Mapping[str, tuple[str, ...]]) -> tuple[ImportNote, ...]:
    """One note per processor left stopped, its reasons in NiFi's words."""
    return tuple(
        ImportNote(
            name,
            "is invalid, so it stays stopped, as in NiFi (FlowFiles queued for it wait, "
            f"durably, until it is fixed): {'; '.join(reasons)}",
        )
        for name, reasons in stopped.items()
    )
