"""The parameter context of an imported flow: NiFi's contexts, bound per group, made one.

In NiFi each process group binds a parameter context by name (``parameterContextName``), and a
context inherits others (``inheritedParameterContexts``, names, searched in order). flowcore
gives a flow one context, so the import makes one that inherits every context a group binds, in
the order the groups are walked (the top group's first); :mod:`flowcore.parameters` resolves
names in NiFi's order from there. Two bound contexts giving one name different values cannot
be made one and are reported, unless the user's own value settles it.

A sensitive parameter's value is never in an export (NiFi leaves it out of flow definitions and
encrypts it with the instance's key in ``flow.json.gz``), so it comes without one: the user gives
it (``Parameter(name, sensitive=True, value_from_env=...)``, ``--parameter-env``), and flow
validation names each one still missing. The user's parameters win over the file's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from flowcore.definition.validation import FlowProblem
from flowcore.errors import ConfigurationError
from flowcore.nifi.groups import Group
from flowcore.nifi.schema import MAX_DEPTH
from flowcore.parameters import Parameter, ParameterContext, context_from_json

__all__ = ["ImportedParameters", "flow_parameters"]

#: How NiFi marks a value encrypted with the instance's key (``flow.json.gz``).
ENCRYPTED_PREFIX = "enc{"


@attrs.frozen
class ImportedParameters:
    """The flow's context, and what the import found to report about parameters."""

    context: ParameterContext
    problems: tuple[FlowProblem, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()


def _cleaned(context: Mapping[str, Any]) -> dict[str, Any]:
    """*context* with sensitive values dropped (encrypted, or never to be written anywhere)."""
    parameters = []
    for parameter in context.get("parameters") or ():
        if isinstance(parameter, Mapping) and parameter.get("sensitive"):
            parameter = {**parameter, "value": None}  # noqa: PLW2901 - the cleaned copy
        parameters.append(parameter)
    return {**context, "parameters": parameters}


def _inheritance_problem(name: str, contexts: Mapping[str, Mapping[str, Any]]) -> str:
    """What is wrong with the contexts *name* inherits: a cycle, a chain too long; or nothing.

    Walked with a stack, not recursion: the file may chain contexts as long as it likes, and
    :func:`flowcore.parameters.context_from_json` recurses along the chain.
    """
    path: list[str] = []
    on_path: set[str] = set()
    done: set[str] = set()
    stack: list[tuple[str, Iterator[Any]]] = []

    def enter(context: str) -> None:
        path.append(context)
        on_path.add(context)
        inherited = contexts.get(context, {}).get("inheritedParameterContexts") or ()
        stack.append((context, iter(inherited)))

    enter(name)
    while stack:
        context, inherited = stack[-1]
        parent = next(inherited, None)
        if parent is None:
            stack.pop()
            path.pop()
            on_path.discard(context)
            done.add(context)
        elif isinstance(parent, str) and parent in on_path:
            cycle = [*path[path.index(parent) :], parent]
            return f"inherits itself ({' -> '.join(map(repr, cycle))})"
        elif len(path) >= MAX_DEPTH:
            return f"inherits contexts more than {MAX_DEPTH} deep, more than flowcore reads"
        elif isinstance(parent, str) and parent in contexts and parent not in done:
            enter(parent)
    return ""


def _bound_names(groups: Sequence[Group]) -> dict[str, list[str]]:
    """Each context name a group binds, with the groups binding it, in walk order."""
    bound: dict[str, list[str]] = {}
    for group in groups:
        name = group.data.get("parameterContextName")
        if name:
            bound.setdefault(str(name), []).append(group.path or "(top group)")
    return bound


def _conflicts(
    contexts: Mapping[str, ParameterContext], bound: Mapping[str, list[str]], settled: set[str]
) -> Iterable[FlowProblem]:
    """Names two bound contexts resolve differently (value or sensitivity)."""
    seen: dict[str, tuple[str, Parameter]] = {}
    for context_name, context in contexts.items():
        for name, parameter in context.effective().items():
            if name in settled:
                continue
            first = seen.setdefault(name, (context_name, parameter))
            differs = (first[1].value, first[1].sensitive) != (parameter.value, parameter.sensitive)
            if first[0] != context_name and differs:
                groups = ", ".join(bound[context_name])
                yield FlowProblem(
                    f"parameter {name!r}",
                    f"context {first[0]!r} and context {context_name!r} (bound to {groups}) "
                    "give it different values, and flowcore gives a flow one parameter context",
                    f"pass the value to use (parameters={{{name!r}: ...}} or --parameter)",
                )


def _user_layer(
    user: ParameterContext | Mapping[str, str | Parameter] | None, below: ParameterContext
) -> ParameterContext | None:
    """The user's parameters as a context; a plain value keeps the file's sensitivity."""
    if user is None or isinstance(user, ParameterContext):
        return user
    made = []
    for name, value in user.items():
        if isinstance(value, Parameter):
            made.append(value if value.name == name else attrs.evolve(value, name=name))
            continue
        current = below.find(name)
        sensitive = current is not None and current.sensitive
        made.append(Parameter(name, None if value is None else str(value), sensitive=sensitive))
    return ParameterContext("parameters", parameters=made)


def _provider_notes(contexts: Mapping[str, Mapping[str, Any]]) -> Iterable[tuple[str, str]]:
    for name, context in contexts.items():
        if context.get("parameterProvider"):
            yield (
                f"parameter context {name!r}",
                "takes its values from a NiFi parameter provider, which flowcore does not run; "
                "give them with parameters= (or --parameter, --parameters FILE)",
            )


def flow_parameters(
    flow_name: str,
    contexts: Mapping[str, Mapping[str, Any]],
    groups: Sequence[Group],
    user: ParameterContext | Mapping[str, str | Parameter] | None,
) -> ImportedParameters:
    """The one context of the imported flow.

    Args:
        flow_name: the flow's name (the context's).
        contexts: the file's parameter contexts by name, as JSON.
        groups: the flow's groups, top first.
        user: the user's parameters, which win.
    """
    bound = _bound_names(groups)
    named = {name: _cleaned(context) for name, context in contexts.items()}
    problems: list[FlowProblem] = []
    made: dict[str, ParameterContext] = {}
    for name, binders in bound.items():
        if name not in named:
            problems.append(
                FlowProblem(
                    f"process group {binders[0]}",
                    f"binds parameter context {name!r}, which the file does not hold",
                    "export the flow with its parameter contexts, or pass the parameters",
                )
            )
            continue
        wrong = _inheritance_problem(name, named)
        if wrong:
            problems.append(
                FlowProblem(
                    f"parameter context {name!r}",
                    wrong,
                    "remove one of those inherited contexts in NiFi, then export again",
                )
            )
            continue
        document = {"parameterContexts": named, "flowContents": {"parameterContextName": name}}
        try:
            made[name] = context_from_json(document, f"parameter context {name!r}")
        except ConfigurationError as error:
            problems.append(FlowProblem(f"parameter context {name!r}", str(error)))
    if len(made) == 1:  # the one context the groups bind, as the file has it
        merged = next(iter(made.values()))
    else:
        merged = ParameterContext(flow_name, inherited=tuple(made.values()))
    layer = _user_layer(user, merged)
    settled = set(layer.effective()) if layer is not None else set()
    problems.extend(_conflicts(made, bound, settled))
    context = merged if layer is None else ParameterContext(flow_name, inherited=(layer, merged))
    notes = tuple(_provider_notes({n: c for n, c in contexts.items() if n in made}))
    return ImportedParameters(context, tuple(problems), notes)
