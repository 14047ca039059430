"""A process group's controller services as NiFi's "Controller Services" tab lists them.

Read from the NiFi flow definition (the editor's, with its pending edits; a Python flow's is
what ``flowcore convert --to nifi`` writes): each service's name, type, bundle, state, the
components that reference it, and its properties, sensitive ones masked as NiFi shows them
("Sensitive value set"), so neither a secret nor the parameter a sensitive property references
reaches the browser. A property is sensitive when its descriptor in the flow says so OR
flowcore's class for the service's NiFi type does (:mod:`flowcore.ui.known_properties`): a
definition without descriptors masks its secrets too. As NiFi's tab, a group lists its own
services and those of the groups around it (``scope``), which its components may use too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from flowcore.ui.flow_document import SENSITIVE_VALUE_SET
from flowcore.ui.known_properties import is_sensitive, known_properties

__all__ = ["group_services"]


def _tree(group: Mapping[str, Any], path: tuple) -> Iterator[tuple[Mapping[str, Any], tuple]]:
    here = (*path, group)
    yield group, here
    for child in group.get("processGroups") or ():
        yield from _tree(child, here)


def _short(kind: str) -> str:
    return kind.rsplit(".", 1)[-1]


def _properties(service: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The service's properties, every descriptor's, sensitive values masked.

    Sensitive as the flow's descriptor or flowcore's class says (either is enough).
    """
    values = service.get("properties") or {}
    descriptors = service.get("propertyDescriptors") or {}
    known = known_properties(service, service=True)
    rows = []
    for name in [*descriptors, *(n for n in values if n not in descriptors)]:
        descriptor = descriptors.get(name) or {}
        ours = known.find(name)
        value = values.get(name)
        sensitive = is_sensitive(service, name, service=True, known=known)
        rows.append(
            {
                "name": name,
                "display_name": descriptor.get("displayName")
                or (ours.display_name if ours is not None else name),
                "value": (SENSITIVE_VALUE_SET if value is not None else None)
                if sensitive
                else value,
                "sensitive": sensitive,
                "dynamic": bool(descriptor.get("dynamic"))
                or (name not in descriptors and (ours is None or ours.dynamic)),
                "identifies_controller_service": bool(
                    descriptor.get("identifiesControllerService")
                    or (ours is not None and ours.identifies_service)
                ),
            }
        )
    return rows


def _referencing(root: Mapping[str, Any], identifier: str) -> list[dict[str, str]]:
    """The processors and services whose property names the service *identifier*."""
    found = []
    for group, _ in _tree(root, ()):
        for field, kind in (("processors", "processor"), ("controllerServices", "service")):
            for item in group.get(field) or ():
                if identifier in (item.get("properties") or {}).values():
                    found.append(
                        {"id": str(item.get("identifier")), "name": item.get("name"), "kind": kind}
                    )
    return found


def group_services(root: Mapping[str, Any], group_id: str = "") -> list[dict[str, Any]]:
    """The services group *group_id* ("" for the root) may use: its own, then its ancestors'.

    Raises:
        KeyError: no group has *group_id*.
    """
    chain = None
    for group, path in _tree(root, ()):
        if (not group_id and group is root) or (group_id and group.get("identifier") == group_id):
            chain = path
            break
    if chain is None:
        msg = f"the flow has no process group with id {group_id!r}"
        raise KeyError(msg)
    services = []
    for depth, group in enumerate(reversed(chain)):
        for service in group.get("controllerServices") or ():
            identifier = str(service.get("identifier"))
            services.append(
                {
                    "id": identifier,
                    "name": service.get("name") or identifier,
                    "type": _short(str(service.get("type") or "")),
                    "type_name": service.get("type"),
                    "bundle": service.get("bundle") or {},
                    "state": service.get("scheduledState") or "DISABLED",
                    "scope": group.get("name") or "(root)",
                    "inherited": depth > 0,
                    "comments": service.get("comments") or "",
                    "properties": _properties(service),
                    "referencing_components": _referencing(root, identifier),
                }
            )
    return services
